"""Changes a commit could not take (a full disk, a read-only index folder, a reconcile
process killed), kept per collection and retried with backoff until they land: nothing
the watcher saw is lost to a write fault, and status says what is pending and why."""

from __future__ import annotations

import errno
import threading
import time
from dataclasses import dataclass, field

from indexer.errors import ChildEnded

# Held changes are retried after this long, doubling up to the cap: they land within
# RETRY_MAX_S of the fault clearing.
RETRY_FIRST_S = 0.25
RETRY_MAX_S = 2.0
# A reconcile process that keeps ending (the OOM killer strikes it each time) is started
# again at most once a minute: each try costs the machine a walk and a build's memory.
RETRY_CHILD_MAX_S = 60.0


@dataclass
class _Held:
    """A collection's changes that a commit could not take."""

    since: float
    rels: set[str] | None = field(default_factory=set)  # None: reconcile it all
    what: str = ""
    attempts: int = 0
    due: float = 0.0
    # Held since the last retry began (``due``): what that retry may not hold.
    since_due: set[str] = field(default_factory=set)
    whole_since_due: bool = False


_FAULT_KINDS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "index folder read-only",
    errno.EACCES: "index folder not writable",
    errno.EPERM: "index folder not writable",
    errno.EIO: "I/O error on the index folder",
}


def fault_cause(exc: BaseException) -> OSError | None:
    """The error of the system behind a write fault, if one is (its causes followed)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _FAULT_KINDS:
            return seen
        seen = seen.__cause__ or getattr(seen, "cause", None)
    return None


def fault_kind(exc: BaseException) -> str:
    """The kind of write fault behind an exception, in words."""
    if isinstance(exc, ChildEnded):
        return "the reconcile process ended"
    cause = fault_cause(exc)
    return "cannot write the index" if cause is None else _FAULT_KINDS[cause.errno or 0]


class HeldChanges:
    """Per collection, its held changes (``rels`` None: reconcile it all). The watcher's
    batches hold changes while the daemon's loop retries them: each call is atomic."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()

    def hold(self, name: str, rels: set[str] | None, exc: BaseException) -> bool:
        """Keep ``rels`` (None: the whole collection) and set the next retry; True the
        first time the collection holds changes."""
        with self._lock:
            held = self._held.get(name)
            first = held is None
            if held is None:
                held = self._held[name] = _Held(since=time.time())
            if rels is None:
                held.rels = None
                held.whole_since_due = True
            else:
                if held.rels is not None:
                    held.rels |= rels
                held.since_due |= rels
            held.what = fault_kind(exc)
            held.attempts += 1
            cap = RETRY_CHILD_MAX_S if isinstance(exc, ChildEnded) else RETRY_MAX_S
            held.due = time.monotonic() + min(cap, RETRY_FIRST_S * 2 ** (held.attempts - 1))
            return first

    def due(self) -> list[tuple[str, set[str] | None]]:
        """The collections whose retry is due, with their changes (a copy): the retry of
        each begins."""
        now = time.monotonic()
        found = []
        with self._lock:
            for name, h in self._held.items():
                if now >= h.due:
                    found.append((name, None if h.rels is None else set(h.rels)))
                    h.since_due, h.whole_since_due = set(), False
        return found

    def landed(self, name: str) -> float:
        """The changes of the collection's last retry landed: forget them, keeping those
        held since it began (due again at once); when the changes were first held."""
        with self._lock:
            held = self._held[name]
            if not held.since_due and not held.whole_since_due:
                del self._held[name]
                return held.since
            held.rels = None if held.whole_since_due else held.since_due
            held.since_due, held.whole_since_due = set(), False
            held.attempts = 0
            held.due = time.monotonic()
            return held.since

    def count(self) -> int:
        """How many changes are held (a whole collection counts one)."""
        with self._lock:
            return sum(len(h.rels) if h.rels is not None else 1 for h in self._held.values())

    def line(self) -> str:
        """What status shows while changes are held: "disk full: 12 changes pending since
        10:51" (one part per kind of fault); empty when none are."""
        with self._lock:
            held = dict(self._held)
        if not held:
            return ""
        parts = []
        for what in dict.fromkeys(h.what for h in held.values()):
            helds = [h for h in held.values() if h.what == what]
            since = time.strftime("%H:%M", time.localtime(min(h.since for h in helds)))
            if any(h.rels is None for h in helds):
                count = "changes"
            else:
                n = sum(len(h.rels or ()) for h in helds)
                count = f"{n} change{'s' if n != 1 else ''}"
            names = ", ".join(n for n, h in held.items() if h.what == what)
            parts.append(f"{what}: {count} pending since {since} ({names})")
        return "; ".join(parts)
