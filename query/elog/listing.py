"""list_elog: the logbook's entries by day, newest first, as elogd's own list shows them;
and how many entries each day of a month (or each month) holds, for a calendar.

Read from the index's table of every entry's day and time (query/elog/caches.py's
DocTable), so a month of a logbook of 30k entries lists in a few milliseconds.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from datetime import date

from pydantic import BaseModel, Field

from query import budget, paging, tools
from query.context import QueryContext
from query.elog.caches import doc_table, elog_cache
from query.elog.index_access import open_index
from query.elog.logbook import entry_link, logbook_root
from query.elog.models import shown
from query.errors import TroveError
from query.freshness import Freshness

LIST_RESULTS = tools.results(50, 500, "Maximum number of entries to return (newest first)")
SPAN_HELP = "give a day as YYYY-MM-DD (2025-11-20) or a month as YYYY-MM (2025-11)"
_SPAN = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?")


class ElogListEntry(BaseModel):
    """One entry of a listing: what elogd's list shows of it, and its place in a thread."""

    elog_id: int
    title: str
    date: str = Field(description="When it was written: ISO 8601 with the logbook's offset.")
    author: str
    category: str
    system: str
    domain: str
    section: str
    in_reply_to: int | None = Field(description="The entry it answers (null on a thread's root).")
    replies: int = Field(description="How many entries answer it.")
    attachments: int = Field(description="How many files are attached to it.")
    link: str = Field(description="[elog] link_base_url + id; a file:// URL when unset.")


class Period(BaseModel):
    """A day (YYYY-MM-DD) or a month (YYYY-MM) and how many entries it holds."""

    value: str
    entries: int


class ElogListing(BaseModel):
    """The entries of a day, of a month, or of the whole logbook, newest first."""

    span: str | None = Field(description="The day or month listed; null: the whole logbook.")
    entries: list[ElogListEntry] = Field(description="Newest first.")
    total: int = Field(description="How many entries the span holds.")
    periods: list[Period] = Field(
        description="Newest first: a month's days that hold entries; a day itself; for the "
        "whole logbook, its months."
    )
    earlier: str | None = Field(
        description="The nearest day (month, for a month) before the span that holds entries."
    )
    later: str | None = Field(
        description="The nearest day (month, for a month) after the span that holds entries."
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness


def check_span(value: str | None) -> tuple[int, int] | None:
    """A day or a month as the first and last day it covers (YYYYMMDD numbers, as the
    index keeps days); None for the whole logbook; INVALID_DATE_RANGE if it is not one."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    found = _SPAN.fullmatch(text) if text.isascii() else None
    if found is None:
        raise TroveError("INVALID_DATE_RANGE", f"{value!r} is not a day or a month; {SPAN_HELP}")
    year, month, day = (int(g) if g else None for g in found.groups())
    assert year is not None and month is not None
    try:
        first = date(year, month, day or 1)
    except ValueError as error:
        raise TroveError(
            "INVALID_DATE_RANGE", f"{value!r} is not a date ({error}); {SPAN_HELP}"
        ) from None
    low = first.year * 10000 + first.month * 100 + first.day
    return (low, low) if day else (low, low + 31)


def list_elog(
    ctx: QueryContext,
    span: str | None = None,
    max_results: int = LIST_RESULTS.default,
    offset: int = 0,
) -> ElogListing:
    """The entries of ``span`` (a day, YYYY-MM-DD, or a month, YYYY-MM; None: the whole
    logbook), newest first, the page from entry ``offset`` on. Raises TroveError:
    INVALID_DATE_RANGE, INVALID_ARGUMENT, DIRECTORY_NOT_FOUND."""
    bounds = check_span(span)
    LIST_RESULTS.check(max_results)
    offset = tools.LIST_OFFSET.check(offset)
    is_day = bounds is not None and bounds[0] == bounds[1]
    root = logbook_root(ctx)
    with open_index(ctx) as index:
        fresh = index.freshness(ctx)
        table = doc_table(index, elog_cache(ctx))
        days = table.days  # every entry's day, in order
        if bounds is None:
            i, j = 0, len(days)
            docs = table.live
        else:
            i, j = bisect.bisect_left(days, bounds[0]), bisect.bisect_right(days, bounds[1])
            docs = set(table.day_docs[i:j])
        newest, more = paging.page(
            table.newest(docs, paging.window(offset, max_results)), offset, max_results
        )
        found = [index.stored_fields(d) for d in newest]
    entries = [
        ElogListEntry(
            elog_id=fields["elog_id"],
            **{k: budget.clip(v) for k, v in shown(fields).items()},  # type: ignore[arg-type]
            in_reply_to=fields.get("in_reply_to"),
            replies=len(fields.get("reply_to") or ()),
            attachments=len(fields.get("attachments") or ()),
            link=entry_link(ctx, root, fields),
        )
        for fields in found
    ]
    # Days for a month or a day, months for the whole logbook.
    width = 1 if bounds is not None else 100
    counts = Counter(d // width for d in days[i:j])
    periods = [
        Period(value=_period(key, by_day=bounds is not None), entries=n)
        for key, n in sorted(counts.items(), reverse=True)
    ]
    # The nearest day (for a day) or month (for a month) on either side that holds entries.
    unit = 1 if is_day else 100
    earlier = _period(days[i - 1] // unit, is_day) if bounds and i > 0 else None
    later = _period(days[j] // unit, is_day) if bounds and j < len(days) else None
    return ElogListing(
        span=span.strip() if span else None,
        entries=entries,
        total=len(docs),
        periods=periods,
        earlier=earlier,
        later=later,
        next_offset=more,
        freshness=fresh,
    )


def _period(value: int, by_day: bool) -> str:
    """A YYYYMMDD number as YYYY-MM-DD, or a YYYYMM one as YYYY-MM."""
    if by_day:
        return f"{value // 10000:04d}-{value // 100 % 100:02d}-{value % 100:02d}"
    return f"{value // 100:04d}-{value % 100:02d}"
