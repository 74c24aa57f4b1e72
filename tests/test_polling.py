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
from indexer.config import DaemonSettings
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


@pytest.fixture
def sweep_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No folder counts as changed just now: a folder is listed again only when its mtime
    or identity changed, so an edit in place is found by the sweep alone."""
    monkeypatch.setattr(polling, "RECENT_NS", 0)


@pytest.mark.usefixtures("sweep_only")
def test_the_sweep_checks_a_slice_each_pass_and_every_file_within_sweep_s(
    watch, write, tmp_path
) -> None:
    paths = [write(f"reports/c{i % 5}/r{i:03d}.md", "same") for i in range(200)]
    for path in paths:
        set_mtime(path, 60)
    # A budget of no time: only the slice that checks every file within sweep_s.
    w = watch(interval_s=2.0, sweep_s=20.0, budget=0.0)
    passes = math.ceil(20.0 / 2.0)
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


@pytest.mark.usefixtures("sweep_only")
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
    (record,) = [r for r in caplog.records if r.exc_info and "receiver broke" in str(r.exc_info[1])]
    assert record.getMessage().startswith("handing on ")
    assert os.path.basename(seen[0]) in record.getMessage()


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
    (record,) = [
        r for r in caplog.records if r.exc_info and "selection broke" in str(r.exc_info[1])
    ]
    assert record.getMessage() == f"polling {tmp_path / 'reports'}"


def test_a_poller_without_options_polls_as_the_daemons_defaults_say(tmp_path) -> None:
    poller = Poller(tmp_path / "reports", ReportsSource(), print)
    defaults = DaemonSettings()
    assert (poller.interval_s, poller.sweep_s) == (defaults.poll_interval_s, defaults.sweep_s)
    assert poller.budget == 0.02  # of each interval, in CPU time
    poller.poll()
    assert poller.last_swept == 0  # the first pass lists, and sweeps nothing


def test_join_returns_after_its_timeout_while_the_poller_runs(tmp_path) -> None:
    poller = Poller(tmp_path / "reports", ReportsSource(), print, interval_s=60.0)
    poller.start()
    try:
        poller.join(0.01)
        assert poller.is_alive()
    finally:
        poller.stop()
        poller.join(TIMEOUT)
    assert not poller.is_alive()


def _edit(path: Path, text: str = "diff") -> None:
    """Write ``path`` anew in place, its mtime 30 s ago (its folder's is left alone)."""
    path.write_text(text)
    set_mtime(path, 30)


def _keep_mtime(folder: Path) -> Callable[[], None]:
    """Put back the folder's mtime as it is now (a change within one tick of its clock)."""
    st = folder.stat()
    return lambda: os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.usefixtures("sweep_only")
def test_every_file_is_checked_within_sweep_s_also_when_a_slice_wraps_around(
    watch, write, tmp_path
) -> None:
    paths = [write(f"reports/a/r{i}.md", "same") for i in range(5)]
    w = watch(interval_s=2.0, sweep_s=5.0, budget=0.0)  # 2 files a pass
    for path in paths:
        _edit(path)
    found: set[Change] = set()
    for _ in range(3):  # the passes in sweep_s
        changes = w.poll()
        assert len(changes) == 2 or (len(changes) == 1 and len(found) == 4)
        assert w.poller.last_swept == 2
        found |= changes
    assert found == {("modified", f"reports/a/r{i}.md") for i in range(5)}
    # Found again when edited again.
    _edit(paths[0], "again")
    assert any(w.poll() for _ in range(3))


@pytest.mark.usefixtures("sweep_only")
def test_a_file_the_sweep_found_gone_is_not_reported_gone_again(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("reports/a/r2.md", "two")
    w = watch()
    put_back = _keep_mtime(tmp_path / "reports/a")
    (tmp_path / "reports/a/r1.md").unlink()
    put_back()
    assert w.poll() == {("deleted", "reports/a/r1.md")}
    write("reports/a/r3.md", "three")  # the folder is listed again
    assert w.poll() == {("created", "reports/a/r3.md")}


@pytest.mark.usefixtures("sweep_only")
def test_the_sweep_checks_more_files_while_its_cpu_budget_lasts(watch, write) -> None:
    for i in range(300):
        write(f"reports/c{i % 3}/r{i:03d}.md", "same")
    # One file is due each pass; 0.2 s of CPU time covers the rest many times over.
    w = watch(interval_s=1000.0, sweep_s=1e9, budget=0.0002)
    assert w.poll() == set()
    assert w.poller.last_swept == 300
    w.poller.budget = 0.0
    assert w.poll() == set()
    assert w.poller.last_swept == 1


@pytest.mark.parametrize(("files", "interval_s", "sweep_s", "swept"), [(300, 10.0, 1.0, 300)])
@pytest.mark.usefixtures("sweep_only")
def test_a_sweep_checks_each_file_at_most_once_a_pass(
    watch, write, files, interval_s, sweep_s, swept
) -> None:
    for i in range(files):
        write(f"reports/c{i % 3}/r{i:03d}.md", "same")
    w = watch(interval_s=interval_s, sweep_s=sweep_s, budget=0.0)
    assert w.poll() == set()
    assert w.poller.last_swept == swept


@pytest.mark.usefixtures("sweep_only")
def test_a_slice_larger_than_a_chunk_is_exactly_the_files_due(watch, write) -> None:
    for i in range(600):
        write(f"reports/c{i % 3}/r{i:03d}.md", "same")
    w = watch(interval_s=1.0, sweep_s=2.0, budget=0.0)  # 300 a pass, in chunks of 256
    assert w.poll() == set()
    assert w.poller.last_swept == 300


@pytest.mark.usefixtures("sweep_only")
def test_the_sweep_goes_on_past_files_gone_from_its_round(watch, write, tmp_path) -> None:
    for folder in ("a", "b"):
        for i in range(4):
            write(f"reports/{folder}/r{i}.md", "same")
    w = watch(interval_s=2.0, sweep_s=2.0, budget=0.0)  # every file, every pass
    (tmp_path / "reports/a/r0.md").unlink()
    (tmp_path / "reports/b/r0.md").unlink()
    assert w.poll() == {("deleted", "reports/a/r0.md"), ("deleted", "reports/b/r0.md")}
    # Deleted with their folders' mtimes kept: only the sweep sees these go.
    for folder in ("a", "b"):
        put_back = _keep_mtime(tmp_path / "reports" / folder)
        (tmp_path / "reports" / folder / "r1.md").unlink()
        put_back()
    for rel in ("a/r2.md", "a/r3.md", "b/r2.md", "b/r3.md"):
        _edit(tmp_path / "reports" / rel)
    assert w.poll() == {
        ("deleted", "reports/a/r1.md"),
        ("deleted", "reports/b/r1.md"),
        ("modified", "reports/a/r2.md"),
        ("modified", "reports/a/r3.md"),
        ("modified", "reports/b/r2.md"),
        ("modified", "reports/b/r3.md"),
    }


@pytest.mark.usefixtures("sweep_only")
def test_a_file_that_became_a_folder_is_deleted_for_the_sweep(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    put_back = _keep_mtime(tmp_path / "reports/a")
    (tmp_path / "reports/a/r1.md").unlink()
    (tmp_path / "reports/a/r1.md").mkdir()
    put_back()
    assert w.poll() == {("deleted", "reports/a/r1.md")}


@pytest.mark.usefixtures("sweep_only")
def test_files_forgotten_are_dropped_from_the_sweeps_round(watch, write, tmp_path) -> None:
    paths = [write(f"reports/a/r{i:03d}.md", "same") for i in range(300)]
    w = watch(interval_s=2.0, sweep_s=2.0, budget=0.0)
    for path in paths[10:]:
        path.unlink()
    assert len(w.poll()) == 290
    _edit(paths[3])
    assert w.poll() == {("modified", "reports/a/r003.md")}
    assert w.poller.last_swept == 10


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_changed_long_ago_with_another_mtime_is_listed_again(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    write("reports/a/r2.md", "two")
    set_mtime(tmp_path / "reports/a", 60)
    assert w.poll() == {("created", "reports/a/r2.md")}


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_replaced_by_one_with_the_same_mtime_is_listed_anew(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    put_back = _keep_mtime(tmp_path / "reports/a")
    write("reports/a.new/r2.md", "two")  # made while the old one is there: another inode
    os.rename(tmp_path / "reports/a", tmp_path / "old")
    os.rename(tmp_path / "reports/a.new", tmp_path / "reports/a")
    put_back()
    assert w.poll() == {("deleted", "dir:reports/a"), ("created", "dir:reports/a")}
    write("reports/a/r3.md", "three")
    assert w.poll() == {("created", "reports/a/r3.md")}


def test_a_folder_changed_within_recent_ns_is_listed_again_with_its_mtime_unchanged(
    watch, write, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(polling, "RECENT_NS", 3600 * 10**9)
    folder = tmp_path / "reports/a"
    write("reports/a/r1.md", "one")
    w = watch()
    tick = time.time_ns() - 60 * 10**9  # within the hour, in the past
    write("reports/a/r2.md", "two")
    os.utime(folder, ns=(tick, tick))
    assert w.poll() == {("created", "reports/a/r2.md")}
    write("reports/a/r3.md", "three")
    os.utime(folder, ns=(tick, tick))
    assert w.poll() == {("created", "reports/a/r3.md")}


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_that_cannot_be_stated_keeps_its_state_and_is_listed_once_it_can(
    watch, write, tmp_path, monkeypatch, caplog
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    folder = tmp_path / "reports/a"
    caplog.set_level(logging.WARNING, logger="indexer.polling")
    real = os.stat

    def refusing(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if isinstance(path, str) and path == str(folder):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    put_back = _keep_mtime(folder)
    write("reports/a/r2.md", "two")
    put_back()
    with monkeypatch.context() as patched:
        patched.setattr(polling.os, "stat", refusing)
        assert w.poll() == set()
        assert w.poll() == set()
    said = [r.getMessage() for r in caplog.records if "cannot read" in r.getMessage()]
    assert said == [f"cannot read {folder}: Permission denied; its last known state is kept"]
    # Its mtime is as it was: it is listed again because it could not be read.
    assert w.poll() == {("created", "reports/a/r2.md")}


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_replaced_by_a_file_is_deleted(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    put_back = _keep_mtime(tmp_path / "reports")  # the root is not listed again
    shutil.rmtree(tmp_path / "reports/a")
    (tmp_path / "reports/a").write_text("a file now")
    put_back()
    assert w.poll() == {("deleted", "dir:reports/a")}


def _scandir_failing(monkeypatch: pytest.MonkeyPatch, folder: Path, errors: list[OSError]) -> None:
    """``folder`` cannot be listed: each listing raises the next of ``errors`` (the last
    again once they run out)."""
    real = os.scandir

    def scandir(path: object) -> object:
        if isinstance(path, str) and path == str(folder):
            raise errors.pop(0) if len(errors) > 1 else errors[0]
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(polling.os, "scandir", scandir)


def test_a_folder_unreadable_again_after_it_was_read_is_said_again(
    watch, write, tmp_path, monkeypatch, caplog
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    folder = tmp_path / "reports/a"
    caplog.set_level(logging.WARNING, logger="indexer.polling")
    for n in ("2", "3"):
        write(f"reports/a/r{n}.md", n)
        with unreadable(folder, monkeypatch):
            assert w.poll() == set()
        assert w.poll() == {("created", f"reports/a/r{n}.md")}
    assert len([r for r in caplog.records if "cannot read" in r.getMessage()]) == 2


def test_a_folder_gone_while_it_is_listed_is_deleted_even_after_it_was_unreadable(
    watch, write, tmp_path, monkeypatch
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    folder = tmp_path / "reports/a"
    gone = FileNotFoundError(2, "No such file or directory", str(folder))
    _scandir_failing(monkeypatch, folder, [PermissionError(13, "Permission denied"), gone])
    write("reports/a/r2.md", "two")
    assert w.poll() == set()  # unreadable: its last known state is kept
    write("reports/a/r3.md", "three")
    assert w.poll() == {("deleted", "dir:reports/a")}


def test_a_folder_gone_and_made_again_unreadable_is_said_again(
    watch, write, tmp_path, monkeypatch, caplog
) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    folder = tmp_path / "reports/a"
    caplog.set_level(logging.WARNING, logger="indexer.polling")
    _scandir_failing(monkeypatch, folder, [PermissionError(13, "Permission denied")])
    write("reports/a/r3.md", "three")
    assert w.poll() == set()
    shutil.rmtree(folder)
    assert w.poll() == {("deleted", "dir:reports/a")}
    write("reports/a/r4.md", "four")
    assert w.poll() == {("created", "dir:reports/a")}
    assert len([r for r in caplog.records if "cannot read" in r.getMessage()]) == 2


def test_a_symlinked_file_inside_the_root_is_watched_under_its_own_name(
    watch, write, tmp_path
) -> None:
    write("reports/a/r1.md", "one")
    write("reports/b/r2.md", "two")
    w = watch()
    (tmp_path / "reports/a/alias.md").symlink_to(tmp_path / "reports/b/r2.md")
    assert w.poll() == {("created", "reports/a/alias.md")}


def test_a_broken_symlink_does_not_hide_the_files_after_it(watch, write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    for i in range(20):
        write(f"staging/new/r{i:02d}.md", "x")
    (tmp_path / "staging/new/broken.md").symlink_to("nowhere.md")  # inside, and missing
    shutil.move(tmp_path / "staging/new", tmp_path / "reports/new")
    assert w.poll() == {("created", "dir:reports/new")}
    for i in range(20):
        (tmp_path / f"reports/new/r{i:02d}.md").unlink()
    assert w.poll() == {("deleted", f"reports/new/r{i:02d}.md") for i in range(20)}


def test_a_new_folder_and_a_link_to_it_are_watched_by_the_folders_own_path(
    watch, write, tmp_path
) -> None:
    write("reports/r0.md", "zero")
    w = watch(AnyDepth())
    write("reports/b/r1.md", "one")
    (tmp_path / "reports/a-link").symlink_to(tmp_path / "reports/b")
    assert w.poll() == {("created", "dir:reports/b")}
    write("reports/b/r2.md", "two")
    assert w.poll() == {("created", "reports/b/r2.md")}


def test_a_second_link_to_a_folder_does_not_stop_the_links_after_it(write, tmp_path) -> None:
    write("reports/.store/x/r.md", "behind a link")  # hidden: reached only by the link
    write("reports/a/r1.md", "one")
    (tmp_path / "reports/l2").symlink_to(tmp_path / "reports/.store/x")
    (tmp_path / "reports/a/l1").symlink_to(tmp_path / "reports/a")  # a second way in
    w = Watched(tmp_path, AnyDepth())
    assert w.poll() == set()
    (tmp_path / "reports/.store/x/r.md").unlink()
    assert w.poll() == {("deleted", "reports/l2/r.md")}


@pytest.mark.parametrize("name", ["a", "b", "c", "d"])
def test_a_folder_unreadable_at_the_start_does_not_stop_the_others(
    write, tmp_path, monkeypatch, name
) -> None:
    for folder in ("a", "b", "c", "d"):
        write(f"reports/{folder}/r1.md", "one")
    w = Watched(tmp_path)
    with unreadable(tmp_path / "reports" / name, monkeypatch):
        assert w.poll() == set()
    others = [f for f in ("a", "b", "c", "d") if f != name]
    for folder in others:
        write(f"reports/{folder}/r2.md", "two")
    assert w.poll() == {("created", f"reports/{f}/r2.md") for f in others} | {
        ("created", f"reports/{name}/r1.md")  # read at last
    }


def test_a_folder_moved_to_another_checked_before_it_is_watched_at_its_new_place(
    watch, write, tmp_path
) -> None:
    write("reports/a/y/r.md", "y")
    write("reports/z/x/r.md", "x")
    w = watch(AnyDepth())
    # One of the two moves meets the folder at its new place before its old place is
    # found empty, whichever order the folders are checked in.
    os.rename(tmp_path / "reports/z/x", tmp_path / "reports/a/x")
    assert w.poll() == {("deleted", "dir:reports/z/x"), ("created", "dir:reports/a/x")}
    os.rename(tmp_path / "reports/a/y", tmp_path / "reports/z/y")
    assert w.poll() == {("deleted", "dir:reports/a/y"), ("created", "dir:reports/z/y")}
    write("reports/a/x/new.md", "n")
    write("reports/z/y/new.md", "n")
    assert w.poll() == {("created", "reports/a/x/new.md"), ("created", "reports/z/y/new.md")}


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_made_where_one_moved_away_within_a_tick_is_found(watch, write, tmp_path) -> None:
    write("reports/a/x/r.md", "x")
    write("reports/b/y/r.md", "y")
    w = watch(AnyDepth())
    # Each time the folder left behind gets a new folder of the same name, and its parent
    # keeps its mtime; one of the two is checked after the folder's new place.
    for src, dst, name in (("a", "b", "x"), ("b", "a", "y")):
        put_back = _keep_mtime(tmp_path / "reports" / src)
        os.rename(tmp_path / "reports" / src / name, tmp_path / "reports" / dst / name)
        write(f"reports/{src}/{name}/new.md", "new")
        put_back()
        changes = w.poll()
        assert ("created", f"dir:reports/{dst}/{name}") in changes
        assert ("created", f"dir:reports/{src}/{name}") in changes


def test_a_first_pass_that_fails_is_made_again_whole(write, tmp_path) -> None:
    write("reports/a/r1.md", "one")
    selection = Flaky()
    selection.armed = True
    w = Watched(tmp_path, selection)
    with pytest.raises(ValueError, match="selection broke"):
        w.poll()
    assert w.poll() == set()  # the first pass again: nothing reported
    assert w.poll() == set()
    write("reports/a/r2.md", "two")
    assert w.poll() == {("created", "reports/a/r2.md")}


@pytest.mark.usefixtures("sweep_only")
def test_the_sweep_goes_round_from_the_first_file_and_a_wrapping_slice_takes_only_those_due(
    watch, write, tmp_path
) -> None:
    for i in range(5):
        write(f"reports/a/r{i}.md", "same")
    w = watch(interval_s=2.0, sweep_s=5.0, budget=0.0)  # 2 files a pass
    order = [Path(p) for p in w.poller._order]  # as listed
    assert w.poll() == set() and w.poll() == set()  # the first four
    _edit(order[4])
    _edit(order[1])
    rel = [str(p.relative_to(tmp_path)) for p in order]
    assert w.poll() == {("modified", rel[4])}  # the last, then the first again
    assert w.poll() == {("modified", rel[1])}


@pytest.mark.usefixtures("sweep_only")
def test_a_folder_listed_again_is_not_listed_on_later_passes_while_it_stays_as_it_is(
    watch, write, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("reports/a/r1.md", "one")
    w = watch()
    write("reports/a/r2.md", "two")
    assert w.poll() == {("created", "reports/a/r2.md")}
    listed: list[str] = []
    real = os.scandir

    def listing(path: str) -> object:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(polling.os, "scandir", listing)
    assert w.poll() == set()
    assert listed == []
