"""The search page's form and answer: one box over every collection (the ``search`` tool),
or one collection with its own filters.

A filter that belongs to one collection narrows the search to it: a command to that
command's reports (search_reports), an ELOG category, system or domain to the logbook
(search_elog, which also lists the newest entries without a query).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from urllib.parse import quote, urlencode

from starlette.datastructures import QueryParams

from query import search_all
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

    @classmethod
    def from_params(cls, params: QueryParams) -> SearchForm:
        def one(name: str) -> str:
            return params.get(name, "").strip()

        size = one("n") or str(PAGE_SIZES[0])
        if not size.isdigit() or not 1 <= int(size) <= search_all.MAX_RESULTS:
            raise TroveError(
                "INVALID_ARGUMENT",
                f"n (hits per page) must be between 1 and {search_all.MAX_RESULTS}, got {size!r}",
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
        )

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
        found = search_reports(ctx, form.q, command_filter=form.command, max_results=form.n)
        hits = [h for h in search_all.report_hits(found.results) if _within(h.date, low, high)]
        return SearchAnswer(
            _shown(ctx, hits, form.q),
            {"reports": len(hits)},
            found.note,
            f"the reports of {form.command}",
            found.freshness,
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
        )
        hits = search_all.elog_hits(answer.hits, unmatched="regex" if form.q else "newest")
        return SearchAnswer(
            _shown(ctx, hits, form.q),
            {"elog": answer.total},
            answer.note,
            "the ELOG",
            answer.freshness,
        )
    fused = search_all.search(
        ctx,
        form.q,
        collections=form.collections or None,
        since=form.since or None,
        until=form.until or None,
        max_results=form.n,
    )
    names = [c for c in COLLECTIONS if not form.collections or c in form.collections]
    return SearchAnswer(
        _shown(ctx, fused.hits, form.q),
        fused.by_collection,
        fused.note,
        "every collection" if len(names) == len(COLLECTIONS) else _and(LABELS[n] for n in names),
        fused.freshness,
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


def _shown(ctx: QueryContext, hits: list[Hit], query: str) -> list[ShownHit]:
    root = ctx.settings.source_root("conversations")
    return [ShownHit(h, document_url(h, query, root), LABELS[h.collection]) for h in hits]


def document_url(hit: Hit, query: str, conversations: Path | None) -> str:
    """The page of a hit's document, asked to mark the query."""
    q = f"?{urlencode({'q': query})}" if query else ""
    if hit.collection == "reports":
        command, _, report = hit.id.partition("/")
        return f"/reports/{quote(command, safe='')}/{quote(report, safe='')}{q}"
    if hit.collection == "commands":
        return f"/commands/{quote(hit.id, safe='')}{q}"
    if hit.collection == "conversations":
        path, _, line = hit.id.rpartition(":")
        rel = os.path.relpath(path, conversations) if conversations else path
        return f"/conversations/{quote(Path(rel).as_posix())}{q}#L{line}"
    return f"/elog/{quote(hit.id, safe='')}{q}"
