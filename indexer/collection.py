"""The index folder of one collection: the marker that says it is a trove index (and of
which schema version), opening it for reading or writing (a new empty one when it is
missing, damaged or of another version), and the collection's one writer lock."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from indexer.building import announce_build, clear_build
from indexer.engine import get_engine
from indexer.engine.base import Reader, ReadTarget
from indexer.engine.faults import is_write_fault, release
from indexer.engine.writing import Engine, Index
from indexer.errors import (
    Cancel,
    ForeignIndexError,
    IndexLockedError,
    Interrupted,
    WriteFault,
    unusable_index_folder,
)
from indexer.sources.base import Source

log = logging.getLogger(__name__)

MARKER = "trove-index.json"
_MARKER_WRITTEN = MARKER + ".tmp"  # the marker being written, renamed into place after
MARKER_FORMAT = "trove-index"
LOCK_FILE = "writer.lock"


class CollectionIndex:
    """The index folder of one collection: opening, versioning, locking."""

    def __init__(
        self,
        index_dir: Path,
        source: Source,
        lock_timeout_s: float = 30.0,
        engine: Engine | None = None,
    ) -> None:
        self.source = source
        self.path = Path(index_dir) / source.name
        self.lock_timeout_s = lock_timeout_s
        self.engine = engine or get_engine()

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

    def write_marker(self, **extra: Any) -> None:
        marker = {
            "format": MARKER_FORMAT,
            "collection": self.source.name,
            "schema_version": self.source.schema_version,
        }
        old = self.read_marker() or {}
        if "last_update" in old:
            marker["last_update"] = old["last_update"]
        marker.update(extra)
        tmp = self.path / _MARKER_WRITTEN
        try:
            tmp.write_text(json.dumps(marker, indent=1), encoding="utf-8")
            os.replace(tmp, self.marker_path)
        except OSError as exc:
            # (On a read-only folder, removing even a file that is not there fails.)
            with suppress(OSError):
                tmp.unlink(missing_ok=True)
            if is_write_fault(exc):
                raise WriteFault(f"could not write {self.marker_path}: {exc.strerror}") from exc
            raise

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
            # The lock, and a marker half-written by a process killed as it claimed the
            # folder (write_marker), are all an index of ours holds before its marker.
            if any(name not in (LOCK_FILE, _MARKER_WRITTEN) for name in os.listdir(self.path)):
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

    # ---- opening

    def open(self) -> Index | None:
        """The index as last committed, or None if it was never built (or must be rebuilt)."""
        marker = self.check_ours()
        if marker is None or marker.get("schema_version") != self.source.schema_version:
            return None
        try:
            return self.engine.open(self.path, self.source.fields(), self.source.scored)
        except Exception:  # noqa: BLE001 (missing or damaged: the writer rebuilds it)
            return None

    def damaged(self) -> str | None:
        """Why the index cannot be read (a file missing, cut short or corrupted), or None
        if it reads (or was never built)."""
        marker = self.check_ours()
        if marker is None or marker.get("schema_version") != self.source.schema_version:
            return None
        if marker.get("damaged"):
            return "marked damaged"
        try:
            self.engine.open(self.path, self.source.fields(), self.source.scored).verify()
        except Exception as exc:  # noqa: BLE001 (any failure to read is damage)
            release(exc)  # the files the failed read left open
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return None

    def reader(self, root: Path | None, max_bytes: int) -> Reader:
        """The query side's reader of this collection (indexer/engine/base.py): of its
        index, or of its files in ``root`` for an engine that keeps none."""

        def current() -> bool:
            marker = self.check_ours()
            return marker is not None and marker.get("schema_version") == self.source.schema_version

        return self.engine.reader(ReadTarget(self.open, current, root, self.source, max_bytes))

    def open_for_writing(self) -> tuple[Index, bool]:
        """The index to write to, and whether it was (re)created empty. Holds the lock."""
        marker = self.check_ours()
        fields, scored = self.source.fields(), self.source.scored
        if marker is not None and not marker.get("damaged"):
            if marker.get("schema_version") == self.source.schema_version:
                try:
                    return self.engine.open(self.path, fields, scored), False
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
        self.write_marker(last_update=None)
        # Searches that find the new empty index must already see its build.
        announce_build(self.path)
        try:
            index = self.engine.create(self.path, fields, scored)
        except BaseException as exc:
            clear_build(self.path)
            if isinstance(exc, OSError) and is_write_fault(exc):
                raise WriteFault(
                    f"could not create the index in {self.path}: {exc.strerror}; it is "
                    "built when it can be"
                ) from exc
            raise
        return index, True

    # ---- the one writer

    @contextmanager
    def locked(
        self, timeout_s: float | None = None, cancel: Cancel | None = None
    ) -> Iterator[None]:
        """Hold this collection's writer lock; wait at most ``timeout_s`` for it (raises
        Interrupted if ``cancel`` is set meanwhile)."""
        self.check_ours()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            unusable = unusable_index_folder(self.path, exc)
            if is_write_fault(exc):  # a full disk, a folder made read-only: may pass
                raise WriteFault(str(unusable)) from exc
            raise unusable from exc
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
                    if cancel is not None and cancel.is_set():
                        raise Interrupted("stopped while waiting for the writer lock") from None
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

    def doc_count(self) -> int:
        index = self.open()
        return 0 if index is None else index.doc_count()


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
