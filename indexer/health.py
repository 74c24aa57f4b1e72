"""The watcher's health, as its status file says it (``trove status``, ``/health`` and
every answer's freshness read it: indexer/status.py), and the writing of that file."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0
# The status file's size: room for its fields, so that it can be rewritten in place.
STATUS_FILE_BYTES = 8192


@dataclass
class Health:
    """What the status file says; written atomically so `trove status` never reads half."""

    pid: int = field(default_factory=os.getpid)
    kind: str = "daemon"  # the command that runs it: daemon, serve or mcp
    started: float = field(default_factory=time.time)
    heartbeat: float = field(default_factory=time.time)
    # starting, catching up (the start-up reconcile), watching, stopped
    state: str = "starting"
    observer: str = ""
    catching_up: bool = True
    catch_up_s: float | None = None  # how long the start-up catch-up took
    # Per collection: how it is watched ("mode": events or poll, "why") and whether its
    # start-up catch-up has ended ("caught_up").
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_event: float | None = None
    last_commit: float | None = None
    last_reconcile: float | None = None
    pending: int = 0
    events: int = 0
    batches: int = 0
    errors: int = 0
    last_error: str = ""
    overflows: int = 0
    # Set while changes cannot land ("disk full: 12 changes pending since 10:51"); empty
    # once they have.
    fault: str = ""


def write_status_file(path: Path, data: dict[str, Any]) -> None:
    """Write the status file atomically (a reader never sees half of it). Padded to a fixed
    size: on a full disk it can still be rewritten in place (its blocks are there), so
    status shows the fault."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    text = json.dumps(data, indent=1).encode("utf-8")
    text += b" " * max(0, STATUS_FILE_BYTES - len(text))
    try:
        tmp.write_bytes(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        try:
            with path.open("r+b") as f:  # in place: needs no new block
                if len(text) <= os.fstat(f.fileno()).st_size:
                    f.write(text)
        except OSError:
            log.debug("cannot write %s: %s", path, exc)


class Beating:
    """Writes the status file's heartbeat every HEARTBEAT_S while a long start-up
    catch-up runs (the main loop beats afterwards): a first build is not a stuck watcher."""

    def __init__(self, beat: Callable[[], None]) -> None:
        self._beat_once = beat
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="trove-heartbeat", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._done.wait(HEARTBEAT_S):
            self._beat_once()
