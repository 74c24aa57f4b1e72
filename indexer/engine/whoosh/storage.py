"""A collection's Whoosh index on disk: opening it, creating it anew, and writing it
durably.

Indexes are opened without mmap: with it, each open searcher held a copy of the segment
files in memory (about 97 MB of RSS per searcher on a 50 MB index).

Whoosh never fsyncs. Here every file it writes is fsynced as it is closed, and the folder
after each rename: a commit writes its segment files, then its table of contents (a
temporary file renamed into place), so the segment files reach the disk before the table
of contents that names them, and the rename before the commit returns.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from whoosh.fields import Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC, Index

from indexer.engine.fields import Field
from indexer.engine.whoosh.schema import whoosh_schema

INDEX_NAME = "MAIN"  # Whoosh's default


class TroveStorage(FileStorage):
    """A folder of Whoosh index files, read without mmap, whose index always opens with
    the schema trove builds: also where Whoosh opens it without one (its parallel
    writers), which would read the schema pickled in the table of contents, naming the
    classes of whichever trove wrote it."""

    def __init__(self, path: Path, schema: Schema) -> None:
        super().__init__(str(path), supports_mmap=False)
        self.trove_schema = schema

    def open_index(
        self, indexname: str = INDEX_NAME, schema: Schema | None = None, indexclass: Any = None
    ) -> Index:
        return super().open_index(indexname, schema or self.trove_schema, indexclass)

    def create_file(self, name: str, excl: bool = False, mode: str = "wb", **kwargs: Any) -> Any:
        """A new file that is flushed and fsynced when Whoosh closes it."""
        structfile = super().create_file(name, excl=excl, mode=mode, **kwargs)
        structfile.onclose = _synced(structfile.onclose)
        return structfile

    def rename_file(self, oldname: str, newname: str, safe: bool = False) -> None:
        super().rename_file(oldname, newname, safe=safe)
        fsync_folder(self.folder)


def _synced(then: Callable[[Any], None] | None) -> Callable[[Any], None]:
    def on_close(structfile: Any) -> None:
        if then is not None:
            then(structfile)
        raw = structfile.file
        if hasattr(raw, "fileno"):
            raw.flush()
            os.fsync(raw.fileno())

    return on_close


def fsync_folder(folder: str | Path) -> None:
    """Make a folder's entries (files created, renamed or deleted in it) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def abandon(structfile: Any) -> None:
    """Close a Whoosh file given up (its writer failed): without syncing it (its
    ``onclose``), and quietly: flushing its buffer may fail too (a full disk), and the
    file is closed all the same."""
    if not structfile.is_closed:
        structfile.is_closed = True
        with contextlib.suppress(Exception):
            structfile.file.close()


def open_index(path: Path, fields: Iterable[Field]) -> Index:
    """The Whoosh index in ``path`` of a collection with these fields; raises if there is
    none or it cannot be read."""
    return TroveStorage(path, whoosh_schema(fields)).open_index()


def create_index(path: Path, fields: Iterable[Field]) -> Index:
    """A new empty index in ``path`` (an existing folder), in place of any there, whose
    generation is above any the folder had before.

    Readers tell a changed index by its generation; a rebuilt index that restarted at 0
    could look unchanged to a reader of the old one.
    """
    schema = whoosh_schema(fields)
    storage = TroveStorage(path, schema)
    try:
        old_generation = TOC._latest_generation(storage, INDEX_NAME)
    except Exception:  # noqa: BLE001 (no readable old index: start at 0)
        old_generation = -1
    index = storage.create_index(schema)
    if old_generation >= 0:
        TOC(schema, [], old_generation + 1).write(storage, INDEX_NAME)
        with contextlib.suppress(OSError):
            storage.delete_file(TOC._filename(INDEX_NAME, 0))
    return index
