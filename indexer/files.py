"""A collection's files on disk: which there are (``walk``), their stats, and reading one
safely (never outside the collection's folder, never blocking on a FIFO, binary files
refused). The store plans from them; an engine that reads the files itself (the
plain-scan reference engine) reads them the same way."""

from __future__ import annotations

import os
import pickle
import stat
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from indexer.errors import StoreError
from indexer.sources.base import FileData, is_hidden


class SkipFile(Exception):
    """A file of the collection that cannot be indexed; the message says why."""


@dataclass
class Listing:
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)


def valid_name(rel: str) -> bool:
    """Whether a path is text: a name that is not valid UTF-8 cannot be indexed as one."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def inside(root_real: str, path: str) -> bool:
    """Whether ``path``, symlinks resolved, is ``root_real`` or below it."""
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


class Selection(Protocol):
    """Which folders and files of a tree belong to a collection (part of a Source)."""

    def wants_dir(self, parts: tuple[str, ...]) -> bool: ...

    def wants_file(self, parts: tuple[str, ...]) -> bool: ...


class Under:
    """A source seen from one of its sub-folders (for re-walking a changed folder)."""

    def __init__(self, source: Selection, rel: str) -> None:
        self._source = source
        self._prefix = tuple(p for p in rel.split("/") if p)

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        full = self._prefix + parts
        return all(self._source.wants_dir(full[:i]) for i in range(1, len(full) + 1))

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        full = self._prefix + parts
        return self._source.wants_file(full) and all(
            self._source.wants_dir(full[:i]) for i in range(1, len(full))
        )


def walk(root: Path, source: Selection, processes: int = 1) -> Listing:
    """Every file of the collection under ``root`` with its (mtime_ns, size).

    Symlinks are followed only while they stay inside the root; a folder is entered once
    (symlink loops end there). Files that are not regular files are left out. A root that
    exists but cannot be listed (permissions) raises StoreError: an empty listing would
    delete every document of the collection.

    ``processes`` > 1 splits the walk by the root's entries between this process and
    forked ones (only a process without threads may pass it): a `stat` a file is most of
    a walk, and one process makes them one at a time. The listing is the same as one
    process's (where a folder is reached twice, by a symlink, the walk is made again in
    one process, which decides which path lists it).
    """
    if processes > 1:
        split = _walk_split(root, source, processes)
        if split is not None:
            return split
    listing, _ = _walk_share(root, source, (0, 1))
    return listing


def _walk_split(root: Path, source: Selection, processes: int) -> Listing | None:
    """The walk split among ``processes`` (this one and forked ones); None where a folder
    was reached twice (the walk in one process says by which path) or a forked one
    failed."""
    forks: list[tuple[int, int]] = []  # (pid, read end of its pipe)
    for share in range(1, processes):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the forked walker: its share, pickled down the pipe
            os.close(read_end)
            code = 1
            try:
                result: object = _walk_share(root, source, (share, processes))
            except StoreError as exc:
                result = exc
            try:
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(result, out, pickle.HIGHEST_PROTOCOL)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        forks.append((pid, read_end))
    try:
        mine = _walk_share(root, source, (0, processes))
    finally:
        theirs = [_collect(pid, read_end) for pid, read_end in forks]
    listing, entered = mine
    for share_result in theirs:
        if isinstance(share_result, StoreError):
            raise share_result
        if share_result is None:
            return None
        part, folders = share_result
        if listing.skipped[SEEN_BEFORE] or part.skipped[SEEN_BEFORE] or entered & folders:
            return None
        entered |= folders
        listing.files.update(part.files)
        listing.skipped.update(part.skipped)
    return listing


def _collect(pid: int, read_end: int) -> tuple[Listing, set[tuple[int, int]]] | StoreError | None:
    """What a forked walker sent (None if it sent nothing whole), once it has ended."""
    try:
        with os.fdopen(read_end, "rb") as stream:
            data = stream.read()
    finally:
        os.waitpid(pid, 0)
    try:
        result = pickle.loads(data)
    except Exception:  # noqa: BLE001 (cut short: the walker died)
        return None
    return result


# Why a folder is not entered a second time.
SEEN_BEFORE = "folder seen before (a symlink loop or a second link)"


def _walk_share(
    root: Path, source: Selection, share: tuple[int, int]
) -> tuple[Listing, set[tuple[int, int]]]:
    """The walk of the root's entries in ``share`` (k of n: those whose name's CRC-32 is k
    modulo n): its listing, and the folders below the root it entered."""
    k, n = share
    listing = Listing()
    seen_dirs: set[tuple[int, int]] = set()
    root_real = os.path.realpath(root)
    try:
        st = os.stat(root)
    except OSError:
        return listing, seen_dirs
    root_id = (st.st_dev, st.st_ino)
    seen_dirs.add(root_id)
    stack: list[tuple[tuple[str, ...], str]] = [((), str(root))]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue  # gone meanwhile: a root that is gone holds no files
        except OSError as exc:
            if not prefix:
                raise StoreError(
                    f"cannot list {folder}: {exc.strerror}; the index is left as it was"
                ) from exc
            listing.skipped[f"unreadable folder: {exc.strerror}"] += 1
            continue
        for entry in entries:
            if not prefix and n > 1 and _share_of(entry.name, n) != k:
                continue
            if is_hidden(entry.name):
                continue
            parts = (*prefix, entry.name)
            if not valid_name(entry.name):
                if entry.is_dir() or source.wants_file(parts):
                    listing.skipped["name is not valid UTF-8"] += 1
                continue
            try:
                is_link = entry.is_symlink()
                if is_link and not inside(root_real, entry.path):
                    if entry.is_dir() or source.wants_file(parts):
                        listing.skipped["symlink pointing outside the root"] += 1
                    continue
                if entry.is_dir():
                    if not source.wants_dir(parts):
                        continue
                    st = entry.stat()
                    if (st.st_dev, st.st_ino) in seen_dirs:
                        listing.skipped[SEEN_BEFORE] += 1
                        continue
                    seen_dirs.add((st.st_dev, st.st_ino))
                    stack.append((parts, entry.path))
                    continue
                if not source.wants_file(parts):
                    continue
                st = entry.stat()
            except FileNotFoundError:
                if entry.is_symlink():
                    listing.skipped["broken symlink"] += 1
                continue
            except OSError as exc:
                listing.skipped[f"cannot stat: {exc.strerror}"] += 1
                continue
            if not stat.S_ISREG(st.st_mode):
                listing.skipped["not a regular file"] += 1
                continue
            listing.files["/".join(parts)] = (st.st_mtime_ns, st.st_size)
    return listing, seen_dirs - {root_id}


def _share_of(name: str, shares: int) -> int:
    """Which share of a split walk a root's entry is in (any process finds the same)."""
    return zlib.crc32(name.encode("utf-8", "surrogateescape")) % shares


def regular_file_stat(path: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a regular file; None for anything else or nothing there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


def _resolves_within(root: str, rel: str, root_real: str) -> bool:
    """Whether ``root``/``rel``, symlinks resolved, is ``root_real`` (the root's real path)
    or below it. Where no part of ``rel`` is a symlink, '.', '..' or empty (a walk's
    paths), it is: an lstat a part of ``rel`` says so (4 us a report), where resolving
    the whole path (realpath: an lstat a part of the root's path too, in Python) took
    14 us."""
    parts = rel.split("/")
    if "" in parts or "." in parts or ".." in parts:
        return inside(root_real, os.path.join(root, rel))
    path = root
    for part in parts:
        path = os.path.join(path, part)
        try:
            linked = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            linked = True  # gone or unreadable: resolved as it is, then opened (or not)
        if linked:
            return inside(root_real, os.path.join(root, rel))
    return True


def read_file(root: Path, rel: str, max_bytes: int, root_real: str | None = None) -> FileData:
    """Read one file of a collection, safely: never outside the root, never blocking.
    ``root_real``: the root's real path, where the caller reads many files of it."""
    path = os.path.join(root, rel)
    if not _resolves_within(str(root), rel, root_real or os.path.realpath(root)):
        raise SkipFile("symlink pointing outside the root")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SkipFile(f"unreadable: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkipFile("not a regular file")
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise SkipFile(f"unreadable: {exc.strerror}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\x00" in data[:8192]:
        raise SkipFile("binary file")
    return FileData(
        rel=rel,
        data=data,
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        truncated=st.st_size > len(data),
    )


def folder_id(path: Path) -> tuple[int, int] | None:
    """A folder's identity (device, inode), or None if ``path`` is not a folder."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
