"""Documents in parts: a document too long for one answer is read a part at a time, by
lines (``offset``: the first line, 1-based; ``limit``: how many lines).

Without a limit a part holds as many whole lines as keep the answer under
budget.DEFAULT_CHARS characters of JSON; with one, that many lines, still never more
than budget.MAX_CHARS. A line longer than MAX_LINE_CHARS is cut, with a marker saying
so. ``next_offset`` is where the next part starts (None at the end): reading part after
part gives back the file's lines, each once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from query import budget, tools

A = TypeVar("A")

# A get tool reads at most this much of a file (its parts are served from it).
READ_MAX_BYTES = 64 * 1024 * 1024
MAX_LINE_CHARS = 2_000
LINE_CUT = " … [line cut: {n:,} characters in all; the file has it whole]"


@dataclass(frozen=True)
class Part:
    content: str
    start_line: int
    end_line: int
    total_lines: int
    next_offset: int | None
    note: str | None = None


def check_part(offset: object, limit: object) -> tuple[int, int | None]:
    """``offset`` (None: 1) and ``limit`` (None: by size), checked (tools.PART_OFFSET,
    tools.PART_LIMIT)."""
    first = tools.PART_OFFSET.check_or_none(offset)
    return 1 if first is None else first, tools.PART_LIMIT.check_or_none(limit)


START_LINE = "The part's first line (1-based)."
END_LINE = "The part's last line (start_line - 1 for an empty part)."
TOTAL_LINES = "The lines of the whole document."
NEXT_OFFSET = (
    "The first line of the next part (ask again with offset=next_offset), or null: the "
    "part reaches the end."
)
PART_NOTE = "Set when a part was cut short of the lines asked for, and how to go on."
# Room kept for what a part adds beside its content: the numbers, which grow as it is
# chosen, and a note when it is cut short of its limit.
_SLACK = 400


def room_for(answer_size: int, limit: int | None) -> int:
    """The characters of JSON a part's content may take in an answer whose other fields
    take ``answer_size``: DEFAULT_CHARS in all without a limit, MAX_CHARS with one."""
    cap = budget.DEFAULT_CHARS if limit is None else budget.MAX_CHARS
    return cap - answer_size - _SLACK


def part_of(text: str, offset: int, limit: int | None, room: int) -> Part:
    """The part of ``text`` from line ``offset``: ``limit`` lines (None: as many as fit),
    whose content takes at most ``room`` characters of JSON (at least one line)."""
    lines = text.splitlines(keepends=True)
    total = len(lines)
    if offset > total:
        return Part("", offset, offset - 1, total, None)
    taken: list[str] = []
    used = 2  # the content's quotes
    end = offset - 1
    stop = total if limit is None else min(total, offset - 1 + limit)
    for line in lines[offset - 1 : stop]:
        shown = _cut(line)
        cost = len(json.dumps(shown)) - 2
        if taken and used + cost > room:
            break
        taken.append(shown)
        used += cost
        end += 1
    note = None
    if limit is not None and end < stop:
        note = (
            f"cut at line {end} of the {limit} asked for, to keep the answer under "
            f"{budget.MAX_CHARS:,} characters; ask again with offset={end + 1}"
        )
    return Part("".join(taken), offset, end, total, end + 1 if end < total else None, note)


def _cut(line: str) -> str:
    body = line.rstrip("\r\n")
    if len(body) <= MAX_LINE_CHARS:
        return line
    return body[:MAX_LINE_CHARS] + LINE_CUT.format(n=len(body)) + line[len(body) :]


def unfilled(offset: int) -> dict[str, Any]:
    """The part fields of an answer not yet ``filled``: ``Model(..., **unfilled(offset))``."""
    return {
        "content": "",
        "start_line": offset,
        "end_line": offset - 1,
        "total_lines": 0,
        "next_offset": None,
    }


def filled(answer: A, text: str, offset: int, limit: int | None, whole: bool = False) -> A:
    """``answer`` (a model made with ``unfilled`` part fields) holding the part of
    ``text`` from line ``offset``, sized to the answer's budget (its ``note`` added to
    the answer's); with ``whole``, all of it, lines uncut (for the web page, which shows a
    document whole)."""
    model: Any = answer
    if whole:
        total = len(text.splitlines())
        model.content = text
        model.start_line, model.end_line, model.total_lines = 1, total, total
        model.next_offset = model.note = None
        return answer
    part = part_of(text, offset, limit, room_for(budget.size(model), limit))
    model.content = part.content
    model.start_line, model.end_line = part.start_line, part.end_line
    model.total_lines, model.next_offset = part.total_lines, part.next_offset
    if part.note:
        model.note = f"{model.note}; {part.note}" if model.note else part.note
    return answer
