"""The polling watcher on real files in tmp_path; passes are made by calling poll()."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent

from indexer import polling
from indexer.files import Selection
from indexer.polling import Poller
from indexer.sources.reports import ReportsSource

TIMEOUT = 10.0

Change = tuple[str, str]  # (event type, path relative to tmp_path; "dir:" before folders)


class AnyDepth:
    """Every folder at any depth, and *.md files."""

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        return True

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        return parts[-1].endswith(".md")


class Watched:
    """A poller on tmp_path/reports and the events it emitted."""

    def __init__(self, base: Path, selection: Selection | None = None, **options: float) -> None:
        self.base = base
        self.root = base / "reports"
        self.events: list[FileSystemEvent] = []
        self.poller = Poller(self.root, selection or ReportsSource(), self.events.append, **options)

    def poll(self) -> set[Change]:
        """One pass; what it reported."""
        self.events.clear()
        self.poller.poll()
        found = set()
        for event in self.events:
            assert isinstance(event.src_path, str) and os.path.isabs(event.src_path)
            rel = os.path.relpath(event.src_path, self.base)
            found.add((event.event_type, f"dir:{rel}" if event.is_directory else rel))
        assert len(found) == len(self.events), f"an event twice: {self.events}"
        return found


@pytest.fixture
def watch(tmp_path: Path) -> Callable[..., Watched]:
    """A poller on tmp_path/reports, primed (its first pass made)."""

    def make(selection: Selection | None = None, **options: float) -> Watched:
        watched = Watched(tmp_path, selection, **options)
        assert watched.poll() == set()
        return watched

    return make


def covered(changes: set[Change], rel: str) -> bool:
    """Whether a change names ``rel`` or a folder above it (the daemon re-walks a folder)."""
    paths = {path.removeprefix("dir:") for _, path in changes}
    return any(rel == p or rel.startswith(p + "/") for p in paths)


def set_mtime(path: Path, seconds_ago: float) -> None:
    ns = time.time_ns() - int(seconds_ago * 1e9)
    os.utime(path, ns=(ns, ns))


def test_the_first_pass_reports_nothing_and_a_quiet_tree_nothing_after(watch, write) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    assert w.poll() == set()
    assert w.poll() == set()


def test_a_new_file_is_reported_created(watch, write) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    write("reports/a/r2.md", "two")
    assert w.poll() == {("created", "reports/a/r2.md")}
    assert w.poll() == set()


def test_an_edit_in_place_of_the_same_size_is_reported_modified(watch, write) -> None:
    path = write("reports/a/r1.md", "one")
    set_mtime(path, 60)
    w = watch()
    path.write_text("two")
    set_mtime(path, 30)
    assert w.poll() == {("modified", "reports/a/r1.md")}
    assert w.poll() == set()


def test_a_deleted_file_is_reported_deleted(watch, write) -> None:
    path = write("reports/a/r1.md", "one")
    write("reports/a/r2.md", "two")
    w = watch()
    path.unlink()
    assert w.poll() == {("deleted", "reports/a/r1.md")}
    assert w.poll() == set()


def test_a_rename_within_a_folder_is_the_old_name_deleted_and_the_new_created(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    os.rename(tmp_path / "reports/a/r1.md", tmp_path / "reports/a/r1-renamed.md")
    assert w.poll() == {("deleted", "reports/a/r1.md"), ("created", "reports/a/r1-renamed.md")}


def test_an_editor_save_by_temp_file_and_rename_is_reported_on_the_file(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "original")
    w = watch()
    write("reports/a/.r1.md.tmp1234", "replaced")
    assert w.poll() == set()  # hidden
    os.replace(tmp_path / "reports/a/.r1.md.tmp1234", tmp_path / "reports/a/r1.md")
    assert w.poll() == {("modified", "reports/a/r1.md")}
    assert w.poll() == set()


def test_a_folder_made_with_files_inside_is_one_event_and_its_files_are_watched(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    write("staging/new/x.md", "x")
    write("staging/new/y.md", "y")
    shutil.move(tmp_path / "staging/new", tmp_path / "reports/new")
    assert w.poll() == {("created", "dir:reports/new")}
    (tmp_path / "reports/new/x.md").unlink()
    assert w.poll() == {("deleted", "reports/new/x.md")}


def test_a_deleted_folder_is_one_event_and_forgotten(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("reports/a/r2.md", "two")
    write("reports/b/r3.md", "three")
    w = watch()
    shutil.rmtree(tmp_path / "reports/a")
    assert w.poll() == {("deleted", "dir:reports/a")}
    assert w.poll() == set()
    write("reports/a/r1.md", "back")
    assert w.poll() == {("created", "dir:reports/a")}


def test_a_renamed_folder_is_the_old_deleted_and_the_new_created(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    os.rename(tmp_path / "reports/a", tmp_path / "reports/b")
    assert w.poll() == {("deleted", "dir:reports/a"), ("created", "dir:reports/b")}
    write("reports/b/r2.md", "two")
    assert w.poll() == {("created", "reports/b/r2.md")}


def test_folders_swapped_by_renames_are_reported_and_watched_anew(watch, write, tmp_path) -> None:
    write("reports/a/ra.md", "a")
    write("reports/b/rb.md", "b")
    w = watch()
    os.rename(tmp_path / "reports/a", tmp_path / "reports/tmp")
    os.rename(tmp_path / "reports/b", tmp_path / "reports/a")
    os.rename(tmp_path / "reports/tmp", tmp_path / "reports/b")
    assert w.poll() == {
        ("deleted", "dir:reports/a"),
        ("deleted", "dir:reports/b"),
        ("created", "dir:reports/a"),
        ("created", "dir:reports/b"),
    }
    write("reports/a/new.md", "n")
    write("reports/b/new.md", "n")
    assert w.poll() == {("created", "reports/a/new.md"), ("created", "reports/b/new.md")}


def test_a_root_deleted_and_made_again(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    shutil.rmtree(tmp_path / "reports")
    assert w.poll() == {("deleted", "dir:reports")}
    assert w.poll() == set()
    write("reports/b/r2.md", "two")
    assert w.poll() == {("created", "dir:reports")}
    write("reports/b/r3.md", "three")
    assert w.poll() == {("created", "reports/b/r3.md")}


def test_a_root_replaced_between_two_passes_is_looked_at_again(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    shutil.rmtree(tmp_path / "reports")
    write("reports/a/r3.md", "three")
    write("reports/c/r4.md", "four")
    changes = w.poll()
    # Reported as the root replaced, or (its inode number used again) as what differs.
    for rel in ["reports/a/r1.md", "reports/b", "reports/a/r3.md", "reports/c"]:
        assert covered(changes, rel), (rel, changes)
    assert w.poll() == set()
    write("reports/c/r5.md", "five")
    assert w.poll() == {("created", "reports/c/r5.md")}


def test_a_root_that_appears_later_is_reported_and_watched(watch, write) -> None:
    w = watch()
    assert w.poll() == set()
    write("reports/a/r1.md", "one")
    assert w.poll() == {("created", "dir:reports")}
    write("reports/a/r2.md", "two")
    assert w.poll() == {("created", "reports/a/r2.md")}


def test_hidden_and_unwanted_files_and_folders_are_ignored(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    for rel in [
        "reports/a/.hidden.md",
        "reports/a/r1.md~",
        "reports/a/#r1.md#",
        "reports/a/r1.md.swp",
        "reports/a/notes.txt",
        "reports/top.md",
        "reports/a/deeper/r.md",
        "reports/.git/r.md",
    ]:
        write(rel, "x")
    assert w.poll() == set()
    (tmp_path / "reports/a/notes.txt").write_text("changed")
    assert w.poll() == set()


def test_a_change_in_the_same_timestamp_tick_as_the_last_listing_is_found(
    watch, write, tmp_path
) -> None:
    folder = tmp_path / "reports/a"
    write("reports/a/r1.md", "one")
    w = watch()
    # The folder's mtime kept as it was across a change: one tick of a coarse clock.
    tick = time.time_ns() + 60 * 10**9
    write("reports/a/r2.md", "two")
    os.utime(folder, ns=(tick, tick))
    assert w.poll() == {("created", "reports/a/r2.md")}
    write("reports/a/r3.md", "three")
    os.utime(folder, ns=(tick, tick))
    assert w.poll() == {("created", "reports/a/r3.md")}


def test_a_symlink_loop_is_entered_once(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    (tmp_path / "reports/a/loop").symlink_to(tmp_path / "reports")
    (tmp_path / "reports/a/self").symlink_to(".")
    w = watch(AnyDepth())
    assert w.poll() == set()
    write("reports/a/r2.md", "two")
    assert w.poll() == {("created", "reports/a/r2.md")}


def test_a_symlinked_folder_is_followed_only_inside_the_root(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("outside/r2.md", "two")
    (tmp_path / "reports/in").symlink_to(tmp_path / "reports/a")
    (tmp_path / "reports/out").symlink_to(tmp_path / "outside")
    w = watch(AnyDepth())
    write("outside/r3.md", "three")
    assert w.poll() == set()
    write("reports/a/r4.md", "four")
    assert w.poll() == {("created", "reports/a/r4.md")}


@contextlib.contextmanager
def unreadable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``folder`` cannot be listed meanwhile: by its permissions, or for root (whom they do
    not stop) by a scandir that refuses it."""
    if os.geteuid() != 0:
        folder.chmod(0)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    real = os.scandir

    def refusing(path: str) -> object:
        if os.fspath(path) == str(folder):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    with monkeypatch.context() as patched:
        patched.setattr(polling.os, "scandir", refusing)
        yield


def test_an_unreadable_folder_keeps_its_state_and_is_said_once(
    watch, write, tmp_path, monkeypatch, caplog
) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    folder = tmp_path / "reports/a"
    caplog.set_level(logging.WARNING, logger="indexer.polling")
    write("reports/a/r3.md", "three")
    with unreadable(folder, monkeypatch):
        assert w.poll() == set()
        assert w.poll() == set()
        write("reports/b/r4.md", "four")
        assert w.poll() == {("created", "reports/b/r4.md")}
    warnings = [r for r in caplog.records if "cannot read" in r.getMessage()]
    assert len(warnings) == 1
    write("reports/a/r5.md", "five")
    assert w.poll() == {("created", "reports/a/r3.md"), ("created", "reports/a/r5.md")}


def test_an_unreadable_root_at_the_start_is_listed_once_it_can_be(
    write, tmp_path, monkeypatch
) -> None:
    write("reports/a/r1.md", "one")
    w = Watched(tmp_path)
    with unreadable(tmp_path / "reports", monkeypatch):
        assert w.poll() == set()
        assert w.poll() == set()
    assert w.poll() == {("created", "dir:reports/a")}


def test_the_sweep_checks_a_slice_each_pass_and_every_file_within_sweep_s(
    watch, write, tmp_path
) -> None:
    paths = [write(f"reports/c{i % 5}/r{i:03d}.md", "same") for i in range(200)]
    for path in paths:
        set_mtime(path, 60)
    # A budget of no time: only the slice that checks every file within sweep_s.
    w = watch(interval_s=1.0, sweep_s=10.0, budget=0.0)
    passes = math.ceil(10.0 / 1.0)
    for target in (paths[0], paths[77], paths[-1]):
        target.write_text("diff")
        set_mtime(target, 30)
        rel = str(target.relative_to(tmp_path))
        for n in range(1, passes + 1):
            if w.poll() == {("modified", rel)}:
                break
        else:
            pytest.fail(f"{rel} was not found within {passes} passes")
        assert w.poller.last_swept == 20


def test_a_small_tree_is_swept_whole_every_pass(watch, write, tmp_path) -> None:
    for i in range(300):
        write(f"reports/c{i % 3}/r{i:03d}.md", "same")
    # A budget wide enough for any machine: the whole tree fits in it.
    w = watch(interval_s=2.0, sweep_s=30.0, budget=100.0)
    assert w.poll() == set()
    assert w.poller.last_swept == 300
    path = tmp_path / "reports/c1/r100.md"
    path.write_text("diff")
    set_mtime(path, 30)
    assert w.poll() == {("modified", "reports/c1/r100.md")}


def test_a_failing_receiver_does_not_lose_the_rest_of_the_pass(write, tmp_path, caplog) -> None:
    write("reports/a/r1.md", "one")
    seen: list[str] = []

    def emit(event: FileSystemEvent) -> None:
        seen.append(str(event.src_path))
        if len(seen) == 1:
            raise RuntimeError("receiver broke")

    poller = Poller(tmp_path / "reports", ReportsSource(), emit)
    poller.poll()
    write("reports/a/r2.md", "two")
    write("reports/a/r3.md", "three")
    poller.poll()
    assert {os.path.basename(p) for p in seen} == {"r2.md", "r3.md"}
    assert any(r.exc_info and "receiver broke" in str(r.exc_info[1]) for r in caplog.records)


class Flaky(ReportsSource):
    """The reports' selection, failing in the first pass that lists a new file."""

    def __init__(self) -> None:
        self.failed = threading.Event()
        self.armed = False

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        if self.armed and not self.failed.is_set():
            self.failed.set()
            raise ValueError("selection broke")
        return super().wants_file(parts)


def test_a_pass_that_fails_half_way_loses_nothing(watch, write) -> None:
    write("reports/a/r1.md", "one")
    selection = Flaky()
    w = watch(selection)
    selection.armed = True
    write("reports/a/r2.md", "two")
    write("reports/c/r3.md", "three")
    with pytest.raises(ValueError, match="selection broke"):
        w.poll()
    assert w.poll() == {("created", "reports/a/r2.md"), ("created", "dir:reports/c")}
    assert w.poll() == set()


def test_the_thread_reports_changes_and_survives_a_failing_pass(write, tmp_path, caplog) -> None:
    write("reports/a/r1.md", "one")
    events: queue.Queue[FileSystemEvent] = queue.Queue()
    selection = Flaky()
    poller = Poller(tmp_path / "reports", selection, events.put, interval_s=0.01)
    poller.start()
    try:
        assert poller.is_alive()
        (thread,) = [t for t in threading.enumerate() if t.name == "trove-poller-reports"]
        assert thread.daemon
        selection.armed = True
        write("reports/a/r2.md", "two")
        assert selection.failed.wait(TIMEOUT)
        event = events.get(timeout=TIMEOUT)
        assert (event.event_type, os.path.basename(event.src_path)) == ("created", "r2.md")
    finally:
        poller.stop()
        poller.join(TIMEOUT)
    assert not poller.is_alive()
    assert any(r.exc_info and "selection broke" in str(r.exc_info[1]) for r in caplog.records)
