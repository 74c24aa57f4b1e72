"""A tier's answer: the lines shown (a conversation's first LINES_PER_CONVERSATION lines
before the rest of its lines), per conversation how many lines match, and in all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from query.workspace import limits
from query.workspace.cache import Doc, SegmentCache
from query.workspace.lines import Line, ShownOrder
from query.workspace.view import View


@dataclass
class Answer:
    """A tier's answer: the lines shown, per conversation how many lines match, in all."""

    top: list[Line]
    per_conversation: dict[tuple[str, str], int]
    total: int
    originals: dict[str, str | None]


NOTHING = Answer([], {}, 0, {})


def newest_first(found: Iterable[tuple[SegmentCache, Doc]]) -> list[tuple[SegmentCache, Doc]]:
    """Newest first (date folder, then conversation), then by path: the order ties keep."""
    docs = sorted(found, key=lambda d: d[1].key)
    docs.sort(key=lambda d: d[1].conv, reverse=True)
    return docs


def pick(lines: list[Line], k: int) -> list[Line]:
    """The first k of the shown order (lines.ShownOrder) of lines given best first."""
    order = ShownOrder(k)
    for ln in lines:
        if order.add(ln):
            break
    return order.lines()


def fills(lines: list[Line], k: int) -> bool:
    """Whether ``pick`` finds its k lines among these alone (those after cannot change
    its choice)."""
    per: Counter[tuple[str, str]] = Counter()
    taken = 0
    for ln in lines:
        if per[ln.doc.conv] < limits.LINES_PER_CONVERSATION:
            per[ln.doc.conv] += 1
            taken += 1
            if taken == k:
                return True
    return False


def answer_lines(view: View, lines: list[Line], k: int) -> Answer:
    """A lower tier's answer from every line it found, best first."""
    for rank, ln in enumerate(lines):
        ln.rank = rank
    while True:
        top = pick(lines, k)
        originals = view.originals(top)
        gone = {key for key, text in originals.items() if text is None}
        if not gone:
            break
        lines = [ln for ln in lines if ln.doc.key not in gone]
    per_conversation = Counter(ln.doc.conv for ln in lines)
    return Answer(top, dict(per_conversation), len(lines), originals)
