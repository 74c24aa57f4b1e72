"""The tiers, each reading the files the index points at: ``exact_lines`` (the literal),
``word_lines`` (every word, any order) and ``related_lines`` (some words or their stems)."""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter

from indexer.sources.base import TOKEN_PATTERN
from query import forgiving
from query.workspace import limits
from query.workspace.answers import NOTHING, Answer, answer_lines, fills, newest_first, pick
from query.workspace.cache import Doc, SegmentCache
from query.workspace.candidates import Lookup, candidate_docs, query_words, word_sets
from query.workspace.lines import JOINS, Line, LineCounter, Matcher, line_at
from query.workspace.view import View

# Scores per tier, within 0-1: a lower tier always scores below a higher one.
WORDS_SCORE = (0.5, 0.55)  # (some words inside other words, every word whole)
RELATED_SCORE = 0.45  # times the share of the query's content words a line holds
# BM25 over the words of one line.
BM25_K1, BM25_B, BM25_AVG_TOKENS = 1.2, 0.75, 12.0

_TOKEN = re.compile(TOKEN_PATTERN)


def exact_lines(view: View, literal: str, max_results: int) -> Answer:
    """Tier 1: the lines holding the literal (the search as it always was)."""
    words = query_words(literal)
    with view.snapshot() as segments:
        found = [
            (seg, doc)
            for segment, seg in segments
            for doc in view.cache.docs(
                seg, segment, candidate_docs(segment, words, view.range, view.ctx.plan)
            )
        ]
    matcher = Matcher(literal)
    counts: dict[str, int] = {}
    matching: list[tuple[Doc, str]] = []
    findall = matcher.any.findall
    for seg, doc in newest_first(found):
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
    return Answer(top, per_conversation, sum(per_conversation.values()), originals)


def word_lines(view: View, words: list[str], k: int) -> tuple[Answer, bool]:
    """Tier 2: lines holding every word, any order; and whether files were left unread."""
    with view.snapshot() as segments:
        found: list[tuple[SegmentCache, Doc]] = []
        for segment, seg in segments:
            sets: list[set[int]] = []
            for word in words:
                got = word_sets(segment, word)
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
    docs = newest_first(found)
    capped = len(docs) > limits.MAX_FILES_READ
    anchor = max(words, key=len)
    rx = re.compile(re.escape(anchor) + r"[^\n]*")
    whole = [
        re.compile(
            re.escape(w) if forgiving.is_cjk(w) else rf"(?<!{JOINS}){re.escape(w)}(?!{JOINS})"
        )
        for w in words
    ]
    lines: list[Line] = []
    for seg, doc in docs[: limits.MAX_FILES_READ]:
        lowered = view.text(seg, doc)
        if lowered is None:
            continue
        at = LineCounter(lowered)
        for m in rx.finditer(lowered):
            number, start = at.start_of(m.start())
            line = line_at(lowered, start)
            if all(w in line for w in words):
                is_whole = all(p.search(line) for p in whole)
                score = WORDS_SCORE[1] if is_whole else WORDS_SCORE[0]
                lines.append(Line(doc, number, score, line, m.start() - start, len(anchor), 0))
    lines.sort(key=lambda ln: -ln.score)  # stable: newest first, then in line order
    return answer_lines(view, lines, k), capped


def related_lines(view: View, lookup: Lookup, n_words: int, k: int) -> tuple[Answer, bool]:
    """Tier 4: lines holding some of the words or words of their stems: most words
    first, then BM25 over stems, then newest; and whether files were left unread."""
    idf = [math.log(1 + (lookup.live - df + 0.5) / (df + 0.5)) for df in lookup.df]
    files = _most_promising(lookup, idf, limits.MAX_FILES_READ)
    capped = lookup.files > limits.MAX_FILES_READ
    plain = sorted(lookup.terms, key=len, reverse=True)
    cjk = [w for w in lookup.words if forgiving.is_cjk(w)]
    alternatives = []
    if plain:
        # Each term checks the left edge by looking back from its own end, so the pattern
        # starts with the terms themselves (which the regex engine skips to quickly).
        terms = "|".join(rf"{re.escape(t)}(?<!{JOINS}.{{{len(t)}}})" for t in plain)
        alternatives.append(rf"(?:{terms})(?!{JOINS})")
    alternatives += map(re.escape, cjk)
    if not alternatives:
        return NOTHING, False
    rx = re.compile("|".join(alternatives))
    index_of = dict(lookup.terms) | {w: lookup.words.index(w) for w in cjk}
    # Lines found, by how many of the words each holds: (file, its text, where the line
    # starts, its number, the first match's column and length, each word's count).
    groups: dict[int, list[_Found]] = {}
    for seg, doc in files[: limits.MAX_FILES_READ]:
        lowered = view.text(seg, doc)
        if lowered is None:
            continue
        per_line: dict[int, _Found] = {}
        number, counted_to = 1, 0
        for m in rx.finditer(lowered):
            pos, term = m.start(), m.group()
            start = lowered.rfind("\n", 0, pos) + 1
            entry = per_line.get(start)
            if entry is None:
                number += lowered.count("\n", counted_to, start)
                counted_to = start
                entry = per_line[start] = (doc, lowered, start, number, pos - start, len(term), {})
            tf = entry[6]
            i = index_of[term]
            tf[i] = tf.get(i, 0) + 1
        for entry in per_line.values():
            groups.setdefault(len(entry[6]), []).append(entry)
    return _answer_related(view, groups, idf, n_words, k), capped


# A line found by the related tier, before it is scored (see related_lines).
_Found = tuple[Doc, str, int, int, int, int, dict[int, int]]


def _scored(found: list[_Found], idf: list[float], score: float) -> list[Line]:
    """Lines holding the same number of the words, by BM25 over their words, best first
    (ties in the order found: newest first, in line order)."""
    ranked: list[tuple[float, Line]] = []
    for doc, lowered, start, number, col, length, tf in found:
        line = line_at(lowered, start)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(_TOKEN.findall(line)) / BM25_AVG_TOKENS)
        bm25 = sum(idf[i] * f * (BM25_K1 + 1) / (f + norm) for i, f in tf.items())
        ranked.append((bm25, Line(doc, number, score, line, col, length, 0)))
    ranked.sort(key=lambda r: -r[0])
    return [ln for _, ln in ranked]


def _answer_related(
    view: View, groups: dict[int, list[_Found]], idf: list[float], n_words: int, k: int
) -> Answer:
    """The related tier's answer: the lines holding the most words first. Lines are
    scored group by group, only until the best k are known."""
    while True:
        lines: list[Line] = []
        for held in sorted(groups, reverse=True):
            lines += _scored(groups[held], idf, RELATED_SCORE * held / n_words)
            if fills(lines, k):
                break
        for rank, ln in enumerate(lines):
            ln.rank = rank
        top = pick(lines, k)
        originals = view.originals(top)
        # A file read earlier may be gone before the index has caught up: leave it out.
        gone = {key for key, text in originals.items() if text is None}
        if not gone:
            break
        groups = {n: [f for f in found if f[0].key not in gone] for n, found in groups.items()}
    per_conversation = Counter(f[0].conv for found in groups.values() for f in found)
    total = sum(len(found) for found in groups.values())
    return Answer(top, dict(per_conversation), total, originals)


# Files held alike, as lists of one segment's documents (no pair made per file yet).
_Chunks = list[tuple[SegmentCache, list[Doc]]]


def _most_promising(lookup: Lookup, idf: list[float], limit: int) -> list[tuple[SegmentCache, Doc]]:
    """The files worth reading, at most ``limit``: those holding the most of the words
    first, then by the words' summed idf, then newest.

    Files holding the same words tie, so each set of words is scored once, and only the
    last group that fits is ordered beyond what it takes.
    """
    by_words: dict[int, _Chunks] = {}
    for seg, docs, bits in lookup.held:
        mine: dict[int, list[Doc]] = {}
        for doc, held in zip(docs, bits, strict=True):
            mine.setdefault(held, []).append(doc)
        for held, found in mine.items():
            by_words.setdefault(held, []).append((seg, found))
    groups: dict[tuple[int, float], _Chunks] = {}
    for held, chunks in by_words.items():
        ws = [i for i in range(len(idf)) if held >> i & 1]
        groups.setdefault((len(ws), sum(idf[i] for i in ws)), []).extend(chunks)
    files: list[tuple[SegmentCache, Doc]] = []
    for score in sorted(groups, reverse=True):
        room = limit - len(files)
        if room <= 0:
            break
        chunks = groups[score]
        edge: tuple[str, str] | None = None
        if sum(len(docs) for _, docs in chunks) > room:
            edge = heapq.nlargest(room, (doc.conv for _, docs in chunks for doc in docs))[-1]
        group = [
            (seg, doc) for seg, docs in chunks for doc in docs if edge is None or doc.conv >= edge
        ]
        files.extend(newest_first(group)[:room])
    return files
