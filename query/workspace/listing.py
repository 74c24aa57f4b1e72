"""list_conversations: the conversations of a date folder (a day, or a month with its day
folders), each with its files, newest folder first; and the date folders with how many
conversations each holds.

Read from the conversations index (the folder, conversation and key each document
stores, the size its commit recorded), never from the folders themselves.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from query import paging, tools
from query.context import QueryContext
from query.errors import TroveError
from query.freshness import Freshness, of_snapshot
from query.workspace.cache import cache_of
from query.workspace.dates import check_date_range
from query.workspace.view import COLLECTION

LIST_RESULTS = tools.results(50, 500, "Maximum number of conversations to return")


class ConversationFileInfo(BaseModel):
    id: str = Field(description="Its path under the conversations folder (get_conversation).")
    name: str = Field(description="The file's name.")
    size: int | None = Field(description="Its size in bytes when indexed (null: not recorded).")


class ConversationFolder(BaseModel):
    date: str = Field(description="Its date folder: YYYY-MM-DD or YYYY-MM.")
    conversation: str = Field(description="Its folder's name (NNN-slug).")
    files: list[ConversationFileInfo] = Field(description="By path.")


class DateFolder(BaseModel):
    date: str
    conversations: int


class ConversationList(BaseModel):
    """The conversations of a date range, newest folder first."""

    date_range: str | None = Field(description="The day or month listed; null: every folder.")
    conversations: list[ConversationFolder]
    total: int = Field(description="How many conversations the range holds.")
    folders: list[DateFolder] = Field(
        description="The range's date folders, newest first, with their conversations."
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness


def list_conversations(
    ctx: QueryContext,
    date_range: str | None = None,
    max_results: int = LIST_RESULTS.default,
    offset: int = 0,
) -> ConversationList:
    """The conversations in ``date_range`` (``YYYY-MM``: the month folder and its day
    folders; ``YYYY-MM-DD``: that day's folder; None: every folder), newest folder first
    and by name within a folder; the page from conversation ``offset`` on. Raises
    TroveError: INVALID_DATE_RANGE, INVALID_ARGUMENT, DIRECTORY_NOT_FOUND."""
    dr = check_date_range(date_range)
    LIST_RESULTS.check(max_results)
    offset = tools.LIST_OFFSET.check(offset)
    cache = cache_of(ctx)
    files: dict[tuple[str, str], list[tuple[str, int | None]]] = defaultdict(list)
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        if snapshot is None:
            raise TroveError("DIRECTORY_NOT_FOUND", "the conversations index could not be built")
        for segment, _base in snapshot.segments():
            docnums = segment.docs_with("kind", ["doc"])  # not the files' records
            if dr is not None:
                field, term = dr.field()
                docnums &= segment.docs_with(field, [term])
            for doc in cache.docs(cache.segment(segment), segment, sorted(docnums)):
                state = snapshot.file_state(doc.key)
                files[doc.conv].append((doc.key, state[1] if state else None))
        fresh = of_snapshot(ctx.watcher, COLLECTION, snapshot)
    order = sorted(files, key=lambda conv: (_desc(conv[0]), conv[1]))
    shown, more = paging.page(order, offset, max_results)
    per_folder: dict[str, int] = defaultdict(int)
    for day, _ in order:
        per_folder[day] += 1
    return ConversationList(
        date_range=dr.value if dr else None,
        conversations=[
            ConversationFolder(
                date=day,
                conversation=name,
                files=[
                    ConversationFileInfo(id=key, name=key.rsplit("/", 1)[-1], size=size)
                    for key, size in sorted(files[(day, name)])
                ],
            )
            for day, name in shown
        ],
        total=len(order),
        folders=[DateFolder(date=d, conversations=n) for d, n in per_folder.items()],
        next_offset=more,
        freshness=fresh,
    )


def _desc(day: str) -> tuple[int, ...]:
    """Sorts date folders newest first (a day folder before its month's folder)."""
    return tuple(-int(part) for part in day.split("-")) + ((1,) if len(day) == 7 else (0,))
