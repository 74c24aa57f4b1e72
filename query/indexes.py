"""Open indexes for queries: one reader per collection, kept open, and the data searches
derive from them.

Opening an index costs tens of milliseconds; a reused one nothing. A reader shows another
process's commits on its next snapshot, so a long-running query process sees new commits
without restarting.

One cache policy for every search: data derived from an index is keyed by what it was
derived from, a segment's id (``PerSegment``) or a snapshot's stamp (``Derived``),
and dropped when that is gone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

from indexer.building import read_build
from indexer.collection import CollectionIndex
from indexer.config import Settings
from indexer.engine import get_engine
from indexer.engine.base import Reader, Snapshot
from indexer.engine.faults import release
from indexer.errors import DamagedIndex, IndexLockedError
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.errors import TroveError

T = TypeVar("T")

BUILD_POLL_S = 0.05


def source_folder(settings: Settings, name: str, label: str | None = None) -> Path:
    """A collection's folder (``label`` names it in messages: "ELOG logbook");
    DIRECTORY_NOT_FOUND if it is not configured or does not exist."""
    what = f"the {label or name} folder"
    root = settings.source_root(name)
    if root is None:
        raise TroveError(
            "DIRECTORY_NOT_FOUND", f"{what} is not configured; set [sources] {name} in the config"
        )
    if not root.is_dir():
        raise TroveError(
            "DIRECTORY_NOT_FOUND",
            f"{what} {root} does not exist; check [sources] {name} in the config",
        )
    return root


class Indexes:
    """The query side's handle on every collection's index (one per process)."""

    # How long a search waits for a running first build of its collection before it
    # answers INDEX_UNAVAILABLE with the build's progress.
    build_wait_s = 5.0

    def __init__(self, settings: Settings, engine: str = "whoosh") -> None:
        self.settings = settings
        # "whoosh": the indexes the indexer keeps; "scan": no index, every snapshot reads
        # the files (the reference engine the differential tests check the others with).
        self.engine = get_engine(engine)
        self._lock = threading.Lock()
        self._readers: dict[str, Reader] = {}

    def collection(self, name: str) -> CollectionIndex:
        return CollectionIndex(self.settings.index_dir, get_source(name), engine=self.engine)

    def _reader(self, name: str) -> Reader:
        with self._lock:
            reader = self._readers.get(name)
            if reader is None:
                reader = self._readers[name] = self._open_reader(name)
            return reader

    def _open_reader(self, name: str) -> Reader:
        max_bytes = int(self.settings.index.max_file_mb * 1024 * 1024)
        return self.collection(name).reader(self.settings.source_root(name), max_bytes)

    @contextmanager
    def snapshot(self, name: str, build: bool = False) -> Iterator[Snapshot | None]:
        """The collection's latest commit (None if its index was never built).

        With ``build``, an index never built is built first: a query process may be the
        first to need it (the scan engine keeps no index to build). The reader holds its
        lock while the snapshot is used: a Whoosh searcher is not safe to share between
        threads while it refreshes. While a first build of the collection runs, waits
        for it (``build_wait_s``), then answers INDEX_UNAVAILABLE: an index being built
        is not an empty one.
        """
        keeps = self.engine.keeps_index
        reader = self._reader(name)
        deadline = time.monotonic() + self.build_wait_s
        while True:
            if keeps:
                self._wait_for_build(name, deadline)
            try:
                with reader.snapshot() as snapshot:
                    if keeps and read_build(self.settings.index_dir / name) is not None:
                        continue  # a first build began meanwhile: its empty index is not an answer
                    if snapshot is not None or not build or not keeps:
                        yield snapshot
                        return
            except TroveError:
                raise
            except Exception as exc:
                self._heal(name, exc)
                raise
            break
        syncer = Syncer(self.settings, get_source(name))
        syncer.parallel = threading.active_count() == 1  # never fork a threaded process
        syncer.reconcile()
        with reader.snapshot() as snapshot:
            yield snapshot

    def _wait_for_build(self, name: str, deadline: float) -> None:
        path = self.settings.index_dir / name
        build = read_build(path)
        while build is not None and time.monotonic() < deadline:
            time.sleep(BUILD_POLL_S)
            build = read_build(path)
        if build is not None:
            raise TroveError(
                "INDEX_UNAVAILABLE",
                f"the {name} index is being built from its files ({build.detail()}); ask "
                "again in a little while (trove status shows the progress)",
            )

    def _heal(self, name: str, exc: Exception) -> None:
        """After a failure reading a collection's index: if the index is damaged, rebuild it
        from the files (or leave that to the writer that holds it) and answer
        INDEX_UNAVAILABLE, never a traceback; else return (the failure goes on)."""
        if not self.engine.keeps_index:
            return
        collection = self.collection(name)
        why = collection.damaged()
        if why is None and isinstance(exc, DamagedIndex):
            why = str(exc)  # what the index's own check does not read
        if why is None:
            return
        release(exc)
        with self._lock:  # the next snapshot opens the index anew
            reader = self._readers.pop(name, None)
        if reader is not None:
            reader.close()
        syncer = Syncer(self.settings, get_source(name))
        syncer.parallel = False
        try:
            syncer.rebuild(why)  # one log line
        except IndexLockedError:
            raise TroveError(
                "INDEX_UNAVAILABLE",
                f"the {name} index is damaged ({why}) and is being rebuilt by the process "
                "that holds it; retry in a few seconds",
            ) from exc
        raise TroveError(
            "INDEX_UNAVAILABLE",
            f"the {name} index was damaged ({why}) and has been rebuilt from the files: ask again",
        ) from exc

    def generation(self, name: str) -> int:
        """The generation the current reader reads (-1 if none)."""
        reader = self._readers.get(name)
        return -1 if reader is None else reader.generation

    def close(self) -> None:
        with self._lock:
            readers = list(self._readers.values())
        for reader in readers:
            reader.close()


class Derived(Generic[T]):
    """Data derived from something with a stamp (a whole snapshot: ``Snapshot.stamp``; a
    config file: its mtime), made again when the stamp changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[object, T] | None = None

    def get(self, stamp: object, make: Callable[[], T]) -> T:
        """What was made for this stamp, or ``make()``, kept for it."""
        with self._lock:
            if self._kept is not None and self._kept[0] == stamp:
                return self._kept[1]
        made = make()
        with self._lock:
            self._kept = (stamp, made)
        return made


class PerSegment(Generic[T]):
    """Data derived from single segments, kept while the segment lives."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, T] = {}

    def get(self, segment_id: str, make: Callable[[], T]) -> T:
        with self._lock:
            found = self._kept.get(segment_id)
        if found is None:
            made = make()
            with self._lock:
                found = self._kept.setdefault(segment_id, made)
        return found

    def keep_only(self, segment_ids: Iterable[str]) -> list[T]:
        """Forget the segments not named (merged away); what was forgotten."""
        keep = set(segment_ids)
        with self._lock:
            gone = [s for s in self._kept if s not in keep]
            return [self._kept.pop(s) for s in gone]
