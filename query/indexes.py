"""Open indexes for queries: one searcher per collection, kept open and refreshed.

Opening a searcher costs tens of milliseconds; a reused one costs nothing. A searcher is
refreshed when the index's generation changed (another process committed), so a
long-running query process sees new commits on its next query without restarting.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from whoosh.index import Index
from whoosh.searching import Searcher

from indexer.config import Settings
from indexer.sources.registry import get_source
from indexer.store import CollectionIndex


class Indexes:
    """The query side's handle on every collection's index (one per process)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}
        self._indexes: dict[str, Index] = {}
        self._searchers: dict[str, Searcher] = {}
        self._generation: dict[str, int] = {}

    def collection(self, name: str) -> CollectionIndex:
        return CollectionIndex(self.settings.index_dir, get_source(name))

    def _collection_lock(self, name: str) -> threading.RLock:
        with self._lock:
            return self._locks.setdefault(name, threading.RLock())

    @contextmanager
    def searcher(self, name: str) -> Iterator[Searcher | None]:
        """The collection's current searcher (None if its index was never built).

        Held under a per-collection lock: a Whoosh searcher is not safe to share
        between threads while it refreshes.
        """
        with self._collection_lock(name):
            yield self._current(name)

    def generation(self, name: str) -> int:
        """The generation the current searcher reads (-1 if none)."""
        return self._generation.get(name, -1)

    def _current(self, name: str) -> Searcher | None:
        index = self._indexes.get(name)
        if index is None:
            index = self.collection(name).open_for_reading()
            if index is None:
                return None
            self._indexes[name] = index
        try:
            latest = index.latest_generation()
        except OSError:
            latest = -2
        searcher = self._searchers.get(name)
        if searcher is not None and self._generation.get(name) == latest:
            return searcher
        col = self.collection(name)
        marker = col.check_ours()
        if (
            searcher is not None
            and marker is not None
            and marker.get("schema_version") == col.source.schema_version
        ):
            # Same schema: refresh reuses the readers of segments that did not change.
            try:
                searcher = searcher.refresh()
            except (OSError, ValueError, EOFError):
                searcher = None
            else:
                self._searchers[name] = searcher
                self._generation[name] = searcher.reader().generation()
                return searcher
        # Reopen: the index may have been rebuilt (another schema version) since we opened it.
        fresh = col.open_for_reading()
        if fresh is None:
            self._drop(name)
            return None
        old = self._searchers.pop(name, None)
        if old is not None:
            old.close()
        self._indexes[name] = fresh
        searcher = fresh.searcher()
        self._searchers[name] = searcher
        self._generation[name] = searcher.reader().generation()
        return searcher

    def _drop(self, name: str) -> None:
        searcher = self._searchers.pop(name, None)
        if searcher is not None:
            searcher.close()
        self._indexes.pop(name, None)
        self._generation.pop(name, None)

    def close(self) -> None:
        with self._lock:
            names = list(self._searchers)
        for name in names:
            with self._collection_lock(name):
                self._drop(name)
