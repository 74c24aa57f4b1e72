"""What the status page shows: what `trove status` and /health read."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from indexer.config import Settings
from indexer.status import STUCK_S, CollectionStatus, all_status, read_daemon_status


@dataclass
class StatusPage:
    index_dir: str
    collections: list[CollectionStatus]
    daemon: dict[str, Any] | None
    health: str  # "ok" or "unavailable", as /health says
    # The latest commit of each collection's index, newest first.
    commits: list[tuple[str, float]]


def status(
    settings: Settings,
    daemon_alive: Callable[[], bool] | None = None,
    daemon_health: Callable[[], dict[str, Any]] | None = None,
) -> StatusPage:
    collections = all_status(settings)
    daemon = read_daemon_status(settings)
    if daemon is not None and daemon_health is not None:
        # In this process: the daemon's own view (as /health gives it).
        daemon = {**daemon, **daemon_health()}
        daemon["stuck"] = time.time() - daemon["heartbeat"] > STUCK_S
    if daemon is not None and daemon_alive is not None:
        daemon["alive"] = daemon_alive()
    running = bool(daemon and daemon.get("alive"))
    ok = running and daemon is not None and not daemon.get("stuck") and not daemon.get("fault")
    commits = sorted(
        ((c.collection, c.last_update) for c in collections if c.last_update),
        key=lambda pair: -pair[1],
    )
    return StatusPage(
        index_dir=str(settings.index_dir),
        collections=collections,
        daemon=daemon,
        health="ok" if ok else "unavailable",
        commits=commits,
    )


def daemon_line(daemon: dict[str, Any] | None) -> str:
    """The daemon's state in a few words."""
    if daemon is None:
        return "not running (never started on this index)"
    if not daemon.get("alive"):
        if daemon.get("state") == "stopped":
            return f"stopped (pid {daemon.get('pid')})"
        return f"not running (last pid {daemon.get('pid')}, crashed or killed)"
    line = f"{daemon.get('state', 'running')}, pid {daemon.get('pid')}"
    if daemon.get("stuck"):
        line += "; STUCK: no heartbeat for over a minute"
    if daemon.get("fault"):
        line += f"; {daemon['fault']}, retrying"
    return line
