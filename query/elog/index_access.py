"""Every read of the ELOG index: the one module of query.elog that talks to the engine
(indexer/engine/base.py).

``open_index`` gives an ``ElogIndex``, which answers in plain values: global document
numbers, stored fields, terms as strings, column values, and the top hits of a ranked
query (text_query.py's ``Ranked`` description).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from indexer.engine.base import Ranked, Segment, Snapshot
from indexer.engine.lexicon import Lexicon
from query.context import QueryContext
from query.elog.logbook import COLLECTION
from query.errors import TroveError
from query.freshness import Freshness, of_snapshot, stale_files


@dataclass(frozen=True)
class IndexSegment:
    """One segment of the index: its id, the global number of its first document, and
    its documents' stored fields by their number in the segment."""

    id: str
    base: int
    stored_fields: Callable[[int], Mapping[str, Any]]


class RankedHit(NamedTuple):
    docnum: int
    fields: Mapping[str, Any]
    score: float


class IntColumn:
    """A sortable number field's values, by global document number."""

    def __init__(self, columns: list[Sequence[int]], bases: list[int]) -> None:
        self._columns = columns
        self._bases = bases

    def __getitem__(self, docnum: int) -> int:
        i = bisect.bisect_right(self._bases, docnum) - 1
        return self._columns[i][docnum - self._bases[i]]


class ElogIndex:
    """The ELOG index as of one commit (valid inside ``open_index``)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._segments: list[tuple[Segment, int]] = list(snapshot.segments())
        self.version: object = snapshot.stamp
        """Equal for two indexes only if they hold the same documents (what data derived
        from the index is kept under)."""

    def docs_with_term(self, field: str, text: str) -> list[int]:
        """The live documents holding the term, ascending."""
        docs: list[int] = []
        for segment, base in self._segments:
            docs += sorted(base + d for d in segment.docs_with(field, (text,)))
        return docs

    def docs_with_number(self, field: str, value: int) -> list[int]:
        """The live documents whose number field holds ``value``, ascending."""
        return self.docs_with_term(field, str(value))

    def lexicons(self, field: str) -> list[tuple[str, Lexicon]]:
        """Each segment's id and the field's terms in it."""
        return [(segment.id, segment.lexicon(field)) for segment, _ in self._segments]

    def has_term(self, field: str, text: str) -> bool:
        """Whether any document, deleted ones included, holds the term."""
        return any(segment.lexicon(field).equal_to(text) for segment, _ in self._segments)

    def field_terms(self, field: str) -> Iterator[str]:
        """The field's terms, in order, each once."""
        merged = heapq.merge(*(segment.lexicon(field) for segment, _ in self._segments))
        last = None
        for term in merged:
            if term != last:
                yield term
                last = term

    def int_column(self, name: str) -> IntColumn:
        """A sortable number field's values by document number."""
        return IntColumn(
            [segment.int_column(name) for segment, _ in self._segments],
            [base for _, base in self._segments],
        )

    def stored_fields(self, docnum: int) -> Mapping[str, Any]:
        return self._snapshot.stored(docnum)

    def document(self, key: str) -> Mapping[str, Any] | None:
        """The stored fields of the live document with this ``key`` (None: there is none)."""
        for segment, _ in self._segments:
            found = segment.docs_with("key", (key,))
            if found:
                return segment.stored(min(found))
        return None

    def segments(self) -> list[IndexSegment]:
        return [IndexSegment(s.id, base, s.stored) for s, base in self._segments]

    def ranked_search(self, query: Ranked, limit: int, allowed: set[int] | None) -> list[RankedHit]:
        """The ``limit`` best live documents by BM25F (among ``allowed`` if given), best
        first."""
        return [
            RankedHit(hit.doc, self._snapshot.stored(hit.doc), hit.score)
            for hit in self._snapshot.top(query, limit, allowed)
        ]

    def matching_docs(self, query: Ranked) -> set[int]:
        """Every live document the query matches."""
        return self._snapshot.matching(query)

    def freshness(self, ctx: QueryContext) -> Freshness:
        """How current this commit is (an answer's ``freshness``)."""
        return of_snapshot(ctx.watcher, COLLECTION, self._snapshot)

    def stale_files(self, root: Path, found: Iterable[Mapping[str, Any]]) -> set[str]:
        """The logbook files, of those the entries ``found`` (stored fields) came from,
        that changed after this commit."""
        return stale_files(self._snapshot, root, (fields["file"] for fields in found))


@contextmanager
def open_index(ctx: QueryContext) -> Iterator[ElogIndex]:
    """The ELOG index; one never built is built first."""
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        if snapshot is None:
            raise TroveError("DIRECTORY_NOT_FOUND", "the ELOG index could not be built")
        yield ElogIndex(snapshot)
