"""search: every collection at once, each searched with its own ranking, the lists fused by
reciprocal rank (k = 60), so that no collection's score scale dominates.

Each hit's ``id`` is what that collection's get tool takes: ``command/report`` for a report
(get_report), a command's name (get_command), ``path:line`` for a conversation line, an
ELOG id (get_elog_thread).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from query.args import check_query, check_range
from query.commands import search_commands
from query.context import QueryContext
from query.elog import ElogHit, search_elog
from query.errors import TroveError
from query.freshness import Freshness, combined
from query.reports import ReportHit, search_reports
from query.workspace import search_workspace

MAX_RESULTS = 50
RRF_K = 60
Collection = Literal["reports", "commands", "conversations", "elog"]
COLLECTIONS: tuple[Collection, ...] = ("reports", "commands", "conversations", "elog")


class Hit(BaseModel):
    collection: str = Field(description="reports, commands, conversations or elog.")
    id: str = Field(
        description="What the collection's get tool takes: command/report (get_report), a "
        "command name (get_command), path:line of a conversation, an ELOG id "
        "(get_elog_thread)."
    )
    title: str = Field(
        description="The report's name, command's name, conversation or entry title."
    )
    date: str | None = Field(description="ISO 8601 date, when the document has one.")
    snippet: str = Field(description="Text around the match.")
    link: str | None = Field(description="URL of the document, when it has one.")
    score: float = Field(description="Reciprocal-rank score: 1 / (60 + rank in its collection).")
    match: str = Field(description="How it matched, in its collection's words (exact, words, ...).")
    stale: bool = Field(
        default=False,
        description="Its file changed after the index read it: the get tool shows it as it is.",
    )


class SearchResponse(BaseModel):
    hits: list[Hit] = Field(description="Best first, every collection fused by reciprocal rank.")
    by_collection: dict[str, int] = Field(
        description="Per collection searched, how many documents (or lines) matched."
    )
    note: str | None = Field(
        default=None, description="Collections that could not be searched, and why."
    )
    freshness: Freshness | None = Field(
        description="How current the indexes read are, together: the oldest of their "
        "commits, the watcher (mode poll if it polls any of them), its pending changes, "
        "catching_up if any is; null when no collection could be searched."
    )


def search(
    ctx: QueryContext,
    query: str,
    collections: list[Collection] | list[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    max_results: int = 10,
) -> SearchResponse:
    """Search every collection (or ``collections``) for ``query``; ``since``/``until``
    (YYYY-MM-DD, inclusive) keep dated documents in that span (commands have no date and
    are left out when either is given). Raises TroveError: INVALID_QUERY,
    INVALID_ARGUMENT, INVALID_DATE_RANGE."""
    text = check_query(query)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    names = list(dict.fromkeys(collections)) if collections else list(COLLECTIONS)
    unknown = [n for n in names if n not in COLLECTIONS]
    if unknown:
        raise TroveError(
            "INVALID_ARGUMENT",
            f"unknown collection {', '.join(map(repr, unknown))}; the collections are "
            f"{', '.join(COLLECTIONS)}",
        )
    low, high = _day(since, "since"), _day(until, "until")
    if low and high and low > high:
        raise TroveError("INVALID_DATE_RANGE", f"since {since} is after until {until}")
    if low or high:
        names = [n for n in names if n != "commands"]
    depth = min(MAX_RESULTS, max_results * 2)
    searches: dict[str, Callable[[], tuple[list[Hit], int, Freshness]]] = {
        "reports": lambda: _reports(ctx, text, depth),
        "commands": lambda: _commands(ctx, text, depth),
        "conversations": lambda: _conversations(ctx, text, depth),
        "elog": lambda: _elog(ctx, text, depth, since, until),
    }
    fused: list[tuple[float, int, Hit]] = []
    by_collection: dict[str, int] = {}
    problems: list[str] = []
    read: list[Freshness] = []
    for order, name in enumerate(names):
        try:
            hits, total, fresh = searches[name]()
        except TroveError as exc:
            if exc.is_input_error and len(names) == 1:
                raise
            problems.append(f"{name}: {exc.message}")
            continue
        read.append(fresh)
        hits = [h for h in hits if _within(h.date, low, high)]
        by_collection[name] = total if not (low or high) or name == "elog" else len(hits)
        for rank, hit in enumerate(hits, 1):
            hit.score = round(1.0 / (RRF_K + rank), 6)
            fused.append((hit.score, order, hit))
    fused.sort(key=lambda t: (-t[0], t[1]))
    return SearchResponse(
        hits=[hit for _, _, hit in fused[:max_results]],
        by_collection=by_collection,
        note="; ".join(problems) or None,
        freshness=combined(read),
    )


def _day(value: str | None, name: str) -> date | None:
    if value is None or not value.strip():
        return None
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        raise TroveError(
            "INVALID_DATE_RANGE", f"{name} must be a day, YYYY-MM-DD; got {value!r}"
        ) from None


def _within(when: str | None, low: date | None, high: date | None) -> bool:
    if low is None and high is None:
        return True
    if not when:
        return False
    try:
        day = date.fromisoformat(when[:10]) if len(when) >= 10 else None
    except ValueError:
        day = None
    if day is None:  # a month folder (YYYY-MM): within if the month meets the span
        first = date.fromisoformat(when[:7] + "-01")
        last = date(first.year + first.month // 12, first.month % 12 + 1, 1)
        return (high is None or first <= high) and (low is None or last > low)
    return (low is None or day >= low) and (high is None or day <= high)


def _reports(ctx: QueryContext, text: str, depth: int) -> tuple[list[Hit], int, Freshness]:
    answer = search_reports(ctx, text, max_results=depth)
    hits = report_hits(answer.results)
    return hits, len(hits), answer.freshness


def report_hits(results: Iterable[ReportHit]) -> list[Hit]:
    """search_reports's results as hits of every collection's search."""
    return [
        Hit(
            collection="reports",
            id=f"{r.command_name}/{r.report_name}",
            title=r.report_name,
            date=r.date,
            snippet=r.excerpt,
            link=r.link,
            score=0.0,
            match=r.match,
            stale=r.stale,
        )
        for r in results
    ]


def _commands(ctx: QueryContext, text: str, depth: int) -> tuple[list[Hit], int, Freshness]:
    answer = search_commands(ctx, text, max_results=depth)
    hits = [
        Hit(
            collection="commands",
            id=c.name,
            title=c.name,
            date=None,
            snippet=c.description,
            link=None,
            score=0.0,
            match=c.tier,
            stale=c.stale,
        )
        for c in answer.results
    ]
    return hits, answer.total_found, answer.freshness


def _conversations(ctx: QueryContext, text: str, depth: int) -> tuple[list[Hit], int, Freshness]:
    answer = search_workspace(ctx, text, max_results=depth)
    hits = [
        Hit(
            collection="conversations",
            id=f"{w.path}:{w.line}",
            title=w.conversation,
            date=w.date,
            snippet=w.excerpt,
            link=None,
            score=0.0,
            match=w.match,
            stale=w.stale,
        )
        for w in answer.results
    ]
    return hits, answer.total_found, answer.freshness


def _elog(
    ctx: QueryContext, text: str, depth: int, since: str | None, until: str | None
) -> tuple[list[Hit], int, Freshness]:
    answer = search_elog(ctx, text, since=since, until=until, max_results=depth)
    return elog_hits(answer.hits), answer.total, answer.freshness


def elog_hits(found: Iterable[ElogHit], unmatched: str = "words") -> list[Hit]:
    """search_elog's hits as hits of every collection's search, with their ELOG score
    (``unmatched``: the match of a hit of a regex or of no query, which have none)."""
    return [
        Hit(
            collection="elog",
            id=str(e.elog_id),
            title=e.title,
            date=e.date,
            snippet=e.snippet,
            link=e.link,
            score=e.score,
            match=e.match or unmatched,
            stale=e.stale,
        )
        for e in found
    ]
