"""Each segment's fragment tops (indexer/engine/fragments.py) on the Whoosh engine's side:
counted as the writer adds documents, written beside the segment (derived.py)."""

from __future__ import annotations

from typing import Any

from indexer.engine.fragments import FragmentCounter, FragmentTops
from indexer.engine.whoosh.derived import TOPS_PREFIX, derived_name, read_derived


def tops_file_name(segment_id: str) -> str:
    return derived_name(TOPS_PREFIX, segment_id)


def read_tops(folder: str, segment_id: str, doc_count: int) -> FragmentTops | None:
    """A segment of ``doc_count`` documents' tops; None if there are none, or they are
    damaged."""
    data = read_derived(folder, tops_file_name(segment_id))
    return None if data is None else FragmentTops.parse(data, doc_count)


def tops_column(schema: Any) -> tuple[str, tuple[str, str]] | None:
    """The schema's column with fragment tops, and the fields they rank by (rank, key);
    None if it has none (schema.py marks it, fields.py ``tops_by``)."""
    for name, field in schema.items():
        if (by := getattr(field, "trove_tops_by", None)) is not None:
            return name, by
    return None


class TopsCounter:
    """Counts a segment's documents for the fragment tops of the schema's column that
    keeps them (fields.py), by its field names."""

    def __init__(self, column: str, rank: str, key: str) -> None:
        self.column, self.rank, self.key = column, rank, key
        self.counter = FragmentCounter()

    @classmethod
    def of(cls, schema: Any) -> TopsCounter | None:
        """For the schema's column with fragment tops; None if it has none."""
        found = tops_column(schema)
        return None if found is None else cls(found[0], *found[1])

    def add(self, docnum: int, fields: dict[str, Any]) -> None:
        self.counter.add(
            docnum,
            fields.get(self.column) or b"",
            fields.get(self.rank) or 0,
            fields.get(self.key) or b"",
        )
