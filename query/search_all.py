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

A hit that the query's phrases, exclusions or dates must admit (its document read, or its
date compared) is looked for among the collection's best SCAN_DEPTH hits only, in pages
of the largest size the collection's search gives; the note says when that cut a search
short. A phrase is not looked for in a report search answered by its related or fuzzy
tier (no report holds every word of the phrase), nor in such a conversation search (no
line holds them all: a file holding the phrase across two lines is then not found).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

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
# A collection's hits that a query's phrases, exclusions or dates must admit one by one
# are looked for among its best SCAN_DEPTH (the search page's time at 10k reports:
# bench/README.md, bench_page.py); hits that need no check, among its best MAX_WINDOW.
SCAN_DEPTH = 300
# How a command matched, in words (search_commands' tiers).
COMMAND_MATCH = {"tier1": "name", "tier2": "content", "tier3": "reports"}


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
    match: str = Field(
        description="How it matched, in its collection's words: exact, words, related or "
        "fuzzy (reports, conversations; the ELOG: words, related, fuzzy, or newest without "
        "words); a command: name (its file name), content (its title, description, tags "
        "or text) or reports (its reports)."
    )
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
    the page from hit ``offset`` on. A collection that cannot be searched is named in the
    note; when none can, the first one's error is raised, naming each. Raises TroveError:
    INVALID_QUERY, INVALID_ARGUMENT, INVALID_DATE_RANGE, and the collections' own errors
    when none could be searched."""
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
    failed: list[TroveError] = []
    deep: list[str] = []  # collections whose hits were checked up to SCAN_DEPTH
    read: list[Freshness] = []
    why_none: list[str] = []  # the collections' own words for finding nothing
    for order, name in enumerate(scope.names):
        try:
            found = _collection(ctx, name, parsed, scope, texts, want)
        except TroveError as exc:
            if exc.is_input_error and len(scope.names) == 1:
                raise
            problems.append(f"{name}: {exc.message}")
            failed.append(exc)
            continue
        read.append(found.fresh)
        by_collection[name] = found.total
        if found.cut:
            deep.append(name)
        if not found.hits and found.note:
            why_none.append(f"{name}: {found.note}")
        for rank, hit in enumerate(found.hits, 1):
            hit.score = round(1.0 / (RRF_K + rank), 6)
            fused.append((hit.score, order, hit))
    if failed and not by_collection:  # no collection could be searched: that is the answer
        raise TroveError(failed[0].code, "; ".join(problems))
    fused.sort(key=lambda t: (-t[0], t[1]))
    shown, more = paging.page(fused, offset, max_results)
    checked = (
        f"only the best {SCAN_DEPTH} hits of {', '.join(deep)} were checked against the "
        "query's phrases, exclusions and dates: narrow the query to reach past them"
        if deep
        else None
    )
    # Why nothing was found, in each collection's words, when nothing was.
    empty = "; ".join(why_none) if not fused else None
    notes = [n for n in (parsed.describe(), checked, empty, "; ".join(problems)) if n]
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
) -> _Found:
    """One collection's first ``want`` hits of the query, every alternative (OR) searched
    and their lists united (best rank first); how many match (exactly when nothing is
    admitted hit by hit, else how many were found); the freshness of the last page read;
    whether SCAN_DEPTH cut an alternative's search short; the notes of the searches that
    found nothing (why, in the collection's own words)."""
    clauses: list[syntax.Clause | None] = list(parsed.alternatives) or [None]
    lists: list[list[Hit]] = []
    total, fresh, cut_short = 0, None, False
    notes: list[str] = []
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

        if name in ("reports", "conversations") and clause is not None and clause.phrases:
            # A report holding a phrase holds each of its words: once the search answers
            # with reports holding only some of them (related), or other words (fuzzy),
            # none can hold it. A conversation's hits are lines: one whose words are on
            # no line together is not looked for.
            page_of = _until_words_end(page_of)
        checked = not _admits_all(name, parsed, scope)
        depth = SCAN_DEPTH if checked else tools.MAX_WINDOW
        # A command search costs as much for a hundred commands as for ten (its tiers
        # score every command): one checked hit by hit asks for its largest page at once.
        first = PAGE_SIZES[name] if checked and name == "commands" else want
        found = _first(page_of, PAGE_SIZES[name], want, admits, depth, first)
        lists.append(found.hits)
        total += found.total
        fresh = found.fresh
        cut_short = cut_short or found.cut
        if not found.hits and found.note and found.note not in notes:
            notes.append(found.note)
    exact = len(clauses) == 1 and _admits_all(name, parsed, scope)
    united = lists[0] if len(lists) == 1 else _united(lists, want)
    assert fresh is not None
    return _Found(
        united, total if exact else len(united), fresh, cut_short, "; ".join(notes) or None
    )


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


class _Page(NamedTuple):
    """A page of one collection's hits."""

    hits: list[Hit]
    total: int  # how many match in all
    fresh: Freshness
    more: int | None  # the offset of the next page (None: no more)
    note: str | None  # the search's own note (why it found nothing, what it corrected)


class _Found(NamedTuple):
    """One collection's hits admitted by the query (of one alternative, as _first reads
    them, or of all, as _collection unites them)."""

    hits: list[Hit]
    total: int  # how many match in all
    fresh: Freshness  # of the last page read
    cut: bool  # whether the depth cut the search short
    note: str | None  # the search's note: of its first page, or of each that found none


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


def _until_words_end(page_of: Callable[[int, int], _Page]) -> Callable[[int, int], _Page]:
    """The pages of a report or conversation search, none when it is answered by its
    related or fuzzy tier (it answers from one tier: every page is of the same)."""

    def pages(n: int, at: int) -> _Page:
        page = page_of(n, at)
        if page.hits and page.hits[0].match in ("related", "fuzzy"):
            return page._replace(hits=[], more=None)
        return page

    return pages


def _first(
    page_of: Callable[[int, int], _Page],
    size: int,
    want: int,
    admits: Callable[[Hit], bool],
    depth: int = tools.MAX_WINDOW,
    first: int | None = None,
) -> _Found:
    """A collection's first ``want`` hits that ``admits`` (fewer if it has no more) among
    its first ``depth``, read page after page; how many match in all; the freshness of the
    last page read; whether ``depth`` cut the search short; the first page's note.

    The first page asks for ``first`` hits (``want`` unless said); once some were not
    admitted, each next page is twice the last, up to ``size``, the largest the search
    gives: a page is ranked from the top again, so many small pages would cost many times
    one large one, and a large one costs its hits' excerpts when a few more would do."""
    hits: list[Hit] = []
    at = 0
    n = min(size, want if first is None else first)
    note: str | None = None
    while True:
        page = page_of(min(n, depth - at), at)
        note = page.note if at == 0 else note
        for hit in page.hits:
            if admits(hit):
                hits.append(hit)
                if len(hits) == want:
                    return _Found(hits, page.total, page.fresh, False, note)
        if page.more is None:
            return _Found(hits, page.total, page.fresh, False, note)
        if page.more >= depth:
            return _Found(hits, page.total, page.fresh, depth < tools.MAX_WINDOW, note)
        at, n = page.more, min(size, 2 * n)


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
    return _Page(hits, at + len(hits), answer.freshness, answer.next_offset, answer.note)


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
            match=COMMAND_MATCH[c.tier],
            stale=c.stale,
        )
        for c in answer.results
    ]
    return _Page(hits, answer.total_found, answer.freshness, answer.next_offset, answer.note)


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
    return _Page(hits, answer.total_found, answer.freshness, answer.next_offset, answer.note)


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
    hits = elog_hits(answer.hits, unmatched)
    return _Page(hits, answer.total, answer.freshness, answer.next_offset, answer.note)


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
