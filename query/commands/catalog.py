"""The commands as the index holds them, read once per index generation (commands are
few: tiers 1 and 2 are work in memory), and what the command searches keep between
queries."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from indexer.engine.base import Snapshot
from indexer.sources.commands import _as_tags
from query.commands.models import COLLECTION, CommandMatch, CommandSummary
from query.commands.words import cjk_runs, name_words, text_words
from query.context import QueryContext
from query.freshness import Freshness, mark_stale, of_snapshot
from query.indexes import Derived, source_folder


@dataclass
class Command:
    """A command as the index holds it."""

    name: str
    key: str
    title: str
    description: str
    tags: list[str]
    is_dependency: bool
    frontmatter: dict[str, Any]
    words: list[str]  # of the name
    fields: dict[str, set[str]]
    cjk: dict[str, str]  # per field, its CJK runs (see cjk_runs)


@dataclass
class CommandCatalog:
    """Every command of one index generation, with the word lists tiers 1 and 2 use."""

    commands: list[Command]
    # word -> [(command index, field)] and the sorted words, for prefix look-ups
    postings: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    vocabulary: list[str] = field(default_factory=list)

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> CommandCatalog:
        commands: list[Command] = []
        everything = (s for segment, _ in snapshot.segments() for _, s in segment.live_stored())
        for stored in everything:
            if stored.get("kind") != "doc":
                continue
            meta = stored.get("frontmatter") or {}
            tags = _as_tags(meta.get("tags")) if "tags" in meta else stored.get("tags", "").split()
            other = " ".join(
                _flatten(v)
                for k, v in meta.items()
                if k not in ("title", "description", "tags", "is_dependency")
            )
            texts = {
                "title": stored.get("title", ""),
                "tags": " ".join(tags),
                "description": stored.get("description", ""),
                "frontmatter": other,
                "body": stored.get("body", ""),
            }
            commands.append(
                Command(
                    name=stored["name"],
                    key=stored["key"],
                    title=stored.get("title", ""),
                    description=stored.get("description", ""),
                    tags=tags,
                    is_dependency=bool(stored.get("is_dependency")),
                    frontmatter=meta,
                    words=name_words(stored["name"]),
                    fields={f: text_words(text) for f, text in texts.items()},
                    cjk={f: cjk_runs(text) for f, text in texts.items()},
                )
            )
        commands.sort(key=lambda c: c.name)
        catalog = cls(commands)
        postings: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for i, command in enumerate(commands):
            for field_name, words in command.fields.items():
                for word in words:
                    postings[word].append((i, field_name))
        catalog.postings = dict(postings)
        catalog.vocabulary = sorted(postings)
        return catalog


def _flatten(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k} {_flatten(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(_flatten(v) for v in value)
    return "" if value is None or isinstance(value, bool) else str(value)


@dataclass
class ReportMap:
    """Per document of the reports index: the command it belongs to and its day (a date
    ordinal; 0 undated)."""

    command: dict[int, str]
    day: dict[int, int]


class CommandsCache:
    """What the command searches keep between queries (one per process)."""

    def __init__(self) -> None:
        self._catalog: Derived[CommandCatalog] = Derived()
        self._reports: Derived[ReportMap] = Derived()

    def catalog(self, snapshot: Snapshot) -> CommandCatalog:
        return self._catalog.get(snapshot.stamp, lambda: CommandCatalog.from_snapshot(snapshot))

    def reports(self, snapshot: Snapshot) -> ReportMap:
        return self._reports.get(snapshot.stamp, lambda: _report_map(snapshot))


def _report_map(snapshot: Snapshot) -> ReportMap:
    mapping = ReportMap({}, {})
    for segment, base in snapshot.segments():
        days = segment.int_column("day")
        for name in segment.lexicon("command"):
            for docnum in segment.docs_with("command", [name]):
                mapping.command[base + docnum] = name
                mapping.day[base + docnum] = days[docnum]
    return mapping


def commands_cache(ctx: QueryContext) -> CommandsCache:
    return ctx.kept("commands", CommandsCache)


def commands_root(ctx: QueryContext) -> Path:
    return source_folder(ctx.settings, "commands")


def catalog_of(ctx: QueryContext) -> CommandCatalog:
    with catalogued(ctx) as (catalog, _):
        return catalog


@contextmanager
def catalogued(ctx: QueryContext) -> Iterator[tuple[CommandCatalog, Snapshot | None]]:
    """The catalog, and the snapshot of the commands index it comes from (held open)."""
    cache: CommandsCache = commands_cache(ctx)
    # An index never built is built first (commands are few).
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        yield (CommandCatalog([]) if snapshot is None else cache.catalog(snapshot)), snapshot


_Listed = TypeVar("_Listed", "CommandMatch", "CommandSummary")


def marked(
    ctx: QueryContext, snapshot: Snapshot | None, root: Path, hits: Sequence[_Listed]
) -> Freshness:
    """The answer's freshness, and each hit's ``stale`` set."""
    if snapshot is not None:
        mark_stale(snapshot, root, hits, lambda h: f"{h.name}.md")
    return of_snapshot(ctx.watcher, COLLECTION, snapshot)


def readable(root: Path, command: Command) -> bool:
    return os.access(root / command.key, os.R_OK) and (root / command.key).is_file()
