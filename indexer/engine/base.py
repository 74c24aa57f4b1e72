"""The engine protocol: what trove's searches and its indexer ask of a search engine.

A collection's index is a set of immutable segments. Documents are numbered within a
segment (0 .. ``doc_count_all`` - 1, deleted ones included: ``deleted`` says which);
globally, a document's number is its segment's ``base`` plus its own.

Searches ask, per segment, for a field's terms in order (a ``Lexicon``), a term's postings
in blocks (document numbers, frequencies, and the per-posting values of fields whose
postings carry them), and a document's column values; per snapshot, for BM25F top-k of a
ranked query, the documents a ranked query matches, and stored fields. Nothing here names
how an engine stores any of it.

An engine also writes: the store (indexer/store.py) plans what changes and hands the plan
to the engine's writer session for one commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from indexer.engine.fragments import FragmentTops
from indexer.engine.lexicon import Lexicon
from indexer.engine.pairs import CjkPairs
from indexer.engine.sequences import TokenSequences
from indexer.engine.term_tops import TermTops

# A term's postings as arrays: document numbers (ascending) and the term's frequencies.
Frequencies = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]


class Block(NamedTuple):
    """One block of a term's postings, document numbers ascending.

    Deleted documents may be in it: callers drop them (``Segment.deleted``)."""

    ids: Iterator[int]
    weights: Iterable[float]  # one per posting: the term's frequency in the document
    values: Sequence[bytes] | None  # per posting, for fields whose postings carry values


def joined_values(values: Sequence[bytes]) -> bytes:
    """A block's values in one bytes, to search them all at once (an engine may keep
    them so already, as a ``data`` attribute)."""
    data = getattr(values, "data", None)
    return data if isinstance(data, bytes) else b"".join(values)


class Segment(Protocol):
    """One immutable segment of a collection's index."""

    @property
    def id(self) -> str:
        """Names the segment while it lives (what derived data is cached under)."""
        ...

    @property
    def doc_count_all(self) -> int:
        """How many documents it numbers, deleted ones included."""
        ...

    @property
    def deleted(self) -> frozenset[int]:
        """The numbers of its deleted documents."""
        ...

    @property
    def block_size(self) -> int:
        """At most how many postings one block of ``blocks`` holds (what reading a term's
        postings within a few documents costs is counted in blocks)."""
        ...

    def lexicon(self, field: str) -> Lexicon:
        """The field's terms in code point order (made once per segment)."""
        ...

    def blocks(self, field: str, term: int, within: Sequence[int] | None = None) -> Iterator[Block]:
        """The postings of term number ``term`` of ``lexicon(field)``; with ``within``
        (sorted document numbers), at least the blocks that may hold one of them."""
        ...

    def frequencies(self, field: str, term: int) -> Frequencies:
        """Every posting of term number ``term`` of ``lexicon(field)`` as two arrays: the
        document numbers, ascending (deleted ones included, as in ``blocks``), and the
        term's frequency in each; what ``blocks`` gives, without an object per posting."""
        ...

    def docs_with(self, field: str, terms: Iterable[str]) -> set[int]:
        """The live documents holding any of the terms (a number field's terms are its
        values in decimal)."""
        ...

    def bytes_column(self, name: str) -> BytesColumn:
        """A column of byte strings, one per document."""
        ...

    def int_column(self, name: str) -> Sequence[int]:
        """A column of integers, one per document (made once per segment)."""
        ...

    def fragment_tops(self) -> FragmentTops | None:
        """The documents that hold each short fragment most, if the segment keeps them
        (indexer/engine/fragments.py); None if it does not, or cannot read them."""
        ...

    def term_tops(self) -> TermTops | None:
        """The documents that hold each common term most, if the segment keeps them
        (indexer/engine/term_tops.py); None if it does not, or cannot read them."""
        ...

    def cjk_pairs(self) -> CjkPairs | None:
        """Each pair of CJK characters the documents hold, with the documents holding it
        and how often, if the segment keeps them (indexer/engine/pairs.py); None if it
        does not, or cannot read them."""
        ...

    def token_sequences(self) -> TokenSequences | None:
        """Every document's tokens in order, as codes, if the segment keeps them
        (indexer/engine/sequences.py); None if it does not, or cannot read them."""
        ...

    def stored(self, doc: int) -> Mapping[str, Any]:
        """A document's stored fields."""
        ...

    def live_stored(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """(number, stored fields) of every live document."""
        ...


class BytesColumn(Protocol):
    def value(self, doc: int) -> bytes: ...

    def size(self, doc: int) -> int:
        """The length of a document's value, without reading it."""
        ...

    def sizes(self) -> Sequence[int]:
        """The length of every document's value, by document number."""
        ...

    def total(self) -> int:
        """The length of all the values (made once per segment)."""
        ...

    def joined(self, first: int, stop: int) -> bytes:
        """The values of documents ``first`` .. ``stop`` - 1, one after another (one read
        where the engine keeps them so)."""
        ...


# ---- ranked queries (BM25F), as plain data


@dataclass(frozen=True)
class TermClause:
    """A term of a field; ``boost`` multiplies its score."""

    field: str
    text: str
    boost: float = 1.0


@dataclass(frozen=True)
class PhraseClause:
    """Terms of a field in a row."""

    field: str
    words: tuple[str, ...]
    boost: float = 1.0


@dataclass(frozen=True)
class AnyOf:
    """Matches where any clause does; scores the sum of those that match."""

    clauses: tuple[Ranked, ...]


@dataclass(frozen=True)
class AllOf:
    """Matches where every clause does; scores their sum."""

    clauses: tuple[Ranked, ...]


@dataclass(frozen=True)
class Boosted:
    """Matches where ``required`` does; ``optional`` adds its score where it also matches."""

    required: Ranked
    optional: Ranked


Ranked = TermClause | PhraseClause | AnyOf | AllOf | Boosted


class Scored(NamedTuple):
    doc: int  # global document number
    score: float


class Snapshot(Protocol):
    """A collection's index as of one commit."""

    @property
    def generation(self) -> int:
        """Grows with every commit (and across rebuilds)."""
        ...

    @property
    def stamp(self) -> object:
        """Equal for two snapshots only if they hold the same documents (what data
        derived from a snapshot is kept under)."""
        ...

    @property
    def committed(self) -> float:
        """When what the snapshot shows was committed (or, for an engine that reads
        the files, read), in seconds since the epoch."""
        ...

    def segments(self) -> Sequence[tuple[Segment, int]]:
        """Each segment with its base (the global number of its document 0)."""
        ...

    def stored(self, doc: int) -> Mapping[str, Any]:
        """A document's stored fields, by global number."""
        ...

    def file_state(self, file: str) -> tuple[int, int] | None:
        """(mtime_ns, size) of a source file (its path relative to the source folder) as
        the commit recorded it; None if the commit holds no record of it."""
        ...

    def top(self, query: Ranked, limit: int, allowed: set[int] | None = None) -> list[Scored]:
        """The ``limit`` best live documents by BM25F (among ``allowed``, global numbers,
        if given), best first."""
        ...

    def matching(self, query: Ranked) -> set[int]:
        """Every live document the query matches (global numbers)."""
        ...


@dataclass(frozen=True)
class ReadTarget:
    """What an engine's reader reads: a collection's index, as its store opens it, or, for
    an engine that keeps no index, the collection's files."""

    # The index as last committed (None: never built, or to be rebuilt).
    open_index: Callable[[], Any]
    # Whether the index on disk is still of the schema version this process reads.
    current: Callable[[], bool]
    root: Path | None  # the collection's folder
    source: Any  # the collection's Source (indexer/sources/base.py)
    max_bytes: int  # of a file, read at most


class Reader(Protocol):
    """The query side's handle on one collection's index, kept open by a process."""

    @property
    def generation(self) -> int:
        """The generation of the latest snapshot given (-1 if none)."""
        ...

    def snapshot(self) -> AbstractContextManager[Snapshot | None]:
        """The latest commit (None: the index was never built or must be rebuilt); new
        commits by other processes show on the next call."""
        ...

    def close(self) -> None: ...
