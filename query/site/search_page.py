"""The search page's form and answer: one box over every collection, answered by the
``search`` tool's function (query/search_all.search) and nothing else.

The box reads the query language (query/syntax.py). The Filters panel is the same
filters, shown: a query's ``in:``, ``since:``, ``until:``, ``command:``, ``category:``,
``system:`` and ``domain:`` show as chosen in it, and a choice made in it becomes a term
of the box. The form sends the box, the panel and, hidden, the filters the panel showed
(``f``); a panel field that differs from what it showed was changed there and wins over
the box, any other keeps the box's. The page then redirects to ``/?q=`` the query so
merged, which the box shows: the URL is the query, and works without JavaScript.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import quote, urlencode

from starlette.datastructures import QueryParams

from query import search_all, syntax, tools
from query.context import QueryContext
from query.errors import TroveError
from query.freshness import Freshness, summary, warning
from query.search_all import COLLECTIONS, Hit, SearchResponse

PAGE_SIZES = (10, 20, 50)
LABELS = {
    "reports": "Reports",
    "commands": "Commands",
    "conversations": "Conversations",
    "elog": "ELOG",
}
# The panel's fields of one value, as the query's filters name them.
SINGLE = ("since", "until", "command", *syntax.ELOG_FILTERS)
PANEL = ("c", *SINGLE, "f")
# How a hit matched, in words (each collection's ``match``).
MATCHED = {
    "exact": "the query as written",
    "words": "every word",
    "related": "some of the words",
    "fuzzy": "a word corrected",
    "name": "its name",
    "content": "its text",
    "reports": "its reports",
    "newest": "newest first",
    "regex": "the pattern",
}
NO_FILTERS = syntax.Parsed(alternatives=())


@dataclass
class SearchForm:
    """What the search form asks: the query (the box and the panel merged), the page."""

    q: str = ""
    n: int = PAGE_SIZES[0]
    offset: int = 0
    parsed: syntax.Parsed | None = None  # None: no query, or one that does not parse
    error: TroveError | None = None  # the query's, when it does not parse
    redirect: str | None = None  # where to go instead: the panel was sent
    # The panel as sent, when it cannot be merged into the query (the page shows it as
    # it was, with the error).
    sent: QueryParams | None = None

    @classmethod
    def from_params(cls, params: QueryParams) -> SearchForm:
        """The form as asked; TroveError for a bad page size, offset or panel date."""

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
        form = cls(q=params.get("q", "").strip(), n=int(size), offset=int(skip))
        if any(name in params for name in PANEL):
            try:
                form.q = merged(form.q, params)
            except TroveError as error:
                form.error, form.sent = error, params
                return form
            form.redirect = form.page_url(0)
            return form
        if form.q:
            try:
                form.parsed = syntax.parse(form.q, require_words=False)
            except TroveError as error:
                form.error = error
        return form

    def page_url(self, offset: int) -> str:
        """This search's URL at another page."""
        params: list[tuple[str, str | int]] = [("q", self.q)]
        if self.n != PAGE_SIZES[0]:
            params.append(("n", self.n))
        if offset:
            params.append(("offset", offset))
        return "/?" + urlencode(params)

    @property
    def filters(self) -> syntax.Parsed:
        """The query's filters (none when there is no query)."""
        return self.parsed or NO_FILTERS

    @property
    def filters_text(self) -> str:
        """The query's filters written out: what the panel shows (the hidden ``f``)."""
        return only_filters(self.filters).to_text()

    @property
    def panel_open(self) -> bool:
        """Open when what was sent from it could not be used (else its summary line says
        what it has chosen)."""
        return self.sent is not None

    @property
    def panel_summary(self) -> str:
        """What the panel has chosen, in words: 'in elog, since 2025-11-01'."""
        said = only_filters(self.filters).describe() or ""
        chosen = [said.removeprefix("read as: ")] if said else []
        if self.n != PAGE_SIZES[0]:
            chosen.append(f"{self.n} per page")
        return ", ".join(chosen)

    @property
    def ticked(self) -> set[str]:
        """The collections the panel shows ticked."""
        if self.sent is not None:
            return set(self.sent.getlist("c"))
        return set(self.filters.collections or ())

    def chosen(self, name: str) -> str:
        """A single filter's value as the panel shows it ("" when not given)."""
        if self.sent is not None:
            return self.sent.get(name, "").strip()
        value = getattr(self.filters, name)
        return value.isoformat() if isinstance(value, date) else (value or "")


def only_filters(parsed: syntax.Parsed) -> syntax.Parsed:
    return dataclasses.replace(parsed, alternatives=(), excluded_words=(), excluded_phrases=())


def merged(q: str, params: QueryParams) -> str:
    """The box's query with the panel's choices: each filter the panel changed from what
    it showed (``f``) as chosen there, every other as the box has it. TroveError if the
    box, ``f`` or a panel date cannot be read."""
    box = syntax.parse(q, require_words=False) if q else NO_FILTERS
    shown = syntax.parse(params["f"], require_words=False) if params.get("f") else NO_FILTERS
    ticked = [c for c in params.getlist("c") if c]
    unknown = [c for c in ticked if c not in COLLECTIONS]
    if unknown:
        raise TroveError(
            "INVALID_ARGUMENT",
            f"unknown collection {unknown[0]!r}; the collections are {', '.join(COLLECTIONS)}",
        )
    panel: dict[str, Any] = {"collections": frozenset(ticked) if ticked else None}
    for name in SINGLE:
        text = params.get(name, "").strip()
        panel[name] = _day(name, text) if name in ("since", "until") else text or None
    changes = {
        key: value
        for key, value in panel.items()
        if not _same(key, value, getattr(shown, key)) and not _same(key, value, getattr(box, key))
    }
    if not changes:
        return q
    wanted = dataclasses.replace(box, **changes)
    text = wanted.to_text()
    if syntax.parse(text, require_words=False) != wanted:
        # A value holding a quote cannot be written in a query.
        key = next((k for k in changes if k != "collections"), "filter")
        raise TroveError(
            "INVALID_QUERY",
            f"the {key} {changes.get(key)!r} holds a quote, which a query cannot hold; "
            "choose another value",
        )
    return text


def _same(key: str, a: Any, b: Any) -> bool:
    if key in syntax.ELOG_FILTERS and isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    return bool(a == b)


def _day(name: str, text: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise TroveError(
            "INVALID_DATE_RANGE", f"{name} must be a day, YYYY-MM-DD; got {text!r}"
        ) from None


@dataclass
class ShownHit:
    hit: Hit
    url: str  # its document's page
    label: str  # its collection, in words
    matched: str  # how it matched, in words
    # The list it is in: (link, words); a day's or a folder's link is on the hit's date.
    browse: tuple[str, str] | None


@dataclass
class SearchAnswer:
    hits: list[ShownHit]
    counts: dict[str, int]
    note: str | None
    scope: str  # what was searched, in words: "across all collections", "in the ELOG"
    freshness: Freshness | None
    offset: int
    next_offset: int | None = None

    @property
    def fresh_line(self) -> str:
        return "" if self.freshness is None else summary(self.freshness)

    @property
    def fresh_warning(self) -> str | None:
        return warning(self.freshness, sum(s.hit.stale for s in self.hits))

    @property
    def heading(self) -> str:
        """'The 10 best hits across all collections', '3 hits in the ELOG', 'Hits 11-20
        across Reports and ELOG'."""
        n = len(self.hits)
        if self.offset:
            return f"Hits {self.offset + 1}-{self.offset + n} {self.scope}"
        if self.next_offset is not None:
            return f"The {n} best hits {self.scope}"
        return f"{n} hit{'' if n == 1 else 's'} {self.scope}"


def run(ctx: QueryContext, form: SearchForm) -> SearchAnswer:
    """Search as the form asks (query/search_all.search). Raises TroveError."""
    found: SearchResponse = search_all.search(ctx, form.q, max_results=form.n, offset=form.offset)
    assert form.parsed is not None  # search read it
    names = search_all.Scope.of(form.parsed, None, None, None).names
    return SearchAnswer(
        hits=[shown_hit(h, form.q) for h in found.hits],
        counts=found.by_collection,
        note=found.note,
        scope=scope_words(names),
        freshness=found.freshness,
        offset=form.offset,
        next_offset=found.next_offset,
    )


def scope_words(names: list[str]) -> str:
    if len(names) == len(COLLECTIONS):
        return "across all collections"
    if len(names) == 1:
        return "in the ELOG" if names[0] == "elog" else f"in {LABELS[names[0]]}"
    return "across " + _and(LABELS[n] for n in names)


def _and(items: Iterable[str]) -> str:
    names = list(items)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def shown_hit(hit: Hit, query: str) -> ShownHit:
    return ShownHit(
        hit,
        document_url(hit, query),
        LABELS[hit.collection],
        MATCHED.get(hit.match, hit.match),
        browse_link(hit),
    )


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


def browse_link(hit: Hit) -> tuple[str, str] | None:
    """The list a hit's document is in (its command's reports, its ELOG day, its
    conversation's date folder): the link and its words."""
    if hit.collection == "reports":
        command = hit.id.partition("/")[0]
        return f"/reports/{quote(command, safe='')}", command
    if hit.collection == "conversations":
        folder = hit.id.partition("/")[0]
        return f"/conversations/{quote(folder, safe='')}", f"the conversations of {folder}"
    if hit.collection == "elog" and hit.date and len(hit.date) >= 10:
        return f"/elog?{urlencode({'day': hit.date[:10]})}", f"the ELOG of {hit.date[:10]}"
    return None
