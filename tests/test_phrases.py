"""query/reports/phrases.py: a query of several tokens answered from the runs of tokens in
the segments' token sequences gets the answer counting every text gets, and a plain scan
of the files: over a corpus of the commonest words, with runs that overlap ('the the
the'), occurrences across words ('bathe then' holds 'the the'), separators that are not
the query's, deletions, a command filter, pages; within a budget that gives up too."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest
from test_reports_search import reference_search

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext
from query.count_plan import CountPlan
from query.reports import ReportSegment, phrases, search_reports

WORDS = [
    "the",
    "the",
    "the",
    "The",
    "THE",
    "then",
    "there",
    "bathe",
    "lathe",
    "of",
    "of",
    "in",
    "inn",
    "to",
    "a",
    "token",
    "Token",
    "validate",
    "en",
    "va",
    "value",
    "heartbeat",
    "missed",
    "日本",
    "İstanbul",
]
SEPARATORS = [" "] * 12 + ["  ", "\n", ". ", ", ", "", "\t", " - ", "("]
COMMANDS = ("alpha", "beta", "gamma")
DAYS = ("20251101", "20251102", "20251102", "20251103", "")  # ties, and undated
QUERIES = (
    "the the",
    "the the the",
    "the the the the",
    "THE the",
    "of the",
    "in the",
    "the then",
    "e t",  # ends one word, starts the next
    "he th",
    "the  the",  # two spaces: a separator the runs do not know
    "the. the",
    "the, the",
    "(the",
    "the (the",
    "token validate",
    "en va",
    "heartbeat missed",
    "the 日本",
    "日本 the",
    "a the of",
    "bathe then",
    "of of of",
    "istanbul the",
)


def text(rng: random.Random, n: int) -> str:
    parts = []
    for _ in range(n):
        if rng.random() < 0.1:
            parts.append("the the the " * rng.randint(1, 3))
        parts.append(rng.choice(WORDS))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts)


def write_reports(root: Path, rng: random.Random, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        day = rng.choice(DAYS)
        path = root / rng.choice(COMMANDS) / f"r{i}_{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text(rng, rng.randint(0, 120)), encoding="utf-8")


def settings_of(tmp_path: Path) -> Settings:
    raw = {
        "sources": {"reports": str(tmp_path / "reports")},
        "index": {"dir": str(tmp_path / "index")},
    }
    return settings_from_dict(raw, base=tmp_path)


def built(
    tmp_path: Path, monkeypatch, seed: int, forced: bool = True
) -> tuple[Settings, list[Any]]:
    """Two segments, the first with deletions and changed reports, and the answers of
    counting every text; from then on (``forced``) the plan by cost counts in the texts
    wherever it would read postings (and so tries the runs first)."""
    rng = random.Random(seed)
    root = tmp_path / "reports"
    write_reports(root, rng, 80)
    settings = settings_of(tmp_path)
    syncer = Syncer(settings, get_source("reports"))
    syncer.reconcile(full=True)
    reports = sorted(root.rglob("*.md"))
    for path in rng.sample(reports, 10):
        path.unlink()
    for path in rng.sample(reports, 10):
        if path.exists():
            path.write_text(text(rng, 60), encoding="utf-8")
    write_reports(root, rng, 20, start=1000)
    syncer.reconcile()
    counted = answers(settings, "texts")
    if forced:
        monkeypatch.setattr(ReportSegment, "_texts_cheaper", lambda self, us, within, runs=0: True)
    return settings, counted


def answers(
    settings: Settings, plan: CountPlan = "cost", **costs: Any
) -> list[list[tuple[str, int, str]]]:
    ctx = QueryContext.from_settings(settings)
    ctx.plan = plan
    ctx.costs = dataclasses.replace(ctx.costs, **costs)
    try:
        return answers_in(ctx)
    finally:
        ctx.close()


def answers_in(ctx: QueryContext) -> list[list[tuple[str, int, str]]]:
    return [
        [(h.path, h.count, h.match) for h in search_reports(ctx, q, command, n, offset).results]
        for q in QUERIES
        for command in (None, "beta")
        for n, offset in ((1, 0), (3, 0), (10, 0), (3, 2), (2, 7))
    ]


@pytest.fixture
def spied(monkeypatch) -> list[bool]:
    """Every search of several tokens that would count in the texts tries the runs
    (counting the texts costs without end here); what each try gave (an answer, or none)."""
    monkeypatch.setattr(ReportSegment, "_texts_us", lambda self, within: 10.0**12)
    outcomes: list[bool] = []
    best = phrases.best_by_runs

    def spy(*args, **kwargs):
        found = best(*args, **kwargs)
        outcomes.append(found is not None)
        return found

    monkeypatch.setattr(phrases, "best_by_runs", spy)
    return outcomes


@pytest.mark.parametrize("seed", [1, 2])
def test_the_runs_answer_as_counting_every_text_and_a_plain_scan(
    tmp_path: Path, monkeypatch, spied: list[bool], seed: int
) -> None:
    settings, counted = built(tmp_path, monkeypatch, seed)
    assert answers(settings) == counted
    assert spied.count(True) > 100 and not spied.count(False), spied.count(True)
    root = tmp_path / "reports"
    for q in QUERIES:
        for command in (None, "beta"):
            want = [(e.path, e.count) for e in reference_search(root, q, command, 10)]
            ctx = QueryContext.from_settings(settings)
            try:
                found = search_reports(ctx, q, command).results
                got = [(h.path, h.count) for h in found if h.match in ("exact", "words")]
            finally:
                ctx.close()
            assert got == want, (q, command)


def test_the_plan_by_cost_reads_the_runs_where_they_cost_less_than_the_postings(
    tmp_path: Path, monkeypatch, spied: list[bool]
) -> None:
    """Left to itself (no floor under what postings cost), the plan finds these phrases
    of the commonest words from the runs: reading their tokens' postings costs more."""
    settings, counted = built(tmp_path, monkeypatch, 6, forced=False)
    assert answers(settings, scan_floor_us=0.0) == counted
    assert spied.count(True) and not spied.count(False)


def test_within_a_budget_the_runs_give_up_and_the_texts_answer(
    tmp_path: Path, monkeypatch, spied: list[bool]
) -> None:
    settings, counted = built(tmp_path, monkeypatch, 3)
    # Counting the texts costs as much as counting 4 of them: a budget of 4 texts.
    monkeypatch.setattr(ReportSegment, "_texts_us", lambda self, within: 4 * self.costs.text_us)
    assert answers(settings, sequence_ns=0.0) == counted
    assert spied.count(True) and spied.count(False), spied


def test_a_search_answers_the_same_with_sequences_missing_or_damaged(
    tmp_path: Path, monkeypatch, spied: list[bool]
) -> None:
    settings, counted = built(tmp_path, monkeypatch, 4)
    folder = settings.index_dir / "reports"
    for path in folder.glob("trove-seqs-*"):
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1  # in the codes: found as they are read
        path.write_bytes(bytes(data))
    assert answers(settings) == counted
    assert spied and not spied.count(True)  # each try gave way to the texts
    spied.clear()
    for path in folder.glob("trove-seqs-*"):
        path.unlink()
    assert answers(settings) == counted
    assert not spied  # never tried: no segment has its sequences


def test_a_table_cut_short_after_it_was_checked_is_no_longer_used(
    tmp_path: Path, monkeypatch, spied: list[bool]
) -> None:
    """A search reads the codes from the file it checked: cut short in place since, the
    codes it lacks are not read as any, and the texts answer."""
    settings, counted = built(tmp_path, monkeypatch, 5)
    ctx = QueryContext.from_settings(settings)
    try:
        assert answers_in(ctx) == counted
        assert spied.count(True) and not spied.count(False)
        for path in (settings.index_dir / "reports").glob("trove-seqs-*"):
            with path.open("r+b") as f:
                f.truncate(path.stat().st_size // 2)
        spied.clear()
        assert answers_in(ctx) == counted
        assert spied and not spied.count(True)  # each try gave way to the texts
    finally:
        ctx.close()
