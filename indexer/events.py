"""watchdog glue: the inotify events the watcher asks for, a debouncer that flushes at a
bounded delay, a handler that passes events on, a log listener for the kernel queue
overflows that watchdog reports only in its log, and the collections a changed path
belongs to."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.utils.event_debouncer import EventDebouncer

from indexer.config import Settings
from indexer.sources.base import Source

# The kernel reports what inotify can filter on; "closed" (after a write) stands for
# "modified" and costs one event per save instead of several.
INOTIFY_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class Batcher(EventDebouncer):
    """watchdog's debouncer, flushing after ``quiet`` s of silence or ``max_delay`` s at most."""

    def __init__(
        self, quiet: float, max_delay: float, callback: Callable[[list[Any]], None]
    ) -> None:
        super().__init__(quiet, callback)
        self.name = "trove-batcher"
        self.max_delay = max_delay

    def time_to_flush(self, started: float) -> bool:
        return time.monotonic() - started > self.max_delay


class EventsTo(FileSystemEventHandler):
    """Passes every event that can mean a change on to ``note`` (opening, reading without
    writing and attribute changes cannot)."""

    def __init__(self, note: Callable[[FileSystemEvent], None]) -> None:
        self.note = note

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write", "attrib"):
            return
        self.note(event)


class OverflowLog(logging.Handler):
    """watchdog tells nobody but its log when the kernel queue overflows: listen there."""

    def __init__(self, flag: threading.Event) -> None:
        super().__init__(level=logging.WARNING)
        self.flag = flag

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.flag.set()


def locate(
    settings: Settings, sources: dict[str, Source], path: str, is_dir: bool
) -> list[tuple[str, str]]:
    """The collections a changed path may belong to, with its path relative to their root."""
    found = []
    for name, source in sources.items():
        root = settings.source_root(name)
        if root is None:
            continue
        root_s = str(root)
        if path == root_s:
            found.append((name, ""))
            continue
        if not path.startswith(root_s + os.sep):
            continue
        parts = tuple(path[len(root_s) + 1 :].split(os.sep))
        if not all(source.wants_dir(parts[:i]) for i in range(1, len(parts))):
            continue
        if source.wants_dir(parts) if is_dir else source.wants_file(parts):
            found.append((name, "/".join(parts)))
    return found
