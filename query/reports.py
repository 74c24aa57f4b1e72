"""Reports: search_reports, list_command_reports and get_report (the search_reports spec).

A search counts the occurrences of the whole query in each report exactly as
``text.lower().count(query.lower())`` does, from the index (its schema is in
indexer/sources/reports.py; both sides cut the lower-cased text into the same tokens):

- a query inside one token (a word, part of one, one CJK character, a run of
  punctuation): every token of the index that holds it, times how often each report
  holds that token, from the postings' frequencies;
- any other query is cut into tokens like the text: its first token must end a token of
  the text, its middle tokens equal the tokens that follow and its last token start the
  next one. The postings of each token say which tokens follow it in each report (see
  NextTokens), so they find the reports where the query's tokens follow one another,
  and how often each holds each token (at least the occurrences); the query is then
  counted in the lower-cased text the index keeps, most promising reports first, until
  no report left can be among the best. When reading the postings of the tokens left
  would cost more than counting in the reports still possible, those are counted instead.

The index is read through the engine protocol (indexer/engine/base.py): matching terms
are found by bisection in a segment's lexicon, kept per segment by the engine. Only the files of the reports returned are read, for their excerpts.
When no report holds the whole query, reports holding every word of it are returned,
marked ``match: "words"``.
"""

from __future__ import annotations

import datetime as dt
import errno
import heapq
import logging
import os
import re
import stat
import time
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import contains, itemgetter, mul
from pathlib import Path
from typing import Any, AnyStr, Literal, NamedTuple
from urllib.parse import quote, quote_from_bytes

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from indexer.config import Settings
from indexer.engine.base import BytesColumn, Segment, Snapshot, joined_values
from indexer.engine.fragments import FRAGMENTS
from indexer.engine.lexicon import Lexicon
from indexer.engine.postings import token_hash
from indexer.sources.base import FileData, is_hidden
from indexer.sources.reports import TOKEN_PATTERN, date_from_name
from indexer.store import SkipFile, read_file
from query import budget, paging, parts, text_count
from query import report_tiers as tiers
from query.args import check_name, check_query, check_range
from query.citations import heading_above, line_of
from query.context import Plan, QueryContext
from query.errors import ErrorCode, TroveError
from query.forgiving import FEW_WORDS, content_weights, content_words, is_cjk
from query.freshness import Freshness, mark_stale, of_snapshot
from query.indexes import Derived, source_folder

log = logging.getLogger(__name__)

COLLECTION = "reports"
MAX_RESULTS = 100
MAX_LISTED = 1000
DEFAULT_LISTED = 50
EXCERPT_CHARS = 100  # of context on each side of the first match
ELLIPSIS = "..."

_TOKEN = re.compile(TOKEN_PATTERN)
_WORDS = re.compile(r"\w+")
# Estimates, in microseconds, for choosing how to count a query of several tokens: per
# term whose postings are read, per posting, per report whose text is counted (measured
# on the 100k bench corpus: a block of 128 postings reads in 15-20 us).
_TERM_US = 15
_POSTING_US = 0.15
_BLOCK = 128  # postings per block (Whoosh's default)
_TEXT_US = 6
_INSIDE_US = 0.6  # per posting, counting a fragment inside one token from its terms
_DENSE_POSTINGS = 20_000  # past this many postings, they are added up in an array,
_DENSE_US = 0.25  # at this cost per posting
_DENSE_TERM_US = 5  # and per term
# Counting in every text (query/text_count.py), per byte of text; no query whose postings
# cost less than _SCAN_FLOOR_US per document is worth comparing with that.
_SCAN_NS = 0.3
_SCAN_FLOOR_US = 0.5
_BOUND_US = 0.3  # ordering a document by its bound and date, to count the best first
_TEXT_RUN = 256  # documents counted in one go when counting in some texts
# A search in fewer than 1/_TEXT_SHARE of a segment's documents counts in their texts one
# by one; in more, it counts in every text and keeps those.
_TEXT_SHARE = 4
# A token's postings are searched for the terms the next token can be, up to this many.
_FOLLOW_MAX = 32
# Reading the postings of a token that is searched for what follows it leaves far fewer
# reports than one that is not: to choose what to read first, its cost counts this much
# less.
_FOLLOW_GAIN = 4
# Once more than this share of the postings searched for what follows (at least
# _FOLLOW_SAMPLE of them) are followed by it, the rest are taken without searching.
_FOLLOW_SAMPLE = 256
_FOLLOW_KEEP = 0.5


# --------------------------------------------------------------------------- models


Match = Literal["exact", "words", "related", "fuzzy"]


class ReportHit(BaseModel):
    id: str = Field(description="command/report: what get_report and trove get take")
    report_name: str = Field(description="Report file name")
    command_name: str = Field(description="Command that generated this report")
    date: str | None = Field(
        description="Report date from the file name (ISO 8601, midnight UTC), or null"
    )
    excerpt: str = Field(description="The text around the first match; '...' where cut")
    line: int = Field(description="The 1-based line of the match the excerpt shows")
    heading: str | None = Field(
        description="The nearest markdown heading above that line (without its #'s), or null"
    )
    link: str = Field(description="URL of the report, or its file:// URL")
    path: str = Field(description="Full file path to the report")
    count: int = Field(
        description="Occurrences of what matched: the query ('exact'), its words ('words'), "
        "the words or words of the same stem it holds ('related')"
    )
    stale: bool = Field(
        default=False,
        description="The file changed after the index read it (the excerpt is from the file "
        "as it is now; its rank and count from the index): get_report shows it as it is",
    )
    match: Match = Field(
        description="How the report matched; the first tier that finds anything answers: "
        "'exact', the report holds the whole query (case-insensitive); 'words', no report "
        "did, and this one holds every word of it, in any order; 'related', no report "
        "held every word, and this one holds some of the words or words of the same stem "
        "(stop words never match alone), more of the query's words first; 'fuzzy', words "
        "no report holds were replaced by the closest indexed words (corrected_query)"
    )


class SearchReportsResult(BaseModel):
    results: list[ReportHit] = Field(
        description="The reports that match, best first (most occurrences, then newest; "
        "'related': most of the query's words, then BM25 over stems, then newest)"
    )
    note: str | None = Field(
        default=None,
        description="How the query was matched (null for 'exact'); when nothing matched, "
        "which words no report holds and the closest indexed words",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Indexed words closest to the query's words that no report holds",
    )
    corrected_query: str | None = Field(
        default=None, description="The query as corrected, when match is 'fuzzy'"
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness = Field(description="How current the index this answer read is")


class ReportInfo(BaseModel):
    id: str = Field(description="command/report: what get_report and trove get take")
    report_name: str
    date: str | None = Field(description="Date from the file name (ISO 8601), or null")
    path: str
    link: str
    size: int = Field(description="Size in bytes")


class CommandReports(BaseModel):
    command_name: str
    reports: list[ReportInfo] = Field(description="Newest first; undated reports last")
    total: int = Field(description="Reports of this command; reports holds the newest of them")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the list was cut to fit")
    freshness: Freshness = Field(
        description="The listing reads the folder itself: as_of is the time of the call"
    )


class Report(BaseModel):
    id: str = Field(description="command/report: what search hits call it")
    report_name: str
    command_name: str
    date: str | None = Field(description="Date from the file name (ISO 8601), or null")
    path: str
    link: str
    content: str = Field(
        description="The report's markdown, lines start_line to end_line (a long report "
        "comes in parts: see next_offset)"
    )
    start_line: int = Field(description=parts.START_LINE)
    end_line: int = Field(description=parts.END_LINE)
    total_lines: int = Field(description=parts.TOTAL_LINES)
    next_offset: int | None = Field(description=parts.NEXT_OFFSET)
    note: str | None = Field(default=None, description=parts.PART_NOTE)
    size: int = Field(description="Size of the file in bytes")
    truncated: bool = Field(
        description=f"The file is larger than {parts.READ_MAX_BYTES // 1048576} MB: the lines "
        "past that are not served"
    )


# --------------------------------------------------------------------------- the spec's parts


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
    return _around(text, *in_text(text, lowered, start, end))


def in_text(text: str, lowered: str, start: int, end: int) -> tuple[int, int]:
    """Where ``lowered[start:end]`` is in ``text`` (``lowered`` is ``text.lower()``)."""
    if len(lowered) != len(text):  # lower-casing changed lengths ('İ' -> 'i̇'): map back
        ends = list(accumulate(len(c.lower()) for c in text))
        start = bisect_right(ends, start)
        end = min(len(text), bisect_left(ends, end) + 1)
    return start, end


def _around(text: str, start: int, end: int) -> str:
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


# --------------------------------------------------------------------------- public API


def search_reports(
    ctx: QueryContext,
    query: str,
    command_filter: str | None = None,
    max_results: int = paging.DEFAULT_RESULTS,
    offset: int = 0,
) -> SearchReportsResult:
    """Reports holding the query (case-insensitive), most occurrences first, then newest;
    the page from hit ``offset`` on (query/paging.py)."""
    q = check_query(query)
    if command_filter is not None:
        command_filter = check_name(
            command_filter, "command_filter", "INVALID_COMMAND_FILTER", command=True
        )
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    offset = paging.check_offset(offset, max_results)
    n = paging.window(offset, max_results)
    root = reports_root(ctx.settings)
    if command_filter is not None:
        command_dir(root, command_filter, "DIRECTORY_NOT_FOUND")
    files = _Files(ctx.settings, root)
    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        fresh = of_snapshot(ctx.watcher, COLLECTION, snapshot)
        if snapshot is None:
            return SearchReportsResult(results=[], freshness=fresh)
        segments = _segments(snapshot, ctx.plan)
        answer = _exact_or_words(segments, q.lower(), command_filter, n)
        note = suggestions = corrected = None
        if answer is None:
            qwords = content_words(q)
            families = tiers.Families()
            # A question of many words: the reports holding some of them come before a
            # correction of the words no report holds (in a question those are mostly
            # words, not typos), which is tried only when no report holds any.
            question = len(qwords) > FEW_WORDS
            if question:
                answer = _related(ctx, snapshot, segments, q, command_filter, families)
            unknown: list[str] = []
            fixes: dict[str, list[str]] = {}
            if answer is None:
                unknown = tiers.unknown_words(segments, qwords, families)
            if unknown:
                words_memo: Derived[dict[int, list[str]]] = ctx.memo.setdefault(
                    "reports.words_by_length", Derived()
                )
                by_length = words_memo.get(snapshot.stamp, lambda: tiers.words_by_length(segments))
                fixes = tiers.corrections(by_length, unknown, tiers.neighbours(ctx.memo, segments))
            suggestions = list(dict.fromkeys(chain.from_iterable(fixes.values())))
            if any(fixes.values()):
                corrected = _corrected(q, {w: c[0] for w, c in fixes.items() if c})
                answer = _exact_or_words(segments, corrected.lower(), command_filter, n)
                answer = answer or _related(
                    ctx, snapshot, segments, corrected, command_filter, families
                )
                if answer is not None:
                    answer = answer._replace(match="fuzzy")
                    note = f"no report holds the query as written; searched for {corrected!r}"
            if answer is None and not question:
                corrected = None
                answer = _related(ctx, snapshot, segments, q, command_filter, families)
            if answer is not None and answer.match == "related":
                corrected = None
                note = "no report holds every word; reports holding some of the words " + (
                    "or words of the same stem, most of the words first"
                )
            if answer is None:
                note = _nothing(q, qwords, unknown, fixes, command_filter)
                return SearchReportsResult(
                    results=[], note=note, suggestions=suggestions or [], freshness=fresh
                )
        elif answer.match == "words":
            note = "no report holds the whole query; reports holding every word, in any order"
        ranked = _results(ctx, files, segments, answer, q.lower(), command_filter, n)
        results, more = paging.page(ranked, offset, max_results)
        mark_stale(snapshot, root, results, lambda h: h.id)
    found = SearchReportsResult(
        results=results,
        note=note,
        suggestions=suggestions or [],
        corrected_query=corrected if answer.match == "fuzzy" else None,
        next_offset=more,
        freshness=fresh,
    )
    budget.fit_page(
        found, "results", offset, budget.limit_for(max_results == paging.DEFAULT_RESULTS)
    )
    return found


class _Tier(NamedTuple):
    """The tier that answers, what it found per segment, and what to quote."""

    match: Match
    found: list[tuple[_Segment, dict[int, float]]]
    needles: list[str]
    related: list[tiers.Related] | None = None
    words: int = 0  # the related tier's content words


def _exact_or_words(
    segments: list[_Segment], lowered: str, command: str | None, top: int
) -> _Tier | None:
    found = [(s, s.occurrences(lowered, command, top)) for s in segments]
    if any(counts for _, counts in found):
        return _Tier("exact", found, [lowered])
    words = query_words(lowered)
    if words and words != [lowered]:
        found = [(s, s.all_words(words, command)) for s in segments]
        if any(counts for _, counts in found):
            return _Tier("words", found, words)
    return None


def _related(
    ctx: QueryContext,
    snapshot: Snapshot,
    segments: list[_Segment],
    query: str,
    command: str | None,
    families: tiers.Families,
) -> _Tier | None:
    qwords = content_words(query)
    if not qwords:
        return None
    memo: Derived[tiers.Stats] = ctx.memo.setdefault("reports.stats", Derived())
    st = memo.get(snapshot.stamp, lambda: tiers.stats(segments))
    found = tiers.related(segments, qwords, command, st, families, content_weights(query))
    if not any(r.matched for r in found):
        return None
    needles = [s.lexicon().term(k) for w in qwords for s in segments for k in families.of(s, w)]
    return _Tier(
        "related",
        [(s, r.occurrences) for s, r in zip(segments, found, strict=True)],
        list(dict.fromkeys(needles + [w for w in qwords if is_cjk(w)])),
        found,
        len(qwords),
    )


def _results(
    ctx: QueryContext,
    files: _Files,
    segments: list[_Segment],
    answer: _Tier,
    lowered: str,
    command: str | None,
    max_results: int,
) -> list[ReportHit]:
    """The best hits of the tier that answered. A file deleted (or made unreadable) since
    the index saw it has no hit: the next best takes its place, so that a search still
    fills max_results when it can."""
    hits: dict[str, ReportHit | None] = {}
    found = answer.found
    n = max_results
    while True:
        if answer.related is not None:
            pairs = list(zip(segments, answer.related, strict=True))
            best = _best_related(pairs, n, answer.words)
        else:
            best = _best(found, n)
        for ranked in best:
            if ranked.key not in hits:
                hits[ranked.key] = _hit(ctx.settings, files, ranked, answer.match, answer.needles)
        results = [hit for ranked in best if (hit := hits[ranked.key]) is not None]
        if len(results) >= max_results or len(best) < n:
            return results[:max_results]
        n += max_results - len(results)
        if answer.match == "exact":  # counted for the best max_results only: now for n
            found = [(s, s.occurrences(lowered, command, n)) for s in segments]


def _corrected(query: str, fixes: dict[str, str]) -> str:
    """The query with each word that has a correction replaced (case ignored)."""
    pattern = re.compile(
        "|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for w in sorted(fixes, key=len, reverse=True)),
        re.IGNORECASE,
    )
    return pattern.sub(lambda m: fixes[m.group().lower()], query)


def _nothing(
    query: str,
    qwords: list[str],
    unknown: list[str],
    fixes: dict[str, list[str]],
    command: str | None,
) -> str:
    """Why nothing matched, and what might."""
    where = f" of command {command!r}" if command is not None else ""
    if not qwords:
        return (
            f"no report{where} holds {query!r}, and it has only words too common to search "
            "by alone (stop words) or no words at all"
        )
    parts = [f"no report{where} holds {query!r} or any of its words"]
    if unknown:
        said = []
        for w in unknown:
            close = fixes.get(w) or []
            said.append(
                f"{w!r} (closest indexed: {', '.join(close)})"
                if close
                else f"{w!r} (no indexed word is close)"
            )
        parts.append("not in any report: " + ", ".join(said))
    return "; ".join(parts)


def list_command_reports(
    ctx: QueryContext, command_name: str, max_results: int = DEFAULT_LISTED, offset: int = 0
) -> CommandReports:
    """A command's reports, newest first (by the file-name date; undated last); the page
    from report ``offset`` on."""
    command = check_name(command_name, "command_name", "INVALID_COMMAND_FILTER", command=True)
    check_range(max_results, "max_results", 1, MAX_LISTED)
    offset = check_range(offset, "offset", 0, None)
    root = reports_root(ctx.settings)
    folder = command_dir(root, command, "NOT_FOUND")
    root_real = os.path.realpath(root)
    found: list[tuple[tuple[Any, ...], str, int]] = []
    listed = time.time()
    for entry in os.scandir(folder):
        name = entry.name
        if is_hidden(name) or not name.lower().endswith(".md"):
            continue
        if entry.is_symlink() and not _inside(root_real, entry.path):
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        if not entry.is_file():
            continue
        day = date_from_name(name)
        order = (day is None, -(day.toordinal() if day else 0), -st.st_mtime_ns, name)
        found.append((order, name, st.st_size))
    found.sort()
    reports = []
    shown, more = paging.page(found, offset, max_results)
    for _, name, size in shown:
        path = folder / name
        reports.append(
            ReportInfo(
                id=f"{command}/{name}",
                report_name=name,
                date=iso_date(date_from_name(name)),
                path=str(path),
                link=report_link(ctx.settings, command, name, path),
                size=size,
            )
        )
    listing = CommandReports(
        command_name=command,
        reports=reports,
        total=len(found),
        next_offset=more,
        freshness=ctx.watcher.freshness(COLLECTION, listed),
    )
    budget.fit_page(listing, "reports", offset, budget.limit_for(max_results == DEFAULT_LISTED))
    return listing


def get_report(
    ctx: QueryContext,
    command_name: str,
    report_name: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    whole: bool = False,
) -> Report:
    """One report: all of it, or the part from line ``offset`` (``limit`` lines, or as
    many as fit the answer's budget; see query/parts.py). ``whole``: all of it, whatever
    its size (the web page)."""
    command = check_name(command_name, "command_name", "INVALID_COMMAND_FILTER", command=True)
    name = check_name(report_name, "report_name", "INVALID_COMMAND_FILTER")
    first, count = parts.check_part(offset, limit)
    root = reports_root(ctx.settings)
    command_dir(root, command, "NOT_FOUND")
    if is_hidden(name) or not name.lower().endswith(".md"):
        raise TroveError(
            "NOT_FOUND",
            f"{name!r} is not a report (reports are .md files); "
            f"list_command_reports('{command}') shows the reports there",
        )
    try:
        data = read_file(root, f"{command}/{name}", parts.READ_MAX_BYTES)
    except (FileNotFoundError, SkipFile) as exc:
        why = "no such report" if isinstance(exc, FileNotFoundError) else str(exc)
        raise TroveError(
            "NOT_FOUND",
            f"{command}/{name}: {why}; list_command_reports('{command}') shows the reports there",
        ) from None
    path = root / command / name
    report = Report(
        id=f"{command}/{name}",
        report_name=name,
        command_name=command,
        date=iso_date(date_from_name(name)),
        path=str(path),
        link=report_link(ctx.settings, command, name, path),
        content="",
        start_line=first,
        end_line=first - 1,
        total_lines=0,
        next_offset=None,
        size=data.size,
        truncated=data.truncated,
    )
    return parts.filled(report, data.text(), first, count, whole)


def reports_root(settings: Settings) -> Path:
    """The reports folder; DIRECTORY_NOT_FOUND if it is not configured or does not exist."""
    return source_folder(settings, COLLECTION)


def command_dir(root: Path, command: str, code: ErrorCode) -> Path:
    """A command's folder of reports (a checked name); ``code`` if there is none."""
    path = root / command
    if is_hidden(command) or not path.is_dir() or not _inside(os.path.realpath(root), str(path)):
        raise TroveError(
            code,
            f"no command {command!r} has reports: there is no folder {command!r} in {root}",
        )
    return path


# --------------------------------------------------------------------------- the index side


class _Files:
    """Reads reports as the indexer does: never outside the root, at most max_file_mb,
    UTF-8 with bad bytes replaced; a file that is gone or unreadable reads as None."""

    def __init__(self, settings: Settings, root: Path) -> None:
        self.root = root
        self.max_bytes = int(settings.index.max_file_mb * 1024 * 1024)
        self._root = str(root)
        self._root_real = os.path.realpath(root)
        self._folders: dict[str, bool] = {}  # command folder -> inside the root

    def path(self, key: str) -> str:
        return os.path.join(self._root, key)

    def _folder_inside(self, command: str) -> bool:
        """Whether a command's folder is inside the root: a folder there is; a symlink
        is if it leads inside."""
        path = os.path.join(self._root, command)
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) or _inside(self._root_real, path)

    def text(self, key: str) -> str | None:
        command = key.partition("/")[0]
        inside = self._folders.get(command)
        if inside is None:
            inside = self._folders[command] = self._folder_inside(command)
        try:
            if not inside:
                raise SkipFile("outside the root")
            # The folder is inside the root; O_NOFOLLOW keeps the file there too. A file
            # that is a symlink takes the slower road that checks where it leads.
            fd = os.open(self.path(key), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return None
            return self._checked(key)
        except SkipFile:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            data = os.read(fd, min(self.max_bytes, st.st_size + 1))
            while len(data) < min(self.max_bytes, st.st_size) and (more := os.read(fd, 1 << 20)):
                data += more
        except OSError:
            return None
        finally:
            os.close(fd)
        data = data[: self.max_bytes]
        if b"\x00" in data[:8192]:  # a binary file: the indexer skips it too
            return None
        return FileData(key, data, st.st_mtime_ns, st.st_size).text()

    def _checked(self, key: str) -> str | None:
        try:
            return read_file(self.root, key, self.max_bytes).text()
        except (OSError, SkipFile) as exc:
            log.debug("%s: cannot read: %s", self.root / key, exc)
            return None


def _cost_us(
    lex: Lexicon,
    ks: list[int],
    docs: int | None = None,
    posting_us: float = _POSTING_US,
    term_us: float = _TERM_US,
) -> float:
    """About how long reading the postings of these terms takes, in blocks that may
    hold one of ``docs`` documents if given."""
    most = _BLOCK * docs if docs is not None else 1 << 62
    return sum(term_us + min(lex.doc_counts[k], most) * posting_us for k in ks)


class _Segment:
    """One segment of the reports index: counts occurrences in its documents."""

    def __init__(self, segment: Segment, plan: Plan = "cost") -> None:
        self.segment = segment
        self.deleted = segment.deleted
        self.plan = plan

    def lexicon(self, fieldname: str = "content") -> Lexicon:
        return self.segment.lexicon(fieldname)

    def day_ranks(self) -> Sequence[int]:
        """Per document: its date's ordinal; 0 if undated (ranks last)."""
        return self.segment.int_column("day")

    def postings(
        self, k: int, within: Sequence[int] | None
    ) -> Iterator[tuple[Iterator[int], Iterable[float], Any]]:
        """(docnums, frequencies, NextTokens values) of each block of the content term
        k's postings that may hold one of ``within`` (all if None)."""
        return self.segment.blocks("content", k, within)

    def command_docs(self, command: str) -> list[int]:
        found = self.lexicon("command").equal_to(command)
        blocks = (self.segment.blocks("command", k) for k in found)
        return sorted(chain.from_iterable(ids for block in blocks for ids, _, _ in block))

    # ---- counting

    def occurrences(
        self, lowered: str, command: str | None, top: int | None = None
    ) -> dict[int, float]:
        """{docnum: occurrences of ``lowered`` in the document's lower-cased text}, for
        every document that holds it; with ``top``, documents that cannot be among the
        ``top`` best (most occurrences, newest) may be left out."""
        within = None if command is None else self.command_docs(command)
        if within == []:
            return {}
        spans = [m.span() for m in _TOKEN.finditer(lowered)]
        inside = len(spans) == 1 and spans[0] == (0, len(lowered))
        if inside and top is not None and self.plan == "cost":
            found = self._from_tops(lowered.encode("utf-8"), within, top)
            if found is not None:
                return found
        if self.plan == "texts":
            return self._count_texts(lowered.encode("utf-8"), within, top)
        if inside:
            lex = self.lexicon()
            near = None if within is None else len(within)
            holding = lex.containing(lowered)
            dense = sum(map(lex.doc_counts.__getitem__, holding)) > _DENSE_POSTINGS
            cost = (
                _cost_us(lex, holding, near, _DENSE_US, _DENSE_TERM_US)
                if dense
                else _cost_us(lex, holding, near, _INSIDE_US)
            )
            if self._texts_cheaper(cost, within):
                return self._count_texts(lowered.encode("utf-8"), within, top)
            if dense:
                return self._kept(self._count_inside_dense(lowered, holding, within), within, top)
            counts = self._count_inside(lowered, holding, within)
            if within is not None:
                wanted = set(within)
                counts = {d: c for d, c in counts.items() if d in wanted}
            if self.deleted:
                for d in self.deleted.intersection(counts):
                    del counts[d]
            return counts
        choices = self._choices(lowered, spans)
        if not choices:
            return {}  # a token no term can be: the query is in no document
        docs = None if within is None else set(within) - self.deleted
        return self._count_across(lowered, choices, docs, top, within)

    def _from_tops(
        self, needle: bytes, within: list[int] | None, top: int
    ) -> dict[int, float] | None:
        """{docnum: occurrences} of the ``top`` documents (of ``within``; None: all) that
        hold ``needle`` most, from the segment's fragment tops: None where it keeps none
        for ``needle``, or too few of them are still live and of ``within``."""
        if needle not in FRAGMENTS:  # (before the segment's tops are read in)
            return None
        tops = self.segment.fragment_tops()
        best = None if tops is None else tops.best(needle)
        if best is None:
            return None
        wanted = None if within is None else set(within)
        found: dict[int, float] = {}
        for d, n in zip(best.docs.tolist(), best.counts.tolist(), strict=True):
            if d not in self.deleted and (wanted is None or d in wanted):
                found[d] = float(n)
                if len(found) == top:
                    return found
        return found if best.complete else None

    def _live(self, within: list[int] | None) -> int:
        """How many documents a search in ``within`` (None: all) may count in."""
        if within is None:
            return self.segment.doc_count_all - len(self.deleted)
        return len(within)

    def _texts_cheaper(self, postings_us: float, within: list[int] | None) -> bool:
        """Whether counting in the texts of the live documents of ``within`` (None: all)
        costs less than ``postings_us``, the work the postings would take (under the
        plan "cost"; "postings" never counts in every text)."""
        if self.plan != "cost":
            return self.plan == "texts"
        live = self._live(within)
        if postings_us < live * _SCAN_FLOOR_US:  # (spares adding up the texts' sizes)
            return False
        if within is not None and len(within) * _TEXT_SHARE < self.segment.doc_count_all:
            return len(within) * _TEXT_US < postings_us
        return self._every_text_us() < postings_us

    def _every_text_us(self) -> float:
        """About what counting in every text of the segment costs."""
        return self.segment.bytes_column("text").total() * _SCAN_NS / 1000

    def _count_texts(
        self, needle: bytes, within: list[int] | None, top: int | None
    ) -> dict[int, float]:
        """{docnum: occurrences of ``needle``} counted in the lower-cased texts the index
        keeps (as ``bytes.count`` counts), for the live documents of ``within`` (None:
        all). With ``top``, only the documents with at least the ``top``-th highest count
        (the others cannot be among the best)."""
        texts = self.segment.bytes_column("text")
        n = self.segment.doc_count_all
        if within is not None and len(within) * _TEXT_SHARE < n:
            return self._count_some_texts(texts, needle, within, top)
        return self._kept(text_count.counts_in_column(texts, n, needle), within, top)

    def _kept(
        self, counts: npt.NDArray[Any], within: list[int] | None, top: int | None
    ) -> dict[int, float]:
        """{docnum: count} of the documents with a count, live and of ``within`` (None:
        all); with ``top``, only those with at least the ``top``-th highest count."""
        if within is not None:
            outside = np.ones(len(counts), dtype=bool)
            outside[within] = False
            counts[outside] = 0
        if self.deleted:
            counts[list(self.deleted)] = 0
        docs = np.flatnonzero(counts)
        if top is not None and len(docs) > top:
            least = np.partition(counts[docs], len(docs) - top)[len(docs) - top]
            docs = docs[counts[docs] >= least]
        return dict(zip(docs.tolist(), counts[docs].astype(float).tolist(), strict=True))

    def _count_some_texts(
        self, texts: BytesColumn, needle: bytes, docs: list[int], top: int | None
    ) -> dict[int, float]:
        """_count_texts in a few documents, one at a time: a run of documents none of
        which is long enough to hold as many occurrences as the ``top``-th best so far
        is not read."""
        if self.deleted:
            docs = [d for d in docs if d not in self.deleted]
        counts: dict[int, float] = {}
        best: list[int] = []  # a heap of the top counts so far
        width = len(needle)
        for a in range(0, len(docs), _TEXT_RUN):
            run = docs[a : a + _TEXT_RUN]
            if (
                top is not None
                and len(best) >= top
                and max(map(texts.size, run)) // width < best[0]
            ):
                continue
            found = list(map(bytes.count, map(texts.value, run), repeat(needle)))
            counts.update((d, float(n)) for d, n in zip(run, found, strict=True) if n)
            if top is not None:
                for n in found:
                    if n and (len(best) < top or n > best[0]):
                        heapq.heappush(best, n)
                        if len(best) > top:
                            heapq.heappop(best)
        return counts

    def _choices(self, lowered: str, spans: list[tuple[int, int]]) -> list[list[int]]:
        """Per token of a query of several: the terms it can be (the first must end a
        term, the last start one, the others equal one); [] if one can be none."""
        lex = self.lexicon()
        choices: list[list[int]] = []
        for a, b in spans:
            token = lowered[a:b]
            if a == 0:
                choices.append(lex.ending_with(token))
            elif b == len(lowered):
                choices.append(lex.starting_with(token))
            else:
                choices.append(lex.equal_to(token))
            if not choices[-1]:
                return []
        return choices

    def all_words(self, words: list[str], command: str | None) -> dict[int, float]:
        """{docnum: occurrences of all words} for the documents that hold every word."""
        total: dict[int, float] | None = None
        for word in words:
            counts = self.occurrences(word, command)
            if total is None:
                total = counts
            else:
                total = {d: c + counts[d] for d, c in total.items() if d in counts}
            if not total:
                return {}
        return total or {}

    def _count_inside(
        self, s: str, holding: list[int], within: list[int] | None
    ) -> dict[int, float]:
        """Occurrences of ``s`` that lie inside one token: (times in the token) x (the
        token's frequency in the document), summed over the tokens that hold ``s``
        (``holding``)."""
        lex = self.lexicon()
        acc: dict[int, float] = {}
        for k in holding:
            times = float(lex.term(k).count(s))
            part: dict[int, float] = {}
            for ids, weights, _ in self.postings(k, within):
                part.update(zip(ids, weights if times == 1.0 else map(mul, weights, repeat(times))))
            acc = _add(acc, part)
        return acc

    def _count_inside_dense(
        self, s: str, holding: list[int], within: list[int] | None
    ) -> npt.NDArray[np.float64]:
        """_count_inside for terms of many postings, per document in an array (adding up
        dicts of tens of thousands of documents costs more than reading the postings)."""
        lex = self.lexicon()
        acc = np.zeros(self.segment.doc_count_all, dtype=np.float64)
        for k in holding:
            times = float(lex.term(k).count(s))
            for ids, weights, _ in self.postings(k, within):
                where = np.fromiter(ids, dtype=np.intp)  # a term's documents are distinct
                if isinstance(weights, repeat):  # every posting's weight is the same
                    acc[where] += next(weights) * times
                else:
                    acc[where] += np.asarray(weights, dtype=np.float64)[: len(where)] * times
        return acc

    def _count_across(
        self,
        lowered: str,
        choices: list[list[int]],
        docs: set[int] | None,
        top: int | None,
        within: list[int] | None,
    ) -> dict[int, float]:
        """Occurrences of a query of several tokens (``choices``: the terms each can be),
        in the live documents ``docs`` (None: all; ``within``: the search's documents):
        the postings of its tokens find where it can be (where each is followed by the
        next), the texts count it. Where even the cheapest token's postings, or counting
        in the documents that they leave, would cost more than counting in every text
        (common words: most documents), every text is counted instead."""
        lex = self.lexicon()
        # follows[i]: the hashes of the terms token i + 1 can be, looked for in the
        # postings of token i (not when there are too many: a last token cut short).
        follows: list[list[bytes] | None] = [
            [token_hash(lex.term(k)) for k in after] if len(after) <= _FOLLOW_MAX else None
            for after in choices[1:]
        ] + [None]
        # Read the tokens' postings, cheapest first (a token that says what follows it
        # narrows the most: it counts as cheaper), each in the blocks that may hold the
        # documents left. Once reading the rest would cost more than counting in the
        # documents left, count in those. Wanting the top only, first try to settle it
        # in as many texts as reading the rest would cost: often the bounds the tokens
        # read give are tight enough, and the rest need not be read.
        costs = [
            _cost_us(lex, ks) / (_FOLLOW_GAIN if follows[i] else 1) for i, ks in enumerate(choices)
        ]
        order = sorted(range(len(choices)), key=costs.__getitem__)
        needle = lowered.encode("utf-8")
        if self._texts_cheaper(costs[order[0]] * _FOLLOW_GAIN, within):
            return self._count_texts(needle, within, top)
        read: list[dict[int, float]] = []  # per token read, {docnum: frequency}
        known: dict[int, int] = {}  # docnum: occurrences, for the texts counted so far
        for step, i in enumerate(order):
            if docs is not None:
                rest = sum(_cost_us(lex, choices[j], len(docs)) for j in order[step:])
                if rest > len(docs) * _TEXT_US:
                    break
                # Trying costs ordering the documents left, and then at least the top.
                budget = int((rest - len(docs) * _BOUND_US) / _TEXT_US)
                if top is not None and read and budget >= top:
                    done = self._count_best(read, docs, needle, top, known, budget)
                    if done is not None:
                        return done
            most = None
            if step == 0 and docs is None and self.plan == "cost" and _TEXT_US:
                # Past this many documents left, every text is counted (below): reading
                # on is in vain once the postings searched so far say it will leave more.
                most = int(max(self._live(None) * _SCAN_FLOOR_US, self._every_text_us()) / _TEXT_US)
            freqs = self._read_token(choices[i], docs, follows[i], most)
            if freqs is None:
                return self._count_texts(needle, within, top)
            read.append(freqs)
            docs = freqs.keys() - self.deleted if docs is None else docs.intersection(freqs)
            if not docs:
                return {}
            if step == 0 and self._texts_cheaper(len(docs) * _TEXT_US, within):
                return self._count_texts(needle, sorted(docs), top)
        assert docs is not None
        if top is not None and read:
            done = self._count_best(read, docs, needle, top, known)
            assert done is not None
            return done
        texts = self.segment.bytes_column("text")
        counts = ((d, texts.value(d).count(needle)) for d in docs)
        return {d: float(n) for d, n in counts if n}

    def _read_token(
        self,
        ks: list[int],
        docs: set[int] | None,
        follows: list[bytes] | None,
        most: int | None = None,
    ) -> dict[int, float] | None:
        """{docnum: summed frequency} of terms ``ks``, in the blocks that may hold one of
        ``docs``; given ``follows``, only where a term is followed by one of those tokens
        (see NextTokens), and only such terms counted, until most postings turn out to
        be followed: then all the documents of the rest (more candidates, never fewer).
        Given ``most``, None as soon as the postings searched (_FOLLOW_SAMPLE at least)
        say that more documents than that would be left."""
        within = None if docs is None else sorted(docs)
        postings = sum(map(self.lexicon().doc_counts.__getitem__, ks)) if most is not None else 0
        if follows is not None and len(follows) > 1:
            search = re.compile(b"|".join(map(re.escape, follows))).search
        acc: dict[int, float] = {}
        tested = passed = 0  # postings searched for what follows, and found followed
        for k in ks:
            part: dict[int, float] = {}
            for ids, weights, values in self.postings(k, within):
                if follows is None or (
                    tested >= _FOLLOW_SAMPLE and passed > tested * _FOLLOW_KEEP
                ):  # (where most are followed, searching each costs more than it saves)
                    part.update(zip(ids, weights))
                    continue
                # In C: the block's hashes searched at once (mostly in vain), then each
                # posting's.
                block = joined_values(values)
                tested += len(values)
                if len(follows) == 1:
                    if follows[0] in block:
                        tests = list(map(contains, values, repeat(follows[0])))
                        passed += sum(tests)
                        part.update(compress(zip(ids, weights), tests))
                elif search(block):
                    tests = list(map(bool, map(search, values)))
                    passed += sum(tests)
                    part.update(compress(zip(ids, weights), tests))
                if (
                    most is not None
                    and tested >= _FOLLOW_SAMPLE
                    and passed * postings > most * tested
                ):
                    return None
            acc = _add(acc, part)
        return acc

    def _count_best(
        self,
        read: list[dict[int, float]],
        docs: set[int],
        needle: bytes,
        top: int,
        known: dict[int, int],
        budget: int | None = None,
    ) -> dict[int, float] | None:
        """The counts of the ``top`` best documents (at least), counted in order of how
        often each holds its rarest token read (more occurrences it cannot have), newest
        first, until no document left can be among the best.

        The texts counted go into ``known``, and those already there are not counted
        again. Given a ``budget``, None as soon as more than that many texts would have
        to be counted."""
        order = list(docs)
        bounds = list(map(read[0].__getitem__, order))
        for freqs in read[1:]:
            bounds = list(map(min, bounds, map(freqs.__getitem__, order)))
        by_bound: dict[float, list[int]] = {}
        for d, bound in zip(order, bounds, strict=True):
            if (group := by_bound.get(bound)) is None:
                by_bound[bound] = [d]
            else:
                group.append(d)
        texts = self.segment.bytes_column("text")
        ranks = self.day_ranks()
        counts: dict[int, float] = {}
        best: list[tuple[float, int]] = []  # a heap of the top (count, day rank) so far
        for most in sorted(by_bound, reverse=True):
            if len(best) == top and most < best[0][0]:
                break  # these, and all that hold their rarest token less, rank below
            for d in sorted(by_bound[most], key=ranks.__getitem__, reverse=True):
                if len(best) == top and (most, ranks[d]) < best[0]:
                    break
                if (n := known.get(d)) is None:
                    if budget is not None:
                        if budget <= 0:
                            return None
                        budget -= 1
                    n = known[d] = texts.value(d).count(needle)
                if n:
                    counts[d] = float(n)
                    heapq.heappush(best, (n, ranks[d]))
                    if len(best) > top:
                        heapq.heappop(best)
        return counts


def _add(acc: dict[int, float], part: dict[int, float]) -> dict[int, float]:
    """``acc`` and ``part`` added key by key, in whichever of the two is larger (the
    first term's postings are not copied)."""
    if len(acc) < len(part):
        acc, part = part, acc
    for d in acc.keys() & part.keys():
        part[d] += acc[d]
    acc.update(part)
    return acc


def _segments(snapshot: Snapshot, plan: Plan = "cost") -> list[_Segment]:
    return [_Segment(segment, plan) for segment, _base in snapshot.segments()]


class _Ranked(NamedTuple):
    """A document among the best: its key, its count of occurrences, where it is."""

    key: str
    occurrences: int
    segment: _Segment
    doc: int


def _best(found: list[tuple[_Segment, dict[int, float]]], n: int) -> list[_Ranked]:
    """The n best documents (most occurrences, newest, then by path).

    Only the documents that can be among them are looked at closely: those with more
    than the n-th highest count, and of those with just that count, the newest; their
    keys are read to order those tied on both. The n-th highest count and then the
    n-th newest day come from histograms, so every loop over the documents found runs
    in C: a common word is in most documents. (``heapq.nlargest`` loops in Python, and
    slows down tenfold when its input ascends, as reports in date order do.)
    """
    counted: Counter[float] = Counter()
    for _, counts in found:
        counted.update(counts.values())
    least = _nth_highest(counted, n)
    if least is None:
        return []
    # Those with more (fewer than n), and of those with the least count, those on the
    # n-th newest day or newer.
    need = n - sum(c for count, c in counted.items() if count > least)
    near: list[tuple[_Segment, dict[int, float], list[int], list[int], list[int]]] = []
    days: Counter[int] = Counter()
    for segment, counts in found:
        docs = list(compress(counts, map(least.__le__, counts.values())))
        at_least = list(map(counts.__getitem__, docs))
        above = list(compress(docs, map(least.__lt__, at_least)))
        tied = list(compress(docs, map(least.__eq__, at_least)))
        ranks = list(map(segment.day_ranks().__getitem__, tied))
        days.update(ranks)
        near.append((segment, counts, above, tied, ranks))
    edge = _nth_highest(days, need)
    chosen: list[tuple[float, int, str, _Ranked]] = []
    for segment, counts, above, tied, ranks in near:
        keys = segment.segment.bytes_column("sort_key")
        day_ranks = segment.day_ranks()
        for d in chain(above, compress(tied, map(edge.__le__, ranks))):
            key = keys.value(d).decode("utf-8")
            count = counts[d]
            chosen.append((-count, -day_ranks[d], key, _Ranked(key, int(count), segment, d)))
    chosen.sort(key=itemgetter(0, 1, 2))  # a key is in one live document
    return [ranked for *_, ranked in chosen[:n]]


def _best_related(found: list[tuple[_Segment, tiers.Related]], n: int, words: int) -> list[_Ranked]:
    """The n best of the related tier, by BM25 over stems, then newest, then by path; a
    query of FEW_WORDS content words (``words``) or fewer ranks the reports holding more
    of them first."""
    strict = words <= FEW_WORDS
    ranked: list[tuple[int, float, int, _Segment, tiers.Related, int]] = []
    for segment, r in found:
        days = segment.day_ranks()
        ranked.extend(
            (-m if strict else 0, -r.score[d], -days[d], segment, r, d)
            for d, m in r.matched.items()
        )
    # Ties beyond the first n on all three are settled by path among those kept.
    near = heapq.nsmallest(2 * n + 8, ranked, key=itemgetter(0, 1, 2))
    chosen = []
    for m, score, day, segment, r, d in near:
        key = segment.segment.bytes_column("sort_key").value(d).decode("utf-8")
        ranked_ = _Ranked(key, int(r.occurrences[d]), segment, d)
        chosen.append(((m, score, day, key), ranked_))
    chosen.sort(key=itemgetter(0))
    return [r for _, r in chosen[:n]]


def _nth_highest(histogram: Counter[Any], n: int) -> Any:
    """The n-th highest of the values counted (None if there are none)."""
    seen = 0
    value = None
    for value in sorted(histogram, reverse=True):
        seen += histogram[value]
        if seen >= n:
            break
    return value


def _hit(
    settings: Settings,
    files: _Files,
    ranked: _Ranked,
    match: Match,
    needles: list[str],
) -> ReportHit | None:
    command, name = ranked.key.split("/")
    text = files.text(ranked.key)
    if text is None:
        return None
    indexed = ranked.segment.segment.bytes_column("text").value(ranked.doc)
    if (found := _first_match_indexed(text, indexed, needles)) is None:
        lowered = text.lower()
        start, length = first_match(lowered, needles)
        found = in_text(text, lowered, start, start + length)
    path = files.path(ranked.key)
    return ReportHit(
        id=ranked.key,
        report_name=name,
        command_name=command,
        date=iso_date(date_from_name(name)),
        excerpt=_around(text, *found),
        line=line_of(text, found[0]),
        heading=heading_above(text, found[0]),
        link=report_link(settings, command, name, path),
        path=path,
        count=ranked.occurrences,
        match=match,
    )


def _first_match_indexed(text: str, indexed: bytes, needles: list[str]) -> tuple[int, int] | None:
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


def _inside(root_real: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)
