"""A collection's files on disk: which there are (``walk``), their stats, and reading one
safely (never outside the collection's folder, never blocking on a FIFO, binary files
refused). The store plans from them; an engine that reads the files itself (the
plain-scan reference engine) reads them the same way."""

from __future__ import annotations

import os
import stat
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


def walk(root: Path, source: Selection) -> Listing:
    """Every file of the collection under ``root`` with its (mtime_ns, size).

    Symlinks are followed only while they stay inside the root; a folder is entered once
    (symlink loops end there). Files that are not regular files are left out. A root that
    exists but cannot be listed (permissions) raises StoreError: an empty listing would
    delete every document of the collection.
    """
    listing = Listing()
    root_real = os.path.realpath(root)
    seen_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root)
    except OSError:
        return listing
    seen_dirs.add((st.st_dev, st.st_ino))
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
                        listing.skipped["folder seen before (a symlink loop or a second link)"] += 1
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
    return listing


def regular_file_stat(path: str) -> tuple[int, int] | None:
    """(mtime_ns, size) of a regular file; None for anything else or nothing there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None


def read_file(root: Path, rel: str, max_bytes: int) -> FileData:
    """Read one file of a collection, safely: never outside the root, never blocking."""
    path = os.path.join(root, rel)
    if not inside(os.path.realpath(root), path):
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
