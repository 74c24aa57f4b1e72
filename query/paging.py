"""Pages of hits: ``offset`` (hits to skip) and ``next_offset`` (where the next page starts,
null when there are no more), the same for every search.

A search ranks every hit it could show in one fixed order that does not depend on the
page asked for, computes the first ``offset + max_results + 1`` of it, and answers the
page; page k+1 then continues page k exactly. Hits past the first tools.MAX_WINDOW are not
served (narrow the query instead): computing them would cost every search more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

NEXT_OFFSET_DESCRIPTION = (
    "The offset of the next page (ask again with offset=next_offset), or null: no more hits."
)


def window(offset: int, max_results: int) -> int:
    """How many hits to rank to answer a page and know whether another follows."""
    return offset + max_results + 1


def page(ranked: Sequence[T], offset: int, max_results: int) -> tuple[list[T], int | None]:
    """The page of ``ranked`` (the first ``window`` hits, or all there are) and the next
    page's offset (None: no more)."""
    shown = list(ranked[offset : offset + max_results])
    more = len(ranked) > offset + max_results
    return shown, (offset + max_results if more else None)
