"""What every tier reads: the collection's index, the per-process cache and the files."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from indexer.engine.base import Segment
from query import paging, tools
from query.context import QueryContext
from query.errors import TroveError
from query.freshness import Freshness, mark_stale, of_snapshot
from query.workspace.cache import Doc, SegmentCache, WorkspaceCache, cache_of, read_text
from query.workspace.dates import DateRange
from query.workspace.lines import Line
from query.workspace.models import WorkspaceHit

COLLECTION = "conversations"


class View:
    """What every tier reads: the collection's index, the per-process cache and the files."""

    def __init__(
        self,
        ctx: QueryContext,
        root: Path,
        date_range: DateRange | None,
        offset: int = 0,
        max_results: int = tools.SEARCH_WORKSPACE_RESULTS.default,
    ) -> None:
        self.ctx = ctx
        self.cache: WorkspaceCache = cache_of(ctx)
        self.root = root
        self.range = date_range
        # The page asked for, and how many lines the tiers rank to answer it.
        self.offset, self.max_results = offset, max_results
        self.window = paging.window(offset, max_results)
        self.max_bytes = int(ctx.settings.index.max_file_mb * 1024 * 1024)
        self._in_range: dict[str, set[int]] = {}

    @contextmanager
    def snapshot(self) -> Iterator[list[tuple[Segment, SegmentCache]]]:
        """The latest commit's segments, each with what the cache keeps for it (the index
        is held only while this is open: read files after)."""
        with self.ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
            if snapshot is None:
                raise TroveError(
                    "DIRECTORY_NOT_FOUND", "the conversations index could not be built"
                )
            segments = [segment for segment, _base in snapshot.segments()]
            self.cache.forget_segments_except({segment.id for segment in segments})
            yield [(segment, self.cache.segment(segment)) for segment in segments]

    def freshness(self, hits: list[WorkspaceHit]) -> Freshness:
        """The answer's freshness, each hit's ``stale`` set (against the latest commit)."""
        with self.ctx.indexes.snapshot(COLLECTION) as snapshot:
            if snapshot is not None:
                mark_stale(snapshot, self.root, hits, lambda h: h.id.rpartition(":")[0])
            return of_snapshot(self.ctx.watcher, COLLECTION, snapshot)

    def in_range(self, segment: Segment) -> set[int] | None:
        """The segment's live documents in the date range (None: no date range)."""
        if self.range is None:
            return None
        found = self._in_range.get(segment.id)
        if found is None:
            field_name, term = self.range.field()
            found = self._in_range[segment.id] = segment.docs_with(field_name, [term])
        return found

    def text(self, seg: SegmentCache, doc: Doc) -> str | None:
        if doc.text is not None:
            return doc.text
        return self.cache.lowered(seg, doc, self.root, self.max_bytes)

    def originals(self, lines: Sequence[Line]) -> dict[str, str | None]:
        """The files of the lines ranked so far, as written, for the page's lines (None:
        gone since the index saw them); the others are only checked to be there (""),
        so that the page's place in the order is right."""
        shown = {ln.doc.key for ln in lines[self.offset : self.offset + self.max_results]}
        found: dict[str, str | None] = {}
        for ln in lines:
            key = ln.doc.key
            if key in found:
                continue
            if key in shown:
                found[key] = read_text(self.root, key, self.max_bytes)
            else:
                found[key] = "" if os.path.isfile(os.path.join(self.root, key)) else None
        return found
