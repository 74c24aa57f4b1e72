"""What search_elog derives from the index and keeps between queries, in the context's
memo: postings by term, the entries' times and days, titles and bodies by segment, the
term lists regexes are narrowed with, and the allowed filter values.

Each is kept under what it was derived from (the index's ``version``, a segment's id:
query/indexes.py's Derived and PerSegment; the config file's modification time) and
made again when that changes.
"""

from __future__ import annotations

import bisect
import heapq
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from query.context import QueryContext
from query.elog.index_access import ElogIndex
from query.indexes import Derived, PerSegment
from query.neighbours import Neighbours, of_lexicons

# The fields whose words a typo is corrected to.
WORD_FIELDS = ("title", "body", "attributes")
# Doc numbers kept in the posting cache (4 bytes each).
POSTING_CACHE_IDS = 4_000_000


@dataclass(frozen=True)
class FoldedTerms:
    """The plain terms of one field, ASCII-folded, for finding terms holding a literal
    (query/elog/regex_candidates.py makes them)."""

    joined: str  # one term a line, "\n" at both ends
    spelled: dict[str, list[str]]  # a folded term: the index terms it stands for, if others


class ElogCache:
    """What search_elog derives from the index and keeps between queries."""

    def __init__(self) -> None:
        # Per segment: {doc number in the segment: (title, body)}
        self.texts: PerSegment[dict[int, tuple[str, str]]] = PerSegment()
        # {field: its terms} for finding terms holding a literal
        self.folded_terms: Derived[dict[str, FoldedTerms]] = Derived()
        self.table: Derived[DocTable] = Derived()
        self.allowed: Derived[dict[str, list[str]]] = Derived()
        # The words of title, body and attributes (letters only) a typo is corrected to,
        # and per segment and field, those words by their deletion neighbourhoods
        self.words: Derived[list[str]] = Derived()
        self.neighbours: PerSegment[Neighbours] = PerSegment()
        self.postings = PostingCache()


def elog_cache(ctx: QueryContext) -> ElogCache:
    """The process's ELOG cache, kept on the context's memo."""
    return ctx.kept("elog", ElogCache)


class PostingCache:
    """Doc numbers per (field, term) of one index version, least recently used dropped
    first.

    Reading a common word's postings costs milliseconds on every query; kept as 4-byte
    arrays, a set is rebuilt from one in C for a fraction of that.
    """

    def __init__(self, max_ids: int = POSTING_CACHE_IDS) -> None:
        self.max_ids = max_ids
        self.version: object = None
        self.size = 0
        self.lock = threading.Lock()
        self.entries: OrderedDict[tuple[str, str], array[int]] = OrderedDict()

    def docs(self, index: ElogIndex, name: str, text: str) -> array[int]:
        key = (name, text)
        version = index.version
        with self.lock:
            if self.version != version:
                self.version, self.size = version, 0
                self.entries.clear()
            found = self.entries.get(key)
            if found is not None:
                self.entries.move_to_end(key)
                return found
        ids = array("I", index.docs_with_term(name, text))
        with self.lock:
            if self.version == version and key not in self.entries:
                self.entries[key] = ids
                self.size += len(ids)
                while self.size > self.max_ids and len(self.entries) > 1:
                    _, dropped = self.entries.popitem(last=False)
                    self.size -= len(dropped)
        return ids


class DocTable:
    """Every entry's doc number, time and day, for date ranges and newest-first order.

    Built from the sortable columns once per index version (about 0.1 s at 30k entries);
    a numeric range query expands into many terms per segment and cost more than that on
    every query.
    """

    def __init__(self, index: ElogIndex) -> None:
        live = index.docs_with_term("kind", "doc")
        stamps = index.int_column("timestamp")
        days = index.int_column("day")
        self.live = set(live)
        self.stamp = {d: stamps[d] for d in live}
        by_day = sorted((days[d], d) for d in live)
        self.days = [day for day, _ in by_day]
        self.day_docs = [d for _, d in by_day]
        by_time = sorted((self.stamp[d], d) for d in live)
        self.times = [t for t, _ in by_time]
        self.time_docs = [d for _, d in by_time]

    def in_days(self, low: int | None, high: int | None) -> set[int]:
        i = 0 if low is None else bisect.bisect_left(self.days, low)
        j = len(self.days) if high is None else bisect.bisect_right(self.days, high)
        return set(self.day_docs[i:j])

    def in_times(self, low: int | None, high: int | None) -> set[int]:
        i = 0 if low is None else bisect.bisect_left(self.times, low)
        j = len(self.times) if high is None else bisect.bisect_right(self.times, high)
        return set(self.time_docs[i:j])

    def newest(self, docs: Iterable[int], n: int) -> list[int]:
        stamp = self.stamp
        return heapq.nlargest(n, docs, key=lambda d: (stamp[d], d))


def indexed_words(index: ElogIndex, cache: ElogCache) -> list[str]:
    """Every word (letters only) of titles, bodies and attribute values, in order, once:
    what a word no entry holds is corrected to."""

    def make() -> list[str]:
        merged = heapq.merge(*(index.field_terms(f) for f in WORD_FIELDS))
        return list(dict.fromkeys(t for t in merged if t.isalpha()))

    return cache.words.get(index.version, make)


def indexed_neighbours(index: ElogIndex, cache: ElogCache) -> list[Neighbours]:
    """The Neighbours of the words of titles, bodies and attributes, per segment and
    field (query/neighbours.py): ``indexed_words`` without a scan."""
    return of_lexicons(
        cache.neighbours,
        [
            (f"{segid}:{field}", lex)
            for field in WORD_FIELDS
            for segid, lex in index.lexicons(field)
        ],
    )


def doc_table(index: ElogIndex, cache: ElogCache) -> DocTable:
    """The index version's DocTable, made on first use."""
    return cache.table.get(index.version, lambda: DocTable(index))


class Texts:
    """Titles and bodies by global doc number, cached per segment across queries."""

    def __init__(self, index: ElogIndex, cache: ElogCache) -> None:
        self.segments: list[
            tuple[Callable[[int], Mapping[str, Any]], dict[int, tuple[str, str]]]
        ] = []
        self.bases: list[int] = []
        for segment in index.segments():
            store = cache.texts.get(segment.id, dict)
            self.segments.append((segment.stored_fields, store))
            self.bases.append(segment.base)
        cache.texts.keep_only(segment.id for segment in index.segments())

    def get(self, docnum: int) -> tuple[str, str]:
        i = bisect.bisect_right(self.bases, docnum) - 1
        stored_fields, store = self.segments[i]
        local = docnum - self.bases[i]
        texts = store.get(local)
        if texts is None:
            fields = stored_fields(local)
            texts = (fields.get("title") or "", fields.get("body") or "")
            store[local] = texts
        return texts
