"""What goes wrong with an index folder, as the store (indexer/store.py) and everything
that reads or writes an index say it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class DamagedIndex(ValueError):
    """A reader found a value in an index that cannot be what was written (a report's
    key that is not UTF-8): the index is damaged though its own check found nothing."""


class StoreError(Exception):
    """The index folder cannot be used."""


class ForeignIndexError(StoreError):
    """The index path holds something that is not a trove index; trove will not touch it."""


def unusable_index_folder(path: Path, exc: OSError) -> StoreError:
    """The error for an index folder that cannot be made or written."""
    return StoreError(
        f"cannot use the index folder {path}: {exc.strerror or exc}; "
        "set [index] dir to a folder trove may write"
    )


class WriteFault(StoreError):
    """A commit the index folder could not take (a full disk, a read-only folder, ...): the
    index is at its last commit, its partial files gone. The changes stay to be retried."""


class IndexLockedError(StoreError):
    """Another writer held the index for longer than we were willing to wait."""


class Interrupted(StoreError):
    """The work was abandoned on request (a stopping daemon); nothing was committed."""


class Cancel(Protocol):
    """What long work asks whether it is to stop (a ``threading.Event`` is one)."""

    def is_set(self) -> bool: ...


class ChildEnded(StoreError):
    """The process a watcher started for a reconcile ended before it said how the
    collection went (killed, by the OOM killer say): nothing was committed past its last
    commit, and the reconcile is retried until it lands."""
