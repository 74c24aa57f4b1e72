"""The best reports for a query of several tokens, from a segment's token sequences
(indexer/engine/sequences.py).

Where the query can occur, its tokens are consecutive tokens of the text, each one of the
terms the query's token can be: each run of such tokens in a report (``runs``) is at most
one occurrence, so a report holds the query at most as often as it holds such runs (less
where the text between the tokens differs from the query's, or occurrences overlap: 'the
the the' holds two runs of 'the the' and one occurrence as ``bytes.count`` counts). The
reports are counted in their texts in order of that bound, then of date, until no report
left can be among the best: the answer is the one counting every text gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from indexer.engine.base import BytesColumn, Segment
from indexer.engine.sequences import Codes, TokenSequences
from query.reports.bounds import count_best


def code_sets(
    segment: Segment, sequences: TokenSequences, choices: list[list[int]]
) -> list[Codes] | None:
    """Per token of the query, the codes of the terms it can be (``choices``: terms of
    the content field, see ReportSegment._choices); None if the table lacks a term."""
    lexicon = segment.lexicon("content")
    sets = []
    for ks in choices:
        codes = sequences.codes_of(lexicon, ks)
        if codes is None:
            return None
        sets.append(codes)
    return sets


def best_by_runs(
    segment: Segment,
    sequences: TokenSequences,
    sets: list[Codes],
    needle: bytes,
    within: Sequence[int] | None,
    top: int,
    budget: int,
) -> dict[int, float] | None:
    """{docnum: occurrences of ``needle``} of at least the ``top`` best live documents
    of ``within`` (None: all) that hold it, most occurrences then newest: ``sets`` are
    the codes each of its tokens can be (``code_sets``). None if the codes can no longer
    be read (the table's file cut short since it was checked), or more than ``budget``
    texts would have to be counted."""
    try:
        bounds = sequences.runs(sets)
    except OSError:
        return None
    if within is not None:
        outside = np.ones(len(bounds), dtype=bool)
        outside[np.asarray(within, dtype=np.intp)] = False
        bounds[outside] = 0
    if segment.deleted:
        bounds[np.fromiter(segment.deleted, dtype=np.intp, count=len(segment.deleted))] = 0
    return _settle(
        bounds, segment.int_column("day"), segment.bytes_column("text"), needle, top, budget
    )


def _settle(
    bounds: npt.NDArray[np.int64],
    ranks: Sequence[int],
    texts: BytesColumn,
    needle: bytes,
    top: int,
    budget: int,
) -> dict[int, float] | None:
    """The counts of the ``top`` best documents (at least), counted in order of their
    ``bounds``; None past ``budget`` texts."""
    held = np.bincount(bounds)  # per bound, how many documents have it
    groups = (
        (most, np.flatnonzero(bounds == most).tolist())
        for most in (np.flatnonzero(held[1:])[::-1] + 1).tolist()
    )
    left = budget

    def count(d: int) -> int | None:
        nonlocal left
        left -= 1
        return None if left < 0 else texts.value(d).count(needle)

    return count_best(groups, ranks, count, top)
