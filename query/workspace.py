"""search_workspace: a literal, case-insensitive search of conversation files, line by line.

The index narrows the search to the files that hold every word of the query (a word cut
off at either end of the query matches the index terms that contain it); only those
files are read, and the literal is verified on their lines. One result per matching line.
A query without words (punctuation only) is verified on every file in the date range.

Lines are ranked by how the literal sits in them (whole words, then the start of a
word, the end of one, inside one), ties newest first; a conversation shows at most
LINES_PER_CONVERSATION lines while other conversations match too.

Per process, a `WorkspaceCache` keeps what never changes within an index segment: the
stored fields of its documents and, within a budget, the lower-cased text of
the files already read.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pydantic import BaseModel, Field

from indexer.engine.base import Segment
from indexer.sources.base import CJK_CHARS, TOKEN_PATTERN
from indexer.store import SkipFile, read_file
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


class WorkspaceSearchResponse(BaseModel):
    """The answer to search_workspace."""

    results: list[WorkspaceHit] = Field(
        description="Best first; ties newest first (date folder, then conversation)."
    )
    total_found: int = Field(description="How many lines match in all, before max_results.")


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


# --------------------------------------------------------------------------- the search


def search_workspace(
    ctx: QueryContext, query: str, date_range: str | None = None, max_results: int = 10
) -> WorkspaceSearchResponse:
    """Conversation lines holding ``query`` (literal, case-insensitive), best first.

    ``date_range``: ``YYYY-MM`` (the month folder and its day folders) or ``YYYY-MM-DD``
    (that day's folder only); None searches every conversation.
    """
    literal = check_query(query)
    if "\n" in literal or "\r" in literal:
        raise TroveError(
            "INVALID_QUERY", "query spans several lines; search_workspace matches within one line"
        )
    words = query_words(literal)
    dr = check_date_range(date_range)
    check_range(max_results, "max_results", 1, MAX_RESULTS)
    settings = ctx.settings
    root = settings.source_root(COLLECTION)
    if root is None or not root.is_dir():
        raise TroveError(
            "DIRECTORY_NOT_FOUND",
            f"the conversations folder {root or '(not configured)'} does not exist; "
            "check [sources] conversations in the config",
        )
    cache: WorkspaceCache = _memo(ctx)
    matcher = _Matcher(literal)
    max_bytes = int(settings.index.max_file_mb * 1024 * 1024)

    with ctx.indexes.snapshot(COLLECTION, build=True) as snapshot:
        if snapshot is None:
            raise TroveError("DIRECTORY_NOT_FOUND", "the conversations index could not be built")
        found: list[tuple[_Segment, list[_Doc]]] = []
        for segment, _base in snapshot.segments():
            seg = cache.segment(segment)
            found.append((seg, cache.docs(seg, segment, _candidates(segment, words, dr))))
        cache.forget_segments_except({segment.id for segment, _ in snapshot.segments()})

    docs = [(seg, doc) for seg, seg_docs in found for doc in seg_docs]
    # Newest first (date folder, then conversation), then by path: the order ties keep.
    docs.sort(key=lambda d: d[1].key)
    docs.sort(key=lambda d: d[1].conv, reverse=True)
    counts: dict[str, int] = {}
    matching: list[tuple[_Doc, str]] = []
    findall = matcher.any.findall
    for seg, doc in docs:
        lowered = doc.text
        if lowered is None:
            lowered = cache.lowered(seg, doc, root, max_bytes)
            if lowered is None:
                continue
        n = len(findall(lowered))
        if n:
            counts[doc.key] = n
            matching.append((doc, lowered))
    while True:
        top = matcher.top_lines(matching, max_results)
        originals = {key: read_text(root, key, max_bytes) for key in {ln.doc.key for ln in top}}
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
    hits = []
    for ln in top:
        line = _original_line(originals[ln.doc.key], ln)
        hits.append(
            WorkspaceHit(
                conversation=ln.doc.conversation,
                date=ln.doc.date,
                path=str(root / ln.doc.key),
                line=ln.number,
                excerpt=_excerpt(line, ln.col, ln.length),
                score=ln.score,
                conversation_hits=per_conversation[ln.doc.conv],
            )
        )
    return WorkspaceSearchResponse(results=hits, total_found=sum(per_conversation.values()))


def _memo(ctx: QueryContext) -> WorkspaceCache:
    memo = ctx.memo.get("workspace")
    if memo is None:
        memo = ctx.memo.setdefault("workspace", WorkspaceCache())
    return memo
