"""search_commands: the three tiers run, merged (a command once, under its highest
tier, with a bonus for what its other tiers found) and paged."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from indexer.engine.base import Snapshot
from query import budget, paging, tools
from query.args import check_query
from query.commands.catalog import (
    CommandCatalog,
    CommandsCache,
    catalogued,
    commands_cache,
    commands_root,
    marked,
    readable,
)
from query.commands.models import CommandMatch, CommandSearchResponse
from query.commands.tiers import EVIDENCE_BONUS, Found, check_deadline, tier1, tier2, tier3
from query.commands.words import query_keywords, report_words
from query.context import QueryContext


def search_commands(
    ctx: QueryContext,
    query: str,
    max_results: int = tools.SEARCH_COMMANDS_RESULTS.default,
    offset: int = 0,
) -> CommandSearchResponse:
    """Commands for a job, by file name (tier 1), content (tier 2) and reports (tier 3).

    Commands marked ``is_dependency: true`` and commands whose file is gone are left out.
    SEARCH_TIMEOUT past ``[commands] search_timeout_ms``.
    """
    started = time.monotonic()
    text = check_query(query)
    tools.SEARCH_COMMANDS_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
    root = commands_root(ctx)
    deadline = started + ctx.settings.commands.search_timeout_ms / 1000
    with catalogued(ctx) as (catalog, snapshot):
        found = _search(ctx, catalog, snapshot, root, text, max_results, offset, started, deadline)
    tools.SEARCH_COMMANDS_RESULTS.fit(found, "results", offset, max_results)
    return found


def _search(
    ctx: QueryContext,
    catalog: CommandCatalog,
    snapshot: Snapshot | None,
    root: Path,
    text: str,
    max_results: int,
    offset: int,
    started: float,
    deadline: float,
) -> CommandSearchResponse:
    check_deadline(deadline)
    visible = {i for i, c in enumerate(catalog.commands) if not c.is_dependency}
    keywords = query_keywords(text)

    found: list[Found] = []
    if keywords:
        found += tier1([catalog.commands[i] for i in sorted(visible)], keywords)
        check_deadline(deadline)
        found += tier2(catalog, visible, keywords, deadline)
        check_deadline(deadline)
    reports_root = ctx.settings.source_root("reports")
    if reports_root is not None and reports_root.is_dir():
        by_name = {catalog.commands[i].name: catalog.commands[i] for i in visible}
        cache: CommandsCache = commands_cache(ctx)
        # A reports index never built is no evidence: building it (a minute for 10k
        # reports) is for reindex, the watcher or search_reports, not this deadline.
        with ctx.indexes.snapshot("reports") as reports:
            if reports is not None:
                found += tier3(reports, cache, by_name, report_words(text), date.today(), deadline)
        check_deadline(deadline)

    alive = [m for m in _merge(found) if readable(root, m.found.command)]
    alive.sort(key=lambda m: (-m.score, -m.bonus, m.found.command.name))
    shown, more = paging.page(alive, offset, max_results)
    results = [
        CommandMatch(
            id=m.found.command.name,
            name=m.found.command.name,
            score=round(m.score, 3),
            tier=m.found.tier,
            description=budget.clip(m.found.command.description),
            match_reason=budget.clip(m.reason),
        )
        for m in shown
    ]
    fresh = marked(ctx, snapshot, root, results)
    return CommandSearchResponse(
        results=results,
        search_time_ms=round((time.monotonic() - started) * 1000, 1),
        total_found=len(alive),
        next_offset=more,
        freshness=fresh,
    )


@dataclass
class _Merged:
    found: Found  # of the highest tier
    score: float
    bonus: float  # what the other tiers added, up to EVIDENCE_BONUS
    reason: str


def _merge(found: list[Found]) -> list[_Merged]:
    """One entry per command: its highest tier, its best score plus a bonus for what
    its other tiers found, every tier's reason."""
    by_name: dict[str, list[Found]] = defaultdict(list)
    for f in found:
        by_name[f.command.name].append(f)
    merged = []
    for finds in by_name.values():
        finds.sort(key=lambda f: f.tier)
        best = max(finds, key=lambda f: f.score)
        # Each other tier's raw score closes part of the gap to a full bonus, so more
        # evidence counts for more, never past EVIDENCE_BONUS.
        missing = math.prod(1 - min(1.0, max(0.0, f.raw)) for f in finds if f is not best)
        bonus = EVIDENCE_BONUS * (1 - missing)
        merged.append(
            _Merged(
                finds[0],
                min(1.0, best.score + bonus),
                bonus,
                "; ".join(f.reason for f in finds),
            )
        )
    return merged
