"""The plain-scan engine's one segment: documents analysed in memory, no index on disk.

Built from the documents a source makes of its files, each time they change; answers
every question of the engine protocol from plain Python structures, so that the searches
can be checked against an engine that shares none of Whoosh's code.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from indexer.engine.base import (
    AllOf,
    AnyOf,
    Block,
    Boosted,
    Frequencies,
    PhraseClause,
    Ranked,
    Scored,
    TermClause,
)
from indexer.engine.lexicon import Lexicon

BLOCK = 128  # postings per block, as Whoosh writes them
# BM25F's free parameters, as Whoosh's defaults.
B = 0.75
K1 = 1.2


@dataclass
class Posting:
    doc: int
    freq: int
    value: bytes | None = None
    positions: list[int] = field(default_factory=list)


@dataclass
class AnalysedDoc:
    """One document as the engine sees it: what it stores, its terms per field, the
    length of its scored fields, and its column values."""

    stored: dict[str, Any]
    # field -> term -> (frequency, value or None, positions)
    terms: dict[str, dict[str, tuple[int, bytes | None, list[int]]]]
    lengths: dict[str, int]
    columns: dict[str, Any]


class MemorySegment:
    """Every document of a collection, analysed; none deleted."""

    @property
    def block_size(self) -> int:
        return BLOCK

    def __init__(self, segment_id: str, docs: list[AnalysedDoc]) -> None:
        self.id = segment_id
        self.doc_count_all = len(docs)
        self.deleted: frozenset[int] = frozenset()
        self._docs = docs
        self._postings: dict[str, dict[str, list[Posting]]] = defaultdict(dict)
        self._lengths: dict[str, int] = defaultdict(int)
        for n, doc in enumerate(docs):
            for name, terms in doc.terms.items():
                postings = self._postings[name]
                for term, (freq, value, positions) in terms.items():
                    postings.setdefault(term, []).append(Posting(n, freq, value, positions))
            for name, length in doc.lengths.items():
                self._lengths[name] += length
        self._lexicons: dict[str, tuple[Lexicon, list[str]]] = {}

    def _lexicon(self, name: str) -> tuple[Lexicon, list[str]]:
        found = self._lexicons.get(name)
        if found is None:
            postings = self._postings.get(name, {})
            terms = sorted(postings)
            lex = Lexicon(terms, (len(postings[t]) for t in terms))
            found = self._lexicons[name] = (lex, terms)
        return found

    def lexicon(self, field: str) -> Lexicon:
        return self._lexicon(field)[0]

    def blocks(self, field: str, term: int, within: Sequence[int] | None = None) -> Iterator[Block]:
        postings = self._postings[field][self._lexicon(field)[1][term]]
        it = iter(postings)
        while chunk := list(islice(it, BLOCK)):
            values = [p.value or b"" for p in chunk] if chunk[0].value is not None else None
            yield Block(iter([p.doc for p in chunk]), [float(p.freq) for p in chunk], values)

    def frequencies(self, field: str, term: int) -> Frequencies:
        postings = self._postings[field][self._lexicon(field)[1][term]]
        return (
            np.array([p.doc for p in postings], dtype=np.int64),
            np.array([p.freq for p in postings], dtype=np.float64),
        )

    def docs_with(self, field: str, terms: Iterable[str]) -> set[int]:
        postings = self._postings.get(field, {})
        return {p.doc for t in terms for p in postings.get(t, ())}

    def bytes_column(self, name: str) -> _Column:
        return _Column([doc.columns.get(name, b"") for doc in self._docs])

    def int_column(self, name: str) -> Sequence[int]:
        return [doc.columns.get(name, 0) for doc in self._docs]

    def fragment_tops(self) -> None:
        return None  # counted in the texts: what the tops are checked against

    def term_tops(self) -> None:
        return None  # counted from the postings: what the tops are checked against

    def cjk_pairs(self) -> None:
        return None  # counted in the texts: what the pairs are checked against

    def token_sequences(self) -> None:
        return None  # counted from the postings or the texts: what the runs are checked against

    def stored(self, doc: int) -> Mapping[str, Any]:
        return self._docs[doc].stored

    def live_stored(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        return ((n, doc.stored) for n, doc in enumerate(self._docs))

    # ---- ranking: BM25F as the Whoosh engine computes it (Lucene's idf), over exact
    # field lengths

    def top(self, query: Ranked, limit: int, allowed: set[int] | None = None) -> list[Scored]:
        scores = self._scores(query)
        found = [Scored(d, s) for d, s in scores.items() if allowed is None or d in allowed]
        found.sort(key=lambda hit: (-hit.score, hit.doc))
        return found[:limit]

    def matching(self, query: Ranked) -> set[int]:
        return set(self._scores(query))

    def _scores(self, query: Ranked) -> dict[int, float]:
        if isinstance(query, TermClause):
            postings = self._postings.get(query.field, {}).get(query.text, [])
            return {p.doc: query.boost * self._bm25(query.field, postings, p) for p in postings}
        if isinstance(query, PhraseClause):
            return self._phrase(query)
        if isinstance(query, AnyOf):
            total: dict[int, float] = defaultdict(float)
            for clause in query.clauses:
                for d, s in self._scores(clause).items():
                    total[d] += s
            return dict(total)
        if isinstance(query, AllOf):
            parts = [self._scores(c) for c in query.clauses]
            if not parts:
                return {}
            common = set(parts[0]).intersection(*parts[1:])
            return {d: sum(p[d] for p in parts) for d in common}
        if isinstance(query, Boosted):
            required = self._scores(query.required)
            optional = self._scores(query.optional)
            return {d: s + optional.get(d, 0.0) for d, s in required.items()}
        raise TypeError(f"not a ranked query: {query!r}")

    def _bm25(self, name: str, postings: list[Posting], posting: Posting, tf: float = 0) -> float:
        n = self.doc_count_all
        df = len(postings)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))  # Lucene's, as the Whoosh engine
        avgfl = (self._lengths.get(name, 0) / n if n else 0) or 1
        fl = self._docs[posting.doc].lengths.get(name, 0)
        tf = tf or posting.freq
        return idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / avgfl)))

    def _phrase(self, query: PhraseClause) -> dict[int, float]:
        """Documents holding the words in a row; scored as the sum of each word's BM25
        with the phrase's frequency as its frequency."""
        table = self._postings.get(query.field, {})
        lists = [table.get(w, []) for w in query.words]
        if not lists or not all(lists):
            return {}
        by_doc = [{p.doc: p for p in ps} for ps in lists]
        scores: dict[int, float] = {}
        for d in set(by_doc[0]).intersection(*by_doc[1:]):
            starts = set(by_doc[0][d].positions)
            for i, postings in enumerate(by_doc[1:], 1):
                starts &= {pos - i for pos in postings[d].positions}
            if starts:
                tf = len(starts)
                scores[d] = query.boost * sum(
                    self._bm25(query.field, ps, byd[d], tf)
                    for ps, byd in zip(lists, by_doc, strict=True)
                )
        return scores


class _Column:
    def __init__(self, values: list[bytes]) -> None:
        self._values = values

    def value(self, doc: int) -> bytes:
        return self._values[doc]

    def size(self, doc: int) -> int:
        return len(self._values[doc])

    def sizes(self) -> Sequence[int]:
        return [len(v) for v in self._values]

    def total(self) -> int:
        return sum(map(len, self._values))

    def joined(self, first: int, stop: int) -> bytes:
        return b"".join(self._values[first:stop])
