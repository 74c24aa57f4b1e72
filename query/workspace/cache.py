"""What search_workspace keeps between queries, per index segment: each document's
stored fields, the segment's words by length and by their neighbours and, within a
budget, lower-cased texts."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from indexer.engine.base import Segment
from indexer.files import SkipFile, read_file
from query.context import QueryContext
from query.indexes import PerSegment
from query.neighbours import Neighbours
from query.workspace import limits


@dataclass(slots=True)
class Doc:
    """A document of one index segment (its content never changes there)."""

    key: str
    date: str
    conversation: str
    conv: tuple[str, str]  # (date, conversation): which conversation it belongs to
    text: str | None = None  # the file's lower-cased text, once read (within the budget)


@dataclass
class SegmentCache:
    docs: dict[int, Doc] = field(default_factory=dict)
    text_chars: int = 0
    # The segment's words of letters, by length, and by their deletion neighbourhoods
    # (for typo correction; each made on first use).
    by_length: dict[int, list[str]] | None = None
    neighbours: Neighbours | None = None

    def near(self, segment: Segment) -> Neighbours:
        if self.neighbours is None:
            self.neighbours = Neighbours(segment.lexicon("content"))
        return self.neighbours

    def words_of_length(self, segment: Segment, low: int, high: int) -> Iterator[str]:
        if self.by_length is None:
            by_length: dict[int, list[str]] = {}
            for term in segment.lexicon("content"):
                if term.isalpha():
                    by_length.setdefault(len(term), []).append(term)
            self.by_length = by_length
        for n in range(low, high + 1):
            yield from self.by_length.get(n, ())


class WorkspaceCache:
    """What search_workspace keeps between queries (one per process, shared by threads).

    Per index segment (immutable, but for deletions): per document its
    stored fields and, while the budget lasts, the file's lower-cased text. A file
    re-indexed is a new document of a new segment, so what is kept never goes stale
    with respect to the index; segments merged away are dropped with all they hold.
    """

    def __init__(self, text_budget: int | None = None) -> None:
        self._lock = threading.Lock()
        self._segments: PerSegment[SegmentCache] = PerSegment()
        self._text_chars = 0
        self.text_budget = limits.TEXT_CACHE_CHARS if text_budget is None else text_budget

    def segment(self, segment: Segment) -> SegmentCache:
        return self._segments.get(segment.id, SegmentCache)

    def forget_segments_except(self, segids: set[str]) -> None:
        gone = self._segments.keep_only(segids)
        with self._lock:
            self._text_chars -= sum(seg.text_chars for seg in gone)

    def docs(self, seg: SegmentCache, segment: Segment, docnums: Iterable[int]) -> list[Doc]:
        get = seg.docs.get
        out = []
        for n in docnums:
            doc = get(n)
            if doc is None:
                f = segment.stored(n)
                date, conv = f.get("date", ""), f.get("conversation", "")
                doc = seg.docs[n] = Doc(f["key"], date, conv, (date, conv))
            out.append(doc)
        return out

    def lowered(self, seg: SegmentCache, doc: Doc, root: Path, max_bytes: int) -> str | None:
        """The file's text, lower-cased (None if it cannot be read now), read once while
        the budget lasts."""
        text = read_text(root, doc.key, max_bytes)
        if text is None:
            return None
        lowered = text.lower()
        with self._lock:
            if self._text_chars + len(lowered) <= self.text_budget:
                self._text_chars += len(lowered)
                seg.text_chars += len(lowered)
                doc.text = lowered
        return lowered


def read_text(root: Path, rel: str, max_bytes: int) -> str | None:
    """A conversation file's text as the indexer read it (None if it cannot be read)."""
    try:
        return read_file(root, rel, max_bytes).text()
    except (FileNotFoundError, SkipFile):
        return None


def cache_of(ctx: QueryContext) -> WorkspaceCache:
    return ctx.kept("workspace", WorkspaceCache)
