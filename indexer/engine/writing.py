"""The write protocol: what the store (indexer/store.py) asks of an engine's index of one
collection, as the collection's single writer.

The store decides what changes (it walks the files and plans); the engine keeps the
documents and, beside them, the bookkeeping reconcile compares with the disk: a record per
file, and per document the file it came from and the hash of its fields. Both change in
one commit, so the bookkeeping never disagrees with the documents.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from indexer.engine.base import Reader, ReadTarget
from indexer.engine.fields import Field


@dataclass(frozen=True)
class FileState:
    """A file as last indexed: what reconcile compares with the disk, and why the file was
    skipped if it was."""

    mtime_ns: int
    size: int
    hash: str = ""
    skipped: str = ""


@dataclass(frozen=True)
class Document:
    """A document to add: the source's fields (``key`` among them), the file it came from,
    and the hash of its fields."""

    fields: dict[str, Any]
    file: str
    dhash: str


@dataclass
class CommitPlan:
    """What one commit changes."""

    delete_keys: set[str] = field(default_factory=set)
    # A list, or documents read as the commit takes them (a build's).
    add_docs: Iterable[Document] = field(default_factory=list)
    # New file records (None: the file is gone), and the files that have one now.
    file_records: dict[str, FileState | None] = field(default_factory=dict)
    indexed_files: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class SegmentStats:
    """One segment of an index, as compaction sees it."""

    id: str
    live: int  # documents not deleted (file records included)
    deleted: int


# File records by path, and per file the {key: dhash} of its documents.
Bookkeeping = tuple[dict[str, FileState], dict[str, dict[str, str]]]


@dataclass
class FileStats:
    """What reconcile compares with a walk, read without the stored fields: each file
    record's ``(mtime_ns, size)``, the files recorded as skipped, and how many documents
    (file records not counted) are live."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    documents: int = 0


class Index(Protocol):
    """One collection's index as of one commit, opened by its writer."""

    @property
    def native(self) -> Any:
        """The engine's own object for this index (what the engine's read side opens)."""
        ...

    def refresh(self) -> Index:
        """The index as of its latest commit."""
        ...

    def bookkeeping(self) -> Bookkeeping:
        """Every file record, and every document's key and hash by file."""
        ...

    def bookkeeping_of(self, files: Iterable[str]) -> Bookkeeping:
        """Like :meth:`bookkeeping`, for these files only."""
        ...

    def file_stats(self) -> FileStats:
        """Every file record's stat, fast: a no-change reconcile reads only this. Raises
        if it cannot be read whole (a damaged index)."""
        ...

    def files_holding(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """The files of the documents of each of these keys (a key absent: not there)."""
        ...

    def files_under(self, folders: Iterable[str]) -> set[str]:
        """The files indexed (with a record or documents) below any of these folders
        ("" is the root)."""
        ...

    def doc_count(self) -> int:
        """How many documents (not file records) are live."""
        ...

    def segments(self) -> list[SegmentStats]:
        """The index's segments."""
        ...

    def files_in(self, segments: Collection[str]) -> set[str]:
        """The files of the live documents and records of these segments (by id)."""
        ...

    def verify(self) -> None:
        """Read every segment's stored fields, term dictionaries and file stats; raises if
        a file is missing, cut short or unreadable, or the file stats disagree with the
        file records (a damaged index)."""
        ...

    def repair_derived(self) -> int:
        """Write anew the data derived from each segment (its fragment tops,
        indexer/engine/fragments.py, and token sequences, indexer/engine/sequences.py)
        that is missing or damaged, from its columns; how many files it wrote."""
        ...

    def commit(
        self, plan: CommitPlan, *, clear: bool, parallel: bool, check_cancel: Callable[[], None]
    ) -> None:
        """Apply the plan in one commit: delete the documents of ``delete_keys``, add
        ``add_docs``, replace the records of the files in ``file_records``. ``clear``
        drops every document first; ``parallel`` lets the engine build with worker
        processes (a big build in a process without threads). ``check_cancel`` is called
        now and then while adding and raises to abandon the commit, which then leaves
        the index as it was. Segments without a live document are dropped."""
        ...


class Engine(Protocol):
    """A search engine trove can keep its indexes in."""

    name: str
    # False for an engine that keeps no index and reads the files on each change (the
    # plain-scan reference engine): nothing to build, wait for or heal.
    keeps_index: bool

    def open(self, path: Path, fields: Collection[Field], scored: bool) -> Index:
        """The index in ``path`` of a collection with these fields; raises if there is
        none or it cannot be read. ``scored``: the collection is ranked by BM25."""
        ...

    def reader(self, target: ReadTarget) -> Reader:
        """The query side's reader of a collection (its index, or its files)."""
        ...

    def create(self, path: Path, fields: Collection[Field], scored: bool) -> Index:
        """A new empty index in ``path`` (an existing folder), in place of any there; a
        reader of the old one sees it as a new commit."""
        ...
