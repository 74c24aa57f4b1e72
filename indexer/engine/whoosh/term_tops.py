"""Each segment's term tops (indexer/engine/term_tops.py) on the Whoosh engine's side:
made from the writer's postings as it ends the segment, or from the segment's own
postings (a table made anew), written beside the segment (derived.py), and read from the
file as searches ask (kept open, as the token sequences are)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.engine.term_tops import TermTops, keeps, kept, ranked_top, table
from indexer.engine.whoosh.derived import TERM_TOPS_PREFIX, derived_name, open_derived
from indexer.engine.whoosh.sequences import SequencesTaker
from indexer.engine.whoosh.tops import tops_column


def term_tops_file_name(segment_id: str) -> str:
    return derived_name(TERM_TOPS_PREFIX, segment_id)


def read_term_tops(folder: str, segment_id: str, doc_count: int) -> TermTops | None:
    """A segment of ``doc_count`` documents' term tops; None if there are none, or they
    are damaged."""
    return open_derived(
        folder, term_tops_file_name(segment_id), lambda fd: TermTops.read(fd, doc_count)
    )


class TermTopsTaker:
    """Takes what a segment's term tops rank by, as the writer adds documents: each
    document's rank and key (the columns the fragment tops rank by, fields.py), for the
    terms of the field with token sequences (the reports' content)."""

    def __init__(self, field: str, rank: str, key: str) -> None:
        self.field, self.rank, self.key = field, rank, key
        self._ranks: list[int] = []
        self._keys: list[bytes] = []

    @classmethod
    def of(cls, schema: Any) -> TermTopsTaker | None:
        """For the schema's field with token sequences, ranked by the columns of its
        fragment tops; None if it has not both."""
        tops = tops_column(schema)
        sequences = SequencesTaker.of(schema)
        return None if tops is None or sequences is None else cls(sequences.field, *tops[1])

    def add(self, docnum: int, fields: dict[str, Any]) -> None:
        """A document's rank and key (documents come in order, from 0; one skipped would
        rank last)."""
        missing = docnum - len(self._ranks)
        self._ranks.extend([0] * missing)
        self._keys.extend([b""] * missing)
        self._ranks.append(fields.get(self.rank) or 0)
        self._keys.append(fields.get(self.key) or b"")

    def table(self, postings: Iterable[tuple[int, Any, Any]] | None) -> bytes | None:
        """The table, from each term's number and its postings (document numbers and
        weights, ascending by term); None without postings (the writer's spilled)."""
        if postings is None:
            return None
        return table_of(postings, self._ranks, self._keys)


def table_of(postings: Iterable[tuple[int, Any, Any]], ranks: Any, keys: list[bytes]) -> bytes:
    """The term tops of a segment whose documents have these ranks and keys, from
    (term number, document numbers, weights) of its terms in order (those it keeps none
    of are passed over)."""
    rank = np.asarray(ranks, dtype=np.int64)
    key_order = np.empty(len(keys), dtype=np.int64)
    key_order[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))

    def tops() -> Iterator[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
        for k, ids, weights in postings:
            if not keeps(len(ids)):
                continue
            docs = np.asarray(ids, dtype=np.int64)
            yield (k, *ranked_top(docs, np.asarray(weights, dtype=np.float64), rank, key_order))

    return table(tops(), len(keys))


def segment_postings(segment: Any, field: str) -> Iterator[tuple[int, Any, Any]]:
    """(term number, document numbers, weights) of each term of ``field`` a segment keeps
    tops of, from its postings."""
    lex = segment.lexicon(field)
    for k in kept(lex.doc_counts):
        docs, weights = segment.frequencies(field, k)
        yield k, docs, weights
