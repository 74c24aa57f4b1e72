"""The best documents of a segment for a query, counted in order of a bound on how often
each holds it (more occurrences none can have): the highest bound first, the newest first
among equal ones, until no document left can be among the best. Both ways of finding
where a query of several tokens can be give such bounds: the postings of its tokens
(query/reports/counting.py) and the runs of its tokens (query/reports/phrases.py)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence


def count_best(
    groups: Iterable[tuple[float, Iterable[int]]],
    ranks: Sequence[int],
    count: Callable[[int], int | None],
    top: int,
) -> dict[int, float] | None:
    """{docnum: occurrences} of the ``top`` best documents (at least, and only documents
    that hold the query), by most occurrences, then highest rank (a date). ``groups``:
    (bound, documents) each, by bound, highest first; ``count(d)``: document ``d``'s
    occurrences, or None to give up (then None)."""
    counts: dict[int, float] = {}
    best: list[tuple[float, int]] = []  # a heap of the top (count, rank) so far
    for most, docs in groups:
        if len(best) == top and most < best[0][0]:
            break  # these, and all with a lower bound, rank below
        for d in sorted(docs, key=ranks.__getitem__, reverse=True):
            if len(best) == top and (most, ranks[d]) < best[0]:
                break
            n = count(d)
            if n is None:
                return None
            if n:
                counts[d] = float(n)
                heapq.heappush(best, (n, ranks[d]))
                if len(best) > top:
                    heapq.heappop(best)
    return counts
