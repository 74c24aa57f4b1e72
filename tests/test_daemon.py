"""The daemon against the real watchdog observer and real files; every wait is bounded."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lookups
import psutil
import pytest
from conftest import UNSEEN, Running, inotify_overflow, polled, reconcile_processes

from indexer.collection import CollectionIndex
from indexer.config import settings_from_file
from indexer.files import walk
from indexer.sources.registry import get_source
from indexer.status import read_watcher_status

TIMEOUT = 20.0


def keys(d: Running, collection: str) -> set[str]:
    """The document keys of a collection's index."""
    return set(lookups.documents(d.daemon.settings, collection))


@pytest.fixture
def start_daemon(make_settings, run_daemon) -> Callable[..., Running]:
    def start(**sections) -> Running:
        sections.setdefault("daemon", {}).setdefault("quiet_ms", 50)
        return run_daemon(make_settings(**sections))

    return start


def test_create_modify_delete(start_daemon, write, tmp_path) -> None:
    write("reports/a/keep.md", "keep")
    d = start_daemon()
    assert keys(d, "reports") == {"a/keep.md"}
    write("reports/a/new_20251101.md", "fresh words")
    d.wait_until(lambda: "a/new_20251101.md" in keys(d, "reports"))
    write("reports/a/new_20251101.md", "edited words zebra")
    d.wait_until(lambda: _has(d, "reports", "zebra"))
    (tmp_path / "reports/a/new_20251101.md").unlink()
    d.wait_until(lambda: keys(d, "reports") == {"a/keep.md"})


def _has(d: Running, collection: str, word: str) -> bool:
    field = "body" if collection == "commands" else "content"
    return bool(lookups.keys_with_prefix(d.daemon.settings, collection, field, word))


def test_editor_save_by_temp_file_and_rename(start_daemon, write, tmp_path) -> None:
    write("commands/tool.md", "---\ntitle: T\n---\noriginal")
    d = start_daemon()
    # A temp file in the same folder, renamed over the original (what most editors do).
    write("commands/.tool.md.tmp1234", "---\ntitle: T\n---\nreplacement")
    os.replace(tmp_path / "commands/.tool.md.tmp1234", tmp_path / "commands/tool.md")
    d.wait_until(lambda: _has(d, "commands", "replacement"))
    # vim: rename the target to target~, write the new target, delete target~.
    os.rename(tmp_path / "commands/tool.md", tmp_path / "commands/tool.md~")
    write("commands/tool.md", "---\ntitle: T\n---\nvimsaved")
    (tmp_path / "commands/tool.md~").unlink()
    d.wait_until(lambda: _has(d, "commands", "vimsaved"))
    assert keys(d, "commands") == {"tool.md"}


def test_moves_within_into_and_out_of_the_tree(start_daemon, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("outside/r2.md", "two")
    d = start_daemon()
    os.rename(tmp_path / "reports/a/r1.md", tmp_path / "reports/a/r1-renamed.md")
    d.wait_until(lambda: keys(d, "reports") == {"a/r1-renamed.md"})
    os.rename(tmp_path / "outside/r2.md", tmp_path / "reports/a/r2.md")
    d.wait_until(lambda: keys(d, "reports") == {"a/r1-renamed.md", "a/r2.md"})
    os.rename(tmp_path / "reports/a/r2.md", tmp_path / "outside/r2-back.md")
    d.wait_until(lambda: keys(d, "reports") == {"a/r1-renamed.md"})


def test_whole_folders_deleted_and_moved(start_daemon, write, tmp_path, caplog) -> None:
    """Folders inside a root come, move and go: each change lands, and the root's watch
    stays (no root is watched anew, no watcher fails on the way)."""
    caplog.set_level("INFO", logger="indexer.daemon")
    for i in range(5):
        write(f"reports/cmd/r{i}.md", f"r{i}")
    write("staging/newcmd/x.md", "x")
    write("staging/newcmd/y.md", "y")
    d = start_daemon()
    assert len(keys(d, "reports")) == 5

    def watched() -> list[str]:
        return [r.getMessage() for r in caplog.records if ": watching " in r.getMessage()]

    at_start = watched()
    shutil.move(str(tmp_path / "staging/newcmd"), str(tmp_path / "reports/newcmd"))
    d.wait_until(lambda: {"newcmd/x.md", "newcmd/y.md"} <= keys(d, "reports"))
    os.rename(tmp_path / "reports/cmd", tmp_path / "reports/cmd2")
    d.wait_until(lambda: {k.split("/")[0] for k in keys(d, "reports")} == {"cmd2", "newcmd"})
    shutil.rmtree(tmp_path / "reports/cmd2")
    d.wait_until(lambda: keys(d, "reports") == {"newcmd/x.md", "newcmd/y.md"})
    shutil.move(str(tmp_path / "reports/newcmd"), str(tmp_path / "gone"))
    d.wait_until(lambda: keys(d, "reports") == set())
    assert watched() == at_start
    assert d.daemon.health_snapshot()["errors"] == 0


def test_a_source_root_that_appears_later_and_is_deleted_while_watched(
    start_daemon, write, tmp_path
) -> None:
    d = start_daemon()
    assert keys(d, "conversations") == set()
    write("conversations/2025-11-10/001-auth/conversation.md", "authentication")
    d.wait_until(lambda: keys(d, "conversations") == {"2025-11-10/001-auth/conversation.md"})
    write("conversations/2025-11/002-x/notes.md", "month")
    d.wait_until(lambda: len(keys(d, "conversations")) == 2)
    shutil.rmtree(tmp_path / "conversations")
    d.wait_until(lambda: keys(d, "conversations") == set())
    write("conversations/2025-12-01/001-back/conversation.md", "back again")
    d.wait_until(lambda: keys(d, "conversations") == {"2025-12-01/001-back/conversation.md"})


def test_a_source_root_deleted_and_made_anew_at_once_is_watched_again(
    start_daemon, write, tmp_path, monkeypatch
) -> None:
    """The folder made anew may take the old one's inode number (ext4 often gives it
    back), so that the root looks unchanged: the old watch is dead all the same, and the
    event of the deletion says so. Which number a new folder gets is the kernel's choice:
    the test makes the root's identity the old one's whenever it exists."""
    from indexer import daemon as daemon_module

    d = start_daemon()
    write("reports/a/first.md", "first")
    d.wait_until(lambda: keys(d, "reports") == {"a/first.md"})
    root = tmp_path / "reports"
    real = daemon_module.folder_id
    old = real(root)

    def as_before(path: Path) -> tuple[int, int] | None:
        found = real(path)
        return old if found is not None and Path(path) == root else found

    monkeypatch.setattr(daemon_module, "folder_id", as_before)
    for i in range(3):
        shutil.rmtree(root)
        root.mkdir()
        # The change's batch lands first: a file written before it would be found by
        # that batch's walk of the root, watched or not.
        d.wait_until(lambda: keys(d, "reports") == set())
        write(f"reports/b/again{i}.md", "in the folder made anew")
        d.wait_until(lambda i=i: keys(d, "reports") == {f"b/again{i}.md"})


def test_files_outside_the_collections_are_ignored(start_daemon, write, tmp_path) -> None:
    d = start_daemon()
    write("reports/a/report.md", "counted")
    write("reports/a/image.png", "not a report")
    write("reports/toplevel.md", "not in a command folder")
    write("reports/a/deep/nested.md", "too deep")
    d.wait_until(lambda: keys(d, "reports") == {"a/report.md"})
    assert d.daemon.health.errors == 0


def test_a_file_that_vanishes_before_it_is_read_is_not_an_error(
    start_daemon, write, tmp_path
) -> None:
    d = start_daemon()
    for i in range(20):
        write(f"reports/a/flash{i}.md", "here and gone")
        (tmp_path / f"reports/a/flash{i}.md").unlink()
    write("reports/a/stays.md", "stays")
    d.wait_until(lambda: keys(d, "reports") == {"a/stays.md"})
    assert d.daemon.health.errors == 0


def test_a_burst_of_5000_files_ends_fully_indexed(start_daemon, write, tmp_path) -> None:
    d = start_daemon(daemon={"max_delay_ms": 500})
    folder = tmp_path / "reports/burst"
    folder.mkdir(parents=True)
    for i in range(5000):
        (folder / f"r{i:05d}.md").write_text(f"burst report {i}")
    d.wait_until(lambda: len(keys(d, "reports")) == 5000, timeout=120)
    assert keys(d, "reports") == set(walk(tmp_path / "reports", get_source("reports")).files)


def _logged(caplog: pytest.LogCaptureFixture, start: str) -> bool:
    """Whether a line beginning ``start`` was logged."""
    return any(r.getMessage().startswith(start) for r in caplog.records)


def test_a_queue_overflow_is_noticed_and_reconciled(start_daemon, write, tmp_path, caplog) -> None:

    caplog.set_level("INFO", logger="indexer.daemon")
    d = start_daemon()
    # Files written behind the watcher's back (as if their events were lost)...
    index_before = len(keys(d, "reports"))
    d.daemon._unschedule("reports")
    write("reports/lost/r1.md", "lost one")
    write("reports/lost/r2.md", "lost two")
    d.daemon._watch("reports", tmp_path / "reports")
    assert len(keys(d, "reports")) == index_before
    # ...and the warning watchdog logs on a kernel queue overflow, its only signal.
    inotify_overflow()
    d.wait_until(lambda: keys(d, "reports") == {"lost/r1.md", "lost/r2.md"})
    # Said once the reconcile process's outcome is in (a moment after its commit is seen).
    d.wait_until(lambda: _logged(caplog, "reports (queue overflow): +2 ~0 -0 in "))
    assert d.daemon.health.overflows == 1
    assert d.daemon.health.last_error == "event queue overflowed: events were lost; reconciling"
    # Each overflow is counted.
    inotify_overflow()
    polled(lambda: d.daemon.health_snapshot()["overflows"] == 2, timeout=TIMEOUT)


def test_out_of_inotify_watches_falls_back_to_polling(
    start_daemon, write, tmp_path, monkeypatch
) -> None:
    import errno

    from watchdog.observers.inotify import InotifyObserver

    real = InotifyObserver.schedule

    def refuse(self, handler, path, **kwargs):
        if path.endswith("reports"):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real(self, handler, path, **kwargs)

    monkeypatch.setattr(InotifyObserver, "schedule", refuse)
    write("reports/a/r0.md", "zero")
    write("commands/c.md", "still on inotify")
    d = start_daemon()
    assert d.daemon.health.observer == "inotify+polling"
    assert "inotify watch limit reached" in d.daemon.health.last_error
    modes = d.daemon.health_snapshot()["collections"]
    assert modes["reports"]["mode"] == "poll"
    assert modes["reports"]["why"] == "the kernel's inotify watch limit was reached"
    assert modes["commands"]["mode"] == "events"
    write("reports/a/r1.md", "polled")
    d.wait_until(lambda: keys(d, "reports") == {"a/r0.md", "a/r1.md"})


def test_a_dead_observer_is_replaced_and_changes_still_arrive(
    start_daemon, write, tmp_path
) -> None:
    d = start_daemon()
    d.daemon._observer.stop()
    d.daemon._observer.join(TIMEOUT)
    write("commands/after.md", "after the watcher died")
    d.wait_until(lambda: keys(d, "commands") == {"after.md"})
    assert "watcher stopped" in d.daemon.health.last_error


def test_a_root_deleted_while_the_watcher_was_dead_empties_its_collection(
    start_daemon, write, tmp_path
) -> None:
    write("commands/c.md", "c")
    d = start_daemon()
    assert keys(d, "commands") == {"c.md"}
    d.daemon._observer.stop()
    d.daemon._observer.join(TIMEOUT)
    shutil.rmtree(tmp_path / "commands")
    d.wait_until(lambda: keys(d, "commands") == set())


def test_the_status_file_shows_health(start_daemon, write, make_settings) -> None:
    write("commands/c.md", "c")
    d = start_daemon()
    write("commands/d.md", "d")
    d.wait_until(lambda: keys(d, "commands") == {"c.md", "d.md"})
    # The start-up reconcile commits too: wait for the commit of the event's batch.
    d.wait_until(
        lambda: (
            None
            not in map(
                (read_watcher_status(d.daemon.settings) or {}).get, ("last_commit", "last_event")
            )
        )
    )
    status = read_watcher_status(d.daemon.settings)
    assert status is not None
    assert status["pid"] == os.getpid() and status["alive"] and not status["stuck"]
    assert status["state"] == "watching"
    assert status["last_event"] is not None


def test_changes_on_their_way_are_counted_and_shown_to_other_processes_at_once(
    start_daemon, write
) -> None:
    """Events a batch waits for: the status file says so as the first one comes (before
    the batch lands), and each is counted."""
    write("reports/a/first.md", "there before the daemon")
    d = start_daemon(daemon={"quiet_ms": 30_000, "max_delay_ms": 30_000})
    events = d.daemon.health_snapshot()["events"]
    for name in ("b", "c", "d"):
        write(f"reports/a/{name}.md", name)
    polled(lambda: (read_watcher_status(d.daemon.settings) or {}).get("pending", 0) >= 1)
    polled(lambda: d.daemon.health_snapshot()["events"] >= events + 3)
    assert d.daemon.health_snapshot()["pending"] >= 3
    assert keys(d, "reports") == {"a/first.md"}  # not yet: the batch waits for quiet


def test_each_batch_says_what_it_did_and_leaves_nothing_pending(
    start_daemon, write, caplog
) -> None:
    caplog.set_level("INFO", logger="indexer.daemon")
    write("reports/a/first.md", "there before the daemon")
    d = start_daemon()
    before = d.daemon.health_snapshot()["batches"]
    for i in range(2):
        write(f"reports/a/r{i}.md", f"report {i}")
        d.wait_until(lambda i=i: f"a/r{i}.md" in keys(d, "reports"))
    d.wait_until(lambda: d.daemon.health_snapshot()["batches"] >= before + 2)
    health = d.daemon.health_snapshot()
    assert health["pending"] == 0
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reports (watch)")]
    assert said and said[0].startswith("reports (watch): +1 ~0 -0 in ")


def test_a_batch_that_fails_is_logged_counted_and_reconciled_and_others_go_on(
    start_daemon, write, monkeypatch, caplog
) -> None:
    """A batch of two collections whose first fails for a reason no test can make happen
    (a bug in the store, put there): the error is logged and counted, that collection is
    reconciled, and the other collection's changes land all the same. (Each root has its
    own watch, so either collection's events may come first.)"""
    from indexer.store import Syncer

    caplog.set_level("INFO", logger="indexer.daemon")
    write("reports/a/first.md", "first")
    write("commands/c.md", "a command")
    d = start_daemon(daemon={"quiet_ms": 300})
    apply = Syncer.apply
    failed: list[str] = []

    def failing(self: Syncer, rels: Any) -> Any:
        if not failed:
            failed.append(self.source.name)
            raise RuntimeError("a bug in the store")
        return apply(self, rels)

    monkeypatch.setattr(Syncer, "apply", failing)
    write("reports/a/second.md", "second")
    write("commands/d.md", "another command")
    d.wait_until(lambda: keys(d, "reports") == {"a/first.md", "a/second.md"})
    d.wait_until(lambda: keys(d, "commands") == {"c.md", "d.md"})
    [name] = failed
    d.wait_until(lambda: _logged(caplog, f"{name} (requested): +1 ~0 -0 in "))
    health = d.daemon.health_snapshot()
    assert health["errors"] >= 1
    assert health["last_error"] == f"{name}: batch failed: a bug in the store"
    said = [r.getMessage() for r in caplog.records]
    assert f"{name}: applying a batch failed; reconciling" in said


def test_a_reconcile_that_fails_is_logged_counted_and_the_other_collections_go_on(
    start_daemon, write, caplog
) -> None:
    """The reports' reconcile fails (another writer holds its index past the lock
    timeout): the error is logged with its traceback from the reconcile process and
    counted, and the other collections' reconcile goes on."""
    caplog.set_level("ERROR", logger="indexer.daemon")
    write("reports/a/first.md", "first")
    write("commands/c.md", "a command")
    d = start_daemon(daemon=UNSEEN, index={"lock_timeout_s": 0.2})
    write("reports/a/second.md", "second")
    write("commands/d.md", "another command")
    began = time.time()
    with CollectionIndex(d.daemon.settings.index_dir, get_source("reports")).locked():
        inotify_overflow()
        d.wait_until(lambda: keys(d, "commands") == {"c.md", "d.md"})
        d.wait_until(lambda: (d.daemon.health_snapshot()["last_reconcile"] or 0) >= began)
    assert keys(d, "reports") == {"a/first.md"}
    health = d.daemon.health_snapshot()
    assert health["last_error"].startswith(
        f"reports: reconcile failed: the reports index is being written by pid {os.getpid()} "
    )
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.getMessage() == "reports: reconcile (queue overflow) failed"
    assert "in the reconcile process:" in caplog.text and "IndexLockedError" in caplog.text


def test_a_folder_of_the_users_named_indexer_is_not_what_the_reconcile_process_runs(
    start_daemon, write, tmp_path, monkeypatch
) -> None:
    """The daemon's reconcile process starts in the daemon's working folder, which may
    hold a package of the user's called ``indexer``: trove's own is what it imports."""
    write("work/indexer/__init__.py", "raise ImportError('the user's own indexer')\n")
    write("reports/a/first.md", "first")
    monkeypatch.chdir(tmp_path / "work")
    d = start_daemon()
    assert keys(d, "reports") == {"a/first.md"}
    assert not d.daemon.health_snapshot()["last_error"]


def test_a_second_daemon_stands_by_naming_the_first_and_takes_over_when_it_stops(
    start_daemon, write, caplog
) -> None:
    d = start_daemon()
    second = Running(d.daemon.settings)
    second.thread.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while "stands by" not in caplog.text:
            assert time.monotonic() < deadline, "the second daemon never said it stands by"
            time.sleep(0.01)  # polling the log the other thread writes; bounded
        assert f"trove daemon (pid {os.getpid()}) watches" in caplog.text
        assert not second.daemon.watching and not second.daemon.wait_ready(0)
        d.daemon.stop()
        d.thread.join(TIMEOUT)
        assert second.daemon.wait_ready(TIMEOUT), second.errors
        assert second.daemon.watching
        write("commands/after.md", "written after the first daemon stopped")
        second.wait_until(lambda: "after.md" in keys(second, "commands"))
    finally:
        second.daemon.stop()
        second.thread.join(TIMEOUT)
    assert not second.errors


# ------------------------------------------------------------------ real processes


def _config(tmp_path: Path, quiet_ms: int = 50) -> Path:
    cfg = tmp_path / "trove.toml"
    cfg.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\nconversations = "conversations"\n'
        f'[index]\ndir = "index"\nlock_timeout_s = 5\n[daemon]\nquiet_ms = {quiet_ms}\n'
    )
    return cfg


def _spawn(cfg: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "query.cli", "--config", str(cfg), "daemon"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_status(cfg_dir: Path, predicate: Callable[[dict], bool], proc: subprocess.Popen) -> dict:
    path = cfg_dir / "index" / "daemon.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
        if data.get("pid") == proc.pid and predicate(data):
            return data
        time.sleep(0.02)  # polling a file another process writes; bounded by the deadline
    raise AssertionError(f"daemon status never matched: {data}")


def _keys_if_any(tmp_path: Path) -> set[str] | None:
    """The reports' keys, None if there is no index."""
    settings = settings_from_file(tmp_path / "trove.toml")
    if CollectionIndex(settings.index_dir, get_source("reports")).open() is None:
        return None
    return set(lookups.documents(settings, "reports"))


def _keys(tmp_path: Path) -> set[str]:
    keys = _keys_if_any(tmp_path)
    assert keys is not None
    return keys


def _lock_holder(tmp_path: Path) -> int | None:
    try:
        return json.loads((tmp_path / "index/reports/writer.lock").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def _a_daemon_building(
    tmp_path: Path, write: Callable[[str, str], Path], reports: int
) -> tuple[Path, subprocess.Popen]:
    """A `trove daemon` started over this many reports (its first build is under way)."""
    cfg = _config(tmp_path)
    for i in range(reports):
        write(f"reports/c{i % 10}/r{i}.md", f"report number {i} " * 50)
    return cfg, _spawn(cfg)


def _building(tmp_path: Path, proc: subprocess.Popen) -> psutil.Process:
    """The reconcile process of daemon ``proc`` once it holds the reports' writer lock."""
    deadline = time.monotonic() + 60
    while True:
        holder = _lock_holder(tmp_path)
        with contextlib.suppress(psutil.Error):
            if holder is not None and psutil.Process(holder).ppid() == proc.pid:
                return psutil.Process(holder)
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)  # polling a file another process writes; bounded by the deadline


def test_kill_9_during_a_large_commit_then_restart_recovers(tmp_path, write) -> None:
    cfg, proc = _a_daemon_building(tmp_path, write, 3000)
    try:
        # Its reconcile process holds the writer lock of the reports index: it is building.
        child = _building(tmp_path, proc)
        proc.kill()
    finally:
        proc.wait(30)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
    # The reconcile process ends with the daemon, its build abandoned (not finished
    # unwatched): it leaves no lock for the next one.
    child.wait(30)
    assert len(_keys_if_any(tmp_path) or set()) < 3000
    second = _spawn(cfg)
    try:
        _wait_status(tmp_path, lambda s: s.get("state") == "watching", second)
        assert _keys(tmp_path) == set(walk(tmp_path / "reports", get_source("reports")).files)
        assert len(_keys(tmp_path)) == 3000
    finally:
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err


def test_of_two_daemons_on_one_index_folder_one_watches_and_the_other_takes_over_a_kill_9(
    tmp_path, write
) -> None:
    cfg = _config(tmp_path)
    first = _spawn(cfg)
    second: subprocess.Popen | None = None
    try:
        _wait_status(tmp_path, lambda s: s.get("state") == "watching", first)
        second = _spawn(cfg)
        assert second.stderr is not None
        # It names itself, then says at once that it waits (two lines: the reads are bounded).
        said = second.stderr.readline() + second.stderr.readline()
        assert f"trove daemon (pid {first.pid}) watches" in said and "stands by" in said, said
        first.kill()
        first.communicate(timeout=30)
        write("reports/a/after-the-kill.md", "written after the watcher was killed")
        _wait_status(tmp_path, lambda s: s.get("state") == "watching", second)
        deadline = time.monotonic() + 30
        while "a/after-the-kill.md" not in _keys(tmp_path):
            assert time.monotonic() < deadline, "the change never reached the index"
            time.sleep(0.02)  # polling an index another process writes; bounded
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.communicate(timeout=30)
    assert second.returncode == 0


def test_sigterm_during_a_batch_exits_cleanly_and_loses_nothing(tmp_path, write) -> None:
    cfg = _config(tmp_path, quiet_ms=20)
    write("reports/a/seed.md", "seed")
    proc = _spawn(cfg)
    try:
        _wait_status(tmp_path, lambda s: s.get("state") == "watching", proc)
        for i in range(1500):
            write(f"reports/b/r{i}.md", f"batch {i}")
        _wait_status(tmp_path, lambda s: s.get("last_event") is not None, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    status = json.loads((tmp_path / "index/daemon.json").read_text())
    assert status["state"] == "stopped"
    # The index opens, the locks are free, and a restart catches up exactly.
    restart = _spawn(cfg)
    try:
        _wait_status(tmp_path, lambda s: s.get("state") == "watching", restart)
        assert len(_keys(tmp_path)) == 1501
    finally:
        restart.send_signal(signal.SIGINT)
        restart.communicate(timeout=30)
    assert restart.returncode == 130


def test_sigterm_during_the_start_up_reconcile_abandons_it_promptly(tmp_path, write) -> None:
    _, proc = _a_daemon_building(tmp_path, write, 4000)
    try:
        child = _building(tmp_path, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert not child.is_running()  # its reconcile process stopped first
    assert json.loads((tmp_path / "index/daemon.json").read_text())["state"] == "stopped"


def test_a_reconcile_process_killed_mid_build_is_said_and_its_reconcile_retried(
    tmp_path, write
) -> None:
    """kill -9 of the process building the index for a daemon (as the OOM killer would):
    the daemon says so, goes on, and reconciles again until the index is whole."""
    _, proc = _a_daemon_building(tmp_path, write, 3000)
    try:
        child = _building(tmp_path, proc)
        child.kill()
        # Caught up, and the reconcile held meanwhile has landed.
        status = _wait_status(
            tmp_path, lambda s: s.get("state") == "watching" and not s.get("fault"), proc
        )
        assert status["last_error"].startswith(
            f"the reconcile process (pid {child.pid}) ended by signal 9 (SIGKILL)"
        )
        assert _keys(tmp_path) == set(walk(tmp_path / "reports", get_source("reports")).files)
        assert len(_keys(tmp_path)) == 3000
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "reports: the reconcile process" in err and "retried until they land" in err


def test_an_idle_daemon_compacts_the_segments_batches_leave(start_daemon, write, tmp_path) -> None:
    d = start_daemon(daemon={"quiet_ms": 20})

    def segments() -> int:
        return len(lookups.segment_sizes(d.daemon.settings, "reports"))

    for i in range(5):
        write(f"reports/a/r{i}.md", f"report {i}")
        d.wait_until(lambda i=i: f"a/r{i}.md" in keys(d, "reports"))
    d.wait_until(lambda: segments() == 1, timeout=30)
    assert keys(d, "reports") == {f"a/r{i}.md" for i in range(5)}


def test_a_source_on_a_network_filesystem_is_polled_and_status_says_why(
    start_daemon, write, tmp_path, monkeypatch
) -> None:
    from indexer import daemon as daemon_module
    from indexer.mounts import Mount

    # A mount the test cannot make: the reports folder as if on NFS.
    def on_nfs(path: Path, mountinfo: str | None = None) -> Mount:
        if Path(path).name == "reports":
            return Mount("/mnt/share", "nfs4", "server:/export")
        return Mount("/", "ext4", "/dev/vda")

    monkeypatch.setattr(daemon_module, "filesystem_of", on_nfs)
    write("reports/a/r0.md", "zero")
    write("commands/c.md", "a command")
    d = start_daemon(daemon={"poll_interval_s": 0.1, "sweep_s": 0.2})
    modes = d.daemon.health_snapshot()["collections"]
    assert modes["reports"]["mode"] == "poll"
    assert modes["reports"]["why"].startswith("nfs4 mount at /mnt/share: inotify does not see")
    assert modes["commands"] == {
        "mode": "events",
        "why": "inotify (ext4 at /: a local filesystem)",
        "caught_up": True,
    }
    write("reports/a/r1.md", "polled")
    d.wait_until(lambda: keys(d, "reports") == {"a/r0.md", "a/r1.md"})
    (tmp_path / "reports/a/r0.md").unlink()
    d.wait_until(lambda: keys(d, "reports") == {"a/r1.md"})


@pytest.mark.parametrize("watch", ["events", "poll"])
def test_watch_in_the_config_chooses_the_mode_for_every_source(
    start_daemon, write, tmp_path, watch
) -> None:
    for name in ("reports", "commands", "conversations", "elog"):
        (tmp_path / name).mkdir()
    d = start_daemon(daemon={"watch": watch, "poll_interval_s": 0.1, "sweep_s": 0.2})
    modes = d.daemon.health_snapshot()["collections"]
    for name in ("reports", "commands", "conversations", "elog"):
        assert modes[name] == {
            "mode": watch,
            "why": f'[daemon] watch = "{watch}"',
            "caught_up": True,
        }
    write("commands/c.md", "a command")
    d.wait_until(lambda: keys(d, "commands") == {"c.md"})


def test_a_missing_source_folder_is_said_to_be_waited_for(start_daemon, write, tmp_path) -> None:
    d = start_daemon()
    state = d.daemon.health_snapshot()["collections"]["commands"]
    assert state["mode"] is None and state["why"].startswith("its source folder does not exist")
    write("commands/c.md", "a command")
    d.wait_until(lambda: keys(d, "commands") == {"c.md"})
    assert d.daemon.health_snapshot()["collections"]["commands"]["mode"] == "events"


# ----------------------------------------------------------- what the loop does by itself


@pytest.fixture
def status_writes(monkeypatch) -> list[dict[str, Any]]:
    """Every status file the daemon writes, as written, with when and by which thread."""
    from indexer import daemon as daemon_module

    writes: list[dict[str, Any]] = []
    real = daemon_module.write_status_file

    def recording(path: Path, data: dict[str, Any]) -> None:
        writes.append({**data, "at": time.monotonic(), "thread": threading.current_thread().name})
        real(path, data)

    monkeypatch.setattr(daemon_module, "write_status_file", recording)
    return writes


def test_each_event_and_each_batch_is_counted_once(start_daemon, write, tmp_path) -> None:
    """Three events (as the observer hands them over) are three events on their way and
    one batch; none is left pending after it."""
    from watchdog.events import FileModifiedEvent

    write("reports/a/r.md", "a report")
    d = start_daemon(daemon={"quiet_ms": 300})
    before = d.daemon.health_snapshot()
    for _ in range(3):
        d.daemon.note_event(FileModifiedEvent(str(tmp_path / "reports/a/r.md")))
    health = d.daemon.health_snapshot()
    assert (health["events"], health["pending"]) == (before["events"] + 3, 3)
    d.wait_until(lambda: d.daemon.health_snapshot()["batches"] > before["batches"])
    health = d.daemon.health_snapshot()
    assert (health["batches"], health["pending"]) == (before["batches"] + 1, 0)


def test_the_status_file_is_written_once_as_changes_start_coming(
    start_daemon, write, status_writes
) -> None:
    """The first event of a batch writes the status file (other processes see changes on
    their way at once); the events after it do not (a burst would write it thousands of
    times)."""
    write("reports/a/first.md", "there before the daemon")
    d = start_daemon(daemon={"quiet_ms": 30_000, "max_delay_ms": 30_000})
    events = d.daemon.health_snapshot()["events"]
    ready = len(status_writes)  # (a slow catch-up's heartbeats came before)
    for name in "bcdef":
        write(f"reports/a/{name}.md", name)
    polled(lambda: d.daemon.health_snapshot()["events"] >= events + 5)
    # The loop (the daemon's own thread) beats; the observer's thread writes for events.
    by_events = [
        w for w in status_writes[ready:] if w["thread"] not in ("test-daemon", "trove-batcher")
    ]
    assert [w["pending"] for w in by_events] == [1]


def test_an_idle_daemon_beats_every_heartbeat(start_daemon, status_writes, monkeypatch) -> None:
    """With nothing to do, the loop rewrites the status file every HEARTBEAT_S (readers
    tell a live watcher from a stuck one by it), and no more often."""
    from indexer import daemon as daemon_module

    monkeypatch.setattr(daemon_module, "HEARTBEAT_S", 0.5)
    d = start_daemon()

    def beats() -> list[float]:
        return [w["at"] for w in status_writes if w["thread"] == "test-daemon" and w["at"] > ready]

    ready = time.monotonic()
    polled(lambda: len(beats()) >= 4, timeout=20)
    times = beats()
    assert all(b - a >= 0.45 for a, b in itertools.pairwise(times)), times
    assert d.daemon.health_snapshot()["state"] == "watching"


def test_the_periodic_reconcile_finds_what_the_watcher_missed_at_its_interval(
    start_daemon, write, caplog
) -> None:
    """A source polled too seldom to see a new file: the periodic reconcile finds it, says
    so, and comes again one interval later, not sooner."""
    caplog.set_level("INFO", logger="indexer.daemon")
    write("reports/a/first.md", "there before the daemon")
    d = start_daemon(daemon={"reconcile_interval_s": 1.0, **UNSEEN})
    write("reports/a/missed.md", "no event tells of this one")
    d.wait_until(lambda: "a/missed.md" in keys(d, "reports"))
    d.wait_until(lambda: _logged(caplog, "reports (periodic): +1 ~0 -0 in "))
    d.wait_until(lambda: d.daemon.health_snapshot()["last_reconcile"] is not None)
    first = d.daemon.health_snapshot()["last_reconcile"]
    d.wait_until(lambda: d.daemon.health_snapshot()["last_reconcile"] > first, timeout=20)
    assert d.daemon.health_snapshot()["last_reconcile"] - first >= 0.9


def test_compaction_waits_for_a_quiet_second_and_comes_once_a_second_while_idle(
    start_daemon, write, monkeypatch
) -> None:
    """Batch after batch, nothing is compacted (a busy index keeps its small segments);
    once events stop for IDLE_S, compaction runs, and again every IDLE_S."""
    from indexer import daemon as daemon_module
    from indexer.store import Syncer

    # Longer than any pause between the test's writes on a loaded machine.
    idle_s = 2.0
    monkeypatch.setattr(daemon_module, "IDLE_S", idle_s)
    d = start_daemon(daemon={"quiet_ms": 20})
    calls: list[tuple[str, float, float | None]] = []
    compact = Syncer.compact

    def recording(self: Syncer, *args: Any, **kwargs: Any) -> Any:
        calls.append((self.source.name, time.time(), d.daemon.health.last_event))
        return compact(self, *args, **kwargs)

    monkeypatch.setattr(Syncer, "compact", recording)
    busy_until = time.monotonic() + 2 * idle_s
    i = 0
    while time.monotonic() < busy_until:
        write(f"reports/a/r{i}.md", f"report {i}")
        d.wait_until(lambda i=i: f"a/r{i}.md" in keys(d, "reports"))
        i += 1
    quiet_from = time.time()

    def reports_since_quiet() -> list[float]:
        return [at for name, at, _ in calls if name == "reports" and at > quiet_from]

    polled(lambda: len(reports_since_quiet()) >= 2, timeout=30)
    # Each round compacts reports first, right after the loop found the daemon idle (an
    # event may come while it compacts the others).
    for name, at, last_event in calls:
        assert name != "reports" or last_event is None or at - last_event > idle_s
    since_quiet = reports_since_quiet()
    assert all(b - a >= 0.9 * idle_s for a, b in itertools.pairwise(since_quiet))


def test_a_bug_in_the_loop_is_logged_and_counted_and_the_loop_goes_on(
    start_daemon, monkeypatch, caplog
) -> None:
    caplog.set_level("ERROR", logger="indexer.daemon")
    d = start_daemon()
    check_roots = d.daemon._check_roots
    calls: list[int] = []

    def failing_once() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in the loop")
        check_roots()

    monkeypatch.setattr(d.daemon, "_check_roots", failing_once)
    polled(lambda: len(calls) >= 3, timeout=20)  # the loop went on after the bug
    health = d.daemon.health_snapshot()
    assert health["errors"] >= 1 and health["last_error"] == "RuntimeError: a bug in the loop"
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.getMessage() == "daemon loop" and "a bug in the loop" in str(record.exc_info[1])


def test_stopping_during_the_start_up_catch_up_with_a_batch_waiting_ends_promptly(
    make_settings, write
) -> None:
    """The start-up catch-up waits (another writer holds the reports index) and a batch
    waits for it; stopped meanwhile, the daemon ends within seconds, its reconcile
    process too (the batch gives up, and the next start-up catch-up finds its change)."""
    write("reports/a/first.md", "there before the daemon")
    settings = make_settings(daemon={"quiet_ms": 20}, index={"lock_timeout_s": 60})
    running = Running(settings)
    with CollectionIndex(settings.index_dir, get_source("reports")).locked():
        running.thread.start()
        polled(lambda: len(reconcile_processes()) == 1, timeout=TIMEOUT)
        [child] = reconcile_processes()
        write("reports/a/during.md", "written during the catch-up")
        polled(lambda: running.daemon.health_snapshot()["events"] >= 1, timeout=TIMEOUT)
        running.daemon.stop()
        running.thread.join(TIMEOUT)
        assert not running.thread.is_alive() and not running.errors
        assert not child.is_running()
    assert not running.daemon.wait_ready(0)
