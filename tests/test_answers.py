"""Answers that fit an agent: documents read in parts, pages of hits that continue each
other exactly, an id on every hit that its get tool takes, citations (line, heading)
that match the files, and no answer over its size budget, through the real MCP client
and the Python API."""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from query import budget, trove_version
from query.citations import heading_above
from query.commands import get_command, list_commands, search_commands
from query.context import QueryContext
from query.elog import get_elog_thread, search_elog
from query.errors import TroveError
from query.mcp_server import TroveServer, build_server
from query.reports import get_report, list_command_reports, search_reports
from query.search_all import search
from query.workspace import get_conversation, search_workspace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from gen_corpus import generate
from indexed import indexed, indexed_sample, settings_for

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    """The sample data in data/, indexed."""
    ctx = indexed_sample(tmp_path_factory.mktemp("sample"))
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    """bench/gen_corpus.py's corpus (400 reports, 40 commands, 120 conversations), indexed,
    with the sample logbook."""
    tmp = tmp_path_factory.mktemp("generated")
    generate(tmp / "corpus", reports=400, commands=40, conversations=120)
    shutil.copytree(DATA / "elog", tmp / "corpus" / "elog")
    ctx = indexed(settings_for(tmp / "corpus", tmp / "index"))
    yield ctx
    ctx.close()


def _dumped(answer: Any, hits: str) -> list[dict[str, Any]]:
    return [hit.model_dump() for hit in getattr(answer, hits)]


def _pages_continue(
    call: Callable[[int, int], Any], hits: str, n: int, label: object
) -> list[dict[str, Any]]:
    """Pages of n at offsets 0, n, 2n joined equal one call for 3n; each page's
    next_offset points at the next. The 3n hits."""
    whole = call(3 * n, 0)
    expected = _dumped(whole, hits)
    joined: list[dict[str, Any]] = []
    for k in range(3):
        page = call(n, k * n)
        got = _dumped(page, hits)
        joined += got
        more = len(expected) > (k + 1) * n or whole.next_offset is not None
        if len(got) == n and more:
            assert page.next_offset == (k + 1) * n, (label, k)
        if len(got) < n:
            assert page.next_offset is None, (label, k)
    assert joined == expected, label
    return expected


# --------------------------------------------------------------------------- pages


def _reports(ctx: QueryContext, query: str, size: int, at: int) -> Any:
    return search_reports(ctx, query, max_results=size, offset=at)


def _lines(ctx: QueryContext, query: str, size: int, at: int) -> Any:
    return search_workspace(ctx, query, max_results=size, offset=at)


def _commands(ctx: QueryContext, query: str, size: int, at: int) -> Any:
    return search_commands(ctx, query, max_results=size, offset=at)


def _entries(ctx: QueryContext, kwargs: dict[str, Any], size: int, at: int) -> Any:
    return search_elog(ctx, **kwargs, max_results=size, offset=at)


def _everything(ctx: QueryContext, query: str, size: int, at: int) -> Any:
    return search(ctx, query, max_results=size, offset=at)


REPORT_QUERIES = [
    "proxy",  # exact, many
    "the",  # the commonest word
    "e",  # a one-letter fragment
    "token decode",  # a phrase, or its words
    "decode token proxy",  # every word, any order
    "why do meetings fail behind a proxy",  # a plain question: related
    "tokn timout",  # typos: fuzzy
]


@pytest.mark.parametrize("corpus", ["sample", "generated"])
@pytest.mark.parametrize("n", [1, 3, 10])
def test_pages_of_report_hits_continue_each_other_exactly_in_every_tier(
    corpus: str, n: int, request: pytest.FixtureRequest
) -> None:
    ctx: QueryContext = request.getfixturevalue(corpus)
    matches = set()
    for query in REPORT_QUERIES:
        found = _pages_continue(partial(_reports, ctx, query), "results", n, query)
        matches |= {h["match"] for h in found}
    assert matches >= {"exact", "related"}, matches


WORKSPACE_QUERIES = ["the", "authentication", "token expiry", "why did the proxy fail", "tokn"]


@pytest.mark.parametrize("corpus", ["sample", "generated"])
@pytest.mark.parametrize("n", [1, 4, 10])
def test_pages_of_conversation_lines_continue_each_other_exactly(
    corpus: str, n: int, request: pytest.FixtureRequest
) -> None:
    ctx: QueryContext = request.getfixturevalue(corpus)
    for query in WORKSPACE_QUERIES:
        _pages_continue(partial(_lines, ctx, query), "results", n, query)


@pytest.mark.parametrize("corpus", ["sample", "generated"])
def test_pages_of_commands_continue_each_other_exactly(
    corpus: str, request: pytest.FixtureRequest
) -> None:
    ctx: QueryContext = request.getfixturevalue(corpus)
    for query in ("proxy", "log analysis", "tls handshake decode"):
        for n in (1, 2, 5):
            _pages_continue(partial(_commands, ctx, query), "results", n, query)
    for n in (1, 7):
        _pages_continue(
            lambda size, at: list_commands(ctx, True, max_results=size, offset=at),
            "commands",
            n,
            "list",
        )


ELOG_CALLS: list[dict[str, Any]] = [
    {"query": "beam"},  # words
    {"query": "klystron interlock fault laser"},  # many words: coordination levels
    {"query": "why did the laser trip during the night shift"},  # a question: BM25F
    {"query": "RF.*fault"},  # a regex
    {"query": None},  # no query: newest first
    {"query": "beem"},  # a typo
]


@pytest.mark.parametrize("n", [1, 3, 10])
def test_pages_of_elog_hits_continue_each_other_exactly(n: int, sample: QueryContext) -> None:
    for kwargs in ELOG_CALLS:
        _pages_continue(partial(_entries, sample, kwargs), "hits", n, kwargs)


@pytest.mark.parametrize("corpus", ["sample", "generated"])
@pytest.mark.parametrize("n", [1, 5, 10])
def test_pages_of_every_collection_fused_continue_each_other_exactly(
    corpus: str, n: int, request: pytest.FixtureRequest
) -> None:
    ctx: QueryContext = request.getfixturevalue(corpus)
    for query in ("proxy", "the", "token expiry", "beam"):
        found = _pages_continue(partial(_everything, ctx, query), "hits", n, query)
        assert len({h["id"] for h in found}) == len(found)  # no hit twice
    _pages_continue(
        lambda size, at: search(ctx, "proxy", since="2025-01-01", max_results=size, offset=at),
        "hits",
        n,
        "since",
    )


def test_listing_a_commands_reports_comes_in_pages(sample: QueryContext) -> None:
    command = "proxy-slow-meeting-analysis-command"
    _pages_continue(
        lambda size, at: list_command_reports(sample, command, max_results=size, offset=at),
        "reports",
        2,
        command,
    )


def test_a_page_past_the_end_is_empty_with_no_next_offset(sample: QueryContext) -> None:
    for answer, hits in (
        (search_reports(sample, "proxy", offset=900), "results"),
        (search_workspace(sample, "the", offset=900), "results"),
        (search_commands(sample, "proxy", offset=900), "results"),
        (search_elog(sample, "beam", offset=900), "hits"),
        (search(sample, "proxy", offset=900), "hits"),
        (
            list_command_reports(sample, "proxy-slow-meeting-analysis-command", offset=900),
            "reports",
        ),
        (list_commands(sample, offset=900), "commands"),
    ):
        assert getattr(answer, hits) == [] and answer.next_offset is None


@pytest.mark.parametrize(
    "call",
    [
        lambda ctx, o: search_reports(ctx, "proxy", offset=o),
        lambda ctx, o: search_workspace(ctx, "the", offset=o),
        lambda ctx, o: search_commands(ctx, "proxy", offset=o),
        lambda ctx, o: search_elog(ctx, "beam", offset=o),
        lambda ctx, o: search(ctx, "proxy", offset=o),
    ],
)
def test_a_bad_offset_is_invalid_argument(sample: QueryContext, call: Callable[..., Any]) -> None:
    for bad, said in ((-1, "offset must be 0 or more"), (True, "whole number"), ("2", "whole")):
        with pytest.raises(TroveError, match=said) as caught:
            call(sample, bad)
        assert caught.value.code == "INVALID_ARGUMENT"
    with pytest.raises(TroveError, match="offset \\+ max_results must be at most 1000"):
        call(sample, 995)


# --------------------------------------------------------------------------- ids and citations


def test_every_hit_carries_the_id_its_get_tool_takes(sample: QueryContext) -> None:
    for hit in search_reports(sample, "proxy").results:
        command, name = hit.id.split("/")
        assert get_report(sample, command, name).id == hit.id
    for cmd in search_commands(sample, "proxy").results:
        assert get_command(sample, cmd.id).name == cmd.id
    for line in search_workspace(sample, "authentication").results:
        assert not line.id.startswith("/") and line.id.endswith(f":{line.line}")
        part = get_conversation(sample, line.id, limit=1)
        assert part.start_line == line.line and part.path == line.path
        assert line.excerpt.strip("…").strip().lower() in part.content.lower()
    for entry in search_elog(sample, "beam").hits:
        assert entry.id == str(entry.elog_id)
        assert get_elog_thread(sample, int(entry.id)).message_id == entry.elog_id
    fused = search(sample, "proxy", max_results=50)
    assert {h.collection for h in fused.hits} >= {"reports", "conversations"}
    for fused_hit in fused.hits:
        if fused_hit.collection == "conversations":
            assert get_conversation(sample, fused_hit.id, limit=1).start_line == fused_hit.line


def _nearest_heading(text: str, line: int) -> str | None:
    """The nearest '# ' heading at or above a line, outside fenced code: written plainly."""
    heading, fenced = None, False
    for number, row in enumerate(text.split("\n"), 1):
        if number > line:
            break
        stripped = row.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r" {0,3}#{1,6}(\s|$)", row):
            heading = re.sub(r"\s+#+\s*$", "", row.strip().lstrip("#")).strip() or None
    return heading


@pytest.mark.parametrize("corpus", ["sample", "generated"])
def test_line_and_heading_of_every_hit_match_the_files(
    corpus: str, request: pytest.FixtureRequest
) -> None:
    ctx: QueryContext = request.getfixturevalue(corpus)
    rng = random.Random(5)
    root = ctx.settings.source_root("reports")
    assert root is not None
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))]
    words = sorted({w.lower() for t in texts for w in re.findall(r"[A-Za-z]{4,}", t)})
    queries = rng.sample(words, 60) + [" ".join(rng.sample(words, 2)) for _ in range(40)]
    checked = 0
    for query in queries:
        for hit in search_reports(ctx, query, max_results=5).results:
            text = Path(hit.path).read_text(encoding="utf-8")
            row = text.split("\n")[hit.line - 1].lower()
            if hit.match == "exact":
                assert query in row, (query, hit.id, hit.line)
            assert hit.heading == _nearest_heading(text, hit.line), (query, hit.id)
            checked += 1
        for line in search_workspace(ctx, query, max_results=5).results:
            text = Path(line.path).read_text(encoding="utf-8")
            assert line.heading == _nearest_heading(text, line.line), (query, line.id)
            checked += 1
    assert checked > 200


def test_headings_inside_fenced_code_are_not_headings() -> None:
    text = "# Top\n\n```sh\n# a comment, not a heading\necho\n```\nafter\n## Sub ##\nlast\n"
    assert heading_above(text, text.index("echo")) == "Top"
    assert heading_above(text, text.index("after")) == "Top"
    assert heading_above(text, text.index("last")) == "Sub"
    assert heading_above("no heading here", 3) is None


# --------------------------------------------------------------------------- documents in parts


def _big_report(root: Path) -> tuple[Path, list[str]]:
    """A 4.5 MB report of lines of every length (one over 2,000 characters is left out:
    it is cut by design, tested apart)."""
    rng = random.Random(11)
    lines = []
    size = 0
    while size < 4_500_000:
        line = " ".join(
            rng.choice(["proxy", "token", "décodé", "日本語", "x" * 40, "#"])
            for _ in range(rng.randrange(0, 200))
        )[:1900]
        lines.append(line + "\n")
        size += len(line.encode()) + 1
    path = root / "reports/big-command/big_20251201.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path, lines


@asynccontextmanager
async def connected(server: TroveServer) -> AsyncIterator[Client]:
    async with Client(server) as client:
        yield client


async def test_a_45_mb_report_and_conversation_read_page_by_page_through_mcp(
    tmp_path: Path,
) -> None:
    path, lines = _big_report(tmp_path)
    conv = tmp_path / "conversations/2025-11-10/001-long/notes.md"
    conv.parent.mkdir(parents=True)
    shutil.copy(path, conv)
    settings = settings_for(tmp_path, tmp_path / "index")
    server = build_server(settings)
    try:
        async with connected(server) as client:
            for tool, args in (
                ("get_report", {"command_name": "big-command", "report_name": path.name}),
                ("get_conversation", {"id": "2025-11-10/001-long/notes.md"}),
            ):
                read: list[str] = []
                offset: int | None = 1
                calls = 0
                while offset is not None:
                    result = await client.call_tool(tool, {**args, "offset": offset})
                    assert not result.is_error, result.content
                    part = result.structured_content
                    assert part is not None
                    assert len(json.dumps(part)) <= budget.DEFAULT_CHARS, (tool, offset)
                    assert part["start_line"] == offset and part["total_lines"] == len(lines)
                    got = part["content"].splitlines(keepends=True)
                    assert len(got) == part["end_line"] - part["start_line"] + 1
                    read += got
                    offset = part["next_offset"]
                    calls += 1
                assert read == lines, tool  # every line once, in order
                assert calls > 100
    finally:
        server.close()


def test_a_part_asked_with_a_limit_and_the_edges_of_a_document(tmp_path: Path) -> None:
    root = tmp_path
    (root / "reports/c").mkdir(parents=True)
    (root / "reports/c/r_20251101.md").write_text(
        "one\ntwo\n" + "x" * 5000 + "\nfour\n", encoding="utf-8"
    )
    ctx = QueryContext.from_settings(settings_for(root, tmp_path / "index"))
    try:
        part = get_report(ctx, "c", "r_20251101.md", offset=2, limit=2)
        assert (part.start_line, part.end_line, part.total_lines, part.next_offset) == (2, 3, 4, 4)
        long_line = part.content.splitlines()[1]
        assert (
            long_line.startswith("x" * 2000) and "[line cut: 5,000 characters in all" in long_line
        )
        end = get_report(ctx, "c", "r_20251101.md", offset=4)
        assert (end.content, end.next_offset) == ("four\n", None)
        past = get_report(ctx, "c", "r_20251101.md", offset=9)
        assert (past.content, past.start_line, past.end_line, past.next_offset) == ("", 9, 8, None)
        for offset, limit, said in (
            (0, None, "offset must be 1 or more"),
            (-3, None, "offset must be 1 or more"),
            (1, 0, "limit must be between 1 and"),
            (1, 10**9, "limit must be between 1 and"),
            ("1", None, "whole number"),
        ):
            with pytest.raises(TroveError, match=said) as caught:
                get_report(ctx, "c", "r_20251101.md", offset=offset, limit=limit)  # type: ignore[arg-type]
            assert caught.value.code == "INVALID_ARGUMENT"
    finally:
        ctx.close()


def test_a_conversation_id_never_leaves_the_conversations_folder(tmp_path: Path) -> None:
    (tmp_path / "conversations/2025-11-10/001-a").mkdir(parents=True)
    (tmp_path / "conversations/2025-11-10/001-a/notes.md").write_text("hello\nthere\n")
    (tmp_path / "secret.md").write_text("outside\n")
    (tmp_path / "conversations/2025-11-10/001-a/link.md").symlink_to(tmp_path / "secret.md")
    ctx = QueryContext.from_settings(settings_for(tmp_path, tmp_path / "index"))
    try:
        assert get_conversation(ctx, "2025-11-10/001-a/notes.md:2").content == "there\n"
        for bad, code in (
            ("../secret.md", "INVALID_ARGUMENT"),
            ("2025-11-10/../../secret.md", "INVALID_ARGUMENT"),
            (str(tmp_path / "secret.md"), "INVALID_ARGUMENT"),
            ("2025-11-10/001-a/notes.md\x00", "INVALID_ARGUMENT"),
            ("2025-11-10/001-a/notes.md:two", "INVALID_ARGUMENT"),
            ("", "INVALID_ARGUMENT"),
            ("2025-11-10/001-a/link.md", "NOT_FOUND"),  # a symlink out
            ("2025-11-10/001-a/missing.md", "NOT_FOUND"),
            ("notes.md", "NOT_FOUND"),
            ("2025-13-01/001-a/notes.md", "NOT_FOUND"),
        ):
            with pytest.raises(TroveError) as caught:
                get_conversation(ctx, bad)
            assert caught.value.code == code, bad
    finally:
        ctx.close()


# --------------------------------------------------------------------------- the budget


def _hostile(root: Path) -> None:
    """A corpus of long lines, long names and long metadata."""
    long_name = "r" * 200 + "_20251101.md"
    for c in range(3):
        folder = root / "reports" / (f"cmd{c}-" + "c" * 150)
        folder.mkdir(parents=True)
        for i in range(60):
            body = "# " + "h" * 5000 + "\n" + ("needle " + "w" * 3000 + "\n") * 45
            (folder / f"{i}{long_name}").write_text(body, encoding="utf-8")
    (root / "commands").mkdir(parents=True)
    for i in range(120):
        (root / "commands" / (f"cmd{i}-" + "n" * 150 + ".md")).write_text(
            f"---\ntitle: {'T' * 10000}\ndescription: needle {'d' * 10000}\n"
            f"tags: [{', '.join('t' * 3000 for _ in range(5))}]\nother: {'o' * 50000}\n---\n"
            + ("needle " + "b" * 3000 + "\n")
            * 40,
            encoding="utf-8",
        )
    for i in range(40):
        conv = root / f"conversations/2025-11-{10 + i % 9:02d}/{i:03d}-{'s' * 150}"
        conv.mkdir(parents=True)
        (conv / "notes.md").write_text(("needle " + "q" * 5000 + "\n") * 50, encoding="utf-8")
    shutil.copytree(DATA / "elog", root / "elog")


def test_no_answer_exceeds_the_budget_with_the_largest_valid_arguments(tmp_path: Path) -> None:
    _hostile(tmp_path)
    ctx = indexed(settings_for(tmp_path, tmp_path / "index"))
    try:
        _check_budgets(ctx, tmp_path)
    finally:
        ctx.close()


def _check_budgets(ctx: QueryContext, tmp_path: Path) -> None:
    command = next(p.name for p in (tmp_path / "reports").iterdir())
    report = next(p.name for p in (tmp_path / "reports" / command).iterdir())
    conv = next((tmp_path / "conversations").rglob("notes.md")).relative_to(
        tmp_path / "conversations"
    )
    answers: dict[str, Any] = {
        "search_reports": search_reports(ctx, "needle", max_results=100),
        "search_reports (default)": search_reports(ctx, "needle"),
        "list_command_reports": list_command_reports(ctx, command, max_results=1000),
        "get_report": get_report(ctx, command, report, limit=100_000),
        "get_report (default)": get_report(ctx, command, report),
        "search_commands": search_commands(ctx, "needle", max_results=100),
        "search_commands (default)": search_commands(ctx, "needle"),
        "get_command": get_command(ctx, "cmd0-" + "n" * 150, limit=100_000),
        "get_command (default)": get_command(ctx, "cmd0-" + "n" * 150),
        "list_commands": list_commands(ctx, True, max_results=1000),
        "search_workspace": search_workspace(ctx, "needle", max_results=100),
        "get_conversation": get_conversation(ctx, str(conv), limit=100_000),
        "get_conversation (default)": get_conversation(ctx, str(conv)),
        "search_elog": search_elog(ctx, "beam", max_results=50),
        "search": search(ctx, "needle", max_results=50),
        "search (default)": search(ctx, "needle"),
    }
    sizes = {name: budget.size(answer) for name, answer in answers.items()}
    for name, size in sizes.items():
        limit = budget.DEFAULT_CHARS if "(default)" in name else budget.MAX_CHARS
        assert size <= limit, (name, size)
    # The cuts say so and how to go on.
    cut = answers["search_reports"]
    assert len(cut.results) < 100 and cut.next_offset == len(cut.results)
    assert cut.note is not None and f"offset={cut.next_offset}" in cut.note
    assert answers["get_report"].note is not None and answers["get_report"].next_offset
    assert answers["get_command"].note is not None


def test_a_thread_too_long_for_the_budget_cuts_bodies_and_an_entry_reads_whole_alone(
    tmp_path: Path,
) -> None:
    from elog_threads import write_thread

    root = tmp_path / "elog"
    ids = write_thread(root, replies=30, body=("All well. " * 1000).strip())
    ctx = indexed(settings_for(tmp_path, tmp_path / "index"))
    try:
        thread = get_elog_thread(ctx, ids[0])
        assert budget.size(thread) <= budget.MAX_CHARS
        assert len(thread.entries) == 31 and all(e.cut for e in thread.entries)
        assert thread.note is not None and "include_replies=false" in thread.note
        alone = get_elog_thread(ctx, ids[5], include_replies=False, include_parents=False)
        assert [e.elog_id for e in alone.entries] == [ids[5]] and not alone.entries[0].cut
        assert alone.entries[0].body == ("All well. " * 1000).strip()
        assert alone.note is None
    finally:
        ctx.close()


# --------------------------------------------------------------------------- the handshake


async def test_initialize_reports_troves_version(sample: QueryContext) -> None:
    server = build_server(sample.settings)
    try:
        async with connected(server) as client:
            info = client.server_info
            assert info is not None and info.name == "trove"
            assert info.version == trove_version() != ""
    finally:
        server.close()
