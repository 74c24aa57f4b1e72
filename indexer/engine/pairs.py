"""Per segment: each pair of CJK characters its documents hold side by side, the
documents holding it and how often each does.

CJK text is indexed a character a token (indexer/sources/base.py), so a pair of CJK
characters is a query of two tokens: its postings say only where the first is followed
by the second token (a space between them is not kept), and every document they leave
has its text counted. The related tier weighs a run of CJK characters by its pairs
(query/forgiving.py), each counted in every report: at a million reports, a question
holding a run of a dozen characters read 230,000 texts (1.4 s). So, as a segment is
written, each document's lower-cased text is counted for every pair of CJK characters
next to each other in it, as ``bytes.count`` counts the pair in the text (a doubled
character does not overlap itself: three in a row hold it once), and the segment keeps,
per pair, the documents holding it (ascending) and their counts. A search counting a
query of exactly two CJK characters reads them there.

The table is written beside the segment's files when the segment is, and is read whole
(a few MB at a million reports); one that is missing, damaged or of another segment is
not used (the search counts as it did before).
"""

from __future__ import annotations

import re
import struct
import zlib
from array import array
from collections import Counter

import numpy as np
import numpy.typing as npt

from indexer.cjk import CJK_CHARS

_RUN = re.compile(rf"[{CJK_CHARS}]{{2,}}")
_PAIR = re.compile(rf"[{CJK_CHARS}]{{2}}")
# Every CJK character is below U+10000 and three bytes in UTF-8, led by a byte of at
# least 0xE3: a text without one holds none (deleting every other byte tells, ~0.7 ns a
# byte, where ``max`` took 10).
_NOT_LEAD = bytes(range(0xE3))
_MAGIC = b"TROVE-PAIRS\x01"
_HEADER = struct.Struct("<12sIIQ")  # magic, documents, pairs, postings


def pair_key(pair: str) -> int | None:
    """The table's key of a pair of CJK characters; None for any other string."""
    if not _PAIR.fullmatch(pair):
        return None
    return ord(pair[0]) << 16 | ord(pair[1])


def pairs_in(text: bytes) -> Counter[int]:
    """{pair key: occurrences} of every pair of CJK characters side by side in ``text``
    (UTF-8), each counted as ``text.count`` counts it."""
    if not text.translate(None, _NOT_LEAD):
        return Counter()
    runs = _RUN.findall(text.decode("utf-8", "replace"))
    found = Counter(r[i : i + 2] for r in runs for i in range(len(r) - 1))
    for pair in found:
        if pair[0] == pair[1]:  # a doubled character: occurrences do not overlap
            found[pair] = sum(r.count(pair) for r in runs)
    return Counter({ord(p[0]) << 16 | ord(p[1]): n for p, n in found.items()})


class CjkPairs:
    """A segment's table: ``holders(pair)`` for each pair of CJK characters."""

    def __init__(
        self,
        keys: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.uint64],
        docs: npt.NDArray[np.uint32],
        counts: npt.NDArray[np.uint32],
    ) -> None:
        self._keys = keys
        self._offsets = offsets
        self._docs = docs
        self._counts = counts

    def holders(self, pair: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """The documents holding ``pair`` (ascending) and how often each does; None if
        ``pair`` is not two CJK characters."""
        key = pair_key(pair)
        if key is None:
            return None
        at = int(np.searchsorted(self._keys, key))
        if at == len(self._keys) or int(self._keys[at]) != key:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        a, b = int(self._offsets[at]), int(self._offsets[at + 1])
        return self._docs[a:b].astype(np.int64), self._counts[a:b].astype(np.float64)

    @classmethod
    def parse(cls, data: bytes, doc_count: int) -> CjkPairs | None:
        """The table written as ``data`` for a segment of ``doc_count`` documents; None if
        it is not one (cut short, damaged, of another segment or of another layout)."""
        head = _HEADER.size
        if len(data) < head + 4 or zlib.crc32(data[:-4]) != int.from_bytes(data[-4:], "little"):
            return None
        magic, docs, pairs, n = _HEADER.unpack_from(data)
        if magic != _MAGIC or docs != doc_count or len(data) != head + 12 * pairs + 8 + 8 * n + 4:
            return None
        keys = np.frombuffer(data, dtype="<u4", count=pairs, offset=head)
        at = head + 4 * pairs
        offsets = np.frombuffer(data, dtype="<u8", count=pairs + 1, offset=at)
        at += 8 * (pairs + 1)
        found = np.frombuffer(data, dtype="<u4", count=n, offset=at)
        counts = np.frombuffer(data, dtype="<u4", count=n, offset=at + 4 * n)
        if (
            np.any(np.diff(keys.astype(np.int64)) <= 0)
            or offsets[0] != 0
            or int(offsets[-1]) != n
            or np.any(np.diff(offsets.astype(np.int64)) <= 0)
            or (n and int(found.max()) >= doc_count)
        ):
            return None
        return cls(keys, offsets, found, counts)


class PairCounter:
    """Counts the CJK pairs of a segment's documents as they are added (in ascending
    order of document number); ``table()`` makes the segment's table of them."""

    def __init__(self) -> None:
        self._keys = array("I")
        self._docs = array("I")
        self._counts = array("I")

    def add(self, docnum: int, text: bytes) -> None:
        found = pairs_in(text)
        self._keys.extend(found.keys())
        self._docs.extend([docnum] * len(found))
        self._counts.extend(found.values())

    def table(self, doc_count: int) -> bytes:
        """The table of the documents counted (numbered below ``doc_count``)."""
        keys = np.frombuffer(self._keys, dtype=np.uint32)
        order = np.argsort(keys, kind="stable")  # each pair's documents stay ascending
        keys = keys[order]
        n = len(keys)
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, np.intp)
        distinct = keys[starts]
        offsets = np.append(starts, n)
        body = b"".join(
            (
                _HEADER.pack(_MAGIC, doc_count, len(distinct), n),
                distinct.astype("<u4").tobytes(),
                offsets.astype("<u8").tobytes(),
                np.frombuffer(self._docs, dtype=np.uint32)[order].astype("<u4").tobytes(),
                np.frombuffer(self._counts, dtype=np.uint32)[order].astype("<u4").tobytes(),
            )
        )
        return body + zlib.crc32(body).to_bytes(4, "little")
