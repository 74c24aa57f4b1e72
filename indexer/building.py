"""A first build's progress, kept in a file beside the index while the build runs.

An index built from nothing (the first start, or a rebuild after damage) has no
documents until its build commits; without a word, searches would answer ``[]``. The
writer keeps ``building.json`` in the collection's index folder from its start to its
commit, so that any process (a search, ``trove status``, ``/health``) can tell "being
built, n of N" from "empty". A file left by a writer that died says nothing: its pid no
longer runs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

BUILD_FILE = "building.json"
# How often the file is rewritten as files are read.
WRITE_EVERY_S = 0.25


@dataclass(frozen=True)
class BuildProgress:
    """Where a build is: ``phase`` "reading" (``done`` of ``total`` files read) or
    "writing" (every file read, the index being written)."""

    pid: int
    since: float
    phase: str
    done: int
    total: int

    def describe(self) -> str:
        """One line for people: "indexing (1,200 of 5,000 files read; 8 s so far)"."""
        return f"indexing ({self.detail()})"

    def detail(self) -> str:
        took = f"{time.time() - self.since:.0f} s so far"
        if self.phase == "writing":
            return f"{self.total:,} files read, writing the index; {took}"
        return f"{self.done:,} of {self.total:,} files read; {took}"

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "message": self.describe()}


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs (a zombie does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return True


def read_build(index_path: Path) -> BuildProgress | None:
    """The progress of a build running on this collection's index folder, or None (no
    build, or one whose writer died)."""
    try:
        data = json.loads((index_path / BUILD_FILE).read_text(encoding="utf-8"))
        progress = BuildProgress(
            pid=int(data["pid"]),
            since=float(data["since"]),
            phase=str(data["phase"]),
            done=int(data["done"]),
            total=int(data["total"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return progress if pid_alive(progress.pid) else None


def announce_build(index_path: Path) -> None:
    """Say a first build starts, before the empty index it fills is created: a search that
    finds that index must already see the build (a BuildRecorder, or clear_build, ends
    it)."""
    BuildRecorder(index_path).__enter__()


def clear_build(index_path: Path) -> None:
    try:
        (index_path / BUILD_FILE).unlink(missing_ok=True)
    except OSError:
        pass


class BuildRecorder:
    """Keeps ``building.json`` up to date during a build; removes it at the end.

    Used as a context manager around the build; ``reading(done, total)`` as the build's
    progress callback (it calls ``then`` too), ``writing()`` once every file is read.
    A file that cannot be written (a full disk) is only a missing hint: never an error.
    """

    def __init__(self, index_path: Path, then: Callable[[int, int], None] | None = None) -> None:
        self.path = index_path / BUILD_FILE
        self.then = then
        self.since = time.time()
        self._written = 0.0
        self._total = 0

    def __enter__(self) -> Self:
        self._write("reading", 0, 0)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        clear_build(self.path.parent)

    def reading(self, done: int, total: int) -> None:
        self._total = total
        now = time.monotonic()
        if now - self._written >= WRITE_EVERY_S or done == total:
            self._write("reading", done, total)
        if self.then is not None:
            self.then(done, total)

    def writing(self) -> None:
        self._write("writing", self._total, self._total)

    def _write(self, phase: str, done: int, total: int) -> None:
        self._written = time.monotonic()
        progress = BuildProgress(os.getpid(), self.since, phase, done, total)
        tmp = self.path.with_name(f".{BUILD_FILE}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(asdict(progress)), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
