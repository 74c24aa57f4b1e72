"""query/reports/warm_up.py: a serving process reads, before its first search, what that
search would read first; the search then reads none of it again. With no index yet it
does nothing, and says nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from derived_files import sample

from indexer.engine.whoosh import reading
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext
from query.reports import search_reports
from query.reports.warm_up import start_warm_up, warm_up

QUERIES = ("decode response", "e", "timeout")  # a phrase (sequences), a fragment (tops), a word
# What a segment's first searches read: its terms, tops, token sequences, term tops and
# suffixes in order.
READS = {"read_terms", "read_tops", "read_sequences", "read_term_tops", "read_suffixes"}


@pytest.fixture
def reads(monkeypatch) -> Counter[str]:
    """How many times a search read each of READS of a segment."""
    counted: Counter[str] = Counter()

    def counting(name: str, read: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            counted[name] += 1
            return read(*args)

        return wrapper

    for name in READS:
        monkeypatch.setattr(reading, name, counting(name, getattr(reading, name)))
    return counted


def built(tmp_path: Path) -> QueryContext:
    settings = sample(tmp_path)
    syncer = Syncer(settings, get_source("reports"))
    syncer.parallel = False
    syncer.reconcile(full=True)
    return QueryContext.from_settings(settings)


@pytest.mark.parametrize("warmed", [True, False])
def test_after_the_warm_up_the_first_searches_read_nothing_it_read(tmp_path, reads, warmed) -> None:
    ctx = built(tmp_path)
    try:
        if warmed:
            warm_up(ctx)
            assert set(reads) == READS
            reads.clear()
        answers = [search_reports(ctx, q) for q in QUERIES]
        assert all(a.results for a in answers)
        # Unwarmed, the same searches read each kind (so the count can tell).
        assert not reads if warmed else set(reads) == READS
    finally:
        ctx.close()


def answer(ctx: QueryContext, query: str) -> dict[str, Any]:
    """The answer but where it was asked (its folder) and when (freshness)."""
    found = search_reports(ctx, query).model_dump(exclude={"freshness"})
    for hit in found["results"]:
        del hit["path"], hit["link"]
    return found


def test_the_answers_are_the_same_warmed_or_not(tmp_path) -> None:
    cold, warm = built(tmp_path / "cold"), built(tmp_path / "warm")
    try:
        start_warm_up(warm).join(timeout=60)
        for q in QUERIES:
            assert answer(warm, q) == answer(cold, q), q
    finally:
        cold.close()
        warm.close()


def test_with_no_index_yet_it_does_nothing_and_builds_nothing(tmp_path, caplog, reads) -> None:
    settings = sample(tmp_path)
    ctx = QueryContext.from_settings(settings)
    try:
        with caplog.at_level("DEBUG"):
            thread = start_warm_up(ctx)
            thread.join(timeout=60)
        assert not thread.is_alive()
        assert not reads
        assert not (settings.index_dir / "reports").exists()
        assert not [r for r in caplog.records if r.levelname != "DEBUG"]
    finally:
        ctx.close()
