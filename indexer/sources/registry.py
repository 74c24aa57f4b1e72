"""The collections trove indexes, by name."""

from __future__ import annotations

from indexer.sources.base import Source
from indexer.sources.commands import CommandsSource
from indexer.sources.conversations import ConversationsSource
from indexer.sources.reports import ReportsSource

SOURCES: dict[str, type[Source]] = {
    "reports": ReportsSource,
    "commands": CommandsSource,
    "conversations": ConversationsSource,
}


def get_source(name: str) -> Source:
    return SOURCES[name]()
