"""The Whoosh engine's write side: a collection's index as its single writer uses it
(indexer.engine.writing.Index), and the engine object the store opens indexes with."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import compress
from pathlib import Path
from typing import Any

from whoosh import writing
from whoosh.fields import BOOLEAN, NUMERIC
from whoosh.index import TOC, Index, clean_files
from whoosh.query import Term
from whoosh.reading import SegmentReader

from indexer.engine.base import ReadTarget
from indexer.engine.faults import CommitFailed, is_write_fault, release
from indexer.engine.fields import Field
from indexer.engine.suffixes import suffix_table
from indexer.engine.whoosh.codec import TroveCodec
from indexer.engine.whoosh.derived import clean_derived, write_derived
from indexer.engine.whoosh.inverting import TroveMpWriter, TroveSegmentWriter, gc_paused
from indexer.engine.whoosh.pairs import PairsTaker, pairs_file_name, read_pairs
from indexer.engine.whoosh.reading import WhooshReader, WhooshSegment, segment_of
from indexer.engine.whoosh.schema import (
    FILE_KEY_PREFIX,
    FILE_STAT,
    KIND_DOC,
    KIND_FILE,
    pack_stat,
    unpack_stats,
)
from indexer.engine.whoosh.sequences import SequencesTaker, read_sequences, sequences_file_name
from indexer.engine.whoosh.storage import INDEX_NAME, create_index, open_index
from indexer.engine.whoosh.suffixes import read_suffixes, suffixes_field, suffixes_file_name
from indexer.engine.whoosh.term_tops import (
    TermTopsTaker,
    read_term_tops,
    segment_postings,
    table_of,
    term_tops_file_name,
)
from indexer.engine.whoosh.terms import read_terms
from indexer.engine.whoosh.tops import TopsCounter, read_tops, tops_file_name
from indexer.engine.writing import Bookkeeping, CommitPlan, FileState, FileStats, SegmentStats
from indexer.engine.writing import Index as EngineIndex

# A commit calls check_cancel every this many documents added.
CANCEL_EVERY = 500
DERIVED_CHECKERS = 2  # threads that check the segments' derived files at each reconcile
# A full build's postings in memory, shared by its writer processes (TermPool's measure):
# ~100k 4 KB reports a GB. A writer's peak is ~2.9x its share (PSS, at 1M reports: the
# columns grouped by term as its segment is written, pool.py).
POOL_MB = 1280

log = logging.getLogger(__name__)


def _drop_dead_segments(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge function (``commit(mergetype=...)``): keep the segments that still
    hold a live document, merge nothing. Whoosh's default would merge the five smallest
    segments by ``add_reader``, which looks up every term through the segment's hash table
    (50-200 ms per 4 KB report, about ten times the cost of indexing it again), and it never
    drops a segment whose documents are all deleted (a deleted folder's), though every
    query still pays a lookup in it. The store compacts instead, by indexing the files of
    small segments again."""
    return [s for s in segments if s.doc_count() > 0]


# A table of contents being written: renamed into place only once complete.
_TEMP_TOC = re.compile(rf"^_{INDEX_NAME}_[0-9]+\.toc\..+")


def _folder_bytes(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total


class WhooshIndex:
    """A collection's Whoosh index as of one commit, opened by its writer."""

    def __init__(self, index: Index, scored: bool) -> None:
        self.native = index
        self.scored = scored

    def refresh(self) -> WhooshIndex:
        return WhooshIndex(self.native.refresh(), self.scored)

    def bookkeeping(self) -> Bookkeeping:
        files: dict[str, FileState] = {}
        docs: dict[str, dict[str, str]] = {}
        with self.native.reader() as reader:
            for fields in reader.all_stored_fields():
                if fields.get("kind") == KIND_FILE:
                    files[fields["file"]] = FileState(*fields["fstate"])
                else:
                    docs.setdefault(fields["file"], {})[fields["key"]] = fields.get("dhash", "")
        return files, docs

    def file_stats(self) -> FileStats:
        """From each segment's fstat column (schema.py), read in one go; the values are
        counted against the segment's file records, so that a column cut short or missing
        is damage, never files taken for new or gone."""
        stats = FileStats()
        folder = self.native.storage.folder
        with self.native.reader() as reader:
            for leaf, _ in reader.leaf_readers():
                if leaf.segment() is None:
                    continue
                segment = segment_of(leaf, folder)
                deleted = segment.deleted
                records = leaf.doc_frequency("kind", KIND_FILE)  # deleted ones included
                found = live_records = 0
                if records and not leaf.has_column(FILE_STAT):
                    raise ValueError(f"{segment.id}: no {FILE_STAT} column")
                if records:
                    column = segment.bytes_column(FILE_STAT)
                    lengths = column.lengths
                    docs = list(compress(range(len(lengths)), lengths))
                    found = len(docs)
                    live_records = unpack_stats(
                        column.joined(0, segment.doc_count_all),
                        column.offsets,
                        lengths,
                        (d for d in docs if d not in deleted) if deleted else docs,
                        (stats.files, stats.skipped),
                    )
                if found != records:
                    raise ValueError(
                        f"{segment.id}: {found} values in its {FILE_STAT} column for "
                        f"{records} file records"
                    )
                stats.documents += segment.doc_count_all - len(deleted) - live_records
        return stats

    def files_holding(self, keys: Iterable[str]) -> dict[str, set[str]]:
        held: dict[str, set[str]] = {}
        with self.native.searcher() as searcher:
            for key in keys:
                if files := {fields["file"] for fields in searcher.documents(key=key)}:
                    held[key] = files
        return held

    def verify(self) -> None:
        schema = self.native.schema
        with self.native.reader() as reader:
            records: dict[str, tuple[int, int, bool]] = {}
            for fields in reader.all_stored_fields():
                if fields.get("kind") == KIND_FILE:
                    mtime_ns, size, _, skipped = fields["fstate"]
                    records[fields["file"]] = (mtime_ns, size, bool(skipped))
            stats = self.file_stats()
            fast = {rel: (*st, rel in stats.skipped) for rel, st in stats.files.items()}
            if fast != records:
                raise ValueError(f"the {FILE_STAT} column disagrees with the file records")
            for leaf, _ in reader.leaf_readers():
                if leaf.doc_count_all() == 0:
                    continue  # an index of no segment reads as one EmptyReader
                counted: Counter[str] = Counter()
                for (name, _), info in leaf._terms.items():
                    info.doc_frequency()
                    counted[name] += 1
                for name, count in counted.items():
                    if isinstance(schema[name], (NUMERIC, BOOLEAN)):
                        continue
                    found = read_terms(leaf._terms, name)  # as the searches' lexicons read it
                    if found is not None and len(found.doc_counts) != count:
                        raise ValueError(f"{name}: {len(found.doc_counts)} terms of {count}")

    def repair_derived(self) -> int:
        """Reads each segment's derived files (derived.py) as a search would, knowing the
        segment from the table of contents alone (a reader of every segment costs more
        than the check); where one is missing or damaged, makes it anew from the
        segment's columns and writes it (a whole new file, renamed into place): the
        fragment tops from the live documents' texts, the CJK pairs and the token
        sequences from every document's text (the latter cut into tokens again), the
        term tops from the segment's postings, the suffixes in order from its lexicon. How
        many files it wrote."""
        index = self.native
        tops_of = TopsCounter.of(index.schema) is not None
        sequences_of = SequencesTaker.of(index.schema) is not None
        term_tops_of = TermTopsTaker.of(index.schema) is not None
        suffixes_of = suffixes_field(index.schema)
        folder = index.storage.folder

        def lacking(info: Any) -> tuple[Any, bool, bool, bool, bool, bool]:
            """The segment, and whether its tops, its pairs, its sequences, its term tops
            and its suffixes need writing."""
            segment_id, docs = info.segment_id(), info.doc_count_all()
            tops = tops_of and read_tops(folder, segment_id, docs) is None
            pairs = tops_of and read_pairs(folder, segment_id, docs) is None
            found = read_sequences(folder, segment_id, docs) if sequences_of else None
            sequences = sequences_of and (found is None or not found.intact())
            term_tops = term_tops_of and read_term_tops(folder, segment_id, docs) is None
            suffixes = suffixes_of is not None and read_suffixes(folder, segment_id, docs) is None
            return info, tops, pairs, sequences, term_tops, suffixes

        # Checked two at a time (zlib lets go of the GIL while it sums a file's bytes);
        # the sequences' every chunk of codes (a search checks those it reads).
        with ThreadPoolExecutor(DERIVED_CHECKERS) as pool:
            checked = list(pool.map(lacking, index._segments()))
        repaired = 0
        for info, tops, pairs, sequences, term_tops, suffixes in checked:
            if not (tops or pairs or sequences or term_tops or suffixes):
                continue
            segment_id = info.segment_id()
            with SegmentReader(index.storage, index.schema, info) as reader:
                segment = segment_of(reader, folder)
                if tops:
                    _write_tops(index.schema, segment, folder)
                    log.warning("%s: fragment tops written anew (missing or damaged)", segment_id)
                if pairs:
                    _write_pairs(index.schema, segment, folder)
                    log.warning("%s: CJK pairs written anew (missing or damaged)", segment_id)
                if sequences:
                    _write_sequences(index.schema, segment, folder)
                    log.warning("%s: token sequences written anew (missing or damaged)", segment_id)
                if term_tops:
                    _write_term_tops(index.schema, segment, folder)
                    log.warning("%s: term tops written anew (missing or damaged)", segment_id)
                if suffixes and suffixes_of is not None:
                    table = suffix_table(segment.lexicon(suffixes_of))
                    write_derived(folder, suffixes_file_name(segment_id), table)
                    log.warning(
                        "%s: suffixes in order written anew (missing or damaged)", segment_id
                    )
            repaired += tops + pairs + sequences + term_tops + suffixes
        return repaired

    def bookkeeping_of(self, files: Iterable[str]) -> Bookkeeping:
        records: dict[str, FileState] = {}
        docs: dict[str, dict[str, str]] = {}
        with self.native.searcher() as searcher:
            for rel in files:
                for fields in searcher.documents(file=rel):
                    if fields.get("kind") == KIND_FILE:
                        records[rel] = FileState(*fields["fstate"])
                    else:
                        docs.setdefault(rel, {})[fields["key"]] = fields.get("dhash", "")
        return records, docs

    def files_under(self, folders: Iterable[str]) -> set[str]:
        below: set[str] = set()
        with self.native.reader() as reader:
            for folder in folders:
                prefix = f"{folder}/" if folder else ""
                below.update(reader.expand_prefix("file", prefix))
        return {t.decode() if isinstance(t, bytes) else t for t in below}

    def doc_count(self) -> int:
        with self.native.searcher() as searcher:
            # Not doc_frequency: it still counts deleted documents until a merge.
            return sum(1 for _ in searcher.docs_for_query(Term("kind", KIND_DOC)))

    def segments(self) -> list[SegmentStats]:
        return [
            SegmentStats(s.segment_id(), s.doc_count(), s.deleted_count())
            for s in self.native._segments()
        ]

    def files_in(self, segments: Collection[str]) -> set[str]:
        files: set[str] = set()
        index = self.native
        for segment in index._segments():
            if segment.segment_id() in segments:
                with SegmentReader(index.storage, index.schema, segment) as reader:
                    files.update(fields["file"] for fields in reader.all_stored_fields())
        return files

    def commit(
        self, plan: CommitPlan, *, clear: bool, parallel: bool, check_cancel: Callable[[], None]
    ) -> None:
        cpus = os.cpu_count() or 1
        codec = TroveCodec()
        # Whoosh hands every posting its document's field length, looked up one by one
        # (17% of a build); only BM25 uses them (and then only as a bound for skipping).
        codec.length_stats = self.scored
        try:
            writer = self._writer(codec, parallel and cpus > 1, cpus)
        except BaseException as exc:
            self._failed(exc)
            raise
        try:
            # The postings live in this process only with the one-process writer (the
            # parallel one's workers pause their own collector).
            with (
                gc_paused() if isinstance(writer, TroveSegmentWriter) else contextlib.nullcontext()
            ):
                self._write(writer, plan, clear, check_cancel)
        except BaseException as exc:
            failed, writer = [writer], None  # only _failed holds it: it closes quietly there
            self._failed(exc, failed)
            raise

    def _write(
        self, writer: Any, plan: CommitPlan, clear: bool, check_cancel: Callable[[], None]
    ) -> None:
        # File records to replace: only files that have one now.
        old_records = plan.file_records.keys() & plan.indexed_files
        if not clear and (plan.delete_keys or old_records):
            # One reader for every delete: without it Whoosh opens a reader over all
            # segments per term (~1 ms a segment), 26 ms a delete at 24 segments.
            with writer.searcher() as searcher:
                for key in plan.delete_keys:
                    writer.delete_by_term("key", key, searcher=searcher)
                for rel in old_records:
                    writer.delete_by_term("key", FILE_KEY_PREFIX + rel, searcher=searcher)
        for n, doc in enumerate(plan.add_docs, 1):
            if n % CANCEL_EVERY == 0:
                check_cancel()
            writer.add_document(**doc.fields, dhash=doc.dhash, kind=KIND_DOC, file=doc.file)
        for rel, state in plan.file_records.items():
            if state is not None:
                writer.add_document(
                    key=FILE_KEY_PREFIX + rel,
                    kind=KIND_FILE,
                    file=rel,
                    fstate=(state.mtime_ns, state.size, state.hash, state.skipped),
                    fstat=pack_stat(rel, state.mtime_ns, state.size, bool(state.skipped)),
                )
        if clear:
            writer.commit(mergetype=writing.CLEAR)
        else:
            writer.commit(mergetype=_drop_dead_segments)

    def _writer(self, codec: TroveCodec, parallel: bool, cpus: int) -> Any:
        """A Whoosh writer. The one-process writer goes without Whoosh's own write lock
        (``_lk=False``): the store holds the collection's writer lock around every commit,
        and Whoosh's lock, taken before the writer creates its first file, would stay held
        if that file failed (a full disk), refusing every later commit of a long-lived
        process. The parallel writer keeps it (its workers pass ``_lk`` themselves); it
        runs in `trove reindex`, whose lock goes when the process ends."""
        if parallel:
            # Each worker keeps its postings in memory up to limitmb (TermPool's measured
            # size), then ends its segment and starts another (inverting.py). The pool
            # lives in the forked workers only and is freed when they exit.
            procs = min(4, cpus)
            return TroveMpWriter(
                self.native, procs=procs, limitmb=POOL_MB // procs, multisegment=True, codec=codec
            )
        # This runs in long-lived processes (the daemon): keep the pool small.
        return TroveSegmentWriter(self.native, limitmb=128, codec=codec, _lk=False)

    def _failed(self, exc: BaseException, writer: list[Any] | None = None) -> None:
        """After a commit failed: the writer (``writer``'s one item) is cancelled, its
        partial files go, and a write fault becomes CommitFailed."""
        release(exc, writer or [])
        written = self._drop_partial_files()
        if is_write_fault(exc):
            raise CommitFailed(Path(self.native.storage.folder), exc, written) from exc

    def _drop_partial_files(self) -> int:
        """Remove what a failed commit left (segment files no table of contents names, a
        half-written table of contents, writers' temporary folders); their bytes."""
        storage = self.native.storage
        folder = Path(storage.folder)
        before = _folder_bytes(folder)
        with contextlib.suppress(Exception):  # no readable table of contents: keep all
            generation = self.native.latest_generation()
            segments = TOC.read(storage, INDEX_NAME, generation).segments
            clean_files(storage, INDEX_NAME, generation, segments)
            clean_derived(storage, segments)
        for entry in folder.iterdir():
            if _TEMP_TOC.match(entry.name) or (entry.is_dir() and entry.name.endswith(".tmp")):
                with contextlib.suppress(OSError):
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        return max(0, before - _folder_bytes(folder))


def _write_tops(schema: Any, segment: WhooshSegment, folder: str) -> None:
    """A segment's fragment tops, counted in its live documents' texts."""
    tops = TopsCounter.of(schema)
    assert tops is not None
    texts, keys = segment.bytes_column(tops.column), segment.bytes_column(tops.key)
    ranks = segment.int_column(tops.rank)
    for d in range(segment.doc_count_all):
        if d not in segment.deleted:
            tops.counter.add(d, texts.value(d), ranks[d], keys.value(d))
    table = tops.counter.table(segment.doc_count_all)
    write_derived(folder, tops_file_name(segment.id), table)


def _write_pairs(schema: Any, segment: WhooshSegment, folder: str) -> None:
    """A segment's CJK pairs, from every document's text (those deleted since it was
    written too: the table is then the one its writer wrote)."""
    pairs = PairsTaker.of(schema)
    assert pairs is not None
    texts = segment.bytes_column(pairs.column)
    for d in range(segment.doc_count_all):
        pairs.counter.add(d, texts.value(d))
    write_derived(folder, pairs_file_name(segment.id), pairs.counter.table(segment.doc_count_all))


def _write_term_tops(schema: Any, segment: WhooshSegment, folder: str) -> None:
    """A segment's term tops, from its postings (the deleted documents' too: the table
    is then the one its writer wrote)."""
    taker = TermTopsTaker.of(schema)
    assert taker is not None
    keys = segment.bytes_column(taker.key)
    table = table_of(
        segment_postings(segment, taker.field),
        segment.int_column(taker.rank),
        [keys.value(d) for d in range(segment.doc_count_all)],
    )
    write_derived(folder, term_tops_file_name(segment.id), table)


def _write_sequences(schema: Any, segment: WhooshSegment, folder: str) -> None:
    """A segment's token sequences, from every document's text (those deleted since it
    was written too: the table is then the one its writer wrote)."""
    taker = SequencesTaker.of(schema)
    assert taker is not None
    texts = segment.bytes_column(taker.column)
    for d in range(segment.doc_count_all):
        if value := texts.value(d):
            taker.add_value(d, value)
    table = taker.writer.table(segment.doc_count_all)
    write_derived(folder, sequences_file_name(segment.id), table)


class WhooshEngine:
    """Whoosh 2.7.4 (the embedded default)."""

    name = "whoosh"
    keeps_index = True

    def open(self, path: Path, fields: Collection[Field], scored: bool) -> WhooshIndex:
        return WhooshIndex(open_index(path, fields), scored)

    def reader(self, target: ReadTarget) -> WhooshReader:
        def native() -> Any:
            index: EngineIndex | None = target.open_index()
            return None if index is None else index.native

        return WhooshReader(native, target.current)

    def create(self, path: Path, fields: Collection[Field], scored: bool) -> WhooshIndex:
        return WhooshIndex(create_index(path, fields), scored)
