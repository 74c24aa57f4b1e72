"""search_reports' forgiving tiers below `exact` and `words`: `related` and `fuzzy`.

`related`: the reports holding some of the query's content words or words of the same
stem (a CJK run counts by its pairs of characters), ranked by BM25 over the stems (k1
1.2, b 0.75; a report's length is the size of its lower-cased text), then newest; a
query of few words ranks the reports holding more of them first. `fuzzy`: the words no report holds, neither whole
nor by stem, and the closest indexed words to each (query/forgiving.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import Any, Protocol

from indexer.engine.base import Segment
from indexer.engine.lexicon import Lexicon
from query.forgiving import MAX_CANDIDATES, closest, family, is_cjk
from query.indexes import PerSegment
from query.neighbours import Neighbours, closest_near, first_holder, of_lexicons

K1 = 1.2
B = 0.75


class TierSegment(Protocol):
    """What the tiers need of a segment of the reports index (query/reports/counting.py's)."""

    segment: Segment
    deleted: frozenset[int]

    def lexicon(self, fieldname: str = "content") -> Lexicon: ...

    def command_docs(self, command: str) -> list[int]: ...

    def occurrences(
        self, lowered: str, command: str | None, top: int | None = None
    ) -> dict[int, float]: ...

    def postings(
        self, k: int, within: Sequence[int] | None
    ) -> Iterator[tuple[Iterator[int], Iterable[float], Any]]: ...


class Families:
    """Each query word's stem family in each segment (term numbers), made once a search:
    the unknown words, the frequencies and the excerpts all ask for it."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, str], list[int]] = {}

    def of(self, s: TierSegment, word: str) -> list[int]:
        key = (id(s), word)  # the segments live as long as the search
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = family(s.lexicon(), word)
        return found


@dataclass(frozen=True)
class Stats:
    """What BM25 needs of the whole index: live reports and their mean text size."""

    reports: int
    mean_size: float


def stats(segments: Sequence[TierSegment]) -> Stats:
    sizes = 0
    count = 0
    for s in segments:
        live = s.segment.docs_with("kind", ["doc"])
        texts = s.segment.bytes_column("text")
        sizes += sum(map(texts.size, live))
        count += len(live)
    return Stats(count, sizes / count if count else 1.0)


@dataclass
class Related:
    """Per report of a segment: how many query words it holds, its BM25, the occurrences."""

    matched: dict[int, int]
    score: dict[int, float]
    occurrences: dict[int, float]


def word_frequencies(
    s: TierSegment, word: str, command: str | None, families: Families
) -> dict[int, float]:
    """{live report: occurrences of the word or its stem family} in one segment."""
    if is_cjk(word):
        return s.occurrences(word, command)
    within = None if command is None else s.command_docs(command)
    if within == []:
        return {}
    acc: dict[int, float] = {}
    for k in families.of(s, word):
        part: dict[int, float] = {}
        for ids, weights, _ in s.postings(k, within):
            part.update(zip(ids, weights, strict=False))
        if len(acc) < len(part):
            acc, part = part, acc
        for d, w in part.items():
            acc[d] = acc.get(d, 0.0) + w
    if within is not None:
        inside = set(within)
        acc = {d: w for d, w in acc.items() if d in inside}
    for d in s.deleted.intersection(acc):
        del acc[d]
    return acc


def related(
    segments: Sequence[TierSegment],
    qwords: list[str],
    command: str | None,
    st: Stats,
    families: Families,
    weights: Mapping[str, int] | None = None,
) -> list[Related]:
    """The related tier's reports of each segment (in the order of ``segments``); a word's
    BM25 counts ``weights[word]`` times (how often the query says it)."""
    per_word = [[word_frequencies(s, w, command, families) for s in segments] for w in qwords]
    times = [1 if weights is None else weights.get(w, 1) for w in qwords]
    dfs = [sum(map(len, freqs)) for freqs in per_word]
    out = []
    for i, s in enumerate(segments):
        size = s.segment.bytes_column("text").size
        held = [freqs[i] for freqs in per_word]
        base, per_byte = K1 * (1 - B), K1 * B / st.mean_size
        norms = {d: base + per_byte * size(d) for d in set().union(*held)}
        score: dict[int, float] = {}
        occurrences: dict[int, float] = {}
        for tf_of, df, n in zip(held, dfs, times, strict=True):
            if not tf_of:
                continue
            gain = n * math.log(1 + (st.reports - df + 0.5) / (df + 0.5)) * (K1 + 1)
            score = _added(score, {d: gain * tf / (tf + norms[d]) for d, tf in tf_of.items()})
            occurrences = _added(occurrences, dict(tf_of))
        matched = dict(Counter(chain.from_iterable(held)))
        out.append(Related(matched, score, occurrences))
    return out


def _added(a: dict[int, float], b: dict[int, float]) -> dict[int, float]:
    """``a`` and ``b`` added key by key, in whichever is larger (both are the caller's)."""
    if len(a) < len(b):
        a, b = b, a
    get = a.get
    for d, v in b.items():
        a[d] = get(d, 0.0) + v
    return a


def unknown_words(
    segments: Sequence[TierSegment], qwords: list[str], families: Families
) -> list[str]:
    """The words no report holds, neither whole nor by stem (CJK pairs: not held)."""
    unknown = []
    for w in qwords:
        if is_cjk(w):
            held = any(s.occurrences(w, None, 1) for s in segments)
        else:
            held = any(families.of(s, w) for s in segments)
        if not held:
            unknown.append(w)
    return unknown


def words_by_length(segments: Sequence[TierSegment]) -> dict[int, list[str]]:
    """The index's words of letters, each once, by length: what typos are compared with."""
    by_length: dict[int, dict[str, None]] = {}
    for s in segments:
        for term in s.lexicon().terms():
            if term.isalpha():
                by_length.setdefault(len(term), {})[term] = None
    return {n: list(terms) for n, terms in by_length.items()}


def neighbours(memo: dict[str, Any], segments: Sequence[TierSegment]) -> list[Neighbours]:
    """Each segment's Neighbours (query/neighbours.py), made on first use and kept in
    ``memo`` (a QueryContext's) while the segment lives."""
    kept: PerSegment[Neighbours] = memo.setdefault("reports.neighbours", PerSegment())
    return of_lexicons(kept, [(s.segment.id, s.lexicon()) for s in segments])


def corrections(
    by_length: dict[int, list[str]],
    unknown: list[str],
    near: Sequence[Neighbours] | None = None,
) -> dict[str, list[str]]:
    """For each unknown word, the closest indexed words (best first; none for some): by
    scanning ``by_length``, or the same words from ``near``, the Neighbours of the
    segments ``by_length`` was made from, in their order (query/neighbours.py)."""
    if near is None:
        return {w: closest(w, _window(by_length, w)) for w in unknown}
    first = first_holder(near)

    def order(term: str) -> tuple[int, int, str]:  # the order of ``_window``
        return len(term), first(term), term

    return {w: closest_near(w, near, order, partial(_last_kept, by_length, w)) for w in unknown}


def _window(by_length: dict[int, list[str]], word: str) -> Iterator[str]:
    """The words a typo is compared with: those of 2 letters fewer to 2 more."""
    n = len(word)
    return chain.from_iterable(by_length.get(m, ()) for m in range(n - 2, n + 3))


def _last_kept(by_length: dict[int, list[str]], word: str) -> str | None:
    """The last word of ``_window`` that ``closest`` keeps in its pool, which ends at
    MAX_CANDIDATES words other than the word itself (None: it keeps them all)."""
    left = MAX_CANDIDATES
    n = len(word)
    for m in range(n - 2, n + 3):
        terms = by_length.get(m, [])
        skip = terms.index(word) if m == n and word in terms else len(terms)
        if left <= len(terms) - (skip < len(terms)):
            return terms[left - 1 if left - 1 < skip else left]
        left -= len(terms) - (skip < len(terms))
    return None
