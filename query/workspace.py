"""search_workspace: conversation lines that hold a query, in tiers that forgive.

The first tier that finds any line answers, so a lower tier never pushes out a higher:

1. ``exact``: the query as written (case-insensitive), as a literal. The index narrows
   the search to the files that hold every word of the query (a word cut off at either
   end of the query matches the index terms that contain it); only those files are
   read, and the literal is verified on their lines. A query without words
   (punctuation only) is verified on every file in the date range. Lines are ranked by
   how the literal sits in them (whole words, then the start of a word, the end of one,
   inside one), ties newest first.
2. ``words``: lines holding every word of the query, in any order (each word as a
   substring of the lower-cased line, as ``exact`` matches the literal).
3. ``fuzzy``: when words of the query are in no conversation (neither the word nor a
   word of its stem family), each is replaced by the closest indexed word and tiers 1,
   2 and 4 run again with the corrected query. It comes before ``related``: an answer
   that uses every word after correction ranks above one that drops a word.
4. ``related``: lines holding some of the query's content words or words of the same
   stem (stop words never match alone): most of the query's words first, then a BM25
   score over stems (idf from how many files hold the stem), then newest.

One result per matching line; a conversation shows at most LINES_PER_CONVERSATION lines
while other conversations match too. The tiers below ``exact`` read at most
MAX_FILES_READ files (the most promising first), so each answers in bounded time.

Per process, a `WorkspaceCache` keeps what never changes within an index segment: the
stored fields of its documents, its words by length (for typo correction) and, within a
budget, the lower-cased text of the files already read.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from indexer.engine.base import Segment
from indexer.sources.base import CJK_CHARS, TOKEN_PATTERN
from indexer.store import SkipFile, read_file
from query import forgiving
from query.args import check_query, check_range
from query.context import QueryContext
from query.errors import TroveError
from query.indexes import PerSegment

COLLECTION = "conversations"
MAX_RESULTS = 100
# Lines of one conversation shown before other conversations get their turn; more
# are shown only when fewer conversations match than results were asked for.
LINES_PER_CONVERSATION = 3
EXCERPT_CHARS = 200
# A query word cut off at an end of the query matches every index term containing it;
# past this many terms the word no longer narrows the files worth reading.
MAX_EXPANSION = 512
# Lower-cased file texts kept in memory between queries (characters, all files together).
TEXT_CACHE_CHARS = 64 * 1024 * 1024
# The tiers below exact read at most this many files (the most promising first) and use
# at most this many words of the query.
MAX_FILES_READ = 300
MAX_WORDS = 32
# Words longer than this are not corrected (nothing indexed is that close to them).
MAX_CORRECTED_LENGTH = 40
# Scores per tier, within 0-1: a lower tier always scores below a higher one.
WORDS_SCORE = (0.5, 0.55)  # (some words inside other words, every word whole)
RELATED_SCORE = 0.45  # times the share of the query's content words a line holds
FUZZY_FACTOR = 0.9
# BM25 over the words of one line.
BM25_K1, BM25_B, BM25_AVG_TOKENS = 1.2, 0.75, 12.0

Match = Literal["exact", "words", "related", "fuzzy"]

_TOKEN = re.compile(TOKEN_PATTERN)
_DATE_RANGE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?")
DATE_RANGE_HELP = (
    "use YYYY-MM for a month (e.g. 2025-11: the folder 2025-11/ and every day folder "
    "2025-11-DD/) or YYYY-MM-DD for one day (e.g. 2025-11-10: only the folder 2025-11-10/)"
)


class WorkspaceHit(BaseModel):
    """One line of a conversation file that holds the query."""

    conversation: str = Field(description="The conversation's folder name (e.g. 001-debug-auth).")
    date: str = Field(
        description="The date folder the conversation is in, as named: 2025-11 (a month "
        "folder) or 2025-11-10 (a day folder)."
    )
    path: str = Field(description="Absolute path of the file.")
    line: int = Field(description="Line number in the file (1-based).")
    excerpt: str = Field(
        description="The matching line (long lines cut to the part around the match, "
        "marked with …)."
    )
    score: float = Field(
        description="Relevance 0-1, case ignored: 1 when the query matches whole words; "
        "less at the start or end of a word, least inside one."
    )
    conversation_hits: int = Field(
        description="How many lines of this conversation match (results show at most "
        f"{LINES_PER_CONVERSATION} per conversation while others match too)."
    )
    match: Match = Field(
        default="exact",
        description="How the line matched; the first tier that finds any line answers: "
        "'exact', the line holds the query as written (case-insensitive); 'words', no "
        "line did, and this one holds every word of it, in any order; 'related', no line "
        "held every word, and this one holds some of the words or words of the same stem "
        "(stop words never match alone), more of the query's words first; 'fuzzy', words "
        "no conversation holds were replaced by the closest indexed words "
        "(corrected_query).",
    )


class WorkspaceSearchResponse(BaseModel):
    """The answer to search_workspace."""

    results: list[WorkspaceHit] = Field(
        description="Best first; ties newest first (date folder, then conversation)."
    )
    total_found: int = Field(
        description="How many lines match in all (in the tier that answered), before max_results."
    )
    note: str | None = Field(
        default=None,
        description="How the query was matched (null for 'exact'); when nothing matched, "
        "why: which words no conversation holds and the closest indexed words, or that "
        "the date_range names no conversation folder.",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Indexed words closest to the query's words that no conversation holds.",
    )
    corrected_query: str | None = Field(
        default=None, description="The query as corrected, when match is 'fuzzy'."
    )


# --------------------------------------------------------------------------- arguments


@dataclass(frozen=True)
class DateRange:
    """A validated date_range: a month (``2025-11``) or one day (``2025-11-10``)."""

    value: str

    @property
    def is_month(self) -> bool:
        return len(self.value) == 7

    def field(self) -> tuple[str, str]:
        """The index field and term that select this range's documents."""
        return ("month", self.value) if self.is_month else ("date", self.value)


def check_date_range(value: str | None) -> DateRange | None:
    """None for no filter; INVALID_DATE_RANGE for anything but YYYY-MM or YYYY-MM-DD."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise TroveError("INVALID_DATE_RANGE", f"date_range must be a string; {DATE_RANGE_HELP}")
    text = value.strip()
    m = _DATE_RANGE.fullmatch(text)
    valid = False
    if m and text.isascii():
        try:
            date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
            valid = True
        except ValueError:
            pass
    if not valid:
        raise TroveError(
            "INVALID_DATE_RANGE", f"date_range {value!r} is not valid; {DATE_RANGE_HELP}"
        )
    return DateRange(text)


@dataclass(frozen=True)
class _Word:
    """A word of the query and which index terms can hold it."""

    text: str
    bounded_left: bool  # the query goes on before it: a term must start with it
    bounded_right: bool  # the query goes on after it: a term must end with it

    @property
    def exact(self) -> bool:
        return self.bounded_left and self.bounded_right


def query_words(literal: str) -> list[_Word]:
    """The query's words as the index cut them, with how each may be cut off.

    The index cuts the lower-cased text, the string the literal is verified in, so the
    lower-cased query is cut the same way: any query word not cut off at an end of the
    query is then a term of every file whose lines hold the query.
    """
    lowered = literal.lower()
    words = [
        _Word(m.group(), m.start() > 0, m.end() < len(lowered)) for m in _TOKEN.finditer(lowered)
    ]
    # The same word twice narrows nothing more.
    seen: dict[_Word, None] = {}
    for w in words:
        seen.setdefault(w, None)
    return list(seen)


# --------------------------------------------------------------------------- the cache


@dataclass(slots=True)
class _Doc:
    """A document of one index segment (its content never changes there)."""

    key: str
    date: str
    conversation: str
    conv: tuple[str, str]  # (date, conversation): which conversation it belongs to
    text: str | None = None  # the file's lower-cased text, once read (within the budget)


@dataclass
class _Segment:
    docs: dict[int, _Doc] = field(default_factory=dict)
    text_chars: int = 0
    # The segment's words of letters, by length (for typo correction; made on first use).
    by_length: dict[int, list[str]] | None = None

    def words_of_length(self, segment: Segment, low: int, high: int) -> Iterator[str]:
        if self.by_length is None:
            by_length: dict[int, list[str]] = {}
            for term in segment.lexicon("content"):
                if term.isalpha():
                    by_length.setdefault(len(term), []).append(term)
            self.by_length = by_length
        for n in range(low, high + 1):
            yield from self.by_length.get(n, ())


class WorkspaceCache:
    """What search_workspace keeps between queries (one per process, shared by threads).

    Per index segment (immutable, but for deletions): per document its
    stored fields and, while the budget lasts, the file's lower-cased text. A file
    re-indexed is a new document of a new segment, so what is kept never goes stale
    with respect to the index; segments merged away are dropped with all they hold.
    """

    def __init__(self, text_budget: int = TEXT_CACHE_CHARS) -> None:
        self._lock = threading.Lock()
        self._segments: PerSegment[_Segment] = PerSegment()
        self._text_chars = 0
        self.text_budget = text_budget

    def segment(self, segment: Segment) -> _Segment:
        return self._segments.get(segment.id, _Segment)

    def forget_segments_except(self, segids: set[str]) -> None:
        gone = self._segments.keep_only(segids)
        with self._lock:
            self._text_chars -= sum(seg.text_chars for seg in gone)

    def docs(self, seg: _Segment, segment: Segment, docnums: Iterable[int]) -> list[_Doc]:
        get = seg.docs.get
        out = []
        for n in docnums:
            doc = get(n)
            if doc is None:
                f = segment.stored(n)
                date, conv = f.get("date", ""), f.get("conversation", "")
                doc = seg.docs[n] = _Doc(f["key"], date, conv, (date, conv))
            out.append(doc)
        return out

    def lowered(self, seg: _Segment, doc: _Doc, root: Path, max_bytes: int) -> str | None:
        """The file's text, lower-cased (None if it cannot be read now), read once while
        the budget lasts."""
        text = read_text(root, doc.key, max_bytes)
        if text is None:
            return None
        lowered = text.lower()
        with self._lock:
            if self._text_chars + len(lowered) <= self.text_budget:
                self._text_chars += len(lowered)
                seg.text_chars += len(lowered)
                doc.text = lowered
        return lowered


def read_text(root: Path, rel: str, max_bytes: int) -> str | None:
    """A conversation file's text as the indexer read it (None if it cannot be read)."""
    try:
        return read_file(root, rel, max_bytes).text()
    except (FileNotFoundError, SkipFile):
        return None


# --------------------------------------------------------------------------- candidates


def _expand(segment: Segment, word: _Word) -> list[str] | None:
    """The segment's terms that can hold the word (None: too many to narrow anything)."""
    lex = segment.lexicon("content")
    if word.exact:
        found = lex.equal_to(word.text)
    elif word.bounded_left:  # the word starts a term
        found = lex.starting_with(word.text)
    elif word.bounded_right:  # the word ends a term
        found = lex.ending_with(word.text)
    else:
        found = lex.containing(word.text)
    return [lex.term(k) for k in found] if len(found) <= MAX_EXPANSION else None


def _candidates(
    segment: Segment, words: list[_Word], date_range: DateRange | None
) -> Iterator[int]:
    """Live documents of one segment that can hold the query (segment-local numbers)."""
    sets: list[set[int]] = []
    for word in words:
        terms = _expand(segment, word)
        if terms is None:  # too common a fragment: the literal check on the lines decides
            continue
        if not terms:
            return iter(())
        sets.append(segment.docs_with("content", terms))
        if not sets[-1]:
            return iter(())
    if date_range is not None:
        field_name, term = date_range.field()
        sets.append(segment.docs_with(field_name, [term]))
    if not sets:
        # No word narrows anything (the query has none, or only too common ones): every
        # live document may hold the query.
        sets.append(segment.docs_with("kind", ["doc"]))
    sets.sort(key=len)
    found = set(sets[0])
    for s in sets[1:]:
        found &= s
    return iter(found)


# --------------------------------------------------------------------------- matching

# Word characters for "whole word" purposes: as the index cuts words, a CJK character
# is a word of its own, so it never joins the letters next to it into one word.
_JOINS = rf"[^\W{CJK_CHARS}]"


@dataclass
class _Line:
    doc: _Doc
    number: int
    score: float
    line: str  # lower-cased
    col: int
    length: int
    rank: int


class _Matcher:
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
        left = rf"(?<!{_JOINS}.{{{len(lit)}}})" if re.match(_JOINS, lit[0]) else ""
        right = rf"(?!{_JOINS})" if re.match(_JOINS, lit[-1]) else ""
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

    def top_lines(self, docs: list[tuple[_Doc, str]], k: int) -> list[_Line]:
        """The best k lines of the documents (given newest first): by score, then in the
        documents' order; at most LINES_PER_CONVERSATION per conversation unless fewer
        conversations match.

        Looks for lines score by score, best first, and stops as soon as it has k.
        """
        taken: list[_Line] = []
        spare: list[_Line] = []
        seen: set[tuple[str, int]] = set()
        per: Counter[tuple[str, str]] = Counter()
        rank = 0
        for score, rx in self.levels:
            for doc, lowered in docs:
                conv = doc.conv
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
                    found = _Line(doc, line_no, score, line, m.start() - start, self.length, rank)
                    rank += 1
                    if per[conv] < LINES_PER_CONVERSATION:
                        per[conv] += 1
                        taken.append(found)
                        if len(taken) == k:
                            return taken
                    elif len(spare) < k:
                        spare.append(found)
        taken.extend(spare[: k - len(taken)])
        taken.sort(key=lambda ln: (-ln.score, ln.rank))
        return taken


def _excerpt(line: str, col: int, length: int) -> str:
    """The line, or the part of a long line around the match, with … where cut."""
    line = line.rstrip("\r")
    if len(line) <= EXCERPT_CHARS:
        return line.strip()
    room = max(0, EXCERPT_CHARS - length)
    start = max(0, col - room // 3)
    end = min(len(line), start + EXCERPT_CHARS)
    start = max(0, end - EXCERPT_CHARS)
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


def _original_line(original: str | None, ln: _Line) -> str:
    """The line as written (case kept), unless the file changed since it was read."""
    if original is not None:
        lines = original.split("\n")
        if ln.number <= len(lines) and lines[ln.number - 1].lower() == ln.line:
            return lines[ln.number - 1]
    return ln.line


# --------------------------------------------------------------------------- the tiers


class _View:
    """What every tier reads: the collection's index, the per-process cache and the files."""

    def __init__(self, ctx: QueryContext, root: Path, date_range: DateRange | None) -> None:
        self.ctx = ctx
        self.cache: WorkspaceCache = _memo(ctx)
        self.root = root
        self.range = date_range
        self.max_bytes = int(ctx.settings.index.max_file_mb * 1024 * 1024)
        self._in_range: dict[str, set[int]] = {}

    @contextmanager
    def snapshot(self) -> Iterator[list[tuple[Segment, _Segment]]]:
        """The latest commit's segments, each with what the cache keeps for it (the index
        is held only while this is open: read files after)."""
        with self.ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
            if snapshot is None:
                raise TroveError(
                    "DIRECTORY_NOT_FOUND", "the conversations index could not be built"
                )
            segments = [segment for segment, _base in snapshot.segments()]
            self.cache.forget_segments_except({segment.id for segment in segments})
            yield [(segment, self.cache.segment(segment)) for segment in segments]

    def in_range(self, segment: Segment) -> set[int] | None:
        """The segment's live documents in the date range (None: no date range)."""
        if self.range is None:
            return None
        found = self._in_range.get(segment.id)
        if found is None:
            field_name, term = self.range.field()
            found = self._in_range[segment.id] = segment.docs_with(field_name, [term])
        return found

    def text(self, seg: _Segment, doc: _Doc) -> str | None:
        if doc.text is not None:
            return doc.text
        return self.cache.lowered(seg, doc, self.root, self.max_bytes)

    def originals(self, lines: Iterable[_Line]) -> dict[str, str | None]:
        """The shown files as written (None: gone since the index saw them)."""
        keys = {ln.doc.key for ln in lines}
        return {key: read_text(self.root, key, self.max_bytes) for key in keys}


@dataclass
class _Answer:
    """A tier's answer: the lines shown, per conversation how many lines match, in all."""

    top: list[_Line]
    per_conversation: dict[tuple[str, str], int]
    total: int
    originals: dict[str, str | None]


_NOTHING = _Answer([], {}, 0, {})


def _newest_first(found: Iterable[tuple[_Segment, _Doc]]) -> list[tuple[_Segment, _Doc]]:
    """Newest first (date folder, then conversation), then by path: the order ties keep."""
    docs = sorted(found, key=lambda d: d[1].key)
    docs.sort(key=lambda d: d[1].conv, reverse=True)
    return docs


def _exact(view: _View, literal: str, max_results: int) -> _Answer:
    """Tier 1: the lines holding the literal (the search as it always was)."""
    words = query_words(literal)
    with view.snapshot() as segments:
        found = [
            (seg, doc)
            for segment, seg in segments
            for doc in view.cache.docs(seg, segment, _candidates(segment, words, view.range))
        ]
    matcher = _Matcher(literal)
    counts: dict[str, int] = {}
    matching: list[tuple[_Doc, str]] = []
    findall = matcher.any.findall
    for seg, doc in _newest_first(found):
        lowered = view.text(seg, doc)
        if lowered is None:
            continue
        n = len(findall(lowered))
        if n:
            counts[doc.key] = n
            matching.append((doc, lowered))
    while True:
        top = matcher.top_lines(matching, max_results)
        originals = view.originals(top)
        # A file read earlier may be gone before the index has caught up: leave it out.
        gone = {key for key, text in originals.items() if text is None}
        if not gone:
            break
        matching = [(doc, lowered) for doc, lowered in matching if doc.key not in gone]
        for key in gone:
            del counts[key]
    per_conversation: dict[tuple[str, str], int] = {}
    for doc, _ in matching:
        per_conversation[doc.conv] = per_conversation.get(doc.conv, 0) + counts[doc.key]
    return _Answer(top, per_conversation, sum(per_conversation.values()), originals)


def _pick(lines: list[_Line], k: int) -> list[_Line]:
    """The best k of lines given best first (``rank`` their place), at most
    LINES_PER_CONVERSATION per conversation unless fewer conversations match."""
    taken: list[_Line] = []
    spare: list[_Line] = []
    per: Counter[tuple[str, str]] = Counter()
    for ln in lines:
        if per[ln.doc.conv] < LINES_PER_CONVERSATION:
            per[ln.doc.conv] += 1
            taken.append(ln)
            if len(taken) == k:
                return taken
        elif len(spare) < k:
            spare.append(ln)
    taken.extend(spare[: k - len(taken)])
    taken.sort(key=lambda ln: ln.rank)
    return taken


def _answer_lines(view: _View, lines: list[_Line], k: int) -> _Answer:
    """A lower tier's answer from every line it found, best first."""
    for rank, ln in enumerate(lines):
        ln.rank = rank
    while True:
        top = _pick(lines, k)
        originals = view.originals(top)
        gone = {key for key, text in originals.items() if text is None}
        if not gone:
            break
        lines = [ln for ln in lines if ln.doc.key not in gone]
    per_conversation = Counter(ln.doc.conv for ln in lines)
    return _Answer(top, dict(per_conversation), len(lines), originals)


def _line_at(lowered: str, start: int) -> str:
    end = lowered.find("\n", start)
    return lowered[start : end if end >= 0 else len(lowered)]


class _LineCounter:
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


def _word_sets(segment: Segment, word: str) -> list[set[int]] | None:
    """Sets of the segment's documents that can hold the word as a substring (each one
    must): [] when the word is too common to narrow anything, None when none can."""
    lex = segment.lexicon("content")
    if forgiving.is_cjk(word):  # the index holds CJK characters one by one
        sets = []
        for ch in dict.fromkeys(word):
            docs = segment.docs_with("content", [ch]) if lex.equal_to(ch) else set()
            if not docs:
                return None
            sets.append(docs)
        return sets
    found = lex.containing(word)
    if len(found) > MAX_EXPANSION:
        return []
    docs = segment.docs_with("content", [lex.term(k) for k in found]) if found else set()
    return [docs] if docs else None


def _words(view: _View, words: list[str], k: int) -> tuple[_Answer, bool]:
    """Tier 2: lines holding every word, any order; and whether files were left unread."""
    with view.snapshot() as segments:
        found: list[tuple[_Segment, _Doc]] = []
        for segment, seg in segments:
            sets: list[set[int]] = []
            for word in words:
                got = _word_sets(segment, word)
                if got is None:
                    break
                sets.extend(got)
            else:
                in_range = view.in_range(segment)
                if in_range is not None:
                    sets.append(in_range)
                if not sets:
                    sets.append(segment.docs_with("kind", ["doc"]))
                sets.sort(key=len)
                held = set(sets[0]).intersection(*sets[1:])
                found.extend((seg, doc) for doc in view.cache.docs(seg, segment, held))
    docs = _newest_first(found)
    capped = len(docs) > MAX_FILES_READ
    anchor = max(words, key=len)
    rx = re.compile(re.escape(anchor) + r"[^\n]*")
    whole = [
        re.compile(
            re.escape(w) if forgiving.is_cjk(w) else rf"(?<!{_JOINS}){re.escape(w)}(?!{_JOINS})"
        )
        for w in words
    ]
    lines: list[_Line] = []
    for seg, doc in docs[:MAX_FILES_READ]:
        lowered = view.text(seg, doc)
        if lowered is None:
            continue
        at = _LineCounter(lowered)
        for m in rx.finditer(lowered):
            number, start = at.start_of(m.start())
            line = _line_at(lowered, start)
            if all(w in line for w in words):
                is_whole = all(p.search(line) for p in whole)
                score = WORDS_SCORE[1] if is_whole else WORDS_SCORE[0]
                lines.append(_Line(doc, number, score, line, m.start() - start, len(anchor), 0))
    lines.sort(key=lambda ln: -ln.score)  # stable: newest first, then in line order
    return _answer_lines(view, lines, k), capped


# A query word matches the terms of its stem family; one with none matches the terms that
# hold it, if there are at most this many.
MAX_HOLDING = 64


@dataclass
class _Lookup:
    """The query's content words in the index: which are known, the terms that stand
    for each, how many files hold each, and which files of the range hold which."""

    words: list[str]
    known: list[bool]
    terms: dict[str, int]  # an indexed term -> the query word it stands for
    df: list[int]
    live: int
    held: list[tuple[_Segment, _Doc, set[int]]]


def _lookup(view: _View, words: list[str]) -> _Lookup:
    n = len(words)
    known, df = [False] * n, [0] * n
    terms: dict[str, int] = {}
    live = 0
    held: list[tuple[_Segment, _Doc, set[int]]] = []
    with view.snapshot() as segments:
        # The terms standing for each word, decided over every segment at once so that
        # how the index is cut into segments never changes an answer.
        names: list[list[list[str]]] = [[[] for _ in words] for _ in segments]
        for (segment, _seg), per_word in zip(segments, names, strict=True):
            lex = segment.lexicon("content")
            for i, word in enumerate(words):
                if forgiving.is_cjk(word):
                    continue
                if len(word) < 3:  # too short to stand for a stem family
                    per_word[i] = [lex.term(k) for k in lex.equal_to(word)]
                else:
                    per_word[i] = [lex.term(k) for k in forgiving.family(lex, word)]
        for i, word in enumerate(words):
            if forgiving.is_cjk(word) or any(per_word[i] for per_word in names):
                continue
            holding = [
                [
                    segment.lexicon("content").term(k)
                    for k in segment.lexicon("content").containing(word)
                ]
                for segment, _seg in segments
            ]
            if len({t for found in holding for t in found}) > MAX_HOLDING:
                known[i] = True  # in the index, too often to match by
                continue
            for per_word, found in zip(names, holding, strict=True):
                per_word[i] = found
        for (segment, seg), per_word in zip(segments, names, strict=True):
            live += len(segment.docs_with("kind", ["doc"]))
            in_range = view.in_range(segment)
            by_doc: dict[int, set[int]] = {}
            for i, word in enumerate(words):
                if forgiving.is_cjk(word):
                    sets = _word_sets(segment, word)
                    docs = set.intersection(*sets) if sets else set()
                else:
                    docs = segment.docs_with("content", per_word[i]) if per_word[i] else set()
                    if docs:
                        for name in per_word[i]:
                            terms.setdefault(name, i)
                if not docs:
                    continue
                known[i] = True
                df[i] += len(docs)
                for d in docs if in_range is None else docs & in_range:
                    by_doc.setdefault(d, set()).add(i)
            docs_of = view.cache.docs(seg, segment, by_doc)
            held.extend((seg, doc, by_doc[d]) for doc, d in zip(docs_of, by_doc, strict=True))
    return _Lookup(words, known, terms, df, live, held)


def _related(view: _View, lookup: _Lookup, n_words: int, k: int) -> tuple[_Answer, bool]:
    """Tier 4: lines holding some of the words or words of their stems: most words
    first, then BM25 over stems, then newest; and whether files were left unread."""
    idf = [math.log(1 + (lookup.live - df + 0.5) / (df + 0.5)) for df in lookup.df]
    files = _newest_first((seg, doc) for seg, doc, _ in lookup.held)
    words_of = {doc.key: ws for _, doc, ws in lookup.held}
    files.sort(key=lambda f: (-len(words_of[f[1].key]), -sum(idf[i] for i in words_of[f[1].key])))
    capped = len(files) > MAX_FILES_READ
    plain = sorted(lookup.terms, key=len, reverse=True)
    cjk = [w for w in lookup.words if forgiving.is_cjk(w)]
    alternatives = []
    if plain:
        alternatives.append(rf"(?<!{_JOINS})(?:{'|'.join(map(re.escape, plain))})(?!{_JOINS})")
    alternatives += map(re.escape, cjk)
    if not alternatives:
        return _NOTHING, False
    rx = re.compile("|".join(alternatives))
    index_of = dict(lookup.terms) | {w: lookup.words.index(w) for w in cjk}
    found: list[tuple[tuple[int, float], _Line]] = []
    for seg, doc in files[:MAX_FILES_READ]:
        lowered = view.text(seg, doc)
        if lowered is None:
            continue
        at = _LineCounter(lowered)
        per_line: dict[int, tuple[int, int, int, Counter[int]]] = {}
        for m in rx.finditer(lowered):
            number, start = at.start_of(m.start())
            entry = per_line.get(start)
            if entry is None:
                entry = per_line[start] = (number, m.start() - start, len(m.group()), Counter())
            entry[3][index_of[m.group()]] += 1
        for start, (number, col, length, tf) in per_line.items():
            line = _line_at(lowered, start)
            norm = BM25_K1 * (1 - BM25_B + BM25_B * len(_TOKEN.findall(line)) / BM25_AVG_TOKENS)
            bm25 = sum(idf[i] * f * (BM25_K1 + 1) / (f + norm) for i, f in tf.items())
            score = RELATED_SCORE * len(tf) / n_words
            found.append(((len(tf), bm25), _Line(doc, number, score, line, col, length, 0)))
    found.sort(key=lambda f: (-f[0][0], -f[0][1]))  # stable: newest first, in line order
    return _answer_lines(view, [ln for _, ln in found], k), capped


# --------------------------------------------------------------------------- the search


def search_workspace(
    ctx: QueryContext, query: str, date_range: str | None = None, max_results: int = 10
) -> WorkspaceSearchResponse:
    """Conversation lines that match ``query``, best first, from the first tier that finds
    any (see the module docstring): the query as written (literal, case-insensitive),
    every word of it in any order, its unknown words corrected, some of its words or
    words of the same stem.

    ``date_range``: ``YYYY-MM`` (the month folder and its day folders) or ``YYYY-MM-DD``
    (that day's folder only); None searches every conversation.
    """
    literal = check_query(query)
    if "\n" in literal or "\r" in literal:
        raise TroveError(
            "INVALID_QUERY", "query spans several lines; search_workspace matches within one line"
        )
    dr = check_date_range(date_range)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    root = ctx.settings.source_root(COLLECTION)
    if root is None or not root.is_dir():
        raise TroveError(
            "DIRECTORY_NOT_FOUND",
            f"the conversations folder {root or '(not configured)'} does not exist; "
            "check [sources] conversations in the config",
        )
    view = _View(ctx, root, dr)
    exact = _exact(view, literal, max_results)
    if exact.total:
        return _response(view, exact, "exact")
    return _forgive(view, literal, max_results)


_WORD_RUN = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+")


def _forgive(view: _View, literal: str, k: int) -> WorkspaceSearchResponse:
    """Tiers 2-4, once no line holds the query as written."""
    if view.range is not None:
        with view.snapshot() as segments:
            folders = any(view.in_range(segment) for segment, _ in segments)
        if not folders:
            return _empty(
                f"no conversation folder for {view.range.value}: nothing to search there; "
                "try another date_range or none"
            )
    words = forgiving.words(literal)
    if not words:
        return _empty(
            f"no conversation line holds {_short(literal)!r}; it has no words to look for"
        )
    cut = len(words) > MAX_WORDS
    words = words[:MAX_WORDS]
    stems = list(
        {forgiving.stem(w): w for w in reversed(words) if w not in forgiving.STOP_WORDS}.values()
    )[::-1]
    first_words = f"; only its first {MAX_WORDS} words were used" if cut else ""
    if not stems:
        return _empty(
            f"no conversation line holds {_short(literal)!r}, and its words ({', '.join(words)}) "
            "are too common to find anything alone: add a word that says what to look for"
        )
    answer, capped = _words(view, words, k)
    if answer.total:
        note = f"no line holds {_short(literal)!r} as written; these hold every word of it, in any order"
        return _response(view, answer, "words", note + first_words + _capped(capped))

    lookup = _lookup(view, stems)
    unknown = [w for w, known in zip(stems, lookup.known, strict=True) if not known]
    closest = _closest(view, unknown)
    suggestions = list(dict.fromkeys(c for found in closest.values() for c in found))
    fixes = {w: found[0] for w, found in closest.items() if found}
    absent = f"no conversation holds {_quoted(unknown)}" if unknown else ""
    if fixes:
        corrected = _WORD_RUN.sub(lambda m: fixes.get(m.group().lower(), m.group()), literal)
        fixed, capped = _exact(view, corrected, k), False
        how = "as written"
        if not fixed.total:
            fixed_words = forgiving.words(corrected)[:MAX_WORDS]
            fixed, capped = _words(view, fixed_words, k)
            how = "every word, in any order"
            if not fixed.total:
                fixed_stems = list(
                    {
                        forgiving.stem(w): w
                        for w in reversed(fixed_words)
                        if w not in forgiving.STOP_WORDS
                    }.values()
                )[::-1]
                fixed_lookup = _lookup(view, fixed_stems)
                fixed, capped = _related(view, fixed_lookup, len(fixed_stems), k)
                how = "some of its words or words of the same stem, most words first"
        if fixed.total:
            note = f"{absent}; these lines hold {corrected!r} ({how})"
            return _response(
                view,
                fixed,
                "fuzzy",
                note + first_words + _capped(capped),
                suggestions,
                corrected,
                FUZZY_FACTOR,
            )
    related, capped = _related(view, lookup, len(stems), k)
    if related.total:
        note = (
            "no line holds every word of the query; these hold some of its words or words "
            "of the same stem, most words first"
        )
        if absent:
            note += f" ({absent}{_suggested(suggestions)})"
        return _response(
            view, related, "related", note + first_words + _capped(capped), suggestions
        )

    parts = [f"no conversation line holds {_short(literal)!r}, all its words or any of them"]
    if absent:
        parts.append(absent + _suggested(suggestions))
    if view.range is not None and not unknown:
        parts.append(
            f"its words are in conversations outside {view.range.value}: try without date_range"
        )
    common = [w for w in words if w in forgiving.STOP_WORDS]
    if common:
        parts.append(f"common words ({', '.join(common)}) never match alone")
    return _empty("; ".join(parts) + first_words, suggestions)


def _closest(view: _View, unknown: list[str]) -> dict[str, list[str]]:
    """Per word no conversation holds, the closest indexed words (best first)."""
    found: dict[str, list[str]] = {}
    if not unknown:
        return found
    with view.snapshot() as segments:
        for word in unknown:
            n = len(word)
            if n > MAX_CORRECTED_LENGTH or n < forgiving.MIN_CORRECTABLE or not word.isalpha():
                found[word] = []
                continue
            pool = dict.fromkeys(
                term
                for segment, seg in segments
                for term in seg.words_of_length(segment, n - 2, n + 2)
            )
            found[word] = forgiving.closest(word, pool)
    return found


def _quoted(words: Iterable[str]) -> str:
    return ", ".join(repr(_short(w)) for w in words)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _suggested(suggestions: list[str]) -> str:
    return f"; closest indexed words: {', '.join(suggestions)}" if suggestions else ""


def _capped(capped: bool) -> str:
    return f"; only the {MAX_FILES_READ} most promising files were read" if capped else ""


def _empty(note: str, suggestions: list[str] | None = None) -> WorkspaceSearchResponse:
    return WorkspaceSearchResponse(
        results=[], total_found=0, note=note, suggestions=suggestions or []
    )


def _response(
    view: _View,
    answer: _Answer,
    match: Match,
    note: str | None = None,
    suggestions: list[str] | None = None,
    corrected: str | None = None,
    factor: float = 1.0,
) -> WorkspaceSearchResponse:
    hits = []
    for ln in answer.top:
        line = _original_line(answer.originals[ln.doc.key], ln)
        hits.append(
            WorkspaceHit(
                conversation=ln.doc.conversation,
                date=ln.doc.date,
                path=str(view.root / ln.doc.key),
                line=ln.number,
                excerpt=_excerpt(line, ln.col, ln.length),
                score=ln.score if factor == 1.0 else round(ln.score * factor, 4),
                conversation_hits=answer.per_conversation[ln.doc.conv],
                match=match,
            )
        )
    return WorkspaceSearchResponse(
        results=hits,
        total_found=answer.total,
        note=note,
        suggestions=suggestions or [],
        corrected_query=corrected,
    )


def _memo(ctx: QueryContext) -> WorkspaceCache:
    memo = ctx.memo.get("workspace")
    if memo is None:
        memo = ctx.memo.setdefault("workspace", WorkspaceCache())
    return memo
