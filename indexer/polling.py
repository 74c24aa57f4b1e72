"""A cheap polling watcher for one source tree, where inotify cannot be used.

watchdog's PollingObserver lists and stats the whole tree on every pass. A `Poller`
instead stats only the folders each pass (a folder's mtime changes when an entry is
added, removed or renamed in it) and lists again just the folders that changed; edits in
place, which change no folder, are found by a sweep that stats a slice of the files each
pass, round robin, so that every file is checked at least once per ``sweep_s``.

What it finds is handed to ``emit`` as watchdog events with absolute ``str`` paths, like
inotify's: the daemon re-checks the paths they name, so an event says where to look,
not what happened exactly.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileSystemEvent,
)

from indexer.sources.base import is_hidden

if TYPE_CHECKING:
    from indexer.files import Selection

log = logging.getLogger(__name__)

# A folder changed this recently is listed again on the next pass too: a change within
# the same timestamp tick (coarse on network filesystems, a few ms even locally) leaves
# its mtime as it was.
RECENT_NS = 2_000_000_000
# The sweep checks the time after this many files.
SWEEP_CHUNK = 256
# Errors that mean a path is no longer there; any other keeps its last known state.
_GONE = (errno.ENOENT, errno.ENOTDIR)

FileId = tuple[int, int, int]  # (st_mtime_ns, st_size, st_ino)
FolderId = tuple[int, int]  # (st_dev, st_ino)


@dataclass(slots=True)
class _Folder:
    """What the last listing of a wanted folder found."""

    parts: tuple[str, ...]
    ident: FolderId
    mtime_ns: int
    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Listing:
    files: dict[str, FileId]
    dirs: dict[str, os.stat_result]
    # Names in dirs that are symlinks: a folder reached both ways is kept by its real path.
    links: set[str]


class Poller:
    """Finds changes in the tree at ``root`` by polling and reports them to ``emit``.

    ``start()`` lists the tree before it returns (so every change after that is
    reported), then a daemon thread polls every ``interval_s``. A pass stats every
    folder, and files for at most ``budget * interval_s`` seconds of this thread's CPU
    time beyond the ``ceil(files * interval_s / sweep_s)`` it must stat to check each
    within ``sweep_s`` (CPU time, not wall time: other work on the machine does not
    shrink the slice, so a tree that fits, some 10k files, is swept whole every pass).
    ``emit`` is called from that thread (from the caller's, for ``poll()``), which must
    then be the only one making passes: a Poller holds no lock.
    """

    def __init__(
        self,
        root: Path,
        selection: Selection,
        emit: Callable[[FileSystemEvent], None],
        interval_s: float = 2.0,
        sweep_s: float = 30.0,
        budget: float = 0.02,
    ) -> None:
        self.root = os.path.abspath(root)
        self.selection = selection
        self.emit = emit
        self.interval_s = interval_s
        self.sweep_s = sweep_s
        self.budget = budget
        # Files stat'ed by the last sweep (for benchmarks and tests).
        self.last_swept = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"trove-poller-{Path(self.root).name}", daemon=True
        )
        self._primed = False
        self._root_real = os.path.realpath(self.root)
        self._folders: dict[str, _Folder] = {}
        self._files: dict[str, FileId] = {}
        # Which remembered folder holds each folder identity: a folder is entered once.
        self._holders: dict[FolderId, str] = {}
        # The sweep's round: paths of remembered files (forgotten ones are skipped, and
        # dropped when the list is rebuilt).
        self._order: list[str] = []
        self._cursor = 0
        self._unreadable: set[str] = set()
        # Folders to list again in this pass (one of theirs was found moved elsewhere).
        self._recheck: list[str] = []

    # ------------------------------------------------------------------ the thread

    def start(self) -> None:
        self._pass()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._pass()

    def _pass(self) -> None:
        try:
            self.poll()
        except Exception:  # nothing stops the poller; the next pass tries again
            log.exception("polling %s", self.root)

    # ------------------------------------------------------------------ one pass

    def poll(self) -> None:
        """One pass: the first lists the tree and reports nothing, each later one reports
        what changed since."""
        started = time.thread_time()
        self._root_real = os.path.realpath(self.root)
        if not self._primed:
            try:
                self._check_root()
            except BaseException:
                self._forget_all()  # listed anew by the next pass
                raise
            self._primed = True
            return
        try:
            if self._check_root():
                self._emit(DirCreatedEvent(self.root))
            now_ns = time.time_ns()
            for path in list(self._folders):
                self._check(path, now_ns, force=False)
            while self._recheck:
                self._check(self._recheck.pop(), now_ns, force=True)
            self._sweep(started)
        except BaseException:
            # Left half done: every folder is listed again by the next pass, which
            # reports only what differs.
            self._recheck.clear()
            for folder in self._folders.values():
                folder.mtime_ns = -1
            raise

    def _forget_all(self) -> None:
        self._folders.clear()
        self._files.clear()
        self._holders.clear()
        self._order.clear()
        self._cursor = 0
        self._unreadable.clear()
        self._recheck.clear()

    def _check(self, path: str, now_ns: int, force: bool) -> None:
        """Stat a remembered folder; list it again if it changed (or may have)."""
        folder = self._folders.get(path)
        if folder is None:
            return  # forgotten with a folder above it, this pass
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno in _GONE:
                self._vanished(path)
            else:
                self._unreadable_once(path, exc)
            return
        if not stat.S_ISDIR(st.st_mode):
            self._vanished(path)
        elif (
            force
            or (st.st_dev, st.st_ino) != folder.ident
            or st.st_mtime_ns != folder.mtime_ns
            or st.st_mtime_ns > now_ns - RECENT_NS
            or path in self._unreadable
        ):
            self._relist(path, folder, st)

    def _check_root(self) -> bool:
        """Enter a root that is there and not known yet (made, or made anew); whether it
        was entered."""
        if self.root in self._folders:
            return False
        try:
            st = os.stat(self.root)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and self._enter(self.root, (), st)

    # ------------------------------------------------------------------ folders

    def _list(self, path: str, parts: tuple[str, ...]) -> _Listing:
        """The wanted files and folders in a folder, chosen as ``store.walk`` chooses them.
        Raises OSError when the folder cannot be listed."""
        files: dict[str, FileId] = {}
        dirs: dict[str, os.stat_result] = {}
        links: set[str] = set()
        wants_dir, wants_file = self.selection.wants_dir, self.selection.wants_file
        with os.scandir(path) as entries:
            for entry in entries:
                name = entry.name
                if is_hidden(name):
                    continue
                sub = (*parts, name)
                try:
                    is_link = entry.is_symlink()
                    if is_link and not self._inside(entry.path):
                        continue
                    if entry.is_dir():
                        if wants_dir(sub):
                            dirs[name] = entry.stat()
                            if is_link:
                                links.add(name)
                        continue
                    if not wants_file(sub):
                        continue
                    st = entry.stat()
                except OSError:
                    continue  # a broken symlink, or gone meanwhile: as walk does
                if stat.S_ISREG(st.st_mode):
                    files[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
        return _Listing(files, dirs, links)

    def _inside(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self._root_real or real.startswith(self._root_real + os.sep)

    def _enter(self, path: str, parts: tuple[str, ...], st: os.stat_result) -> bool:
        """Remember a folder not known yet and everything below it, reporting nothing.
        False when it is a folder entered before (a symlink loop or a second link)."""
        if not self._claim(st, path):
            return False
        stack: list[tuple[str, tuple[str, ...], os.stat_result, _Folder | None]]
        stack = [(path, parts, st, None)]
        links: list[tuple[str, tuple[str, ...], os.stat_result, _Folder | None]] = []
        while stack or links:
            path, parts, st, parent = stack.pop() if stack else links.pop()
            if parent is not None:
                if not self._claim(st, path):
                    continue
                parent.dirs.add(parts[-1])
            folder = self._folders[path] = _Folder(parts, (st.st_dev, st.st_ino), st.st_mtime_ns)
            listing = self._read(path, parts)
            if listing is None:
                continue
            for name, file_id in listing.files.items():
                self._remember_file(folder, f"{path}{os.sep}{name}", name, file_id)
            for name, sub_st in listing.dirs.items():
                to = links if name in listing.links else stack
                to.append((f"{path}{os.sep}{name}", (*parts, name), sub_st, folder))
        return True

    def _claim(self, st: os.stat_result, path: str) -> bool:
        """Whether ``path`` may hold this folder: no other remembered folder does (one that
        did but is no longer there is forgotten, as it was moved here)."""
        ident = (st.st_dev, st.st_ino)
        holder = self._holders.get(ident)
        if holder is not None and holder != path:
            try:
                held = os.stat(holder)
                still = (held.st_dev, held.st_ino) == ident
            except OSError:
                still = False
            if still:
                return False
            # Moved here: whatever is at its old place now is found by listing its parent.
            self._vanished(holder)
            if holder != self.root:
                self._recheck.append(os.path.dirname(holder))
        self._holders[ident] = path
        return True

    def _read(self, path: str, parts: tuple[str, ...]) -> _Listing | None:
        """A folder's listing; None when it cannot be read (it is retried every pass)."""
        try:
            listing = self._list(path, parts)
        except OSError as exc:
            if exc.errno in _GONE:
                self._unreadable.discard(path)
            else:
                self._unreadable_once(path, exc)
            return None
        self._unreadable.discard(path)
        return listing

    def _unreadable_once(self, path: str, exc: OSError) -> None:
        """Note a folder that cannot be read (retried every pass); said once."""
        if path not in self._unreadable:
            log.warning("cannot read %s: %s; its last known state is kept", path, exc.strerror)
            self._unreadable.add(path)

    def _relist(self, path: str, folder: _Folder, st: os.stat_result) -> None:
        """List a folder again and report what changed in it."""
        if (st.st_dev, st.st_ino) != folder.ident:
            # Made anew, or another folder moved here: reported as a folder replaced.
            self._vanished(path)
            if self._enter(path, folder.parts, st):
                parent = self._folders.get(os.path.dirname(path))
                if parent is not None and path != self.root:
                    parent.dirs.add(os.path.basename(path))
                self._emit(DirCreatedEvent(path))
            return
        listing = self._read(path, folder.parts)
        if listing is None:
            if path not in self._unreadable:
                self._vanished(path)
            return
        folder.mtime_ns = st.st_mtime_ns
        for name in folder.files - listing.files.keys():
            folder.files.discard(name)
            sub = f"{path}{os.sep}{name}"
            self._files.pop(sub, None)
            self._emit(FileDeletedEvent(sub))
        for name in folder.dirs - listing.dirs.keys():
            self._vanished(f"{path}{os.sep}{name}")
        for name, file_id in listing.files.items():
            sub = f"{path}{os.sep}{name}"
            old = self._files.get(sub)
            if old is None:
                self._remember_file(folder, sub, name, file_id)
                self._emit(FileCreatedEvent(sub))
            elif old != file_id:
                self._files[sub] = file_id
                self._emit(FileModifiedEvent(sub))
        for name in sorted(listing.dirs.keys() - folder.dirs, key=listing.links.__contains__):
            sub = f"{path}{os.sep}{name}"
            if self._enter(sub, (*folder.parts, name), listing.dirs[name]):
                folder.dirs.add(name)
                self._emit(DirCreatedEvent(sub))

    def _vanished(self, path: str) -> None:
        """Report a folder gone and forget it with everything below it."""
        if path not in self._folders:
            return
        parent = self._folders.get(os.path.dirname(path)) if path != self.root else None
        if parent is not None:
            parent.dirs.discard(os.path.basename(path))
        stack = [path]
        while stack:
            at = stack.pop()
            folder = self._folders.pop(at, None)
            if folder is None:
                continue
            if self._holders.get(folder.ident) == at:
                del self._holders[folder.ident]
            self._unreadable.discard(at)
            for name in folder.files:
                self._files.pop(f"{at}{os.sep}{name}", None)
            stack.extend(f"{at}{os.sep}{name}" for name in folder.dirs)
        self._emit(DirDeletedEvent(path))

    # ------------------------------------------------------------------ files

    def _remember_file(self, folder: _Folder, path: str, name: str, file_id: FileId) -> None:
        folder.files.add(name)
        self._files[path] = file_id
        self._order.append(path)

    def _sweep(self, started: float) -> None:
        """Stat the next slice of the files, round robin: at least enough to check each
        within ``sweep_s``, more while the pass is within its time budget."""
        files = self._files
        if len(self._order) > 2 * len(files) + SWEEP_CHUNK:
            self._order = list(files)  # drop forgotten paths and repeats
            self._cursor = 0
        order = self._order
        total = len(order)
        at_least = math.ceil(total * self.interval_s / self.sweep_s)
        time_left = self.budget * self.interval_s
        done = 0
        while done < total:
            if done < at_least:
                count = min(SWEEP_CHUNK, at_least - done, total - done)
            elif time.thread_time() - started < time_left:
                count = min(SWEEP_CHUNK, total - done)
            else:
                break
            start = self._cursor
            chunk = order[start : start + count]
            if len(chunk) < count:
                chunk += order[: count - len(chunk)]
            self._cursor = (start + count) % total
            done += count
            for path in chunk:
                old = files.get(path)
                if old is None:
                    continue
                try:
                    st = os.stat(path)
                except OSError as exc:
                    if exc.errno in _GONE:
                        self._file_gone(path)
                    continue  # unreadable: keep its last state
                if (st.st_mtime_ns, st.st_size, st.st_ino) == old:
                    continue
                if stat.S_ISREG(st.st_mode):
                    files[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
                    self._emit(FileModifiedEvent(path))
                else:
                    self._file_gone(path)
        self.last_swept = done

    def _file_gone(self, path: str) -> None:
        del self._files[path]
        folder = self._folders.get(os.path.dirname(path))
        if folder is not None:
            folder.files.discard(os.path.basename(path))
        self._emit(FileDeletedEvent(path))

    def _emit(self, event: FileSystemEvent) -> None:
        if not self._primed:
            return  # the first listing reports nothing
        try:
            self.emit(event)
        except Exception:  # the receiver's fault must not lose the rest of the pass
            log.exception("handing on %s", event)
