"""How fresh an answer is: the commit it read, the watcher keeping that index fresh, and
the hits whose files changed after that commit.

Every answer of a search or listing tool over an index carries a ``Freshness``; each of
its hits carries ``stale``. The watcher (indexer/daemon.py) runs in one process per
index folder; this process learns of it from its own in-process watcher when that one
holds the seat, else from the status file it writes (re-read only when it changed).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field

from indexer.config import Settings
from indexer.engine.base import Snapshot
from indexer.files import regular_file_stat
from indexer.seat import KINDS
from indexer.status import LocalWatcher, parse_status, status_file, with_liveness


class WatcherInfo(BaseModel):
    """The process keeping an index fresh."""

    pid: int = Field(description="Its process id.")
    kind: Literal["daemon", "serve", "mcp"] = Field(
        description="The command it runs: trove daemon, trove serve or trove mcp."
    )
    mode: Literal["events", "poll"] = Field(
        description="How it sees changes: filesystem events (at once), or polling (network "
        "and FUSE filesystems: within [daemon] poll_interval_s, in-place edits within "
        "sweep_s)."
    )


class Freshness(BaseModel):
    """How current an answer is."""

    as_of: str | None = Field(
        description="ISO 8601 time of the newest commit the answer read (null: the index "
        "was never built). For list_command_reports, which lists the folder itself, the "
        "time of the listing."
    )
    watcher: WatcherInfo | None = Field(
        description="The process keeping the index fresh; null when none runs: then the "
        "index changes only with trove reindex (start trove daemon, serve or mcp)."
    )
    pending: int = Field(
        description="Changes the watcher has seen and not yet committed (they show within "
        "about a second)."
    )
    catching_up: bool = Field(
        description="True while the watcher's start-up reconcile runs: files changed while "
        "no watcher ran may not show yet."
    )


def iso_time(seconds: float) -> str:
    """A time stamp as ISO 8601 UTC with milliseconds ('2026-11-27T09:31:58.120Z')."""
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class WatcherView:
    """This process's view of the index folder's watcher (one per query context)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # The watcher this process runs, if any (it answers from memory while it holds
        # the seat; a stand-by reads the status file like any other process).
        self.local: LocalWatcher | None = None
        self._lock = threading.Lock()
        self._seen: tuple[tuple[int, int, int], dict[str, Any] | None] | None = None

    def status(self) -> dict[str, Any] | None:
        """The watcher's status with ``alive`` and ``stuck`` (None if none ever ran)."""
        local = self.local
        if local is not None and local.watching:
            return with_liveness({**local.health_snapshot(), "alive": True})
        path = status_file(self.settings)
        try:
            st = os.stat(path)
        except OSError:
            return None
        signature = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            if self._seen is None or self._seen[0] != signature:
                try:
                    raw: bytes | None = path.read_bytes()
                except OSError:
                    raw = None
                self._seen = (signature, parse_status(raw))
            data = self._seen[1]
        return None if data is None else with_liveness(data)

    def freshness(self, collection: str, committed: float | None) -> Freshness:
        """The freshness of an answer from ``collection`` as of ``committed``."""
        status = self.status()
        watcher = None
        catching_up = False
        pending = 0
        if status is not None and status.get("alive"):
            state = (status.get("collections") or {}).get(collection) or {}
            kind = status.get("kind")
            watcher = WatcherInfo(
                pid=int(status.get("pid") or 0),
                kind=kind if kind in KINDS else "daemon",
                mode="poll" if state.get("mode") == "poll" else "events",
            )
            catching_up = status.get("state") in ("starting", "catching up") and not state.get(
                "caught_up"
            )
            pending = int(status.get("pending") or 0)
        return Freshness(
            as_of=None if committed is None else iso_time(committed),
            watcher=watcher,
            pending=pending,
            catching_up=catching_up,
        )


def of_snapshot(view: WatcherView, collection: str, snapshot: Snapshot | None) -> Freshness:
    """The freshness of an answer read from ``snapshot`` (None: never built)."""
    return view.freshness(collection, None if snapshot is None else snapshot.committed)


def combined(parts: Iterable[Freshness]) -> Freshness | None:
    """One freshness for an answer read from several collections: the oldest commit, the
    watcher (polling if it polls any of them), all pending changes, catching up if any
    collection is."""
    parts = list(parts)
    if not parts:
        return None
    times = [p.as_of for p in parts if p.as_of is not None]
    watchers = [p.watcher for p in parts if p.watcher is not None]
    watcher = None
    if watchers:
        mode: Literal["events", "poll"] = (
            "poll" if any(w.mode == "poll" for w in watchers) else "events"
        )
        watcher = watchers[0].model_copy(update={"mode": mode})
    return Freshness(
        as_of=min(times) if times else None,
        watcher=watcher,
        pending=max(p.pending for p in parts),
        catching_up=any(p.catching_up for p in parts),
    )


def stale_files(snapshot: Snapshot, root: Path, files: Iterable[str]) -> set[str]:
    """The files (paths relative to ``root``) that changed since the snapshot's commit
    recorded them: another mtime or size, or gone."""
    stale = set()
    for rel in set(files):
        recorded = snapshot.file_state(rel)
        if recorded is None or regular_file_stat(os.path.join(root, rel)) != recorded:
            stale.add(rel)
    return stale


class _MayBeStale(Protocol):
    stale: bool


H = TypeVar("H", bound=_MayBeStale)


def mark_stale(
    snapshot: Snapshot, root: Path, hits: Iterable[H], file_of: Callable[[H], str]
) -> None:
    """Set each hit's ``stale``: its file (``file_of``: its path relative to ``root``)
    changed after the snapshot's commit."""
    hits = list(hits)
    stale = stale_files(snapshot, root, map(file_of, hits))
    for hit in hits:
        hit.stale = file_of(hit) in stale


def as_of_local(fresh: Freshness) -> str:
    """The answer's commit time as local date and time ('never' if none)."""
    if fresh.as_of is None:
        return "never"
    moment = dt.datetime.fromisoformat(fresh.as_of)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def summary(fresh: Freshness) -> str:
    """The freshness in a few words: 'as of ...; kept fresh by trove mcp (pid 12, events)'."""
    line = f"index as of {as_of_local(fresh)}"
    w = fresh.watcher
    if w is None:
        return line + "; no watcher keeps it fresh"
    line += f"; kept fresh by trove {w.kind} (pid {w.pid}, {w.mode})"
    if fresh.catching_up:
        line += ", catching up"
    if fresh.pending:
        line += f", {fresh.pending} change{'s' if fresh.pending != 1 else ''} pending"
    return line


def warning(fresh: Freshness | None, stale: int) -> str | None:
    """One line for people when an answer may not reflect the files as they are: no
    watcher, a watcher still catching up, or hits whose files changed since."""
    if fresh is None:
        return None
    parts = []
    if fresh.watcher is None:
        parts.append(
            f"no watcher keeps the index fresh: it is as of {as_of_local(fresh)} (trove daemon, "
            "serve or mcp keep it fresh; trove reindex brings it up to date once)"
        )
    elif fresh.catching_up:
        parts.append("the watcher is still catching up with changes made while none ran")
    if stale:
        parts.append(
            f"{stale} hit{'s' if stale != 1 else ''} changed on disk after the index read "
            f"{'them' if stale != 1 else 'it'} (stale)"
        )
    return "; ".join(parts) or None
