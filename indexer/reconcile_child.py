"""A watcher's whole-collection reconciles, each run in a child process of its own.

A reconcile walks every file of a collection and reads the index's record of each: at a
million reports its objects take ~140 MB, and once they are freed the C library keeps
much of that heap, scattered among pages still in use (``malloc_trim`` gives back only
part of it). A watcher is a long-running process that also serves queries: it starts a
child for each reconcile (the start-up catch-up, the periodic one, after an overflow),
which does the walk and the commit and exits, giving back all it held. The child is
also the one process that forks writer processes for a big build: the watcher has
threads, and a process with threads must not fork.

The child runs this module's ``main`` in this Python: the job (settings, collections, the
log levels) comes pickled on its stdin; what it says goes back pickled on a pipe, one
frame at a time: log records (the watcher's logging handles them, as if its own), then
one outcome per collection. It ends when its parent does (SIGTERM, on Linux by the
kernel), and a SIGTERM makes it abandon its work before the next commit, as a stopping
watcher's own work would be.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from indexer.config import Settings
from indexer.errors import ChildEnded, Interrupted
from indexer.held import fault_cause
from indexer.sources.registry import get_source
from indexer.store import Summary, Syncer

# Once asked to stop, how long the child has to end on its own before it is killed.
STOP_GRACE_S = 10.0
# prctl(2)'s PR_SET_PDEATHSIG: a signal the kernel sends this process when its parent ends.
_PR_SET_PDEATHSIG = 1


@dataclass
class Job:
    """What the child is asked to do."""

    settings: Settings
    names: list[str]
    parent_pid: int
    levels: dict[str, int]  # the parent's logger levels, by logger name ("" for the root)


Outcome = Summary | BaseException


class ReconcileChild:
    """Runs a watcher's whole-collection reconciles, each in a child process (from any
    of its threads: the children wait for each collection's writer lock in turn)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._running: dict[int, subprocess.Popen[bytes]] = {}
        self._stopping = False

    def run(self, names: list[str]) -> Iterator[tuple[str, Outcome]]:
        """Reconcile ``names`` in a child process: each collection's summary, or what it
        failed with (``Interrupted`` once stopping), as the child reports it. Every name
        gets an outcome, whatever becomes of the child."""
        if self._stopping:
            yield from ((name, Interrupted("stopping")) for name in names)
            return
        told: set[str] = set()
        process = self._start(names)
        try:
            assert process.stdout is not None
            for frame in _frames(process.stdout):
                if frame[0] == "log":
                    _relay(frame[1])
                    continue
                _, name, outcome = frame
                told.add(name)
                yield name, outcome
        finally:
            self._end(process)
        untold = [name for name in names if name not in told]
        if untold:
            ended = ChildEnded(
                f"the reconcile process (pid {process.pid}) ended "
                f"{_how(process.returncode)} before it was done"
            )
            for name in untold:
                yield name, (Interrupted("stopping") if self._stopping else ended)

    def stop(self) -> None:
        """Ask the running children (and any later one) to stop: each abandons its work
        before its next commit. Takes no lock (a signal handler may call it)."""
        self._stopping = True
        for process in list(self._running.values()):
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)

    def _start(self, names: list[str]) -> subprocess.Popen[bytes]:
        job = Job(self.settings, names, os.getpid(), _levels())
        process = subprocess.Popen(
            _command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        self._running[process.pid] = process
        if self._stopping:  # stop() came while it started
            self.stop()
        assert process.stdin is not None
        try:
            pickle.dump(job, process.stdin, pickle.HIGHEST_PROTOCOL)
            process.stdin.close()
        except OSError:  # it ended already: its outcome says so
            pass
        return process

    def _end(self, process: subprocess.Popen[bytes]) -> None:
        """Wait for the child to end (killed if it outlives the grace)."""
        try:
            process.wait(STOP_GRACE_S if self._stopping else None)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        finally:
            if process.stdout is not None:
                process.stdout.close()
            self._running.pop(process.pid, None)


def _command() -> list[str]:
    """How the child is started: this Python, without the working folder on its path (a
    folder of the user's named ``indexer`` would be imported instead), and with the
    folder this package came from last on it (found first where it is installed)."""
    here = str(Path(__file__).resolve().parent.parent)
    code = f"import sys; sys.path.append({here!r}); from {__name__} import main; main()"
    return [sys.executable, "-P", "-c", code]


def _frames(stream: IO[bytes]) -> Iterator[tuple[Any, ...]]:
    """The child's frames until its pipe closes (a frame cut short ends them too)."""
    while True:
        try:
            frame = pickle.load(stream)
        except (EOFError, pickle.UnpicklingError, OSError):
            return
        if isinstance(frame, tuple) and frame:
            yield frame


def _relay(fields: dict[str, Any]) -> None:
    """A log record of the child, handled by the parent's logging as its own."""
    record = logging.makeLogRecord(fields)
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)


def _how(returncode: int | None) -> str:
    if returncode is None:
        return "unexpectedly"
    if returncode < 0:
        return f"by signal {-returncode} ({signal.Signals(-returncode).name})"
    return f"with exit status {returncode}"


def _levels() -> dict[str, int]:
    """This process's logger levels that are set, the root's as ""."""
    levels = {"": logging.getLogger().level}
    for name, logger in logging.root.manager.loggerDict.items():
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            levels[name] = logger.level
    return levels


# --------------------------------------------------------------------------- the child


class _Frames:
    """The child's side of the pipe: one pickled frame at a time. A pipe the parent no
    longer reads (it is gone) stops the work."""

    def __init__(self, stream: IO[bytes], stop: _Stop) -> None:
        self.stream = stream
        self.stop = stop
        self.lock = threading.Lock()

    def send(self, *frame: Any) -> None:
        data = pickle.dumps(frame, pickle.HIGHEST_PROTOCOL)
        with self.lock:
            if self.stop.parent_gone:
                return
            try:
                self.stream.write(data)
                self.stream.flush()
            except OSError:  # a broken pipe: nobody reads what this process says
                self.stop.parent_gone = True
                self.stop.set()


class _ToParent(logging.Handler):
    """Sends each log record to the parent, its message and traceback as text."""

    def __init__(self, frames: _Frames) -> None:
        super().__init__()
        self.frames = frames

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = dict(record.__dict__)
            fields["msg"], fields["args"] = record.getMessage(), None
            if record.exc_info:
                fields["exc_text"] = logging.Formatter().formatException(record.exc_info)
            fields["exc_info"] = None
            self.frames.send("log", {k: v for k, v in fields.items() if _picklable(v)})
        except Exception:  # noqa: BLE001 (a record that cannot go is logging's concern)
            self.handleError(record)


def _picklable(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 (anything pickle refuses)
        return False
    return True


def _end_with_parent(parent_pid: int) -> None:
    """SIGTERM this process when its parent ends (Linux), or now if it already has."""
    name = ctypes.util.find_library("c")
    if sys.platform.startswith("linux") and name is not None:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(name, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def _failure(exc: BaseException) -> BaseException:
    """``exc`` as it can reach the parent: itself, or a RuntimeError saying it. A pickled
    exception loses its ``__cause__``: the system's error behind a write fault (what
    status says of it) goes as its ``cause``."""
    cause = fault_cause(exc)
    if cause is not None and getattr(exc, "cause", None) is None:
        with contextlib.suppress(AttributeError):
            exc.cause = OSError(cause.errno, cause.strerror)  # type: ignore[attr-defined]
    return exc if _picklable(exc) else RuntimeError(f"{type(exc).__name__}: {exc}")


class _Stop:
    """Set by SIGTERM, or once the parent is gone: the reconcile is abandoned before its
    next commit. (A threading.Event's ``set`` takes a lock that the code a signal
    interrupts may hold: a flag is what a signal handler may set.)"""

    def __init__(self) -> None:
        self.asked = False
        self.parent_gone = False

    def set(self, *_: Any) -> None:
        self.asked = True

    def is_set(self) -> bool:
        return self.asked


def main() -> None:
    cancel = _Stop()
    signal.signal(signal.SIGTERM, cancel.set)
    # A Ctrl-C at a terminal reaches the whole process group: the watcher stops this
    # process itself (SIGTERM), between commits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The frames go on the real stdout; anything else printed goes to stderr.
    frames = _Frames(os.fdopen(os.dup(1), "wb"), cancel)
    os.dup2(2, 1)
    job: Job = pickle.load(sys.stdin.buffer)
    _end_with_parent(job.parent_pid)
    root = logging.getLogger()
    root.handlers[:] = [_ToParent(frames)]
    for name, level in job.levels.items():
        logging.getLogger(name or None).setLevel(level)
    for name in job.names:
        syncer = Syncer(job.settings, get_source(name))
        syncer.cancel = cancel
        try:
            outcome: Outcome = syncer.reconcile()
        except Exception as exc:  # noqa: BLE001 (every failure goes to the parent)
            outcome = _failure(exc)
            if not isinstance(exc, Interrupted):
                outcome.add_note(f"in the reconcile process:\n{traceback.format_exc().rstrip()}")
        frames.send("outcome", name, outcome)
        if isinstance(outcome, Interrupted):
            break
