"""The passage of an entry's body shown with a hit: where the query's words gather, or
around a regex match."""

from __future__ import annotations

import re
from collections.abc import Iterable

SNIPPET_CHARS = 240


def snippet(text: str, words: Iterable[str] = (), width: int = SNIPPET_CHARS) -> str:
    """The passage of ``text`` (whitespace made single spaces) with the most distinct
    words, about ``width`` characters; the text's start when none of them is in it."""
    flat = " ".join(text.split())
    words = [w for w in words if w]
    hits: list[tuple[int, str]] = []
    if words:
        pattern = re.compile(
            r"(?<![^\W_])(?:"
            + "|".join(map(re.escape, sorted(set(words), key=len, reverse=True)))
            + ")",
            re.IGNORECASE,
        )
        hits = [(m.start(), m.group().lower()) for m in pattern.finditer(flat)]
    if not hits:
        return _cut(flat, 0, width)
    best, best_count = hits[0][0], 0
    for i, (start, _) in enumerate(hits):
        distinct = {w for pos, w in hits[i:] if pos < start + width - 40}
        if len(distinct) > best_count:
            best, best_count = start, len(distinct)
    return _cut(flat, max(0, best - 40), width)


def snippet_at(text: str, start: int, end: int, width: int = SNIPPET_CHARS) -> str:
    """The passage of ``text`` around a match at [start, end)."""
    before = " ".join(text[:start].split())
    flat = " ".join(text.split())
    # Position of the match in the flattened text (leading whitespace collapsed).
    pos = len(before) + (1 if before and text[start - 1 : start].isspace() else 0)
    middle = max(0, pos - max(40, (width - (end - start)) // 3))
    return _cut(flat, middle, width)


def _cut(flat: str, start: int, width: int) -> str:
    if start > 0:
        space = flat.rfind(" ", 0, start + 1)
        start = space + 1 if space >= 0 and start - space < 30 else start
    end = start + width
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    text = flat[start:end].strip()
    return ("…" if start > 0 else "") + text + ("…" if end < len(flat) else "")
