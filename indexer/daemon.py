"""The watcher: reconcile, then watch every source and keep the indexes fresh.

Every process that serves queries for a while runs one (`trove daemon`, `trove serve`,
`trove mcp`), and exactly one of them per index folder watches: it holds the folder's
seat (indexer/seat.py); the others stand by and take over when it exits or dies. The
watcher first catches up (a reconcile of every collection, with the watches already
set, so no change falls between the two), then applies what changes.

Each source is watched the way that works where it lives (``[daemon] watch``): inotify
events, or polling on network and FUSE filesystems, where other machines' changes raise
no event, and when the kernel's inotify limits are reached. Events are batched by a
debouncer (a short quiet window, a bounded maximum delay) and each batch is applied
with one commit per touched index, through the same ``Syncer`` that ``trove reindex``
uses; a reconcile of a whole collection runs in a child process, which gives back the
memory its walk took when it exits (indexer/reconcile_child.py). Safety nets: a kernel
queue overflow (which watchdog only logs), a dead observer or the inotify watch limit
trigger a fallback and a full reconcile; a periodic reconcile catches anything else.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from watchdog.events import (
    FileSystemEvent,
)
from watchdog.observers import Observer, inotify_c
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.utils import BaseThread

from indexer.config import Settings
from indexer.errors import ChildEnded, Interrupted, StoreError, WriteFault
from indexer.events import INOTIFY_EVENTS, Batcher, EventsTo, OverflowLog, locate
from indexer.files import folder_id
from indexer.health import HEARTBEAT_S, Beating, Health, write_status_file
from indexer.held import HeldChanges
from indexer.memory import release_free_memory
from indexer.mounts import filesystem_of, polling_reason
from indexer.polling import Poller
from indexer.reconcile_child import ReconcileChild
from indexer.seat import SEAT_POLL_S, Seat, SeatTaken, SeatUnusable, WatcherKind
from indexer.sources.base import Source
from indexer.sources.registry import SOURCES, get_source
from indexer.status import STATUS_FILE
from indexer.store import APPLY_MAX_PATHS, Summary, Syncer

log = logging.getLogger(__name__)

# After this many watcher failures the daemon polls instead.
MAX_WATCHER_RESTARTS = 3
TICK_S = 0.25
# Seconds without events after which the daemon compacts the indexes.
IDLE_S = 1.0


_UNWATCHED = "its source folder does not exist: watched for, until it appears"
_UNSET = "no source folder is configured"


class CannotWatch(StoreError):
    """This process cannot keep the index folder fresh (it cannot write it)."""


class Daemon:
    """The long-running indexer. ``run()`` blocks until ``stop()``.

    ``kind`` names the command running it (status and answers show it). ``run()`` first
    waits for the index folder's seat (another watcher may hold it: this one stands by
    and takes over when that one exits or dies), then catches up and watches."""

    def __init__(
        self,
        settings: Settings,
        collections: list[str] | None = None,
        kind: WatcherKind = "daemon",
    ) -> None:
        self.settings = settings
        self.kind: WatcherKind = kind
        self.names = collections or list(SOURCES)
        self.sources: dict[str, Source] = {n: get_source(n) for n in self.names}
        self.syncers = {n: Syncer(settings, s) for n, s in self.sources.items()}
        self._stop = threading.Event()
        for syncer in self.syncers.values():
            syncer.cancel = self._stop
            # This process has threads: it never forks (a child process reconciles).
            syncer.parallel = False
        # Whole-collection reconciles run in a child process (indexer/reconcile_child.py).
        self._child = ReconcileChild(settings)
        self.seat = Seat(settings.index_dir)
        self.health = Health(kind=kind)
        self._ready = threading.Event()
        # Set once run() has returned (or raised): whatever it was doing has ended.
        self.finished = threading.Event()
        self._previous_excepthook = threading.excepthook
        self._health_lock = threading.Lock()
        self._status_file_lock = threading.Lock()  # one writer of the status file at a time
        self._pending_events = 0
        self._overflowed = threading.Event()
        self._watcher_crashed = threading.Event()
        self._restarts = 0
        self._use_polling = False
        self._reconcile_requested: set[str] = set()
        self._observer: BaseObserver | None = None
        self._watches: dict[str, ObservedWatch | Poller] = {}
        self._root_ids: dict[str, tuple[int, int]] = {}
        self._stale_roots: set[str] = set()
        self._handler = EventsTo(self.note_event)
        self._batcher: Batcher | None = None
        self._log_handler = OverflowLog(self._overflowed)
        # Notified after every batch or reconcile, for whoever waits on progress.
        self.progress = threading.Condition()
        # Per collection, the changes a commit could not take, retried until they land.
        self._held = HeldChanges()

    # ------------------------------------------------------------------ lifecycle

    def run(self) -> None:
        """Take the seat (standing by while another process holds it), catch up, watch,
        and keep going until :meth:`stop` (or a signal) is called. Raises CannotWatch if
        this process cannot write the index folder."""
        try:
            if self._take_seat():  # else stopped while standing by
                self._watch_until_stopped()
        finally:
            self.finished.set()

    def _watch_until_stopped(self) -> None:
        try:
            self._previous_excepthook = threading.excepthook
            threading.excepthook = self._on_thread_exception
            logging.getLogger("watchdog.observers.inotify_c").addHandler(self._log_handler)
            logging.getLogger("watchdog.observers.inotify").addHandler(self._log_handler)
            self._write_health(state="catching up", catching_up=True)
            began = time.perf_counter()
            with Beating(self._write_health):
                self._start_watching()
                self._catch_up()
            release_free_memory()  # what the start-up freed (~15 MB at 1M reports)
            if self._stop.is_set():
                return
            took = round(time.perf_counter() - began, 3)
            self._write_health(state="watching", catching_up=False, catch_up_s=took)
            self._ready.set()
            self._loop()
        finally:
            self._shutdown()

    def stop(self) -> None:
        self._stop.set()
        self._child.stop()

    def wait_ready(self, timeout: float) -> bool:
        """True once the start-up catch-up is done and the watches are set."""
        return self._ready.wait(timeout)

    @property
    def watching(self) -> bool:
        """Whether this process holds the seat (is the index folder's watcher)."""
        return self.seat.held

    def _take_seat(self) -> bool:
        """Wait for the seat (False: stopped first). Says once who holds it meanwhile."""
        told = False
        while True:
            try:
                self.seat.take(self.kind)
            except SeatUnusable as exc:
                raise CannotWatch(
                    f"cannot keep {self.settings.index_dir} fresh: {exc}; answers come from "
                    "the index as it is"
                ) from None
            except SeatTaken as exc:
                if not told:
                    log.warning(
                        "%s watches %s; this trove %s stands by and takes over when it stops",
                        exc,
                        self.settings.index_dir,
                        self.kind,
                    )
                    told = True
                if self._stop.wait(SEAT_POLL_S):
                    return False
                continue
            if told:
                log.warning("trove %s (pid %d) took over watching", self.kind, os.getpid())
            self.health = Health(kind=self.kind)
            return True

    def _catch_up(self) -> None:
        """The start-up reconcile of every collection, with the watches already set (a
        change made meanwhile is applied after it); status says which have caught up."""
        for name in self.names:
            root = self.settings.source_root(name)
            if root is not None and folder_id(root) is not None:
                self._watch(name, root)
            else:
                self._set_collection(name, mode=None, why=_UNWATCHED if root else _UNSET)
        self._reconcile(self.names, why="start-up")

    def _on_thread_exception(self, args: threading.ExceptHookArgs) -> None:
        thread = args.thread
        if isinstance(thread, BaseThread) and type(thread).__module__.startswith("watchdog"):
            log.error(
                "watchdog thread %s died: %s: %s",
                thread.name,
                args.exc_type.__name__,
                args.exc_value,
            )
            self._watcher_crashed.set()
            return
        self._previous_excepthook(args)

    def _shutdown(self) -> None:
        if self._batcher is not None:
            # The batcher applies what it already holds before it stops.
            self._batcher.stop()
            self._batcher.join(timeout=60)
        pollers = [w for w in self._watches.values() if isinstance(w, Poller)]
        for watcher in (self._observer, *pollers):
            if watcher is not None:
                watcher.stop()
        for watcher in (self._observer, *pollers):
            if watcher is not None and watcher.is_alive():
                watcher.join(timeout=10)
        for name in ("watchdog.observers.inotify_c", "watchdog.observers.inotify"):
            logging.getLogger(name).removeHandler(self._log_handler)
        if threading.excepthook == self._on_thread_exception:
            threading.excepthook = self._previous_excepthook
        if self.seat.held:
            self._write_health(state="stopped", pending=0)
            self.seat.release()

    # ------------------------------------------------------------------ the main loop

    def _loop(self) -> None:
        interval = self.settings.daemon.reconcile_interval_s
        next_reconcile = time.monotonic() + interval
        next_beat = next_compact = 0.0
        # A short tick: roots that appear or are made anew are noticed within it.
        while not self._stop.wait(TICK_S):
            try:
                if self._overflowed.is_set():
                    self._overflowed.clear()
                    with self._health_lock:
                        self.health.overflows += 1
                    self._record_error("event queue overflowed: events were lost; reconciling")
                    self._reconcile(self.names, why="queue overflow")
                self._check_observer()
                self._check_roots()
                self._retry_held()
                if self._reconcile_requested:
                    names, self._reconcile_requested = list(self._reconcile_requested), set()
                    self._reconcile(names, why="requested")
                idle = time.time() - (self.health.last_event or 0) > IDLE_S
                if idle and time.monotonic() >= next_compact:
                    self._compact()
                    next_compact = time.monotonic() + IDLE_S
                if time.monotonic() >= next_reconcile:
                    self._reconcile(self.names, why="periodic")
                    next_reconcile = time.monotonic() + interval
                if time.monotonic() >= next_beat:
                    self._write_health()
                    next_beat = time.monotonic() + HEARTBEAT_S
            except Exception as exc:  # nothing stops the daemon
                log.exception("daemon loop")
                self._record_error(f"{type(exc).__name__}: {exc}")

    def _reconcile(self, names: list[str], why: str) -> None:
        """Reconcile ``names`` in a child process; a failure is logged and counted, and
        the other collections go on. At start-up, status says which have caught up."""
        if self._stop.is_set():
            return
        for name, outcome in self._child.run(names):
            if isinstance(outcome, Interrupted):
                return
            if isinstance(outcome, (WriteFault, ChildEnded)):
                self._hold(name, None, outcome)
            elif isinstance(outcome, BaseException):
                log.error("%s: reconcile (%s) failed", name, why, exc_info=outcome)
                self._record_error(f"{name}: reconcile failed: {outcome}")
            else:
                self._after(outcome, why)
            if why == "start-up":
                self._set_collection(name, caught_up=True)
        with self._health_lock:
            self.health.last_reconcile = time.time()

    def _compact(self) -> None:
        """Compact the small segments that batches leave, while nothing is happening."""
        for name, syncer in self.syncers.items():
            if self._stop.is_set():
                return
            try:
                if syncer.compact():
                    log.debug("%s: compacted", name)
                    with self.progress:
                        self.progress.notify_all()
            except Interrupted:
                return
            except Exception as exc:
                log.exception("%s: compacting failed", name)
                self._record_error(f"{name}: compacting failed: {exc}")

    def _after(self, summary: Summary, why: str) -> None:
        if summary.changed:
            log.info(
                "%s (%s): +%d ~%d -%d in %.2fs",
                summary.collection,
                why,
                summary.added,
                summary.updated,
                summary.deleted,
                summary.seconds,
            )
            with self._health_lock:
                self.health.last_commit = time.time()
        with self.progress:
            self.progress.notify_all()

    # ------------------------------------------------------------------ watching

    def _start_watching(self) -> None:
        quiet = self.settings.daemon.quiet_ms / 1000
        max_delay = max(quiet, self.settings.daemon.max_delay_ms / 1000)
        self._batcher = Batcher(quiet, max_delay, self._apply_batch)
        self._batcher.start()
        self._observer = Observer()
        self._observer.name = "trove-observer"
        self._observer.start()

    def _observer_kind(self) -> str:
        kinds = {"polling" if isinstance(w, Poller) else "inotify" for w in self._watches.values()}
        return "+".join(sorted(kinds)) or "none"

    def _mode_for(self, root: Path) -> tuple[str, str]:
        """How to watch a source folder, and why: (``events`` or ``poll``, reason)."""
        chosen = self.settings.daemon.watch
        if self._use_polling:
            return "poll", f"the inotify watcher failed {self._restarts} times"
        if chosen != "auto":
            return chosen, f'[daemon] watch = "{chosen}"'
        mount = filesystem_of(root)
        reason = polling_reason(mount)
        if reason is not None:
            return "poll", reason
        where = f"{mount.fstype} at {mount.mount_point}" if mount is not None else "this machine"
        return "events", f"inotify ({where}: a local filesystem)"

    def _watch(self, name: str, root: Path) -> None:
        """Watch one source folder (events or polling, per ``_mode_for``)."""
        assert self._observer is not None
        identity = folder_id(root)
        mode, why = self._mode_for(root)
        watch: ObservedWatch | Poller
        if mode == "poll":
            watch = self._poll(name, root)
        else:
            try:
                watch = self._observer.schedule(
                    self._handler, str(root), recursive=True, event_filter=INOTIFY_EVENTS
                )
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                    raise
                # Out of inotify watches or instances: poll this root (slower, never blind).
                limit = "watch" if exc.errno == errno.ENOSPC else "instance"
                mode, why = "poll", f"the kernel's inotify {limit} limit was reached"
                self._record_error(f"{name}: {exc.strerror or exc}; polling {root} instead")
                watch = self._poll(name, root)
        self._watches[name] = watch
        if identity is not None:
            self._root_ids[name] = identity
        self._set_collection(name, mode=mode, why=why)
        log.info("%s: watching %s by %s (%s)", name, root, mode, why)

    def _poll(self, name: str, root: Path) -> Poller:
        """A poller of one source folder, started (its first listing is made before it
        returns: a reconcile after it misses nothing)."""
        poller = Poller(
            root,
            self.sources[name],
            self.note_event,
            interval_s=self.settings.daemon.poll_interval_s,
            sweep_s=self.settings.daemon.sweep_s,
        )
        poller.start()
        return poller

    def _unschedule(self, name: str) -> None:
        watch = self._watches.pop(name, None)
        self._root_ids.pop(name, None)
        self._set_collection(name, mode=None, why=_UNWATCHED)
        if watch is None:
            return
        if isinstance(watch, Poller):
            watch.stop()
            return
        try:
            if self._observer is not None:
                self._observer.unschedule(watch)
        except (KeyError, OSError):
            pass

    def _check_roots(self) -> None:
        """Watch roots that appeared; drop (and empty) roots that went away."""
        for name in self.names:
            root = self.settings.source_root(name)
            if root is None:
                continue
            identity = folder_id(root)
            stale = name in self._stale_roots
            self._stale_roots.discard(name)
            if name in self._watches and (stale or identity != self._root_ids.get(name)):
                # Gone, or deleted and made anew: the old watch sees nothing any more.
                self._unschedule(name)
                if identity is None:
                    self._reconcile([name], why="source folder went away")
            if identity is not None and name not in self._watches:
                self._watch(name, root)
                # Files may have arrived before the watch did.
                self._reconcile([name], why="source folder appeared")

    def _set_collection(self, name: str, **values: Any) -> None:
        with self._health_lock:
            self.health.collections.setdefault(name, {"mode": None, "why": "", "caught_up": False})
            self.health.collections[name].update(values)
            self.health.observer = self._observer_kind()

    def _watcher_failed(self) -> bool:
        if self._observer is None or self._stop.is_set():
            return False
        if self._watcher_crashed.is_set() or not self._observer.is_alive():
            return True
        # watchdog reads every inotify watch of the process in one shared thread; if it
        # died (it can, on a folder made and removed at once) every watch is blind.
        shared = getattr(inotify_c.InotifyFD, "_instance", None)
        return shared is not None and not shared.is_alive()

    def _check_observer(self) -> None:
        if not self._watcher_failed():
            return
        self._watcher_crashed.clear()
        self._restarts += 1
        use_polling = self._restarts > MAX_WATCHER_RESTARTS
        self._record_error(
            "the file watcher stopped; "
            + ("falling back to polling" if use_polling else "restarting it")
            + " and reconciling"
        )
        old = self._observer
        inotify_names = [n for n, w in self._watches.items() if not isinstance(w, Poller)]
        for name in inotify_names:
            self._watches.pop(name, None)
            self._root_ids.pop(name, None)
        if old is not None:
            old.stop()
            old.join(timeout=5)
        with inotify_c.InotifyFD._global_lock:
            shared = inotify_c.InotifyFD._instance
            if shared is not None and not shared.is_alive():
                inotify_c.InotifyFD._instance = None
        self._observer = Observer()
        self._observer.name = "trove-observer"
        self._observer.start()
        self._use_polling = use_polling
        # _check_roots watches every root there is again and reconciles it; a root that
        # went away while nobody watched is reconciled too (its collection empties).
        self._check_roots()
        self._reconcile([n for n in self.names if n not in self._watches], why="watcher restarted")

    # ------------------------------------------------------------------ events

    def note_event(self, event: FileSystemEvent) -> None:
        now = time.time()
        if event.is_directory and event.event_type in ("deleted", "moved"):
            # A root deleted or moved away: its watch is dead even if a folder of the same
            # name (and maybe the same inode number) is back at once.
            src = os.fsdecode(event.src_path)
            for name in self.names:
                if str(self.settings.source_root(name)) == src:
                    self._stale_roots.add(name)
        with self._health_lock:
            self.health.last_event = now
            self.health.events += 1
            self._pending_events += 1
            first = self._pending_events == 1
        if first:  # readers in other processes see that changes are on their way
            self._write_health()
        if self._batcher is not None:
            self._batcher.handle_event(event)

    def _apply_batch(self, events: list[FileSystemEvent]) -> None:
        # Changes seen during the start-up catch-up are applied after it (the catch-up
        # holds the writer lock meanwhile, and may already have seen them).
        while not self._ready.wait(TICK_S):
            if self._stop.is_set():
                return  # the next start-up catch-up finds these changes
        touched: dict[str, set[str]] = {}
        for event in events:
            paths = [event.src_path]
            if event.event_type == "moved":
                paths.append(event.dest_path)
            for raw in paths:
                path = os.fsdecode(raw)
                for name, rel in locate(self.settings, self.sources, path, event.is_directory):
                    touched.setdefault(name, set()).add(rel)
        for name, rels in touched.items():
            if len(rels) > APPLY_MAX_PATHS:  # a burst: one walk costs less than a path each
                self._reconcile([name], why="burst")
                continue
            try:
                summary = self.syncers[name].apply(sorted(rels))
            except Interrupted:
                return  # stopping: the next start-up reconcile picks these changes up
            except WriteFault as exc:
                self._hold(name, rels, exc)
                continue
            except Exception as exc:
                log.exception("%s: applying a batch failed; reconciling", name)
                self._record_error(f"{name}: batch failed: {exc}")
                self._reconcile_requested.add(name)
                continue
            self._after(summary, "watch")
        with self._health_lock:
            self._pending_events = max(0, self._pending_events - len(events))
            self.health.batches += 1
        self._write_health()

    # ------------------------------------------------------------------ held changes

    def _hold(self, name: str, rels: set[str] | None, exc: WriteFault | ChildEnded) -> None:
        """Keep changes a commit could not take (``rels`` None: a whole reconcile), to
        retry them with backoff; one line says why, the first time."""
        if self._held.hold(name, rels, exc):
            log.warning("%s: %s; the changes are kept and retried until they land", name, exc)
        with self._health_lock:
            self.health.last_error = str(exc)
        self._write_health(fault=self._held.line())
        with self.progress:
            self.progress.notify_all()

    def _retry_held(self) -> None:
        for name, rels in self._held.due():
            if self._stop.is_set():
                return
            try:
                if rels is None:
                    summary = self._reconcile_one(name)
                else:
                    summary = self.syncers[name].apply(sorted(rels))
            except (WriteFault, ChildEnded) as exc:
                self._hold(name, set() if rels is not None else None, exc)
                continue
            except Interrupted:
                return
            since = self._held.landed(name)
            count = "every" if rels is None else str(len(rels))
            log.warning(
                "%s: %s held change(s) landed, %.1f s after the first failure",
                name,
                count,
                time.time() - since,
            )
            self._write_health(fault=self._held.line())
            self._after(summary, "retry")

    def _reconcile_one(self, name: str) -> Summary:
        """One collection reconciled in a child process: its summary, or it raises."""
        [(_, outcome)] = self._child.run([name])
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def health_snapshot(self) -> dict[str, Any]:
        """The daemon's health as the status file says it, from memory (it may not be
        writable while the disk is full)."""
        with self._health_lock:
            self.health.pending = self._pending_events + self._held.count()
            return self._health_dict()

    def _health_dict(self) -> dict[str, Any]:
        """The health as plain data (a copy); the caller holds ``_health_lock``."""
        data = dict(self.health.__dict__)
        data["collections"] = {n: dict(c) for n, c in self.health.collections.items()}
        return data

    def _record_error(self, message: str) -> None:
        log.error("%s", message)
        with self._health_lock:
            self.health.errors += 1
            self.health.last_error = message
        self._write_health()

    def _write_health(self, **changes: Any) -> None:
        with self._health_lock:
            for key, value in changes.items():
                setattr(self.health, key, value)
            self.health.heartbeat = time.time()
            self.health.pending = self._pending_events + self._held.count()
            data = self._health_dict()
        with self._status_file_lock:
            write_status_file(self.settings.index_dir / STATUS_FILE, data)
