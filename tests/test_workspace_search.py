"""search_workspace over a tiny corpus of conversations in both folder formats."""

from __future__ import annotations

import json
import math
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from indexer.config import Settings
from indexer.sources.base import is_hidden
from indexer.sources.conversations import TEXT_SUFFIXES, date_folder
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query import workspace
from query.cli import app
from query.context import QueryContext
from query.count_plan import PLANS as PLANS_OF_A_QUERY
from query.count_plan import CountPlan
from query.errors import TroveError
from query.workspace import (
    answers,
    cache,
    check_date_range,
    limits,
    query_words,
    search_workspace,
    tiers,
)
from query.workspace.lines import Line

# The spec's folders, plus neighbours a month filter must leave out.
CONVERSATIONS = {
    "2025-11/001-old-conversation/conversation.md": "# Old notes\nThe feature flag story.\n",
    "2025-11-10/001-brainstorm-feature/notes.md": "Brainstorm\nA feature for authentication.\n",
    "2025-11-10/002-debug-auth/conversation.md": "Debug\nauthentication fails behind the proxy\n",
    "2025-11-11/001-plan-redesign/summary.md": "Plan\nredesign the authentication feature\n",
    "2025-10-31/001-halloween/notes.md": "authentication feature, October\n",
    "2025-12/001-december/notes.md": "authentication feature, December\n",
}


@pytest.fixture
def convs(write: Callable[[str, str | bytes], Path]) -> Callable[[dict[str, str]], None]:
    def make(files: dict[str, str]) -> None:
        for rel, text in files.items():
            write(f"conversations/{rel}", text)

    return make


@pytest.fixture
def ctx_for() -> Iterator[Callable[[Settings], QueryContext]]:
    made: list[QueryContext] = []

    def make(settings: Settings, engine: str = "whoosh") -> QueryContext:
        made.append(QueryContext.from_settings(settings, engine))
        return made[-1]

    yield make
    for ctx in made:
        ctx.close()


@pytest.fixture
def ctx(convs, make_settings, ctx_for) -> QueryContext:
    convs(CONVERSATIONS)
    return ctx_for(make_settings())


def folders(answer) -> set[str]:
    return {f"{r.date}/{r.conversation}" for r in answer.results}


# --------------------------------------------------------------------------- the spec


def test_a_day_filters_to_that_day_folder_only(ctx) -> None:
    answer = search_workspace(ctx, "authentication", date_range="2025-11-10")
    assert folders(answer) == {"2025-11-10/001-brainstorm-feature", "2025-11-10/002-debug-auth"}
    assert answer.total_found == 2


def test_a_month_matches_the_month_folder_and_every_day_folder_of_it(ctx) -> None:
    answer = search_workspace(ctx, "feature", date_range="2025-11")
    assert folders(answer) == {
        "2025-11/001-old-conversation",
        "2025-11-10/001-brainstorm-feature",
        "2025-11-11/001-plan-redesign",
    }


def test_without_a_date_range_every_conversation_is_searched(ctx) -> None:
    answer = search_workspace(ctx, "authentication")
    assert folders(answer) == {
        "2025-11-10/001-brainstorm-feature",
        "2025-11-10/002-debug-auth",
        "2025-11-11/001-plan-redesign",
        "2025-10-31/001-halloween",
        "2025-12/001-december",
    }
    assert answer.total_found == 5


@pytest.mark.parametrize(
    "bad",
    [
        "2025-11-1",
        "2025-1",  # a one-digit month
        "2025-1-05",
        "2025-1-5",
        "2025-01-5",
        "2025-001",
        "2025-011-05",
        "2025-11-005",
        "025-11",
        "20251-1",
        "2025-00",
        "2025-11-00",
        "2025-11-",
        "2025--11",
        "2025-13",
        "2025-02-30",
        "2025/11",
        "2025-11-10/..",
        "2025",
        "nov",
        "２０２５-11",
    ],
)
def test_anything_but_a_month_or_a_day_is_invalid_date_range(ctx, bad: str) -> None:
    with pytest.raises(TroveError) as err:
        search_workspace(ctx, "feature", date_range=bad)
    assert err.value.code == "INVALID_DATE_RANGE"
    assert "YYYY-MM " in err.value.message and "YYYY-MM-DD" in err.value.message


def test_date_ranges_are_checked_strictly() -> None:
    assert check_date_range(None) is None and check_date_range("") is None
    day = check_date_range("2024-02-29")
    assert day is not None and day.field() == ("date", "2024-02-29")
    month = check_date_range("2025-11")
    assert month is not None and month.field() == ("month", "2025-11")
    with pytest.raises(TroveError):
        check_date_range("2025-02-29")


def test_a_result_names_its_conversation_date_absolute_path_and_line(ctx, tmp_path: Path) -> None:
    (hit,) = search_workspace(ctx, "behind the proxy").results
    assert hit.conversation == "002-debug-auth"
    assert hit.date == "2025-11-10"
    assert hit.path == str(tmp_path / "conversations/2025-11-10/002-debug-auth/conversation.md")
    assert Path(hit.path).is_absolute()
    assert hit.line == 2
    assert hit.excerpt == "authentication fails behind the proxy"
    assert hit.score == 1.0 and hit.conversation_hits == 1
    old = search_workspace(ctx, "flag story").results[0]
    assert (old.date, old.line) == ("2025-11", 2)


# --------------------------------------------------------------------------- literal matching


def test_the_query_is_literal_and_case_insensitive(convs, make_settings, ctx_for) -> None:
    convs(
        {
            "2025-01/001-a/x.md": "a.c here\nabc there\nx.*y literal\nxxy no\nPrice (407) [x]\n",
            "2025-01/002-b/x.md": "AUTHENTICATION in capitals\n",
        }
    )
    ctx = ctx_for(make_settings())
    assert [h.excerpt for h in search_workspace(ctx, "a.c").results] == ["a.c here"]
    assert [h.excerpt for h in search_workspace(ctx, "x.*y").results] == ["x.*y literal"]
    assert [h.line for h in search_workspace(ctx, "(407) [x]").results] == [5]
    assert search_workspace(ctx, "authentication").results[0].conversation == "002-b"
    assert search_workspace(ctx, "AuThEnTiCaTiOn").total_found == 1


def test_words_cut_off_at_either_end_of_the_query_match_inside_words(
    convs, make_settings, ctx_for
) -> None:
    convs({"2025-01/001-a/x.md": "the oauth failure again\nsplit here\ntunnel there\n"})
    ctx = ctx_for(make_settings())
    (hit,) = search_workspace(ctx, "auth fail").results
    assert hit.line == 1 and hit.score < 1.0
    apart = search_workspace(ctx, "split tunnel")  # not on one line: only the words' own
    assert {r.match for r in apart.results} == {"related"}


def test_query_words_know_where_they_may_be_cut() -> None:
    words = query_words("auth fail-x")
    assert [(w.text, w.bounded_left, w.bounded_right) for w in words] == [
        ("auth", False, True),
        ("fail", True, True),
        ("x", True, False),
    ]
    assert [w.text for w in query_words("代理服务")] == ["代", "理", "服", "务"]
    # Cut after lower-casing, as the index cuts: 'İ' lower-cases to 'i' + a combining dot.
    assert [w.text for w in query_words("İstanbul office")] == ["i", "stanbul", "office"]


def test_lower_casing_that_changes_the_text_never_hides_a_line(
    convs, make_settings, ctx_for
) -> None:
    convs({"2025-01/001-a/x.md": "İstanbul office\nΟΔΟΣ.Α\nthe Straße ﬁle\nΟΔΟΣ end\n"})
    ctx = ctx_for(make_settings())

    def lines(query: str) -> list[int]:
        return [h.line for h in search_workspace(ctx, query).results]

    assert lines("İstanbul") == lines("İstanbul office") == lines("i̇stanbul") == [1]
    assert lines("ΟΔΟΣ.Α") == lines("οδοσ.α") == [2]
    assert lines("οδος") == lines("ΟΔΟΣ") == [4]  # a final sigma only where the word ends
    assert lines("STRAßE ﬁ") == lines("straße") == [3]


def test_a_punctuation_only_query_is_searched_as_a_literal(convs, make_settings, ctx_for) -> None:
    convs(
        {
            "2025-01-01/001-a/x.md": "a -> b\nwait...\nplain\n",
            "2025-01-02/001-b/x.md": "x ---> y\n",
            "2025-02/001-c/x.md": "c -> d\n",
        }
    )
    ctx = ctx_for(make_settings())

    def found(query: str, date_range: str | None = None) -> set[tuple[str, int]]:
        answer = search_workspace(ctx, query, date_range=date_range)
        assert answer.total_found == len(answer.results)
        return {(r.conversation, r.line) for r in answer.results}

    assert found("->") == {("001-a", 1), ("001-b", 1), ("001-c", 1)}
    assert found("->", "2025-01") == {("001-a", 1), ("001-b", 1)}
    assert found("--->") == {("001-b", 1)}
    assert found("...") == {("001-a", 2)}
    assert found("...", "2025-01-02") == set()


def test_cjk_text_is_found(convs, make_settings, ctx_for) -> None:
    convs({"2025-01-02/001-cn/x.md": "第一行\n代理服务器返回 407 认证错误\n"})
    (hit,) = search_workspace(ctx_for(make_settings()), "代理服务器").results
    assert hit.line == 2 and hit.score == 1.0


def test_a_long_line_is_cut_around_the_match(convs, make_settings, ctx_for) -> None:
    convs({"2025-01/001-a/x.md": "word " * 200 + "NEEDLE " + "tail " * 200 + "\n"})
    (hit,) = search_workspace(ctx_for(make_settings()), "needle").results
    assert "NEEDLE" in hit.excerpt
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
    assert len(hit.excerpt) <= workspace.EXCERPT_CHARS + 2


# --------------------------------------------------------------------------- ranking


def test_whole_words_rank_before_parts_of_words_and_ties_go_to_newer(
    convs, make_settings, ctx_for
) -> None:
    convs(
        {
            "2025-03-01/001-a/x.md": "the authentication step\n",  # start of a word
            "2025-01-01/001-b/x.md": "plain auth here\n",  # whole word, older
            "2025-02/001-c/x.md": "oauth only\n",  # end of a word
            "2025-02-01/002-d/x.md": "auth again\n",  # whole word, newer
            "2025-02-01/001-e/x.md": "auth once more\n",  # same day, lower number
            "2025-04-01/001-f/x.md": "reauthorize\n",  # inside a word
        }
    )
    answer = search_workspace(ctx_for(make_settings()), "auth")
    order = [(r.date, r.conversation, r.score) for r in answer.results]
    assert order == [
        ("2025-02-01", "002-d", 1.0),
        ("2025-02-01", "001-e", 1.0),
        ("2025-01-01", "001-b", 1.0),
        ("2025-03-01", "001-a", 0.85),
        ("2025-02", "001-c", 0.75),
        ("2025-04-01", "001-f", 0.6),
    ]


def test_one_conversation_shows_a_few_lines_while_others_match(
    convs, make_settings, ctx_for
) -> None:
    busy = "\n".join(f"proxy line {i}" for i in range(1, 21)) + "\n"
    convs(
        {
            "2025-05-02/001-busy/a.md": busy,
            "2025-05-02/001-busy/b.md": "proxy again\n",
            "2025-05-01/001-quiet/x.md": "one proxy\n",
            "2025-04-30/001-other/x.md": "another proxy\n",
        }
    )
    answer = search_workspace(ctx_for(make_settings()), "proxy", max_results=5)
    assert answer.total_found == 23
    convs_shown = [r.conversation for r in answer.results]
    assert convs_shown == ["001-busy", "001-busy", "001-busy", "001-quiet", "001-other"]
    assert answer.results[0].conversation_hits == 21
    assert [r.line for r in answer.results[:3]] == [1, 2, 3]


def test_a_single_conversation_fills_every_result_slot(convs, make_settings, ctx_for) -> None:
    convs({"2025-05-02/001-busy/a.md": "\n".join(f"proxy {i}" for i in range(30)) + "\n"})
    ctx = ctx_for(make_settings())
    answer = search_workspace(ctx, "proxy")
    assert len(answer.results) == 10 and answer.total_found == 30
    assert [r.line for r in answer.results] == list(range(1, 11))
    assert len(search_workspace(ctx, "proxy", max_results=100).results) == 30


def test_a_line_with_several_matches_is_one_result(convs, make_settings, ctx_for) -> None:
    convs({"2025-05-02/001-a/a.md": "xauth then auth\n"})
    (hit,) = search_workspace(ctx_for(make_settings()), "auth").results
    assert hit.score == 1.0  # its best occurrence counts


# --------------------------------------------------------------------------- the index


def test_only_files_the_index_points_at_are_read(
    ctx, monkeypatch: pytest.MonkeyPatch, convs
) -> None:
    convs({f"2025-06/00{i}-filler/x.md": "nothing to see\n" for i in range(5)})
    convs({"2025-06/009-zebra/x.md": "a zebra crossing\n"})
    read: list[str] = []
    real = cache.read_file

    def spy(root: Path, rel: str, max_bytes: int):
        read.append(rel)
        return real(root, rel, max_bytes)

    monkeypatch.setattr(cache, "read_file", spy)
    assert search_workspace(ctx, "zebra").total_found == 1
    assert set(read) == {"2025-06/009-zebra/x.md"}


def test_a_repeated_search_reads_only_the_files_it_shows(
    ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert search_workspace(ctx, "authentication").total_found == 5
    read: list[str] = []
    real = cache.read_file

    def spy(root: Path, rel: str, max_bytes: int):
        read.append(rel)
        return real(root, rel, max_bytes)

    monkeypatch.setattr(cache, "read_file", spy)
    answer = search_workspace(ctx, "authentication", max_results=1)
    assert answer.total_found == 5
    assert read == [answer.results[0].path.split("/conversations/", 1)[1]]


def test_without_room_to_keep_texts_the_answers_are_the_same(ctx) -> None:
    kept = search_workspace(ctx, "feature")
    ctx.memo["workspace"] = workspace.WorkspaceCache(text_budget=0)
    assert search_workspace(ctx, "feature") == kept
    assert search_workspace(ctx, "feature") == kept


def test_changed_files_are_searched_as_the_index_has_them(ctx, write) -> None:
    assert search_workspace(ctx, "october").total_found == 1
    write("conversations/2025-10-31/001-halloween/notes.md", "now about November\n")
    Syncer(ctx.settings, get_source("conversations")).reconcile()
    assert {r.match for r in search_workspace(ctx, "october").results} <= {"fuzzy"}
    assert search_workspace(ctx, "about november").total_found == 1


def test_a_file_deleted_before_the_index_catches_up_is_skipped(
    convs, make_settings, ctx_for, tmp_path
) -> None:
    convs({"2025-06/001-a/x.md": "zebra one\n", "2025-06/002-b/x.md": "zebra two\n"})
    ctx = ctx_for(make_settings())
    assert search_workspace(ctx, "zebra").total_found == 2  # both files read (and kept)
    (tmp_path / "conversations/2025-06/002-b/x.md").unlink()  # no reindex
    answer = search_workspace(ctx, "zebra")
    assert [r.conversation for r in answer.results] == ["001-a"]
    assert answer.total_found == 1


def test_a_missing_index_is_built_on_first_use(ctx, tmp_path: Path) -> None:
    assert not (tmp_path / "index" / "conversations").exists()
    assert search_workspace(ctx, "feature").total_found == 5
    assert (tmp_path / "index" / "conversations").is_dir()


# --------------------------------------------------------------------------- against a plain scan

# Hard on a substring search over an index of words: mixed case, lower-casing that changes
# lengths ('İ', 'ﬁ' stays, 'ß' upper-cases to 'SS') or depends on context ('Σ'), CJK without
# spaces, punctuation runs, words that hold other words.
_WORDS = (
    "auth oauth authentication Auth AUTH proxy Proxy PROXY time-out timeout feature flag "
    "İstanbul istanbul ISTANBUL office ΟΔΟΣ οδός ΣΟΦΟΣ σοφος ς Σ straße STRASSE ß ﬁle ﬁ "
    "file FILE café naïve x86_64 v1.2.3 a aa aaa the then there 代理 服务器 日志分析 认证 "
    "プロキシ 회의 中"
)
WORDS = tuple(_WORDS.split())
SEPARATORS = (" ", " ", " ", "", ".", "-", "->", "...", "--->", ", ", " (", ") ", "::", "。")
PUNCTUATION = ("->", "...", "--->", ".", "-", "(", ")", "::", ". ", "。", ", ", "(4")
TRICKY = ("İ", "i̇", "ı", "ς", "Σ", "σ", "ß", "SS", "ﬁ", "FI", "ΟΔΟΣ.Α", "οδοσ.", "İstanbul office")
FOLDERS = ("2025-11", "2025-11-03", "2025-11-10", "2025-12", "2025-12-01", "2026-01-15")
DATE_RANGES = ("2025-11", "2025-11-10", "2025-12", "2025-12-01", "2026-01", "2026-01-15", "2024-01")


def random_line(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return ""
    parts = [rng.choice(WORDS)]
    for _ in range(rng.randrange(8)):
        parts += [rng.choice(SEPARATORS), rng.choice(WORDS)]
    return "".join(parts) + ("\r" if rng.random() < 0.1 else "")


def random_corpus(root: Path, rng: random.Random, files: int) -> list[Path]:
    """Conversation files in month and day folders, plus files the collection leaves out."""
    written = []
    for i in range(files):
        folder, conv = rng.choice(FOLDERS), f"{rng.randrange(1, 5):03d}-c"
        name = rng.choice(("conversation.md", "notes.txt", "summary.md"))
        written.append(root / folder / conv / name)
    written += [root / "2025-11" / "001-c" / ".hidden.md", root / "2025-11" / "001-c" / "x.json"]
    written.append(root / "2025-11-31" / "001-c" / "x.md")  # not a date
    for path in written:
        write_random(path, rng)
    return written


def write_random(path: Path, rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(random_line(rng) for _ in range(rng.randrange(1, 12)))
    path.write_text(text + ("\n" if rng.random() < 0.7 else ""), encoding="utf-8")


def reference_lines(root: Path, query: str, date_range: str | None) -> dict[tuple[str, int], str]:
    """The search as a plain scan: every line (as the file has it) of every conversation
    file in the date range whose lower-cased text holds the lower-cased query."""
    needle = query.strip().lower()
    found: dict[tuple[str, int], str] = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            parts = path.relative_to(root).parts
            folder = parts[0]
            if (
                len(parts) < 3
                or date_folder(folder) is None
                or any(is_hidden(p) for p in parts)
                or not name.lower().endswith(TEXT_SUFFIXES)
            ):
                continue
            if date_range is not None and not (
                folder == date_range or (len(date_range) == 7 and folder[:7] == date_range)
            ):
                continue
            text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
            for number, line in enumerate(text.split("\n"), 1):
                if needle in line.lower():
                    found[(str(path), number)] = line
    return found


def random_queries(rng: random.Random, paths: list[Path], n: int) -> Iterator[tuple[str, str]]:
    texts = [p.read_text(encoding="utf-8") for p in paths]
    cases = (str, str, str.upper, str.lower, str.swapcase, str.title)
    while n:
        kind = rng.choice(("word", "fragment", "fragment", "phrase", "punctuation", "tricky"))
        if kind == "word":
            query = rng.choice(WORDS)
        elif kind in ("fragment", "phrase"):
            line = rng.choice(rng.choice(texts).split("\n")).rstrip("\r")
            if kind == "fragment":
                start = rng.randrange(len(line) + 1)
                line = line[start : start + rng.randrange(1, 8)]
            query = line
        elif kind == "punctuation":
            query = "".join(rng.choice(PUNCTUATION) for _ in range(rng.randrange(1, 3)))
        else:
            query = rng.choice(TRICKY)
        query = rng.choice(cases)(query)
        if rng.random() < 0.05:
            query, kind = query + "qqzx", "absent"
        if query.strip():
            n -= 1
            yield kind, query


@pytest.mark.parametrize("query_plan", PLANS_OF_A_QUERY)
@pytest.mark.parametrize("engine", ["whoosh", "scan"])
@pytest.mark.parametrize(
    ("seed", "plan"),
    [
        (1, {}),
        (2, {"MAX_EXPANSION": 1}),  # most cut-off words narrow nothing: more files are read
        (3, {"TEXT_CACHE_CHARS": 0}),  # every file read again at every search
        (4, {"NARROW_POSTINGS": 0}),  # by cost, no word narrows: every file is read
    ],
)
def test_the_index_answers_exactly_as_a_plain_scan_of_the_files(
    tmp_path: Path,
    make_settings,
    ctx_for,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    plan: dict[str, int],
    engine: str,
    query_plan: CountPlan,
) -> None:
    for name, value in plan.items():
        monkeypatch.setattr(limits, name, value)
    rng = random.Random(seed)
    root = tmp_path / "conversations"
    paths = random_corpus(root, rng, files=40)
    ctx = ctx_for(make_settings(), engine)
    ctx.plan = query_plan
    if "TEXT_CACHE_CHARS" in plan:
        ctx.memo["workspace"] = workspace.WorkspaceCache(text_budget=0)
    kinds: Counter[str] = Counter()
    for round_ in range(2):
        if round_:  # a second segment, with deletions in the first
            for path in rng.sample(paths[:40], 8):
                write_random(path, rng)
            for path in rng.sample(paths[:40], 3):
                path.unlink(missing_ok=True)
            paths = [p for p in paths if p.exists()]
            Syncer(ctx.settings, get_source("conversations")).reconcile()
        for kind, query in random_queries(rng, paths, 100):
            date_range = rng.choice(DATE_RANGES) if rng.random() < 0.4 else None
            expected = reference_lines(root, query, date_range)
            answer = search_workspace(ctx, query, date_range=date_range, max_results=100)
            context = (kind, query, date_range)
            if not expected:  # the lower tiers may answer, never as exact
                assert all(r.match != "exact" for r in answer.results), context
                continue
            assert {r.match for r in answer.results} == {"exact"} and answer.note is None
            got = {(r.path, r.line): r for r in answer.results}
            assert answer.total_found == len(expected), context
            assert len(got) == min(len(expected), 100), context
            assert got.keys() <= expected.keys(), context
            for key, hit in got.items():
                assert hit.excerpt == expected[key].rstrip("\r").strip(), context
            convs = Counter(Path(path).relative_to(root).parts[:2] for path, _ in expected)
            for hit in got.values():
                assert hit.conversation_hits == convs[hit.date, hit.conversation], context
            kinds[kind] += bool(expected)
    # Queries of every kind but the absent ones found something.
    assert all(kinds[k] for k in kinds if k != "absent"), kinds


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("query", ["", "   ", "line one\nline two"])
def test_an_empty_query_or_one_across_lines_is_invalid_query(ctx, query: str) -> None:
    with pytest.raises(TroveError) as err:
        search_workspace(ctx, query)
    assert err.value.code == "INVALID_QUERY"


@pytest.mark.parametrize("n", [0, 101])
def test_max_results_out_of_range_is_invalid_argument(ctx, n: int) -> None:
    with pytest.raises(TroveError) as err:
        search_workspace(ctx, "feature", max_results=n)
    assert err.value.code == "INVALID_ARGUMENT"


def test_a_missing_conversations_folder_is_directory_not_found(make_settings, ctx_for) -> None:
    with pytest.raises(TroveError) as err:
        search_workspace(ctx_for(make_settings()), "feature")
    assert err.value.code == "DIRECTORY_NOT_FOUND"


# --------------------------------------------------------------------------- CLI

runner = CliRunner()


def config(tmp_path: Path) -> str:
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\n'
        'conversations = "conversations"\n[index]\ndir = "index"\n'
    )
    return str(cfg)


def test_cli_search_workspace_prints_a_table_and_json(convs, tmp_path: Path) -> None:
    convs(CONVERSATIONS)
    cfg = config(tmp_path)
    table = runner.invoke(app, ["--config", cfg, "search", "workspace", "authentication"])
    assert table.exit_code == 0, table.output
    assert "002-debug-auth" in table.stdout and "conversation.md:2" in table.stdout
    raw = runner.invoke(
        app,
        [
            "--config",
            cfg,
            "search",
            "workspace",
            "authentication",
            "--date-range",
            "2025-11-10",
            "--json",
        ],
    )
    assert raw.exit_code == 0, raw.output
    data = json.loads(raw.stdout)
    assert data["total_found"] == 2
    assert {r["date"] for r in data["results"]} == {"2025-11-10"}
    none = runner.invoke(app, ["--config", cfg, "search", "workspace", "qqqzzz"])
    assert none.exit_code == 0 and "no conversation line holds" in none.stdout


def test_cli_search_workspace_bad_date_range_exits_2(convs, tmp_path: Path) -> None:
    convs(CONVERSATIONS)
    r = runner.invoke(
        app, ["--config", config(tmp_path), "search", "workspace", "x", "--date-range", "2025-11-1"]
    )
    assert r.exit_code == 2 and "INVALID_DATE_RANGE" in r.stderr and "YYYY-MM-DD" in r.stderr


# --------------------------------------------------------------------------- tiers that forgive

FORGIVING = {
    "2025-11-10/001-auth/notes.md": "Debug\nthe proxy authentication step failed\nunrelated line\n",
    "2025-11-11/001-meet/notes.md": "the weekly meeting moved\nboth meetings ran late\n",
    "2025-11-12/001-fails/notes.md": "the build fails on monday\ncaptions disappear again\n",
    "2025-10/001-old/notes.md": "authentication only, no other word\nproxy only\n",
}


@pytest.fixture
def forgiving_ctx(convs, make_settings, ctx_for) -> QueryContext:
    convs(FORGIVING)
    return ctx_for(make_settings())


def test_every_word_in_any_order_answers_when_the_query_as_written_is_nowhere(
    forgiving_ctx,
) -> None:
    answer = search_workspace(forgiving_ctx, "authentication proxy")
    assert [(r.conversation, r.line, r.match) for r in answer.results] == [("001-auth", 2, "words")]
    assert answer.total_found == 1 and answer.results[0].score < 0.6
    assert answer.note is not None and "every word" in answer.note
    assert answer.corrected_query is None


def test_a_word_inside_more_terms_than_tier_two_reads_still_finds_every_line_holding_it(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    # '54' is inside a time stamp in every file, each stamp a term of its own.
    convs(
        {
            f"2025-11-{10 + i}/001-log{i}/notes.md": f"at 2025-11-{10 + i}t02:54:0{i}.91{i}z [tls] "
            f"handshake {'retried' if i % 2 else 'ok'}\nother line\n"
            for i in range(8)
        }
    )
    ctx = ctx_for(make_settings())

    def answer() -> list[tuple[str, int, str]]:
        found = search_workspace(ctx, "retried 54 tls", max_results=20)
        return sorted((r.conversation, r.line, r.match) for r in found.results)

    narrowed = answer()
    assert narrowed == [(f"001-log{i}", 1, "words") for i in (1, 3, 5, 7)]
    monkeypatch.setattr(limits, "MAX_WORD_TERMS", 1)  # '54' no longer narrows: same lines
    assert answer() == narrowed


def test_the_query_as_written_answers_exactly_as_before(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "proxy authentication")
    assert [(r.line, r.match, r.score) for r in answer.results] == [(2, "exact", 1.0)]
    assert answer.note is None and answer.suggestions == [] and answer.corrected_query is None


def test_a_lower_tier_never_pushes_out_a_higher(forgiving_ctx) -> None:
    # "proxy" alone is in two files; the words tier would add nothing, related would add
    # lines holding only "authentication": none of them shows while "proxy" matches exactly.
    answer = search_workspace(forgiving_ctx, "proxy")
    assert {r.match for r in answer.results} == {"exact"} and answer.total_found == 2
    words = search_workspace(forgiving_ctx, "step authentication")
    assert {r.match for r in words.results} == {"words"} and words.total_found == 1


@pytest.mark.parametrize(
    ("query", "line"),
    [
        ("weekly meetings", ("001-meet", 1)),  # meetings -> meeting
        ("failing build", ("001-fails", 1)),  # failing -> fails
        ("disappearing captions", ("001-fails", 2)),
    ],
)
def test_words_of_the_same_stem_are_related(forgiving_ctx, query: str, line) -> None:
    from query.forgiving import stem

    assert stem("meetings") == stem("meeting") and stem("failing") == stem("fails")
    answer = search_workspace(forgiving_ctx, query)
    found = [(r.conversation, r.line) for r in answer.results]
    assert {r.match for r in answer.results} == {"related"}
    assert found[0] == line and answer.note and "stem" in answer.note
    assert all(0 < r.score < 0.5 for r in answer.results)


def test_related_lines_holding_more_of_the_words_rank_first(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "authenticated proxies everywhere")
    assert answer.results[0].line == 2 and answer.results[0].conversation == "001-auth"
    assert answer.results[0].score > answer.results[-1].score
    assert {r.match for r in answer.results} == {"related"}
    assert "everywhere" in (answer.note or "")


def test_a_typo_is_corrected_and_the_corrected_query_is_searched(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "Authentcation")
    assert answer.corrected_query == "authentication"
    assert "authentication" in answer.suggestions
    assert {r.match for r in answer.results} == {"fuzzy"}
    assert {(r.conversation, r.line) for r in answer.results} == {("001-auth", 2), ("001-old", 1)}
    assert "authentcation" in (answer.note or "")


def test_a_corrected_query_using_every_word_ranks_above_one_dropping_a_word(
    forgiving_ctx,
) -> None:
    answer = search_workspace(forgiving_ctx, "proxy authentcation")
    assert answer.corrected_query == "proxy authentication"
    assert [(r.conversation, r.line, r.match) for r in answer.results] == [("001-auth", 2, "fuzzy")]


def test_a_long_question_is_answered_by_its_words_before_any_correction(forgiving_ctx) -> None:
    # "authentcation" is a typo, "debugging" and "failing" are held by stem: a question of
    # more than four words is answered by the lines holding some of its words; a
    # correction is tried only when no line holds any.
    question = "why was the authentcation step failing behind the proxy while debugging"
    answer = search_workspace(forgiving_ctx, question)
    assert answer.corrected_query is None
    assert {r.match for r in answer.results} == {"related"}
    assert (answer.results[0].conversation, answer.results[0].line) == ("001-auth", 2)
    nowhere = search_workspace(forgiving_ctx, "authentcation proxxy meetng captons weekyl")
    assert nowhere.corrected_query is not None
    assert {r.match for r in nowhere.results} == {"fuzzy"}


@pytest.mark.parametrize("query", ["the of and", "was it"])
def test_stop_words_alone_find_nothing_and_the_note_says_why(forgiving_ctx, query) -> None:
    answer = search_workspace(forgiving_ctx, query)
    assert answer.results == [] and answer.total_found == 0
    assert "too common" in (answer.note or "")


def test_a_date_range_naming_no_folder_says_so(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "authentication", date_range="2025-09")
    assert answer.results == []
    assert "no conversation folder for 2025-09" in (answer.note or "")
    day = search_workspace(forgiving_ctx, "proxy", date_range="2025-11-30")
    assert "no conversation folder for 2025-11-30" in (day.note or "")


def test_words_only_outside_the_date_range_are_named_in_the_note(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "meeting", date_range="2025-10")
    assert answer.results == []
    assert "outside 2025-10" in (answer.note or "")


def test_unknown_words_without_a_close_word_are_named(forgiving_ctx) -> None:
    answer = search_workspace(forgiving_ctx, "qqqzzzx")
    assert answer.results == [] and answer.suggestions == []
    assert "no conversation holds 'qqqzzzx'" in (answer.note or "")


@pytest.mark.parametrize(
    "query",
    [
        "?!;:",  # only punctuation
        "🙂🙂",  # emoji
        "x" * 200,  # a 200-letter word
        "authentification" * 12,
        # over a hundred different words (within the 1,000 characters a query may have)
        "proxy " + " ".join(a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "aeiou" * 3)[:990],
        "代理 proxy café ΟΔΟΣ",  # mixed scripts
    ],
)
def test_odd_queries_answer_in_bounded_time_with_a_note(forgiving_ctx, query: str) -> None:
    import time

    started = time.perf_counter()
    answer = search_workspace(forgiving_ctx, query)
    # A guard against runaway work, not a speed measurement (bench/ measures speed).
    assert time.perf_counter() - started < 10
    assert answer.results or answer.note
    if query.startswith("proxy "):
        assert answer.results and "first 32 words" in (answer.note or "")


def test_a_query_of_a_thousand_words_is_invalid_query(forgiving_ctx) -> None:
    with pytest.raises(TroveError) as err:
        search_workspace(forgiving_ctx, " ".join(["word"] * 1000))
    assert err.value.code == "INVALID_QUERY" and "limit" in err.value.message


def test_lower_tiers_read_a_bounded_number_of_files(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs({f"2025-07-{i:02d}/001-c/x.md": f"proxy number {i}\n" for i in range(1, 21)})
    monkeypatch.setattr(limits, "MAX_FILES_READ", 5)
    read: list[str] = []
    real = cache.read_file

    def spy(root: Path, rel: str, max_bytes: int):
        read.append(rel)
        return real(root, rel, max_bytes)

    monkeypatch.setattr(cache, "read_file", spy)
    answer = search_workspace(ctx_for(make_settings()), "proxies numbered")
    assert {r.match for r in answer.results} == {"related"}
    assert [r.date for r in answer.results[:2]] == ["2025-07-20", "2025-07-19"]  # newest
    assert "5 most promising files" in (answer.note or "")
    assert len(set(read)) <= 5


# --------------------------------------------------------------------------- the sample

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "conversations"

# Plain-language, inflected and misspelt questions over data/conversations, each with
# the conversation that answers it (judged by reading the files).
SAMPLE_QUESTIONS = [
    ("why does the websocket reconnect every two minutes", "2025-09/001-websocket-reconnect"),
    ("captions dissapear", "2025-09/001-websocket-reconnect"),
    ("token expired after one hour", "2025-10/002-authentication-token-expiry"),
    ("pac file evaluation slow", "2025-10/001-pac-file-questions"),
    ("how many dnsResolve calls", "2025-10/001-pac-file-questions"),
    ("decode timeouts in hamburg", "2025-11/002-decode-timeout-triage"),
    ("headset disconnecting", "2025-11/002-decode-timeout-triage"),
    ("certificat not yet valid", "2025-12-02/001-tls-clock-skew"),
    ("laptop clock skewed", "2025-12-02/001-tls-clock-skew"),
    ("cmos batteries failing", "2025-12-02/001-tls-clock-skew"),
    ("release checklist for the hotfix", "2025-12-02/002-release-checklist"),
    ("authorization header stripped by proxy", "2025-11-10/002-debug-auth"),
    ("is a 407 normal", "2025-11-11/002-proxy-407-followup"),
    ("kerberos tickets too large", "2025-11-11/002-proxy-407-followup"),
    ("ntlm legs on different nodes", "2025-11-11/002-proxy-407-followup"),
    ("redesigning the index", "2025-11-11/001-plan-redesign"),
    ("weekly planing", "2025-11-18/001-weekly-planning"),
    ("brainstormed features", "2025-11-10/001-brainstorm-feature"),
    ("meetings joining slowly behind the proxy", "2025-11-10/001-brainstorm-feature"),
]


@pytest.fixture(scope="module")
def sample_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    from indexer.config import settings_from_dict

    base = tmp_path_factory.mktemp("sample")
    settings = settings_from_dict(
        {"sources": {"conversations": str(SAMPLE)}, "index": {"dir": str(base / "index")}},
        base=base,
    )
    ctx = QueryContext.from_settings(settings)
    yield ctx
    ctx.close()


@pytest.mark.parametrize(("question", "expected"), SAMPLE_QUESTIONS)
def test_questions_over_the_sample_find_their_conversation_in_the_top_three(
    sample_ctx, question: str, expected: str
) -> None:
    answer = search_workspace(sample_ctx, question)
    top: list[str] = []
    for r in answer.results:
        if f"{r.date}/{r.conversation}" not in top:
            top.append(f"{r.date}/{r.conversation}")
    assert expected in top[:3], (question, answer.note, top)


def test_cli_search_workspace_shows_the_tier_and_the_note(convs, tmp_path: Path) -> None:
    convs(FORGIVING)
    cfg = config(tmp_path)
    table = runner.invoke(app, ["--config", cfg, "search", "workspace", "authentication proxy"])
    assert table.exit_code == 0, table.output
    assert "every word" in table.stdout and "words" in table.stdout
    raw = runner.invoke(app, ["--config", cfg, "search", "workspace", "authentcation", "--json"])
    data = json.loads(raw.stdout)
    assert data["corrected_query"] == "authentication" and data["note"]
    assert {r["match"] for r in data["results"]} == {"fuzzy"}
    assert "authentication" in data["suggestions"]
    none = runner.invoke(app, ["--config", cfg, "search", "workspace", "the of"])
    assert none.exit_code == 0 and "too common" in none.stdout


def test_the_related_tier_answers_the_same_when_it_scores_every_line(
    sample_ctx: QueryContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = [(q, k) for q, _ in SAMPLE_QUESTIONS for k in (1, 3, 10)]
    found = [search_workspace(sample_ctx, q, max_results=k) for q, k in asked]
    assert any(r.match == "related" for a in found for r in a.results)
    monkeypatch.setattr(tiers, "fills", lambda lines, k: False)
    for (q, k), answer in zip(asked, found, strict=True):
        assert search_workspace(sample_ctx, q, max_results=k) == answer, q


# --------------------------------------------------------------------------- a tier's answer
# query/workspace/answers.py on lines made by hand.


def _doc(conv: str, key: str | None = None, day: str = "2025-11-10") -> cache.Doc:
    return cache.Doc(key or f"{day}/{conv}/conversation.md", day, conv, (day, conv))


def _lines(*docs: cache.Doc) -> list[Line]:
    return [Line(doc, n, 1.0, f"line {n}", 0, 4, -1) for n, doc in enumerate(docs, 1)]


class _View:
    """What answer_lines asks of a view: the original text of each file shown."""

    def __init__(self, gone: set[str]) -> None:
        self.gone = gone
        self.asked: list[list[str]] = []

    def originals(self, top: list[Line]) -> dict[str, str | None]:
        self.asked.append([ln.doc.key for ln in top])
        return {ln.doc.key: None if ln.doc.key in self.gone else "text" for ln in top}


def test_newest_first_orders_by_conversation_newest_first_then_by_path() -> None:
    old, new = _doc("001-a", day="2025-10-01"), _doc("002-b", day="2025-11-01")
    notes = _doc("002-b", key="2025-11-01/002-b/notes.md", day="2025-11-01")
    seg = cache.SegmentCache()
    found = [(seg, old), (seg, notes), (seg, new)]
    assert [d.key for _, d in answers.newest_first(found)] == [new.key, notes.key, old.key]


def test_a_pick_shows_three_lines_of_each_conversation_before_the_others_lines() -> None:
    a, b = _doc("a"), _doc("b")
    lines = _lines(a, a, a, a, b, a)
    assert limits.LINES_PER_CONVERSATION == 3
    assert [ln.number for ln in answers.pick(lines, 10)] == [1, 2, 3, 5, 4, 6]
    assert [ln.number for ln in answers.pick(lines, 5)] == [1, 2, 3, 5, 4]
    assert [ln.number for ln in answers.pick(lines, 4)] == [1, 2, 3, 5]
    assert [ln.number for ln in answers.pick(lines, 2)] == [1, 2]
    assert answers.pick([], 3) == []


def test_a_pick_fills_whether_its_k_lines_are_among_the_lines_given() -> None:
    a, b = _doc("a"), _doc("b")
    assert answers.fills(_lines(a, a, a, b), 4)
    assert not answers.fills(_lines(a, a, a, a), 4)  # the fourth of a may yet be pushed out
    assert answers.fills(_lines(a, a, a, a), 3)
    assert not answers.fills([], 1)


def test_an_answer_ranks_the_lines_and_counts_them_per_conversation() -> None:
    a, b = _doc("a"), _doc("b")
    lines = _lines(a, b, a, a, a)
    view = _View(set())
    answer = answers.answer_lines(view, lines, 2)  # type: ignore[arg-type]
    assert [ln.number for ln in answer.top] == [1, 2]
    assert [ln.rank for ln in lines] == [0, 1, 2, 3, 4]
    assert answer.per_conversation == {a.conv: 4, b.conv: 1}
    assert answer.total == 5
    assert answer.originals == {a.key: "text", b.key: "text"}


def test_an_answer_leaves_out_files_gone_since_the_index_read_them() -> None:
    a, b, c = _doc("a"), _doc("b"), _doc("c")
    view = _View({a.key})
    answer = answers.answer_lines(view, _lines(a, b, a, c), 2)  # type: ignore[arg-type]
    assert [ln.doc.key for ln in answer.top] == [b.key, c.key]
    assert answer.per_conversation == {b.conv: 1, c.conv: 1}
    assert answer.total == 2
    assert view.asked == [[a.key, b.key], [b.key, c.key]]
    assert answer.originals == {b.key: "text", c.key: "text"}


# --------------------------------------------------------------------------- the tiers' order


def _found(ctx: QueryContext, query: str, **kwargs: Any) -> list[tuple[str, int, str, float]]:
    answer = search_workspace(ctx, query, **{"max_results": 20, **kwargs})
    return [(r.conversation, r.line, r.match, r.score) for r in answer.results]


def test_every_word_held_whole_scores_above_words_held_inside_others(
    convs, make_settings, ctx_for
) -> None:
    convs(
        {
            "2025-10-01/001-whole/notes.md": "the proxy was slow today\n",
            "2025-11-01/002-parts/notes.md": "the proxying was slowish\n",
        }
    )
    found = _found(ctx_for(make_settings()), "slow proxy")
    assert found == [("001-whole", 1, "words", 0.55), ("002-parts", 1, "words", 0.5)]


def test_the_excerpt_of_a_long_line_shows_where_it_matched(convs, make_settings, ctx_for) -> None:
    long_line = "filler " * 80 + "proxy slow here" + " trailing" * 40
    convs({"2025-11-01/001-long/notes.md": "first line\n" + long_line + "\n"})
    ctx = ctx_for(make_settings())
    for query, match in (("slow proxy", "words"), ("proxies zebra", "related")):
        (hit,) = search_workspace(ctx, query).results
        assert (hit.line, hit.match) == (2, match), query
        assert "proxy" in hit.excerpt and len(hit.excerpt) < len(long_line), query


def test_words_too_common_to_narrow_by_still_find_every_line(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs(
        {
            f"2025-11-{10 + i}/001-log{i}/notes.md": f"handshake {'retried' if i % 2 else 'ok'} tls\n"
            for i in range(6)
        }
    )
    ctx = ctx_for(make_settings())
    narrowed = _found(ctx, "retried tls handshake x")
    monkeypatch.setattr(limits, "MAX_WORD_TERMS", 0)  # no word narrows: every file is read
    assert _found(ctx, "retried tls handshake x") == narrowed


def test_related_lines_with_as_many_words_rank_by_bm25(convs, make_settings, ctx_for) -> None:
    common = {f"2025-09-{i:02d}/00{i}-c/notes.md": "the proxy\n" for i in range(1, 6)}
    convs(
        common
        | {
            "2025-10-01/001-rare/notes.md": "a timeout\n",  # the rarer word: first
            "2025-11-01/001-long/notes.md": "proxy " + "word " * 30 + "\n",  # longer: last
            "2025-11-02/001-twice/notes.md": "proxy and proxy again\n",  # twice: above once
        }
    )
    found = _found(ctx_for(make_settings()), "proxy timeout zebra")
    order = [conv for conv, _, match, _ in found if match == "related"]
    assert order[0] == "001-rare"
    assert order[1] == "001-twice"
    assert order[-1] == "001-long"


def test_related_lines_leave_out_files_gone_since_the_index_read_them(
    convs, make_settings, ctx_for, tmp_path: Path
) -> None:
    convs({f"2025-11-{10 + i}/001-c{i}/notes.md": "proxy here\n" for i in range(4)})
    ctx = ctx_for(make_settings())
    assert len(_found(ctx, "proxies zebra")) == 4  # indexed
    (tmp_path / "conversations/2025-11-12/001-c2/notes.md").unlink()
    (tmp_path / "conversations/2025-11-13/001-c3/notes.md").unlink()
    answer = search_workspace(ctx, "proxies zebra")
    assert [r.conversation for r in answer.results] == ["001-c1", "001-c0"]
    assert answer.total_found == 2


def test_related_lines_are_numbered_and_shown_as_in_the_file(convs, make_settings, ctx_for) -> None:
    text = "\nintro\nthe proxy one\nmore\n\nproxy two here\n"
    convs({"2025-11-01/001-c/notes.md": text})
    answer = search_workspace(ctx_for(make_settings()), "proxies zebra")
    assert [(r.line, r.excerpt, r.match) for r in answer.results] == [
        (3, "the proxy one", "related"),
        (6, "proxy two here", "related"),
    ]


def test_the_related_tier_reads_the_files_holding_most_words_first(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = {f"2025-01-{i:02d}/001-both{i}/notes.md": "proxy timeout\n" for i in range(1, 4)}
    one = {f"2025-11-{i:02d}/001-one{i}/notes.md": "proxy\n" for i in range(1, 8)}
    convs(both | one)
    monkeypatch.setattr(limits, "MAX_FILES_READ", 3)
    found = _found(ctx_for(make_settings()), "proxy timeout zebra")
    assert sorted(conv for conv, *_ in found) == ["001-both1", "001-both2", "001-both3"]


@pytest.mark.parametrize("limit", [3, 4])  # one file, or two, after the rare ones
@pytest.mark.parametrize(("rare_word", "common_word"), [("timeout", "proxy"), ("proxy", "timeout")])
def test_of_files_holding_as_many_words_the_rarer_words_are_read_first(
    convs,
    make_settings,
    ctx_for,
    monkeypatch: pytest.MonkeyPatch,
    rare_word: str,
    common_word: str,
    limit: int,
) -> None:
    rare = {f"2025-01-{i:02d}/001-rare{i}/notes.md": f"{rare_word}\n" for i in range(1, 3)}
    common = {f"2025-11-{i:02d}/001-common{i}/notes.md": f"{common_word}\n" for i in range(1, 8)}
    convs(rare | common)
    monkeypatch.setattr(limits, "MAX_FILES_READ", limit)
    found = _found(ctx_for(make_settings()), "proxy timeout zebra")
    # Both rare ones, then the newest of the rest.
    newest = [f"001-common{i}" for i in range(10 - limit, 8)]
    assert sorted(conv for conv, *_ in found) == [*newest, "001-rare1", "001-rare2"]


def test_exactly_max_files_read_files_are_read_without_a_note(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs({f"2025-11-{i:02d}/001-c{i}/notes.md": "proxy\n" for i in range(1, 6)})
    monkeypatch.setattr(limits, "MAX_FILES_READ", 5)
    answer = search_workspace(ctx_for(make_settings()), "proxies zebra")
    assert len(answer.results) == 5
    assert "most promising" not in (answer.note or "")


# --------------------------------------------------------------------------- tiers, closer


@pytest.mark.parametrize(
    ("query", "match"),
    [("zebra crossing", "exact"), ("crossing zebra", "words"), ("zebras crossed", "related")],
)
def test_a_file_gone_before_any_search_read_it_is_skipped_in_every_tier(
    convs, make_settings, ctx_for, tmp_path: Path, query: str, match: str
) -> None:
    convs(
        {
            "2025-06-01/001-a/x.md": "zebra crossing here\n",
            "2025-06-02/001-b/x.md": "zebra crossing there\n",
        }
    )
    settings = make_settings()
    Syncer(settings, get_source("conversations")).reconcile()
    (tmp_path / "conversations/2025-06-02/001-b/x.md").unlink()  # the newest: read first
    answer = search_workspace(ctx_for(settings), query)
    assert [(r.conversation, r.match) for r in answer.results] == [("001-a", match)]


def test_the_words_tier_finds_every_line_when_no_word_narrows_the_files(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs({f"2025-11-{10 + i}/001-log{i}/notes.md": f"handshake {i} tls\n" for i in range(4)})
    monkeypatch.setattr(limits, "MAX_WORD_TERMS", 0)  # every word too common to narrow by
    found = _found(ctx_for(make_settings()), "tls handshake")
    assert [(conv, match) for conv, _, match, _ in found] == [
        (f"001-log{i}", "words") for i in (3, 2, 1, 0)
    ]


@pytest.mark.parametrize("n", [4, 5])
def test_the_words_tier_says_when_it_left_files_unread(
    convs, make_settings, ctx_for, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    convs({f"2025-11-{i:02d}/001-c{i}/notes.md": "tls handshake\n" for i in range(1, n + 1)})
    monkeypatch.setattr(limits, "MAX_FILES_READ", 4)
    answer = search_workspace(ctx_for(make_settings()), "handshake tls")
    assert {r.match for r in answer.results} == {"words"} and len(answer.results) == 4
    assert ("4 most promising files" in (answer.note or "")) == (n > 4)


@pytest.mark.parametrize(
    ("query", "match"), [("slow proxy", "words"), ("proxies zebra", "related")]
)
def test_the_excerpt_of_a_long_line_far_down_is_around_its_longest_word(
    convs, make_settings, ctx_for, query: str, match: str
) -> None:
    long_line = "slow " + "filler " * 80 + "proxy" + " trailing" * 60
    convs({"2025-11-01/001-long/notes.md": "first " * 200 + "\n" + long_line + "\n"})
    (hit,) = search_workspace(ctx_for(make_settings()), query).results
    assert (hit.line, hit.match) == (2, match)
    assert "proxy" in hit.excerpt and not hit.excerpt.startswith("slow")


def test_cjk_words_are_whole_words_wherever_they_stand(convs, make_settings, ctx_for) -> None:
    convs({"2025-11-01/001-c/notes.md": "v2代理超时ok\n"})  # beside letters too
    assert _found(ctx_for(make_settings()), "超时 代理") == [("001-c", 1, "words", 0.55)]


def test_related_lines_hold_plain_and_cjk_words_alike(convs, make_settings, ctx_for) -> None:
    convs(
        {
            "2025-11-01/001-plain/notes.md": "the proxy here\n",
            "2025-11-02/001-cjk/notes.md": "设置代理\n",
        }
    )
    found = _found(ctx_for(make_settings()), "proxy 代理 zebra")
    assert sorted((conv, match) for conv, _, match, _ in found) == [
        ("001-cjk", "related"),
        ("001-plain", "related"),
    ]


def test_a_related_line_after_a_blank_first_line_is_numbered_from_it(
    convs, make_settings, ctx_for
) -> None:
    convs({"2025-11-01/001-c/notes.md": "\nproxy here\n"})
    assert _found(ctx_for(make_settings()), "proxies zebra") == [("001-c", 2, "related", 0.225)]


# The related tier's order written out: lines holding more of the query's words first,
# then by BM25 over the words (idf over the files, the line's tokens against 12), then in
# the order the files are read: more words, then their summed idf, then newest.
RELATED_WORDS = ["alpha", "bravo", "charlie", "delta"]
FILLER = ["lorem", "ipsum", "dolor", "amet", "elit", "sed", "quis"]


def _related_reference(lines: list[str]) -> list[tuple[int, float]]:
    """(file index, score) of every line holding a word, best first: lines[i] is the only
    line of the file dated day i + 1 (a later file is newer)."""
    k1, b, avg = tiers.BM25_K1, tiers.BM25_B, tiers.BM25_AVG_TOKENS
    counts = [Counter(t for t in line.split() if t in RELATED_WORDS) for line in lines]
    df = [sum(1 for c in counts if w in c) for w in RELATED_WORDS]
    live = len(lines)
    idf = [math.log(1 + (live - d + 0.5) / (d + 0.5)) for d in df]
    held = [[i for i, w in enumerate(RELATED_WORDS) if w in c] for c in counts]
    read = sorted(
        (i for i in range(live) if held[i]),
        key=lambda i: (-len(held[i]), -sum(idf[j] for j in held[i]), -i),
    )
    scored = []
    for i in read:
        norm = k1 * (1 - b + b * len(lines[i].split()) / avg)
        tf = {RELATED_WORDS.index(w): f for w, f in counts[i].items()}
        bm25 = sum(idf[j] * f * (k1 + 1) / (f + norm) for j, f in tf.items())
        scored.append((len(held[i]), bm25, i))
    scored.sort(key=lambda s: (-s[0], -s[1]))  # stable: in the order read
    n = len(RELATED_WORDS) + 1  # and the word no file holds
    return [(i, round(tiers.RELATED_SCORE * h / n, 4)) for h, _, i in scored]


@pytest.mark.parametrize("seed", range(4))
def test_related_lines_rank_as_bm25_written_out_says(
    convs, make_settings, ctx_for, seed: int
) -> None:
    rng = random.Random(seed)
    lines = []
    for _ in range(30):
        chosen = sorted(rng.sample(range(len(RELATED_WORDS)), rng.randint(1, 3)))
        words = [RELATED_WORDS[i] for i in chosen for _ in range(rng.choice([1, 1, 2, 3]))]
        lines.append(" ".join(words + rng.choices(FILLER, k=rng.randint(0, 30))))
    convs(
        {
            f"2025-{1 + i // 28:02d}-{1 + i % 28:02d}/001-c{i}/notes.md": f"{line}\n"
            for i, line in enumerate(lines)
        }
    )
    found = _found(ctx_for(make_settings()), " ".join(RELATED_WORDS) + " zzqxv", max_results=100)
    assert [(conv, match) for conv, _, match, _ in found] == [
        (f"001-c{i}", "related") for i, _ in _related_reference(lines)
    ]
    assert [score for *_, score in found] == [score for _, score in _related_reference(lines)]
