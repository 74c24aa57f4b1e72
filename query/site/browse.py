"""The browse views: the lists a collection is read by, without a query.

- ``/reports``: the commands that have reports; ``/reports/{command}``: that command's
  reports, newest first, with dates and sizes (list_command_reports);
- ``/commands``: every command, by name (list_commands);
- ``/elog``: the logbook's months; ``/elog?month=YYYY-MM`` and ``/elog?day=YYYY-MM-DD``:
  the entries of a month or a day, newest first, by day, each linking to its thread, as
  elogd's own list (list_elog);
- ``/conversations`` and ``/conversations/{YYYY-MM or YYYY-MM-DD}``: the conversations
  of every date folder, of a month (its folder and its day folders) or of a day
  (list_conversations).

Each list comes in pages, as the search pages do (``offset``, ``n``; "previous" and
"more" links). Each is read by the library's own listing function; bad input answers
the error page: 400 for a bad date, name or page, 404 for what does not exist.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from query import tools
from query.commands import list_commands
from query.context import QueryContext
from query.elog import list_elog
from query.elog.listing import LIST_RESULTS as ELOG_RESULTS
from query.errors import TroveError
from query.reports import list_command_reports, list_report_commands
from query.workspace import list_conversations
from query.workspace.listing import LIST_RESULTS as CONVERSATION_RESULTS

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from query.elog.listing import ElogListEntry

PAGE = 50  # entries per page, unless ``n`` says otherwise
# Each collection's list (its row of /status links to it).
COLLECTION_LISTS = {
    "reports": "/reports",
    "commands": "/commands",
    "conversations": "/conversations",
    "elog": "/elog",
}
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")


@dataclass(frozen=True)
class Paging:
    """The page a browse view shows: ``n`` entries from ``offset`` on."""

    path: str
    params: tuple[tuple[str, str], ...]  # what else the URL asks (a day, a month)
    n: int
    offset: int

    @classmethod
    def of(
        cls,
        request: Request,
        high: int,
        path: str,
        params: tuple[tuple[str, str], ...] = (),
    ) -> Paging:
        """From ``?offset=&n=``; TroveError INVALID_ARGUMENT when either is not a whole
        number in its range."""
        given = request.query_params
        size = given.get("n", "").strip() or str(PAGE)
        if not size.isdigit() or not 1 <= int(size) <= high:
            raise TroveError(
                "INVALID_ARGUMENT", f"n (entries per page) must be 1-{high}, got {size!r}"
            )
        skip = given.get("offset", "").strip() or "0"
        if not skip.isdigit():
            raise TroveError(
                "INVALID_ARGUMENT", f"offset (entries to skip) must be 0 or more, got {skip!r}"
            )
        return cls(path, params, int(size), int(skip))

    def url(self, offset: int) -> str:
        """This list's URL at another page."""
        params = list(self.params)
        if self.n != PAGE:
            params.append(("n", str(self.n)))
        if offset:
            params.append(("offset", str(offset)))
        return self.path + ("?" + urlencode(params) if params else "")

    def previous(self) -> str | None:
        return self.url(max(self.offset - self.n, 0)) if self.offset else None

    def more(self, next_offset: int | None) -> str | None:
        return None if next_offset is None else self.url(next_offset)


def command_url(command: str) -> str:
    return f"/reports/{quote(command, safe='')}"


def elog_url(span: str) -> str:
    return "/elog?" + urlencode({"day" if len(span) == 10 else "month": span})


def conversations_url(date_range: str) -> str:
    return f"/conversations/{quote(date_range, safe='')}"


def elog_span(request: Request) -> str | None:
    """The day or month ``/elog`` asks for (None: neither); TroveError if it asks for
    both, or one is not written as it should be."""
    day = request.query_params.get("day", "").strip()
    month = request.query_params.get("month", "").strip()
    if day and month:
        raise TroveError("INVALID_ARGUMENT", "give a day or a month, not both")
    if day and not _DAY.fullmatch(day):
        raise TroveError("INVALID_DATE_RANGE", f"day must be YYYY-MM-DD, got {day!r}")
    if month and not _MONTH.fullmatch(month):
        raise TroveError("INVALID_DATE_RANGE", f"month must be YYYY-MM, got {month!r}")
    return day or month or None


def by_day(entries: list[ElogListEntry]) -> list[tuple[str, list[ElogListEntry]]]:
    """Entries (newest first) in runs of one day each, as elogd lists them."""
    return [(day, list(run)) for day, run in groupby(entries, key=lambda e: e.date[:10])]


Page = Callable[..., "Response"]
ErrorPage = Callable[..., "Response"]
Run = Callable[..., Awaitable[Any]]
Route = Callable[[str], Callable[[Callable[["Request"], Any]], Any]]


def add_routes(
    route: Route, page: Page, error_page: ErrorPage, run: Run, ctx: QueryContext
) -> None:
    """The browse views' routes (before the document routes: ``/conversations/{range}``
    is matched before ``/conversations/{path:path}``)."""

    def guarded(
        view: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(view)
        async def handler(request: Request) -> Response:
            try:
                return await view(request)
            except TroveError as error:
                return error_page(error)

        return handler

    @route("/reports")
    @guarded
    async def report_commands(request: Request) -> Response:
        found = await run(list_report_commands, ctx)
        return page("report_commands.html", found=found, url=command_url, title="reports")

    @route("/reports/{command}")
    @guarded
    async def command_reports(request: Request) -> Response:
        command = request.path_params["command"]
        high = tools.LIST_REPORTS_RESULTS.high
        paging = Paging.of(request, high, command_url(command))
        found = await run(list_command_reports, ctx, command, paging.n, paging.offset)
        return page(
            "command_reports.html", found=found, paging=paging, title=f"reports of {command}"
        )

    @route("/commands")
    @guarded
    async def commands(request: Request) -> Response:
        paging = Paging.of(request, tools.LIST_COMMANDS_RESULTS.high, "/commands")
        found = await run(list_commands, ctx, True, paging.n, paging.offset)
        return page("commands.html", found=found, paging=paging, title="commands")

    @route("/elog")
    @guarded
    async def elog(request: Request) -> Response:
        span = elog_span(request)
        kind = "day" if span and len(span) == 10 else "month"
        params = ((kind, span),) if span else ()
        paging = Paging.of(request, ELOG_RESULTS.high, "/elog", params)
        found = await run(list_elog, ctx, span, paging.n, paging.offset)
        return page(
            "elog_list.html",
            found=found,
            days=by_day(found.entries),
            paging=paging,
            url=elog_url,
            title=f"ELOG {span}" if span else "ELOG",
        )

    async def conversation_list(request: Request, date_range: str | None) -> Response:
        path = conversations_url(date_range) if date_range else "/conversations"
        paging = Paging.of(request, CONVERSATION_RESULTS.high, path)
        found = await run(list_conversations, ctx, date_range, paging.n, paging.offset)
        if date_range and not found.total:
            raise TroveError(
                "NOT_FOUND",
                f"no conversation folder for {date_range}; /conversations lists the folders",
            )
        return page(
            "conversations_list.html",
            found=found,
            paging=paging,
            url=conversations_url,
            title=f"conversations {date_range}" if date_range else "conversations",
        )

    @route("/conversations")
    @guarded
    async def conversations(request: Request) -> Response:
        return await conversation_list(request, None)

    @route("/conversations/{date_range}")
    @guarded
    async def conversations_of(request: Request) -> Response:
        return await conversation_list(request, request.path_params["date_range"])
