"""The Whoosh engine's read side: snapshots, segments, postings, columns, BM25F top-k.

A ``WhooshReader`` keeps one searcher per collection open and refreshes it when another
process committed (a new searcher costs tens of milliseconds; a reused one nothing).
Everything a search derives from a segment that never changes (its lexicons, where each
column value is, its integer columns) is kept per segment id until the segment is merged
away.

Postings and columns are read from Whoosh 2.7.4's files directly, past its matchers and
column readers, which cost several times more (see ``WhooshSegment.blocks``).
"""

from __future__ import annotations

import logging
import os
import struct
import threading
import time
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from io import BytesIO
from itertools import accumulate, repeat
from pickle import Unpickler, loads
from typing import Any, TypeVar

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3LeafMatcher
from whoosh.columns import NumericColumn, VarBytesColumn
from whoosh.filedb.compound import SubFile
from whoosh.index import Index
from whoosh.matching.wrappers import FilterMatcher
from whoosh.reading import IndexReader, TermNotFound
from whoosh.searching import Searcher

from indexer.engine.base import (
    Block,
    Frequencies,
    Ranked,
    Scored,
)
from indexer.engine.fragments import FragmentTops
from indexer.engine.lexicon import Lexicon
from indexer.engine.pairs import CjkPairs
from indexer.engine.sequences import TokenSequences
from indexer.engine.term_tops import TermTops
from indexer.engine.whoosh.codec import BLOCK_SIZE
from indexer.engine.whoosh.frequencies import (
    KeptFrequencies,
    inlined_frequencies,
    read_frequencies,
)
from indexer.engine.whoosh.pairs import pairs_file_name, read_pairs
from indexer.engine.whoosh.ranking import LuceneBM25F, whoosh_query
from indexer.engine.whoosh.schema import FILE_KEY_PREFIX, FILE_STAT, KIND_FILE, unpack_stat
from indexer.engine.whoosh.sequences import read_sequences, sequences_file_name
from indexer.engine.whoosh.storage import INDEX_NAME
from indexer.engine.whoosh.suffixes import read_suffixes, suffixes_field, suffixes_file_name
from indexer.engine.whoosh.term_tops import read_term_tops, term_tops_file_name
from indexer.engine.whoosh.terms import read_terms
from indexer.engine.whoosh.tops import read_tops, tops_file_name
from indexer.errors import DamagedIndex

log = logging.getLogger(__name__)
T = TypeVar("T")


# File records a segment's memo keeps (about 150 bytes each), looked up by path.
FILE_RECORDS_KEPT = 65536


class _SegmentMemo:
    """What is derived from one (immutable) segment and kept between queries."""

    def __init__(self) -> None:
        self.lexicons: dict[str, tuple[Lexicon, array[int], array[int]]] = {}
        self.int_columns: dict[str, list[int]] = {}
        self.deleted: tuple[int, frozenset[int]] = (0, frozenset())
        # Where each document's value is in a bytes column: {column: (offsets, lengths)}.
        self.layouts: dict[str, tuple[Sequence[int], Sequence[int]]] = {}
        self.totals: dict[str, int] = {}  # a bytes column's values' length
        # Each kind of derived data, read once: {kind: (what was read, or None,)}.
        self.derived: dict[str, tuple[Any]] = {}
        # File records looked up: (mtime_ns, size, doc) by path, None where it has none.
        self.file_records: dict[str, tuple[int, int, int] | None] = {}
        self.file_count: int | None = None  # how many file records it holds
        self.frequencies = KeptFrequencies()  # of its terms of many postings
        self.lock = threading.Lock()


def segment_of(reader: IndexReader, folder: str) -> WhooshSegment:
    """A segment of an index open for writing, read with a memo of its own."""
    return WhooshSegment(reader, _SegmentMemo(), folder)


class WhooshSegment:
    """One segment of a Whoosh index (a leaf reader), with its memo."""

    block_size = BLOCK_SIZE

    def __init__(self, reader: IndexReader, memo: _SegmentMemo, folder: str) -> None:
        self.reader = reader
        self.memo = memo
        self.folder = folder
        segment = reader.segment()
        self.id: str = segment.segment_id()
        self.doc_count_all: int = reader.doc_count_all()
        count = segment.deleted_count()
        if memo.deleted[0] != count:  # deletions only ever grow within a segment
            memo.deleted = (count, frozenset(segment.deleted_docs()))
        self.deleted: frozenset[int] = memo.deleted[1]

    def _lexicon(self, field: str) -> tuple[Lexicon, array[int], array[int]]:
        found = self.memo.lexicons.get(field)
        if found is None and (read := read_terms(self.reader._terms, field)) is not None:
            lexicon = Lexicon.from_joined(read.joined, read.starts, read.doc_counts)
            found = self.memo.lexicons[field] = (lexicon, read.offsets, read.lengths)
            self._use_suffixes(field, lexicon)
        if found is None:
            terms = []
            offsets = array("q")  # -1: postings inlined in the term info
            lengths = array("Q")
            doc_counts = array("Q")
            for (name, tbytes), info in self.reader._terms.items_from(field, b""):
                if name != field:
                    break
                terms.append(tbytes.decode("utf-8"))
                if info.is_inlined():
                    offset, length = -1, 0
                else:
                    offset, length = info.extent()
                    if isinstance(length, tuple):  # Whoosh 2.7.4 unpacks it as a 1-tuple
                        (length,) = length
                offsets.append(offset)
                lengths.append(length)
                doc_counts.append(info.doc_frequency())
            found = self.memo.lexicons[field] = (Lexicon(terms, doc_counts), offsets, lengths)
            self._use_suffixes(field, found[0])
        return found

    def _use_suffixes(self, field: str, lexicon: Lexicon) -> None:
        """The lexicon bisects in the suffixes in order the segment keeps of its field, if
        it keeps them (and they are that lexicon's)."""
        if field != suffixes_field(self.reader.schema):
            return
        order = self._derived(
            "suffixes",
            read_suffixes,
            suffixes_file_name,
            "words inside others are looked up as before",
        )
        if order is not None and order.of(lexicon):
            lexicon.use_suffix_order(order.owners, order.offsets)

    def lexicon(self, field: str) -> Lexicon:
        return self._lexicon(field)[0]

    def fragment_tops(self) -> FragmentTops | None:
        """Read once, from the file the segment's writer left beside it (inverting.py);
        None if there is none, or it is damaged."""
        return self._derived(
            "tops", read_tops, tops_file_name, "short fragments are counted in the texts"
        )

    def cjk_pairs(self) -> CjkPairs | None:
        """Read once, from the file the segment's writer left beside it (inverting.py);
        None if there is none, or it is damaged."""
        return self._derived(
            "pairs", read_pairs, pairs_file_name, "CJK pairs are counted in the texts"
        )

    def term_tops(self) -> TermTops | None:
        """Opened (its terms read and checked) once, from the file the segment's writer
        left beside it (inverting.py); None if there is none, or it is damaged."""
        return self._derived(
            "term tops", read_term_tops, term_tops_file_name, "words are counted as before"
        )

    def token_sequences(self) -> TokenSequences | None:
        """Read (mapped and checked) once, from the file the segment's writer left beside
        it (inverting.py); None if there is none, or it is damaged."""
        return self._derived(
            "sequences",
            read_sequences,
            sequences_file_name,
            "queries of several words are counted without it",
        )

    def _derived(
        self,
        kind: str,
        read: Callable[[str, str, int], T | None],
        name: Callable[[str], str],
        meanwhile: str,
    ) -> T | None:
        """The segment's derived data of ``kind`` (derived.py), read from its file the
        first time it is asked for (once: a search that asks meanwhile waits for it);
        None if there is none, or it is damaged (said in the log, with what searches do
        ``meanwhile``)."""
        found = self.memo.derived.get(kind)
        if found is None:
            with self.memo.lock:
                found = self.memo.derived.get(kind)
                if found is None:
                    found = self.memo.derived[kind] = (self._read_derived(read, name, meanwhile),)
        return found[0]

    def _read_derived(
        self, read: Callable[[str, str, int], T | None], name: Callable[[str], str], meanwhile: str
    ) -> T | None:
        found = read(self.folder, self.id, self.doc_count_all)
        if found is None and os.path.exists(path := os.path.join(self.folder, name(self.id))):
            log.warning(
                "%s: damaged; in its segment %s until the next reconcile writes it anew "
                "(`trove reindex`, or the daemon's start)",
                path,
                meanwhile,
            )
        return found

    def blocks(self, field: str, term: int, within: Sequence[int] | None = None) -> Iterator[Block]:
        """Reads Whoosh 2.7.4's postings file directly, a whole posting list at once: its
        matcher reads each block header with many small reads and costs several times
        more. The document numbers come as an iterator, worked out from the stored
        differences as it is read: where no posting of a block is wanted, they are not.
        Whoosh stores the weights as None when all are 1, one float when all are equal:
        they are spread one per posting."""
        lex, offsets, lengths = self._lexicon(field)
        offset = offsets[term]
        if offset < 0:
            info = self.reader._terms.term_info(field, lex.term(term).encode("utf-8"))
            ids, weights, values = info.inlined_postings()
            yield Block(iter(ids), _spread(weights), values)
            return
        data = self.reader._terms._postfile.get(offset, lengths[term])
        if data[:4] != WHOOSH3_HEADER_MAGIC:
            raise DamagedIndex(f"unexpected postings of {field}:{lex.term(term)!r}")
        stream = BytesIO(data)
        pos, low = 4, -1
        while True:
            # A block: its length (negative for the last), a pickled info tuple, the data.
            size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
            stream.seek(pos + 4)
            _count, high, _maxweight, compressed, _, _ = Unpickler(stream).load()
            end = pos + 4 + abs(size)
            if within is None or bisect_right(within, high) > bisect_right(within, low):
                block = data[stream.tell() : end]
                ids, weights, values = loads(zlib.decompress(block) if compressed else block)
                yield Block(accumulate(ids), _spread(weights), values)
            if size < 0 or end >= len(data):
                return
            pos, low = end, high

    def frequencies(self, field: str, term: int) -> Frequencies:
        """Read as ``blocks`` reads them, into arrays; a term of many postings is kept
        (frequencies.py)."""
        lex, offsets, lengths = self._lexicon(field)
        offset = offsets[term]
        if offset < 0:
            info = self.reader._terms.term_info(field, lex.term(term).encode("utf-8"))
            ids, weights, _ = info.inlined_postings()
            return inlined_frequencies(ids, weights)

        def read() -> Frequencies:
            data = self.reader._terms._postfile.get(offset, lengths[term])
            return read_frequencies(data, WHOOSH3_HEADER_MAGIC)

        return self.memo.frequencies.get(field, term, lex.doc_counts[term], read)

    def docs_with(self, field: str, terms: Iterable[str]) -> set[int]:
        docs: set[int] = set()
        for term in terms:
            try:
                matcher = self.reader.postings(field, term)
            except TermNotFound:
                continue
            docs.update(_all_ids(matcher))
        return docs

    def bytes_column(self, name: str) -> _BytesColumn:
        return _BytesColumn(self.reader, self.memo, name)

    def file_records(self) -> int:
        """How many file records the segment holds (deleted ones included; looked up
        once)."""
        if self.memo.file_count is None:
            self.memo.file_count = int(self.reader.doc_frequency("kind", KIND_FILE))
        return self.memo.file_count

    def file_record(self, file: str) -> tuple[int, int, int] | None:
        """A file's record in this segment, if it has one: (mtime_ns, size, document
        number), looked up by its key and read from the fstat column, then kept (at most
        FILE_RECORDS_KEPT per segment; the record may since have been deleted)."""
        kept = self.memo.file_records
        if file in kept:
            return kept[file]
        found = None
        docs = self.docs_with("key", [FILE_KEY_PREFIX + file])
        if docs:
            doc = min(docs)
            if self.reader.has_column(FILE_STAT):
                mtime_ns, size = unpack_stat(self.bytes_column(FILE_STAT).value(doc))
            else:
                mtime_ns, size = self.reader.stored_fields(doc)["fstate"][:2]
            found = (int(mtime_ns), int(size), doc)
        with self.memo.lock:
            if len(kept) >= FILE_RECORDS_KEPT:
                kept.clear()
            kept[file] = found
        return found

    def int_column(self, name: str) -> Sequence[int]:
        values = self.memo.int_columns.get(name)
        if values is None:
            if self.reader.has_column(name):
                values = _numbers(self.reader.column_reader(name), self.doc_count_all)
            else:
                values = [0] * self.doc_count_all
            self.memo.int_columns[name] = values
        return values

    def stored(self, doc: int) -> Mapping[str, Any]:
        return self.reader.stored_fields(doc)

    def live_stored(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        for doc in self.reader.all_doc_ids():
            yield doc, self.reader.stored_fields(doc)


def _numbers(column: Any, doc_count: int) -> list[int]:
    """Every value of a number column: a NumericColumn's fixed-width values read in one
    go and translated once per distinct value (Whoosh reads and translates each value
    on its own: 0.6 s for 200,000 documents); any other column through Whoosh."""
    raw = getattr(column, "raw_column", lambda: None)()
    translate = getattr(column, "_translate", None)
    if not isinstance(raw, NumericColumn.Reader) or translate is None:
        return list(column)
    count = min(raw._count, doc_count)
    data = raw._dbfile.get(raw._basepos, raw._fixedlen * count)
    stored = list(struct.unpack(f"!{count}{raw._typecode}", data))
    stored += [raw._default] * (doc_count - count)
    table = {v: translate(v) for v in set(stored)}
    return list(map(table.__getitem__, stored))


def _spread(weights: Any) -> Iterable[float]:
    if weights is None or isinstance(weights, float):
        return repeat(weights or 1.0)
    return weights


def _all_ids(matcher: Any) -> Iterable[int]:
    """A matcher's document numbers, a block at a time where Whoosh allows it.

    ``Matcher.all_ids`` steps one posting at a time in Python; a segment's postings
    are stored in blocks of ids, read here whole (about ten times faster).
    """
    excluded: Any = ()
    if isinstance(matcher, FilterMatcher) and matcher._exclude:  # deleted documents
        excluded = matcher._ids
        leaf = matcher.child
    else:
        leaf = matcher
    if not isinstance(leaf, W3LeafMatcher):
        return matcher.all_ids()
    leaf.reset()
    ids: list[int] = []
    while True:
        leaf._read_ids()
        ids.extend(leaf._ids)
        if leaf._lastblock:
            break
        leaf._goto(leaf._nextoffset)
    return [i for i in ids if i not in excluded] if excluded else ids


class _BytesColumn:
    """The values of a segment's column of byte strings.

    Reads each value with one pread from the segment's file, past Whoosh's column reader
    (which costs as much again); a column whose file is laid out otherwise is read
    through Whoosh. A segment none of whose documents has a value has no column (Whoosh
    writes none): every value is empty (a commit of file records only, a parallel build's
    last segments).
    """

    def __init__(self, reader: IndexReader, memo: _SegmentMemo, name: str) -> None:
        self._memo, self._name = memo, name
        self._fd = -1
        self._column: tuple[Any, int] | None = None
        if not reader.has_column(name):
            if name not in memo.layouts:
                none = array("I", bytes(4 * reader.doc_count_all()))
                memo.layouts[name] = (none, none)
            self.offsets, self.lengths = memo.layouts[name]
            return
        perdoc = reader._perdoc
        if name not in perdoc._colfiles:  # Whoosh keeps the column files it opened here
            perdoc._colfiles[name] = perdoc._get_column_file(name)
        colfile, start, length = perdoc._colfiles[name]
        if name not in memo.layouts:
            column = VarBytesColumn().reader(colfile, start, length, reader.doc_count_all())
            memo.layouts[name] = (column._offsets, column._lengths)
        self.offsets, self.lengths = memo.layouts[name]
        inner = getattr(colfile, "file", None)
        if isinstance(inner, SubFile) and hasattr(inner._file, "fileno"):
            self._fd, self._base = inner._file.fileno(), inner._offset + start
        elif inner is not None and hasattr(inner, "fileno"):
            self._fd, self._base = inner.fileno(), start
        self._column = colfile, start

    def size(self, doc: int) -> int:
        return int(self.lengths[doc])

    def sizes(self) -> Sequence[int]:
        return self.lengths

    def total(self) -> int:
        if (total := self._memo.totals.get(self._name)) is None:
            total = self._memo.totals[self._name] = sum(self.lengths)
        return total

    def value(self, doc: int) -> bytes:
        return self._read(self.offsets[doc], self.lengths[doc])

    def joined(self, first: int, stop: int) -> bytes:
        """One read: Whoosh's VarBytesColumn writes the values one after another."""
        if stop <= first:
            return b""
        start = self.offsets[first]
        return self._read(start, self.offsets[stop - 1] + self.lengths[stop - 1] - start)

    def _read(self, offset: int, length: int) -> bytes:
        if self._fd >= 0:
            return os.pread(self._fd, length, self._base + offset)
        if self._column is None:
            return b""
        colfile, start = self._column
        return colfile.get(start + offset, length)


class WhooshSnapshot:
    """A collection's index as one searcher sees it."""

    def __init__(self, searcher: Searcher, memos: dict[str, _SegmentMemo], folder: str) -> None:
        self.searcher = searcher
        self._memos = memos
        self._folder = folder
        self._segments: list[tuple[WhooshSegment, int]] | None = None
        self._with_records: list[WhooshSegment] | None = None  # file_state's, in order

    @property
    def generation(self) -> int:
        return self.searcher.reader().generation()

    @property
    def committed(self) -> float:
        """The commit's time: a commit writes its table of contents last (one stat; a
        table of contents gone meanwhile, replaced by a newer commit: now)."""
        toc = os.path.join(self._folder, f"_{INDEX_NAME}_{self.generation}.toc")
        try:
            return os.stat(toc).st_mtime
        except OSError:
            return time.time()

    def file_state(self, file: str) -> tuple[int, int] | None:
        """From the segment that holds the file's live record (its stored fields are not
        read: a page of hits asks for each of its files, and the lookups are kept). Each
        segment's lookup reads a term's postings (tens of us): only the segments holding
        file records are asked, those holding most first (a parallel build writes them
        all in two segments of its 17 at 1M)."""
        if self._with_records is None:  # (once a snapshot: a page asks for each hit)
            held = [(s.file_records(), s) for s, _base in self.segments()]
            self._with_records = [s for n, s in sorted(held, key=lambda pair: -pair[0]) if n]
        for segment in self._with_records:
            found = segment.file_record(file)
            if found is not None and found[2] not in segment.deleted:
                return found[0], found[1]
        return None

    @property
    def stamp(self) -> tuple[tuple[str, int], ...]:
        """Identifies what the snapshot sees: its segments and their deletions."""
        return tuple((s.id, len(s.deleted)) for s, _ in self.segments())

    def segments(self) -> Sequence[tuple[WhooshSegment, int]]:
        if self._segments is None:
            found = []
            for reader, base in self.searcher.reader().leaf_readers():
                if reader.segment() is None:  # an index without segments
                    continue
                segid = reader.segment().segment_id()
                memo = self._memos.get(segid)
                if memo is None:
                    memo = self._memos[segid] = _SegmentMemo()
                found.append((WhooshSegment(reader, memo, self._folder), base))
            self._segments = found
        return self._segments

    def stored(self, doc: int) -> Mapping[str, Any]:
        return self.searcher.stored_fields(doc)

    def top(self, query: Ranked, limit: int, allowed: set[int] | None = None) -> list[Scored]:
        hits = self.searcher.search(whoosh_query(query), limit=limit, filter=allowed)
        return [Scored(hit.docnum, hit.score) for hit in hits]

    def matching(self, query: Ranked) -> set[int]:
        return set(self.searcher.docs_for_query(whoosh_query(query)))


class WhooshReader:
    """One collection's searcher, kept open and refreshed (one per process and collection).

    ``open_index`` gives the index for reading (None: never built, or to be rebuilt);
    ``current_version`` whether the index on disk is still of the schema version this
    process reads (a refresh reuses the readers of unchanged segments, so only an index
    of the same version may be refreshed rather than reopened).
    """

    def __init__(
        self, open_index: Callable[[], Index | None], current_version: Callable[[], bool]
    ) -> None:
        self._open_index = open_index
        self._current_version = current_version
        # Held while a snapshot is used: a Whoosh searcher is not safe to share between
        # threads while it refreshes.
        self._lock = threading.RLock()
        self._index: Index | None = None
        self._searcher: Searcher | None = None
        self._generation = -1
        self._memos: dict[str, _SegmentMemo] = {}

    @contextmanager
    def snapshot(self) -> Iterator[WhooshSnapshot | None]:
        with self._lock:
            searcher = self._current()
            if searcher is None:
                yield None
                return
            assert self._index is not None
            snapshot = WhooshSnapshot(searcher, self._memos, self._index.storage.folder)
            yield snapshot
            live = {s.id for s, _ in snapshot.segments()}
            for segid in set(self._memos) - live:  # merged away
                del self._memos[segid]

    @property
    def generation(self) -> int:
        """The generation the current searcher reads (-1 if none)."""
        return self._generation

    def _current(self) -> Searcher | None:
        index = self._index
        if index is None:
            index = self._open_index()
            if index is None:
                return None
            self._index = index
        try:
            latest = index.latest_generation()
        except OSError:
            latest = -2
        searcher = self._searcher
        if searcher is not None and self._generation == latest:
            return searcher
        if searcher is not None and self._current_version():
            # Same schema: refresh, then close the old segment readers the new searcher
            # does not use (Whoosh's refresh looks its reusable readers up by another key
            # than it files them under: it closes only some of the others, and the rest
            # hold their files open until collected).
            old = [r for r, _ in searcher.reader().leaf_readers()]
            try:
                searcher = searcher.refresh()
            except (OSError, ValueError, EOFError):
                searcher = None
            else:
                kept = {id(r) for r, _ in searcher.reader().leaf_readers()}
                for reader in old:
                    if id(reader) not in kept and not getattr(reader, "is_closed", True):
                        reader.close()
                self._searcher = searcher
                self._generation = searcher.reader().generation()
                return searcher
        # Reopen: the index may have been rebuilt (another schema version) since we opened it.
        fresh = self._open_index()
        if fresh is None:
            self.close()
            return None
        self.close()
        self._index = fresh
        searcher = self._searcher = fresh.searcher(weighting=LuceneBM25F())
        self._generation = searcher.reader().generation()
        return searcher

    def close(self) -> None:
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
            self._searcher = None
            self._index = None
            self._generation = -1
