"""Whoosh's segment writer with postings kept grouped by term, and written a term at a time.

Whoosh's SegmentWriter puts every posting, as a tuple, in a PostingPool, sorts them all
when the segment is written (a third of a build's time went to sorting and to the runs a
pool spills to disk), then hands them one by one to the codec's field writer. Here they
go to a TermPool (`indexer.engine.whoosh.pool`), grouped by term as they come or kept as
columns, which hands them back a term at a time; the field writer takes each term's
postings a block at a time (`indexer.engine.whoosh.codec`). The rest of the writer is
Whoosh's own: the segments written are the same, byte for byte
(tests/test_engine_whoosh_codec.py).
"""

from __future__ import annotations

import contextlib
import gc
import pickle
import queue
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from whoosh.fields import FieldType
from whoosh.multiproc import MpWriter, SubWriterTask
from whoosh.util import random_name
from whoosh.writing import IndexingError, SegmentWriter

from indexer.engine.postings import DocPostings, Numbering, TermNumbers
from indexer.engine.term_tops import fewest_kept
from indexer.engine.whoosh.derived import clean_derived, write_derived
from indexer.engine.whoosh.pairs import PairsTaker, pairs_file_name
from indexer.engine.whoosh.pool import TermPool
from indexer.engine.whoosh.sequences import SequencesTaker, sequences_file_name
from indexer.engine.whoosh.storage import abandon
from indexer.engine.whoosh.suffixes import suffixes_file_name, table_of_terms
from indexer.engine.whoosh.term_tops import TermTopsTaker, term_tops_file_name
from indexer.engine.whoosh.tops import TopsCounter, tops_file_name

# How often a committing parent looks whether its workers are still alive.
RESULT_POLL_S = 0.5
# How long a cancelled writer waits for each stopped worker to end.
WORKER_STOP_S = 10.0


class _CleansDerived:
    """A writer that, as it writes the table of contents, removes the derived files
    (derived.py) of the segments that are no longer in it."""

    storage: Any

    def _commit_toc(self, segments: list[Any]) -> None:
        super()._commit_toc(segments)  # type: ignore[misc]
        clean_derived(self.storage, segments)


class _LetsGoWhenItFails:
    """A writer that, when it cannot be made or its cancel fails (the fault that failed
    the commit, met again as it closes the segment's files), still closes every file it
    opened, removes its temporary folder and releases its lock. Left to the garbage
    collector, a file found open warns in whichever thread collects it, and a lock stays
    held until then."""

    is_closed: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            self._let_go()
            raise

    def cancel(self) -> None:
        try:
            super().cancel()  # type: ignore[misc]
        finally:
            if not self.is_closed:
                self._let_go()

    def _let_go(self) -> None:
        # What Whoosh's SegmentWriter opens (2.7.4), in the order it opens them; any may be
        # missing when its making failed. The field writer (the codec's) gives up its own.
        perdoc = getattr(self, "perdocwriter", None)
        for structfile in (
            getattr(getattr(perdoc, "_cols", None), "_temp", None),
            getattr(perdoc, "_vpostfile", None),
        ):
            if structfile is not None:
                abandon(structfile)
        for let_go in (
            getattr(getattr(self, "fieldwriter", None), "abandon", None),
            getattr(getattr(self, "_tempstorage", None), "destroy", None),
            getattr(getattr(self, "writelock", None), "release", None),
        ):
            if let_go is not None:
                with contextlib.suppress(Exception):
                    let_go()
        self.is_closed = True


class TroveSegmentWriter(_CleansDerived, _LetsGoWhenItFails, SegmentWriter):
    """Whoosh's SegmentWriter with a TermPool, and each field's terms added in one go;
    and the segment's fragment tops (indexer/engine/fragments.py), CJK pairs
    (indexer/engine/pairs.py: of the column with the tops), token sequences
    (indexer/engine/sequences.py), term tops (indexer/engine/term_tops.py: of the field
    with the sequences) and that field's suffixes in order (indexer/engine/suffixes.py),
    if its schema has a field with them, written beside it."""

    def __init__(self, ix: Any, limitmb: int = 128, **kwargs: Any) -> None:
        super().__init__(ix, limitmb=limitmb, **kwargs)
        self.pool = TermPool(self._tempstorage, self.newsegment, limitmb=limitmb)
        self.tops = TopsCounter.of(self.schema)
        self.pairs = PairsTaker.of(self.schema)
        self.term_tops = TermTopsTaker.of(self.schema)
        # Its terms numbered as the pool numbers them: one lookup a term, not two.
        self.sequences = SequencesTaker.of(self.schema, self.pool.numbers)

    def add_reader(self, reader: Any) -> None:
        # Documents that are not counted: no derived data for this segment (a reconcile
        # makes it from the segment's columns).
        self.tops = self.pairs = self.sequences = self.term_tops = None
        super().add_reader(reader)

    def add_document(self, **fields: Any) -> None:
        """Whoosh's add_document (2.7.4) for fields without spelling or vectors, the
        postings of a field handed to the pool together; any other field goes the whole
        way of Whoosh's."""
        schema = self.schema
        if any(
            name in schema and (schema[name].separate_spelling() or schema[name].vector)
            for name in fields
        ):
            if self.tops is not None:
                self.tops.add(self.docnum, fields)
            if self.pairs is not None:
                self.pairs.add(self.docnum, fields)
            if self.term_tops is not None:
                self.term_tops.add(self.docnum, fields)
            self.sequences = None  # the tokens are not seen here
            super().add_document(**fields)
            return
        self._check_state()
        perdocwriter = self.perdocwriter
        docnum = self.docnum
        pool = self.pool
        docboost = self._doc_boost(fields)
        fieldnames = sorted(name for name in fields if not name.startswith("_"))
        self._check_fields(schema, fieldnames)
        perdocwriter.start_doc(docnum)
        for fieldname in fieldnames:
            value = fields.get(fieldname)
            if value is None:
                continue
            field = schema[fieldname]
            length = 0
            if field.indexed:
                fieldboost = self._field_boost(fields, fieldname, docboost)
                pooled = _pool_columns(field, value, fieldboost, pool.numbers(fieldname))
                if pooled is None:
                    items = list(field.index(value))
                    terms = [
                        (text, weight * fieldboost, vbytes) for text, _, weight, vbytes in items
                    ]
                    total = sum(freq for _, freq, _, _ in items)
                    if self.sequences is not None and fieldname == self.sequences.field:
                        self.sequences = None  # its tokens are not known here
                    pool.add_terms(fieldname, docnum, terms)
                else:
                    doc, total, numbering = pooled
                    if self.sequences is not None and fieldname == self.sequences.field:
                        self.sequences.add(docnum, numbering, doc.terms)
                    pool.add_columns(fieldname, docnum, doc)
                if field.scorable:
                    length = total
            customval = fields.get(f"_stored_{fieldname}", value)
            perdocwriter.add_field(fieldname, field, customval if field.stored else None, length)
            column = field.column_type
            if column and customval is not None:
                perdocwriter.add_column_value(fieldname, column, field.to_column_value(customval))
        perdocwriter.finish_doc()
        if self.tops is not None:
            self.tops.add(docnum, fields)
        if self.pairs is not None:
            self.pairs.add(docnum, fields)
        if self.term_tops is not None:
            self.term_tops.add(docnum, fields)
        self._added = True
        self.docnum += 1

    def _flush_segment(self) -> None:
        # Before the postings are written (which empties the pool).
        term_tops = suffixes = None
        if self.term_tops is not None:
            kept = self.pool.numbered(self.term_tops.field, least=fewest_kept())
            term_tops = self.term_tops.table(kept)
        if (
            self.sequences is not None
            and (terms := self.pool.terms(self.sequences.field)) is not None
        ):
            suffixes = table_of_terms(terms)
        self.perdocwriter.close()
        pdr = self.per_document_reader() if self.codec.length_stats else None
        groups = self.pool.groups()
        add_groups = getattr(self.fieldwriter, "add_groups", None)
        if groups is not None and add_groups is not None:
            add_groups(self.schema, pdr, groups)
        else:
            self.fieldwriter.add_postings(self.schema, pdr, self.pool.iter_postings())
        self.fieldwriter.close()
        if pdr:
            pdr.close()
        segment_id = self.newsegment.segment_id()
        if self.tops is not None:
            table = self.tops.counter.table(self.docnum)
            write_derived(self.storage.folder, tops_file_name(segment_id), table)
        if self.pairs is not None:
            table = self.pairs.counter.table(self.docnum)
            write_derived(self.storage.folder, pairs_file_name(segment_id), table)
        if term_tops is not None:
            write_derived(self.storage.folder, term_tops_file_name(segment_id), term_tops)
        if suffixes is not None:
            write_derived(self.storage.folder, suffixes_file_name(segment_id), suffixes)
        if self.sequences is not None:
            table = self.sequences.writer.table(self.docnum)
            write_derived(self.storage.folder, sequences_file_name(segment_id), table)


def _pool_columns(
    field: Any, value: Any, boost: float, numbers: TermNumbers
) -> tuple[DocPostings, int, Numbering] | None:
    """What ``field.index(value)`` gives, as the pool takes it in columns (its terms
    numbered by ``numbers``), the field's length and its tokens numbered, in one pass,
    where the field's format can (NextTokens); else None."""
    pool_columns = getattr(field.format, "pool_columns", None)
    if (
        pool_columns is None
        or type(field).index is not FieldType.index
        or not isinstance(value, str)
    ):
        return None
    return pool_columns(value, field.analyzer, boost, numbers)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile. A commit makes millions of postings that
    live until it ends, and the collector would walk them all again and again: a
    quarter of a build's time. They hold no cycles (tuples of numbers and bytes, lists)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _SubWriterTask(SubWriterTask):
    """A worker of TroveMpWriter: SubWriterTask.run (Whoosh 2.7.4, ``multisegment``) with
    TroveSegmentWriter, which ends its segment and starts another whenever its postings
    fill ``limitmb``. Whoosh's would spill them to disk as pickled runs and merge those
    one posting at a time, which took most of a 100k build. It hands back the list of
    its segments."""

    def run(self) -> None:
        with gc_paused():  # the process ends with the commit
            self._run()

    def _run(self) -> None:
        ix = self.storage.open_index(self.indexname)
        segments: list[Any] = []
        writer = self._writer(ix)
        while self.running:
            job = self.jobqueue.get()
            if job is None:
                break
            self._process_file(*job)
            if writer.pool.full:
                segments.append(writer._finalize_segment())
                del writer  # (the collection in _next_writer frees it)
                writer = self._next_writer(ix)
        if not self.running:
            writer.cancel()
            return
        if writer._added:
            segments.append(writer._finalize_segment())
        else:
            writer._close_segment()
        self.resultqueue.put((None, writer.pool.fieldnames, segments), timeout=5)

    writer: TroveSegmentWriter | None

    def _next_writer(self, ix: Any) -> TroveSegmentWriter:
        """A writer for the next segment, the last one's memory freed first. A writer
        lives in reference cycles (Whoosh 2.7.4's FileStorage.create keeps the
        FileExistsError of each temporary folder it makes in a local, and its traceback
        holds the frames up to the writer's __init__), which only the cyclic collector
        frees, and it is paused here: without this, a worker kept every segment's
        postings until it ended (at 10k reports in 16 MB segments, 240 MB against 100;
        the likely cause of the 7.8 GB each worker held at ~450k reports)."""
        self.writer = None
        gc.collect()
        return self._writer(ix)

    def _writer(self, ix: Any) -> TroveSegmentWriter:
        writer = self.writer = TroveSegmentWriter(ix, _lk=False, **self.kwargs)
        writer.pool.spill = False
        return writer


class TroveMpWriter(_CleansDerived, _LetsGoWhenItFails, MpWriter):
    """Whoosh's MpWriter (``multisegment`` only) whose worker processes write with
    TroveSegmentWriter, each handing back one segment or more."""

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        if not kwargs.get("multisegment"):
            raise ValueError("TroveMpWriter writes multisegment only")
        super().__init__(ix, **kwargs)

    def _new_task(self) -> Any:
        task = _SubWriterTask(
            self.storage,
            self.indexname,
            self.jobqueue,
            self.resultqueue,
            self.subargs,
            self.multisegment,
        )
        self.tasks.append(task)
        task.start()
        return task

    def cancel(self) -> None:
        """Stop the workers and wait for them, then Whoosh's cancel (which removes the
        job files). MpWriter.cancel only sets a flag in the parent's copy of each worker,
        which the worker never sees: it went on until its next job file was gone. Job
        names the stopped workers will never read are dropped, or this process could not
        exit (its queue would wait to hand them over)."""
        try:
            for task in self.tasks:
                if task.is_alive():
                    # SIGKILL: a worker forked from the daemon has its SIGTERM handler, and
                    # it holds nothing worth saving (its partial files are removed).
                    task.kill()
            for task in self.tasks:
                task.join(WORKER_STOP_S)
            for waiting in (self.jobqueue, self.resultqueue):
                waiting.cancel_join_thread()
                waiting.close()
        finally:
            SegmentWriter.cancel(self)

    docbuffer: list[Any]

    def _enqueue(self) -> None:
        """MpWriter._enqueue (Whoosh 2.7.4): the buffered documents to a job file, its
        name handed to the workers; but while the queue is full, a worker that ended
        fails the build (IndexingError) rather than leaving this process waiting
        forever for room no worker will make (a worker killed, by the OOM killer say)."""
        filename = f"{random_name()}.doclist"
        with self.temp_storage().create_file(filename).raw_file() as f:
            for item in self.docbuffer:
                pickle.dump(item, f, 2)
        if len(self.tasks) < self.procs:
            self._new_task()
        job = (filename, len(self.docbuffer))
        while True:
            try:
                self.jobqueue.put(job, timeout=RESULT_POLL_S)
                break
            except queue.Full:
                ended = [task for task in self.tasks if not task.is_alive()]
                if ended:
                    codes = ", ".join(str(task.exitcode) for task in ended)
                    raise IndexingError(
                        f"{len(ended)} of {len(self.tasks)} indexing processes ended "
                        f"mid-build (exit codes {codes})"
                    ) from None
        self.docbuffer = []

    def _commit(self, mergetype: Any, optimize: Any, merge: Any) -> None:
        """MpWriter._commit (Whoosh 2.7.4) for multisegment: each worker's result
        carries a list of segments."""
        if self.docbuffer:
            self._enqueue()
        for _ in self.tasks:
            self.jobqueue.put(None)
        final = self._merge_segments(mergetype, optimize, merge)
        # Read before joining (a worker cannot end while its result is unread); a worker
        # that ended without one fails the commit, never a segment silently missing.
        results: list[tuple[Any, Any, list[Any]]] = []
        while len(results) < len(self.tasks):
            try:
                results.append(self.resultqueue.get(timeout=RESULT_POLL_S))
            except queue.Empty:
                if not any(task.is_alive() for task in self.tasks) and self.resultqueue.empty():
                    codes = ", ".join(str(task.exitcode) for task in self.tasks)
                    raise IndexingError(
                        f"{len(self.tasks) - len(results)} of {len(self.tasks)} indexing "
                        f"processes ended without their segments (exit codes {codes})"
                    ) from None
        for task in self.tasks:
            task.join()
        for _, _, segments in results:
            final += segments
        if self._added:
            final.append(self._finalize_segment())
        else:
            self._close_segment()
        self._commit_toc(final)
        self._finish()
