"""What an index holds, looked up through the engine's read protocol (for tests of the
writing side: whatever engine keeps the index, the same lookups)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from indexer.collection import CollectionIndex
from indexer.config import Settings
from indexer.engine.base import Segment, Snapshot
from indexer.sources.registry import get_source
from query.indexes import Indexes


@contextmanager
def snapshot(settings: Settings, collection: str) -> Iterator[Snapshot | None]:
    """The collection's latest commit (None if its index was never built)."""
    indexes = Indexes(settings)
    try:
        with indexes.snapshot(collection) as found:
            yield found
    finally:
        indexes.close()


def _live(s: Snapshot) -> Iterator[tuple[Segment, int, Mapping[str, Any]]]:
    """(segment, number, stored fields) of every live document, file records left out."""
    for segment, _ in s.segments():
        for doc, fields in segment.live_stored():
            if fields.get("kind") == "doc":
                yield segment, doc, fields


def documents(settings: Settings, collection: str) -> dict[str, dict[str, Any]]:
    """The stored fields of every live document, by key."""
    with snapshot(settings, collection) as s:
        if s is None:
            return {}
        return {fields["key"]: dict(fields) for _, _, fields in _live(s)}


def stored_with_key(settings: Settings, collection: str, key: str) -> list[dict[str, Any]]:
    """The stored fields of every live document of that key (one, unless it is twice)."""
    with snapshot(settings, collection) as s:
        if s is None:
            return []
        return [dict(fields) for _, _, fields in _live(s) if fields["key"] == key]


def keys_in(
    settings: Settings, collection: str, select: Callable[[Segment], Collection[int]]
) -> set[str]:
    """The keys of the live documents that ``select`` picks of each segment."""
    with snapshot(settings, collection) as s:
        if s is None:
            return set()
        chosen = {segment.id: select(segment) for segment, _ in s.segments()}
        return {fields["key"] for segment, doc, fields in _live(s) if doc in chosen[segment.id]}


def keys_with(settings: Settings, collection: str, field: str, terms: Iterable[str]) -> set[str]:
    """The keys of the live documents holding any of the terms in the field."""
    terms = list(terms)
    return keys_in(settings, collection, lambda segment: segment.docs_with(field, terms))


def keys_with_prefix(settings: Settings, collection: str, field: str, prefix: str) -> set[str]:
    """The keys of the live documents holding a term of the field that starts with ``prefix``."""

    def select(segment: Segment) -> Collection[int]:
        lexicon = segment.lexicon(field)
        return segment.docs_with(field, [lexicon.term(k) for k in lexicon.starting_with(prefix)])

    return keys_in(settings, collection, select)


def segment_sizes(settings: Settings, collection: str) -> list[tuple[int, int]]:
    """(documents, deleted documents) of each segment of the index, as its writer sees it."""
    index = CollectionIndex(settings.index_dir, get_source(collection)).open()
    assert index is not None
    return sorted((s.live + s.deleted, s.deleted) for s in index.segments())


def file_states(settings: Settings, collection: str) -> dict[str, tuple[int, int]]:
    """(mtime_ns, size) of every file the index keeps a record of, as it recorded them."""
    index = CollectionIndex(settings.index_dir, get_source(collection)).open()
    if index is None:
        return {}
    files, _ = index.bookkeeping()
    return {rel: (state.mtime_ns, state.size) for rel, state in files.items()}
