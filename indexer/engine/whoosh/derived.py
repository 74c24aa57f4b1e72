"""Data derived from a segment and kept beside it, on the Whoosh engine's side: one file
per segment and kind (fragment tops, token sequences, CJK pairs, term tops, suffixes in
order), named after the segment, written whole and renamed into place, and removed when
the segment goes. Each kind is a cache: a search that finds its file missing or damaged
goes without it, and a reconcile writes it anew (WhooshIndex.repair_derived)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

TOPS_PREFIX = "trove-tops-"  # + a segment's id + ".bin": its fragment tops
SEQUENCES_PREFIX = "trove-seqs-"  # + a segment's id + ".bin": its token sequences
PAIRS_PREFIX = "trove-pairs-"  # + a segment's id + ".bin": its CJK pairs
TERM_TOPS_PREFIX = "trove-ttops-"  # + a segment's id + ".bin": its term tops
SUFFIXES_PREFIX = "trove-sufx-"  # + a segment's id + ".bin": its suffixes in order
_PREFIXES = (TOPS_PREFIX, SEQUENCES_PREFIX, PAIRS_PREFIX, TERM_TOPS_PREFIX, SUFFIXES_PREFIX)


def derived_name(prefix: str, segment_id: str) -> str:
    return f"{prefix}{segment_id}.bin"


def read_derived(folder: str, name: str) -> bytes | None:
    """A segment's file of derived data, whole; None if it cannot be read."""
    try:
        with open(os.path.join(folder, name), "rb") as f:
            return f.read()
    except OSError:
        return None


def open_derived(folder: str, name: str, read: Callable[[int], T | None]) -> T | None:
    """``read(fd)`` of a segment's file of derived data opened for reading (what it
    returns keeps the file open, or closes it); None if it cannot be opened or read."""
    try:
        return read(os.open(os.path.join(folder, name), os.O_RDONLY))
    except OSError:
        return None


def write_derived(folder: str, name: str, data: bytes) -> None:
    """Writes a segment's file of derived data: a whole new file, renamed into place."""
    path = os.path.join(folder, name)
    with open(path + ".tmp", "wb") as out:
        out.write(data)
    os.replace(path + ".tmp", path)


def clean_derived(storage: Any, segments: Iterable[Any]) -> None:
    """Removes the derived files of segments that are no longer in the index (Whoosh's
    clean_files leaves files it does not name), and any left half-written."""
    ids = [s.segment_id() for s in segments]
    live = {derived_name(prefix, i) for prefix in _PREFIXES for i in ids}
    for name in list(storage):
        if name.startswith(_PREFIXES) and name not in live:
            with contextlib.suppress(OSError):
                storage.delete_file(name)
