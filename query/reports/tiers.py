"""search_reports' forgiving tiers below `exact` and `words`: `related` and `fuzzy`.

`related`: the reports holding some of the query's content words or words of the same
stem (a CJK run counts by its pairs of characters), ranked by BM25 over the stems (k1
1.2, b 0.75; a report's length is the size of its lower-cased text), then newest; a
query of few words ranks the reports holding more of them first. `fuzzy`: the words no
report holds, neither whole nor by stem, and the closest indexed words to each
(query/forgiving.py).

The related tier is computed a segment at a time in arrays: each word's postings as the
engine's arrays (``Segment.frequencies``; a common word's are kept), the reports' sizes
per segment (``report_sizes``, kept while the segment lives), and the words' BM25 added
up per report in the order of the query's words, so that every score is the one adding
them a report at a time gives (tests/test_reports_related.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from indexer.engine.base import Frequencies, Segment
from indexer.engine.lexicon import Lexicon
from query.forgiving import MAX_CANDIDATES, closest, family, is_cjk
from query.indexes import PerSegment
from query.neighbours import Neighbours, closest_near, first_holder, of_lexicons

K1 = 1.2
B = 0.75


class TierSegment(Protocol):
    """What the tiers need of a segment of the reports index (query/reports/counting.py's)."""

    segment: Segment
    deleted: frozenset[int]

    def lexicon(self, fieldname: str = "content") -> Lexicon: ...

    def command_docs(self, command: str) -> list[int]: ...

    def occurrences(
        self, lowered: str, command: str | None, top: int | None = None
    ) -> dict[int, float]: ...

    def postings(
        self, k: int, within: Sequence[int] | None
    ) -> Iterator[tuple[Iterator[int], Iterable[float], Any]]: ...


class Families:
    """Each query word's stem family in each segment (term numbers), made once a search:
    the unknown words, the frequencies and the excerpts all ask for it."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, str], list[int]] = {}

    def of(self, s: TierSegment, word: str) -> list[int]:
        key = (id(s), word)  # the segments live as long as the search
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = family(s.lexicon(), word)
        return found


@dataclass(frozen=True)
class Stats:
    """What BM25 needs of the whole index: live reports and their mean text size."""

    reports: int
    mean_size: float


@dataclass(frozen=True)
class ReportSizes:
    """Of one segment: which documents are reports (kind "doc"; live when this was made)
    and each document's text size in bytes, what BM25 divides by; kept while the segment
    lives (``report_sizes``)."""

    reports: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.float64]


def report_sizes(memo: dict[str, Any], segments: Sequence[TierSegment]) -> list[ReportSizes]:
    """Each segment's ReportSizes, made on first use and kept in ``memo`` (a
    QueryContext's) while the segment lives: a new snapshot reads only its new segments."""
    kept: PerSegment[ReportSizes] = memo.setdefault("reports.sizes", PerSegment())
    found = [kept.get(s.segment.id, partial(_report_sizes, s)) for s in segments]
    kept.keep_only(s.segment.id for s in segments)
    return found


def _report_sizes(s: TierSegment) -> ReportSizes:
    reports = np.array(sorted(s.segment.docs_with("kind", ["doc"])), dtype=np.int64)
    sizes = np.array(s.segment.bytes_column("text").sizes(), dtype=np.float64)
    return ReportSizes(reports, sizes)


def stats(segments: Sequence[TierSegment], sizes: Sequence[ReportSizes]) -> Stats:
    """The live reports of these segments (``sizes``: theirs, in their order)."""
    total = 0
    count = 0
    for s, of in zip(segments, sizes, strict=True):
        live = _without(of.reports, s.deleted)
        total += int(of.sizes[live].sum())  # whole numbers: the sum is exact
        count += len(live)
    return Stats(count, total / count if count else 1.0)


@dataclass
class Related:
    """Of one segment: the reports holding some of the query's words or their stems
    (ascending), and for each how many of the words it holds, its BM25 and its
    occurrences of the words."""

    docs: npt.NDArray[np.int64]
    matched: npt.NDArray[np.int64]
    score: npt.NDArray[np.float64]
    occurrences: npt.NDArray[np.float64]


_NONE: Frequencies = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def word_frequencies(
    s: TierSegment, word: str, command: str | None, families: Families
) -> Frequencies:
    """The live reports of one segment holding the word or its stem family (ascending),
    and the occurrences of them in each."""
    if is_cjk(word):
        counts = s.occurrences(word, command)
        held = sorted(counts)
        return np.array(held, dtype=np.int64), np.array(
            list(map(counts.__getitem__, held)), dtype=np.float64
        )
    within = None if command is None else s.command_docs(command)
    if within == []:
        return _NONE
    parts = [s.segment.frequencies("content", k) for k in families.of(s, word)]
    if not parts:
        return _NONE
    docs, tf = parts[0]
    if len(parts) > 1:  # a report may hold several words of the family: add them up
        n = s.segment.doc_count_all
        all_docs = np.concatenate([d for d, _ in parts])
        totals = np.bincount(all_docs, weights=np.concatenate([f for _, f in parts]), minlength=n)
        docs = np.flatnonzero(np.bincount(all_docs, minlength=n)).astype(np.int64, copy=False)
        tf = totals[docs].astype(np.float64, copy=False)
    keep = _live(docs, s.deleted)
    if within is not None:
        keep &= np.isin(docs, np.array(within, dtype=np.int64))
    return (docs, tf) if keep.all() else (docs[keep], tf[keep])


def related(
    segments: Sequence[TierSegment],
    sizes: Sequence[ReportSizes],
    qwords: list[str],
    command: str | None,
    st: Stats,
    families: Families,
    weights: Mapping[str, int] | None = None,
) -> list[Related]:
    """The related tier's reports of each segment (in the order of ``segments``; ``sizes``
    theirs); a word's BM25 counts ``weights[word]`` times (how often the query says it).
    A report's BM25 adds up its words' in the order of ``qwords``."""
    per_word = [[word_frequencies(s, w, command, families) for s in segments] for w in qwords]
    times = [1 if weights is None else weights.get(w, 1) for w in qwords]
    dfs = [sum(len(docs) for docs, _ in freqs) for freqs in per_word]
    base, per_byte = K1 * (1 - B), K1 * B / st.mean_size
    out = []
    for i, s in enumerate(segments):
        n = s.segment.doc_count_all
        score = np.zeros(n, dtype=np.float64)
        occurrences = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=np.int64)
        for freqs, df, times_said in zip(per_word, dfs, times, strict=True):
            docs, tf = freqs[i]
            if not len(docs):
                continue
            gain = times_said * math.log(1 + (st.reports - df + 0.5) / (df + 0.5)) * (K1 + 1)
            norms = base + per_byte * sizes[i].sizes[docs]
            score[docs] += gain * tf / (tf + norms)
            occurrences[docs] += tf
            matched[docs] += 1
        held = np.flatnonzero(matched)
        out.append(Related(held, matched[held], score[held], occurrences[held]))
    return out


def _without(docs: npt.NDArray[np.int64], deleted: frozenset[int]) -> npt.NDArray[np.int64]:
    return docs[_live(docs, deleted)] if deleted else docs


def _live(docs: npt.NDArray[np.int64], deleted: frozenset[int]) -> npt.NDArray[np.bool_]:
    """Per document of ``docs`` (ascending): whether it is not among the deleted (each
    found by bisection: there are few)."""
    keep = np.ones(len(docs), dtype=bool)
    if deleted and len(docs):
        gone = np.array(sorted(deleted), dtype=np.int64)
        at = np.minimum(np.searchsorted(docs, gone), len(docs) - 1)
        keep[at[docs[at] == gone]] = False
    return keep


def unknown_words(
    segments: Sequence[TierSegment], qwords: list[str], families: Families
) -> list[str]:
    """The words no report holds, neither whole nor by stem (CJK pairs: not held)."""
    unknown = []
    for w in qwords:
        if is_cjk(w):
            held = any(s.occurrences(w, None, 1) for s in segments)
        else:
            held = any(families.of(s, w) for s in segments)
        if not held:
            unknown.append(w)
    return unknown


def words_by_length(segments: Sequence[TierSegment]) -> dict[int, list[str]]:
    """The index's words of letters, each once, by length: what typos are compared with."""
    by_length: dict[int, dict[str, None]] = {}
    for s in segments:
        for term in s.lexicon().terms():
            if term.isalpha():
                by_length.setdefault(len(term), {})[term] = None
    return {n: list(terms) for n, terms in by_length.items()}


def neighbours(memo: dict[str, Any], segments: Sequence[TierSegment]) -> list[Neighbours]:
    """Each segment's Neighbours (query/neighbours.py), made on first use and kept in
    ``memo`` (a QueryContext's) while the segment lives."""
    kept: PerSegment[Neighbours] = memo.setdefault("reports.neighbours", PerSegment())
    return of_lexicons(kept, [(s.segment.id, s.lexicon()) for s in segments])


def corrections(
    by_length: dict[int, list[str]],
    unknown: list[str],
    near: Sequence[Neighbours] | None = None,
) -> dict[str, list[str]]:
    """For each unknown word, the closest indexed words (best first; none for some): by
    scanning ``by_length``, or the same words from ``near``, the Neighbours of the
    segments ``by_length`` was made from, in their order (query/neighbours.py)."""
    if near is None:
        return {w: closest(w, _window(by_length, w)) for w in unknown}
    first = first_holder(near)

    def order(term: str) -> tuple[int, int, str]:  # the order of ``_window``
        return len(term), first(term), term

    return {w: closest_near(w, near, order, partial(_last_kept, by_length, w)) for w in unknown}


def _window(by_length: dict[int, list[str]], word: str) -> Iterator[str]:
    """The words a typo is compared with: those of 2 letters fewer to 2 more."""
    n = len(word)
    return chain.from_iterable(by_length.get(m, ()) for m in range(n - 2, n + 3))


def _last_kept(by_length: dict[int, list[str]], word: str) -> str | None:
    """The last word of ``_window`` that ``closest`` keeps in its pool, which ends at
    MAX_CANDIDATES words other than the word itself (None: it keeps them all)."""
    left = MAX_CANDIDATES
    n = len(word)
    for m in range(n - 2, n + 3):
        terms = by_length.get(m, [])
        skip = terms.index(word) if m == n and word in terms else len(terms)
        if left <= len(terms) - (skip < len(terms)):
            return terms[left - 1 if left - 1 < skip else left]
        left -= len(terms) - (skip < len(terms))
    return None
