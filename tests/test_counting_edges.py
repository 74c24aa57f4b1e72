"""Edges of counting a query in one segment (query/reports/counting.py) that the
differential tests against the plain scan rarely reach: counting a few reports' texts one
run at a time with runs skipped that cannot reach the best, and a query inside a token
more than once, on the dense and the sparse path."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexer.config import Settings
from indexer.sources.reports import ReportsSource
from indexer.store import Syncer
from query.context import QueryContext
from query.reports import ReportSegment, search_reports, segments_of
from query.reports.counting import nth_highest_count


@pytest.fixture
def segment_of(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> Iterator[Callable[[dict[str, str]], ReportSegment]]:
    """The one segment of an index of these reports ({relative path: text})."""
    made: list[QueryContext] = []

    def make(reports: dict[str, str]) -> ReportSegment:
        for rel, text in reports.items():
            path = tmp_path / "reports" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        ctx = QueryContext.from_settings(make_settings())
        made.append(ctx)
        syncer = Syncer(ctx.settings, ReportsSource())
        syncer.parallel = False
        syncer.reconcile()
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            (segment,) = segments_of(snapshot)
        return segment

    yield make
    for ctx in made:
        ctx.close()


def test_counting_a_few_texts_keeps_every_report_that_can_be_among_the_best(
    segment_of,
) -> None:
    """Runs of 1-3 texts, each skipped where none of its texts is long enough to hold
    the query as often as the top-th best so far: every report counting at least as
    often as the top-th best is kept, with its count, whatever the order and the top."""
    rng = random.Random(11)
    reports = {}
    for i in range(60):
        words = [
            rng.choice(["abc", "abcabc", "x", "xyzzy", "ab"]) for _ in range(rng.randint(0, 12))
        ]
        reports[f"cmd/r{i:02d}_2025{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}.md"] = " ".join(
            words
        )
    for i in range(30):  # texts of the query alone: as long as their count allows
        reports[f"cmd/q{i:02d}_2025{rng.randint(1, 12):02d}10.md"] = "abc" * rng.randint(1, 4)
    segment = segment_of(reports)
    texts = segment.segment.bytes_column("text")
    every = list(range(segment.segment.doc_count_all))
    truth = {d: texts.value(d).count(b"abc") for d in every}
    checked = 0
    for trial in range(200):
        docs = sorted(rng.sample(every, rng.randint(1, len(every))))
        top = rng.randint(1, 6)
        segment.costs = dataclasses.replace(segment.costs, text_run=rng.randint(1, 3))
        found = segment._count_some_texts(texts, b"abc", docs, top)
        held = sorted((truth[d] for d in docs if truth[d]), reverse=True)
        least = held[top - 1] if len(held) >= top else 1
        wanted = {d: float(truth[d]) for d in docs if truth[d] >= least and truth[d]}
        assert wanted.items() <= found.items(), trial
        assert all(truth[d] == n for d, n in found.items()), trial
        checked += len(held) > top
    assert checked > 50  # most trials had more reports than the top


@pytest.mark.parametrize("dense", [True, False])
def test_a_query_inside_a_token_more_than_once_counts_each_time(segment_of, dense) -> None:
    """'ha' twice in 'haha' and three times in 'hahaha': (times in the token) x (the
    token's frequency), on the path that adds the postings up in an array (dense) and
    the one that adds them in a dict."""
    rng = random.Random(3)
    reports = {
        f"cmd/r{i:02d}.md": " ".join(
            rng.choice(["haha", "hahaha", "ha", "hat", "oh"]) for _ in range(9)
        )
        for i in range(30)
    }
    segment = segment_of(reports)
    segment.costs = dataclasses.replace(
        segment.costs, dense_postings=0 if dense else 10**9, scan_floor_us=10**9
    )
    segment.plan = "postings"
    texts = segment.segment.bytes_column("text")
    truth = {d: texts.value(d).count(b"ha") for d in range(segment.segment.doc_count_all)}
    assert segment.occurrences("ha", None) == {d: float(n) for d, n in truth.items() if n}


@pytest.mark.parametrize("top", [1, 3, 10])
@pytest.mark.parametrize("command", [None, "two"])
def test_a_query_inside_tokens_wanting_the_best_keeps_those_that_can_be_among_them(
    segment_of, top: int, command: str | None
) -> None:
    """Wanting the ``top`` best, the counts inside tokens are added up in an array (from
    each term's postings as arrays, or its blocks in a command's reports) and only the
    reports with at least the ``top``-th highest count are kept, ties and all."""
    rng = random.Random(top)
    reports = {
        f"{('one', 'two')[i % 2]}/r{i:02d}.md": " ".join(
            rng.choice(["haha", "hahaha", "ha", "hat", "oh"]) for _ in range(rng.randint(1, 9))
        )
        for i in range(60)
    }
    segment = segment_of(reports)
    segment.plan = "postings"
    texts = segment.segment.bytes_column("text")
    keys = segment.segment.bytes_column("sort_key")
    truth = {
        d: n
        for d in range(segment.segment.doc_count_all)
        if (n := texts.value(d).count(b"ha"))
        and (command is None or keys.value(d).startswith(f"{command}/".encode()))
    }
    least = sorted(truth.values(), reverse=True)[top - 1]
    assert segment.occurrences("ha", command, top) == {
        d: float(n) for d, n in truth.items() if n >= least
    }


@given(st.lists(st.integers(0, 1 << 17), min_size=2, max_size=200), st.data())
def test_the_nth_highest_count_is_the_nth_of_the_counts_in_order(
    counts: list[int], data: st.DataObject
) -> None:
    n = data.draw(st.integers(1, len(counts) - 1))
    found = nth_highest_count(np.array(counts, dtype=np.float64), n)
    assert found == sorted(counts, reverse=True)[n - 1]


@pytest.mark.parametrize("sequences", [True, False])
def test_a_phrase_counted_in_the_texts_once_a_token_narrowed_stays_in_its_command(
    tmp_path: Path, make_settings: Callable[..., Settings], sequences: bool
) -> None:
    """Where the first token read leaves reports whose texts cost more to count than
    every text of the segment, every text is counted (or the runs of the token sequences
    read), but only those of the command asked for: the others hold the phrase too."""
    rng = random.Random(4)
    for command, n in (("a", 30), ("b", 10)):
        for i in range(n):
            words = [rng.choice(["alpha beta", "alpha", "beta", "gamma"]) for _ in range(6)]
            path = tmp_path / "reports" / command / f"r{i:02d}_202501{i % 28 + 1:02d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(" ".join(words), encoding="utf-8")
    ctx = QueryContext.from_settings(make_settings())
    try:
        syncer = Syncer(ctx.settings, ReportsSource())
        syncer.parallel = False
        syncer.reconcile()
        if not sequences:
            for table in (ctx.settings.index_dir / "reports").glob("trove-seqs-*"):
                table.unlink()
        # Reading the first token's postings costs nothing; counting the texts it leaves
        # more than counting every text: every text is counted after step 0.
        ctx.costs = dataclasses.replace(
            ctx.costs, posting_us=0, term_us=0, text_us=10**6, scan_floor_us=0
        )
        found = search_reports(ctx, "alpha beta", command_filter="a", max_results=100)
        assert found.results and {r.command_name for r in found.results} == {"a"}
        texts = {
            f"{r.command_name}/{r.report_name}": (
                tmp_path / "reports" / r.command_name / r.report_name
            )
            .read_text(encoding="utf-8")
            .count("alpha beta")
            for r in found.results
        }
        held = {
            f"a/{p.name}": p.read_text(encoding="utf-8").count("alpha beta")
            for p in (tmp_path / "reports" / "a").iterdir()
        }
        assert texts == {k: n for k, n in held.items() if n}
    finally:
        ctx.close()
