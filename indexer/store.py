"""One Whoosh index per collection, kept in line with the files by ``reconcile``.

Files are canonical; an index is derived and can always be rebuilt. Each index holds
two kinds of documents:
- content documents (``kind=doc``), keyed by the source's ``key`` and tagged with the
  ``file`` they came from and a hash of their own fields (``dhash``);
- one file record per file (``kind=file``) with the ``(mtime_ns, size, hash)`` that
  reconcile compares with the disk, and why it was skipped if it was.
Both kinds change in the same commit, so the bookkeeping never disagrees with the content.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import pickle
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whoosh import writing
from whoosh.fields import ID, STORED, Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC, Index
from whoosh.query import Term
from whoosh.reading import SegmentReader

from indexer.codec import TroveCodec
from indexer.config import Settings
from indexer.sources.base import FileData, Source, is_hidden

log = logging.getLogger(__name__)

MARKER = "trove-index.json"
MARKER_FORMAT = "trove-index"
LOCK_FILE = "writer.lock"
FILE_KEY_PREFIX = "//file/"  # no relative path starts with "//"
# Above this many documents to add, build with two processes.
PARALLEL_THRESHOLD = 2000
# A batch of more paths than this is applied by a reconcile of the whole collection.
APPLY_MAX_PATHS = 500
# Compaction (see Syncer.compact) re-indexes the documents of small segments into one
# when a tier (the power of ten of a segment's live documents) holds this many segments...
COMPACT_FACTOR = 4
# ...for tiers up to this one (segments under 100 live documents), so that it stays cheap.
COMPACT_MAX_TIER = 1
# A watcher batch compacts at once, rather than when the daemon is idle, from this many
# segments on.
BUSY_MAX_SEGMENTS = 16

Progress = Callable[[int, int], None]


class StoreError(Exception):
    """The index folder cannot be used."""


class ForeignIndexError(StoreError):
    """The index path holds something that is not a trove index; trove will not touch it."""


def unusable_index_folder(path: Path, exc: OSError) -> StoreError:
    """The error for an index folder that cannot be made or written."""
    return StoreError(
        f"cannot use the index folder {path}: {exc.strerror or exc}; "
        "set [index] dir to a folder trove may write"
    )


class IndexLockedError(StoreError):
    """Another writer held the index for longer than we were willing to wait."""


class Interrupted(StoreError):
    """The work was abandoned on request (a stopping daemon); nothing was committed."""


class SkipFile(Exception):
    """A file of the collection that cannot be indexed; the message says why."""


@dataclass
class Summary:
    """What one reconcile or batch did to one collection."""

    collection: str
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    missing_root: bool = False
    # Why the collection could not be brought in line (nothing was changed), if it could not.
    error: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "added": self.added,
            "updated": self.updated,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "skipped": dict(self.skipped),
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            "missing_root": self.missing_root,
            "error": self.error,
        }


@dataclass(frozen=True)
class FileState:
    mtime_ns: int
    size: int
    hash: str = ""
    skipped: str = ""


# --------------------------------------------------------------------------- walking


@dataclass
class Listing:
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)


def valid_name(rel: str) -> bool:
    """Whether a path is text: a name that is not valid UTF-8 cannot be indexed as one."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _inside(root_real: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


def walk(root: Path, source: Source) -> Listing:
    """Every file of the collection under ``root`` with its (mtime_ns, size).

    Symlinks are followed only while they stay inside the root; a folder is entered once
    (symlink loops end there). Files that are not regular files are left out. A root that
    exists but cannot be listed (permissions) raises StoreError: an empty listing would
    delete every document of the collection.
    """
    listing = Listing()
    root_real = os.path.realpath(root)
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root)
    except OSError:
        return listing
    seen_dirs.add((st.st_dev, st.st_ino))
    stack: list[tuple[tuple[str, ...], str]] = [((), str(root))]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue  # gone meanwhile: a root that is gone holds no files
        except OSError as exc:
            if not prefix:
                raise StoreError(
                    f"cannot list {folder}: {exc.strerror}; the index is left as it was"
                ) from exc
            listing.skipped[f"unreadable folder: {exc.strerror}"] += 1
            continue
        for entry in entries:
            if is_hidden(entry.name):
                continue
            parts = (*prefix, entry.name)
            if not valid_name(entry.name):
                if entry.is_dir() or source.wants_file(parts):
                    listing.skipped["name is not valid UTF-8"] += 1
                continue
            try:
                is_link = entry.is_symlink()
                if is_link and not _inside(root_real, entry.path):
                    if entry.is_dir() or source.wants_file(parts):
                        listing.skipped["symlink pointing outside the root"] += 1
                    continue
                if entry.is_dir():
                    if not source.wants_dir(parts):
                        continue
                    st = entry.stat()
                    if (st.st_dev, st.st_ino) in seen_dirs:
                        listing.skipped["folder seen before (a symlink loop or a second link)"] += 1
                        continue
                    seen_dirs.add((st.st_dev, st.st_ino))
                    stack.append((parts, entry.path))
                    continue
                if not source.wants_file(parts):
                    continue
                st = entry.stat()
            except FileNotFoundError:
                if entry.is_symlink():
                    listing.skipped["broken symlink"] += 1
                continue
            except OSError as exc:
                listing.skipped[f"cannot stat: {exc.strerror}"] += 1
                continue
            if not stat.S_ISREG(st.st_mode):
                listing.skipped["not a regular file"] += 1
                continue
            listing.files["/".join(parts)] = (st.st_mtime_ns, st.st_size)
    return listing


def regular_file_stat(path: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a regular file; None for anything else or nothing there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


def read_file(root: Path, rel: str, max_bytes: int) -> FileData:
    """Read one file of a collection, safely: never outside the root, never blocking."""
    path = os.path.join(root, rel)
    if not _inside(os.path.realpath(root), path):
        raise SkipFile("symlink pointing outside the root")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SkipFile(f"unreadable: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile("not a regular file")
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise SkipFile(f"unreadable: {exc.strerror}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file")
    return FileData(
        rel=rel,
        data=data,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        truncated=st.st_size > len(data),
    )


# --------------------------------------------------------------------------- the index


def full_schema(source: Source) -> Schema:
    schema = source.schema()
    schema.add("key", ID(stored=True, unique=True))
    schema.add("kind", ID(stored=True))
    schema.add("file", ID(stored=True))
    schema.add("dhash", STORED())
    schema.add("fstate", STORED())
    return schema


def _tier(segment: Any) -> int:
    return len(str(max(segment.doc_count(), 1))) - 1


def _compaction_victims(segments: list[Any]) -> list[Any]:
    """The segments whose documents compaction re-indexes: every tier up to the highest one
    (at most COMPACT_MAX_TIER) holding COMPACT_FACTOR segments, and small segments that are
    mostly deleted documents."""
    live = [s for s in segments if s.doc_count() > 0]
    tiers = Counter(_tier(s) for s in live)
    top = max(
        (t for t, n in tiers.items() if n >= COMPACT_FACTOR and t <= COMPACT_MAX_TIER), default=-1
    )
    return [
        s
        for s in live
        if _tier(s) <= top
        or (_tier(s) <= COMPACT_MAX_TIER and s.deleted_count() > s.doc_count())
    ]


def _needs_compaction(segments: list[Any]) -> bool:
    victims = _compaction_victims(segments)
    return (
        len(victims) > 1
        or any(s.deleted_count() for s in victims)
        or any(s.doc_count() == 0 for s in segments)
    )


def _drop_dead_segments(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge function (``commit(mergetype=...)``): keep the segments that still
    hold a live document, merge nothing. Whoosh's default would merge the five smallest
    segments by ``add_reader``, which looks up every term through the segment's hash table
    (50-200 ms per 4 KB report, about ten times the cost of indexing it again), and it never
    drops a segment whose documents are all deleted (a deleted folder's), though every
    query still pays a lookup in it."""
    return [s for s in segments if s.doc_count() > 0]


def doc_hash(doc: dict[str, Any]) -> str:
    return hashlib.blake2b(pickle.dumps(sorted(doc.items()), protocol=4), digest_size=16).hexdigest()


class CollectionIndex:
    """The index folder of one collection: opening, versioning, locking, writing."""

    def __init__(self, index_dir: Path, source: Source, lock_timeout_s: float = 30.0) -> None:
        self.source = source
        self.path = Path(index_dir) / source.name
        self.lock_timeout_s = lock_timeout_s
        self._index: Index | None = None

    # ---- the marker that says "this folder is a trove index of this version"

    @property
    def marker_path(self) -> Path:
        return self.path / MARKER

    def read_marker(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.marker_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"format": MARKER_FORMAT, "damaged": True}
        return data if isinstance(data, dict) else {"format": MARKER_FORMAT, "damaged": True}

    def _write_marker(self, **extra: Any) -> None:
        marker = {
            "format": MARKER_FORMAT,
            "collection": self.source.name,
            "schema_version": self.source.schema_version,
        }
        old = self.read_marker() or {}
        if "last_update" in old:
            marker["last_update"] = old["last_update"]
        marker.update(extra)
        tmp = self.path / (MARKER + ".tmp")
        tmp.write_text(json.dumps(marker, indent=1), encoding="utf-8")
        os.replace(tmp, self.marker_path)

    def check_ours(self) -> dict[str, Any] | None:
        """The marker if the folder is ours (None if it does not exist or is empty)."""
        if not self.path.exists():
            return None
        if not self.path.is_dir():
            raise ForeignIndexError(
                f"{self.path} exists and is not a folder; trove will not touch it. "
                "Move it away or set [index] dir to another folder."
            )
        marker = self.read_marker()
        if marker is None:
            if any(name != LOCK_FILE for name in os.listdir(self.path)):
                raise ForeignIndexError(
                    f"{self.path} holds files but is not a trove index (no {MARKER}); "
                    "trove will not delete them. Move it away or set [index] dir to another folder."
                )
            return None
        if marker.get("format") != MARKER_FORMAT or marker.get("collection", self.source.name) != (
            self.source.name
        ):
            raise ForeignIndexError(
                f"{self.path} is not a trove index of '{self.source.name}' ({MARKER} says otherwise); "
                "trove will not touch it."
            )
        return marker

    def exists(self) -> bool:
        marker = self.check_ours()
        return marker is not None and not marker.get("damaged")

    # ---- opening

    def storage(self) -> FileStorage:
        return FileStorage(str(self.path), supports_mmap=False)

    def open_for_reading(self) -> Index | None:
        """The index, or None if it was never built (or must be rebuilt)."""
        marker = self.check_ours()
        if marker is None or marker.get("schema_version") != self.source.schema_version:
            return None
        try:
            return self.storage().open_index(schema=full_schema(self.source))
        except Exception:  # noqa: BLE001 (missing or damaged: the writer rebuilds it)
            return None

    def _open_for_writing(self) -> tuple[Index, bool]:
        """The index to write to, and whether it was (re)created empty. Holds the lock."""
        marker = self.check_ours()
        storage = self.storage()
        if marker is not None and not marker.get("damaged"):
            if marker.get("schema_version") == self.source.schema_version:
                try:
                    return storage.open_index(schema=full_schema(self.source)), False
                except Exception as exc:  # noqa: BLE001 (any damage: ours, so rebuilt)
                    log.warning("%s: index unreadable (%s); rebuilding it", self.path, exc)
            else:
                log.warning(
                    "%s: index schema version %s, this trove needs %s; rebuilding it",
                    self.path,
                    marker.get("schema_version"),
                    self.source.schema_version,
                )
        self.path.mkdir(parents=True, exist_ok=True)
        # The marker first: a process killed between the two leaves a folder that is
        # recognisably ours (and rebuilt), never one that looks foreign.
        self._write_marker(last_update=None)
        index = self._create(storage)
        return index, True

    def _create(self, storage: FileStorage) -> Index:
        """A new empty index whose generation is above any the folder had before.

        Readers tell a changed index by its generation; a rebuilt index that restarted
        at 0 could look unchanged to a reader of the old one.
        """
        try:
            old_generation = TOC._latest_generation(storage, "MAIN")
        except Exception:  # noqa: BLE001 (no readable old index: start at 0)
            old_generation = -1
        schema = full_schema(self.source)
        index = storage.create_index(schema)
        if old_generation >= 0:
            TOC(schema, [], old_generation + 1).write(storage, "MAIN")
            with contextlib.suppress(OSError):
                storage.delete_file(TOC._filename("MAIN", 0))
        return index

    # ---- the one writer

    @contextmanager
    def locked(self, timeout_s: float | None = None) -> Iterator[None]:
        """Hold this collection's writer lock; wait at most ``timeout_s`` for it."""
        self.check_ours()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise unusable_index_folder(self.path, exc) from exc
        timeout = self.lock_timeout_s if timeout_s is None else timeout_s
        try:
            deadline = time.monotonic() + timeout
            delay = 0.01
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() >= deadline:
                        raise IndexLockedError(
                            f"the {self.source.name} index is being written by "
                            f"{_holder(self.path / LOCK_FILE)}; waited {timeout:g} s. "
                            "Try again when it has finished."
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
            holder = json.dumps({"pid": os.getpid(), "argv": _argv(), "since": time.time()})
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the flock

    # ---- reading the bookkeeping

    def indexed_state(self, index: Index) -> tuple[dict[str, FileState], dict[str, dict[str, str]]]:
        """File records, and per file the {key: dhash} of its documents."""
        files: dict[str, FileState] = {}
        docs: dict[str, dict[str, str]] = {}
        with index.reader() as reader:
            for fields in reader.all_stored_fields():
                if fields.get("kind") == "file":
                    files[fields["file"]] = FileState(*fields["fstate"])
                else:
                    docs.setdefault(fields["file"], {})[fields["key"]] = fields.get("dhash", "")
        return files, docs

    def state_of(self, index: Index, rels: Iterable[str]) -> tuple[dict[str, FileState], dict[str, dict[str, str]]]:
        """Like :meth:`indexed_state`, for a few files only."""
        files: dict[str, FileState] = {}
        docs: dict[str, dict[str, str]] = {}
        with index.searcher() as searcher:
            for rel in rels:
                for fields in searcher.documents(file=rel):
                    if fields.get("kind") == "file":
                        files[rel] = FileState(*fields["fstate"])
                    else:
                        docs.setdefault(rel, {})[fields["key"]] = fields.get("dhash", "")
        return files, docs

    def doc_count(self) -> int:
        index = self.open_for_reading()
        if index is None:
            return 0
        with index.searcher() as searcher:
            # Not doc_frequency: it still counts deleted documents until a merge.
            return sum(1 for _ in searcher.docs_for_query(Term("kind", "doc")))


def _argv() -> str:
    try:
        with open(f"/proc/{os.getpid()}/cmdline", "rb") as f:
            return f.read().replace(b"\x00", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def _holder(lock_path: Path) -> str:
    try:
        info = json.loads(lock_path.read_text())
        return f"pid {info['pid']} ({info.get('argv', '?')})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


# --------------------------------------------------------------------------- syncing


@dataclass
class _Plan:
    delete_keys: set[str] = field(default_factory=set)
    add_docs: list[dict[str, Any]] = field(default_factory=list)
    # New file records (None: the file is gone), and the files that have one now.
    file_records: dict[str, FileState | None] = field(default_factory=dict)
    indexed_files: set[str] = field(default_factory=set)


class Syncer:
    """Brings one collection's index in line with its files: all of them, or some."""

    def __init__(self, settings: Settings, source: Source) -> None:
        self.settings = settings
        self.source = source
        self.root = settings.source_root(source.name)
        self.index = CollectionIndex(settings.index_dir, source, settings.index.lock_timeout_s)
        self.max_bytes = int(settings.index.max_file_mb * 1024 * 1024)
        # Big commits fork writer processes; a process with other threads must not fork.
        self.parallel = True
        # Set by a stopping daemon: long work is abandoned before its commit.
        self.cancel: threading.Event | None = None

    def reconcile(self, full: bool = False, progress: Progress | None = None) -> Summary:
        """Walk the whole source and apply only the difference (``full``: rebuild)."""
        started = time.perf_counter()
        summary = Summary(self.source.name)
        with self.index.locked():
            index, created = self.index._open_for_writing()
            self._reconcile_locked(index, summary, full=full, created=created, progress=progress)
        summary.seconds = time.perf_counter() - started
        return summary

    def _reconcile_locked(
        self,
        index: Index,
        summary: Summary,
        full: bool = False,
        created: bool = False,
        progress: Progress | None = None,
    ) -> None:
        if self.root is None or not self.root.is_dir():
            summary.missing_root = True
            listing = Listing()
        else:
            listing = walk(self.root, self.source)
        summary.skipped.update(listing.skipped)
        if full or created:
            files: dict[str, FileState] = {}
            docs: dict[str, dict[str, str]] = {}
        else:
            files, docs = self.index.indexed_state(index)
        # The state read is complete here: a key it does not hold is not in the index.
        indexed_keys = {key for keys in docs.values() for key in keys}
        plan = self._plan(
            listing.files, files, docs, set(files) | set(docs), summary, progress, indexed_keys
        )
        self._commit(index, plan, summary, clear=full and not created)
        self._compact_locked(index.refresh())

    def apply(self, rels: Iterable[str]) -> Summary:
        """Re-check some paths (files or folders, relative to the root) after a change."""
        started = time.perf_counter()
        summary = Summary(self.source.name)
        with self.index.locked():
            index, created = self.index._open_for_writing()
            if created:
                self._reconcile_locked(index, summary, created=True)
                summary.seconds = time.perf_counter() - started
                return summary
            on_disk: dict[str, tuple[int, int]] = {}
            check: set[str] = set()
            root_ok = self.root is not None and self.root.is_dir()
            for rel in set(rels):
                if not valid_name(rel):
                    summary.skipped["name is not valid UTF-8"] += 1
                    continue
                check.add(rel)
                if not root_ok:
                    continue
                path = os.path.join(self.root, rel) if rel else str(self.root)
                if os.path.isdir(path):
                    sub = walk(Path(path), _Under(self.source, rel))
                    for sub_rel, st in sub.files.items():
                        full_rel = f"{rel}/{sub_rel}" if rel else sub_rel
                        on_disk[full_rel] = st
                        check.add(full_rel)
                    summary.skipped.update(sub.skipped)
                else:
                    parts = tuple(rel.split("/"))
                    wanted = self.source.wants_file(parts) and all(
                        self.source.wants_dir(parts[:i]) for i in range(1, len(parts))
                    )
                    found = regular_file_stat(path) if wanted else None
                    if found is not None:
                        on_disk[rel] = found
            if len(check) > APPLY_MAX_PATHS:
                # A burst: one pass over the whole index costs less than a lookup a path.
                self._reconcile_locked(index, summary)
            else:
                # A folder that went away: everything indexed under it goes too.
                files, docs = self._state_under(index, check, on_disk)
                plan = self._plan(on_disk, files, docs, set(files) | set(docs), summary, None)
                self._commit(index, plan, summary, clear=False)
                index = index.refresh()
                if len(index._segments()) >= BUSY_MAX_SEGMENTS:
                    # Changes keep coming (no idle moment to compact in): compact now,
                    # after this batch's commit, so that the batch is visible already.
                    self._compact_locked(index)
        summary.seconds = time.perf_counter() - started
        return summary

    def compact(self, wait: bool = False) -> bool:
        """Re-index the documents of small segments into one, so that they drop away, and
        drop segments whose documents are all deleted; True if it did anything.

        Files are canonical, so re-reading them is the cheap way to merge (see
        ``_drop_dead_segments``); a file that changed meanwhile is simply brought up to
        date. Cheap when there is nothing to do. Unless ``wait``, gives up at once when
        another writer holds the index."""
        index = self.index.open_for_reading()
        if index is None or not _needs_compaction(index._segments()):
            return False
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.index.locked(None if wait else 0))
            except IndexLockedError:
                if wait:
                    raise
                return False
            index, created = self.index._open_for_writing()
            if created:
                return False
            self._compact_locked(index)
        return True

    def _compact_locked(self, index: Index) -> None:
        segments = index._segments()
        if not _needs_compaction(segments):
            return
        rels: set[str] = set()
        for segment in _compaction_victims(segments):
            with SegmentReader(index.storage, index.schema, segment) as reader:
                rels.update(fields["file"] for fields in reader.all_stored_fields())
        on_disk = {
            rel: found
            for rel in rels
            if self.root and (found := regular_file_stat(os.path.join(self.root, rel)))
        }
        files, docs = self.index.state_of(index, rels)
        summary = Summary(self.source.name)
        plan = self._plan(on_disk, files, docs, set(files) | set(docs), summary, None, force=True)
        self._commit(index, plan, summary, clear=False, marker=summary.changed, always=True)
        if summary.changed:
            log.info("%s: compacting also found %s", self.source.name, summary.as_dict())

    def _state_under(
        self, index: Index, rels: set[str], on_disk: dict[str, tuple[int, int]]
    ) -> tuple[dict[str, FileState], dict[str, dict[str, str]]]:
        exact, docs = self.index.state_of(index, rels)
        # A path that is neither a file on disk nor an indexed file may be a folder that
        # changed or went away: what the index holds below it is looked up by prefix.
        folders = [r for r in rels if r not in on_disk and r not in exact]
        if folders:
            below: set[str] = set()
            with index.reader() as reader:
                for folder in folders:
                    prefix = f"{folder}/" if folder else ""
                    below.update(reader.expand_prefix("file", prefix))
            below = {t.decode() if isinstance(t, bytes) else t for t in below} - set(exact)
            more_files, more_docs = self.index.state_of(index, below)
            exact.update(more_files)
            for k, v in more_docs.items():
                docs.setdefault(k, {}).update(v)
        return exact, docs

    def _plan(
        self,
        on_disk: dict[str, tuple[int, int]],
        files: dict[str, FileState],
        docs: dict[str, dict[str, str]],
        known: set[str],
        summary: Summary,
        progress: Progress | None,
        indexed_keys: set[str] | None = None,
        force: bool = False,
    ) -> _Plan:
        """What to write. ``files`` and ``docs`` are what the index holds for the paths
        concerned; ``indexed_keys``, when known, every key the index holds, so that a new
        document's key is not looked up for deletion. ``force`` rewrites every document
        of the files (compaction) and counts only real changes in ``summary``."""
        plan = _Plan(indexed_files=set(files))
        produced: set[str] = set()
        planned: set[str] = set()
        old_keys: dict[str, set[str]] = {rel: set(keys) for rel, keys in docs.items()}
        total = len(on_disk)
        for done, (rel, (mtime_ns, size)) in enumerate(sorted(on_disk.items()), 1):
            if done % 200 == 0 or done == total:
                self._check_cancel()
                if progress:
                    progress(done, total)
            state = files.get(rel)
            # A file unreadable before is tried again: permissions change no mtime.
            if (
                state is not None
                and (state.mtime_ns, state.size) == (mtime_ns, size)
                and not state.skipped.startswith("unreadable")
                and not force
            ):
                if state.skipped:
                    summary.skipped[state.skipped] += 1
                else:
                    summary.unchanged += len(docs.get(rel, ()))
                produced.update(docs.get(rel, ()))
                continue
            try:
                data = read_file(self.root, rel, self.max_bytes)
            except FileNotFoundError:
                summary.skipped["vanished before it could be read"] += 1
                continue
            except SkipFile as exc:
                summary.skipped[str(exc)] += 1
                plan.file_records[rel] = FileState(mtime_ns, size, "", str(exc))
                plan.delete_keys.update(old_keys.get(rel, ()))
                continue
            new_state = FileState(data.mtime_ns, data.size, data.hash)
            if state is not None and state.hash == data.hash and not state.skipped and not force:
                summary.unchanged += len(docs.get(rel, ()))
                produced.update(docs.get(rel, ()))
                plan.file_records[rel] = new_state
                continue
            if data.truncated:
                summary.warnings.append(
                    f"{rel}: {data.size / 1048576:.1f} MB; indexed its first "
                    f"{len(data.data) / 1048576:.1f} MB"
                )
            try:
                parsed = self.source.parse(data)
            except Exception as exc:  # a bad file must never stop the others
                log.exception("%s: cannot parse", rel)
                reason = f"cannot parse: {type(exc).__name__}"
                summary.skipped[reason] += 1
                plan.file_records[rel] = FileState(mtime_ns, size, data.hash, reason)
                plan.delete_keys.update(old_keys.get(rel, ()))
                continue
            summary.warnings.extend(f"{rel}: {w}" for w in parsed.warnings)
            if data.replaced:
                summary.warnings.append(f"{rel}: bytes that are not UTF-8 were replaced")
            if not data.data:
                summary.warnings.append(f"{rel}: empty file")
            before = docs.get(rel, {})
            for doc in parsed.documents:
                doc = {k: v for k, v in doc.items()}
                doc["dhash"] = doc_hash(doc)
                key = doc["key"]
                produced.add(key)
                unchanged = before.get(key) == doc["dhash"]
                if unchanged and not force:
                    summary.unchanged += 1
                    continue
                doc.update(kind="doc", file=rel)
                if key in planned or (key in before and not unchanged):
                    summary.updated += 1
                elif key not in before:
                    summary.added += 1
                planned.add(key)
                # A key from another file (an ELOG entry that moved) must not stay twice.
                if indexed_keys is None or key in indexed_keys:
                    plan.delete_keys.add(key)
                plan.add_docs.append(doc)
            plan.file_records[rel] = new_state
        for rel in known - set(on_disk):
            plan.file_records[rel] = None
        # Documents whose file no longer yields them (an id may have moved files).
        for rel in known | set(plan.file_records):
            for key in old_keys.get(rel, ()):
                if key not in produced:
                    plan.delete_keys.add(key)
                    summary.deleted += 1
        return plan

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Interrupted(f"{self.source.name}: stopped before committing")

    def _commit(
        self,
        index: Index,
        plan: _Plan,
        summary: Summary,
        clear: bool,
        marker: bool = True,
        always: bool = False,
    ) -> None:
        """Write the plan in one commit (``always``: even an empty one, which drops the
        segments whose documents are all deleted) and note the update in the marker."""
        if not (plan.delete_keys or plan.add_docs or plan.file_records or clear or always):
            return
        cpus = os.cpu_count() or 1
        big = self.parallel and cpus > 1 and len(plan.add_docs) >= PARALLEL_THRESHOLD
        codec = TroveCodec()
        # Whoosh hands every posting its document's field length, looked up one by one
        # (17% of a build); only BM25 uses them (and then only as a bound for skipping).
        codec.length_stats = self.source.scored
        if big:
            # Each worker sorts its postings in memory up to limitmb (Whoosh's estimate; RSS
            # is ~1.6x that) before spilling pickled runs to disk, and spilling costs ~40% of
            # build time. 2 GB shared by the workers keeps 10k 4 KB reports in memory; it
            # lives in the forked workers only and is freed when they exit.
            procs = min(4, cpus)
            writer = index.writer(
                procs=procs, limitmb=2048 // procs, multisegment=True, codec=codec
            )
        else:
            # This runs in long-lived processes (the daemon): keep the pool small.
            writer = index.writer(limitmb=128, codec=codec)
        try:
            # File records to replace: only files that have one now.
            old_records = plan.file_records.keys() & plan.indexed_files
            if not clear and (plan.delete_keys or old_records):
                # One reader for every delete: without it Whoosh opens a reader over all
                # segments per term (~1 ms a segment), 26 ms a delete at 24 segments.
                with writer.searcher() as searcher:
                    for key in plan.delete_keys:
                        writer.delete_by_term("key", key, searcher=searcher)
                    for rel in old_records:
                        writer.delete_by_term("key", FILE_KEY_PREFIX + rel, searcher=searcher)
            for n, doc in enumerate(plan.add_docs, 1):
                if n % 500 == 0:
                    self._check_cancel()
                writer.add_document(**doc)
            for rel, state in plan.file_records.items():
                if state is not None:
                    writer.add_document(
                        key=FILE_KEY_PREFIX + rel,
                        kind="file",
                        file=rel,
                        fstate=(state.mtime_ns, state.size, state.hash, state.skipped),
                    )
            if clear:
                writer.commit(mergetype=writing.CLEAR)
            else:
                writer.commit(mergetype=_drop_dead_segments)
        except BaseException:
            writer.cancel()
            raise
        if marker:
            self.index._write_marker(last_update=time.time())


class _Under:
    """A source seen from one of its sub-folders (for re-walking a changed folder)."""

    def __init__(self, source: Source, rel: str) -> None:
        self._source = source
        self._prefix = tuple(p for p in rel.split("/") if p)

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        full = self._prefix + parts
        return all(self._source.wants_dir(full[:i]) for i in range(1, len(full) + 1))

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        full = self._prefix + parts
        return self._source.wants_file(full) and all(
            self._source.wants_dir(full[:i]) for i in range(1, len(full))
        )
