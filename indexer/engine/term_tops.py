"""Per segment: the documents that hold each common term most.

A search for a word counts it in every document holding a term that holds the word, so
a common word reads all of its term's postings in every segment (at a million reports,
a fifth of them for a vocabulary word: most of a word search's 44 ms). Yet a search
wants only the few documents that hold it most. So each segment keeps, for every term
of at least MIN_DOCS documents, the TOP documents that hold it most, in the order a
search ranks them (most occurrences, then the highest rank, a date, then the lowest
key), as the fragment tops do for fragments of one or two characters
(indexer/engine/fragments.py). A search for a word that only one term of the segment
holds reads them there (its count in each document is the term's, times how often the
term holds the word), when enough of them are still live and inside its filter.

Terms are named by their number in the segment's lexicon. The table is written beside
the segment's files when the segment is: the terms and their order are checked as it is
opened (a checksum), each term's documents the first time a search reads them (a
checksum each), so that a process opens a segment's table without reading it all. One
that is missing, damaged or of another segment is not used.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from indexer.engine.fragments import Best

TOP = 128  # documents kept per term (a search answers 100 at most)
MIN_DOCS = 512  # terms of fewer documents are read from their postings
_MAGIC = b"TROVE-TTOP\x00\x01"
_HEADER = struct.Struct("<12sIII")  # magic, documents, terms kept, TOP
_PART = 1 << 21  # counts, ranks and key places below this rank as one number


def _entry(top: int) -> int:
    """The bytes of a term's entry: its documents, their counts (u4 each), a checksum."""
    return 8 * top + 4


def ranked_top(
    docs: npt.NDArray[np.int64],
    counts: npt.NDArray[np.float64],
    ranks: npt.NDArray[np.int64],
    key_order: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Of a term's documents and counts (its postings), the TOP a search ranks first:
    most occurrences, then the highest rank, then the lowest key (``key_order``: each
    document's place among the segment's keys)."""
    whole = counts.astype(np.int64)
    rank, key = ranks[docs], key_order[docs]
    if (
        len(docs) > TOP
        and max(int(whole.max()), int(rank.max()), int(key.max())) < _PART
        and int(rank.min()) >= 0
    ):
        # One number a document, best highest: a partition, then the TOP in order.
        score = (whole << 42) | (rank << 21) | (_PART - 1 - key)
        best = np.argpartition(score, len(score) - TOP)[-TOP:]
        order = best[np.argsort(-score[best])]
        return docs[order], whole[order]
    order = np.lexsort((key, -rank, -whole))[:TOP]
    return docs[order], whole[order]


def table(
    terms: Iterable[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]], doc_count: int
) -> bytes:
    """The table of a segment of ``doc_count`` documents, from each kept term's number
    (ascending) and its TOP documents and counts, best first (``ranked_top``)."""
    numbers: list[int] = []
    entries: list[bytes] = []
    for k, docs, counts in terms:
        body = docs.astype("<u4").tobytes() + counts.astype("<u4").tobytes()
        numbers.append(k)
        entries.append(body + zlib.crc32(body).to_bytes(4, "little"))
    head = _HEADER.pack(_MAGIC, doc_count, len(numbers), TOP)
    head += np.array(numbers, dtype="<u4").tobytes()
    head += zlib.crc32(head).to_bytes(4, "little")
    return head + b"".join(entries)


def fewest_kept() -> int:
    """The fewest documents of a term a segment keeps the tops of (never fewer than TOP:
    every term's entry holds TOP)."""
    return max(MIN_DOCS, TOP)


def keeps(doc_count: int) -> bool:
    """Whether a segment keeps the tops of a term of ``doc_count`` documents."""
    return doc_count >= fewest_kept()


def kept(doc_counts: Sequence[int]) -> list[int]:
    """The numbers of the terms a segment keeps tops of, by their document counts."""
    return [k for k, n in enumerate(doc_counts) if keeps(n)]


class TermTops:
    """A segment's table in a file: ``best(term)`` for each term kept."""

    def __init__(
        self, fd: int, numbers: npt.NDArray[np.uint32], at: int, doc_count: int, top: int
    ) -> None:
        self._fd = fd
        self._numbers = numbers
        self._at = at
        self._doc_count = doc_count
        self._top = top

    def __del__(self) -> None:
        os.close(self._fd)

    def best(self, term: int) -> Best | None:
        """The documents that hold term number ``term`` most, best first; None if the
        term is not kept, or its entry is found damaged (then counted as before)."""
        i = int(np.searchsorted(self._numbers, term))
        if i == len(self._numbers) or int(self._numbers[i]) != term:
            return None
        top = self._top
        size = _entry(top)
        data = os.pread(self._fd, size, self._at + i * size)
        if len(data) != size or zlib.crc32(data[:-4]) != int.from_bytes(data[-4:], "little"):
            return None
        docs = np.frombuffer(data, dtype="<u4", count=top)
        if int(docs.max()) >= self._doc_count:
            return None
        counts = np.frombuffer(data, dtype="<u4", count=top, offset=4 * top)
        return Best(docs, counts, False)

    @classmethod
    def read(cls, fd: int, doc_count: int) -> TermTops | None:
        """The table in a file (``fd``, open for reading; kept open by the table, closed
        if it holds none): its terms read and checked, their documents as asked."""
        try:
            head = os.pread(fd, _HEADER.size, 0)
            if len(head) != _HEADER.size:
                os.close(fd)
                return None
            magic, docs, n, top = _HEADER.unpack(head)
            at = _HEADER.size + 4 * n + 4
            whole = os.pread(fd, at, 0)
            size = os.fstat(fd).st_size
        except BaseException:
            os.close(fd)
            raise
        if (
            magic != _MAGIC
            or docs != doc_count
            or top != TOP
            or size != at + n * _entry(top)
            or zlib.crc32(whole[:-4]) != int.from_bytes(whole[-4:], "little")
        ):
            os.close(fd)
            return None
        numbers = np.frombuffer(whole, dtype="<u4", count=n, offset=_HEADER.size)
        if n and np.any(np.diff(numbers.astype(np.int64)) <= 0):
            os.close(fd)
            return None
        return cls(fd, numbers, at, doc_count, top)
