"""A regex query: when a query is one, how it is compiled, and how it is run over the
candidate entries under one wall-clock budget.

A regex runs case-insensitively over title and visible body, line by line (``.`` stops
at a line end, ``^``/``$`` match at each line). Candidates are the entries holding the
literals it requires (regex_candidates.py); each is then checked with the ``regex``
package under REGEX_BUDGET_S, so a pattern that backtracks without end answers
SEARCH_TIMEOUT instead of hanging.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import regex

from query.elog.caches import DocTable, ElogCache, Texts
from query.elog.index_access import ElogIndex
from query.elog.regex_candidates import docs_for_need
from query.elog.regex_literals import required_literals
from query.elog.snippets import snippet, snippet_at
from query.errors import TroveError

# Wall-clock budget for checking a regex against its candidates: the whole answer,
# SEARCH_TIMEOUT included, stays under a second.
REGEX_BUDGET_S = 0.75
REGEX_WORKERS = 2

# A query is a regex when it holds one of: .* .+ .? | [...] \d \w \s \b, or a bounded
# repeat ({3}, {2,}, {0,3}) after a character, ".", ")" or "]" (so "set {3}" stays text).
_REGEX_SIGNS = re.compile(r"\.[*+?]|\||\[[^\]]+\]|\\[dwsb]|(?<=\S)\{\d+(?:,\d*)?\}")


def is_regex(query: str) -> bool:
    """Whether search_elog reads the query as a regular expression: it holds ``.*``,
    ``.+``, ``.?``, a bounded repeat (``{3}``, ``{2,}``, ``{0,3}`` after a character,
    ``.``, ``)`` or ``]``), ``|``, ``[...]``, ``\\d``, ``\\w``, ``\\s`` or ``\\b``, or
    starts with ``^`` or ends with ``$``."""
    q = query.strip()
    return bool(_REGEX_SIGNS.search(q)) or q.startswith("^") or q.endswith("$")


def compile_regex(query: str) -> regex.Pattern[str]:
    """The pattern, case-insensitive and per line; INVALID_QUERY quoting the error."""
    try:
        return regex.compile(query, regex.IGNORECASE | regex.MULTILINE)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise TroveError(
            "INVALID_QUERY",
            f"query {query!r} reads as a regular expression but is invalid: {exc}. "
            "Escape special characters with a backslash, or drop them to search text",
        ) from None


@dataclass
class RegexHit:
    docnum: int
    score: float
    span: tuple[int, int] | None  # first match in the body


def regex_hits(
    index: ElogIndex,
    table: DocTable,
    cache: ElogCache,
    pattern: regex.Pattern[str],
    text: str,
    allowed: set[int] | None,
    max_results: int,
) -> tuple[list[tuple[Mapping[str, Any], str, float]], int]:
    """The best ``max_results`` entries the pattern matches among ``allowed`` (a title
    match first, then newest first) as (stored fields, snippet, score), and how many
    match in all. Raises SEARCH_TIMEOUT past the budget."""
    candidates = set(table.live if allowed is None else allowed)
    need = required_literals(text)
    if need is not None:
        narrowed = docs_for_need(index, cache, need)
        if narrowed is not None:
            candidates &= narrowed
    store = Texts(index, cache)
    texts = [(d, *store.get(d)) for d in sorted(candidates)]
    matches = regex_matches(pattern, texts, text)
    bodies = {d: body for d, _title, body in texts}
    stamp = table.stamp
    matches.sort(key=lambda m: (m.score, stamp[m.docnum], m.docnum), reverse=True)
    hits = []
    for m in matches[:max_results]:
        body = bodies[m.docnum]
        shown = snippet_at(body, *m.span) if m.span else snippet(body)
        hits.append((index.stored_fields(m.docnum), shown, m.score))
    return hits, len(matches)


def regex_matches(
    pattern: regex.Pattern[str], texts: list[tuple[int, str, str]], query: str
) -> list[RegexHit]:
    """The candidates the pattern matches, checked by worker threads (one per core, at
    most REGEX_WORKERS) under one wall-clock budget.

    The workers match with the GIL released. The ``regex`` package's own timeout counts
    the process's CPU time, which on a busy machine runs at half the wall clock or
    slower; so the caller waits on the wall clock and tells the workers to stop. Each of
    their calls is given only the time left, so one under way when the answer goes out
    ends within about that.
    """
    cancel = threading.Event()
    deadline = time.monotonic() + REGEX_BUDGET_S
    n = max(1, min(REGEX_WORKERS, os.cpu_count() or 1, len(texts) // 500))
    shares = [texts[i::n] for i in range(n)]
    outcomes: list[dict[str, Any]] = [{} for _ in shares]
    workers = []

    def work(share: list[tuple[int, str, str]], outcome: dict[str, Any]) -> None:
        try:
            outcome["hits"] = _match_all(pattern, share, deadline, cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            outcome["error"] = exc

    for share, outcome in zip(shares, outcomes, strict=True):
        worker = threading.Thread(
            target=work, args=(share, outcome), name="trove-elog-regex", daemon=True
        )
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            cancel.set()
            _timeout(query, len(texts))
    found: list[RegexHit] = []
    for outcome in outcomes:
        if isinstance(outcome.get("error"), TimeoutError):
            _timeout(query, len(texts))
        if "error" in outcome:
            raise outcome["error"]
        found += outcome["hits"]
    return found


def _match_all(
    pattern: regex.Pattern[str],
    texts: list[tuple[int, str, str]],
    deadline: float,
    cancel: threading.Event,
) -> list[RegexHit]:
    """Candidates whose title (score 2) or body (score 1) the pattern matches.

    Every call gets only the time left, and the clock and the flag are read before each
    entry: once the caller has answered SEARCH_TIMEOUT nothing may go on burning a core.
    """
    found: list[RegexHit] = []
    search = pattern.search
    for docnum, title, body in texts:
        if cancel.is_set() or time.monotonic() >= deadline:
            raise TimeoutError
        in_title = search(title, timeout=_left(deadline), concurrent=True) is not None
        m = search(body, timeout=_left(deadline), concurrent=True)
        if in_title or m is not None:
            found.append(RegexHit(docnum, 2.0 * in_title + (m is not None), m and m.span()))
    return found


def _left(deadline: float) -> float:
    """Seconds until the deadline (0 once past it: the regex package then stops at once)."""
    return max(0.0, deadline - time.monotonic())


def _timeout(query: str, n: int) -> None:
    raise TroveError(
        "SEARCH_TIMEOUT",
        f"the regular expression {query!r} did not finish within {REGEX_BUDGET_S:g} s over "
        f"{n} candidate entries: it backtracks too much (nested repeats such as (a+)+ or "
        "(a|aa)+ do); make it more specific, or narrow it with since/until or a filter",
    )
