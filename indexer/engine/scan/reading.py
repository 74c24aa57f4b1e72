"""The plain-scan reference engine's read side: no index, the files read as they are.

A snapshot walks the collection's folder; when any file changed since the last one, every
file is read and parsed by the source again and analysed in memory (indexer/engine/scan/
segment.py). Slow by design and exact: the differential tests run every search on this
engine and on Whoosh, and the answers must agree.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from indexer.engine.base import Ranked, Scored
from indexer.engine.fields import Boolean, BytesColumn, Field, Keyword, Number, Stored, Text
from indexer.engine.postings import next_tokens_postings
from indexer.engine.scan.segment import AnalysedDoc, MemorySegment
from indexer.errors import StoreError
from indexer.files import SkipFile, read_file, walk
from indexer.sources.base import Source

log = logging.getLogger(__name__)


def analyse(fields: Sequence[Field], doc: Mapping[str, Any], file: str) -> AnalysedDoc:
    """A source's document as the engine keeps it: what the store adds (key, kind, file)
    stored and found by value, as in the Whoosh engine's bookkeeping fields."""
    out = AnalysedDoc(
        stored={"key": doc["key"], "kind": "doc", "file": file}, terms={}, lengths={}, columns={}
    )
    out.terms["key"] = {doc["key"]: (1, None, [0])}
    out.terms["kind"] = {"doc": (1, None, [0])}
    out.terms["file"] = {file: (1, None, [0])}
    for f in fields:
        if f.name not in doc:
            continue
        value = doc[f.name]
        if isinstance(f, Stored):
            out.stored[f.name] = value
        elif isinstance(f, BytesColumn):
            out.columns[f.name] = value
        elif isinstance(f, Number):
            if f.stored:
                out.stored[f.name] = value
            if f.sortable:
                out.columns[f.name] = value
            out.terms[f.name] = {str(value): (1, None, [0])}
        elif isinstance(f, Boolean):
            if f.stored:
                out.stored[f.name] = value
        elif isinstance(f, Keyword):
            if f.stored:
                out.stored[f.name] = value
            terms = f.tokens(value) if f.tokens is not None else [value]
            out.terms[f.name] = {t: (1, None, [0]) for t in terms}
        elif isinstance(f, Text):
            if f.stored:
                out.stored[f.name] = value
            out.terms[f.name] = _text_terms(f, value)
            out.lengths[f.name] = sum(freq for freq, _, _ in out.terms[f.name].values())
    return out


def _text_terms(f: Text, value: str) -> dict[str, tuple[int, bytes | None, list[int]]]:
    if f.postings == "next_tokens":
        return {t: (n, v, []) for t, n, v in next_tokens_postings(f.tokens(value))}
    if f.postings == "positions":
        if f.positions is not None:
            placed = f.positions(value)
        else:
            placed = [(t, i) for i, t in enumerate(f.tokens(value))]
        found: dict[str, list[int]] = {}
        for term, pos in placed:
            found.setdefault(term, []).append(pos)
        return {t: (len(ps), None, ps) for t, ps in found.items()}
    return {t: (n, None, []) for t, n in Counter(f.tokens(value)).items()}


class ScanSnapshot:
    def __init__(
        self,
        segment: MemorySegment,
        generation: int,
        listing: dict[str, tuple[int, int]],
        committed: float,
    ) -> None:
        self._segment = segment
        self.generation = generation
        self._listing = listing
        self.committed = committed

    def file_state(self, file: str) -> tuple[int, int] | None:
        return self._listing.get(file)

    @property
    def stamp(self) -> str:
        return self._segment.id

    def segments(self) -> Sequence[tuple[MemorySegment, int]]:
        return [(self._segment, 0)]

    def stored(self, doc: int) -> Mapping[str, Any]:
        return self._segment.stored(doc)

    def top(self, query: Ranked, limit: int, allowed: set[int] | None = None) -> list[Scored]:
        return self._segment.top(query, limit, allowed)

    def matching(self, query: Ranked) -> set[int]:
        return self._segment.matching(query)


class ScanReader:
    """A collection's files, read again whenever one of them changed."""

    def __init__(self, root: Path | None, source: Source, max_bytes: int) -> None:
        self.root = root
        self.source = source
        self.max_bytes = max_bytes
        self._lock = threading.RLock()
        self._listing: dict[str, tuple[int, int]] | None = None
        self._segment: MemorySegment | None = None
        self._read_at = 0.0
        self.generation = -1

    @contextmanager
    def snapshot(self) -> Iterator[ScanSnapshot | None]:
        with self._lock:
            if self.root is None or not self.root.is_dir():
                yield None
                return
            try:
                listing = walk(self.root, self.source).files
            except StoreError:
                yield None
                return
            if listing != self._listing or self._segment is None:
                self.generation += 1
                self._segment = self._read(listing)
                self._listing = listing
                self._read_at = time.time()
            yield ScanSnapshot(self._segment, self.generation, listing, self._read_at)

    def _read(self, listing: dict[str, tuple[int, int]]) -> MemorySegment:
        assert self.root is not None
        fields = self.source.fields()
        docs: list[AnalysedDoc] = []
        root_real = os.path.realpath(self.root)
        for rel in sorted(listing):
            try:
                parsed = self.source.parse(read_file(self.root, rel, self.max_bytes, root_real))
            except (FileNotFoundError, SkipFile):
                continue
            except Exception:  # a file the indexer cannot parse is skipped too
                log.debug("%s: cannot parse", rel, exc_info=True)
                continue
            docs.extend(analyse(fields, doc, rel) for doc in parsed.documents)
        return MemorySegment(f"scan-{self.generation}", docs)

    def close(self) -> None:
        with self._lock:
            self._segment = None
            self._listing = None
