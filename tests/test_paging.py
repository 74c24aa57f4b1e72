"""query/paging.py: the offset every search takes and the page it answers."""

from __future__ import annotations

import pytest

from query import paging
from query.errors import TroveError


def test_an_offset_within_the_window_is_returned_as_given() -> None:
    assert paging.check_offset(0, 10) == 0
    assert paging.check_offset(990, 10) == 990  # the last page the window serves


def test_an_offset_past_the_window_names_both_numbers_and_says_what_to_do() -> None:
    with pytest.raises(TroveError) as caught:
        paging.check_offset(991, 10)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert caught.value.message == (
        "offset + max_results must be at most 1000, got 991 + 10: hits past the first 1000 "
        "are not served; narrow the query (a filter, more words) instead"
    )


@pytest.mark.parametrize(
    ("offset", "message"),
    [
        (-1, "offset must be 0 or more, got -1"),
        ("5", "offset must be a whole number, got '5'"),
        (True, "offset must be a whole number, got True"),
    ],
)
def test_an_offset_that_is_not_a_whole_number_from_0_is_invalid(
    offset: object, message: str
) -> None:
    with pytest.raises(TroveError) as caught:
        paging.check_offset(offset, 10)
    assert (caught.value.code, caught.value.message) == ("INVALID_ARGUMENT", message)


def test_the_window_is_the_hits_up_to_the_page_and_one_more() -> None:
    assert paging.window(0, 10) == 11
    assert paging.window(20, 5) == 26


def test_a_page_is_its_slice_and_the_next_offset_while_more_follow() -> None:
    ranked = list(range(25))
    assert paging.page(ranked, 0, 10) == (list(range(10)), 10)
    assert paging.page(ranked, 10, 10) == (list(range(10, 20)), 20)
    assert paging.page(ranked, 20, 10) == (list(range(20, 25)), None)


def test_a_page_that_ends_exactly_at_the_last_hit_has_no_next_offset() -> None:
    assert paging.page(list(range(20)), 10, 10) == (list(range(10, 20)), None)
    # The window's one extra hit is what says another page follows.
    assert paging.page(list(range(21)), 10, 10) == (list(range(10, 20)), 20)


def test_a_page_past_the_end_is_empty() -> None:
    assert paging.page(list(range(5)), 10, 10) == ([], None)
