"""The best reports of what a tier counted: most occurrences, then newest, then by path;
for the related tier, most of the query's words, then BM25, then newest."""

from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain, compress
from operator import itemgetter
from typing import Any, NamedTuple

from query.forgiving import FEW_WORDS
from query.reports import tiers
from query.reports.counting import ReportSegment


class Ranked(NamedTuple):
    """A document among the best: its key, its count of occurrences, where it is."""

    key: str
    occurrences: int
    segment: ReportSegment
    doc: int


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
    least = nth_highest(counted, n)
    if least is None:
        return []
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
        keys = segment.segment.bytes_column("sort_key")
        day_ranks = segment.day_ranks()
        for d in chain(above, compress(tied, map(edge.__le__, ranks))):
            key = keys.value(d).decode("utf-8")
            count = counts[d]
            chosen.append((-count, -day_ranks[d], key, Ranked(key, int(count), segment, d)))
    chosen.sort(key=itemgetter(0, 1, 2))  # a key is in one live document
    return [ranked for *_, ranked in chosen[:n]]


def best_related(
    found: list[tuple[ReportSegment, tiers.Related]], n: int, words: int
) -> list[Ranked]:
    """The n best of the related tier, by BM25 over stems, then newest, then by path; a
    query of FEW_WORDS content words (``words``) or fewer ranks the reports holding more
    of them first."""
    strict = words <= FEW_WORDS
    ranked: list[tuple[int, float, int, ReportSegment, tiers.Related, int]] = []
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
        ranked_ = Ranked(key, int(r.occurrences[d]), segment, d)
        chosen.append(((m, score, day, key), ranked_))
    chosen.sort(key=itemgetter(0))
    return [r for _, r in chosen[:n]]


def nth_highest(histogram: Counter[Any], n: int) -> Any:
    """The n-th highest of the values counted (None if there are none)."""
    seen = 0
    value = None
    for value in sorted(histogram, reverse=True):
        seen += histogram[value]
        if seen >= n:
            break
    return value
