"""indexer/held.py: the changes a commit could not take, kept per collection and retried
with backoff; the words status shows for them."""

from __future__ import annotations

import errno
import time
from types import SimpleNamespace

import pytest

from indexer import held
from indexer.errors import ChildEnded
from indexer.held import HeldChanges, fault_kind


class Clock:
    """The module's clock, moved by the test: wall time for ``since``, monotonic for
    the retries (both start at a fixed local time, 10:51)."""

    def __init__(self) -> None:
        self.wall = time.mktime((2025, 3, 4, 10, 51, 30, 0, 0, -1))
        self.mono = 1000.0

    def advance(self, seconds: float) -> None:
        self.wall += seconds
        self.mono += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    fake = SimpleNamespace(
        time=lambda: clock.wall,
        monotonic=lambda: clock.mono,
        strftime=time.strftime,
        localtime=time.localtime,
    )
    monkeypatch.setattr(held, "time", fake)
    return clock


def _fault(code: int) -> OSError:
    return OSError(code, "fault")


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "disk full"),
        (errno.EDQUOT, "disk quota exceeded"),
        (errno.EROFS, "index folder read-only"),
        (errno.EACCES, "index folder not writable"),
        (errno.EPERM, "index folder not writable"),
        (errno.EIO, "I/O error on the index folder"),
    ],
)
def test_each_write_fault_is_named_in_words(code: int, words: str) -> None:
    assert fault_kind(_fault(code)) == words


def test_a_fault_is_found_under_the_exceptions_that_wrap_it() -> None:
    try:
        try:
            raise _fault(errno.EROFS)
        except OSError as exc:
            raise RuntimeError("commit failed") from exc
    except RuntimeError as outer:
        assert fault_kind(outer) == "index folder read-only"
    wrapper = RuntimeError("write fault")
    wrapper.cause = _fault(errno.EDQUOT)  # type: ignore[attr-defined]
    assert fault_kind(wrapper) == "disk quota exceeded"


def test_a_fault_of_another_kind_is_a_write_that_failed() -> None:
    assert fault_kind(_fault(errno.ENOENT)) == "cannot write the index"
    assert fault_kind(ValueError("x")) == "cannot write the index"


def test_the_first_hold_of_a_collection_says_so_and_the_changes_add_up(clock: Clock) -> None:
    changes = HeldChanges()
    assert changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC)) is True
    assert changes.hold("reports", {"b.md"}, _fault(errno.ENOSPC)) is False
    assert changes.hold("elog", {"1.log"}, _fault(errno.ENOSPC)) is True
    clock.advance(10)
    assert changes.due() == [("reports", {"a.md", "b.md"}), ("elog", {"1.log"})]
    assert changes.count() == 3


def test_a_whole_collection_held_stays_whole_whatever_is_held_after(clock: Clock) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    changes.hold("reports", None, _fault(errno.ENOSPC))
    changes.hold("reports", {"b.md"}, _fault(errno.ENOSPC))
    clock.advance(10)
    assert changes.due() == [("reports", None)]
    assert changes.count() == 1


def test_a_retry_is_due_after_a_quarter_second_doubling_up_to_two(clock: Clock) -> None:
    changes = HeldChanges()
    waits = []
    for _ in range(6):
        changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
        start = clock.mono
        while not changes.due():
            clock.advance(0.125)
        waits.append(clock.mono - start)
    assert waits == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]


def test_a_reconcile_process_that_keeps_ending_is_retried_at_most_once_a_minute(
    clock: Clock,
) -> None:
    changes = HeldChanges()
    waits = []
    for _ in range(11):
        changes.hold("reports", None, ChildEnded("ended by signal 9 (SIGKILL)"))
        start = clock.mono
        while not changes.due():
            clock.advance(0.125)
        waits.append(clock.mono - start)
    assert waits == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]
    assert changes.line().startswith("the reconcile process ended: changes pending")


def test_a_retry_is_due_at_its_time_exactly(clock: Clock) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(0.2)
    assert changes.due() == []
    clock.advance(0.05)
    assert changes.due() == [("reports", {"a.md"})]


def test_the_changes_due_are_a_copy_the_caller_may_change(clock: Clock) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(1)
    [(_, rels)] = changes.due()
    assert rels is not None
    rels.add("b.md")
    assert changes.due() == [("reports", {"a.md"})]


def test_landed_changes_are_forgotten_and_say_when_they_were_first_held(clock: Clock) -> None:
    changes = HeldChanges()
    first = clock.wall
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(60)
    changes.hold("reports", {"b.md"}, _fault(errno.ENOSPC))
    clock.advance(10)
    assert changes.due() == [("reports", {"a.md", "b.md"})]
    assert changes.landed("reports") == first
    assert (changes.count(), changes.line(), changes.due()) == (0, "", [])


def test_changes_held_while_a_retry_runs_stay_held_when_it_lands(clock: Clock) -> None:
    # The watcher's batch holds b.md while the loop's retry of a.md is on its way (a
    # commit that met the fault just before it cleared): b.md did not land with it.
    changes = HeldChanges()
    first = clock.wall
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(1)
    assert changes.due() == [("reports", {"a.md"})]
    changes.hold("reports", {"b.md", "a.md"}, _fault(errno.ENOSPC))
    assert changes.landed("reports") == first
    assert changes.count() == 2  # a.md again: the retry may have read it before
    assert changes.due() == [("reports", {"a.md", "b.md"})]  # at once, not after a wait
    assert changes.landed("reports") == first
    assert (changes.count(), changes.due()) == (0, [])


def test_a_whole_collection_held_while_a_retry_runs_stays_held_when_it_lands(
    clock: Clock,
) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(1)
    changes.due()
    changes.hold("reports", None, _fault(errno.ENOSPC))
    changes.landed("reports")
    assert changes.due() == [("reports", None)]
    # And a whole collection retried, with a change held meanwhile: that change stays.
    changes.hold("reports", {"b.md"}, _fault(errno.ENOSPC))
    changes.landed("reports")
    assert changes.due() == [("reports", {"b.md"})]


def test_a_retry_that_fails_again_keeps_what_it_retried(clock: Clock) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    clock.advance(1)
    changes.due()
    changes.hold("reports", set(), _fault(errno.ENOSPC))  # as the daemon's retry holds
    clock.advance(10)
    assert changes.due() == [("reports", {"a.md"})]
    assert changes.landed("reports") is not None and changes.count() == 0


def test_the_status_line_names_the_fault_the_changes_the_time_and_the_collections(
    clock: Clock,
) -> None:
    changes = HeldChanges()
    assert changes.line() == ""
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    assert changes.line() == "disk full: 1 change pending since 10:51 (reports)"
    clock.advance(120)
    changes.hold("commands", {"x/a.md", "x/b.md"}, _fault(errno.ENOSPC))
    assert changes.line() == "disk full: 3 changes pending since 10:51 (reports, commands)"
    changes.hold("elog", None, _fault(errno.EROFS))
    assert changes.line() == (
        "disk full: 3 changes pending since 10:51 (reports, commands); "
        "index folder read-only: changes pending since 10:53 (elog)"
    )


def test_a_collection_held_whole_makes_its_kind_of_fault_count_changes_unnumbered(
    clock: Clock,
) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    changes.hold("commands", None, _fault(errno.ENOSPC))
    assert changes.line() == "disk full: changes pending since 10:51 (reports, commands)"


def test_a_collection_is_named_under_the_fault_it_met_last(clock: Clock) -> None:
    changes = HeldChanges()
    changes.hold("reports", {"a.md"}, _fault(errno.ENOSPC))
    changes.hold("reports", {"a.md"}, _fault(errno.EROFS))
    assert changes.line() == "index folder read-only: 1 change pending since 10:51 (reports)"
