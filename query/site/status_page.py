"""What the status page shows: what `trove status` and /health read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from indexer.status import CollectionStatus, all_status, builds, health_word, watch_lines
from indexer.status import watcher_line as line_of
from query.freshness import WatcherView


@dataclass
class StatusPage:
    index_dir: str
    collections: list[CollectionStatus]
    watcher: dict[str, Any] | None
    watcher_line: str
    # Per collection: how it is watched and why, and its catch-up.
    watch_lines: list[str]
    health: str  # as /health says: ok, indexing, catching up or unavailable
    # The latest commit of each collection's index, newest first.
    commits: list[tuple[str, float]]


def status(view: WatcherView) -> StatusPage:
    settings = view.settings
    collections = all_status(settings)
    watcher = view.status()
    commits = sorted(
        ((c.collection, c.last_update) for c in collections if c.last_update),
        key=lambda pair: -pair[1],
    )
    return StatusPage(
        index_dir=str(settings.index_dir),
        collections=collections,
        watcher=watcher,
        watcher_line=line_of(watcher),
        watch_lines=watch_lines(watcher),
        health=health_word(watcher, bool(builds(settings))),
        commits=commits,
    )
