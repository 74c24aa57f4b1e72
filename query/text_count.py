"""Counting a string in the lower-cased texts a segment keeps, at C speed, across threads.

A search whose postings would cost more than reading every text (a fragment such as
``e`` or ``to`` that most terms hold, words in most documents) counts in the texts
instead. The texts of a run of documents are read in one go (``BytesColumn.joined``)
and searched with numpy, which leaves the interpreter lock while it works, so runs are
counted on several cores at once. A count is ``bytes.count``'s: occurrences that do not
overlap, each inside one document.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from indexer.engine.base import BytesColumn

RUN_BYTES = 1 << 20  # texts read and counted in one go (one task)
# Letters from the most to the least common in English prose; a byte not listed (a
# digit, punctuation, part of a non-ASCII character) counts as rare, a space as commonest.
_COMMON_FIRST = b" etaoinsrhldcumfpgwybvkxjqz"


def counts_in_column(column: BytesColumn, docs: int, needle: bytes) -> npt.NDArray[np.int64]:
    """Occurrences of ``needle`` in the values of documents 0 .. ``docs`` - 1, read and
    counted a run of about RUN_BYTES at a time, the runs on every core."""
    sizes = np.asarray(column.sizes()[:docs], dtype=np.int64)
    if not docs:
        return np.zeros(0, dtype=np.int64)
    # A run ends with the document in which the running size passes a multiple of RUN_BYTES.
    ends = np.cumsum(sizes)
    marks = np.arange(RUN_BYTES, int(ends[-1]), RUN_BYTES, dtype=np.int64)
    stops = np.searchsorted(ends, marks, side="left") + 1
    runs = list(itertools.pairwise(sorted({0, docs, *stops.tolist()})))

    def count_run(run: tuple[int, int]) -> npt.NDArray[np.int64]:
        a, b = run
        return counts_in(column.joined(a, b), sizes[a:b], needle)

    if len(runs) == 1:
        return count_run(runs[0])
    # Threads for this count only (starting them costs far less than the count).
    with ThreadPoolExecutor(min(len(runs), os.cpu_count() or 1), "trove-count") as pool:
        return np.concatenate(list(pool.map(count_run, runs)))


def counts_in(
    joined: bytes, sizes: Sequence[int] | npt.NDArray[np.int64], needle: bytes
) -> npt.NDArray[np.int64]:
    """Per text, the occurrences of ``needle`` (not overlapping, as ``bytes.count``
    counts them) in texts given one after another in ``joined``, of ``sizes`` bytes."""
    lengths = np.asarray(sizes, dtype=np.int64)
    n, m = len(lengths), len(needle)
    counts = np.zeros(n, dtype=np.int64)
    if m == 0 or n == 0 or not joined:
        return counts
    text = np.frombuffer(joined, dtype=np.uint8)
    ends = np.cumsum(lengths)
    if m == 1:  # the bytes equal to it, summed per text
        held = lengths > 0
        counts[held] = np.add.reduceat(
            (text == needle[0]).view(np.uint8), (ends - lengths)[held], dtype=np.int64
        )
        return counts
    # Where the needle's rarest byte is, then which of those places hold the rest.
    rank = [_COMMON_FIRST.find(c) if c in _COMMON_FIRST else len(_COMMON_FIRST) for c in needle]
    r = rank.index(max(rank))
    places = np.flatnonzero(text == needle[r]) - r
    places = places[(places >= 0) & (places <= len(text) - m)]
    for j, byte in enumerate(needle):
        if j != r and len(places):
            places = places[text[places + j] == byte]
    owner = np.searchsorted(ends, places, side="right")
    owner = owner[places + m <= ends[owner]]  # a match ends in the text it starts in
    counts += np.bincount(owner, minlength=n)
    if _overlaps(needle):
        # Two matches may overlap ('aa' in 'aaa'): recount where there are several.
        for i in np.flatnonzero(counts > 1).tolist():
            counts[i] = joined.count(needle, int(ends[i] - lengths[i]), int(ends[i]))
    return counts


def _overlaps(needle: bytes) -> bool:
    """Whether two occurrences of ``needle`` can overlap (a proper prefix of it is also
    a suffix)."""
    return any(needle[:k] == needle[-k:] for k in range(1, len(needle)))
