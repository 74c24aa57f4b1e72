"""The collections trove indexes, by name."""

from __future__ import annotations

from indexer.sources.base import Source
from indexer.sources.commands import CommandsSource
from indexer.sources.conversations import ConversationsSource
from indexer.sources.elog import ElogSource
from indexer.sources.reports import ReportsSource

SOURCES: dict[str, type[Source]] = {
    "reports": ReportsSource,
    "commands": CommandsSource,
    "conversations": ConversationsSource,
    "elog": ElogSource,
}


def get_source(name: str) -> Source:
    return SOURCES[name]()
