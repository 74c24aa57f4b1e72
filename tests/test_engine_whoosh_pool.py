"""TermPool: the postings a segment writer collects, grouped by term or as columns, handed
back term by term in document order, the same whichever way they were added."""

from __future__ import annotations

import random

import pytest

from indexer.engine.postings import DocPostings
from indexer.engine.whoosh import pool
from indexer.engine.whoosh.formats import NextTokens, TokensAnalyzer
from indexer.engine.whoosh.pool import TermPool
from indexer.sources import reports

Handed = list[tuple[str, bytes, list[tuple[int, float, bytes]]]]


def _handed_back(pool: TermPool) -> Handed:
    groups = pool.groups()
    assert groups is not None
    return [(name, text, postings.tuples()) for name, terms in groups for text, postings in terms]


def test_the_term_pool_hands_postings_added_out_of_order_back_in_order() -> None:
    """A document added after a later one (add_terms), and a merged segment's postings
    term by term after the documents pooled already (add): each term's postings come
    back in document order, as they do when added in order."""
    docs = {
        0: [(b"a", 1.0, b"x"), (b"b", 2.0, b"")],
        1: [(b"a", 1.0, b"yy")],
        2: [(b"b", 1.0, b"z"), (b"c", 3.0, b"")],
    }
    in_order, backwards, merged = (TermPool(None, None) for _ in range(3))
    for n in sorted(docs):
        in_order.add_terms("f", n, docs[n])
    for n in sorted(docs, reverse=True):
        backwards.add_terms("f", n, docs[n])
    merged.add_terms("f", 2, docs[2])
    for text in (b"a", b"b"):  # the merged segment's documents 0 and 1, term by term
        for n in (0, 1):
            for term, weight, value in docs[n]:
                if term == text:
                    merged.add(("f", term, n, weight, value))

    def handed_back(pool: TermPool) -> list[tuple[bytes, list[tuple[int, float, bytes]]]]:
        groups = pool.groups()
        assert groups is not None
        return [(text, postings.tuples()) for _, terms in groups for text, postings in terms]

    assert handed_back(in_order)[0] == (b"a", [(0, 1.0, b"x"), (1, 1.0, b"yy")])
    assert handed_back(backwards) == handed_back(in_order)
    assert handed_back(merged) == handed_back(in_order)


def _docs(pool: TermPool, seed: int, n: int) -> list[DocPostings]:
    """n documents of random words, as columns numbered by ``pool``."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)] + ["é", "数据", "a"]
    fmt, analyzer = NextTokens(), TokensAnalyzer(reports.tokens)
    docs = []
    for _ in range(n):
        text = " ".join(rng.choice(words[: rng.randrange(1, len(words))]) for _ in range(30))
        pooled = fmt.pool_columns(text, analyzer, rng.choice([1.0, 2.5]), pool.numbers("f"))
        assert pooled is not None
        docs.append(pooled[0])
    return docs


def _numbered(pool: TermPool, least: int) -> list[tuple[int, list[int], list[float]]]:
    numbered = pool.numbered("f", least)
    assert numbered is not None
    return [(k, list(ids), list(weights)) for k, ids, weights in numbered]


def _as_terms(pool: TermPool, doc: DocPostings) -> list[tuple[bytes, float, bytes]]:
    words = pool.numbers("f").words
    ends = [0, *doc.lengths.cumsum().tolist()]
    return [
        (words[k].encode("utf-8"), weight, doc.values[ends[i] : ends[i + 1]])
        for i, (k, weight) in enumerate(zip(doc.terms.tolist(), doc.weights.tolist()))
    ]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("batch", [1, 7, 1 << 20])
def test_columns_hand_back_the_postings_grouping_hands_back(
    seed: int, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "_BATCH_POSTINGS", batch)  # terms grouped a batch at a time
    columns, grouped = TermPool(None, None), TermPool(None, None)
    docs = _docs(columns, seed, 400)
    for n, doc in enumerate(docs):
        columns.add_columns("f", n, doc)
        grouped.add_terms("f", n, _as_terms(columns, doc))
    assert columns.currentsize == grouped.currentsize  # segments end where they did
    assert columns.terms("f") == grouped.terms("f")
    for least in (0, 50, 10_000):
        numbered = _numbered(columns, least)
        assert numbered == _numbered(grouped, least)
        assert all(len(ids) >= least for _, ids, _ in numbered)
    assert _handed_back(columns) == _handed_back(grouped)
    assert len(_handed_back(columns)) > 50


@pytest.mark.parametrize("seed", [1, 2])
def test_columns_taken_with_postings_added_another_way_hand_back_all_in_order(seed: int) -> None:
    """Columns after grouped postings, grouped postings after columns (a merged
    segment's), and a document before the last one the columns hold: each term's
    postings still come back in document order, as grouping alone hands them back."""
    reference = TermPool(None, None)
    docs = _docs(reference, seed, 60)
    for n, doc in enumerate(docs):
        reference.add_terms("f", n, _as_terms(reference, doc))
    expected = _handed_back(reference)

    def pool_of(order: list[int], columns_from: int, merged: list[int]) -> Handed:
        pool = TermPool(None, None)
        pool._numbers["f"] = reference.numbers("f")  # the documents' numbers
        for i, n in enumerate(order):
            if i < columns_from:
                pool.add_terms("f", n, _as_terms(reference, docs[n]))
            else:
                pool.add_columns("f", n, docs[n])
        by_term = sorted(
            (text, n, weight, value)
            for n in merged
            for text, weight, value in _as_terms(reference, docs[n])
        )
        for text, n, weight, value in by_term:  # a merged segment's: term by term
            pool.add(("f", text, n, weight, value))
        return _handed_back(pool)

    everything = list(range(60))
    assert pool_of(everything, 0, []) == expected
    assert pool_of(everything, 20, []) == expected  # grouped, then columns
    assert pool_of(everything[20:], 0, everything[:20]) == expected  # columns, then merged
    swapped = everything[:30] + [40] + everything[30:40] + everything[41:]
    assert pool_of(swapped, 0, []) == expected  # a document out of order
