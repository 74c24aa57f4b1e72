"""A term's postings read into two arrays (document numbers, frequencies) from Whoosh
2.7.4's postings file: what a search that scores every document holding a word needs,
without the object per posting that ``WhooshSegment.blocks`` makes.

A posting list is the header magic, then blocks: each its length (4 bytes, big-endian;
negative for the last), a pickled info tuple (count, last document, ...) and its pickled
data (ids, weights, values). The ids are differences, the first from 0, so a block's
document numbers are the running sum of its ids; the weights are None when all are 1, one
float when all are equal, else an array (TroveCodec) or a tuple (blocks written before
it). TroveCodec's arrays are of the smallest type that holds them: ids of 1, 2 or 4
bytes, weights counts of 1 or 2 bytes or else 4-byte floats (4 bytes each before schema
9). The values (a posting's NextTokens) are not used.

Blocks as TroveCodec pickles them are read by their byte layout, without pickle's
machinery: 37 ns a posting against 61 through pickle (which reads any other form) at
schema 8; at schema 9, whose blocks pickle in fewer, smaller objects, 38.5 against 40.
Still, a common word (most reports hold "failed") costs milliseconds each time a search
asks for it: ``KeptFrequencies`` keeps the arrays of a segment's terms of many postings,
the most recently asked for first, within a budget of postings.
"""

from __future__ import annotations

import re
import struct
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from io import BytesIO
from pickle import Unpickler, loads
from typing import Any

import numpy as np

from indexer.engine.base import Frequencies
from indexer.engine.whoosh.codec import EXTENSIONS

# A segment keeps the arrays of terms of at least KEPT_FROM postings, at most KEPT_MAX
# postings in all (8 bytes each: 4 MB a segment).
KEPT_FROM = 2048
KEPT_MAX = 1 << 19

_DOUBLE = struct.Struct(">d")  # pickle's BINFLOAT
# Arrays as TroveCodec pickles them, by their typecode: the array module's code for the
# machine format (little-endian) and the numpy type of their bytes.
_FORMS = {b"B": (0, np.uint8), b"H": (2, np.uint16), b"I": (6, np.uint32), b"f": (14, np.float32)}


def read_frequencies(data: bytes, magic: bytes) -> Frequencies:
    """The document numbers (ascending) and frequencies of one term's posting list."""
    if data[:4] != magic:
        raise ValueError("unexpected postings: not of Whoosh's W3 codec")
    ids: list[np.ndarray[Any, Any]] = []
    weights: list[np.ndarray[Any, Any]] = []
    counts: list[int] = []
    stream = BytesIO(data)
    pos = 4
    while True:
        size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
        end = pos + 4 + abs(size)
        info = _block_info(data, pos + 4)
        if info is None:  # not as TroveCodec writes it: pickle reads it
            stream.seek(pos + 4)
            count, _high, _maxweight, compressed, _, _ = Unpickler(stream).load()
            start = stream.tell()
        else:
            count, compressed, start = info
        raw, at = (zlib.decompress(data[start:end]), 0) if compressed else (data, start)
        if not _block_arrays(raw, at, count, ids, weights):
            block_ids, block_weights, _values = loads(raw[at:end] if raw is data else raw)
            ids.append(np.asarray(block_ids, dtype=np.uint32))
            weights.append(_weights_of(block_weights, count))
        counts.append(count)
        if size < 0 or end >= len(data):
            break
        pos = end
    return _running_sums(np.concatenate(ids), counts), np.concatenate(weights).astype(np.float64)


# A block's info and data, as TroveCodec pickles them, read without the pickle machinery
# (which costs most of a block's decoding): the info a protocol 2 tuple of ints and a
# float, the data (protocol 5) the ids' array, then the weights (None, one float or an
# array), then the values, never read here. Anything else is left to pickle.
# (count, last id, max weight, compressed, 0, 0): a count below 256 (a block holds 128),
# the max weight an int or a float.
_INFO = re.compile(rb"\x80\x02\(K(.)(?:K.|M..|J....)(?:G.{8}|K.|M..|J....)K(.)K.K.tq.\.", re.DOTALL)
# The array reconstructor and the array type, each as its extension code (codec.py).
_RECONSTRUCT = re.escape(
    bytes([0x82, EXTENSIONS["array", "_array_reconstructor"], ord("("), 0x82])
    + bytes([EXTENSIONS["array", "array"]])
)
# The ids' array: its typecode (memoized first) and machine format code.
_IDS_HEAD = re.compile(_RECONSTRUCT + rb"\x8c\x01([BHI])\x94K(.)", re.DOTALL)
_AFTER_ARRAY = b"\x94t\x94R\x94"
# The weights' array: its typecode the ids' (memo 0) or its own, its machine format code.
_WEIGHTS_HEAD = re.compile(_RECONSTRUCT + rb"(?:h\x00|\x8c\x01([BHf])\x94)K(.)", re.DOTALL)
_FAST = sys.byteorder == "little"


def _block_info(data: bytes, at: int) -> tuple[int, bool, int] | None:
    """A block info's count, whether its data is compressed, and where its data starts;
    None if it is not in the form read here."""
    found = _INFO.match(data, at)
    if found is None:
        return None
    return found[1][0], found[2] != b"\x00", found.end()


def _block_arrays(
    raw: bytes,
    at: int,
    count: int,
    ids: list[np.ndarray[Any, Any]],
    weights: list[np.ndarray[Any, Any]],
) -> bool:
    """Adds the ids and weights of the block data at ``at`` to ``ids`` and ``weights``;
    False (nothing added) if it is not in the form read here."""
    if not _FAST or raw[at : at + 3] != b"\x80\x05\x95":
        return False
    head = _IDS_HEAD.match(raw, at + 11)
    ids_form = None if head is None else _form(head[1], head[2])
    if head is None or ids_form is None:
        return False
    ids_at, n = _bytes_at(raw, head.end())
    p = ids_at + n
    if n != ids_form.itemsize * count or raw[p : p + 5] != _AFTER_ARRAY:
        return False
    p += 5
    op = raw[p]
    if op == 0x4E:  # NONE: every weight 1
        block_weights = _weights_of(None, count)
    elif op == 0x47:  # BINFLOAT: every weight the same
        block_weights = _weights_of(_DOUBLE.unpack_from(raw, p + 1)[0], count)
    elif found := _WEIGHTS_HEAD.match(raw, p):
        form = _form(found[1] or head[1], found[2])
        if form is None:
            return False
        weights_at, m = _bytes_at(raw, found.end())
        if m != form.itemsize * count or weights_at + m > len(raw):  # cut short: pickle says how
            return False
        block_weights = np.frombuffer(raw, dtype=form, count=count, offset=weights_at)
    else:
        return False
    ids.append(np.frombuffer(raw, dtype=ids_form, count=count, offset=ids_at))
    weights.append(block_weights)
    return True


def _form(typecode: bytes, code: bytes) -> np.dtype[Any] | None:
    """The numpy type of an array's pickled bytes, if read here."""
    found = _FORMS.get(typecode)
    return np.dtype(found[1]) if found is not None and found[0] == code[0] else None


def _bytes_at(raw: bytes, p: int) -> tuple[int, int]:
    """Where the bytes pickled at ``p`` start, and how many (-1: not bytes)."""
    if raw[p] == 0x42:  # BINBYTES: a 4-byte length
        return p + 5, int.from_bytes(raw[p + 1 : p + 5], "little")
    if raw[p] == 0x43:  # SHORT_BINBYTES: a 1-byte length
        return p + 2, raw[p + 1]
    return p, -1


def inlined_frequencies(ids: Any, weights: Any) -> Frequencies:
    """The arrays of postings kept in a term's info (Whoosh inlines a term's few
    postings there): absolute document numbers, weights as in a block."""
    return np.array(ids, dtype=np.int64), _weights_of(weights, len(ids)).astype(np.float64)


def _weights_of(weights: Any, count: int) -> np.ndarray[Any, Any]:
    """A block's weights (None: all 1; one float: all equal; else one each), as float32."""
    if weights is None or isinstance(weights, float):
        return np.full(count, weights or 1.0, dtype=np.float32)
    return np.asarray(weights, dtype=np.float32)


def _running_sums(
    ids: np.ndarray[Any, Any], counts: list[int]
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each block's differences summed from its start: the blocks' document numbers."""
    sums = np.cumsum(ids, dtype=np.int64)
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
