"""search: every collection at once, each searched with its own ranking, the lists fused by
reciprocal rank (k = 60), so that no collection's score scale dominates.

Each hit's ``id`` is what that collection's get tool takes: ``command/report`` for a report
(get_report), a command's name (get_command), ``path:line`` for a conversation line (the
path relative to the conversations folder: get_conversation), an ELOG id
(get_elog_thread).

Pages: a hit at rank r in its collection scores 1 / (60 + r), so the fused first m hits
come from the collections' first m each; every collection's list is read page after
page (its own paging) until it holds m hits in the dates asked for, or ends. Page k+1
then continues page k exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

from pydantic import BaseModel, Field

from query import paging, syntax, tools
from query.args import check_query
from query.commands import search_commands
from query.context import QueryContext
from query.elog import ElogHit, search_elog
from query.errors import TroveError
from query.freshness import Freshness, combined
from query.hit_texts import HitTexts
from query.reports import ReportHit, search_reports
from query.syntax import COLLECTIONS, Collection
from query.workspace import search_workspace

RRF_K = 60


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
    line: int | None = Field(
        default=None,
        description="For a report or conversation hit: the 1-based line of the match.",
    )
    heading: str | None = Field(
        default=None,
        description="For a report or conversation hit: the nearest markdown heading above "
        "that line, or null.",
    )
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
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
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
    max_results: int = tools.SEARCH_RESULTS.default,
    offset: int = 0,
) -> SearchResponse:
    """Search every collection (or ``collections``) for ``query``, read in the query
    language of query/syntax.py (phrases, -word, OR, in:, command:, since:, until:,
    category:, system:, domain:); ``since``/``until`` (YYYY-MM-DD, inclusive) keep dated
    documents in that span (commands have no date and are left out when a date is given);
    the page from hit ``offset`` on. Raises TroveError: INVALID_QUERY, INVALID_ARGUMENT,
    INVALID_DATE_RANGE."""
    text = check_query(query)
    tools.SEARCH_RESULTS.check(max_results)
    offset = tools.check_offset(offset, max_results)
    parsed = syntax.parse(text, require_words=False)
    scope = Scope.of(parsed, collections, since, until)
    want = paging.window(offset, max_results)
    texts = HitTexts(ctx)
    fused: list[tuple[float, int, Hit]] = []
    by_collection: dict[str, int] = {}
    problems: list[str] = []
    read: list[Freshness] = []
    for order, name in enumerate(scope.names):
        try:
            hits, total, fresh = _collection(ctx, name, parsed, scope, texts, want)
        except TroveError as exc:
            if exc.is_input_error and len(scope.names) == 1:
                raise
            problems.append(f"{name}: {exc.message}")
            continue
        read.append(fresh)
        by_collection[name] = total
        for rank, hit in enumerate(hits, 1):
            hit.score = round(1.0 / (RRF_K + rank), 6)
            fused.append((hit.score, order, hit))
    fused.sort(key=lambda t: (-t[0], t[1]))
    shown, more = paging.page(fused, offset, max_results)
    notes = [n for n in (parsed.describe(), "; ".join(problems)) if n]
    answer = SearchResponse(
        hits=[hit for _, _, hit in shown],
        by_collection=by_collection,
        note="; ".join(notes) or None,
        next_offset=more,
        freshness=combined(read),
    )
    tools.SEARCH_RESULTS.fit(answer, "hits", offset, max_results)
    return answer


@dataclass(frozen=True)
class Scope:
    """What a search admits besides its words: the collections, the days, a command's
    reports, the ELOG's category, system and domain; from the tool's arguments and the
    query's filters together."""

    names: list[str]
    low: date | None
    high: date | None
    command: str | None
    elog: dict[str, str | None]

    @classmethod
    def of(
        cls,
        parsed: syntax.Parsed,
        collections: list[Collection] | list[str] | None,
        since: str | None,
        until: str | None,
    ) -> Scope:
        names = [str(n) for n in dict.fromkeys(collections or COLLECTIONS)]
        unknown = [n for n in names if n not in COLLECTIONS]
        if unknown:
            raise TroveError(
                "INVALID_ARGUMENT",
                f"unknown collection {', '.join(map(repr, unknown))}; the collections are "
                f"{', '.join(COLLECTIONS)}",
            )
        if parsed.collections is not None:
            names = [n for n in names if n in parsed.collections]
        lows = [d for d in (_day(since, "since"), parsed.since) if d]
        highs = [d for d in (_day(until, "until"), parsed.until) if d]
        low, high = max(lows, default=None), min(highs, default=None)
        if low and high and low > high:
            raise TroveError(
                "INVALID_DATE_RANGE", f"since {low.isoformat()} is after until {high.isoformat()}"
            )
        elog = {"category": parsed.category, "system": parsed.system, "domain": parsed.domain}
        if parsed.command and any(elog.values()):
            raise TroveError(
                "INVALID_QUERY",
                "command: is for reports and category:, system: and domain: for the ELOG: use "
                "one or the other",
            )
        if low or high:
            names = [n for n in names if n != "commands"]  # commands have no date
        if parsed.command:
            names = [n for n in names if n in ("reports", "commands")]
        if any(elog.values()):
            names = [n for n in names if n == "elog"]
        if not names:
            raise TroveError(
                "INVALID_QUERY",
                "the collections asked for and the query's filters admit no collection "
                "(command: admits reports and commands, category:, system: and domain: the "
                "ELOG, a date every collection but commands)",
            )
        if not parsed.alternatives and names != ["elog"]:
            raise TroveError(
                "INVALID_QUERY",
                'the query has nothing to search for: add a word or "a phrase" (without '
                "words only the ELOG lists its newest entries: in:elog)",
            )
        return cls(names, low, high, parsed.command, elog)

    @property
    def dated(self) -> bool:
        return self.low is not None or self.high is not None


def _collection(
    ctx: QueryContext,
    name: str,
    parsed: syntax.Parsed,
    scope: Scope,
    texts: HitTexts,
    want: int,
) -> tuple[list[Hit], int, Freshness]:
    """One collection's first ``want`` hits of the query, every alternative (OR) searched
    and their lists united (best rank first); how many match (exactly when nothing is
    admitted hit by hit, else how many were found); the freshness of the last page read."""
    clauses: list[syntax.Clause | None] = list(parsed.alternatives) or [None]
    lists: list[list[Hit]] = []
    total, fresh = 0, None
    for clause in clauses:
        words = clause.words_text() if clause is not None else None
        page_of = _pages(ctx, name, words, scope)

        def admits(hit: Hit, clause: syntax.Clause | None = clause) -> bool:
            if not _within(hit.date, scope.low, scope.high):
                return False
            if name == "commands" and scope.command is not None and hit.id != scope.command:
                return False
            needs_text = parsed.excluded_words or parsed.excluded_phrases
            if not needs_text and (clause is None or not clause.phrases):
                return True
            text = texts.text(name, hit.id)
            if parsed.excludes(text):
                return False
            return clause is None or syntax.holds_phrases(clause, text)

        hits, found, fresh = _first(page_of, PAGE_SIZES[name], want, admits)
        lists.append(hits)
        total += found
    exact = len(clauses) == 1 and _admits_all(name, parsed, scope)
    united = lists[0] if len(lists) == 1 else _united(lists, want)
    assert fresh is not None
    return united, total if exact else len(united), fresh


def _admits_all(name: str, parsed: syntax.Parsed, scope: Scope) -> bool:
    """Whether every hit the collection's search gives is admitted (its count is exact)."""
    if parsed.excluded_words or parsed.excluded_phrases:
        return False
    if any(c.phrases for c in parsed.alternatives):
        return False
    if name == "commands":
        return scope.command is None
    return name == "elog" or not scope.dated  # the ELOG filters dates itself


def _united(lists: list[list[Hit]], want: int) -> list[Hit]:
    """The hits of several lists, each once, by their best rank in any list (then by the
    list it is in first): the first m of the union come from the first m of each."""
    best: dict[str, tuple[int, int, Hit]] = {}
    for order, hits in enumerate(lists):
        for rank, hit in enumerate(hits):
            if hit.id not in best or (rank, order) < best[hit.id][:2]:
                best[hit.id] = (rank, order, hit)
    return [hit for _, _, hit in sorted(best.values(), key=lambda t: t[:2])][:want]


# A page of one collection's hits: the hits, how many match in all, the freshness, and
# the offset of the next page (None: no more).
_Page = tuple[list["Hit"], int, Freshness, int | None]
# The largest page each collection's search gives.
PAGE_SIZES = {"reports": 100, "commands": 100, "conversations": 100, "elog": 50}


def _pages(
    ctx: QueryContext, name: str, words: str | None, scope: Scope
) -> Callable[[int, int], _Page]:
    """How to read a page (``n`` hits from ``at``) of one collection's search."""
    if name == "reports":
        assert words is not None
        return lambda n, at: _reports(ctx, words, n, at, scope.command)
    if name == "commands":
        assert words is not None
        return lambda n, at: _commands(ctx, words, n, at)
    if name == "conversations":
        assert words is not None
        return lambda n, at: _conversations(ctx, words, n, at)
    return lambda n, at: _elog(ctx, words, n, at, scope)


def _first(
    page_of: Callable[[int, int], _Page], size: int, want: int, admits: Callable[[Hit], bool]
) -> tuple[list[Hit], int, Freshness]:
    """A collection's first ``want`` hits that ``admits`` (fewer if it has no more), read
    page after page; how many match in all; the freshness of the last page read."""
    hits: list[Hit] = []
    at = 0
    while True:
        n = min(size, want - len(hits), tools.MAX_WINDOW - at)
        found, total, fresh, more = page_of(n, at)
        hits += [h for h in found if admits(h)]
        if len(hits) >= want or more is None or more >= tools.MAX_WINDOW:
            return hits[:want], total, fresh
        at = more


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


def _reports(ctx: QueryContext, text: str, n: int, at: int, command: str | None) -> _Page:
    answer = search_reports(ctx, text, command_filter=command, max_results=n, offset=at)
    hits = report_hits(answer.results)
    return hits, at + len(hits), answer.freshness, answer.next_offset


def report_hits(results: Iterable[ReportHit]) -> list[Hit]:
    """search_reports's results as hits of every collection's search."""
    return [
        Hit(
            collection="reports",
            id=r.id,
            title=r.report_name,
            date=r.date,
            snippet=r.excerpt,
            link=r.link,
            score=0.0,
            match=r.match,
            stale=r.stale,
            line=r.line,
            heading=r.heading,
        )
        for r in results
    ]


def _commands(ctx: QueryContext, text: str, n: int, at: int) -> _Page:
    answer = search_commands(ctx, text, max_results=n, offset=at)
    hits = [
        Hit(
            collection="commands",
            id=c.id,
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
    return hits, answer.total_found, answer.freshness, answer.next_offset


def _conversations(ctx: QueryContext, text: str, n: int, at: int) -> _Page:
    answer = search_workspace(ctx, text, max_results=n, offset=at)
    hits = [
        Hit(
            collection="conversations",
            id=w.id,
            title=w.conversation,
            date=w.date,
            snippet=w.excerpt,
            link=None,
            score=0.0,
            match=w.match,
            stale=w.stale,
            line=w.line,
            heading=w.heading,
        )
        for w in answer.results
    ]
    return hits, answer.total_found, answer.freshness, answer.next_offset


def _elog(ctx: QueryContext, text: str | None, n: int, at: int, scope: Scope) -> _Page:
    answer = search_elog(
        ctx,
        text,
        since=scope.low.isoformat() if scope.low else None,
        until=scope.high.isoformat() if scope.high else None,
        category=scope.elog["category"],
        system=scope.elog["system"],
        domain=scope.elog["domain"],
        max_results=n,
        offset=at,
    )
    unmatched = "words" if text else "newest"
    return elog_hits(answer.hits, unmatched), answer.total, answer.freshness, answer.next_offset


def elog_hits(found: Iterable[ElogHit], unmatched: str = "words") -> list[Hit]:
    """search_elog's hits as hits of every collection's search, with their ELOG score
    (``unmatched``: the match of a hit of a regex or of no query, which have none)."""
    return [
        Hit(
            collection="elog",
            id=e.id,
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
