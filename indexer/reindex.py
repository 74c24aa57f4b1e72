"""Bring the indexes in line with the files: the one indexing path trove has."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from indexer.config import Settings
from indexer.errors import StoreError
from indexer.sources.registry import SOURCES, get_source
from indexer.store import Summary, Syncer

CollectionProgress = Callable[[str, int, int], None]


def reindex(
    settings: Settings,
    collections: Iterable[str] | None = None,
    full: bool = False,
    progress: CollectionProgress | None = None,
) -> list[Summary]:
    """Reconcile each collection (all by default); ``full`` rebuilds from scratch.

    A collection that cannot be indexed (its folder cannot be listed, another writer holds
    it too long, ...) does not stop the others: its summary carries the ``error``."""
    names = list(dict.fromkeys(collections)) if collections else list(SOURCES)
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ValueError(f"unknown collection {', '.join(unknown)}; known: {', '.join(SOURCES)}")
    summaries = []
    for name in names:
        syncer = Syncer(settings, get_source(name))
        report = (lambda done, total, n=name: progress(n, done, total)) if progress else None
        try:
            summaries.append(syncer.reconcile(full=full, progress=report))
        except StoreError as exc:
            summaries.append(Summary(name, error=str(exc)))
    return summaries
