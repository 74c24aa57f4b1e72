"""The watcher's seat: one per index folder, held by the one process that keeps it fresh.

Every process that serves queries for a while (`trove daemon`, `trove serve`, `trove
mcp`) asks for the seat; the first gets it and watches, the others stand by and ask
again every SEAT_POLL_S. The seat is an exclusive ``flock`` on ``daemon.lock`` in the
index folder: the kernel lets it go when its holder exits or is killed (kill -9
included), so a stand-by takes over within SEAT_POLL_S and a dead holder never blocks
anyone. The lock file names the holder (pid, kind, since) for messages and status.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Literal

SEAT_FILE = "daemon.lock"
# How often a stand-by asks for the seat again.
SEAT_POLL_S = 0.2

WatcherKind = Literal["daemon", "serve", "mcp"]
KINDS: tuple[WatcherKind, ...] = ("daemon", "serve", "mcp")


class SeatTaken(Exception):
    """Another process holds the seat; ``str()`` names it."""


class SeatUnusable(Exception):
    """This process cannot hold the seat: the index folder cannot be written (read-only,
    another user's, or not creatable); ``str()`` says which and why."""


def writable_problem(index_dir: Path) -> str | None:
    """Why this process could not write the index folder (and so must not watch), or None.

    Checked before taking the seat: a process that holds it but cannot commit would keep
    the folder's rightful writers out. The folder and every collection folder in it must
    be writable (the folder is made if missing)."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {index_dir}: {exc.strerror or exc}"
    folders = [index_dir]
    try:
        folders += [p for p in index_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError as exc:
        return f"cannot list {index_dir}: {exc.strerror or exc}"
    for folder in folders:
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder} is not writable by this user (uid {os.getuid()})"
    return None


class Seat:
    """The watcher's seat of one index folder, as one process holds or asks for it."""

    def __init__(self, index_dir: Path) -> None:
        self.path = Path(index_dir) / SEAT_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def take(self, kind: WatcherKind) -> None:
        """Take the seat now, or raise SeatTaken (naming the holder) or SeatUnusable."""
        if self._fd is not None:
            return
        problem = writable_problem(self.path.parent)
        if problem is not None:
            raise SeatUnusable(problem)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SeatUnusable(f"cannot open {self.path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise SeatTaken(describe_holder(read_holder(self.path))) from None
            raise SeatUnusable(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
        # A dead holder's record may still be there: ours is written over it.
        record = json.dumps({"pid": os.getpid(), "kind": kind, "since": time.time()}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
        except OSError:
            pass  # a full disk: the seat is ours all the same, only unnamed
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # and with it the flock
            self._fd = None


def read_holder(path: Path) -> dict[str, object]:
    """What the seat file says of its holder (empty if nothing readable)."""
    try:
        data = json.loads(path.read_bytes()[:4096] or b"{}")
    except (OSError, ValueError):
        return {}
    if isinstance(data, int):  # written by a trove before the seat had a kind
        return {"pid": data, "kind": "daemon"}
    return data if isinstance(data, dict) else {}


def describe_holder(holder: dict[str, object]) -> str:
    """'trove mcp (pid 123)', or 'another trove process' when the record is unreadable."""
    pid, kind = holder.get("pid"), holder.get("kind")
    if not isinstance(pid, int):
        return "another trove process"
    return f"trove {kind if kind in KINDS else 'daemon'} (pid {pid})"
