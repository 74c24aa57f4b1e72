"""search_reports' related tier in arrays gives what it gave a report at a time: the
postings as arrays are the blocks' postings, and BM25 over stems, the live reports' sizes
and the best n are those of the plain computation (dicts over the postings, every report
sorted), over a generated corpus in two segments with deleted reports."""

from __future__ import annotations

import math
import random
import sys
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexer.config import Settings, settings_from_dict
from indexer.engine.whoosh import frequencies as kept_frequencies
from indexer.engine.whoosh.frequencies import KeptFrequencies
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext
from query.forgiving import FEW_WORDS, STOP_WORDS, content_weights, content_words, is_cjk
from query.reports import ReportSegment, search_reports, segments_of
from query.reports import tiers as report_tiers
from query.reports.ranking import at_least_nth, best_related

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from gen_corpus import generate  # bench/ is not a package: its folder is on the path

# ------------------------------------------------------------- the plain computation


def plain_stats(segments: list[ReportSegment]) -> report_tiers.Stats:
    """The live reports and their mean text size, a report at a time."""
    sizes = count = 0
    for s in segments:
        live = s.segment.docs_with("kind", ["doc"])
        sizes += sum(map(s.segment.bytes_column("text").size, live))
        count += len(live)
    return report_tiers.Stats(count, sizes / count if count else 1.0)


def plain_frequencies(
    s: ReportSegment, word: str, command: str | None, families: report_tiers.Families
) -> dict[int, float]:
    """{live report: occurrences of the word or its stem family}, from the blocks."""
    if is_cjk(word):
        return s.occurrences(word, command)
    within = None if command is None else s.command_docs(command)
    acc: dict[int, float] = {}
    for k in families.of(s, word):
        for ids, weights, _ in s.postings(k, within):
            for d, w in zip(ids, weights, strict=False):
                acc[d] = acc.get(d, 0.0) + w
    return {
        d: w for d, w in acc.items() if d not in s.deleted and (within is None or d in set(within))
    }


Plain = dict[int, tuple[int, float, float]]  # report: (words held, BM25, occurrences)


def plain_related(
    segments: list[ReportSegment], query: str, command: str | None, st: report_tiers.Stats
) -> list[Plain]:
    """Per segment, {report: (words held, BM25, occurrences)}: a word's BM25 added to a
    report's in the order of the query's words."""
    families = report_tiers.Families()
    qwords = content_words(query)
    weights = content_weights(query)
    per_word = [[plain_frequencies(s, w, command, families) for s in segments] for w in qwords]
    dfs = [sum(map(len, freqs)) for freqs in per_word]
    k1, b = report_tiers.K1, report_tiers.B
    out = []
    for i, s in enumerate(segments):
        size = s.segment.bytes_column("text").size
        found: Plain = {}
        for freqs, df, w in zip(per_word, dfs, qwords, strict=True):
            gain = weights[w] * math.log(1 + (st.reports - df + 0.5) / (df + 0.5)) * (k1 + 1)
            for d, tf in freqs[i].items():
                norm = k1 * (1 - b) + k1 * b / st.mean_size * size(d)
                m, score, occurrences = found.get(d, (0, 0.0, 0.0))
                found[d] = (m + 1, score + gain * tf / (tf + norm), occurrences + tf)
        out.append(found)
    return out


def plain_best(
    segments: list[ReportSegment], found: list[Plain], n: int, words: int
) -> list[tuple[str, int]]:
    """(key, occurrences) of the n best: every report sorted by words held (a query of
    few words), BM25, day and key."""
    strict = words <= FEW_WORDS
    rows = []
    for s, per in zip(segments, found, strict=True):
        for d, (m, score, occurrences) in per.items():
            key = s.segment.bytes_column("sort_key").value(d).decode("utf-8")
            rows.append(((-m if strict else 0, -score, -s.day_ranks()[d], key), int(occurrences)))
    rows.sort()
    return [(order[-1], occurrences) for order, occurrences in rows[:n]]


# ------------------------------------------------------------------------ the corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """bench/gen_corpus.py's reports, indexed in two commits (two segments), then some
    deleted and some rewritten (deleted reports in both segments)."""
    root = tmp_path_factory.mktemp("related")
    generate(root, reports=400, commands=0, conversations=0, seed=5)
    settings = settings_from_dict(
        {"sources": {"reports": str(root / "reports")}, "index": {"dir": str(root / "index")}},
        base=root,
    )
    files = sorted((root / "reports").rglob("*.md"))
    held = {p: p.read_bytes() for p in files[::2]}
    for p in held:
        p.unlink()
    Syncer(settings, get_source("reports")).reconcile()
    for p, data in held.items():
        p.write_bytes(data)
    Syncer(settings, get_source("reports")).reconcile()
    for p in files[::37]:
        p.unlink()
    for p in files[5::41]:
        if p.exists():
            p.write_text(p.read_text(encoding="utf-8") + "\nfailed again: proxies failing.\n")
    Syncer(settings, get_source("reports")).reconcile()
    return settings


def questions(ctx: QueryContext, count: int, seed: int) -> list[str]:
    """Questions of 1 to 7 indexed words, some inflected, with stop words and CJK."""
    rng = random.Random(seed)
    with ctx.indexes.snapshot("reports") as snapshot:
        assert snapshot is not None
        words = sorted(
            {
                t
                for s, _ in snapshot.segments()
                for t in s.lexicon("content").terms()
                if t.isalpha() and len(t) >= 3 and t not in STOP_WORDS
            }
        )
    cjk = [w for w in words if is_cjk(w)]
    latin = [w for w in words if not is_cjk(w)]
    common = ["failed", "proxy", "timeout", "token", "decode", "error"]
    out = []
    for _ in range(count):
        picked = [
            rng.choice(latin if rng.random() < 0.7 else common) for _ in range(rng.randint(1, 7))
        ]
        picked = [w + rng.choice(["", "s", "ing", "ed"]) for w in picked]
        if cjk and rng.random() < 0.15:
            picked.append("".join(rng.sample(cjk, min(2, len(cjk)))))
        if rng.random() < 0.2:
            picked.append(picked[0])  # a word said twice weighs twice
        out.append("why does the " + " and ".join(picked) + " fail")
    return out


def as_plain(found: list[report_tiers.Related]) -> list[Plain]:
    return [
        {
            int(d): (int(m), float(score), float(occurrences))
            for d, m, score, occurrences in zip(
                r.docs, r.matched, r.score, r.occurrences, strict=True
            )
        }
        for r in found
    ]


# ---------------------------------------------------------------------- the tier


@pytest.mark.parametrize("engine", ["whoosh", "scan"])
def test_the_related_tier_in_arrays_is_the_plain_computation(corpus: Settings, engine: str) -> None:
    ctx = QueryContext.from_settings(corpus, engine)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            segments = segments_of(snapshot, ctx.plan, ctx.costs)
            if engine == "whoosh":
                assert len(segments) >= 2 and sum(len(s.deleted) for s in segments) >= 10
            sizes = report_tiers.report_sizes(ctx.memo, segments)
            st = report_tiers.stats(segments, sizes)
            assert st == plain_stats(segments)
            commands = sorted(
                {p.parent.name for p in (corpus.source_root("reports") or Path()).rglob("*.md")}
            )
            compared = 0
            for i, q in enumerate(questions(ctx, 120, seed=3)):
                command = commands[i % len(commands)] if i % 4 == 3 else None
                families = report_tiers.Families()
                qwords = content_words(q)
                fast = report_tiers.related(
                    segments, sizes, qwords, command, st, families, content_weights(q)
                )
                plain = plain_related(segments, q, command, st)
                assert as_plain(fast) == plain, q
                for n in (1, 3, 10, 40):
                    got = best_related(list(zip(segments, fast, strict=True)), n, len(qwords))
                    expected = plain_best(segments, plain, n, len(qwords))
                    assert [(r.key, r.occurrences) for r in got] == expected, (q, n)
                compared += any(plain)
            assert compared > 100
    finally:
        ctx.close()


def test_a_search_answered_by_the_related_tier_ranks_as_the_plain_computation(
    corpus: Settings,
) -> None:
    ctx = QueryContext.from_settings(corpus)
    try:
        related = 0
        for q in questions(ctx, 40, seed=8):
            answer = search_reports(ctx, q, max_results=10)
            if not answer.results or answer.results[0].match != "related":
                continue
            with ctx.indexes.snapshot("reports") as snapshot:
                assert snapshot is not None
                segments = segments_of(snapshot, ctx.plan, ctx.costs)
                plain = plain_related(segments, q, None, plain_stats(segments))
                expected = plain_best(segments, plain, 10, len(content_words(q)))
            assert [(h.id, h.count) for h in answer.results] == expected, q
            related += 1
        assert related >= 10
    finally:
        ctx.close()


def test_the_n_best_by_level_then_score_are_those_of_a_sort() -> None:
    rng = random.Random(4)
    for _ in range(400):
        size = rng.randint(0, 60)
        levels = np.array([rng.randint(0, 3) for _ in range(size)], dtype=np.int64)
        scores = np.array([rng.choice([0.5, 1.0, 1.5, rng.random()]) for _ in range(size)])
        n = rng.randint(1, 20)
        got = sorted(at_least_nth(levels, scores, n).tolist())
        order = sorted(range(size), key=lambda i: (-levels[i], -scores[i]))
        if size <= n:
            assert got == list(range(size))
            continue
        nth = (levels[order[n - 1]], scores[order[n - 1]])
        assert got == sorted(i for i in range(size) if (levels[i], scores[i]) >= nth)


# ------------------------------------------------------------- postings as arrays


@pytest.mark.parametrize("engine", ["whoosh", "scan"])
def test_a_terms_arrays_are_its_blocks_postings(
    corpus: Settings, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every term kept from 3 postings on, 2,000 postings in all: most are read, kept,
    # dropped and read again.
    monkeypatch.setattr(kept_frequencies, "KEPT_FROM", 3)
    monkeypatch.setattr(kept_frequencies, "KEPT_MAX", 2000)

    # The blocks TroveCodec writes are read without pickle (tests/test_frequencies.py).
    def no_pickle(*args: Any) -> Any:
        raise AssertionError("a block read through pickle")

    monkeypatch.setattr(kept_frequencies, "loads", no_pickle)
    monkeypatch.setattr(kept_frequencies, "Unpickler", no_pickle)
    ctx = QueryContext.from_settings(corpus, engine)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            for segment, _ in snapshot.segments():
                for field in ("content", "command"):
                    terms = range(len(segment.lexicon(field)))
                    for k in chain(terms, reversed(terms), terms):
                        ids, weights = segment.frequencies(field, k)
                        expected: list[tuple[int, float]] = []
                        for block in segment.blocks(field, k):
                            expected.extend(zip(block.ids, block.weights, strict=False))
                        assert ids.dtype == np.int64 and weights.dtype == np.float64
                        assert list(zip(ids.tolist(), weights.tolist())) == expected, (field, k)
    finally:
        ctx.close()


def test_kept_arrays_stay_within_the_budget_and_each_caller_gets_its_own() -> None:
    reads: Counter[int] = Counter()

    def reader(term: int, n: int) -> Any:
        def read() -> tuple[Any, Any]:
            reads[term] += 1
            return np.arange(n, dtype=np.int64), np.ones(n, dtype=np.float64)

        return read

    kept = KeptFrequencies(kept_from=10, kept_max=100)
    for term, n in [(1, 5), (1, 5), (2, 40), (2, 40), (3, 50), (2, 40), (4, 30), (3, 50), (5, 101)]:
        ids, weights = kept.get("content", term, n, reader(term, n))
        assert ids.tolist() == list(range(n)) and weights.tolist() == [1.0] * n
        ids[:] = -1  # the caller's own
    # 1: too few postings to keep; 5: more than all the budget; 3 dropped for 4 (40 + 50
    # + 30 > 100: the least recently asked for goes), then read again.
    assert reads == {1: 2, 2: 1, 3: 2, 4: 1, 5: 1}
