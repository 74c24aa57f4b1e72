"""What a hit shows of a report: its date as the spec writes it, the query's words, where
the first match is, the excerpt around it, and the report's link."""

from __future__ import annotations

import datetime as dt
import os
import re
from bisect import bisect_left, bisect_right
from itertools import accumulate
from pathlib import Path
from typing import AnyStr
from urllib.parse import quote, quote_from_bytes

from indexer.config import Settings

COLLECTION = "reports"
EXCERPT_CHARS = 100  # of context on each side of the first match
ELLIPSIS = "..."
_WORDS = re.compile(r"\w+")


def iso_date(day: dt.date | None) -> str | None:
    """A report date as the spec shows it: midnight UTC, milliseconds, 'Z'."""
    return None if day is None else f"{day.isoformat()}T00:00:00.000Z"


def query_words(lowered: str) -> list[str]:
    """The words of a (lower-cased) query, each once, in order."""
    return list(dict.fromkeys(_WORDS.findall(lowered)))


def first_match(lowered: AnyStr, needles: list[AnyStr]) -> tuple[int, int]:
    """Where the first of the needles occurs in a lower-cased text: (start, length).

    The earliest; of two starting together, the shorter. (0, 0) if none occurs.
    """
    places = [(i, len(s)) for s in needles if (i := lowered.find(s)) >= 0]
    return min(places) if places else (0, 0)


# The characters that lower-case to more than one ('İ' -> 'i̇'); test_reports_search
# checks this against the running Python's Unicode tables.
LOWER_CHANGES_LENGTH = "\u0130"


def excerpt(text: str, lowered: str, start: int, end: int) -> str:
    """The original text around ``lowered[start:end]`` (``lowered`` is ``text.lower()``).

    About EXCERPT_CHARS characters on each side, runs of white space (newlines too) made
    one space, and ELLIPSIS where the text was cut.
    """
    return around(text, *in_text(text, lowered, start, end))


def in_text(text: str, lowered: str, start: int, end: int) -> tuple[int, int]:
    """Where ``lowered[start:end]`` is in ``text`` (``lowered`` is ``text.lower()``)."""
    if len(lowered) != len(text):  # lower-casing changed lengths ('İ' -> 'i̇'): map back
        ends = list(accumulate(len(c.lower()) for c in text))
        start = bisect_right(ends, start)
        end = min(len(text), bisect_left(ends, end) + 1)
    return start, end


def around(text: str, start: int, end: int) -> str:
    """excerpt, given where the match is in ``text`` itself."""
    a = max(0, start - EXCERPT_CHARS)
    b = min(len(text), end + EXCERPT_CHARS)
    body = " ".join(text[a:b].split())
    return (ELLIPSIS if a > 0 else "") + body + (ELLIPSIS if b < len(text) else "")


def report_link(settings: Settings, command: str, report_name: str, path: Path | str) -> str:
    base = settings.reports.link_base_url.strip()
    if base:
        return f"{base.rstrip('/')}/{quote(command, safe='')}/{quote(report_name, safe='')}"
    if isinstance(path, str) and os.path.isabs(path):  # Path.as_uri, without the Path
        return "file://" + quote_from_bytes(os.fsencode(path))
    return Path(path).as_uri()


def first_match_indexed(text: str, indexed: bytes, needles: list[str]) -> tuple[int, int] | None:
    """first_match in ``text`` as (start, end), found in ``indexed``, the lower-cased
    text the index keeps (UTF-8): this spares lower-casing the whole text. None unless
    lower-casing kept each character before the match one character (so positions
    carry over) and the match is there in ``text`` (the file may have changed since)."""
    at, size = first_match(indexed, [s.encode("utf-8") for s in needles])
    if not size:
        return None
    needle = indexed[at : at + size].decode("utf-8")
    start = len(indexed[:at].decode("utf-8", "replace"))
    end = start + len(needle)
    if any(text.find(c, 0, end) >= 0 for c in LOWER_CHANGES_LENGTH):
        return None
    return (start, end) if text[start:end].lower() == needle else None
