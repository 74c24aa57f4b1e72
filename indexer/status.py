"""What `trove status`, /status and /health report: each collection's index, and the
watcher's health (the process that keeps the index folder fresh: indexer/daemon.py)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from indexer.building import pid_alive, read_build
from indexer.collection import CollectionIndex
from indexer.config import Settings
from indexer.errors import ForeignIndexError
from indexer.sources.registry import SOURCES, get_source

STATUS_FILE = "daemon.json"


@dataclass
class CollectionStatus:
    collection: str
    source: str | None
    source_exists: bool
    built: bool
    documents: int
    index_bytes: int
    last_update: float | None
    problem: str = ""
    # While a first build runs: "indexing (1,200 of 5,000 files read; 8 s so far)".
    indexing: str = ""


# The daemon beats every few seconds; this long a silence means it is stuck.
STUCK_S = 60


def _folder_bytes(path: Path) -> int:
    total = 0
    try:
        for entry in os.scandir(path):
            if entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return total


def collection_status(settings: Settings, name: str) -> CollectionStatus:
    source = get_source(name)
    root = settings.source_root(name)
    index = CollectionIndex(settings.index_dir, source)
    status = CollectionStatus(
        collection=name,
        source=str(root) if root else None,
        source_exists=bool(root and root.is_dir()),
        built=False,
        documents=0,
        index_bytes=0,
        last_update=None,
    )
    try:
        marker = index.check_ours()
    except ForeignIndexError as exc:
        status.problem = str(exc)
        return status
    if marker is None:
        return status
    if marker.get("damaged"):
        status.problem = "the index is damaged: the next reindex rebuilds it"
    elif marker.get("schema_version") != source.schema_version:
        status.problem = (
            f"index of schema version {marker.get('schema_version')}, this trove reads "
            f"{source.schema_version}: the next reindex rebuilds it"
        )
    build = read_build(index.path)
    if build is not None:
        status.indexing = build.describe()
    status.built = index.open() is not None and build is None
    status.documents = index.doc_count()
    status.index_bytes = _folder_bytes(index.path)
    status.last_update = marker.get("last_update")
    return status


def all_status(settings: Settings) -> list[CollectionStatus]:
    return [collection_status(settings, name) for name in SOURCES]


def builds(settings: Settings) -> dict[str, dict[str, Any]]:
    """The collections whose first build is running, with its progress."""
    found = {name: read_build(settings.index_dir / name) for name in SOURCES}
    return {name: build.as_dict() for name, build in found.items() if build is not None}


def status_file(settings: Settings) -> Path:
    return settings.index_dir / STATUS_FILE


class LocalWatcher(Protocol):
    """A watcher running in this process (indexer.daemon.Daemon), whose own view of its
    health is fresher than its status file (which a full disk may keep from changing)."""

    @property
    def watching(self) -> bool: ...

    def health_snapshot(self) -> dict[str, Any]: ...


def read_watcher_status(
    settings: Settings, local: LocalWatcher | None = None
) -> dict[str, Any] | None:
    """The watcher's status (None: no watcher ever ran on this index folder), with
    ``alive`` (its process runs and has not stopped) and ``stuck`` (alive, and silent for
    STUCK_S) added. When ``local`` holds the seat, its own view; else the status file."""
    if local is not None and local.watching:
        return with_liveness({**local.health_snapshot(), "alive": True})
    data = parse_status(_read_status_file(settings))
    return None if data is None else with_liveness(data)


def _read_status_file(settings: Settings) -> bytes | None:
    try:
        return status_file(settings).read_bytes()
    except OSError:
        return None


def parse_status(raw: bytes | None) -> dict[str, Any] | None:
    """The status file's fields (None for a missing or unreadable file)."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def with_liveness(data: dict[str, Any]) -> dict[str, Any]:
    """The status with ``alive`` and ``stuck`` worked out now (``alive`` kept if set)."""
    data = dict(data)
    if "alive" not in data:
        pid = data.get("pid")
        data["alive"] = isinstance(pid, int) and data.get("state") != "stopped" and pid_alive(pid)
    heartbeat = data.get("heartbeat")
    # The watcher beats at least every few seconds; a minute of silence means it is stuck.
    data["stuck"] = bool(
        data["alive"] and isinstance(heartbeat, (int, float)) and time.time() - heartbeat > STUCK_S
    )
    return data


def caught_up(status: dict[str, Any] | None) -> bool:
    """Whether a live watcher has ended its start-up catch-up of every collection."""
    return bool(
        status
        and status.get("alive")
        and not status.get("catching_up")
        and status.get("state") == "watching"
    )


def health_word(status: dict[str, Any] | None, indexing: bool) -> str:
    """What /health says: "ok" once a live watcher has caught up every collection and
    nothing is wrong; else why not: "indexing" (a first build runs), "catching up",
    "unavailable" (no watcher, a stuck one, or changes that cannot land)."""
    if status is None or not status.get("alive") or status.get("stuck") or status.get("fault"):
        return "unavailable"
    if indexing:
        return "indexing"
    return "ok" if caught_up(status) else "catching up"


def watcher_line(status: dict[str, Any] | None) -> str:
    """The watcher in one line, as `trove status` and the status page show it."""
    if status is None:
        return (
            "watcher: none has run on this index: it changes only with trove reindex (trove "
            "daemon, serve or mcp keep it fresh)"
        )
    who = f"trove {status.get('kind') or 'daemon'} (pid {status.get('pid')})"
    if not status.get("alive"):
        if status.get("state") == "stopped":
            return f"watcher: none runs; the last, {who}, stopped at {local_time(status.get('heartbeat'))}"
        return f"watcher: none runs; the last, {who}, ended without stopping (killed or crashed)"
    state = "catching up (start-up reconcile)" if status.get("catching_up") else status.get("state")
    line = f"watcher: {who} since {local_time(status.get('started'))}, {state}"
    if status.get("stuck"):
        line += f"; STUCK: no heartbeat since {local_time(status.get('heartbeat'))}"
    if status.get("fault"):
        line += f"; {status['fault']}, retrying"
    line += (
        f"; last event {local_time(status.get('last_event'))}, last commit "
        f"{local_time(status.get('last_commit'))}, pending {status.get('pending', 0)}, "
        f"errors {status.get('errors', 0)}"
    )
    if status.get("last_error"):
        line += f" (last: {status['last_error']})"
    return line


def watch_lines(status: dict[str, Any] | None) -> list[str]:
    """Per collection, how the live watcher watches it and why, and its catch-up."""
    if status is None or not status.get("alive"):
        return []
    lines = []
    for name, state in (status.get("collections") or {}).items():
        mode = state.get("mode") or "not watched"
        caught = "caught up" if state.get("caught_up") else "catching up"
        lines.append(f"{name}: {mode} ({state.get('why') or 'no reason given'}); {caught}")
    return lines


def as_json(statuses: list[CollectionStatus], watcher: dict[str, Any] | None) -> dict[str, Any]:
    return {"collections": [asdict(s) for s in statuses], "watcher": watcher}


def human_size(n: float) -> str:
    """Bytes as people read them: "512 B", "1.5 KB", "85.7 MB"."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def local_time(ts: float | None) -> str:
    """A time stamp as local date and time, or "never"."""
    if not ts:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
