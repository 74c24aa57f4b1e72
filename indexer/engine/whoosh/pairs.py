"""Each segment's CJK pairs (indexer/engine/pairs.py) on the Whoosh engine's side: counted
as the writer adds documents, in the column that keeps the fragment tops (the reports'
lower-cased text), and written beside the segment (derived.py)."""

from __future__ import annotations

from typing import Any

from indexer.engine.pairs import CjkPairs, PairCounter
from indexer.engine.whoosh.derived import PAIRS_PREFIX, derived_name, read_derived
from indexer.engine.whoosh.tops import tops_column


def pairs_file_name(segment_id: str) -> str:
    return derived_name(PAIRS_PREFIX, segment_id)


def read_pairs(folder: str, segment_id: str, doc_count: int) -> CjkPairs | None:
    """A segment of ``doc_count`` documents' CJK pairs; None if there are none, or they
    are damaged."""
    data = read_derived(folder, pairs_file_name(segment_id))
    return None if data is None else CjkPairs.parse(data, doc_count)


class PairsTaker:
    """Counts a segment's documents' CJK pairs in the schema's column with fragment tops
    (fields.py), by its name."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.counter = PairCounter()

    @classmethod
    def of(cls, schema: Any) -> PairsTaker | None:
        """For the schema's column with fragment tops; None if it has none."""
        found = tops_column(schema)
        return None if found is None else cls(found[0])

    def add(self, docnum: int, fields: dict[str, Any]) -> None:
        self.counter.add(docnum, fields.get(self.column) or b"")
