"""Narrowing the files through the index: the files that can hold the query's literal,
all its words, or some of its words and their stems."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from indexer.engine.base import Segment
from indexer.sources.base import TOKEN_PATTERN
from query import forgiving
from query.count_plan import CountPlan
from query.workspace import limits
from query.workspace.cache import Doc, SegmentCache
from query.workspace.dates import DateRange
from query.workspace.view import View

_TOKEN = re.compile(TOKEN_PATTERN)


@dataclass(frozen=True)
class Word:
    """A word of the query and which index terms can hold it."""

    text: str
    bounded_left: bool  # the query goes on before it: a term must start with it
    bounded_right: bool  # the query goes on after it: a term must end with it

    @property
    def exact(self) -> bool:
        return self.bounded_left and self.bounded_right


def query_words(literal: str) -> list[Word]:
    """The query's words as the index cut them, with how each may be cut off.

    The index cuts the lower-cased text, the string the literal is verified in, so the
    lower-cased query is cut the same way: any query word not cut off at an end of the
    query is then a term of every file whose lines hold the query.
    """
    lowered = literal.lower()
    words = [
        Word(m.group(), m.start() > 0, m.end() < len(lowered)) for m in _TOKEN.finditer(lowered)
    ]
    # The same word twice narrows nothing more.
    seen: dict[Word, None] = {}
    for w in words:
        seen.setdefault(w, None)
    return list(seen)


def _expand(segment: Segment, word: Word, plan: CountPlan = "cost") -> list[str] | None:
    """The segment's terms that can hold the word (None: too many to narrow anything,
    or postings that would cost more than the files they leave out, or the plan
    "texts": every file is read; the plan "postings" narrows by any number)."""
    if plan == "texts":
        return None
    lex = segment.lexicon("content")
    if word.exact:
        found = lex.equal_to(word.text)
    elif word.bounded_left:  # the word starts a term
        found = lex.starting_with(word.text)
    elif word.bounded_right:  # the word ends a term
        found = lex.ending_with(word.text)
    else:
        found = lex.containing(word.text)
    if plan == "cost" and _too_costly(segment, found, limits.MAX_EXPANSION):
        return None
    return [lex.term(k) for k in found]


def _too_costly(segment: Segment, found: Sequence[int], max_terms: int) -> bool:
    """Whether reading the postings of these terms (lexicon numbers) costs more than the
    files they would leave out: more than ``max_terms`` terms, or postings outnumbering
    the segment's live documents NARROW_POSTINGS times."""
    lex = segment.lexicon("content")
    return len(found) > max_terms or sum(
        map(lex.doc_counts.__getitem__, found)
    ) > limits.NARROW_POSTINGS * (segment.doc_count_all - len(segment.deleted))


def candidate_docs(
    segment: Segment, words: list[Word], date_range: DateRange | None, plan: CountPlan = "cost"
) -> Iterator[int]:
    """Live documents of one segment that can hold the query (segment-local numbers):
    those holding the terms of its words, but for a word held by more than MAX_EXPANSION
    terms or whose terms' postings outnumber the documents NARROW_POSTINGS times (a
    fragment such as 'e' or 'to': its postings would cost more than reading the few
    files they leave out); or as ``plan`` (QueryContext.plan) forces: "postings" narrows
    by every word, "texts" by none (every file of the date range is read)."""
    sets: list[set[int]] = []
    for word in words:
        terms = _expand(segment, word, plan)
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


def word_sets(segment: Segment, word: str) -> list[set[int]] | None:
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
    if _too_costly(segment, found, limits.MAX_WORD_TERMS):
        return []
    docs = segment.docs_with("content", [lex.term(k) for k in found]) if found else set()
    return [docs] if docs else None


@dataclass
class Lookup:
    """The query's content words in the index: which are known, the terms that stand
    for each, how many files hold each, and which files of the range hold which."""

    words: list[str]
    known: list[bool]
    terms: dict[str, int]  # an indexed term -> the query word it stands for
    df: list[int]
    live: int
    # Per segment, the files of the range holding any of the words and, for each, the
    # words it holds (as bits).
    held: list[tuple[SegmentCache, list[Doc], list[int]]]

    @property
    def files(self) -> int:
        return sum(len(docs) for _, docs, _ in self.held)


def look_up(view: View, words: list[str]) -> Lookup:
    n = len(words)
    known, df = [False] * n, [0] * n
    terms: dict[str, int] = {}
    live = 0
    held: list[tuple[SegmentCache, list[Doc], list[int]]] = []
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
            if len({t for found in holding for t in found}) > limits.MAX_HOLDING:
                known[i] = True  # in the index, too often to match by
                continue
            for per_word, found in zip(names, holding, strict=True):
                per_word[i] = found
        for (segment, seg), per_word in zip(segments, names, strict=True):
            live += len(segment.docs_with("kind", ["doc"]))
            in_range = view.in_range(segment)
            by_doc: dict[int, int] = {}
            for i, word in enumerate(words):
                if forgiving.is_cjk(word):
                    sets = word_sets(segment, word)
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
                bit, get = 1 << i, by_doc.get
                for d in docs if in_range is None else docs & in_range:
                    by_doc[d] = get(d, 0) | bit
            held.append((seg, view.cache.docs(seg, segment, by_doc), list(by_doc.values())))
    return Lookup(words, known, terms, df, live, held)
