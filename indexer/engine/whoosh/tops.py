"""Each segment's fragment tops (indexer/engine/fragments.py) on the Whoosh engine's side:
counted as the writer adds documents, written beside the segment, named after it, and
removed when it goes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

from indexer.engine.fragments import FragmentCounter, FragmentTops

TOPS_PREFIX = "trove-tops-"  # + a segment's id + ".bin": its fragment tops


def tops_file_name(segment_id: str) -> str:
    return f"{TOPS_PREFIX}{segment_id}.bin"


def read_tops(folder: str, segment_id: str, doc_count: int) -> FragmentTops | None:
    """A segment of ``doc_count`` documents' tops; None if there are none, or they are
    damaged."""
    try:
        with open(os.path.join(folder, tops_file_name(segment_id)), "rb") as f:
            data = f.read()
    except OSError:
        return None
    return FragmentTops.parse(data, doc_count)


def write_tops(folder: str, segment_id: str, table: bytes) -> None:
    """Writes a segment's tops beside it: a whole new file, renamed into place."""
    path = os.path.join(folder, tops_file_name(segment_id))
    with open(path + ".tmp", "wb") as out:
        out.write(table)
    os.replace(path + ".tmp", path)


def clean_tops(storage: Any, segments: Iterable[Any]) -> None:
    """Removes the fragment tops of segments that are no longer in the index (Whoosh's
    clean_files leaves files it does not name)."""
    live = {tops_file_name(s.segment_id()) for s in segments}
    for name in list(storage):
        if name.startswith(TOPS_PREFIX) and name not in live:
            with contextlib.suppress(OSError):
                storage.delete_file(name)


class TopsCounter:
    """Counts a segment's documents for the fragment tops of the schema's column that
    keeps them (fields.py), by its field names."""

    def __init__(self, column: str, rank: str, key: str) -> None:
        self.column, self.rank, self.key = column, rank, key
        self.counter = FragmentCounter()

    @classmethod
    def of(cls, schema: Any) -> TopsCounter | None:
        """For the schema's column with fragment tops; None if it has none."""
        for name, field in schema.items():
            if (by := getattr(field, "trove_tops_by", None)) is not None:
                return cls(name, *by)
        return None

    def add(self, docnum: int, fields: dict[str, Any]) -> None:
        self.counter.add(
            docnum,
            fields.get(self.column) or b"",
            fields.get(self.rank) or 0,
            fields.get(self.key) or b"",
        )
