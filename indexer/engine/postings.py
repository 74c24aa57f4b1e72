"""What a posting holds beyond its document, computed from a document's terms alone.

Engine-neutral: every engine stores these bytes as they are, and a plain scan of the files
computes the same, so the searches that read them (query/reports/) work on any engine.
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import Any
from zlib import crc32

import numpy as np
import numpy.typing as npt

# A token's hash in a NextTokens value: the low 16 bits of the CRC-32 of its UTF-8.
HASH_BYTES = 2
_HASH_MASK = (1 << (8 * HASH_BYTES)) - 1


def little_endian(numbers: array[int]) -> array[int]:
    """``numbers`` with their bytes in little-endian order, swapped in place on a
    big-endian machine; swapping again turns them back."""
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def token_hash(token: str) -> bytes:
    """A token as a NextTokens value records it: the low HASH_BYTES bytes of the CRC-32 of
    its UTF-8, little-endian."""
    return (crc32(token.encode("utf-8")) & _HASH_MASK).to_bytes(HASH_BYTES, "little")


def frequency_bytes(n: int) -> bytes:
    """A frequency as a NextTokens value starts with it: LEB128 (7 bits a byte, low bits
    first, the high bit set on every byte but the last): one byte below 128."""
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n >= 128:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes((n,)) for n in range(128)]


# A document's tokens numbered (see ``numbered``).
Numbering = tuple[list[str], npt.NDArray[np.int64]]


def numbered(tokens: list[str]) -> Numbering:
    """A document's tokens numbered: the distinct ones in order of first sight, and each
    token's number among them (what next_tokens_postings and a segment's token sequences,
    indexer/engine/sequences.py, are made from)."""
    words = list(dict.fromkeys(tokens))
    seq = list(map(dict(zip(words, range(len(words)))).__getitem__, tokens))
    return words, np.frombuffer(array("q", seq), dtype=np.int64)


def next_tokens_postings(
    tokens: list[str], numbering: Numbering | None = None
) -> list[tuple[str, int, bytes]]:
    """(term, frequency, value) of each distinct term of a document's tokens, in order
    (``numbering``: the tokens ``numbered`` already).

    The value is the term's frequency_bytes, then the distinct tokens that follow the
    term in the document: each token's token_hash, in order of the hashes. Whether the
    second token of a query ever follows its first in a document is then one ``bytes``
    search in the first's value: never missed, sometimes found where it is not (two tokens
    of one hash, a hash found astride two others or the frequency: the text decides).
    A value takes about 1 byte, and 2 a follower, where 4 and 4 (a 4-byte frequency, a
    CRC-32) made the postings half the index.
    """
    if not tokens:
        return []
    words, numbers = numbering or numbered(tokens)
    counts, lengths, values = next_tokens_columns(numbers, _hashes(words))
    postings: list[tuple[str, int, bytes]] = []
    start = 0
    for word, n, end in zip(words, counts.tolist(), accumulate(lengths.tolist()), strict=True):
        postings.append((word, n, values[start:end]))
        start = end
    return postings


def next_tokens_columns(
    numbers: npt.NDArray[np.int64], hashes: npt.NDArray[np.uint64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], bytes]:
    """next_tokens_postings of a document as columns, from its tokens numbered and each
    distinct term's token_hash as a number (``hashes``, one a term, at least one term):
    each term's frequency, the length of its value, and the values one after another."""
    counts = np.bincount(numbers, minlength=len(hashes))
    # Each (term, hash of the token after it) as one number, sorted and made distinct:
    # the terms in order, each one's hashes in order.
    shift = np.uint64(8 * HASH_BYTES)
    pairs = np.sort((numbers[:-1].astype(np.uint64) << shift) | hashes[numbers[1:]])
    if len(pairs) > 1:
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    followers = (pairs & np.uint64(_HASH_MASK)).astype(f"<u{HASH_BYTES}")
    per_term = np.bincount((pairs >> shift).astype(np.int64), minlength=len(hashes))
    if int(counts.max()) < len(_SMALL):  # each frequency one byte: most documents
        lengths = (HASH_BYTES * per_term + 1).astype(np.uint32)
        starts = np.cumsum(per_term) - per_term
        data = np.insert(followers.view(np.uint8), HASH_BYTES * starts, counts.astype(np.uint8))
        return counts, lengths, data.tobytes()
    hashed = followers.tobytes()
    heads = [frequency_bytes(n) for n in counts.tolist()]
    ends = (HASH_BYTES * np.cumsum(per_term)).tolist()
    values = b"".join(
        head + hashed[start:end]
        for head, start, end in zip(heads, [0, *ends[:-1]], ends, strict=True)
    )
    lengths = np.fromiter(map(len, heads), dtype=np.uint32, count=len(heads))
    return counts, lengths + (HASH_BYTES * per_term).astype(np.uint32), values


class TermNumbers:
    """A segment's terms numbered in order of first sight, and each one's token_hash: what
    a writer's pool groups a field's postings by (next_tokens_columns)."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self.words: list[str] = []
        self.text_bytes = 0  # the UTF-8 of all the words
        self._hashes = np.empty(1024, dtype=np.uint64)

    def number(self, words: list[str]) -> npt.NDArray[np.uint32]:
        """The number of each of these distinct words, new ones numbered as they come."""
        found = list(map(self._numbers.get, words))
        if None in found:
            for i, number in enumerate(found):
                if number is None:
                    found[i] = self._new(words[i])
        return np.array(found, dtype=np.uint32)

    def _new(self, word: str) -> int:
        number = self._numbers[word] = len(self.words)
        self.words.append(word)
        encoded = word.encode("utf-8")
        self.text_bytes += len(encoded)
        if number == len(self._hashes):
            self._hashes = np.concatenate((self._hashes, np.empty_like(self._hashes)))
        self._hashes[number] = crc32(encoded) & _HASH_MASK
        return number

    def hashes(self, numbers: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint64]:
        """The token_hash of the words of these numbers, as numbers."""
        return self._hashes[numbers]


@dataclass(frozen=True, slots=True)
class DocPostings:
    """A document's postings in one field, as columns: each distinct term's number
    (TermNumbers), its frequency and the length of its value; the values one after
    another; and what its frequencies are multiplied by to make its weights, the field's
    boost and then the document's (two products, as Whoosh makes them)."""

    terms: npt.NDArray[np.uint32]
    counts: npt.NDArray[np.uint32]
    lengths: npt.NDArray[np.uint32]
    values: bytes
    field_boost: float = 1.0
    boost: float = 1.0

    @property
    def weights(self) -> npt.NDArray[np.float64]:
        return weights_of(self.counts, self.field_boost, self.boost)


def weights_of(counts: Any, field_boost: Any, boost: Any) -> npt.NDArray[np.float64]:
    """Frequencies' weights: each times the field's boost, then times the document's
    (numbers, or arrays of one a frequency): Python's ``n * field_boost * boost``."""
    return (np.asarray(counts).astype(np.float64) * field_boost) * boost


# token_hash of the tokens seen lately, as numbers (a scan hashes each word once).
_HASHED: dict[str, int] = {}
_HASHED_MAX = 500_000


def _hashes(words: list[str]) -> np.ndarray[Any, np.dtype[np.uint64]]:
    if len(_HASHED) > _HASHED_MAX:
        _HASHED.clear()
    known = _HASHED.get
    hashes = [known(w) for w in words]
    if None in hashes:
        for i, h in enumerate(hashes):
            if h is None:
                word = words[i]
                hashes[i] = _HASHED[word] = crc32(word.encode("utf-8")) & _HASH_MASK
    return np.array(hashes, dtype=np.uint64)


def next_tokens_frequency(value: bytes) -> int:
    """The frequency a next_tokens value starts with (see frequency_bytes)."""
    n = shift = 0
    for byte in value:
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n
        shift += 7
    raise ValueError(f"not a next_tokens value: {value[:8]!r}")
