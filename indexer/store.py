"""One index per collection, kept in line with the files by ``reconcile``.

Files are canonical; an index is derived and can always be rebuilt. Beside each
document (keyed by the source's ``key``) the index keeps the file it came from and a hash
of its fields, and one record per file with the ``(mtime_ns, size, hash)`` that reconcile
compares with the disk, and why the file was skipped if it was. Both change in the same
commit, so the bookkeeping never disagrees with the content.

This module walks the files and plans what changes, under the collection's writer lock
(indexer/collection.py); the engine (indexer/engine/) keeps the index and commits each
plan.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.building import BuildRecorder, clear_build
from indexer.collection import CollectionIndex
from indexer.compaction import compaction_victims, needs_compaction
from indexer.config import Settings
from indexer.engine.faults import CommitFailed, release
from indexer.engine.writing import (
    Bookkeeping,
    CommitPlan,
    Document,
    FileState,
    FileStats,
    Index,
)
from indexer.errors import (
    Cancel,
    IndexLockedError,
    Interrupted,
    StoreError,
    WriteFault,
)
from indexer.files import Listing, SkipFile, Under, read_file, regular_file_stat, valid_name, walk
from indexer.sources.base import Source

log = logging.getLogger(__name__)

# Above this many documents to add, build with two processes.
PARALLEL_THRESHOLD = 2000
# A batch of more paths than this is applied by a reconcile of the whole collection.
APPLY_MAX_PATHS = 500
# A reconcile reads the bookkeeping of the files that changed, file by file; past this
# share of the collection's files (and APPLY_MAX_PATHS) it reads all of it in one pass,
# which then costs less.
CATCH_UP_MAX_SHARE = 0.05
# A reconcile's walk is split among at most this many processes (one per core).
WALKERS = 4
# A watcher batch compacts at once, rather than when the daemon is idle, from this many
# segments on.
BUSY_MAX_SEGMENTS = 16

Progress = Callable[[int, int], None]


@dataclass
class Summary:
    """What one reconcile or batch did to one collection."""

    collection: str
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    missing_root: bool = False
    # Why the collection could not be brought in line (nothing was changed), if it could not.
    error: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "added": self.added,
            "updated": self.updated,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "skipped": dict(self.skipped),
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            "missing_root": self.missing_root,
            "error": self.error,
        }


# --------------------------------------------------------------------------- the files


def _differing(on_disk: dict[str, tuple[int, int]], stats: FileStats) -> set[str]:
    """The files whose bookkeeping a reconcile reads: new, gone, of another mtime or
    size, or skipped before (their reason is in the record; an unreadable one is tried
    again)."""
    if not stats.skipped and on_disk == stats.files:
        return set()  # the common case of a catch-up, compared in C: 0.1 s at 1M files
    recorded = stats.files.get
    differ = {rel for rel, st in on_disk.items() if recorded(rel) != st}
    differ.update(stats.files.keys() - on_disk.keys())
    differ.update(stats.skipped)
    return differ


def _check_stats(files: dict[str, FileState], stats: FileStats, rels: Iterable[str]) -> None:
    """Raises if the file stats read fast disagree with the file records of ``rels``: both
    are written in one commit, so the index is damaged (and is rebuilt)."""
    for rel in rels:
        state = files.get(rel)
        fast = stats.files.get(rel)
        if (state is None) != (fast is None) or (
            state is not None
            and (
                (state.mtime_ns, state.size) != fast
                or bool(state.skipped) != (rel in stats.skipped)
            )
        ):
            raise ValueError(f"{rel}: its file stat disagrees with its file record")


def doc_hash(doc: dict[str, Any]) -> str:
    return hashlib.blake2b(
        pickle.dumps(sorted(doc.items()), protocol=4), digest_size=16
    ).hexdigest()


# --------------------------------------------------------------------------- syncing


class Syncer:
    """Brings one collection's index in line with its files: all of them, or some."""

    def __init__(self, settings: Settings, source: Source) -> None:
        self.settings = settings
        self.source = source
        self.root = settings.source_root(source.name)
        self.index = CollectionIndex(settings.index_dir, source, settings.index.lock_timeout_s)
        self.max_bytes = int(settings.index.max_file_mb * 1024 * 1024)
        # Big commits fork writer processes; a process with other threads must not fork.
        self.parallel = True
        # Set by a stopping daemon: long work is abandoned before its commit.
        self.cancel: Cancel | None = None

    def reconcile(self, full: bool = False, progress: Progress | None = None) -> Summary:
        """Walk the whole source and apply only the difference (``full``: rebuild)."""
        started = time.perf_counter()
        summary = Summary(self.source.name)
        with self.index.locked(cancel=self.cancel):
            index, created = self.index.open_for_writing()
            try:
                self._reconcile_locked(
                    index, summary, full=full, created=created, progress=progress
                )
            except StoreError:
                raise
            except Exception:  # noqa: BLE001 (rebuilt if the index is damaged, else re-raised)
                index = self._heal()
                summary = Summary(self.source.name)
                self._reconcile_locked(index, summary, created=True, progress=progress)
            self._repair_derived()
        summary.seconds = time.perf_counter() - started
        return summary

    def _repair_derived(self) -> None:
        """Writes anew the derived data (fragment tops, token sequences) a segment lost
        (a cache: a failure here is logged and the reconcile stands)."""
        try:
            index = self.index.open()
            if index is not None:
                index.repair_derived()
        except Exception as exc:  # noqa: BLE001 (the searches count in the texts meanwhile)
            release(exc)
            log.warning("%s: could not write derived data anew: %s", self.index.path, exc)

    def _heal(self) -> Index:
        """After a failure reading the index: if it is damaged, a new empty index to
        rebuild from the files (one log line); else the failure goes on (re-raised)."""
        why = self.index.damaged()
        if why is None:
            raise  # noqa: PLE0704 (called from an except block: the failure goes on)
        failure = sys.exc_info()[1]
        if failure is not None:
            release(failure)
        return self._recreate(why)

    def _recreate(self, why: str) -> Index:
        """A new empty index in place of a damaged one (one log line). Holds the lock."""
        log.warning("%s: index damaged (%s); rebuilding it from the files", self.index.path, why)
        self.index.write_marker(damaged=True)
        index, _ = self.index.open_for_writing()
        return index

    def rebuild(self, why: str) -> Summary:
        """Rebuild a damaged index from the files, whatever it still reads."""
        started = time.perf_counter()
        summary = Summary(self.source.name)
        with self.index.locked():
            self._reconcile_locked(self._recreate(why), summary, created=True)
        summary.seconds = time.perf_counter() - started
        return summary

    def _reconcile_locked(
        self,
        index: Index,
        summary: Summary,
        full: bool = False,
        created: bool = False,
        progress: Progress | None = None,
    ) -> None:
        if created:  # searches meanwhile say "being built", not "no match"
            with BuildRecorder(self.index.path, progress) as recorder:
                self._sync_all(index, summary, full, created, recorder.reading, recorder.writing)
            return
        self._sync_all(index, summary, full, created, progress)

    def _sync_all(
        self,
        index: Index,
        summary: Summary,
        full: bool,
        created: bool,
        progress: Progress | None,
        writing: Callable[[], None] | None = None,
    ) -> None:
        """Walk the source and commit the difference. The walk is compared with the file
        stats the index reads fast (``Index.file_stats``); only the files that differ (new,
        gone, another mtime or size, skipped before) have their bookkeeping read and are
        planned, so a reconcile with nothing changed costs the walk and that read."""
        if self.root is None or not self.root.is_dir():
            summary.missing_root = True
            listing = Listing()
        else:
            listing = walk(self.root, self.source, processes=self._walkers())
        summary.skipped.update(listing.skipped)
        held: Callable[[set[str]], set[str]] | None = None
        if full or created:
            on_disk = listing.files
            files: dict[str, FileState] = {}
            docs: dict[str, dict[str, str]] = {}
            indexed_keys: set[str] | None = set()
        else:
            stats = index.file_stats()
            differ = _differing(listing.files, stats)
            files_count = max(len(listing.files), len(stats.files))
            if len(differ) > max(APPLY_MAX_PATHS, CATCH_UP_MAX_SHARE * files_count):
                # So many changed that one pass over the whole bookkeeping costs less.
                on_disk = listing.files
                files, docs = index.bookkeeping()
                # The state read is complete here: a key it does not hold is not in the index.
                indexed_keys = {key for keys in docs.values() for key in keys}
            else:
                on_disk = {rel: listing.files[rel] for rel in differ if rel in listing.files}
                files, docs = index.bookkeeping_of(differ)
                _check_stats(files, stats, differ)
                # The documents of the files that did not change, unread.
                summary.unchanged += stats.documents - sum(map(len, docs.values()))
                held = self._held_elsewhere(index, differ)
                indexed_keys = None
        # A build in writer processes streams: they index the first files while the rest
        # are read. (A build only adds documents: its records and deletions are complete
        # once the documents are taken.)
        stream = (full or created) and self.parallel and len(listing.files) >= PARALLEL_THRESHOLD
        plan = self._plan(
            on_disk,
            files,
            docs,
            set(files) | set(docs),
            summary,
            progress,
            indexed_keys,
            stream=stream,
            then=writing,
            held=held,
        )
        streamed = len(listing.files) if stream else 0
        self._commit(index, plan, clear=full and not created, streamed=streamed)
        self._compact_locked(index.refresh())

    def _walkers(self) -> int:
        """How many processes walk the files: one per core (up to WALKERS) where this
        process may fork (``parallel``, and no other thread runs), else one."""
        if not self.parallel or threading.active_count() > 1:
            return 1
        return max(1, min(WALKERS, os.cpu_count() or 1))

    def _held_elsewhere(self, index: Index, differ: set[str]) -> Callable[[set[str]], set[str]]:
        """Which of some keys a document of a file not in ``differ`` (one that did not
        change) holds too, an ELOG entry in two files: that file still yields it, so it
        stays. Asked only of the keys the files that differ no longer yield."""

        def held(keys: set[str]) -> set[str]:
            return {key for key, files in index.files_holding(keys).items() if files - differ}

        return held

    def apply(self, rels: Iterable[str]) -> Summary:
        """Re-check some paths (files or folders, relative to the root) after a change."""
        started = time.perf_counter()
        summary = Summary(self.source.name)
        with self.index.locked():
            index, created = self.index.open_for_writing()
            if created:
                self._reconcile_locked(index, summary, created=True)
                summary.seconds = time.perf_counter() - started
                return summary
            try:
                self._apply_locked(index, rels, summary)
            except StoreError:
                raise
            except Exception:  # noqa: BLE001 (rebuilt if the index is damaged, else re-raised)
                index = self._heal()
                summary = Summary(self.source.name)
                self._reconcile_locked(index, summary, created=True)
        summary.seconds = time.perf_counter() - started
        return summary

    def _apply_locked(self, index: Index, rels: Iterable[str], summary: Summary) -> None:
        """Re-check ``rels`` (files or folders) and commit the difference."""
        on_disk: dict[str, tuple[int, int]] = {}
        check: set[str] = set()
        root = self.root if self.root is not None and self.root.is_dir() else None
        for rel in set(rels):
            if not valid_name(rel):
                summary.skipped["name is not valid UTF-8"] += 1
                continue
            check.add(rel)
            if root is None:
                continue
            path = os.path.join(root, rel) if rel else str(root)
            if os.path.isdir(path):
                sub = walk(Path(path), Under(self.source, rel))
                for sub_rel, st in sub.files.items():
                    full_rel = f"{rel}/{sub_rel}" if rel else sub_rel
                    on_disk[full_rel] = st
                    check.add(full_rel)
                summary.skipped.update(sub.skipped)
            else:
                parts = tuple(rel.split("/"))
                wanted = self.source.wants_file(parts) and all(
                    self.source.wants_dir(parts[:i]) for i in range(1, len(parts))
                )
                found = regular_file_stat(path) if wanted else None
                if found is not None:
                    on_disk[rel] = found
        if len(check) > APPLY_MAX_PATHS:
            # A burst: one pass over the whole index costs less than a lookup a path.
            self._reconcile_locked(index, summary)
        else:
            # A folder that went away: everything indexed under it goes too.
            files, docs = self._state_under(index, check, on_disk)
            plan = self._plan(on_disk, files, docs, set(files) | set(docs), summary, None)
            self._commit(index, plan, clear=False)
            index = index.refresh()
            if len(index.segments()) >= BUSY_MAX_SEGMENTS:
                # Changes keep coming (no idle moment to compact in): compact now,
                # after this batch's commit, so that the batch is visible already.
                self._compact_locked(index)

    def compact(self, wait: bool = False) -> bool:
        """Re-index the documents of small segments into one, so that they drop away, and
        drop segments whose documents are all deleted; True if it did anything.

        Files are canonical, so re-reading them is the cheap way to merge (Whoosh's own
        merge costs about ten times more: ``_drop_dead_segments`` in
        indexer/engine/whoosh/writing.py); a file that changed meanwhile is simply brought
        up to date. Cheap when there is nothing to do. Unless ``wait``, gives up at once when
        another writer holds the index."""
        current = self.index.open()
        if current is None or not needs_compaction(current.segments()):
            return False
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(self.index.locked(None if wait else 0))
            except IndexLockedError:
                if wait:
                    raise
                return False
            index, created = self.index.open_for_writing()
            if created:  # nothing to compact: the next reconcile builds it
                clear_build(self.index.path)
                return False
            self._compact_locked(index)
        return True

    def _compact_locked(self, index: Index) -> None:
        segments = index.segments()
        if not needs_compaction(segments):
            return
        rels = index.files_in({s.id for s in compaction_victims(segments)})
        on_disk = {
            rel: found
            for rel in rels
            if self.root and (found := regular_file_stat(os.path.join(self.root, rel)))
        }
        files, docs = index.bookkeeping_of(rels)
        summary = Summary(self.source.name)
        plan = self._plan(on_disk, files, docs, set(files) | set(docs), summary, None, force=True)
        self._commit(index, plan, clear=False, marker=summary.changed, always=True)
        if summary.changed:
            log.info("%s: compacting also found %s", self.source.name, summary.as_dict())

    def _state_under(
        self, index: Index, rels: set[str], on_disk: dict[str, tuple[int, int]]
    ) -> Bookkeeping:
        exact, docs = index.bookkeeping_of(rels)
        # A path that is neither a file on disk nor an indexed file may be a folder that
        # changed or went away: what the index holds below it is looked up by prefix.
        folders = [r for r in rels if r not in on_disk and r not in exact]
        if folders:
            below = index.files_under(folders) - set(exact)
            more_files, more_docs = index.bookkeeping_of(below)
            exact.update(more_files)
            for k, v in more_docs.items():
                docs.setdefault(k, {}).update(v)
        return exact, docs

    def _plan(
        self,
        on_disk: dict[str, tuple[int, int]],
        files: dict[str, FileState],
        docs: dict[str, dict[str, str]],
        known: set[str],
        summary: Summary,
        progress: Progress | None,
        indexed_keys: set[str] | None = None,
        force: bool = False,
        stream: bool = False,
        then: Callable[[], None] | None = None,
        held: Callable[[set[str]], set[str]] | None = None,
    ) -> CommitPlan:
        """What to write. ``files`` and ``docs`` are what the index holds for the paths
        concerned; ``indexed_keys``, when known, every key the index holds, so that a new
        document's key is not looked up for deletion. ``force`` rewrites every document
        of the files (compaction) and counts only real changes in ``summary``. With
        ``stream``, the files are read as the commit takes the documents, and the rest of
        the plan is complete only then. ``then`` is called once every file is read.
        ``held``: which of some keys files not concerned still yield (never deleted as
        gone); None: every file is concerned."""
        plan = CommitPlan(indexed_files=set(files))
        documents = self._planning(
            plan, on_disk, files, docs, known, summary, progress, indexed_keys, force, then, held
        )
        plan.add_docs = documents if stream else list(documents)
        return plan

    def _planning(
        self,
        plan: CommitPlan,
        on_disk: dict[str, tuple[int, int]],
        files: dict[str, FileState],
        docs: dict[str, dict[str, str]],
        known: set[str],
        summary: Summary,
        progress: Progress | None,
        indexed_keys: set[str] | None = None,
        force: bool = False,
        then: Callable[[], None] | None = None,
        held: Callable[[set[str]], set[str]] | None = None,
    ) -> Iterator[Document]:
        """The documents to add, file by file as they are read (see ``_plan``), filling
        in the rest of ``plan`` (records, deletions) as it goes."""
        produced: set[str] = set()
        planned: set[str] = set()
        old_keys: dict[str, set[str]] = {rel: set(keys) for rel, keys in docs.items()}
        root_real = os.path.realpath(self.root) if self.root is not None else None
        total = len(on_disk)
        for done, (rel, (mtime_ns, size)) in enumerate(sorted(on_disk.items()), 1):
            if done % 200 == 0 or done == total:
                self._check_cancel()
                if progress:
                    progress(done, total)
            state = files.get(rel)
            # A file unreadable before is tried again: permissions change no mtime.
            if (
                state is not None
                and (state.mtime_ns, state.size) == (mtime_ns, size)
                and not state.skipped.startswith("unreadable")
                and not force
            ):
                if state.skipped:
                    summary.skipped[state.skipped] += 1
                else:
                    summary.unchanged += len(docs.get(rel, ()))
                produced.update(docs.get(rel, ()))
                continue
            assert self.root is not None  # files on disk have a root
            try:
                data = read_file(self.root, rel, self.max_bytes, root_real)
            except FileNotFoundError:
                summary.skipped["vanished before it could be read"] += 1
                continue
            except SkipFile as exc:
                summary.skipped[str(exc)] += 1
                plan.file_records[rel] = FileState(mtime_ns, size, "", str(exc))
                plan.delete_keys.update(old_keys.get(rel, ()))
                continue
            new_state = FileState(data.mtime_ns, data.size, data.hash)
            if state is not None and state.hash == data.hash and not state.skipped and not force:
                summary.unchanged += len(docs.get(rel, ()))
                produced.update(docs.get(rel, ()))
                plan.file_records[rel] = new_state
                continue
            if data.truncated:
                summary.warnings.append(
                    f"{rel}: {data.size / 1048576:.1f} MB; indexed its first "
                    f"{len(data.data) / 1048576:.1f} MB"
                )
            try:
                parsed = self.source.parse(data)
            except Exception as exc:  # a bad file must never stop the others
                log.exception("%s: cannot parse", rel)
                reason = f"cannot parse: {type(exc).__name__}"
                summary.skipped[reason] += 1
                plan.file_records[rel] = FileState(mtime_ns, size, data.hash, reason)
                plan.delete_keys.update(old_keys.get(rel, ()))
                continue
            summary.warnings.extend(f"{rel}: {w}" for w in parsed.warnings)
            if data.replaced:
                summary.warnings.append(f"{rel}: bytes that are not UTF-8 were replaced")
            if not data.data:
                summary.warnings.append(f"{rel}: empty file")
            before = docs.get(rel, {})
            for fields in parsed.documents:
                dhash = doc_hash(fields)
                key = fields["key"]
                produced.add(key)
                unchanged = before.get(key) == dhash
                if unchanged and not force:
                    summary.unchanged += 1
                    continue
                if key in planned or (key in before and not unchanged):
                    summary.updated += 1
                elif key not in before:
                    summary.added += 1
                planned.add(key)
                # A key from another file (an ELOG entry that moved) must not stay twice.
                if indexed_keys is None or key in indexed_keys:
                    plan.delete_keys.add(key)
                yield Document(fields, rel, dhash)
            plan.file_records[rel] = new_state
        for rel in known - set(on_disk):
            plan.file_records[rel] = None
        # Documents whose file no longer yields them (an id may have moved files).
        gone = [
            key
            for rel in known | set(plan.file_records)
            for key in old_keys.get(rel, ())
            if key not in produced
        ]
        if gone and held is not None:
            produced |= held(set(gone))
        for key in gone:
            if key not in produced:
                plan.delete_keys.add(key)
                summary.deleted += 1
        if then is not None:
            then()

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Interrupted(f"{self.source.name}: stopped before committing")

    def _commit(
        self,
        index: Index,
        plan: CommitPlan,
        clear: bool,
        marker: bool = True,
        always: bool = False,
        streamed: int = 0,
    ) -> None:
        """Write the plan in one commit (``always``: even an empty one, which drops the
        segments whose documents are all deleted) and note the update in the marker.
        ``streamed``: the plan's documents are read as the commit takes them, from about
        this many files."""
        adding = len(plan.add_docs) if isinstance(plan.add_docs, Sized) else streamed
        if not (plan.delete_keys or adding or plan.file_records or clear or always):
            return
        try:
            index.commit(
                plan,
                clear=clear,
                parallel=self.parallel and adding >= PARALLEL_THRESHOLD,
                check_cancel=self._check_cancel,
            )
        except CommitFailed as exc:
            raise WriteFault(str(exc)) from exc
        if marker:
            self.index.write_marker(last_update=time.time())
