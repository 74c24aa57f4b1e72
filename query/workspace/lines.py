"""Lines of a lower-cased text: which hold the literal and how well, their numbers, and
the excerpt shown from the line as written."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from indexer.cjk import CJK_CHARS
from query.workspace import limits
from query.workspace.cache import Doc

# Word characters for "whole word" purposes: as the index cuts words, a CJK character
# is a word of its own, so it never joins the letters next to it into one word.
JOINS = rf"[^\W{CJK_CHARS}]"


@dataclass
class Line:
    doc: Doc
    number: int
    score: float
    line: str  # lower-cased
    col: int
    length: int
    rank: int


class Matcher:
    """The literal's patterns over lower-cased text: lines that hold it, by how well.

    Every pattern ends with the rest of the line, so each line matches at most once.
    """

    def __init__(self, literal: str) -> None:
        lit = literal.lower()
        self.length = len(lit)
        body = re.escape(lit)
        # The empty group makes findall return empty strings: counting without copying.
        self.any = re.compile(body + r"[^\n]*()")
        # A side can only cut a word if the literal has a word character at that edge.
        # The left check looks back from the literal's end, so that every pattern starts
        # with the literal itself (which the regex engine searches for quickly).
        left = rf"(?<!{JOINS}.{{{len(lit)}}})" if re.match(JOINS, lit[0]) else ""
        right = rf"(?!{JOINS})" if re.match(JOINS, lit[-1]) else ""
        levels = [
            (1.0, body + left + right),  # whole words
            (0.85, body + left),  # the start of a word
            (0.75, body + right),  # the end of a word
            (0.6, body),  # inside a word
        ]
        self.levels: list[tuple[float, re.Pattern[str]]] = []
        seen: set[str] = set()
        for score, pattern in levels:
            if pattern not in seen:  # an edge that cannot cut a word merges levels
                seen.add(pattern)
                self.levels.append((score, re.compile(pattern + r"[^\n]*")))

    def top_lines(self, docs: list[tuple[Doc, str]], k: int) -> list[Line]:
        """The first k lines of the documents (given newest first) in the shown order:
        by score, then in the documents' order, each conversation's first
        LINES_PER_CONVERSATION lines before all the other lines (answers.pick's order).

        Looks for lines score by score, best first, and stops as soon as it has k.
        """
        order = ShownOrder(k)
        seen: set[tuple[str, int]] = set()
        rank = 0
        for score, rx in self.levels:
            for doc, lowered in docs:
                line_no, counted_to = 1, 0
                for m in rx.finditer(lowered):
                    start = lowered.rfind("\n", 0, m.start()) + 1
                    line_no += lowered.count("\n", counted_to, start)
                    counted_to = start
                    if (doc.key, line_no) in seen:
                        continue
                    seen.add((doc.key, line_no))
                    end = lowered.find("\n", m.start())
                    line = lowered[start : end if end >= 0 else len(lowered)]
                    found = Line(doc, line_no, score, line, m.start() - start, self.length, rank)
                    rank += 1
                    if order.add(found):
                        return order.lines()
        return order.lines()


def excerpt(line: str, col: int, length: int) -> str:
    """The line, or the part of a long line around the match, with … where cut."""
    line = line.rstrip("\r")
    if len(line) <= limits.EXCERPT_CHARS:
        return line.strip()
    room = max(0, limits.EXCERPT_CHARS - length)
    start = max(0, col - room // 3)
    end = min(len(line), start + limits.EXCERPT_CHARS)
    start = max(0, end - limits.EXCERPT_CHARS)
    # Cut at spaces when there is one close by, so words stay whole.
    if start > 0:
        space = line.find(" ", start, col)
        if 0 <= space - start < 20:
            start = space + 1
    if end < len(line):
        space = line.rfind(" ", col + length, end)
        if space >= 0 and end - space < 20:
            end = space
    return ("…" if start > 0 else "") + line[start:end].strip() + ("…" if end < len(line) else "")


def original_line(original: str | None, ln: Line) -> str:
    """The line as written (case kept), unless the file changed since it was read."""
    if original is not None:
        lines = original.split("\n")
        if ln.number <= len(lines) and lines[ln.number - 1].lower() == ln.line:
            return lines[ln.number - 1]
    return ln.line


def line_at(lowered: str, start: int) -> str:
    end = lowered.find("\n", start)
    return lowered[start : end if end >= 0 else len(lowered)]


class LineCounter:
    """Line numbers of positions met in increasing order in one text."""

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self.number, self.counted_to = 1, 0

    def start_of(self, pos: int) -> tuple[int, int]:
        """(the line's number, where it starts) for a position at or after the last."""
        start = self.lowered.rfind("\n", 0, pos) + 1
        self.number += self.lowered.count("\n", self.counted_to, start)
        self.counted_to = start
        return self.number, start


class ShownOrder:
    """The first k lines of lines given best first, in the shown order: each conversation's
    first LINES_PER_CONVERSATION lines, best first; then the other lines, best first. The
    order does not depend on k, so a page continues the one before exactly."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.taken: list[Line] = []
        self.spare: list[Line] = []
        self.per: Counter[tuple[str, str]] = Counter()

    def add(self, line: Line) -> bool:
        """Takes the next line; True once the first k are known (no later line can come
        before them)."""
        conv = line.doc.conv
        if self.per[conv] < limits.LINES_PER_CONVERSATION:
            self.per[conv] += 1
            self.taken.append(line)
            return len(self.taken) == self.k
        if len(self.spare) < self.k:
            self.spare.append(line)
        return False

    def lines(self) -> list[Line]:
        return self.taken + self.spare[: self.k - len(self.taken)]
