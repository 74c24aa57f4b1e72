"""Every search answers the same on the Whoosh engine and on the plain-scan reference
engine (no index: the files read as they are), over the sample data in data/ after edits
that leave the Whoosh index with two segments and deletions.

Only BM25F scores may differ (each engine keeps its own statistics: Whoosh counts its
bookkeeping records as documents and rounds field lengths to a byte); where ELOG ranks by
them, the engines must find the same entries, and the same best ones when all fit.
"""

from __future__ import annotations

import random
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.commands import search_commands
from query.context import QueryContext
from query.count_plan import PLANS
from query.elog import get_elog_thread, search_elog
from query.errors import TroveError
from query.reports import search_reports
from query.workspace import search_workspace

DATA = Path(__file__).resolve().parent.parent / "data"
COLLECTIONS = ("reports", "commands", "conversations", "elog")
_WORD = re.compile(r"\w+")


def settings(tmp_path: Path) -> Settings:
    raw: dict[str, Any] = {
        "sources": {
            "reports": str(tmp_path / "data/reports"),
            "commands": str(tmp_path / "data/commands"),
            "conversations": str(tmp_path / "data/conversations"),
            "elog": str(tmp_path / "data/elog/SwissFEL"),
            "elog_config": str(tmp_path / "data/elog/elogd.cfg"),
        },
        "index": {"dir": str(tmp_path / "index")},
        "elog": {"rerank": "lexical"},
    }
    return settings_from_dict(raw, base=tmp_path)


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, QueryContext]]:
    """{engine: context} over one copy of data/, indexed, edited, indexed again."""
    tmp_path = tmp_path_factory.mktemp("engines")
    shutil.copytree(DATA, tmp_path / "data")
    whoosh = settings(tmp_path)
    for name in COLLECTIONS:
        Syncer(whoosh, get_source(name)).reconcile()
    edit(tmp_path / "data", random.Random(3))
    for name in COLLECTIONS:
        Syncer(whoosh, get_source(name)).reconcile()
    contexts = {e: QueryContext.from_settings(whoosh, e) for e in ("whoosh", "scan")}
    yield contexts
    for ctx in contexts.values():
        ctx.close()


def edit(data: Path, rng: random.Random) -> None:
    """A few files of each text collection changed, added or removed."""
    for folder in ("reports", "commands", "conversations"):
        files = sorted(p for p in (data / folder).rglob("*.md") if p.is_file())
        for path in rng.sample(files, 3):
            path.write_text(path.read_text(encoding="utf-8") + "\nproxy retry edited\n")
        path = rng.choice(files)
        path.unlink()
        files.remove(path)
        source = rng.choice(files)
        shutil.copy(source, source.with_name("copy_" + source.name))


def texts(folder: Path) -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.rglob("*.md"))]


def queries(corpus: list[str], rng: random.Random, n: int) -> list[str]:
    """How people query: the commonest words, short fragments, acronyms, phrases cut from
    the text, CJK, words no document holds, and random words."""
    words = Counter(w.lower() for text in corpus for w in _WORD.findall(text))
    common = [w for w, _ in words.most_common(8)]
    fragments = ["e", "a", "to", "re", "IP", "in", "ro", "-", "."]
    phrases = []
    for _ in range(n):
        text = rng.choice(corpus)
        start = rng.randrange(max(1, len(text) - 30))
        phrases.append(text[start : start + rng.randint(3, 25)].strip() or "x")
    cjk = [m.group() for text in corpus for m in re.finditer(r"[\u4e00-\u9fff]{2,4}", text)]
    rare = rng.sample(sorted(words), min(n, len(words)))
    return common + fragments + phrases + cjk[:5] + rare + ["zzqxv", "proxy zzqxv"]


def agree(call: Callable[[QueryContext], Any], engines: dict[str, QueryContext]) -> list[Any]:
    """The answers of both engines (dumped), or the error code both raised."""
    answers = []
    for ctx in engines.values():
        try:
            answer = call(ctx).model_dump()
        except TroveError as exc:
            answer = exc.code
        if isinstance(answer, dict):
            answer.pop("search_time_ms", None)
            # When each engine's snapshot was taken (the hits' stale flags are compared).
            answer.pop("freshness", None)
        answers.append(answer)
    return answers


@pytest.fixture(params=PLANS)
def planned(
    engines: dict[str, QueryContext], request: pytest.FixtureRequest
) -> Iterator[dict[str, QueryContext]]:
    """The engines, Whoosh searching with a query plan (QueryContext.plan) forced or
    chosen by cost, the plain scan with another forced: every plan answers the same."""
    engines["whoosh"].plan = request.param
    engines["scan"].plan = "postings" if request.param == "texts" else "texts"
    yield engines
    for ctx in engines.values():
        ctx.plan = "cost"


def test_search_reports_answers_the_same_on_both_engines(planned) -> None:
    engines = planned
    rng = random.Random(1)
    corpus = texts(Path(engines["scan"].settings.source_root("reports") or ""))
    asked = 0
    for query in queries(corpus, rng, 40):
        for command in (None, "analyze_zoom_speech_sdk_log"):
            n = rng.choice((1, 3, 10, 100))
            whoosh, scan = agree(lambda c: search_reports(c, query, command, n), engines)  # noqa: B023
            assert whoosh == scan, (query, command, n)
            asked += bool(isinstance(whoosh, dict) and whoosh["results"])
    assert asked > 40


def test_search_workspace_answers_the_same_on_both_engines(planned) -> None:
    engines = planned
    rng = random.Random(2)
    corpus = texts(Path(engines["scan"].settings.source_root("conversations") or ""))
    asked = 0
    for query in queries(corpus, rng, 40):
        for date_range in (None, "2025-11", "2025-11-10"):
            answers = agree(
                lambda c: search_workspace(c, query, date_range, 100),  # noqa: B023
                engines,
            )
            assert answers[0] == answers[1], (query, date_range)
            asked += bool(isinstance(answers[0], dict) and answers[0]["results"])
    assert asked > 40


def test_search_commands_answers_the_same_on_both_engines(engines) -> None:
    rng = random.Random(3)
    corpus = texts(Path(engines["scan"].settings.source_root("commands") or ""))
    asked = 0
    for query in queries(corpus, rng, 30):
        whoosh, scan = agree(lambda c: search_commands(c, query, 20), engines)  # noqa: B023
        assert whoosh == scan, query
        asked += bool(isinstance(whoosh, dict) and whoosh["results"])
    assert asked > 20


def elog_texts(engines: dict[str, QueryContext]) -> list[str]:
    root = engines["scan"].settings.source_root("elog")
    assert root is not None
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.log"))]


def test_search_elog_finds_the_same_entries_on_both_engines(engines) -> None:
    rng = random.Random(4)
    ranked = 0
    for query in queries(elog_texts(engines), rng, 30):
        whoosh, scan = agree(lambda c: search_elog(c, query, max_results=50), engines)  # noqa: B023
        if not isinstance(whoosh, dict):
            assert whoosh == scan, query
            continue
        assert whoosh["total"] == scan["total"], query
        ids = [{h["elog_id"] for h in answer["hits"]} for answer in (whoosh, scan)]
        if whoosh["total"] <= 50:
            assert ids[0] == ids[1], query
            ranked += whoosh["total"] > 1
    assert ranked > 10


@pytest.mark.parametrize(
    "query",
    [r"beam.*loss", r"^re", r"err(or)?s?$", r"\d{3}", r"[kx]lystron|gun", r"laser.?\w+", r"\bBPM"],
)
def test_an_elog_regex_gives_the_same_answer_on_both_engines(engines, query) -> None:
    whoosh, scan = agree(lambda c: search_elog(c, query, max_results=50), engines)
    assert whoosh == scan


def test_elog_filters_dates_and_threads_are_the_same_on_both_engines(engines) -> None:
    for kwargs in (
        {},
        {"since": "2023-01-01", "until": "2023-12-31"},
        {"category": "Info"},
        {"system": "RF", "max_results": 50},
    ):
        whoosh, scan = agree(lambda c: search_elog(c, **kwargs), engines)  # noqa: B023
        assert whoosh == scan, kwargs
    listed = search_elog(engines["whoosh"], max_results=50)
    assert listed.hits
    for hit in listed.hits[:20]:
        whoosh, scan = agree(lambda c: get_elog_thread(c, hit.elog_id), engines)  # noqa: B023
        assert whoosh == scan, hit.elog_id
