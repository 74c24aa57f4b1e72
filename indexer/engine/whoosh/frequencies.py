"""A term's postings read into two arrays (document numbers, frequencies) from Whoosh
2.7.4's postings file: what a search that scores every document holding a word needs,
without the object per posting that ``WhooshSegment.blocks`` makes.

A posting list is the header magic, then blocks: each its length (4 bytes, big-endian;
negative for the last), a pickled info tuple (count, last document, ...) and its pickled
data (ids, weights, values). The ids are differences, the first from 0, so a block's
document numbers are the running sum of its ids; the weights are None when all are 1, one
float when all are equal, else an array (TroveCodec) or a tuple (blocks written before
it). The values (a posting's NextTokens) are unpickled with the rest and not used.

Decoding costs about 8 us a block of 128 postings, so a common word (most reports hold
"failed") costs milliseconds each time a search asks for it: ``KeptFrequencies`` keeps the
arrays of a segment's terms of many postings, the most recently asked for first, within
a budget of postings.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable
from io import BytesIO
from pickle import Unpickler, loads
from typing import Any

import numpy as np

from indexer.engine.base import Frequencies

# A segment keeps the arrays of terms of at least KEPT_FROM postings, at most KEPT_MAX
# postings in all (8 bytes each: 4 MB a segment).
KEPT_FROM = 2048
KEPT_MAX = 1 << 19

_IDS = "I"  # as TroveCodec writes them: 4-byte unsigned differences
_WEIGHTS = "f"  # as TroveCodec writes them; a frequency below 2**24 is exact in it


def read_frequencies(data: bytes, magic: bytes) -> Frequencies:
    """The document numbers (ascending) and frequencies of one term's posting list."""
    if data[:4] != magic:
        raise ValueError("unexpected postings: not of Whoosh's W3 codec")
    ids = array(_IDS)
    weights: array[float] = array(_WEIGHTS)
    counts: list[int] = []
    stream = BytesIO(data)
    pos = 4
    while True:
        size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
        stream.seek(pos + 4)
        count, _high, _maxweight, compressed, _, _ = Unpickler(stream).load()
        end = pos + 4 + abs(size)
        block = data[stream.tell() : end]
        block_ids, block_weights, _values = loads(zlib.decompress(block) if compressed else block)
        _extend(ids, block_ids)
        _extend_weights(weights, block_weights, count)
        counts.append(count)
        if size < 0 or end >= len(data):
            break
        pos = end
    return _running_sums(ids, counts), np.frombuffer(weights, dtype=np.float32).astype(np.float64)


def inlined_frequencies(ids: Any, weights: Any) -> Frequencies:
    """The arrays of postings kept in a term's info (Whoosh inlines a term's few
    postings there): absolute document numbers, weights as in a block."""
    kept: array[float] = array(_WEIGHTS)
    _extend_weights(kept, weights, len(ids))
    return np.array(ids, dtype=np.int64), np.frombuffer(kept, dtype=np.float32).astype(np.float64)


def _extend(into: array[int], ids: Any) -> None:
    if isinstance(ids, array) and ids.typecode == _IDS:
        into.extend(ids)  # one copy
    else:
        into.extend(map(int, ids))


def _extend_weights(into: array[float], weights: Any, count: int) -> None:
    if weights is None or isinstance(weights, float):
        into.extend(array(_WEIGHTS, [weights or 1.0]) * count)
    elif isinstance(weights, array) and weights.typecode == _WEIGHTS:
        into.extend(weights)  # one copy
    else:
        into.extend(map(float, weights))


def _running_sums(ids: array[int], counts: list[int]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each block's differences summed from its start: the blocks' document numbers."""
    sums = np.cumsum(np.frombuffer(ids, dtype=np.uint32).astype(np.int64))
    if len(counts) == 1:
        return sums
    ends = np.cumsum(counts)
    before = np.concatenate(([0], sums[ends[:-1] - 1]))  # the sum at each block's start
    return sums - np.repeat(before, counts)


class KeptFrequencies:
    """One segment's arrays of its terms of many postings (at least ``kept_from``),
    those asked for last, ``kept_max`` postings in all, kept compact (4-byte numbers);
    each caller gets arrays of its own."""

    def __init__(self, kept_from: int | None = None, kept_max: int | None = None) -> None:
        self.kept_from = KEPT_FROM if kept_from is None else kept_from
        self.kept_max = KEPT_MAX if kept_max is None else kept_max
        self._kept: OrderedDict[tuple[str, int], tuple[Any, Any]] = OrderedDict()
        self._postings = 0
        self._lock = threading.Lock()

    def get(
        self, field: str, term: int, doc_count: int, read: Callable[[], Frequencies]
    ) -> Frequencies:
        """The arrays of the term (``doc_count``: how many postings it has), kept or
        ``read()``."""
        if doc_count < self.kept_from or doc_count > self.kept_max:
            return read()
        key = (field, term)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        if found is None:
            ids, weights = read()
            found = (ids.astype(np.uint32), weights.astype(np.float32))
            with self._lock:
                if key not in self._kept:
                    self._kept[key] = found
                    self._postings += len(ids)
                while self._postings > self.kept_max:
                    _, (gone, _) = self._kept.popitem(last=False)
                    self._postings -= len(gone)
        return found[0].astype(np.int64), found[1].astype(np.float64)
