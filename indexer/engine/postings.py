"""What a posting holds beyond its document, computed from a document's terms alone.

Engine-neutral: every engine stores these bytes as they are, and a plain scan of the files
computes the same, so the searches that read them (query/reports.py) work on any engine.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter, defaultdict
from itertools import pairwise
from struct import Struct
from zlib import crc32

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
    counts = Counter(tokens)
    hashes = {t: crc32(t.encode("utf-8")) for t in counts}
    follows: dict[str, set[int]] = defaultdict(set)
    for a, b in set(pairwise(tokens)):
        follows[a].add(hashes[b])
    pack = _FREQUENCY.pack
    swap = sys.byteorder == "big"
    postings: list[tuple[str, int, bytes]] = []
    for w, n in counts.items():
        after = follows.get(w)
        if after is None:  # the last token, followed by nothing
            postings.append((w, n, pack(n)))
            continue
        hashed = array("I", sorted(after))
        if swap:
            hashed.byteswap()
        postings.append((w, n, pack(n) + hashed.tobytes()))
    return postings


def next_tokens_frequency(value: bytes) -> int:
    """The frequency a next_tokens value starts with."""
    n: int = _FREQUENCY.unpack_from(value)[0]
    return n
