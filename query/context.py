"""What every search needs: the settings and the open indexes, passed in, never global."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from indexer.config import Settings
from query.count_plan import DEFAULT_COSTS, CountCosts, CountPlan
from query.freshness import WatcherView
from query.indexes import Indexes

T = TypeVar("T")


@dataclass
class QueryContext:
    """The settings and index handles of one process, built once at its edge (CLI, server)."""

    settings: Settings
    indexes: Indexes
    # Data a search derives from an index and keeps between queries (e.g. a segment's
    # term list), keyed by what it was derived from; each search family uses its own key.
    memo: dict[str, Any] = field(default_factory=dict, repr=False)
    # How searches count a query, and the estimates they choose by (query/count_plan.py).
    plan: CountPlan = "cost"
    costs: CountCosts = DEFAULT_COSTS
    # The index folder's watcher as this process sees it (what answers' freshness says).
    watcher: WatcherView = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.watcher = WatcherView(self.settings)

    @classmethod
    def from_settings(cls, settings: Settings, engine: str = "whoosh") -> QueryContext:
        return cls(settings, Indexes(settings, engine))

    def kept(self, key: str, make: Callable[[], T]) -> T:
        """The memo's value under ``key``, made by ``make`` the first time it is asked for
        (two threads that race keep the first one stored)."""
        value: T | None = self.memo.get(key)
        if value is None:
            value = self.memo.setdefault(key, make())
        return value

    def close(self) -> None:
        self.indexes.close()
