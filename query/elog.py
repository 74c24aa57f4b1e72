"""ELOG searches: ``search_elog`` (text, regex, dates, filters) and ``get_elog_thread``.

search_elog answers in one of four ways, named by the response's ``ranker``:
- no query: the entries in the date range and filters, newest first (``recency``);
- text: BM25F over title, body and attributes, then the top candidates reranked
  (``bm25+semantic`` or ``bm25+lexical``, see query/rerank.py; ``bm25`` when off);
- a regex (DESIGN.md's rule: ``.*``, ``.+``, ``|``, ``[...]``, ``\\d``, ``\\w``, ``\\s``,
  ``\\b``, a leading ``^`` or a trailing ``$``): case-insensitive over title and visible
  body, line by line (``.`` stops at a line end, ``^``/``$`` match at each line).
  Candidates are the entries whose words hold the literals the pattern cannot match
  without (``beam`` and ``energy`` for ``beam.*energy``), found in the index's term
  lists; each candidate is then checked with the ``regex`` package under one time
  budget (REGEX_BUDGET_S), so a pattern that backtracks without end answers
  SEARCH_TIMEOUT instead of hanging.
``since``/``until`` are days in the logbook's own time (each entry's offset); ``until``
is inclusive through the end of its day. A time of day given without an offset is read
in each entry's own offset too; one with an offset is an absolute instant.
"""

from __future__ import annotations

import bisect
import calendar
import heapq
import logging
import os
import re
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Literal

import regex
from pydantic import BaseModel, Field
from rapidfuzz import process
from whoosh.query import And, AndMaybe, NumericRange, Or, Phrase, Query, Term
from whoosh.searching import Searcher

from indexer.sources.base import CJK_CHARS
from indexer.sources.elog import ElogSource, allowed_filter_values
from indexer.store import Syncer
from query.args import MAX_QUERY_CHARS, check_range
from query.context import QueryContext
from query.errors import TroveError
from query.rerank import Candidate, RerankMode, choose_reranker, query_words, rerank_scores

log = logging.getLogger(__name__)

COLLECTION = "elog"
MAX_RESULTS = 50
# How many BM25 hits a reranker reorders.
RERANK_DEPTH = {"lexical": 30, "semantic": 16}
# Wall-clock budget for checking a regex against its candidates: the whole answer,
# SEARCH_TIMEOUT included, stays under a second.
REGEX_BUDGET_S = 0.75
REGEX_WORKERS = 2
SNIPPET_CHARS = 240
# A literal found in more index terms than this narrows nothing worth the postings reads.
MAX_LITERAL_TERMS = 3000
# The shortest literal piece worth looking up (one letter is in nearly every term).
MIN_LITERAL_CHARS = 2
MAX_THREAD_ENTRIES = 10_000
# Doc numbers kept in the posting cache (4 bytes each).
POSTING_CACHE_IDS = 4_000_000

Ranker = Literal["recency", "bm25", "bm25+lexical", "bm25+semantic", "regex"]


# --------------------------------------------------------------------------- models


class ElogHit(BaseModel):
    """One logbook entry that answers a search."""

    elog_id: int = Field(description="The entry's message id (for get_elog_thread).")
    title: str = Field(description="The entry's title.")
    date: str = Field(description="When it was written: ISO 8601 with the logbook's offset.")
    author: str
    category: str = Field(description="As written in the entry (may be empty).")
    system: str = Field(description="As written; multi-choice values read 'a | b'.")
    domain: str
    section: str
    snippet: str = Field(
        description="The passage of the body that matches (its start when nothing in the "
        "body does, or when there is no query)."
    )
    score: float = Field(
        description="The ranker's score (higher is better; 0 when ordered by date)."
    )
    link: str = Field(description="[elog] link_base_url + id; a file:// URL when unset.")


class ElogSearchResponse(BaseModel):
    """The answer to search_elog."""

    hits: list[ElogHit] = Field(description="The best entries, best (or newest) first.")
    total: int = Field(description="How many entries matched, before the max_results cut.")
    ranker: Ranker = Field(
        description="What ordered the hits: recency (no query, newest first), bm25, "
        "bm25+lexical or bm25+semantic (text), regex (a regular expression)."
    )


class ElogThreadEntry(BaseModel):
    """One entry of a thread."""

    elog_id: int
    depth: int = Field(description="Replies between the thread's root and this entry.")
    title: str
    date: str
    author: str
    category: str
    system: str
    domain: str
    section: str
    in_reply_to: int | None = Field(description="The parent's id (null on the root).")
    replies: list[int] = Field(description="Ids of its direct replies found in the logbook.")
    body: str = Field(description="The text a reader sees (tags stripped).")
    attachments: list[str]
    link: str


class ElogThreadResponse(BaseModel):
    """The answer to get_elog_thread."""

    root_id: int = Field(description="The id of the thread's first entry.")
    message_id: int = Field(description="The entry that was asked for.")
    entries: list[ElogThreadEntry] = Field(
        description="Depth first from the root, replies in id order."
    )
    missing: list[int] = Field(
        default_factory=list,
        description="Ids the thread's links name that the logbook does not hold.",
    )


# --------------------------------------------------------------------------- arguments


_REGEX_SIGNS = re.compile(r"\.\*|\.\+|\||\[[^\]]+\]|\\[dwsb]")


def is_regex(query: str) -> bool:
    """Whether search_elog reads the query as a regular expression (DESIGN.md's rule)."""
    q = query.strip()
    return bool(_REGEX_SIGNS.search(q)) or q.startswith("^") or q.endswith("$")


@dataclass(frozen=True)
class _Bound:
    """One end of the date range: a day, and a time on it (aware, or naive = local)."""

    day: int  # YYYYMMDD
    moment: datetime | None  # None: the whole day counts

    @property
    def wall(self) -> datetime:
        """For comparing two bounds: the naive wall-clock time."""
        if self.moment is not None:
            return self.moment.replace(tzinfo=None)
        return datetime(self.day // 10000, self.day // 100 % 100, self.day % 100)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MONTH = re.compile(r"\d{4}-\d{2}")


def _parse_bound(value: str | date | None, name: str, end: bool) -> _Bound | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        moment: datetime | None = value
    elif isinstance(value, date):
        return _Bound(value.year * 10000 + value.month * 100 + value.day, None)
    elif not isinstance(value, str):
        raise TroveError("INVALID_DATE_RANGE", f"{name} must be a date string, got {value!r}")
    else:
        text = value.strip()
        if not text:
            return None
        hint = "use YYYY-MM-DD or ISO 8601 such as 2025-10-06T08:00:00+02:00"
        try:
            if _DAY.fullmatch(text):
                d = date.fromisoformat(text)
                return _Bound(d.year * 10000 + d.month * 100 + d.day, None)
            if _MONTH.fullmatch(text):
                year, month = int(text[:4]), int(text[5:])
                last = calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
                d = date(year, month, last if end else 1)
                return _Bound(d.year * 10000 + d.month * 100 + d.day, None)
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise TroveError(
                "INVALID_DATE_RANGE", f"{name} {value!r} is not a valid date ({exc}): {hint}"
            ) from None
    return _Bound(moment.year * 10000 + moment.month * 100 + moment.day, moment)


def check_dates(
    since: str | date | None, until: str | date | None
) -> tuple[_Bound | None, _Bound | None]:
    """``since`` and ``until`` read; INVALID_DATE_RANGE if one is bad or since > until."""
    low = _parse_bound(since, "since", end=False)
    high = _parse_bound(until, "until", end=True)
    if low is not None and high is not None:
        if (
            low.moment is not None
            and high.moment is not None
            and (low.moment.tzinfo is not None and high.moment.tzinfo is not None)
        ):
            later = low.moment > high.moment
        else:  # wall-clock times; a bare day runs from 00:00 (since) to 24:00 (until)
            start = low.wall
            end = high.wall if high.moment is not None else high.wall + timedelta(days=1)
            later = start > end if high.moment is not None else start >= end
        if later:
            raise TroveError(
                "INVALID_DATE_RANGE",
                f"since ({since}) is after until ({until}); give since <= until",
            )
    return low, high


# --------------------------------------------------------------------------- per-process cache


class _ElogCache:
    """What search_elog derives from the index and keeps between queries."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # {segment id: {doc number in the segment: (title, body)}}
        self.texts: dict[str, dict[int, tuple[str, str]]] = {}
        # (reader, {field: its terms}) for finding terms holding a literal
        self.lexicon: tuple[Any, dict[str, _Lexicon]] | None = None
        self.table: tuple[Any, _DocTable] | None = None
        self.allowed: tuple[Any, dict[str, list[str]]] | None = None
        self.postings = _PostingCache()


class _PostingCache:
    """Doc numbers per (field, term) of one reader, least recently used dropped first.

    Whoosh decodes postings one Python call at a time (about 4 us each): a common word
    costs tens of milliseconds per query. Kept as 4-byte arrays, a set is rebuilt from
    one in C for a fraction of that.
    """

    def __init__(self, max_ids: int = POSTING_CACHE_IDS) -> None:
        self.max_ids = max_ids
        self.reader: Any = None
        self.size = 0
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple[str, str], array[int]] = OrderedDict()

    def docs(self, reader: Any, name: str, text: str) -> array[int]:
        key = (name, text)
        with self.lock:
            if self.reader is not reader:
                self.reader, self.size = reader, 0
                self.entries.clear()
            found = self.entries.get(key)
            if found is not None:
                self.entries.move_to_end(key)
                return found
        ids = array("I", reader.postings(name, text).all_ids() if key in reader else ())
        with self.lock:
            if self.reader is reader and key not in self.entries:
                self.entries[key] = ids
                self.size += len(ids)
                while self.size > self.max_ids and len(self.entries) > 1:
                    _, dropped = self.entries.popitem(last=False)
                    self.size -= len(dropped)
        return ids


class _DocTable:
    """Every entry's doc number, time and day, for date ranges and newest-first order.

    Built from the sortable columns once per reader (about 0.1 s at 30k entries);
    Whoosh's NumericRange expands into many terms per segment and cost more than that
    on every query.
    """

    def __init__(self, searcher: Searcher) -> None:
        reader = searcher.reader()
        live = sorted(searcher.docs_for_query(Term("kind", "doc")))
        # An index without documents has no columns to read.
        stamps = reader.column_reader("timestamp") if live else {}
        days = reader.column_reader("day") if live else {}
        self.live = set(live)
        self.stamp = {d: stamps[d] for d in live}
        by_day = sorted((days[d], d) for d in live)
        self.days = [day for day, _ in by_day]
        self.day_docs = [d for _, d in by_day]
        by_time = sorted((self.stamp[d], d) for d in live)
        self.times = [t for t, _ in by_time]
        self.time_docs = [d for _, d in by_time]

    def in_days(self, low: int | None, high: int | None) -> set[int]:
        i = 0 if low is None else bisect.bisect_left(self.days, low)
        j = len(self.days) if high is None else bisect.bisect_right(self.days, high)
        return set(self.day_docs[i:j])

    def in_times(self, low: int | None, high: int | None) -> set[int]:
        i = 0 if low is None else bisect.bisect_left(self.times, low)
        j = len(self.times) if high is None else bisect.bisect_right(self.times, high)
        return set(self.time_docs[i:j])

    def newest(self, docs: Iterable[int], n: int) -> list[int]:
        stamp = self.stamp
        return heapq.nlargest(n, docs, key=lambda d: (stamp[d], d))


def _doc_table(searcher: Searcher, cache: _ElogCache) -> _DocTable:
    reader = searcher.reader()
    with cache.lock:
        if cache.table is not None and cache.table[0] is reader:
            return cache.table[1]
    table = _DocTable(searcher)
    with cache.lock:
        cache.table = (reader, table)
    return table


def _cache(ctx: QueryContext) -> _ElogCache:
    cache = ctx.memo.get("elog")
    if cache is None:
        cache = ctx.memo.setdefault("elog", _ElogCache())
    return cache


def _allowed_values(ctx: QueryContext, root: Path) -> dict[str, list[str]]:
    """Allowed Category/System/Domain values: ``[sources] elog_config``, else SwissFEL's."""
    config = ctx.settings.sources.elog_config
    try:
        stamp = (str(config), config.stat().st_mtime_ns) if config else None
    except OSError:
        stamp = (str(config), None)
    cache = _cache(ctx)
    if cache.allowed is not None and cache.allowed[0] == stamp:
        return cache.allowed[1]
    values = allowed_filter_values(config, root.name)
    if config is not None and not any(values.values()):
        values = allowed_filter_values(config)  # no section named after the folder
    cache.allowed = (stamp, values)
    return values


# --------------------------------------------------------------------------- index access


def _root(ctx: QueryContext) -> Path:
    root = ctx.settings.source_root(COLLECTION)
    if root is None or not root.is_dir():
        raise TroveError(
            "DIRECTORY_NOT_FOUND",
            f"the ELOG logbook folder {root or '(not configured)'} does not exist; "
            "check [sources] elog in the config",
        )
    return root


@contextmanager
def _searcher(ctx: QueryContext) -> Iterator[Searcher]:
    """The elog searcher; an index never built is built first."""
    with ctx.indexes.searcher(COLLECTION) as searcher:
        if searcher is not None:
            yield searcher
            return
    syncer = Syncer(ctx.settings, ElogSource())
    syncer.parallel = threading.active_count() == 1  # never fork a threaded process
    syncer.reconcile()
    with ctx.indexes.searcher(COLLECTION) as searcher:
        if searcher is None:
            raise TroveError("DIRECTORY_NOT_FOUND", "the ELOG index could not be built")
        yield searcher


class _Texts:
    """Titles and bodies by global doc number, cached per segment across queries."""

    def __init__(self, searcher: Searcher, cache: _ElogCache) -> None:
        self.leaves: list[tuple[Any, str | None, dict[int, tuple[str, str]]]] = []
        self.bases: list[int] = []
        live: set[str] = set()
        for reader, base in searcher.reader().leaf_readers():
            segment = getattr(reader, "segment", lambda: None)()
            segid = segment.segment_id() if segment is not None else None
            with cache.lock:
                store = cache.texts.setdefault(segid, {}) if segid else {}
            if segid:
                live.add(segid)
            self.leaves.append((reader, segid, store))
            self.bases.append(base)
        with cache.lock:
            for segid in list(cache.texts):
                if segid not in live:
                    del cache.texts[segid]

    def get(self, docnum: int) -> tuple[str, str]:
        i = bisect.bisect_right(self.bases, docnum) - 1
        reader, _segid, store = self.leaves[i]
        local = docnum - self.bases[i]
        texts = store.get(local)
        if texts is None:
            fields = reader.stored_fields(local)
            texts = (fields.get("title") or "", fields.get("body") or "")
            store[local] = texts
        return texts


# --------------------------------------------------------------------------- filters


def _filter_term(
    name: str, value: str | None, allowed: list[str], searcher: Searcher
) -> str | None:
    """The index term a filter value selects (lower-cased), or None for no filter."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TroveError("INVALID_ARGUMENT", f"{name} must be text, got {value!r}")
    text = value.strip()
    if not text:
        return None
    lowered = text.lower()
    if not allowed or lowered in {a.lower() for a in allowed}:
        return lowered
    if (name, lowered) in searcher.reader():
        return lowered  # a value older entries carry
    close = process.extractOne(text, allowed, score_cutoff=70)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TroveError(
        "INVALID_ARGUMENT",
        f"unknown {name} {text!r}{hint}; valid values: {', '.join(allowed)} "
        "(any case; values found in older entries work too)",
    )


def _selected(
    ctx: QueryContext,
    root: Path,
    searcher: Searcher,
    table: _DocTable,
    filters: dict[str, str | None],
    low: _Bound | None,
    high: _Bound | None,
) -> set[int] | None:
    """Doc numbers of the entries in the date range and filters (None: every entry)."""
    allowed = _allowed_values(ctx, root)
    reader = searcher.reader()
    sets: list[set[int]] = []
    for name, value in filters.items():
        term = _filter_term(name, value, allowed.get(name.capitalize(), []), searcher)
        if term is not None:
            found = set(_cache(ctx).postings.docs(reader, name, term))
            sets.append(found & table.live)
    days: list[int | None] = [None, None]
    times: list[int | None] = [None, None]
    walls: list[tuple[_Bound, bool]] = []
    for i, bound in enumerate((low, high)):
        if bound is None:
            continue
        if bound.moment is not None and bound.moment.tzinfo is not None:
            times[i] = int(bound.moment.timestamp())
        else:
            days[i] = bound.day
            if bound.moment is not None:
                walls.append((bound, i == 0))
    if days != [None, None]:
        sets.append(table.in_days(*days))
    if times != [None, None]:
        sets.append(table.in_times(*times))
    if not sets:
        return None
    sets.sort(key=len)
    docs = sets[0].intersection(*sets[1:])
    for bound, is_low in walls:
        # A time of day without an offset: compare with each entry's own wall clock.
        wall = bound.moment.replace(tzinfo=None)  # type: ignore[union-attr]
        for docnum in docs & table.in_days(bound.day, bound.day):
            local = datetime.fromisoformat(searcher.stored_fields(docnum)["date"])
            local = local.replace(tzinfo=None)
            if (local < wall) if is_low else (local > wall):
                docs.discard(docnum)
    return docs


# --------------------------------------------------------------------------- text queries


_PHRASE = re.compile(r'"([^"]*)"')


def _forms(word: str) -> list[tuple[str, float]]:
    """The word, and its other number (singular/plural) at a lower weight."""
    forms = [(word, 1.0)]
    if len(word) >= 4 and word.isalpha():
        if word.endswith("ies"):
            forms.append((word[:-3] + "y", 0.7))
        elif word.endswith("es") and not word.endswith("ses"):
            forms += [(word[:-2], 0.7), (word[:-1], 0.7)]
        elif word.endswith("s") and not word.endswith("ss"):
            forms.append((word[:-1], 0.7))
        else:
            forms.append((word + "s", 0.7))
    return forms


def _words(text: str) -> list[str]:
    return query_words(text)


@dataclass
class TextQuery:
    """A text query for Whoosh, the terms it matches on, and the words to show."""

    query: Query  # any word (quoted phrases required)
    strict: Query | None  # every word (None: one word, the same as ``query``)
    terms: list[tuple[str, str]]  # (field, text) of every optional term
    phrased: bool  # quoted phrases must match
    words: list[str]


def text_query(query: str) -> TextQuery:
    """BM25F over title (x2), body and attributes; quoted phrases must appear.

    ``query`` is one flat Or of every (field, word form) term: the same BM25F sum as
    one Or per word, and a third cheaper for Whoosh to match. ``strict`` asks for every
    word (in any field and form), scored the same way.
    """
    phrases = [p for p in _PHRASE.findall(query) if p.strip()]
    rest = _PHRASE.sub(" ", query)
    shown: list[str] = []
    clauses: list[Query] = []
    per_word: list[Query] = []
    terms: list[tuple[str, str]] = []
    for word in _words(rest):
        mine: list[Query] = []
        for form, weight in _forms(word):
            shown.append(form)
            for name, boost in (("title", 2.0), ("body", 1.0), ("attributes", 0.8)):
                if name == "attributes" and form != word:
                    continue  # attribute values are names, not prose
                mine.append(Term(name, form, boost=boost * weight))
                terms.append((name, form))
        clauses += mine
        per_word.append(Or(mine))
    required: list[Query] = []
    for phrase in phrases:
        parts = _words(phrase)
        shown += parts
        if len(parts) == 1:
            required.append(Or([Term("title", parts[0], boost=2.0), Term("body", parts[0])]))
        elif parts:
            required.append(Or([Phrase("title", parts, boost=2.0), Phrase("body", parts)]))
    if not clauses and not required:
        raise TroveError(
            "INVALID_QUERY",
            f"query {query!r} holds no words to search for; give words, device names or a regex",
        )
    words = list(dict.fromkeys(shown))
    strict = And(required + per_word) if len(required) + len(per_word) > 1 else None
    optional = Or(clauses) if clauses else None
    if not required:
        assert optional is not None
        return TextQuery(optional, strict, terms, False, words)
    must = And(required) if len(required) > 1 else required[0]
    combined = AndMaybe(must, optional) if optional is not None else must
    return TextQuery(combined, strict, terms, True, words)


def _candidates(
    searcher: Searcher, tq: TextQuery, depth: int, needed: int, allowed: set[int] | None
) -> list[tuple[dict[str, Any], float]]:
    """Up to ``depth`` BM25F hits for the reranker: the entries holding every word, best
    first; when fewer than ``needed`` hold them all, the best holding any fill up.

    An Or of common words makes Whoosh score every entry holding any of them (3-5x
    slower at 30k entries than the And, which skips along the rarest word).
    """
    found: dict[int, tuple[dict[str, Any], float]] = {}
    if tq.strict is not None:
        for hit in searcher.search(tq.strict, limit=depth, filter=allowed):
            found[hit.docnum] = (hit.fields(), hit.score)
    best = sorted(found.values(), key=lambda fs: -fs[1])
    if len(found) >= needed:
        return best
    rest = []
    for hit in searcher.search(tq.query, limit=depth, filter=allowed):
        if hit.docnum not in found:
            rest.append((hit.fields(), hit.score))
    return best + rest[: depth - len(best)]


def _matching(
    searcher: Searcher, cache: _ElogCache, tq: TextQuery, allowed: set[int] | None
) -> set[int]:
    """Every doc number the text query matches (for ``total``), from the postings:
    Whoosh's own count runs a second scored pass and costs more than the search."""
    if tq.phrased:
        docs = set(searcher.docs_for_query(tq.query))
    else:
        docs = set()
        reader = searcher.reader()
        for name, text in tq.terms:
            docs.update(cache.postings.docs(reader, name, text))
    return docs if allowed is None else docs & allowed


_WORDISH = re.compile(rf"[^\W_{CJK_CHARS}]")


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


# --------------------------------------------------------------------------- regex queries


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


@dataclass(frozen=True)
class Lit:
    """A literal a match must contain; ``starts``/``ends``: a line or text anchor
    (``^``, ``$``) stands right before/after it, so a word there starts/ends too."""

    text: str
    starts: bool = False
    ends: bool = False


# A requirement: a literal, ("and", [...]) or ("or", [...]); None: no requirement.
Need = Lit | tuple[str, list[Any]] | None

# Syntax the two parsers may read differently, outside a [...] set: a brace that is not
# a repeat count ({e<=1} is fuzzy matching in ``regex``), inline flags only ``regex``
# has ((?V1) turns on set operations and nested sets, (?f) full case folding...).
_REGEX_ONLY = re.compile(r"\{(?!\d*,?\d*\})|\(\?[a-zA-Z0-9-]*[befprVw]")
_SET_OPERATORS = ("--", "&&", "||", "~~")


def _read_alike(pattern: str) -> bool:
    """Whether the standard library's parser reads ``pattern`` as the ``regex`` package
    does (False whenever they may not).

    They differ on POSIX classes (``[[:alpha:]]``: to ``re`` a set and a literal
    ``]``), nested sets and set operations (``--``, ``&&``, ``||``, ``~~`` in a set),
    ``\\p{..}``, ``\\N{..}``, fuzzy matching and ``regex``'s own flags.
    """
    i, n = 0, len(pattern)
    in_set = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern[i + 1 : i + 2] in ("p", "P", "N"):
                return False
            i += 2
            continue
        if in_set:
            if c == "[" or pattern[i : i + 2] in _SET_OPERATORS:
                return False
            in_set = c != "]"
        elif c == "[":
            in_set = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1  # first in a set, "]" is a literal
        elif _REGEX_ONLY.match(pattern, i):
            return False
        i += 1
    return True


def required_literals(pattern: str) -> Need:
    """The literals any match of ``pattern`` must contain, as an and/or tree.

    ``beam.*energy`` needs ``("and", [Lit("beam"), Lit("energy")])``; ``RF|LLRF``
    needs ``("or", [Lit("RF"), Lit("LLRF")])``. Read with the standard library's
    parser; where it cannot read the pattern, or may read it otherwise than the
    ``regex`` package that matches, nothing is required.
    """
    if not _read_alike(pattern):
        return None
    try:
        parsed = sre_parser.parse(pattern, re.IGNORECASE | re.MULTILINE)
    except Exception:  # noqa: BLE001 - anything it cannot read narrows nothing
        return None
    return _seq_need(list(parsed))


_C = sre_constants
# Not \b: the regex package's \w leaves out digits such as "²" and "½" that the index
# keeps inside a term, so \bmm\b matches "mm²", where no term ends in "mm".
_LEFT_ANCHORS = {_C.AT_BEGINNING, _C.AT_BEGINNING_LINE, _C.AT_BEGINNING_STRING}
_RIGHT_ANCHORS = {_C.AT_END, _C.AT_END_LINE, _C.AT_END_STRING}
_REPEATS = {_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", _C.MAX_REPEAT)}


def _seq_need(items: list[tuple[Any, Any]]) -> Need:
    needs: list[Need] = []
    run: list[str] = []
    run_starts = anchored = False

    def flush(ends: bool) -> None:
        if run:
            needs.append(Lit("".join(run), run_starts, ends))
            run.clear()

    for op, av in items:
        if op is _C.LITERAL:
            if not run:
                run_starts = anchored
            run.append(chr(av))
            anchored = False
            continue
        flush(op is _C.AT and av in _RIGHT_ANCHORS)
        anchored = op is _C.AT and av in _LEFT_ANCHORS
        if op is _C.SUBPATTERN:
            needs.append(_seq_need(list(av[-1])))
        elif op is getattr(_C, "ATOMIC_GROUP", None):
            needs.append(_seq_need(list(av)))
        elif op in _REPEATS:
            low, _high, sub = av
            if low >= 1:
                needs.append(_seq_need(list(sub)))
        elif op is _C.BRANCH:
            alternatives = [_seq_need(list(alt)) for alt in av[1]]
            needs.append(None if any(a is None for a in alternatives) else ("or", alternatives))
    flush(False)
    kept = [n for n in needs if n is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ("and", kept)


_PIECE = re.compile(rf"[^\W_{CJK_CHARS}]+|[{CJK_CHARS}]")
_PLAIN = re.compile(rf"[^\W_{CJK_CHARS}]+|[{CJK_CHARS}]")
# Characters whose case-insensitive match a literal can be looked up exactly: ASCII
# (as the index lower-cases it, after _ASCII_FOLD) and CJK (caseless). Any other
# letter can match characters that neither lower() nor casefold() equate with it
# (the regex package's folding table is its own and newer), so it narrows nothing.
_EXACT = re.compile(rf"[\x00-\x7f{CJK_CHARS}]*")
# The only non-ASCII letters that match ASCII ones case-insensitively, as the index
# holds them: long s (matches s), dotless i (matches I), and the dotted capital I
# (matches i), lower-cased to "i" and a combining dot. The Kelvin sign is "k" already.
_ASCII_FOLD = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0307": None})


@dataclass(frozen=True)
class _Lexicon:
    """The plain terms of one field, ASCII-folded, for finding terms holding a literal."""

    joined: str  # one term a line, "\n" at both ends
    spelled: dict[str, list[str]]  # a folded term: the index terms it stands for, if others


def _lexicon(searcher: Searcher, cache: _ElogCache) -> dict[str, _Lexicon]:
    """The plain terms of title and body (words and device-name parts, no whole names
    or runs), cached per reader. A literal's word piece never spans a separator, so it
    lies inside a part whenever it lies inside a whole name."""
    reader = searcher.reader()
    with cache.lock:
        if cache.lexicon is not None and cache.lexicon[0] is reader:
            return cache.lexicon[1]
    lexicons = {}
    for name in ("title", "body"):
        plain: dict[str, None] = {}
        spelled: dict[str, list[str]] = {}
        for term in reader.field_terms(name):
            folded = term if term.isascii() else term.translate(_ASCII_FOLD)
            if _PLAIN.fullmatch(folded):
                plain[folded] = None
                if folded != term:
                    spelled.setdefault(folded, []).append(term)
        lexicons[name] = _Lexicon("\n" + "\n".join(plain) + "\n", spelled)
    with cache.lock:
        cache.lexicon = (reader, lexicons)
    return lexicons


def _docs_with_literal(searcher: Searcher, cache: _ElogCache, lit: Lit) -> set[int] | None:
    """Doc numbers whose title or body has terms holding every word piece of the literal
    (None when that narrows nothing).

    The index's terms are the maximal runs of letters and digits (and device names
    whole), so a piece with an ASCII non-word character or an anchor before it starts a
    term, and one with such a character or anchor after it ends one: ``^Re: RF`` needs
    the term ``re`` itself and a term starting with ``rf``. Pieces with other letters
    than ASCII and CJK are not looked up (see _EXACT).
    """
    text = lit.text.lower()
    reader = searcher.reader()
    lexicons = _lexicon(searcher, cache)
    postings = cache.postings
    result: set[int] | None = None
    for m in _PIECE.finditer(text):
        piece = m.group()
        if not _EXACT.fullmatch(piece):
            continue
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        starts = bool(_EXACT.fullmatch(before)) if before else lit.starts
        ends = bool(_EXACT.fullmatch(after)) if after else lit.ends
        if len(piece) < MIN_LITERAL_CHARS and piece.isascii() and not (starts and ends):
            continue
        needle = ("\n" if starts else "") + piece + ("\n" if ends else "")
        docs: set[int] = set()
        found = 0
        for name, lexicon in lexicons.items():
            joined = lexicon.joined
            terms: set[str] = set()
            for hit in re.finditer(re.escape(needle), joined):
                begin = joined.rfind("\n", 0, hit.start() + starts) + 1
                end = joined.find("\n", hit.end() - ends)
                terms.add(joined[begin:end])
            found += len(terms)
            if found > MAX_LITERAL_TERMS:
                break
            for term in terms:
                for spelling in (term, *lexicon.spelled.get(term, ())):
                    docs.update(postings.docs(reader, name, spelling))
        if found > MAX_LITERAL_TERMS:
            continue
        result = docs if result is None else result & docs
    return result


def _docs_for_need(searcher: Searcher, cache: _ElogCache, need: Need) -> set[int] | None:
    if need is None:
        return None
    if isinstance(need, Lit):
        return _docs_with_literal(searcher, cache, need)
    kind, parts = need
    sets = [_docs_for_need(searcher, cache, p) for p in parts]
    if kind == "or":
        if any(s is None for s in sets):
            return None
        return set().union(*sets)  # type: ignore[arg-type]
    known = [s for s in sets if s is not None]
    if not known:
        return None
    out = known[0]
    for s in known[1:]:
        out = out & s
    return out


@dataclass
class _RegexHit:
    docnum: int
    score: float
    span: tuple[int, int] | None  # first match in the body


def _regex_matches(
    pattern: regex.Pattern[str], texts: list[tuple[int, str, str]], query: str
) -> list[_RegexHit]:
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
    found: list[_RegexHit] = []
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
) -> list[_RegexHit]:
    """Candidates whose title (score 2) or body (score 1) the pattern matches.

    Every call gets only the time left, and the clock and the flag are read before each
    entry: once the caller has answered SEARCH_TIMEOUT nothing may go on burning a core.
    """
    found: list[_RegexHit] = []
    search = pattern.search
    for docnum, title, body in texts:
        if cancel.is_set() or time.monotonic() >= deadline:
            raise TimeoutError
        in_title = search(title, timeout=_left(deadline), concurrent=True) is not None
        m = search(body, timeout=_left(deadline), concurrent=True)
        if in_title or m is not None:
            found.append(_RegexHit(docnum, 2.0 * in_title + (m is not None), m and m.span()))
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


# --------------------------------------------------------------------------- search_elog


def _link(ctx: QueryContext, root: Path, fields: dict[str, Any]) -> str:
    base = ctx.settings.elog.link_base_url.strip()
    mid = fields["elog_id"]
    if base:
        return f"{base.rstrip('/')}/{mid}"
    return (root / fields.get("file", "")).resolve().as_uri() + f"#{mid}"


def _hit(
    ctx: QueryContext, root: Path, fields: dict[str, Any], snippet_text: str, score: float
) -> ElogHit:
    return ElogHit(
        elog_id=fields["elog_id"],
        title=fields.get("title") or "",
        date=fields.get("date") or "",
        author=fields.get("author") or "",
        category=fields.get("category") or "",
        system=fields.get("system") or "",
        domain=fields.get("domain") or "",
        section=fields.get("section") or "",
        snippet=snippet_text,
        score=round(float(score), 4),
        link=_link(ctx, root, fields),
    )


def search_elog(
    ctx: QueryContext,
    query: str | None = None,
    since: str | date | None = None,
    until: str | date | None = None,
    category: str | None = None,
    system: str | None = None,
    domain: str | None = None,
    max_results: int = 10,
    *,
    rerank: RerankMode | None = None,
) -> ElogSearchResponse:
    """Search the logbook: text (BM25F, reranked), a regex, or no query (newest first),
    within ``since``..``until`` (days, ``until`` inclusive) and the filters.

    ``rerank`` overrides ``[elog] rerank`` (``off``: BM25 alone); it is for callers that
    compare rankers (bench/, tests): the MCP tool and the CLI do not offer it.
    Raises `TroveError`: INVALID_QUERY, INVALID_ARGUMENT, INVALID_DATE_RANGE,
    DIRECTORY_NOT_FOUND, SEARCH_TIMEOUT.
    """
    text = _check_optional_query(query)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    low, high = check_dates(since, until)
    mode = rerank or ctx.settings.elog.rerank
    pattern = compile_regex(text) if text and is_regex(text) else None
    tq: TextQuery | None = None
    reranker = None
    if text and pattern is None:
        tq = text_query(text)
        reranker = choose_reranker(mode, ctx.memo)
    ranker: Ranker = (
        "recency" if text is None else "regex" if pattern is not None else _ranker(reranker)
    )
    root = _root(ctx)
    filters = {"category": category, "system": system, "domain": domain}
    cache = _cache(ctx)

    with _searcher(ctx) as searcher:
        table = _doc_table(searcher, cache)
        allowed = _selected(ctx, root, searcher, table, filters, low, high)
        if allowed is not None and not allowed:
            return ElogSearchResponse(hits=[], total=0, ranker=ranker)
        if text is None:
            docs = table.live if allowed is None else allowed
            hits = []
            for docnum in table.newest(docs, max_results):
                fields = searcher.stored_fields(docnum)
                hits.append(_hit(ctx, root, fields, snippet(fields.get("body") or ""), 0.0))
            return ElogSearchResponse(hits=hits, total=len(docs), ranker=ranker)

        if pattern is not None:
            assert text is not None
            return _regex_search(
                ctx, root, searcher, table, cache, pattern, text, allowed, max_results
            )

        assert tq is not None
        depth = max(max_results, RERANK_DEPTH.get(getattr(reranker, "name", ""), max_results))
        found = _candidates(searcher, tq, depth, max_results, allowed)
        total = len(_matching(searcher, cache, tq, allowed)) if found else 0

    if not found:
        return ElogSearchResponse(hits=[], total=total, ranker=ranker)
    snippets = [snippet(fields.get("body") or "", tq.words) for fields, _ in found]
    if reranker is None:
        scores = [score for _, score in found]
    else:
        candidates = [
            Candidate(
                title=fields.get("title") or "",
                snippet=snip,
                bm25=score,
                fields={
                    k: fields.get(k) or "" for k in ("category", "system", "domain", "section")
                },
            )
            for (fields, score), snip in zip(found, snippets, strict=True)
        ]
        scores, used = rerank_scores(reranker, mode, ctx.memo, text, candidates)
        ranker = f"bm25+{used}"  # type: ignore[assignment]
    order = sorted(range(len(found)), key=lambda i: (-scores[i], i))[:max_results]
    hits = [_hit(ctx, root, found[i][0], snippets[i], scores[i]) for i in order]
    return ElogSearchResponse(hits=hits, total=total, ranker=ranker)


def _regex_search(
    ctx: QueryContext,
    root: Path,
    searcher: Searcher,
    table: _DocTable,
    cache: _ElogCache,
    pattern: regex.Pattern[str],
    text: str,
    allowed: set[int] | None,
    max_results: int,
) -> ElogSearchResponse:
    candidates = set(table.live if allowed is None else allowed)
    need = required_literals(text)
    if need is not None:
        narrowed = _docs_for_need(searcher, cache, need)
        if narrowed is not None:
            candidates &= narrowed
    store = _Texts(searcher, cache)
    texts = [(d, *store.get(d)) for d in sorted(candidates)]
    matches = _regex_matches(pattern, texts, text)
    bodies = {d: body for d, _title, body in texts}
    stamp = table.stamp
    matches.sort(key=lambda m: (m.score, stamp[m.docnum], m.docnum), reverse=True)
    hits = []
    for m in matches[:max_results]:
        body = bodies[m.docnum]
        shown = snippet_at(body, *m.span) if m.span else snippet(body)
        hits.append(_hit(ctx, root, searcher.stored_fields(m.docnum), shown, m.score))
    return ElogSearchResponse(hits=hits, total=len(matches), ranker="regex")


def _ranker(reranker: Any) -> Ranker:
    name = getattr(reranker, "name", None)
    return f"bm25+{name}" if name else "bm25"  # type: ignore[return-value]


def _check_optional_query(query: str | None) -> str | None:
    """None for no query (also an empty or blank one); INVALID_QUERY if too long."""
    if query is None:
        return None
    if not isinstance(query, str):
        raise TroveError("INVALID_QUERY", f"query must be text, got {type(query).__name__}")
    text = query.strip()
    if not text:
        return None
    if len(text) > MAX_QUERY_CHARS:
        raise TroveError(
            "INVALID_QUERY",
            f"query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}",
        )
    if "\x00" in text:
        raise TroveError("INVALID_QUERY", "query holds a NUL character")
    return text


# --------------------------------------------------------------------------- get_elog_thread


@dataclass
class _Walk:
    searcher: Searcher
    docs: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    missing: set[int] = field(default_factory=set)
    kids: dict[int, list[int]] = field(default_factory=dict)

    def doc(self, mid: int) -> dict[str, Any] | None:
        if mid not in self.docs:
            fields = self.searcher.document(key=str(mid))
            self.docs[mid] = fields if fields and fields.get("kind") == "doc" else None
        return self.docs[mid]

    def children(self, mid: int) -> list[int]:
        """Replies of ``mid``: its ``Reply to`` list and entries ``In reply to`` it."""
        if mid in self.kids:
            return self.kids[mid]
        fields = self.doc(mid) or {}
        ids = {int(n) for n in fields.get("reply_to") or ()}
        query = NumericRange("in_reply_to", mid, mid)
        for docnum in self.searcher.docs_for_query(query):
            stored = self.searcher.stored_fields(docnum)
            if stored.get("kind") == "doc":
                ids.add(stored["elog_id"])
                self.docs.setdefault(stored["elog_id"], stored)
        found = []
        for child in sorted(ids):
            if self.doc(child) is None:
                self.missing.add(child)
            elif child != mid:
                found.append(child)
        self.kids[mid] = found
        return found


def get_elog_thread(
    ctx: QueryContext,
    message_id: int,
    include_replies: bool = True,
    include_parents: bool = True,
) -> ElogThreadResponse:
    """The thread of an entry: both flags on, the root and every reply at every level;
    parents only, the chain from the root down to the entry; replies only, the entry and
    all its replies; neither, the entry alone. Missing links and cycles are tolerated.

    Raises `TroveError`: INVALID_ARGUMENT, NOT_FOUND, DIRECTORY_NOT_FOUND.
    """
    if isinstance(message_id, bool) or not isinstance(message_id, int) or message_id < 1:
        raise TroveError(
            "INVALID_ARGUMENT", f"message_id must be a positive whole number, got {message_id!r}"
        )
    for name, flag in (("include_replies", include_replies), ("include_parents", include_parents)):
        if not isinstance(flag, bool):
            raise TroveError("INVALID_ARGUMENT", f"{name} must be true or false, got {flag!r}")
    root = _root(ctx)
    with _searcher(ctx) as searcher:
        walk = _Walk(searcher)
        if walk.doc(message_id) is None:
            raise TroveError(
                "NOT_FOUND",
                f"no ELOG entry {message_id} in the logbook {root}; search_elog gives the "
                "ids of existing entries",
            )
        chain = [message_id]  # the entry, its parent, ... up to the root
        while True:
            parent = (walk.doc(chain[-1]) or {}).get("in_reply_to")
            if parent is None or parent in chain:
                break
            if walk.doc(parent) is None:
                walk.missing.add(parent)
                break
            chain.append(parent)
        root_id = chain[-1]
        depth_of_entry = len(chain) - 1
        placed: list[tuple[int, int]] = []
        if include_parents and include_replies:
            _subtree(walk, root_id, 0, placed)
        elif include_parents:
            placed = [(mid, depth) for depth, mid in enumerate(reversed(chain))]
        elif include_replies:
            _subtree(walk, message_id, depth_of_entry, placed)
        else:
            placed = [(message_id, depth_of_entry)]
        replies = {mid: walk.children(mid) for mid, _ in placed}
        entries = [
            _thread_entry(ctx, root, walk.doc(mid) or {}, depth, replies[mid])
            for mid, depth in placed
        ]
        missing = sorted(walk.missing)
    return ElogThreadResponse(
        root_id=root_id, message_id=message_id, entries=entries, missing=missing
    )


def _subtree(walk: _Walk, top: int, depth: int, placed: list[tuple[int, int]]) -> None:
    seen = {mid for mid, _ in placed}
    stack = [(top, depth)]
    while stack and len(placed) < MAX_THREAD_ENTRIES:
        mid, d = stack.pop()
        if mid in seen:
            continue  # a cycle, or a reply listed under two parents
        seen.add(mid)
        placed.append((mid, d))
        stack.extend((child, d + 1) for child in reversed(walk.children(mid)) if child not in seen)


def _thread_entry(
    ctx: QueryContext, root: Path, fields: dict[str, Any], depth: int, replies: list[int]
) -> ElogThreadEntry:
    return ElogThreadEntry(
        elog_id=fields["elog_id"],
        depth=depth,
        title=fields.get("title") or "",
        date=fields.get("date") or "",
        author=fields.get("author") or "",
        category=fields.get("category") or "",
        system=fields.get("system") or "",
        domain=fields.get("domain") or "",
        section=fields.get("section") or "",
        in_reply_to=fields.get("in_reply_to"),
        replies=replies,
        body=fields.get("body") or "",
        attachments=list(fields.get("attachments") or ()),
        link=_link(ctx, root, fields),
    )
