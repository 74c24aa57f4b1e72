"""The plain-scan reference engine: no index, the files read and analysed on each change
(reading.py, segment.py). Exact and slow: the differential tests run every search on it
and on Whoosh, and the answers must agree."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import NoReturn

from indexer.engine.base import ReadTarget
from indexer.engine.fields import Field
from indexer.engine.scan.reading import ScanReader


class ScanEngine:
    """Reads the files themselves: it keeps no index, so it has nothing to open or create."""

    name = "scan"
    keeps_index = False

    def reader(self, target: ReadTarget) -> ScanReader:
        return ScanReader(target.root, target.source, target.max_bytes)

    def open(self, path: Path, fields: Collection[Field], scored: bool) -> NoReturn:
        raise TypeError("the plain-scan engine keeps no index: it reads the files")

    def create(self, path: Path, fields: Collection[Field], scored: bool) -> NoReturn:
        raise TypeError("the plain-scan engine keeps no index: it reads the files")
