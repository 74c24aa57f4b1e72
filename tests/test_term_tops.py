"""indexer/engine/term_tops.py: a segment's term tops are, for each common term, the
documents a search ranks first by that term alone, in its order; a damaged table or
entry is never used; the writer leaves one beside each segment it writes, a reconcile
writes a lost one anew, and a search for a word answers the same with or without them."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from derived_files import (
    answers,
    checked_segments,
    lost_files_are_written_anew,
    sample,
    segments_come_and_go,
)

from indexer.config import Settings, settings_from_dict
from indexer.engine import term_tops
from indexer.engine.base import Segment
from indexer.engine.term_tops import TermTops, ranked_top, table
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext
from query.count_plan import CountPlan
from query.reports.counting import segments_of
from query.reports.ranking import best


@pytest.fixture
def few(monkeypatch) -> None:
    """Tops of 3 documents, of every term of at least 4: the sample's words have them."""
    monkeypatch.setattr(term_tops, "TOP", 3)
    monkeypatch.setattr(term_tops, "MIN_DOCS", 4)


def expected(
    docs: list[int], counts: list[int], ranks: list[int], keys: list[bytes]
) -> list[tuple[int, int]]:
    """(document, count) ranked as a search ranks: most occurrences, then the highest
    rank, then the lowest key; the first TOP."""
    held = sorted(
        zip(docs, counts, strict=True), key=lambda dc: (-dc[1], -ranks[dc[0]], keys[dc[0]])
    )
    return held[: term_tops.TOP]


@pytest.mark.parametrize("ranks_of", ["days", "wide", "undated and negative"])
def test_the_tops_are_what_ranking_every_document_puts_first(ranks_of: str) -> None:
    """Both ways of ranking (one number a document, or a sort by each key) agree with a
    plain sort, with many ties on count and rank."""
    rng = random.Random(ranks_of)
    n = 3000
    if ranks_of == "days":
        ranks = [rng.choice((0, 738000, 738001, 739500)) for _ in range(n)]
    elif ranks_of == "wide":  # past what one number a document holds
        ranks = [rng.choice((1, 1 << 40)) for _ in range(n)]
    else:
        ranks = [rng.choice((0, -5, 738000)) for _ in range(n)]
    keys = [f"cmd/{rng.randrange(10**6):06d}_{d}.md".encode() for d in range(n)]
    key_order = np.empty(n, dtype=np.int64)
    key_order[sorted(range(n), key=keys.__getitem__)] = np.arange(n)
    for size in (term_tops.TOP, term_tops.TOP + 1, 700, n):
        docs = sorted(rng.sample(range(n), size))
        counts = [rng.choice((1, 1, 1, 2, 3, 7)) for _ in docs]
        got = ranked_top(
            np.array(docs), np.array(counts, dtype=np.float64), np.array(ranks), key_order
        )
        assert list(zip(got[0].tolist(), got[1].tolist())) == expected(docs, counts, ranks, keys)


def written(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "tops.bin"
    path.write_bytes(data)
    return path


def opened(path: Path, doc_count: int) -> TermTops | None:
    return TermTops.read(os.open(path, os.O_RDONLY), doc_count)


def test_a_damaged_cut_or_foreign_table_or_entry_is_not_used(tmp_path: Path) -> None:
    """A flip anywhere: the table is refused as it is opened, or the entry it falls in
    as it is read; the other entries read as written."""
    rng = random.Random(3)
    top = term_tops.TOP
    entries = {
        k: (np.array(sorted(rng.sample(range(5000), top))), np.array([9] * top))
        for k in (3, 17, 40)
    }
    data = table(((k, *entries[k]) for k in sorted(entries)), 5000)
    tops = opened(written(tmp_path, data), 5000)
    assert tops is not None
    for k, (docs, counts) in entries.items():
        best = tops.best(k)
        assert best is not None and best.docs.tolist() == docs.tolist()
        assert best.counts.tolist() == counts.tolist() and not best.complete
    assert tops.best(4) is None and tops.best(41) is None  # not kept
    for at in rng.sample(range(len(data)), 300) + list(range(40)):
        flipped = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
        found = opened(written(tmp_path, flipped), 5000)
        if found is None:
            continue
        for k, (docs, _) in entries.items():
            best = found.best(k)
            assert best is None or best.docs.tolist() == docs.tolist(), (at, k)
        assert sum(found.best(k) is None for k in entries) == 1, at
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        assert opened(written(tmp_path, data[:cut]), 5000) is None
    assert opened(written(tmp_path, data), 5001) is None  # another segment's
    assert opened(written(tmp_path, table(iter(()), 0)), 0) is not None  # no term kept


def check_segments(settings: Settings) -> int:
    """Each live segment's term tops are its postings' first by the search's order, for
    every term of at least MIN_DOCS; how many segments there are."""

    def check(segment: Segment) -> None:
        tops = segment.term_tops()
        assert tops is not None
        lex = segment.lexicon("content")
        keys = segment.bytes_column("sort_key")
        all_keys = [keys.value(d) for d in range(segment.doc_count_all)]
        ranks = list(segment.int_column("day"))
        for k in range(len(lex.doc_counts)):
            best = tops.best(k)
            if lex.doc_counts[k] < max(term_tops.MIN_DOCS, term_tops.TOP):
                assert best is None
                continue
            docs, weights = segment.frequencies("content", k)
            want = expected(docs.tolist(), [int(w) for w in weights], ranks, all_keys)
            assert best is not None
            assert list(zip(best.docs.tolist(), best.counts.tolist())) == want

    return checked_segments(settings, "trove-ttops-", check)


@pytest.mark.parametrize("parallel", [False, True])
def test_each_segment_written_has_its_term_tops_and_a_segment_gone_takes_them(
    tmp_path: Path, monkeypatch, few, parallel: bool
) -> None:
    text = "proxy proxy proxy timeout timeout the the the the\n"
    segments_come_and_go(tmp_path, monkeypatch, parallel, check_segments, text)


def test_a_reconcile_writes_anew_the_term_tops_a_segment_lost_and_leaves_the_others(
    tmp_path: Path, few
) -> None:
    lost_files_are_written_anew(tmp_path, "trove-ttops-*", check_segments)


def test_a_search_for_a_word_answers_the_same_with_term_tops_missing_or_damaged(
    tmp_path: Path, few
) -> None:
    """Against the postings and the texts: words of one term (once or twice in it) and
    words inside several, the tops cut short by deleted reports and by a command filter,
    in two segments."""
    settings = sample(tmp_path)
    Syncer(settings, get_source("reports")).reconcile(full=True)
    reports = sorted((tmp_path / "reports").rglob("*.md"))
    for i, path in enumerate(reports[:8]):
        more = "proxy " * (i % 3 + 1) + "timeouts analysis " + "zqxzqx " * (i % 2 + 1) + "\n"
        path.write_text(path.read_text(encoding="utf-8") + more, encoding="utf-8")
    Syncer(settings, get_source("reports")).reconcile()  # a second segment
    for path in reports[8:12]:
        path.unlink()
    Syncer(settings, get_source("reports")).reconcile()  # reports deleted in the first
    commands = sorted(p.name for p in (tmp_path / "reports").iterdir())
    # "zqx": only the term "zqxzqx" holds it, twice.
    words = ("proxy", "timeout", "analysis", "the", "meeting", "PROXY", "roxy", "speech", "zqx")

    filters = (None, *commands[:2])

    def per_segment(plan: CountPlan) -> list[list[tuple[str, int]]]:
        """Each segment's best by itself (the search's ranking of one segment's counts):
        what the tops must give, deleted reports and filters included."""
        ctx = QueryContext.from_settings(settings)
        try:
            with ctx.indexes.snapshot("reports") as snapshot:
                assert snapshot is not None
                return [
                    [(r.key, r.occurrences) for r in best([(s, s.occurrences(w.lower(), c, n))], n)]
                    for s in segments_of(snapshot, plan)
                    for w in words
                    for c in filters
                    for n in (1, 3, 10)
                ]
        finally:
            ctx.close()

    counted = answers(settings, words, filters, "postings")
    assert answers(settings, words, filters, "texts") == counted
    assert answers(settings, words, filters) == counted
    assert per_segment("cost") == per_segment("postings")
    found = sorted((settings.index_dir / "reports").glob("trove-ttops-*"))
    assert len(found) == 2
    for path in found:
        data = bytearray(path.read_bytes())
        data[-5] ^= 1  # the last term's entry
        path.write_bytes(bytes(data))
    assert answers(settings, words, filters) == counted
    for path in found:
        data = bytearray(path.read_bytes())
        data[20] ^= 1  # the table's terms
        path.write_bytes(bytes(data))
    assert answers(settings, words, filters) == counted
    for path in found:
        path.unlink()
    assert answers(settings, words, filters) == counted


@pytest.mark.parametrize("seed", range(16))
def test_a_word_inside_several_terms_is_settled_by_their_tops_as_counting_every_text_does(
    tmp_path: Path, few, seed: int
) -> None:
    """Random reports of a word alone, twice inside one term, inside a rare term, on
    few days: many ties on count and date at the edge of what the tops can settle (half
    the seeds with most reports at the most of each term, so that reports left out of
    the tops hold the word as often as the most a report left out can)."""
    rng = random.Random(seed)
    alone, twice = ((0, 1, 1, 2, 3), (0, 0, 1, 2)) if seed % 2 else ((2, 3, 3, 3), (1, 2, 2))
    for i in range(40):
        words = (
            ["kiwi"] * rng.choice(alone)
            + ["kiwikiwi"] * rng.choice(twice)
            + ["kiwis"] * (rng.random() < 0.05)
            + ["apple"] * rng.randint(0, 2)
        )
        rng.shuffle(words)
        day = rng.choice(("20250101", "20250102", "20250103"))
        path = tmp_path / "reports" / f"c{i % 2}" / f"r{i:02d}_{day}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(" ".join(words) + "\n", encoding="utf-8")
    raw = {"sources": {"reports": str(tmp_path / "reports")}, "index": {"dir": str(tmp_path / "i")}}
    settings = settings_from_dict(raw, base=tmp_path)
    Syncer(settings, get_source("reports")).reconcile(full=True)
    ctx = QueryContext.from_settings(settings)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            for n in (1, 2, 3, 5, 10):
                for command in (None, "c0"):
                    got, want = (
                        [
                            [
                                (r.key, r.occurrences)
                                for r in best([(s, s.occurrences("kiwi", command, n))], n)
                            ]
                            for s in segments_of(snapshot, plan)
                        ]
                        for plan in ("cost", "postings")
                    )
                    assert got == want, (n, command)
    finally:
        ctx.close()
