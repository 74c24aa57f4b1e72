"""Durability: a commit the index folder cannot take (a full disk, a read-only folder, an
I/O error) leaves the index at its last commit with no partial files, says so in one line,
and the daemon keeps the changes and lands them once the fault clears.

Two kinds of fault: a real one, on a small tmpfs mounted for the test (a disk filled up,
a folder remounted read-only), where this process may mount one; and one injected at the
engine's file writes (TroveStorage.create_file), which runs everywhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lookups
import pytest
from conftest import (
    DAEMON_TIMEOUT,
    UNSEEN,
    SmallDisk,
    inotify_overflow,
    polled,
    reconcile_processes,
    small_disk_at,
)

from indexer.collection import LOCK_FILE
from indexer.config import Settings
from indexer.engine.faults import release
from indexer.engine.whoosh.codec import TroveCodec
from indexer.engine.whoosh.inverting import TroveSegmentWriter
from indexer.engine.whoosh.storage import TroveStorage, open_index
from indexer.errors import WriteFault
from indexer.reindex import reindex
from indexer.sources.registry import get_source
from indexer.status import read_watcher_status
from indexer.store import Syncer

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 20.0
FAULTS = {
    errno.ENOSPC: "No space left on device",
    errno.EDQUOT: "Disk quota exceeded",
    errno.EROFS: "Read-only file system",
    errno.EACCES: "Permission denied",
    errno.EIO: "Input/output error",
}


class Injected:
    """Faults at the engine's file writes: while ``errno`` is set, creating an index file
    whose name matches ``names`` in a collection ``collections`` takes fails with it (after
    ``after`` such files were made); ``made`` counts the files it was asked for."""

    def __init__(self) -> None:
        self.errno: int | None = None
        self.after = 0
        self.names: Callable[[str], bool] = lambda name: True
        self.collections: Callable[[str], bool] = lambda collection: True
        self.made = 0
        self.refused: set[str] = set()  # the collections refused a file so far


@pytest.fixture
def injected(monkeypatch: pytest.MonkeyPatch) -> Injected:
    fault = Injected()
    create = TroveStorage.create_file

    def create_file(self: TroveStorage, name: str, *args: Any, **kwargs: Any) -> Any:
        if (
            fault.errno is not None
            and fault.names(name)
            and fault.collections(Path(self.folder).name)
        ):
            fault.made += 1
            if fault.made > fault.after:
                fault.refused.add(Path(self.folder).name)
                raise OSError(fault.errno, os.strerror(fault.errno), name)
        return create(self, name, *args, **kwargs)

    monkeypatch.setattr(TroveStorage, "create_file", create_file)
    return fault


def _reports(write: Callable[[str, str], Path], n: int = 40) -> None:
    for i in range(n):
        write(f"reports/net/r{i:03d}_2025110{i % 9 + 1}.md", f"# r{i}\n\nproxy timeout {i} " * 20)


def _index_files(settings: Settings) -> dict[str, int]:
    """The index's files and sizes (less the writer lock, which names its holder)."""
    folder = settings.index_dir / "reports"
    return {
        p.name: p.stat().st_size
        for p in sorted(folder.iterdir())
        if p.name != LOCK_FILE and (p.is_file() or p.is_dir())
    }


def _found(settings: Settings, word: str) -> set[str]:
    return set(lookups.keys_with_prefix(settings, "reports", "content", word))


# --------------------------------------------------------------------------- a failed commit


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EMFILE], ids=["ENOSPC", "EMFILE"])
def test_an_index_that_cannot_be_created_is_built_when_it_can_be(
    make_settings, write, injected: Injected, code: int
) -> None:
    """The first build's empty index cannot be made: on a fault of the folder (a full
    disk) the build says it waits for it; any other error is raised as itself."""
    _reports(write, 3)
    settings = make_settings()
    syncer = Syncer(settings, get_source("reports"))
    injected.errno = code
    with pytest.raises((WriteFault, OSError)) as failed:
        syncer.reconcile()
    folder = settings.index_dir / "reports"
    if code == errno.ENOSPC:
        assert isinstance(failed.value, WriteFault)
        assert str(failed.value) == (
            f"could not create the index in {folder}: {os.strerror(code)}; it is built when it can be"
        )
    else:
        assert isinstance(failed.value, OSError) and failed.value.errno == code
    injected.errno = None
    syncer.reconcile()
    assert len(_found(settings, "proxy")) == 3


@pytest.mark.parametrize("code", list(FAULTS), ids=[errno.errorcode[c] for c in FAULTS])
@pytest.mark.parametrize("at", ["first file", "table of contents"])
def test_a_failed_commit_leaves_the_index_at_its_last_commit(
    make_settings, write, injected: Injected, code: int, at: str
) -> None:
    _reports(write)
    settings = make_settings()
    syncer = Syncer(settings, get_source("reports"))
    syncer.parallel = False
    syncer.reconcile()
    before = _index_files(settings)
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    injected.errno = code
    if at == "table of contents":  # every segment file written, then the TOC fails
        injected.names = lambda name: name.startswith("_MAIN_")
    with pytest.raises(WriteFault) as failed:
        syncer.reconcile()
    message = str(failed.value)
    assert "\n" not in message and FAULTS[code] in message
    assert str(settings.index_dir / "reports") in message and "free" in message
    assert "unchanged, at its last commit" in message
    assert _index_files(settings) == before  # no partial file left
    assert _found(settings, "zebrafish") == set()
    assert len(_found(settings, "proxy")) == 40  # the last commit still answers
    injected.errno = None
    syncer.reconcile()
    assert _found(settings, "zebrafish") == {"net/zebra_20251201.md"}


def test_reindex_on_a_full_disk_or_a_read_only_folder_exits_1_in_one_line_and_recovers(
    tmp_path: Path, write, small_disk: SmallDisk
) -> None:
    _reports(write)
    config = tmp_path / "trove.toml"
    config.write_text(
        f'[sources]\nreports = "{tmp_path / "reports"}"\n[index]\ndir = "{small_disk.path}"\n',
        encoding="utf-8",
    )

    def trove(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "query.cli", "--config", str(config), *args],
            check=False,
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )

    assert trove("reindex", "--collection", "reports").returncode == 0
    for i in range(40):
        write(f"reports/big/b{i:03d}_20251201.md", f"zebrafish {i} " * 4000)
    small_disk.fill()
    failed = trove("reindex", "--collection", "reports")
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr + failed.stdout
    line = next(x for x in failed.stderr.splitlines() if "No space left on device" in x)
    assert line.startswith("trove: reports: could not write to ") and "free" in line
    leftovers = [p.name for p in (small_disk.path / "reports").iterdir() if p.suffix == ".tmp"]
    assert leftovers == []
    small_disk.free()
    # A read-only index folder (the daemon's case is injected: its lock file, open for
    # writing, keeps a mount from turning read-only).
    small_disk.read_only(True)
    try:
        refused = trove("reindex", "--collection", "reports")
    finally:
        small_disk.read_only(False)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert any("Read-only file system" in x for x in refused.stderr.splitlines())
    assert trove("reindex", "--collection", "reports").returncode == 0
    found = trove("search", "reports", "zebrafish", "--json")
    assert found.returncode == 0 and "b000_20251201.md" in found.stdout


def _open_under(folder: Path) -> list[str]:
    """The files under ``folder`` this process holds open."""
    opened = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, gone since
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(f"{folder}{os.sep}"):
                opened.append(target)
    return opened


@pytest.mark.parametrize("fails_at", ["making", "commit"])
def test_a_failed_writer_holds_no_file_open(
    make_settings, write, injected: Injected, fails_at: str
) -> None:
    """A writer that could not be made, or whose commit failed and whose cancel meets the
    same fault, closes the files it opened (its temporary folder's among them) and
    removes that folder while it is still referenced: a file left for the garbage
    collector warns in whichever thread collects it, at whatever time."""
    _reports(write, 3)
    settings = make_settings()
    Syncer(settings, get_source("reports")).reconcile()
    folder = settings.index_dir / "reports"
    index = open_index(folder, get_source("reports").fields())
    if fails_at == "making":
        injected.names = lambda name: name.endswith(".pst")  # after the column's temporary file
        injected.errno = errno.EIO
        with pytest.raises(OSError) as failed:  # its frames hold the writer
            TroveSegmentWriter(index, _lk=False, codec=TroveCodec())
        assert failed.value.errno == errno.EIO
    else:
        writer = TroveSegmentWriter(index, _lk=False, codec=TroveCodec())
        writer.add_document(key="net/new.md", kind="doc", file="net/new.md", content="okapi")
        injected.errno = errno.EIO
        with pytest.raises(OSError):
            writer.commit()
        with pytest.raises(OSError):
            writer.cancel()  # the fault again, as it closes the segment's files
    assert injected.refused == {"reports"}
    assert _open_under(folder) == []
    assert not (folder / "MAIN.tmp").exists()


def test_releases_in_two_threads_put_back_the_hook_and_filters_they_found() -> None:
    """Each release sets the process's unraisable hook and warning filters for its while:
    two at once (a daemon's writer and a query's reader) must not put back each other's.
    The second release is called while the first cancels its writer, which ends only
    once the second release has begun (or could not: one at a time); the second's
    writer cancels once the first release has ended."""
    hook, filters = sys.unraisablehook, list(warnings.filters)
    first_in, second_calls = threading.Event(), threading.Event()
    second_in, first_done = threading.Event(), threading.Event()

    class Writer:
        def __init__(self, cancel: Callable[[], None]) -> None:
            self.cancel = cancel

    def first_cancel() -> None:
        first_in.set()
        second_calls.wait(TIMEOUT)
        second_in.wait(0.2)  # set at once if two releases may run together

    def second_cancel() -> None:
        second_in.set()
        first_done.wait(TIMEOUT)

    def second() -> None:
        first_in.wait(TIMEOUT)
        second_calls.set()
        release(OSError(errno.EIO, "second"), [Writer(second_cancel)])

    thread = threading.Thread(target=second)
    thread.start()
    release(OSError(errno.EIO, "first"), [Writer(first_cancel)])
    first_done.set()
    thread.join(TIMEOUT)
    assert second_in.is_set()
    assert sys.unraisablehook is hook
    assert warnings.filters == filters


# --------------------------------------------------------------------------- the daemon


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EIO])
def test_the_daemon_keeps_refused_changes_and_lands_them_when_the_fault_clears(
    make_settings, write, injected: Injected, run_daemon, code: int, caplog
) -> None:
    _reports(write, 5)
    settings = make_settings(daemon={"quiet_ms": 50})
    d = run_daemon(settings)
    injected.errno = code
    caplog.set_level("INFO", logger="indexer.daemon")
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    d.wait_until(lambda: bool(d.daemon.health_snapshot()["fault"]))
    health = d.daemon.health_snapshot()
    assert health["pending"] >= 1 and "pending since" in health["fault"]
    assert FAULTS[code] in health["last_error"]
    # One line says which collection, why, and that nothing is lost.
    [said] = [r.getMessage() for r in caplog.records if "retried" in r.getMessage()]
    assert said.startswith("reports: ") and FAULTS[code] in said
    assert said.endswith("; the changes are kept and retried until they land")
    write("reports/net/okapi_20251202.md", "an okapi report")  # more, while it fails

    def both_held() -> bool:
        # Both changes held, none waiting in a batch: the fault is cleared with nothing
        # left for a batch to land before a retry does.
        health = d.daemon.health_snapshot()
        return health["pending"] == 2 and "2 changes pending" in health["fault"]

    d.wait_until(both_held)
    assert _found(settings, "zebrafish") == set()
    injected.errno = None
    # Landed by the retry (its line below), not by the periodic pass (every 600 s).
    d.wait_until(lambda: bool(_found(settings, "okapi")) and bool(_found(settings, "zebra")))
    # Said when they land: how many, how long after the first failure, and what changed.
    said = [r.getMessage() for r in caplog.records]
    landed = [m for m in said if "held change(s) landed" in m]
    assert landed and re.fullmatch(
        r"reports: [12] held change\(s\) landed, \d+\.\d s after the first failure", landed[0]
    )
    # (Two retries when the fault cleared during one that began with the first change.)
    assert any(re.match(r"reports \(retry\): \+[12] ~0 -0 in ", m) for m in said)
    # The health says so once the retry returns, a moment after its commit is seen.
    d.wait_until(lambda: d.daemon.health_snapshot()["fault"] == "", timeout=5.0)
    assert d.thread.is_alive()


def _landed(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "held change(s) landed" in r.getMessage()]


def test_a_batch_refused_again_on_its_retry_stays_held_and_lands_as_itself(
    make_settings, write, injected: Injected, run_daemon, caplog
) -> None:
    _reports(write, 5)
    settings = make_settings(daemon={"quiet_ms": 50})
    d = run_daemon(settings)
    caplog.set_level("INFO", logger="indexer.daemon")
    injected.errno = errno.ENOSPC
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    d.wait_until(lambda: bool(d.daemon.health_snapshot()["fault"]))
    refused = injected.made
    polled(lambda: injected.made > refused)  # its retry, refused too
    health = d.daemon.health_snapshot()
    assert health["pending"] == 1 and FAULTS[errno.ENOSPC] in health["last_error"]
    injected.errno = None
    d.wait_until(lambda: bool(_found(settings, "zebrafish")))
    [landed] = _landed(caplog)
    assert re.fullmatch(
        r"reports: 1 held change\(s\) landed, \d+\.\d s after the first failure", landed
    )


def _two_collections(write, make_settings, run_daemon, **daemon: Any) -> tuple[Settings, Any]:
    """A daemon over a few reports and a command (the collections it watches first)."""
    _reports(write, 5)
    write("commands/c.md", "a command")
    settings = make_settings(daemon=daemon)
    return settings, run_daemon(settings)


def test_a_batch_refused_for_one_collection_lands_for_the_others(
    make_settings, write, injected: Injected, run_daemon
) -> None:
    """One batch of two collections; the first the batch applies is refused (each root
    has its own watch, so either may come first)."""
    settings, d = _two_collections(write, make_settings, run_daemon, quiet_ms=500)
    first: list[str] = []

    def the_first(collection: str) -> bool:
        first[:] = first or [collection]
        return collection == first[0]

    injected.errno = errno.EROFS
    injected.collections = the_first
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    write("commands/okapi.md", "an okapi command")
    landed = {
        "reports": lambda: bool(_found(settings, "zebrafish")),
        "commands": lambda: "okapi.md" in lookups.documents(settings, "commands"),
    }
    polled(lambda: bool(first))
    [other] = set(landed) - set(first)
    d.wait_until(landed[other])
    assert not landed[first[0]]()
    polled(lambda: d.daemon.health_snapshot()["pending"] == 1)  # once the batch ends
    injected.errno = None
    d.wait_until(landed[first[0]])


def test_one_collection_still_refused_does_not_hold_back_another_s_retry(
    make_settings, write, injected: Injected, run_daemon
) -> None:
    settings, d = _two_collections(write, make_settings, run_daemon, quiet_ms=50)
    injected.errno = errno.EIO
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    polled(lambda: "reports" in injected.refused)
    write("commands/okapi.md", "an okapi command")
    polled(lambda: "commands" in injected.refused)
    # The fault clears for the second collection held, not for the first.
    injected.collections = lambda collection: collection == "reports"
    d.wait_until(lambda: "okapi.md" in lookups.documents(settings, "commands"))
    assert _found(settings, "zebrafish") == set()
    injected.errno = None
    d.wait_until(lambda: bool(_found(settings, "zebrafish")))


def test_a_reconcile_refused_is_held_whole_and_lands_when_the_fault_clears(
    tmp_path: Path, make_settings, write, run_daemon, caplog
) -> None:
    """Changes no event told of (a source polled too seldom), found by a reconcile the
    reports' index folder refuses (its own disk, remounted read-only): the whole
    collection is held and reconciled again until it lands; the other collections'
    reconciles go on meanwhile."""
    caplog.set_level("INFO", logger="indexer.daemon")
    with small_disk_at(tmp_path / "index" / "reports") as disk:
        settings, d = _two_collections(write, make_settings, run_daemon, **UNSEEN)
        write("reports/net/zebra_20251201.md", "a zebrafish report")
        write("commands/okapi.md", "an okapi command")
        disk.read_only(True)
        try:
            inotify_overflow()
            d.wait_until(lambda: "okapi.md" in lookups.documents(settings, "commands"))
            d.wait_until(lambda: bool(d.daemon.health_snapshot()["fault"]))
            # Reconciled again, refused again: by more than one reconcile process.
            tried: set[int] = set()

            def tried_twice() -> bool:
                tried.update(p.pid for p in reconcile_processes())
                return len(tried) >= 2

            polled(tried_twice)
            [said] = [r.getMessage() for r in caplog.records if "retried" in r.getMessage()]
            assert said.startswith("reports: ") and FAULTS[errno.EROFS] in said
            health = d.daemon.health_snapshot()
            assert health["pending"] == 1 and FAULTS[errno.EROFS] in health["last_error"]
            assert health["fault"].startswith("index folder read-only: changes pending since ")
            assert _found(settings, "zebrafish") == set()
        finally:
            disk.read_only(False)
        d.wait_until(lambda: bool(_found(settings, "zebrafish")))
        d.daemon.stop()
        d.thread.join(DAEMON_TIMEOUT)
    [landed] = _landed(caplog)
    assert re.fullmatch(
        r"reports: every held change\(s\) landed, \d+\.\d s after the first failure", landed
    )
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("reports (retry): +1 ~0 -0 in ") for m in said), said


def test_the_daemon_rides_out_a_full_disk(
    tmp_path: Path, make_settings, write, small_disk: SmallDisk, run_daemon
) -> None:
    _reports(write, 5)
    settings = make_settings(daemon={"quiet_ms": 50}, index={"dir": str(small_disk.path)})
    d = run_daemon(settings)
    small_disk.fill()
    write("reports/net/zebra_20251201.md", "a zebrafish report " * 20000)
    d.wait_until(lambda: "disk full" in d.daemon.health_snapshot()["fault"])

    # `trove status` in another process reads it too: the status file is rewritten in
    # place on the full disk (a moment after the daemon's memory says so).
    def the_file_says_so() -> bool:
        status = read_watcher_status(settings)
        return status is not None and "disk full" in status["fault"]

    d.wait_until(the_file_says_so, timeout=5.0)
    small_disk.free()
    d.wait_until(lambda: bool(_found(settings, "zebrafish")))
    assert d.daemon.health_snapshot()["fault"] == ""

    assert d.thread.is_alive()


def test_reindex_reports_a_fault_per_collection_and_carries_on(
    make_settings, write, injected: Injected
) -> None:
    _reports(write, 3)
    write("commands/tool.md", "---\ntitle: T\n---\nbody")
    settings = make_settings()
    injected.errno = errno.ENOSPC
    injected.names = lambda name: True
    summaries = {s.collection: s for s in reindex(settings, ["reports", "commands"])}
    assert all("No space left on device" in (s.error or "") for s in summaries.values())
    injected.errno = None
    assert not any(s.error for s in reindex(settings, ["reports", "commands"]))


# --------------------------------------------------------------------------- what people see


def test_status_says_stopped_crashed_or_faulty() -> None:
    from indexer.status import watcher_line

    now = time.time()
    stopped = {"alive": False, "state": "stopped", "pid": 7, "kind": "mcp", "heartbeat": now}
    assert watcher_line(stopped).startswith(
        "watcher: none runs; the last, trove mcp (pid 7), stopped at "
    )
    crashed = {"alive": False, "state": "watching", "pid": 7, "heartbeat": now}
    assert "killed or crashed" in watcher_line(crashed)
    faulty = {"alive": True, "pid": 7, "started": now, "fault": "disk full: 3 changes pending"}
    assert "disk full: 3 changes pending, retrying" in watcher_line(faulty)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_health_is_503_while_changes_cannot_land(make_settings) -> None:
    import json

    import httpx

    from indexer.status import STATUS_FILE
    from query.mcp_server import build_server
    from query.serve import http_app

    settings = make_settings()
    settings.index_dir.mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {
        "pid": os.getpid(),
        "heartbeat": time.time(),
        "fault": "",
        "state": "watching",
        "catching_up": False,
    }
    # The status file says all is well; the in-process watcher's own view says otherwise
    # once the disk is full (the file cannot be rewritten then).
    (settings.index_dir / STATUS_FILE).write_text(json.dumps(state), encoding="utf-8")

    class Watcher:
        watching = True

        def health_snapshot(self) -> dict[str, Any]:
            return dict(state)

    server = build_server(settings)
    server.ctx.watcher.local = Watcher()
    try:
        app = http_app(server, "127.0.0.1")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            assert (await http.get("/health")).status_code == 200
            state["fault"] = "disk full: 2 changes pending since 10:51 (reports)"
            sick = await http.get("/health")
            assert sick.status_code == 503
            assert sick.json()["watcher"]["fault"].startswith("disk full")
    finally:
        server.close()


# --------------------------------------------------------------------------- damage heals


def _sample(tmp_path: Path) -> Settings:
    import shutil

    from indexer.config import settings_from_dict

    shutil.copytree(REPO / "data" / "reports", tmp_path / "reports")
    settings = settings_from_dict(
        {"sources": {"reports": str(tmp_path / "reports")}, "index": {"dir": "index"}},
        base=tmp_path,
    )
    reindex(settings, ["reports"])
    return settings


def _answer(settings: Settings) -> list[tuple[str, int]]:
    from query.context import QueryContext
    from query.reports import search_reports

    ctx = QueryContext.from_settings(settings)
    try:
        return [(h.report_name, h.count) for h in search_reports(ctx, "proxy").results]
    finally:
        ctx.close()


def _damage(settings: Settings, how: str, offset: float = 0.5) -> None:
    folder = settings.index_dir / "reports"
    segment = max(folder.glob("*.seg"), key=lambda p: p.stat().st_size)
    toc = max(folder.glob("_MAIN_*.toc"))
    if how == "truncate segment":
        os.truncate(segment, segment.stat().st_size // 3)
    elif how == "empty segment":
        os.truncate(segment, 0)
    elif how == "delete segment":
        segment.unlink()
    elif how == "truncate toc":
        os.truncate(toc, toc.stat().st_size // 2)
    elif how == "delete toc":
        toc.unlink()
    elif how == "corrupt marker":
        (folder / "trove-index.json").write_text("{not json", encoding="utf-8")
    elif how == "flip a byte":
        data = bytearray(segment.read_bytes())
        at = int(len(data) * offset)
        data[at] ^= 0xFF
        segment.write_bytes(bytes(data))
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "truncate segment",
        "empty segment",
        "delete segment",
        "truncate toc",
        "delete toc",
        "corrupt marker",
    ],
)
def test_a_damaged_index_is_rebuilt_and_never_answers_with_a_traceback(
    tmp_path: Path, how: str
) -> None:
    from query.errors import TroveError

    settings = _sample(tmp_path)
    before = _answer(settings)
    assert before
    _damage(settings, how)
    try:
        after = _answer(settings)
    except TroveError as exc:  # found damaged while reading: rebuilt, said so
        assert exc.code == "INDEX_UNAVAILABLE" and "rebuilt" in exc.message
        after = _answer(settings)
    assert after == before
    assert not reindex(settings, ["reports"])[0].error


@pytest.mark.parametrize("offset", [i / 23 for i in range(1, 23)])
def test_a_flipped_byte_anywhere_in_a_segment_never_shows_a_traceback(
    tmp_path: Path, offset: float
) -> None:
    from query.errors import TroveError

    settings = _sample(tmp_path)
    before = _answer(settings)
    _damage(settings, "flip a byte", offset)
    try:
        _answer(settings)  # a flip in a posting may go unnoticed; no traceback either way
    except TroveError as exc:
        assert exc.code == "INDEX_UNAVAILABLE"
        assert _answer(settings) == before
    # A write reads the file stats (and what it changes) first: any damage it meets is
    # rebuilt; a flip elsewhere (in stored fields) is met by the search that reads it.
    summary = reindex(settings, ["reports"])[0]
    assert not summary.error


def test_postings_that_are_not_postings_are_damage_that_heals(tmp_path: Path) -> None:
    """A flipped byte where a term's postings begin (their header): the search that reads
    them rebuilds the index and says so, never a traceback, and then answers as before."""
    from query.errors import TroveError

    settings = _sample(tmp_path)
    before = _answer(settings)
    segment = max((settings.index_dir / "reports").glob("*.seg"), key=lambda p: p.stat().st_size)
    data = segment.read_bytes()
    assert data.count(b"W3Bl") > 1  # each term's postings begin with Whoosh's header
    segment.write_bytes(data.replace(b"W3Bl", b"W3B\x00"))
    with pytest.raises(TroveError) as damaged:
        _answer(settings)
    assert damaged.value.code == "INDEX_UNAVAILABLE" and "rebuilt" in damaged.value.message
    assert _answer(settings) == before


def test_the_daemon_heals_a_damaged_index_and_a_deleted_index_folder(
    tmp_path: Path, write, run_daemon
) -> None:
    sample = _sample(tmp_path)
    settings = dataclasses.replace(sample, daemon=dataclasses.replace(sample.daemon, quiet_ms=50))
    d = run_daemon(settings)
    _damage(settings, "truncate segment")
    batches = d.daemon.health_snapshot()["batches"]
    write("reports/net/zebra_20251201.md", "a zebrafish report")
    # The daemon meets the damage first (nothing here reads the index meanwhile).
    d.wait_until(lambda: d.daemon.health_snapshot()["batches"] > batches)
    assert _found(settings, "zebrafish") == {"net/zebra_20251201.md"}
    assert len(_found(settings, "proxy")) > 1
    import shutil

    def removed() -> bool:
        # The daemon may write a file (its status, at each heartbeat) as rm -r goes:
        # removed again until the folder is gone, as a user would.
        shutil.rmtree(settings.index_dir, ignore_errors=True)
        return not settings.index_dir.exists()

    polled(removed)
    write("reports/net/okapi_20251202.md", "an okapi report")
    d.wait_until(lambda: bool(_found(settings, "okapi")) and bool(_found(settings, "zebrafish")))
    assert d.thread.is_alive()


# --------------------------------------------------------------------------- kill -9

KILL_AT = {
    # where the writing process dies: (what to patch, how)
    "first segment file": "create_file",
    "table of contents": "create_toc",
    "after the table of contents is in place": "rename_file",
    "before the marker": "marker",
}
CHILD = """
import os, signal, sys
sys.path.insert(0, {repo!r})
from indexer.config import settings_from_dict
from indexer.engine.whoosh.storage import TroveStorage
from indexer.reindex import reindex
from indexer.status import read_watcher_status
from indexer.collection import CollectionIndex

def die():
    os.kill(os.getpid(), signal.SIGKILL)

where = {where!r}
create, rename, marker = TroveStorage.create_file, TroveStorage.rename_file, CollectionIndex.write_marker
def create_file(self, name, *a, **k):
    if where == "create_file" or (where == "create_toc" and name.startswith("_MAIN_")):
        die()
    return create(self, name, *a, **k)
def rename_file(self, old, new, *a, **k):
    rename(self, old, new, *a, **k)
    if where == "rename_file":
        die()
def write_marker(self, **extra):
    if where == "marker" and extra.get("last_update"):
        die()
    return marker(self, **extra)
TroveStorage.create_file, TroveStorage.rename_file = create_file, rename_file
CollectionIndex.write_marker = write_marker
settings = settings_from_dict(
    {{"sources": {{"reports": {reports!r}}}, "index": {{"dir": {index!r}}}}}, base={base!r}
)
reindex(settings, ["reports"])
"""


@pytest.mark.parametrize("step", list(KILL_AT))
def test_a_writer_killed_at_each_step_of_a_commit_loses_nothing(tmp_path: Path, step: str) -> None:
    from indexer.files import walk

    settings = _sample(tmp_path)
    (tmp_path / "reports" / "net").mkdir(exist_ok=True)
    (tmp_path / "reports" / "net" / "zebra_20251201.md").write_text("a zebrafish", "utf-8")
    script = CHILD.format(
        repo=str(REPO),
        where=KILL_AT[step],
        reports=str(tmp_path / "reports"),
        index=str(settings.index_dir),
        base=str(tmp_path),
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=120, check=False
    )
    assert child.returncode == -9, child.stderr.decode()
    # The next writer finds the index at a commit (the last, or the one killed after its
    # table of contents was in place) and brings it in line with the files.
    assert not reindex(settings, ["reports"])[0].error
    on_disk = set(walk(tmp_path / "reports", get_source("reports")).files)
    assert set(lookups.documents(settings, "reports")) == on_disk
    assert _found(settings, "zebrafish") == {"net/zebra_20251201.md"}


def test_a_report_key_damaged_in_its_column_is_rebuilt_not_a_traceback(tmp_path: Path) -> None:
    """The keys of two reports, side by side in the segment's column of keys, one byte of
    the second made not UTF-8 (a flip the index's own check does not read): the search
    that meets it answers INDEX_UNAVAILABLE and has the index rebuilt; then as before."""
    from query.context import QueryContext
    from query.errors import TroveError

    settings = _sample(tmp_path)
    before = _answer(settings)
    ctx = QueryContext.from_settings(settings)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            [(segment, _)] = snapshot.segments()
            keys = segment.bytes_column("sort_key")
            # Every key, in the order of the documents: damage each report's once found.
            values = [keys.value(d) for d in range(segment.doc_count_all)]
    finally:
        ctx.close()
    [seg] = (settings.index_dir / "reports").glob("*.seg")
    data = bytearray(seg.read_bytes())
    damaged = 0
    for d in range(len(values) - 1):
        pair = values[d] + values[d + 1]
        if values[d + 1] and data.count(pair) == 1:  # found in the column alone
            data[data.find(pair) + len(pair) - 1] = 0xFF  # the second key's last byte
            damaged += 1
    assert damaged
    seg.write_bytes(bytes(data))
    with pytest.raises(TroveError) as raised:
        _answer(settings)
    assert raised.value.code == "INDEX_UNAVAILABLE"
    assert "is not UTF-8" in str(raised.value)
    assert _answer(settings) == before
