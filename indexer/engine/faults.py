"""When a write or read of an index fails: which failures come from where the index lives
(a full disk, a read-only folder) rather than from what it holds, the one-line error of a
commit that could not be written, and releasing what a failed writer held."""

from __future__ import annotations

import contextlib
import errno
import gc
import shutil
import sys
import threading
import traceback
import warnings
from pathlib import Path
from typing import Any, TypeGuard

# What a write can fail with because of where the index lives, not what it holds: a full
# disk or quota, a read-only or forbidden folder, an I/O error.
WRITE_FAULTS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
)


def is_write_fault(exc: BaseException) -> TypeGuard[OSError]:
    return isinstance(exc, OSError) and exc.errno in WRITE_FAULTS


# One release at a time: each sets the process's unraisable hook and warning filters for
# its while and puts back what it found, so two at once in two threads (a daemon's writer
# and a query's reader) would put back each other's.
_RELEASING = threading.RLock()


def release(exc: BaseException, writer: list[Any] | None = None) -> None:
    """After a failed write or read: cancel the failed writer (``writer``'s one item, if
    any) and close the files it and the exception's frames hold, now rather than whenever
    the garbage collector finds them, and quietly: flushing them fails too (a full disk),
    and a file an engine left open when it failed warns."""
    with _RELEASING:
        _release(exc, writer)


def _release(exc: BaseException, writer: list[Any] | None) -> None:
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, (OSError, ResourceWarning)):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            while writer:  # popped: nothing else holds it once cancelled
                with contextlib.suppress(Exception):
                    writer.pop().cancel()
            seen: BaseException | None = exc
            while seen is not None:  # and the exceptions it arose from
                traceback.clear_frames(seen.__traceback__)
                seen = seen.__context__
            gc.collect()
    finally:
        sys.unraisablehook = previous


class CommitFailed(Exception):
    """A commit that could not be written (``cause``: a write fault). The index stays at its
    last commit and the commit's partial files are gone; ``str()`` is one line saying so."""

    def __init__(self, folder: Path, cause: OSError, written: int) -> None:
        self.folder, self.cause, self.written = folder, cause, written
        try:
            free = shutil.disk_usage(folder).free
        except OSError:
            free = -1
        self.free = free
        reason = cause.strerror or type(cause).__name__
        room = f"{_size(free)} free" if free >= 0 else "free space unknown"
        needed = f"; it had written {_size(written)} when it failed" if written else ""
        super().__init__(
            f"could not write to {folder}: {reason} ({room}{needed}); the index is "
            "unchanged, at its last commit"
        )


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"
