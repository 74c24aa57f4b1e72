"""Where a hit is in its document, to cite it or open it there: the 1-based ``line`` of the
match an excerpt shows, and the nearest markdown heading above it (``# Title`` lines,
without their #'s; lines inside fenced code blocks are not headings)."""

from __future__ import annotations

import re

HEADING_CHARS = 200
# A fence (``` or ~~~ at the start of a line) or an ATX heading line.
_MARKS = re.compile(
    r"^ {0,3}(?:(?P<fence>```|~~~)|(?P<hashes>#{1,6})(?:[ \t]+(?P<title>[^\n]*?))?"
    r"(?:[ \t]+#+)?[ \t]*\r?$)",
    re.MULTILINE,
)


def line_of(text: str, pos: int) -> int:
    """The 1-based line of a position in ``text``."""
    return text.count("\n", 0, pos) + 1


def heading_above(text: str, pos: int) -> str | None:
    """The nearest markdown heading at or above the line of ``pos`` (None if none)."""
    end = text.find("\n", pos)
    found: str | None = None
    fence: str | None = None
    for m in _MARKS.finditer(text, 0, len(text) if end < 0 else end):
        mark = m.group("fence")
        if mark is not None:
            if fence is None:
                fence = mark
            elif mark == fence:
                fence = None
        elif fence is None:
            title = (m.group("title") or "").strip()
            found = title[:HEADING_CHARS] + ("…" if len(title) > HEADING_CHARS else "")
    return found or None


def heading_of_line(text: str, line: int) -> str | None:
    """The nearest markdown heading at or above a 1-based line of ``text``."""
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            break
        pos = nl + 1
    return heading_above(text, pos)
