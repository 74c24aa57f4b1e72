"""What a posting holds beyond its document, computed from a document's terms alone.

Engine-neutral: every engine stores these bytes as they are, and a plain scan of the files
computes the same, so the searches that read them (query/reports/) work on any engine.
"""

from __future__ import annotations

import sys
from array import array
from struct import Struct
from typing import Any
from zlib import crc32

import numpy as np

_FREQUENCY = Struct("!I")  # 4 bytes, big-endian: as Whoosh's Frequency format stores it


def little_endian(numbers: array[int]) -> array[int]:
    """``numbers`` with their bytes in little-endian order, swapped in place on a
    big-endian machine; swapping again turns them back."""
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def token_hash(token: str) -> bytes:
    """A token as a NextTokens value records it: CRC-32 of its UTF-8, 4 bytes little-endian."""
    return crc32(token.encode("utf-8")).to_bytes(4, "little")


def next_tokens_postings(tokens: list[str]) -> list[tuple[str, int, bytes]]:
    """(term, frequency, value) of each distinct term of a document's tokens, in order.

    The value is the term's frequency (4 bytes, big-endian), then the distinct tokens that
    follow the term in the document: each token's token_hash, in order of the hashes.
    Whether the second token of a query ever follows its first in a document is then one
    ``bytes`` search in the first's value (a hash may also be found astride two others:
    the text decides).
    """
    if not tokens:
        return []
    words = list(dict.fromkeys(tokens))
    seq = list(map(dict(zip(words, range(len(words)))).__getitem__, tokens))
    numbers = np.frombuffer(array("q", seq), dtype=np.int64)
    counts = np.bincount(numbers, minlength=len(words)).tolist()
    # Each (term, hash of the token after it) as one number, sorted and made distinct:
    # the terms in order, each one's hashes in order.
    pairs = np.sort((numbers[:-1].astype(np.uint64) << np.uint64(32)) | _hashes(words)[numbers[1:]])
    if len(pairs) > 1:
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    followers = (pairs & np.uint64(0xFFFFFFFF)).astype("<u4").tobytes()
    ends = np.cumsum(np.bincount((pairs >> np.uint64(32)).astype(np.int64), minlength=len(words)))
    pack = _FREQUENCY.pack
    postings: list[tuple[str, int, bytes]] = []
    start = 0
    for word, n, end in zip(words, counts, ends.tolist(), strict=True):
        postings.append((word, n, pack(n) + followers[4 * start : 4 * end]))
        start = end
    return postings


# token_hash of the tokens seen lately, as numbers (a build hashes each word once).
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
                hashes[i] = _HASHED[word] = crc32(word.encode("utf-8"))
    return np.array(hashes, dtype=np.uint64)


def next_tokens_frequency(value: bytes) -> int:
    """The frequency a next_tokens value starts with."""
    n: int = _FREQUENCY.unpack_from(value)[0]
    return n
