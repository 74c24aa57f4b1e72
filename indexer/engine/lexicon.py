"""A segment's terms of one field, in order, and the lookups every search makes in them.

Engine-neutral: an engine makes one from a field's terms (in code point order) and each
term's document frequency, and keeps it per segment.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, repeat

# A lexicon answers this many lookups by the terms' suffixes (containing, ending_with)
# by scanning every term before it puts their suffixes in order.
SCANS_BEFORE_SORTING = 16


class Lexicon:
    """The terms of one field of one segment; term number k is ``term(k)``.

    All terms in one string, each after a NUL; ``starts[k]`` is where term k begins. The
    terms are in code point order, so those that start with a string are a run, found by
    bisection. So are those that hold one, in the terms' suffixes put in order (made on
    first use).
    """

    def __init__(self, terms: list[str], doc_counts: Iterable[int]) -> None:
        self.doc_counts = array("Q", doc_counts)  # per term: documents holding it
        self.joined = "\0" + "\0".join(terms) + "\0"
        self.starts = array("Q", accumulate((len(t) + 1 for t in terms[:-1]), initial=1))
        if not terms:
            self.starts = array("Q")
        # Every suffix of every term, in order: the term it ends and where it starts in it.
        self._suffixes: tuple[array[int], array[int]] | None = None
        self._scans = 0  # lookups answered by a scan of every term

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[str]:
        return map(self.term, range(len(self.starts)))

    def terms(self) -> list[str]:
        """Every term, in order."""
        return self.joined[1:-1].split("\0") if len(self.starts) else []

    def term(self, k: int) -> str:
        end = self.starts[k + 1] - 1 if k + 1 < len(self.starts) else len(self.joined) - 1
        return self.joined[self.starts[k] : end]

    def starting_with(self, s: str) -> list[int]:
        lo, count = self._run(len(self.starts), self.term, s, prefix=True)
        return list(range(lo, lo + count))

    def equal_to(self, s: str) -> list[int]:
        lo, count = self._run(len(self.starts), self.term, s, prefix=False)
        return list(range(lo, lo + count))

    def containing(self, s: str) -> list[int]:
        if s and self._scanning():
            return self._scan(re.escape(s))
        owners, _ = self._suffix_order()
        lo, count = self._run(len(owners), self._suffix, s, prefix=True)
        return sorted(set(owners[lo : lo + count]))

    def ending_with(self, s: str) -> list[int]:
        if s and self._scanning():
            return self._scan(re.escape(s) + "\0")
        owners, _ = self._suffix_order()
        lo, count = self._run(len(owners), self._suffix, s, prefix=False)
        return sorted(owners[lo : lo + count])

    def _scanning(self) -> bool:
        """Whether to answer by a scan of every term (in C, a millisecond or so per MB of
        terms) rather than from the suffixes in order, which take a few hundred ms to put
        in order at 100,000 reports: the first SCANS_BEFORE_SORTING lookups, so that a
        process's first answers need not wait for them."""
        if self._suffixes is not None or self._scans >= SCANS_BEFORE_SORTING:
            return False
        self._scans += 1
        return True

    def _scan(self, pattern: str) -> list[int]:
        """The terms where ``pattern`` (which never spans a NUL) matches."""
        if not self.starts or not pattern:
            return []
        starts = self.starts
        found = {bisect_right(starts, m.start()) - 1 for m in re.finditer(pattern, self.joined)}
        found.discard(-1)
        return sorted(found)

    @staticmethod
    def _run(size: int, key: Callable[[int], str], s: str, *, prefix: bool) -> tuple[int, int]:
        """Where the run of ``key(0..size-1)`` (in order) equal to ``s``, or starting with it
        if ``prefix``, begins, and its length."""
        lo = bisect_left(range(size), s, key=key)
        n = len(s)
        within = (lambda i: key(i)[:n]) if prefix else key
        return lo, bisect_right(range(lo, size), s, key=within)

    def _suffix(self, i: int) -> str:
        owners, offsets = self._suffix_order()
        return self.term(owners[i])[offsets[i] :]

    def _suffix_order(self) -> tuple[array[int], array[int]]:
        """(owners, offsets): suffix i is ``term(owners[i])[offsets[i]:]``, in order.

        Put in order one first character at a time, so that only that group's suffixes
        are strings at once (all at once took ~250 MB for 270k terms)."""
        if self._suffixes is None:
            terms = [self.term(k) for k in range(len(self.starts))]
            groups: dict[str, tuple[array[int], array[int]]] = {}
            for k, t in enumerate(terms):
                for j, c in enumerate(t):
                    if (group := groups.get(c)) is None:
                        group = groups[c] = (array("I"), array("I"))
                    group[0].append(k)
                    group[1].append(j)
            owners, offsets = array("I"), array("I")
            for c in sorted(groups):
                ks, js = groups.pop(c)
                cuts = map(slice, js, repeat(None))
                suffixes = list(map(str.__getitem__, map(terms.__getitem__, ks), cuts))
                order = sorted(range(len(ks)), key=suffixes.__getitem__)
                owners.extend(map(ks.__getitem__, order))
                offsets.extend(map(js.__getitem__, order))
            self._suffixes = (owners, offsets)
        return self._suffixes
