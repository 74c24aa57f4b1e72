"""A segment's terms of one field, in order, and the lookups every search makes in them.

Engine-neutral: an engine makes one from a field's terms (in code point order) and each
term's document frequency, and keeps it per segment.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

import numpy as np
import numpy.typing as npt

# A lexicon answers this many lookups by the terms' suffixes (containing, ending_with)
# by scanning every term before it puts their suffixes in order.
SCANS_BEFORE_SORTING = 16


class Lexicon:
    """The terms of one field of one segment; term number k is ``term(k)``.

    All terms in one string, each after a NUL; ``starts[k]`` is where term k begins. The
    terms are in code point order, so those that start with a string are a run, found by
    bisection. So are those that hold one, in the terms' suffixes put in order: every
    suffix at once where an engine keeps them in order beside the segment
    (``use_suffix_order``), else one first character's suffixes at a time, on first use.
    """

    def __init__(self, terms: list[str], doc_counts: Iterable[int]) -> None:
        starts = accumulate((len(t) + 1 for t in terms[:-1]), initial=1) if terms else ()
        self._keep("\0" + "\0".join(terms) + "\0", array("Q", starts), doc_counts)

    @classmethod
    def from_joined(cls, joined: str, starts: array[int], doc_counts: Sequence[int]) -> Lexicon:
        """The lexicon of terms already joined as it keeps them (each after a NUL, and a
        NUL at the end), ``starts[k]`` where term k begins in ``joined``."""
        if not doc_counts:
            return cls([], [])
        lexicon = cls.__new__(cls)
        lexicon._keep(joined, starts, doc_counts)
        return lexicon

    def _keep(self, joined: str, starts: array[int], doc_counts: Iterable[int]) -> None:
        self.doc_counts = array("Q", doc_counts)  # per term: documents holding it
        self.joined = joined
        self.starts = starts
        # Per first character, the suffixes of the terms that start with it, in order:
        # the term each ends and where it starts in it (_suffix_group).
        self._groups: dict[str, tuple[Sequence[int], Sequence[int]]] = {}
        self._order: tuple[Sequence[int], Sequence[int]] | None = None  # every suffix
        self._scans = 0  # lookups answered by a scan of every term
        self._code_points: npt.NDArray[np.uint32] | None = None

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
        if not s:
            return list(range(len(self.starts)))  # every term holds the empty string
        if self._order is None and self._scanning():
            return self._scan(re.escape(s))
        return sorted(set(self._suffixes_from(s, prefix=True)))

    def ending_with(self, s: str) -> list[int]:
        if not s:
            return []
        if self._order is None and self._scanning():
            return self._scan(re.escape(s) + "\0")
        return sorted(self._suffixes_from(s, prefix=False))

    def _scanning(self) -> bool:
        """Whether to answer by a scan of every term (in C, a millisecond or so per MB of
        terms) rather than from the suffixes in order, each first character's group of
        which takes milliseconds to put in order: the first SCANS_BEFORE_SORTING lookups,
        so that a process's first answers need not wait for them."""
        if self._scans >= SCANS_BEFORE_SORTING:
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

    def suffix_order(self) -> tuple[array[int], array[int]]:
        """Every suffix of every term, in order: (owners, offsets), suffix i being
        ``term(owners[i])[offsets[i]:]`` (what ``use_suffix_order`` takes)."""
        owners, offsets = self._suffixes_at(np.flatnonzero(self._codes() != 0))
        return array("I", owners), array("I", offsets)

    @property
    def ordered(self) -> bool:
        """Whether it bisects in every suffix in order (``use_suffix_order``)."""
        return self._order is not None

    def use_suffix_order(self, owners: Sequence[int], offsets: Sequence[int]) -> None:
        """Look terms up by their suffixes in this order (``suffix_order``'s, as an engine
        kept it) from now on."""
        if len(owners) != len(offsets):
            raise ValueError("a suffix order of owners and offsets of different lengths")
        self._order = (owners, offsets)

    def _suffixes_from(self, s: str, *, prefix: bool) -> Sequence[int]:
        """The terms (one per suffix: a term may come more than once) with a suffix that
        starts with ``s`` if ``prefix``, else equal to it; ``s`` is not empty."""
        owners, offsets = self._order or self._suffix_group(s[0])

        def suffix(i: int) -> str:
            return self.term(owners[i])[offsets[i] :]

        lo, count = self._run(len(owners), suffix, s, prefix=prefix)
        return owners[lo : lo + count]

    def _suffix_group(self, first: str) -> tuple[Sequence[int], Sequence[int]]:
        """(owners, offsets) of the suffixes that start with the character ``first``, in
        order: suffix i is ``term(owners[i])[offsets[i]:]``. Put in order on first use,
        one first character at a time: a lookup waits only for its own group (every
        suffix at once took ~0.1 s a segment of 40,000 reports, and memory of them all)."""
        found = self._groups.get(first)
        if found is None:
            owners, offsets = self._suffixes_at(np.flatnonzero(self._codes() == ord(first)))
            found = self._groups[first] = (array("I", owners), array("I", offsets))
        return found

    def _codes(self) -> npt.NDArray[np.uint32]:
        """The joined terms' code points (made once)."""
        if self._code_points is None:
            self._code_points = np.frombuffer(self.joined.encode("utf-32-le"), dtype=np.uint32)
        return self._code_points

    def _suffixes_at(self, at: npt.NDArray[np.intp]) -> tuple[list[int], list[int]]:
        """The suffixes starting at these places of the joined terms, in order: the term
        each ends and where it starts in it."""
        joined = self.joined
        starts = np.frombuffer(self.starts, dtype=np.uint64).astype(np.int64)
        owners = np.searchsorted(starts, at, side="right") - 1
        ends = np.append(starts[1:] - 1, len(joined) - 1)[owners]
        suffixes = list(map(joined.__getitem__, map(slice, at.tolist(), ends.tolist())))
        order = sorted(range(len(suffixes)), key=suffixes.__getitem__)
        return owners[order].tolist(), (at - starts[owners])[order].tolist()
