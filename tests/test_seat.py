"""indexer/seat.py: the watcher's seat, an exclusive flock on daemon.lock in the index
folder, and what its file says of the holder."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer import seat
from indexer.seat import Seat, SeatTaken, SeatUnusable, describe_holder, read_holder


@pytest.fixture
def as_a_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.access answering from the owner's permission bits, as for a user who owns the
    folders but is not root (the tests may run as root, whom access never refuses)."""
    bits = {os.R_OK: stat.S_IRUSR, os.W_OK: stat.S_IWUSR, os.X_OK: stat.S_IXUSR}

    def access(path: str | os.PathLike[str], mode: int) -> bool:
        have = os.stat(path).st_mode
        return all(have & bit for flag, bit in bits.items() if mode & flag)

    monkeypatch.setattr(os, "access", access)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Seat]:
    taken = Seat(tmp_path / "index")
    taken.take("mcp")
    yield taken
    taken.release()


def test_a_missing_index_folder_is_made_and_writable(tmp_path: Path) -> None:
    index = tmp_path / "a" / "b" / "index"
    assert seat.writable_problem(index) is None
    assert index.is_dir()


def test_an_index_folder_that_cannot_be_made_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    problem = seat.writable_problem(tmp_path / "file" / "index")
    assert problem == f"cannot create {tmp_path / 'file' / 'index'}: Not a directory"


def test_an_index_folder_that_cannot_be_listed_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: Path) -> Iterator[Path]:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", refused)
    assert seat.writable_problem(tmp_path) == f"cannot list {tmp_path}: Permission denied"


@pytest.mark.usefixtures("as_a_user")
@pytest.mark.parametrize("mode", [0o500, 0o600])
def test_an_index_folder_without_write_and_search_permission_is_a_problem(
    tmp_path: Path, mode: int
) -> None:
    index = tmp_path / "index"
    index.mkdir()
    index.chmod(mode)
    try:
        assert seat.writable_problem(index) == (
            f"{index} is not writable by this user (uid {os.getuid()})"
        )
    finally:
        index.chmod(0o700)


@pytest.mark.usefixtures("as_a_user")
def test_every_collection_folder_must_be_writable_but_hidden_ones_and_files_need_not(
    tmp_path: Path,
) -> None:
    index = tmp_path / "index"
    (index / ".trash").mkdir(parents=True)
    (index / ".trash").chmod(0o500)
    (index / "notes.txt").write_text("x")
    (index / "notes.txt").chmod(0o400)
    (index / "reports").mkdir()
    assert seat.writable_problem(index) is None
    (index / "reports").chmod(0o500)
    try:
        assert seat.writable_problem(index) == (
            f"{index / 'reports'} is not writable by this user (uid {os.getuid()})"
        )
    finally:
        (index / "reports").chmod(0o700)
        (index / ".trash").chmod(0o700)


def test_taking_the_seat_names_this_process_in_the_lock_file(tmp_path: Path) -> None:
    before = time.time()
    taken = Seat(tmp_path / "index")
    assert not taken.held
    taken.take("serve")
    try:
        assert taken.held
        record = json.loads((tmp_path / "index" / "daemon.lock").read_text())
        assert set(record) == {"pid", "kind", "since"}
        assert (record["pid"], record["kind"]) == (os.getpid(), "serve")
        assert before <= record["since"] <= time.time()
    finally:
        taken.release()


def test_the_lock_file_is_made_readable_by_everyone_and_writable_by_its_owner(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)
    try:
        taken = Seat(tmp_path)
        taken.take("daemon")
        taken.release()
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "daemon.lock").stat().st_mode) == 0o644


def test_a_dead_holders_longer_record_is_written_over_whole(tmp_path: Path) -> None:
    (tmp_path / "daemon.lock").write_text(json.dumps({"pid": 1, "kind": "x" * 500}))
    taken = Seat(tmp_path)
    taken.take("mcp")
    taken.release()
    record = json.loads((tmp_path / "daemon.lock").read_text())
    assert (record["pid"], record["kind"]) == (os.getpid(), "mcp")


def test_a_seat_taken_by_another_holder_names_it(held: Seat, tmp_path: Path) -> None:
    other = Seat(tmp_path / "index")
    with pytest.raises(SeatTaken) as caught:
        other.take("daemon")
    assert str(caught.value) == f"trove mcp (pid {os.getpid()})"
    assert not other.held


def test_taking_a_seat_already_held_keeps_it(held: Seat, tmp_path: Path) -> None:
    held.take("daemon")
    assert held.held
    record = json.loads((tmp_path / "index" / "daemon.lock").read_text())
    assert record["kind"] == "mcp"


def test_a_released_seat_can_be_taken_by_another(held: Seat, tmp_path: Path) -> None:
    held.release()
    assert not held.held
    held.release()  # twice is harmless
    other = Seat(tmp_path / "index")
    other.take("daemon")
    assert other.held
    other.release()


def test_an_unwritable_index_folder_makes_the_seat_unusable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(SeatUnusable, match=r"^cannot create "):
        Seat(tmp_path / "file").take("daemon")


def test_a_lock_file_that_cannot_be_opened_makes_the_seat_unusable(tmp_path: Path) -> None:
    (tmp_path / "daemon.lock").mkdir()
    with pytest.raises(SeatUnusable) as caught:
        Seat(tmp_path).take("daemon")
    assert str(caught.value) == f"cannot open {tmp_path / 'daemon.lock'}: Is a directory"


@pytest.mark.parametrize(
    ("code", "raised"),
    [(errno.EAGAIN, SeatTaken), (errno.EACCES, SeatTaken), (errno.ENOLCK, SeatUnusable)],
)
def test_a_lock_refused_means_taken_and_any_other_failure_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, raised: type[Exception]
) -> None:
    def flock(fd: int, operation: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fcntl, "flock", flock)
    taken = Seat(tmp_path)
    with pytest.raises(raised) as caught:
        taken.take("daemon")
    assert not taken.held
    if raised is SeatUnusable:
        assert str(caught.value) == f"cannot lock {tmp_path / 'daemon.lock'}: {os.strerror(code)}"
    else:
        assert str(caught.value) == "another trove process"  # the file names nobody


def test_a_record_that_cannot_be_written_still_leaves_the_seat_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "ftruncate", full)
    taken = Seat(tmp_path)
    taken.take("daemon")
    assert taken.held
    taken.release()


def test_the_holder_is_read_from_the_lock_file(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    assert read_holder(path) == {}  # no file
    path.write_bytes(b"")
    assert read_holder(path) == {}
    path.write_bytes(b"{not json")
    assert read_holder(path) == {}
    path.write_bytes(b"[1, 2]")
    assert read_holder(path) == {}
    path.write_bytes(b'{"pid": 12, "kind": "serve"}')
    assert read_holder(path) == {"pid": 12, "kind": "serve"}


def test_a_lock_file_of_an_older_trove_holding_a_pid_names_a_daemon(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    path.write_bytes(b"4321")
    assert read_holder(path) == {"pid": 4321, "kind": "daemon"}


def test_only_the_first_4096_bytes_of_the_lock_file_are_read(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    record = b'{"pid": 7}'
    path.write_bytes(record + b" " * (4096 - len(record)) + b"junk")
    assert read_holder(path) == {"pid": 7}


def test_the_holder_is_described_by_its_kind_and_pid() -> None:
    assert describe_holder({"pid": 5, "kind": "mcp"}) == "trove mcp (pid 5)"
    assert describe_holder({"pid": 5, "kind": "serve"}) == "trove serve (pid 5)"
    assert describe_holder({"pid": 5, "kind": "unknown"}) == "trove daemon (pid 5)"
    assert describe_holder({"pid": 5}) == "trove daemon (pid 5)"
    assert describe_holder({"pid": "5", "kind": "mcp"}) == "another trove process"
    assert describe_holder({}) == "another trove process"
