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
from itertools import repeat

import numpy as np
import numpy.typing as npt

from indexer.engine.base import BytesColumn

RUN_BYTES = 1 << 20  # texts read and counted in one go (one task)
# Letters from the most to the least common in English prose; a byte not listed (a
# digit, punctuation, part of a non-ASCII character) counts as rare, a space as commonest.
_COMMON_FIRST = b" etaoinsrhldcumfpgwybvkxjqz"
# Needles up to _MASK_MAX long, or up to _BYTES_CHECKED without a byte rarer than the
# _RARE_RANK commonest, are found by comparing every byte of the text with each of
# theirs; others from the places of their rarest byte (fewer places than bytes to
# compare), checked a byte at a time for _BYTES_CHECKED bytes, then whole.
_MASK_MAX = 4
_RARE_RANK = 12
_BYTES_CHECKED = 8


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
    if m == 0 or n == 0 or m > len(joined):
        return counts
    text = np.frombuffer(joined, dtype=np.uint8)
    ends = np.cumsum(lengths)
    rarest = max(_rank(c) for c in needle)
    if m <= _MASK_MAX or (rarest < _RARE_RANK and m <= _BYTES_CHECKED):
        # Where each byte of the needle follows the one before, summed per text.
        at = text == needle[0]
        for j in range(1, m):
            at[: len(text) - j] &= text[j:] == needle[j]
            at[len(text) - j :] = False
        for j in range(1, m):  # a match ends in the text it starts in
            cut = ends - j
            at[cut[cut >= ends - lengths]] = False
        held = lengths > 0
        counts[held] = np.add.reduceat(at.view(np.uint8), (ends - lengths)[held], dtype=np.uint32)
        if m > 1 and _overlaps(needle):
            _recount_overlaps(joined, ends, lengths, np.flatnonzero(at), needle, counts)
    else:
        places, owner = _places(joined, text, ends, needle)
        counts += np.bincount(owner, minlength=n)
        if _overlaps(needle):
            _recount_overlaps(joined, ends, lengths, places, needle, counts)
    return counts


def _places(
    joined: bytes, text: npt.NDArray[np.uint8], ends: npt.NDArray[np.int64], needle: bytes
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Where ``needle`` starts in the texts (``joined``, as ``text``), and in which text:
    found from the places of its rarest byte, then checked a byte at a time, rarest first,
    up to _BYTES_CHECKED bytes (a long needle: few places to check), then whole."""
    m = len(needle)
    order = sorted(range(m), key=lambda j: _rank(needle[j]), reverse=True)
    r = order[0]
    places = np.flatnonzero(text == needle[r]) - r
    places = places[(places >= 0) & (places <= len(text) - m)]
    for j in order[1:_BYTES_CHECKED]:
        if len(places):
            places = places[text[places + j] == needle[j]]
    if m > _BYTES_CHECKED and len(places):
        whole = list(map(joined.startswith, repeat(needle), places.tolist()))
        places = places[np.array(whole, dtype=bool)]
    owner = np.searchsorted(ends, places, side="right")
    inside = places + m <= ends[owner]  # a match ends in the text it starts in
    return places[inside], owner[inside]


def _recount_overlaps(
    joined: bytes,
    ends: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    places: npt.NDArray[np.intp],
    needle: bytes,
    counts: npt.NDArray[np.int64],
) -> None:
    """Where two of the ``places`` found are closer than the needle is long ('aa' in
    'aaa'), counts the text again as ``bytes.count`` does (matches that do not overlap)."""
    close = places[1:][np.diff(places) < len(needle)]
    for i in np.unique(np.searchsorted(ends, close, side="right")).tolist():
        counts[i] = joined.count(needle, int(ends[i] - lengths[i]), int(ends[i]))


def _rank(byte: int) -> int:
    """How rare a byte is in text: its place in _COMMON_FIRST; past it if not there."""
    found = _COMMON_FIRST.find(byte)
    return len(_COMMON_FIRST) if found < 0 else found


def _overlaps(needle: bytes) -> bool:
    """Whether two occurrences of ``needle`` can overlap (a proper prefix of it is also
    a suffix)."""
    return any(needle[:k] == needle[-k:] for k in range(1, len(needle)))
