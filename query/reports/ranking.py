"""The best reports of what a tier counted: most occurrences, then newest, then by path;
for the related tier, most of the query's words, then BM25, then newest."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from itertools import accumulate, chain, compress
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from indexer.errors import DamagedIndex
from query.forgiving import FEW_WORDS
from query.reports import tiers
from query.reports.counting import ReportSegment


class Ranked(NamedTuple):
    """A document among the best: its key, its count of occurrences, where it is."""

    key: str
    occurrences: int
    segment: ReportSegment
    doc: int


def report_key(segment: ReportSegment, d: int) -> str:
    """Document ``d``'s key (command/report name), from the segment's column of them;
    DamagedIndex if it is not UTF-8 (a damaged segment: the search rebuilds the index)."""
    value = segment.segment.bytes_column("sort_key").value(d)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedIndex(f"{segment.segment.id}: the key of document {d} is not UTF-8") from exc


def best(found: list[tuple[ReportSegment, dict[int, float]]], n: int) -> list[Ranked]:
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
    found_least = nth_highest(counted, n)
    if found_least is None:
        return []
    # A float: its comparisons take ints too (a count read from a block of compact
    # weights is one), where an int's refuse floats.
    least = float(found_least)
    # Those with more (fewer than n), and of those with the least count, those on the
    # n-th newest day or newer.
    need = n - sum(c for count, c in counted.items() if count > least)
    near: list[tuple[ReportSegment, dict[int, float], list[int], list[int], list[int]]] = []
    days: Counter[int] = Counter()
    for segment, counts in found:
        docs = list(compress(counts, map(least.__le__, counts.values())))
        at_least = list(map(counts.__getitem__, docs))
        above = list(compress(docs, map(least.__lt__, at_least)))
        tied = list(compress(docs, map(least.__eq__, at_least)))
        ranks = list(map(segment.day_ranks().__getitem__, tied))
        days.update(ranks)
        near.append((segment, counts, above, tied, ranks))
    edge = nth_highest(days, need)
    chosen: list[tuple[float, int, str, Ranked]] = []
    for segment, counts, above, tied, ranks in near:
        day_ranks = segment.day_ranks()
        for d in chain(above, compress(tied, map(edge.__le__, ranks))):
            key = report_key(segment, d)
            count = counts[d]
            chosen.append((-count, -day_ranks[d], key, Ranked(key, int(count), segment, d)))
    chosen.sort(key=itemgetter(0, 1, 2))  # a key is in one live document
    return [ranked for *_, ranked in chosen[:n]]


def best_related(
    found: list[tuple[ReportSegment, tiers.Related]], n: int, words: int
) -> list[Ranked]:
    """The n best of the related tier, by BM25 over stems, then newest, then by path; a
    query of FEW_WORDS content words (``words``) or fewer ranks the reports holding more
    of them first.

    Only the reports that can be among them are looked at closely: those at least as
    good as the n-th best by words held and BM25 alone (``at_least_nth``); their days
    and keys settle the order."""
    strict = words <= FEW_WORDS
    scores = np.concatenate([r.score for _, r in found])
    held = np.concatenate([r.matched for _, r in found])
    starts = list(accumulate((len(r.docs) for _, r in found), initial=0))
    chosen = []
    for i in at_least_nth(held if strict else np.zeros_like(held), scores, n).tolist():
        at = bisect_right(starts, i) - 1  # the segment of the i-th
        segment, r = found[at]
        j = i - starts[at]
        d = int(r.docs[j])
        key = report_key(segment, d)
        order = (-int(held[i]) if strict else 0, -float(scores[i]), -segment.day_ranks()[d], key)
        chosen.append((order, Ranked(key, int(r.occurrences[j]), segment, d)))
    chosen.sort(key=itemgetter(0))  # a key is in one live document
    return [r for _, r in chosen[:n]]


def at_least_nth(
    levels: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], n: int
) -> npt.NDArray[np.int64]:
    """The positions of the items at least as high as the n-th highest by level, then
    score (ties with it included; all if there are n or fewer)."""
    if len(scores) <= n:
        return np.arange(len(scores))
    counts = np.bincount(levels)
    above = 0
    level = len(counts) - 1
    while above + counts[level] < n:  # the level of the n-th highest
        above += int(counts[level])
        level -= 1
    at = np.flatnonzero(levels == level)
    need = n - above
    nth = np.partition(scores[at], len(at) - need)[len(at) - need]
    return np.concatenate((np.flatnonzero(levels > level), at[scores[at] >= nth]))


def nth_highest(histogram: Counter[Any], n: int) -> Any:
    """The n-th highest of the values counted (None if there are none)."""
    seen = 0
    value = None
    for value in sorted(histogram, reverse=True):
        seen += histogram[value]
        if seen >= n:
            break
    return value
