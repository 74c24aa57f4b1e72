"""Shared fixtures: a config and source folders in tmp_path, HOME pointed there too."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest

from indexer.config import Settings, settings_from_dict
from indexer.daemon import Daemon

# tests/browser.py, the browser tests' plugin, is imported by them before pytest loads it.
pytest.register_assert_rewrite("browser")

# pytest-xdist's workers start with COLUMNS=80. The CLI's consoles take their width from
# COLUMNS once, when made (as trove's modules are imported), and the CLI tests set it for
# each call: without this, a worker's tables would all be 80 wide.
os.environ.pop("COLUMNS", None)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TROVE_CONFIG", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # A proxy from the environment would send requests for 127.0.0.1 elsewhere: the
    # tests' HTTP (SearXNG stand-in, trove serve) never leaves this machine.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture(autouse=True)
def _no_thread_left_running() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    for t in left:
        t.join(timeout=5)
    still = [t.name for t in left if t.is_alive()]
    assert not still, f"threads left running: {still}"


@pytest.fixture(autouse=True)
def _no_dead_inotify_reader() -> None:
    """watchdog reads every inotify watch of a process in one thread, kept in a class
    attribute. A process forked after tests ran (the mutation run forks one for each
    mutant) inherits the attribute but not the thread, and its watches would start blind:
    drop it, as a fresh process has none."""
    from watchdog.observers import inotify_c

    shared = getattr(inotify_c.InotifyFD, "_instance", None)
    if shared is not None and not shared.is_alive():
        inotify_c.InotifyFD._instance = None


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Settings over tmp_path/{reports,commands,conversations,elog}, index in tmp_path/index."""

    def make(**sections: dict[str, object]) -> Settings:
        raw: dict[str, dict[str, object]] = {
            "sources": {
                "reports": str(tmp_path / "reports"),
                "commands": str(tmp_path / "commands"),
                "conversations": str(tmp_path / "conversations"),
                "elog": str(tmp_path / "elog"),
            },
            "index": {"dir": str(tmp_path / "index")},
        }
        for name, values in sections.items():
            raw.setdefault(name, {}).update(values)
        return settings_from_dict(raw, base=tmp_path)

    return make


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write a file under tmp_path (parents created); returns its path."""

    def write_file(rel: str, content: str | bytes) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write_file


# A bound, not a pause: a daemon under a loaded machine (several test suites on 2 cores)
# took over 20 s to land held changes once the fault cleared.
DAEMON_TIMEOUT = 60.0


def polled(predicate: Callable[[], bool], timeout: float = DAEMON_TIMEOUT) -> None:
    """Until ``predicate`` holds, looked at every 10 ms (bounded): for what a daemon does
    between batches, which no condition announces."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# Daemon settings of sources polled too seldom to see a change: only a reconcile finds it.
UNSEEN = {"watch": "poll", "poll_interval_s": 3600, "sweep_s": 3600}


def inotify_overflow() -> None:
    """The warning watchdog logs on a kernel queue overflow (its only signal of one)."""
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost"
    )


class Running:
    """A Daemon running in a thread of the test, and how to wait on its progress."""

    def __init__(self, settings: Settings) -> None:
        self.daemon = Daemon(settings)
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, name="test-daemon")

    def _run(self) -> None:
        try:
            self.daemon.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = DAEMON_TIMEOUT) -> float:
        """Wait for the daemon's next batches until ``predicate`` holds (bounded); the
        seconds it took."""
        started = time.monotonic()
        deadline = started + timeout
        with self.daemon.progress:
            while not predicate():
                left = deadline - time.monotonic()
                assert left > 0, "timed out waiting for the daemon"
                assert not self.errors, self.errors
                self.daemon.progress.wait(min(left, 0.25))
        return time.monotonic() - started


@pytest.fixture
def run_daemon() -> Iterator[Callable[[Settings], Running]]:
    """Start a daemon on these settings (ready: reconciled and watching); stopped after."""
    started: list[Running] = []

    def start(settings: Settings) -> Running:
        running = Running(settings)
        running.thread.start()
        assert running.daemon.wait_ready(DAEMON_TIMEOUT), running.errors
        started.append(running)
        return running

    yield start
    for running in started:
        running.daemon.stop()
        running.thread.join(DAEMON_TIMEOUT)
        assert not running.thread.is_alive()
        assert not running.errors


# ---------------------------------------------------------------- a SearXNG on 127.0.0.1

SEARXNG_FIXTURE = Path(__file__).parent / "fixtures" / "searxng" / "current.json"


class _Searxng(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/ok/search"):
            status, body = 200, SEARXNG_FIXTURE.read_bytes()
        else:
            status, body = 500, b"<h1>Internal Server Error</h1>"
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def searxng() -> Iterator[str]:
    """A fake SearXNG on 127.0.0.1: /ok/search answers the fixture, anything else a 500."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Searxng)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="fake-searxng")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


# ---------------------------------------------------------------- a small disk of its own


def _can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    probe = Path(f"/tmp/trove-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    try:
        ok = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)],
            capture_output=True,
            check=False,
        )
        if ok.returncode != 0:
            return False
        subprocess.run(["umount", str(probe)], check=True)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


CAN_MOUNT = _can_mount()


class SmallDisk:
    """A tmpfs of a few MB mounted for the test, to fill up and to remount read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler"

    def fill(self) -> None:
        """Write until the disk is full (unbuffered: every byte that fits is written)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * size)
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def read_only(self, on: bool) -> None:
        mode = "remount,ro" if on else "remount,rw"
        subprocess.run(["mount", "-o", mode, str(self.path)], check=True)


def reconcile_processes(pid: int | None = None) -> list[psutil.Process]:
    """The processes reconciling for the watcher ``pid`` (this process if None)."""
    found = []
    for child in psutil.Process(pid).children():
        with contextlib.suppress(psutil.Error):
            if any("indexer.reconcile_child" in arg for arg in child.cmdline()):
                found.append(child)
    return found


@contextlib.contextmanager
def small_disk_at(path: Path) -> Iterator[SmallDisk]:
    """A small disk mounted at ``path`` (made if missing) until the block ends."""
    if not CAN_MOUNT:
        pytest.skip("this process may not mount a tmpfs (the injected faults cover it)")
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(path)], check=True)
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk_at(tmp_path / "disk") as disk:
        yield disk


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """A command run in this process (typer's CliRunner) points the root logger at the
    runner's stderr, which is closed after it: undone after every test, so that a later
    test's log lines go nowhere closed."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
