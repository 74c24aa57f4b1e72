"""What `trove status` reports: each collection's index, and the daemon's health."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from indexer.building import pid_alive, read_build
from indexer.config import Settings
from indexer.sources.registry import SOURCES, get_source
from indexer.store import CollectionIndex, ForeignIndexError

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


def read_daemon_status(settings: Settings) -> dict[str, Any] | None:
    """The daemon's status file, with ``alive`` (its pid runs) and ``stuck`` added."""
    try:
        data = json.loads(status_file(settings).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid = data.get("pid")
    data["alive"] = isinstance(pid, int) and pid_alive(pid)
    heartbeat = data.get("heartbeat")
    # The daemon beats at least every few seconds; a minute of silence means it is stuck.
    data["stuck"] = bool(
        data["alive"] and isinstance(heartbeat, (int, float)) and time.time() - heartbeat > STUCK_S
    )
    return data


def as_json(statuses: list[CollectionStatus], daemon: dict[str, Any] | None) -> dict[str, Any]:
    return {"collections": [asdict(s) for s in statuses], "daemon": daemon}


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
