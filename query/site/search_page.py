"""The search page's form and answer: one box over every collection (the ``search`` tool),
or one collection with its own filters.

A filter that belongs to one collection narrows the search to it: a command to that
command's reports (search_reports), an ELOG category, system or domain to the logbook
(search_elog, which also lists the newest entries without a query).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import quote, urlencode

from starlette.datastructures import QueryParams

from query import search_all, tools
from query.context import QueryContext
from query.elog import search_elog
from query.errors import TroveError
from query.freshness import Freshness, summary, warning
from query.reports import search_reports
from query.search_all import COLLECTIONS, Hit

PAGE_SIZES = (10, 20, 50)
LABELS = {
    "reports": "Reports",
    "commands": "Commands",
    "conversations": "Conversations",
    "elog": "ELOG",
}


@dataclass
class SearchForm:
    """What the search form asks, as given (empty strings for fields left blank)."""

    q: str = ""
    collections: list[str] = field(default_factory=list)
    since: str = ""
    until: str = ""
    command: str = ""
    category: str = ""
    system: str = ""
    domain: str = ""
    n: int = PAGE_SIZES[0]
    offset: int = 0

    @classmethod
    def from_params(cls, params: QueryParams) -> SearchForm:
        def one(name: str) -> str:
            return params.get(name, "").strip()

        size = one("n") or str(PAGE_SIZES[0])
        if not size.isdigit() or not 1 <= int(size) <= (tools.SEARCH_RESULTS.high or 0):
            raise TroveError(
                "INVALID_ARGUMENT",
                f"n (hits per page) must be {tools.SEARCH_RESULTS.limits}, got {size!r}",
            )
        skip = one("offset") or "0"
        if not skip.isdigit():
            raise TroveError(
                "INVALID_ARGUMENT", f"offset (hits to skip) must be 0 or more, got {skip!r}"
            )
        return cls(
            q=params.get("q", "").strip(),
            collections=[c for c in params.getlist("c") if c],
            since=one("since"),
            until=one("until"),
            command=one("command"),
            category=one("category"),
            system=one("system"),
            domain=one("domain"),
            n=int(size),
            offset=int(skip),
        )

    def page_url(self, offset: int) -> str:
        """This search's URL at another page."""
        params: list[tuple[str, str | int]] = [("q", self.q)]
        params += [("c", c) for c in self.collections]
        for name in ("since", "until", "command", "category", "system", "domain"):
            if getattr(self, name):
                params.append((name, getattr(self, name)))
        if self.n != PAGE_SIZES[0]:
            params.append(("n", self.n))
        if offset:
            params.append(("offset", offset))
        return "/?" + urlencode(params)

    @property
    def elog_filters(self) -> bool:
        return bool(self.category or self.system or self.domain)

    @property
    def asked(self) -> bool:
        return bool(self.q or self.elog_filters)


@dataclass
class ShownHit:
    hit: Hit
    url: str
    label: str


@dataclass
class SearchAnswer:
    hits: list[ShownHit]
    counts: dict[str, int]
    note: str | None
    scope: str  # what was searched, in words
    freshness: Freshness | None
    next_offset: int | None = None

    @property
    def fresh_line(self) -> str:
        return "" if self.freshness is None else summary(self.freshness)

    @property
    def fresh_warning(self) -> str | None:
        return warning(self.freshness, sum(s.hit.stale for s in self.hits))


def run(ctx: QueryContext, form: SearchForm) -> SearchAnswer:
    """Search as the form asks. Raises TroveError."""
    if form.command and form.elog_filters:
        raise TroveError(
            "INVALID_ARGUMENT",
            "the command filter is for reports and category/system/domain for the ELOG: "
            "use one or the other",
        )
    if form.command:
        if not form.q:
            raise TroveError("INVALID_QUERY", "give words to search the command's reports for")
        low, high = _span(form.since, form.until)
        found = search_reports(
            ctx, form.q, command_filter=form.command, max_results=form.n, offset=form.offset
        )
        hits = [h for h in search_all.report_hits(found.results) if _within(h.date, low, high)]
        return SearchAnswer(
            _shown(hits, form.q),
            {"reports": len(hits)},
            found.note,
            f"the reports of {form.command}",
            found.freshness,
            found.next_offset,
        )
    if form.elog_filters:
        answer = search_elog(
            ctx,
            form.q or None,
            since=form.since or None,
            until=form.until or None,
            category=form.category or None,
            system=form.system or None,
            domain=form.domain or None,
            max_results=form.n,
            offset=form.offset,
        )
        hits = search_all.elog_hits(answer.hits, unmatched="regex" if form.q else "newest")
        return SearchAnswer(
            _shown(hits, form.q),
            {"elog": answer.total},
            answer.note,
            "the ELOG",
            answer.freshness,
            answer.next_offset,
        )
    fused = search_all.search(
        ctx,
        form.q,
        collections=form.collections or None,
        since=form.since or None,
        until=form.until or None,
        max_results=form.n,
        offset=form.offset,
    )
    names = [c for c in COLLECTIONS if not form.collections or c in form.collections]
    return SearchAnswer(
        _shown(fused.hits, form.q),
        fused.by_collection,
        fused.note,
        "every collection" if len(names) == len(COLLECTIONS) else _and(LABELS[n] for n in names),
        fused.freshness,
        fused.next_offset,
    )


def _and(items: Iterable[str]) -> str:
    names = list(items)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def _span(since: str, until: str) -> tuple[date | None, date | None]:
    days = []
    for name, value in (("since", since), ("until", until)):
        try:
            days.append(date.fromisoformat(value[:10]) if value else None)
        except ValueError:
            raise TroveError(
                "INVALID_DATE_RANGE", f"{name} must be a day, YYYY-MM-DD; got {value!r}"
            ) from None
    low, high = days
    if low and high and low > high:
        raise TroveError("INVALID_DATE_RANGE", f"since {since} is after until {until}")
    return low, high


def _within(when: str | None, low: date | None, high: date | None) -> bool:
    if low is None and high is None:
        return True
    if not when or len(when) < 10:
        return False
    day = date.fromisoformat(when[:10])
    return (low is None or day >= low) and (high is None or day <= high)


def _shown(hits: list[Hit], query: str) -> list[ShownHit]:
    return [ShownHit(h, document_url(h, query), LABELS[h.collection]) for h in hits]


def document_url(hit: Hit, query: str) -> str:
    """The page of a hit's document, asked to mark the query."""
    q = f"?{urlencode({'q': query})}" if query else ""
    if hit.collection == "reports":
        command, _, report = hit.id.partition("/")
        at = f"#L{hit.line}" if hit.line else ""
        return f"/reports/{quote(command, safe='')}/{quote(report, safe='')}{q}{at}"
    if hit.collection == "commands":
        return f"/commands/{quote(hit.id, safe='')}{q}"
    if hit.collection == "conversations":
        rel, _, line = hit.id.rpartition(":")
        return f"/conversations/{quote(rel)}{q}#L{line}"
    return f"/elog/{quote(hit.id, safe='')}{q}"
