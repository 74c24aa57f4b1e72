"""Per segment: the documents that hold each one- or two-character fragment most.

A search for a fragment of one or two characters (``e``, ``to``, ``IP``) is among the
costliest there are: most terms hold it, so its postings are most of the index's, and
counting it reads every stored text (query/text_count.py). Yet a search wants only the
few documents that hold it most. So, as a segment is written, each document's text is
counted for every fragment of one byte or two out of ``ALPHABET`` (lower-case ASCII
letters and digits; two different bytes, since a doubled one such as ``ee`` overlaps
itself, and counts do not count overlaps), and the segment keeps, per fragment, the
``TOP`` documents that hold it most, in the order a search ranks them: most
occurrences, then the highest rank (a date), then the lowest key. A search whose
documents (less those deleted since, and those outside a filter) are all among them,
or at least as many as it wants, reads them there.

The table is written beside the segment's files when the segment is, and is only ever
read whole; one that is missing, damaged or of another segment is not used.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"
TOP = 128  # documents kept per fragment (a search answers 100 at most)
_A = len(ALPHABET)
_W = _A + 1  # byte codes: the alphabet's, then one for every other byte
_CODE = np.full(256, _A, dtype=np.uint8)
_CODE[np.frombuffer(ALPHABET, dtype=np.uint8)] = np.arange(_A, dtype=np.uint8)
_CODE_TABLE = _CODE.tobytes()  # for bytes.translate (several times faster than numpy's)
# The fragments: each byte of the alphabet, then each pair of two different ones; a
# pair's place among the (first code, second code) counts of a document.
_PAIRS = np.array([x * _W + y for x in range(_A) for y in range(_A) if x != y], dtype=np.intp)
FRAGMENTS: dict[bytes, int] = {bytes([b]): i for i, b in enumerate(ALPHABET)} | {
    bytes([ALPHABET[x], ALPHABET[y]]): _A + i
    for i, (x, y) in enumerate((x, y) for x in range(_A) for y in range(_A) if x != y)
}
_KEYS = len(FRAGMENTS)
_BLOCK_DOCS = 512  # documents counted in one go
_MOST = (1 << 32) - 1  # counts, ranks and documents are below this
_MAGIC = b"TROVE-TOPS\x00\x01"
_HEADER = struct.Struct("<12sIII")  # magic, documents, TOP, fragments


@dataclass(frozen=True)
class Best:
    """The documents that hold a fragment most, best first, and how often each does."""

    docs: npt.NDArray[np.uint32]
    counts: npt.NDArray[np.uint32]
    complete: bool  # every document that held it when the segment was written is here


class FragmentTops:
    """A segment's table: ``best(fragment)`` for each fragment of FRAGMENTS."""

    def __init__(
        self,
        offsets: npt.NDArray[np.uint32],
        complete: npt.NDArray[np.uint8],
        docs: npt.NDArray[np.uint32],
        counts: npt.NDArray[np.uint32],
    ) -> None:
        self._offsets = offsets
        self._complete = complete
        self._docs = docs
        self._counts = counts

    def best(self, fragment: bytes) -> Best | None:
        """The documents that hold ``fragment`` most (None: it is not one of FRAGMENTS)."""
        k = FRAGMENTS.get(fragment)
        if k is None:
            return None
        a, b = int(self._offsets[k]), int(self._offsets[k + 1])
        return Best(self._docs[a:b], self._counts[a:b], bool(self._complete[k]))

    @classmethod
    def parse(cls, data: bytes, doc_count: int) -> FragmentTops | None:
        """The table written as ``data`` for a segment of ``doc_count`` documents; None if
        it is not one (cut short, damaged, of another segment or of another layout)."""
        head = _HEADER.size
        if len(data) < head + 4 or zlib.crc32(data[:-4]) != int.from_bytes(data[-4:], "little"):
            return None
        magic, docs, top, keys = _HEADER.unpack_from(data)
        if magic != _MAGIC or docs != doc_count or top != TOP or keys != _KEYS:
            return None
        offsets = np.frombuffer(data, dtype="<u4", count=keys + 1, offset=head)
        at = head + 4 * (keys + 1)
        complete = np.frombuffer(data, dtype=np.uint8, count=keys, offset=at)
        at += keys
        n = int(offsets[-1])
        if len(data) != at + 8 * n + 4 or np.any(np.diff(offsets.astype(np.int64)) < 0):
            return None
        found = np.frombuffer(data, dtype="<u4", count=n, offset=at)
        counts = np.frombuffer(data, dtype="<u4", count=n, offset=at + 4 * n)
        if n and int(found.max()) >= doc_count:
            return None
        return cls(offsets, complete, found, counts)


class FragmentCounter:
    """Counts the fragments of a segment's documents as they are added; ``table()``
    makes the segment's table of them.

    Documents are counted a block at a time: each document's counts of every pair of
    byte codes (one ``bincount`` a document), the single bytes' from those. Of each
    fragment, the documents that may still be among its TOP best are kept: those that
    hold it at least as often as the TOP-th most in any one block so far (a document
    that holds it less has TOP better ones already)."""

    def __init__(self) -> None:
        self._texts: list[bytes] = []
        self._docs: list[int] = []
        self._ranks: dict[int, tuple[int, bytes]] = {}  # docnum: (rank, key)
        self._least = np.ones(_KEYS, dtype=np.uint32)  # the count a kept document needs
        self._holders = np.zeros(_KEYS, dtype=np.int64)
        self._kept: list[tuple[npt.NDArray[np.intp], ...]] = []
        self._kept_size = 0

    def add(self, docnum: int, text: bytes, rank: int, key: bytes) -> None:
        """Counts document ``docnum``'s ``text``; ties on a count rank by ``rank``
        (highest first), then ``key`` (lowest first)."""
        if not text:  # holds no fragment (a file record, say): nothing to count
            return
        self._texts.append(text)
        self._docs.append(docnum)
        self._ranks[docnum] = (rank, key)
        if len(self._texts) >= _BLOCK_DOCS:
            self._count_block()

    def _count_block(self) -> None:
        texts, docs = self._texts, np.array(self._docs, dtype=np.intp)
        self._texts, self._docs = [], []
        if not texts:
            return
        n = len(texts)
        codes = np.frombuffer(b"".join(texts).translate(_CODE_TABLE), dtype=np.uint8)
        # Per byte: its code and the next byte's in the same document (a document's last
        # byte: followed by none).
        pairs = codes.astype(np.uint16) * _W
        pairs[:-1] += codes[1:]
        bounds = np.cumsum([0, *map(len, texts)])
        last = bounds[1:][bounds[1:] > bounds[:-1]] - 1
        pairs[last] = codes[last].astype(np.uint16) * _W + _A
        per_pair = np.empty((n, _W * _W), dtype=np.int64)
        for i, (a, b) in enumerate(itertools.pairwise(bounds.tolist())):
            per_pair[i] = np.bincount(pairs[a:b], minlength=_W * _W)
        rows = np.empty((_KEYS, n), dtype=np.uint32)
        rows[:_A] = per_pair.reshape(n, _W, _W)[:, :_A, :].sum(axis=2).T
        rows[_A:] = per_pair[:, _PAIRS].T
        self._holders += np.count_nonzero(rows, axis=1)
        if n >= TOP:
            np.maximum(
                self._least, np.partition(rows, n - TOP, axis=1)[:, n - TOP], out=self._least
            )
        keys, at = np.nonzero(rows >= self._least[:, None])
        self._kept.append((keys, docs[at], rows[keys, at].astype(np.intp)))
        self._kept_size += len(keys)
        if self._kept_size > 2 * TOP * _KEYS:
            self._kept = [self._still_kept()]
            self._kept_size = len(self._kept[0][0])

    def _still_kept(self) -> tuple[npt.NDArray[np.intp], ...]:
        """The documents kept, less those that TOP others kept hold more often (each
        fragment's count to keep rises to the TOP-th most of those kept)."""
        keys, docs, counts = (np.concatenate(parts) for parts in zip(*self._kept, strict=True))
        by_key = np.sort((keys << 32) | (_MOST - counts))  # per fragment, most first
        firsts = np.searchsorted(by_key, np.arange(_KEYS) << 32)
        enough = np.flatnonzero(np.diff(np.append(firsts, len(by_key))) >= TOP)
        nth = _MOST - (by_key[firsts[enough] + TOP - 1] & _MOST)
        self._least[enough] = np.maximum(self._least[enough], nth)
        keep = counts >= self._least[keys]
        return keys[keep], docs[keep], counts[keep]

    def table(self, doc_count: int) -> bytes:
        """The table of the documents counted (numbered below ``doc_count``)."""
        self._count_block()
        none = np.zeros(0, dtype=np.intp)
        keys, docs, counts = self._still_kept() if self._kept else (none, none, none)
        held = sorted(set(docs.tolist()), key=lambda d: self._ranks[d][1])
        by_key = np.zeros(doc_count, dtype=np.intp)
        by_key[held] = np.arange(len(held))
        ranks = np.zeros(doc_count, dtype=np.int64)
        ranks[held] = [self._ranks[d][0] for d in held]
        order = np.lexsort(((-ranks[docs] << 32) | by_key[docs], (keys << 32) | (_MOST - counts)))
        keys, docs, counts = keys[order], docs[order], counts[order]
        firsts = np.searchsorted(keys, np.arange(_KEYS + 1))
        taken = np.minimum(np.diff(firsts), TOP)
        offsets = np.zeros(_KEYS + 1, dtype="<u4")
        np.cumsum(taken, out=offsets[1:])
        pick = np.concatenate([none, *map(np.arange, firsts[:-1], firsts[:-1] + taken)])
        complete = (self._holders <= TOP).astype(np.uint8)
        body = b"".join(
            (
                _HEADER.pack(_MAGIC, doc_count, TOP, _KEYS),
                offsets.tobytes(),
                complete.tobytes(),
                docs[pick].astype("<u4").tobytes(),
                counts[pick].astype("<u4").tobytes(),
            )
        )
        return body + zlib.crc32(body).to_bytes(4, "little")
