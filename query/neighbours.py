"""The closest indexed words to a word no document holds, found without scanning the
lexicon: each segment's words of letters kept by their deletion neighbourhoods, the
strings a word becomes when some of its letters are deleted.

``closest`` (query/forgiving.py) scans every indexed word of about the word's length and
scores each with rapidfuzz's ``fuzz.ratio``. Here the same answer comes from a few
candidates: the words that share a deletion neighbour with the word. Why no word the scan
accepts is missed:

1. ``fuzz.ratio(w, t)`` is rapidfuzz's normalised InDel similarity, ``100 * 2c / (n + m)``
   for words of n and m letters whose longest common subsequence has c letters (InDel
   distance ``n + m - 2c``; a substitution costs 2).
2. So the scan accepts t (``ratio >= MIN_SIMILARITY``) only if c is at least
   ``least_common(n, m)``, the smallest c with ``200c >= MIN_SIMILARITY * (n + m)``
   (counted in exact integers, with a hair of slack for rapidfuzz's floating point). And
   it compares only words of n - 2 .. n + 2 letters, for n >= MIN_CORRECTABLE.
3. Their common subsequence S is what w becomes when n - c of its letters are deleted,
   and what t becomes when m - c of its letters are. ``query_deletions(n)`` is the most
   n - c can be over every length m the scan compares and every accepted c;
   ``kept_deletions(m)`` the most m - c can be over every word length n that compares
   with m. (At 75, both are ``(len + 3) // 4`` from 6 letters on, 2 for 5 and 1 for 4
   letters; an indexed word loses 1 at 5, 0 at 3, and one of 2 letters is never accepted.
   tests/test_neighbours.py checks every pair with rapidfuzz itself.)
4. A ``Neighbours`` keeps, for each word t of a length it covers, a hash of every string t
   becomes with up to ``kept_deletions(m)`` letters deleted, S among them; a lookup hashes
   every string w becomes with up to ``query_deletions(n)`` deleted, S among them. Equal
   strings hash alike, so t is a candidate. (Two strings that hash alike by chance only
   add a candidate, which rapidfuzz then turns away.) A length it does not cover (longer
   than MAX_INDEXED_LENGTH, or past its budget) gives all its words as candidates.

Hence the candidates hold every word the scan would accept; rapidfuzz scores them exactly
as the scan does. The scan's answer also depends on the order of its pool twice: its
``process.extract`` keeps the ``4 * limit`` best, equal scores in pool order, and the
pool is cut at MAX_CANDIDATES. ``closest_near`` hands ``closest`` the accepted words in
the caller's pool order (a sort key), so the first is settled alike; the second by the
caller's ``cut``, or, without one, by answering None (the caller then scans) whenever the
words of the lengths compared could be more than MAX_CANDIDATES.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from functools import cache, partial
from itertools import chain, combinations
from math import ceil
from typing import Any, overload

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process

from indexer.engine.lexicon import Lexicon
from query.forgiving import MAX_CANDIDATES, MIN_CORRECTABLE, MIN_SIMILARITY, closest
from query.indexes import PerSegment

# Words longer than this are not kept by their neighbourhoods (a word of 12 letters has
# up to 299 strings within 3 deletions, one of 16 up to 2,517 within 4): their lengths
# are scanned.
MAX_INDEXED_LENGTH = 12
# At most this many neighbour hashes per lexicon (8 bytes each with the word's number:
# 32 MB); lengths are covered shortest first while they fit, the others scanned.
MAX_ENTRIES = 4_000_000
# The scan compares a word with the indexed words this many letters shorter or longer.
SPREAD = 2
# Room for rapidfuzz's floating point at the cut-off: a superset of candidates is safe.
_SLACK = 1e-6
# A random odd multiplier: strings hash as polynomials in it, modulo 2**64.
_BASE = 0x9E3779B97F4A7C15


def least_common(n: int, m: int) -> int:
    """The fewest letters words of n and m letters must have in common (their longest
    common subsequence) for ``fuzz.ratio`` to reach MIN_SIMILARITY (less a hair)."""
    return max(0, ceil((MIN_SIMILARITY - _SLACK) * (n + m) / 200))


@cache
def query_deletions(n: int) -> int:
    """The most letters a word of n letters loses to its common subsequence with an
    indexed word the scan accepts (-1: none can be accepted)."""
    most = -1
    if n >= MIN_CORRECTABLE:
        for m in range(max(1, n - SPREAD), n + SPREAD + 1):
            common = least_common(n, m)
            if common <= min(n, m):
                most = max(most, n - common)
    return most


@cache
def kept_deletions(m: int) -> int:
    """The most letters an indexed word of m letters loses to its common subsequence with
    a word the scan accepts it for (-1: it is never accepted)."""
    most = -1
    for n in range(max(MIN_CORRECTABLE, m - SPREAD), m + SPREAD + 1):
        common = least_common(n, m)
        if common <= min(n, m):
            most = max(most, m - common)
    return most


@cache
def _weights(length: int, deletions: int) -> npt.NDArray[np.uint64]:
    """(length, k): column j hashes the j-th way of deleting up to ``deletions`` of
    ``length`` letters; a word's code points (a row) times it hash its neighbours."""
    powers = [1]
    for _ in range(length):
        powers.append(powers[-1] * _BASE % 2**64)
    columns = []
    for d in range(deletions + 1):
        for gone in combinations(range(length), d):
            column, rank = [0] * length, 0
            for i in range(length):
                if i not in gone:
                    column[i] = powers[rank]
                    rank += 1
            columns.append(column)
    return np.array(columns, dtype=np.uint64).T


def _hashes(words: list[str], length: int, deletions: int) -> npt.NDArray[np.uint32]:
    """Per word (all of ``length`` letters), the hashes of its neighbours: (words, k), the
    high 32 bits of each polynomial (a word that shares them by chance is one more
    candidate)."""
    codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32)
    with np.errstate(over="ignore"):
        full = codes.reshape(len(words), length).astype(np.uint64) @ _weights(length, deletions)
    return (full >> np.uint64(32)).astype(np.uint32)


class Neighbours:
    """One lexicon's words of letters by their deletion neighbourhoods (see the module
    docstring), for the lengths that fit MAX_INDEXED_LENGTH and ``max_entries``."""

    def __init__(
        self,
        lexicon: Lexicon,
        max_length: int = MAX_INDEXED_LENGTH,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.lexicon = lexicon
        terms = lexicon.terms()
        by_length: dict[int, list[int]] = {}
        for k, term in enumerate(terms):
            if term.isalpha():
                by_length.setdefault(len(term), []).append(k)
        # Every word of letters counts towards the scan's MAX_CANDIDATES, even one too
        # short ever to be accepted.
        self.counts = {m: len(ks) for m, ks in by_length.items()}
        # Lengths up to ``covered`` are kept by their neighbours, longer ones listed.
        self.covered = 0
        entries = 0
        for m in sorted(m for m in by_length if 0 <= kept_deletions(m) and m <= max_length):
            size = len(by_length[m]) * _weights(m, kept_deletions(m)).shape[1]
            if entries + size > max_entries:
                break
            entries += size
            self.covered = m
        keys = [np.array([], dtype=np.uint32)]
        ids = [np.array([], dtype=np.uint32)]
        for m, ks in by_length.items():
            if kept_deletions(m) >= 0 and m <= self.covered:
                hashes = _hashes([terms[k] for k in ks], m, kept_deletions(m))
                keys.append(hashes.ravel())
                ids.append(np.repeat(np.array(ks, dtype=np.uint32), hashes.shape[1]))
        all_keys = np.concatenate(keys)
        order = np.argsort(all_keys)
        self._keys = all_keys[order]
        self._ids = np.concatenate(ids)[order]
        # Those of the lengths not covered (long words, few), scored by rapidfuzz in C.
        self._listed = {
            m: [terms[k] for k in ks] for m, ks in by_length.items() if m > self.covered
        }

    @property
    def nbytes(self) -> int:
        return (
            self._keys.nbytes
            + self._ids.nbytes
            + sum(map(sys.getsizeof, chain.from_iterable(self._listed.values())))
        )

    def count(self, low: int, high: int) -> int:
        """How many words of letters of ``low`` .. ``high`` letters it holds."""
        return sum(self.counts.get(m, 0) for m in range(low, high + 1))

    def holds(self, word: str) -> bool:
        return bool(self.lexicon.equal_to(word))

    def near(self, word: str) -> list[str]:
        """Its words of letters within SPREAD letters of the word's length that may be
        as similar as MIN_SIMILARITY: every one that is, and a few that are not."""
        n = len(word)
        low, high = n - SPREAD, n + SPREAD
        found: set[int] = set()
        if low <= self.covered and len(self._keys) and query_deletions(n) >= 0:
            hashes = np.unique(_hashes([word], n, query_deletions(n)))
            starts = np.searchsorted(self._keys, hashes, side="left")
            ends = np.searchsorted(self._keys, hashes, side="right")
            for a, b in zip(
                starts[starts < ends].tolist(), ends[starts < ends].tolist(), strict=True
            ):
                found.update(self._ids[a:b].tolist())
        near = [t for t in map(self.lexicon.term, found) if low <= len(t) <= high]
        for m in range(max(low, self.covered + 1), high + 1):
            listed = self._listed.get(m, [])
            accepted = process.extract(
                word, listed, scorer=fuzz.ratio, limit=None, score_cutoff=MIN_SIMILARITY
            )
            near.extend(t for t, _, _ in accepted)
        return near


@overload
def closest_near(
    word: str,
    sources: Sequence[Neighbours],
    order: Callable[[str], Any],
    cut: Callable[[], str | None],
    limit: int = 3,
) -> list[str]: ...


@overload
def closest_near(
    word: str,
    sources: Sequence[Neighbours],
    order: Callable[[str], Any],
    cut: None = None,
    limit: int = 3,
) -> list[str] | None: ...


def closest_near(
    word: str,
    sources: Sequence[Neighbours],
    order: Callable[[str], Any],
    cut: Callable[[], str | None] | None = None,
    limit: int = 3,
) -> list[str] | None:
    """``closest(word, pool, limit)`` for the scan's pool of the words of ``sources``,
    whose order is ``order`` (a sort key); ``cut``, if given, names the last word the
    scan's pool keeps at MAX_CANDIDATES (None: it keeps them all). None when the pool may
    be cut and there is no ``cut``: then the caller scans."""
    if len(word) < MIN_CORRECTABLE or not word.isalpha():
        return []
    n = len(word)
    last: str | None = None
    if sum(s.count(n - SPREAD, n + SPREAD) for s in sources) > MAX_CANDIDATES:
        if cut is None:
            return None
        last = cut()
    candidates = set().union(*(s.near(word) for s in sources))
    candidates.discard(word)
    found = process.extract(
        word, list(candidates), scorer=fuzz.ratio, limit=None, score_cutoff=MIN_SIMILARITY
    )
    accepted = sorted((term for term, _, _ in found), key=order)
    if last is not None:
        end = order(last)
        accepted = [t for t in accepted if order(t) <= end]
    return closest(word, accepted, limit)


def first_holder(sources: Sequence[Neighbours]) -> Callable[[str], int]:
    """The position in ``sources`` of the first that holds a word (what a scan that
    keeps each word once, source by source, first meets it in)."""

    def first(word: str) -> int:
        return next((i for i, s in enumerate(sources) if s.holds(word)), len(sources))

    return first


def of_lexicons(
    cache_: PerSegment[Neighbours], lexicons: Iterable[tuple[str, Lexicon]]
) -> list[Neighbours]:
    """The ``Neighbours`` of each (key, lexicon), made on first use and kept in
    ``cache_`` under its key (a segment's id, with the field if several are kept); those
    of keys not named are dropped (their segments were merged away)."""
    pairs = list(lexicons)
    found = [cache_.get(key, partial(Neighbours, lex)) for key, lex in pairs]
    cache_.keep_only(key for key, _ in pairs)
    return found
