"""indexer/events.py: the debouncer that batches events (flushed after a quiet spell or at
a bounded delay), which events pass on, the overflow the log reports, and which
collections a changed path belongs to."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from watchdog.events import (
    DirDeletedEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileOpenedEvent,
    FileSystemEvent,
)

from indexer import events
from indexer.config import settings_from_dict
from indexer.events import Batcher, EventsTo, OverflowLog, locate
from indexer.sources.registry import get_source

TIMEOUT = 10.0


@pytest.fixture
def batches() -> Iterator[Callable[[float, float], tuple[Batcher, queue.Queue]]]:
    """A running Batcher whose batches land in a queue; stopped after the test."""
    started: list[Batcher] = []

    def start(quiet: float, max_delay: float) -> tuple[Batcher, queue.Queue]:
        landed: queue.Queue[list[FileSystemEvent]] = queue.Queue()
        batcher = Batcher(quiet, max_delay, landed.put)
        batcher.start()
        started.append(batcher)
        return batcher, landed

    yield start
    for batcher in started:
        batcher.stop()
        batcher.join(TIMEOUT)
        assert not batcher.is_alive()


def test_events_that_come_together_land_in_one_batch_in_their_order(batches) -> None:
    batcher, landed = batches(0.05, 5.0)
    assert batcher.name == "trove-batcher"
    made = [FileCreatedEvent(f"/r/{i}.md") for i in range(5)]
    for event in made:
        batcher.handle_event(event)
    assert landed.get(timeout=TIMEOUT) == made


def test_events_that_never_stop_are_flushed_at_the_bounded_delay(batches) -> None:
    batcher, landed = batches(30.0, 0.05)  # no quiet spell would come for 30 s
    deadline = time.monotonic() + TIMEOUT
    sent = 0
    while True:
        batcher.handle_event(FileCreatedEvent(f"/r/{sent}.md"))
        sent += 1
        try:
            batch = landed.get(timeout=0.01)
            break
        except queue.Empty:
            assert time.monotonic() < deadline, "no batch within the bounded delay"
    assert [e.src_path for e in batch] == [f"/r/{i}.md" for i in range(len(batch))]


def test_a_batch_is_due_only_once_more_than_the_delay_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(events, "time", SimpleNamespace(monotonic=lambda: now[0]))
    batcher = Batcher(0.1, 2.0, lambda batch: None)
    assert not batcher.time_to_flush(98.0)  # exactly the delay
    assert batcher.time_to_flush(97.9)
    assert not batcher.time_to_flush(100.0)


def test_events_that_cannot_mean_a_change_are_not_passed_on() -> None:
    noted: list[FileSystemEvent] = []
    handler = EventsTo(noted.append)
    kept = [FileCreatedEvent("/r/a"), FileClosedEvent("/r/a"), DirDeletedEvent("/r/d")]
    for event in [FileOpenedEvent("/r/a"), FileClosedNoWriteEvent("/r/a"), *kept]:
        handler.dispatch(event)
    attrib = FileModifiedEvent("/r/a")
    attrib.event_type = "attrib"  # inotify's IN_ATTRIB, as watchdog names it
    handler.on_any_event(attrib)
    assert noted == kept


def test_an_overflow_in_watchdogs_log_raises_the_flag() -> None:
    flag = threading.Event()
    logger = logging.getLogger("test_events.watchdog")
    listener = OverflowLog(flag)
    logger.addHandler(listener)
    try:
        logger.warning("inotify: event queue fine")
        logger.error("some other trouble")
        assert not flag.is_set()
        logger.info("Queue OVERFLOW below warning level")  # below WARNING: not heard
        assert not flag.is_set()
        logger.warning("IN_Q_OVERFLOW: queue overflow")
        assert flag.is_set()
    finally:
        logger.removeHandler(listener)


@pytest.fixture
def where(tmp_path: Path) -> Callable[..., list[tuple[str, str]]]:
    # No commands folder configured.
    roots = {n: str(tmp_path / n) for n in ("reports", "conversations", "elog")}
    settings = settings_from_dict({"sources": roots}, base=tmp_path)
    sources = {n: get_source(n) for n in ("reports", "commands", "conversations", "elog")}

    def where(rel: str, is_dir: bool = False) -> list[tuple[str, str]]:
        return locate(settings, sources, str(tmp_path / rel), is_dir)

    return where


def test_a_report_belongs_to_reports_by_its_path_below_the_root(where) -> None:
    assert where("reports/cmd/a.md") == [("reports", "cmd/a.md")]
    assert where("reports/cmd", is_dir=True) == [("reports", "cmd")]
    assert where("conversations/2025-01-02/s/chat.md") == [
        ("conversations", "2025-01-02/s/chat.md")
    ]
    assert where("elog/2025/250102a.log") == [("elog", "2025/250102a.log")]


def test_a_root_itself_belongs_to_its_collection_as_the_empty_path(where) -> None:
    assert where("reports", is_dir=True) == [("reports", "")]
    assert where("elog", is_dir=True) == [("elog", "")]


def test_a_path_beside_a_root_that_shares_its_name_belongs_to_none(where) -> None:
    assert where("reports2/cmd/a.md") == []
    assert where("reportscmd/a.md") == []


def test_what_a_collection_does_not_want_belongs_to_none(where) -> None:
    assert where("reports/cmd/a.txt") == []
    assert where("reports/.hidden/a.md") == []
    assert where("reports/cmd/sub/a.md") == []
    assert where("reports/cmd/sub", is_dir=True) == []
    assert where("elog/notayear/250102a.log") == []


def test_a_collection_without_a_root_claims_nothing(where, tmp_path: Path) -> None:
    assert where("commands/a.md") == []
    assert where(os.fspath(tmp_path)) == []


def test_collections_whose_folders_coincide_or_nest_each_claim_what_they_want(
    tmp_path: Path,
) -> None:
    shared = tmp_path / "shared"
    roots = {"reports": shared, "conversations": shared, "elog": shared / "2025-01-01"}
    settings = settings_from_dict({"sources": {n: str(p) for n, p in roots.items()}}, tmp_path)
    sources = {n: get_source(n) for n in ("reports", "conversations", "elog")}

    def where(path: Path, is_dir: bool = False) -> list[tuple[str, str]]:
        return locate(settings, sources, str(path), is_dir)

    # A folder reports does not want below its root: the others are asked all the same.
    assert where(shared / "2025-01-01/s/notes.md") == [("conversations", "2025-01-01/s/notes.md")]
    # A root that is also a folder of another collection: both.
    assert where(shared, is_dir=True) == [("reports", ""), ("conversations", "")]
    assert where(shared / "2025-01-01", is_dir=True) == [
        ("reports", "2025-01-01"),
        ("conversations", "2025-01-01"),
        ("elog", ""),
    ]
