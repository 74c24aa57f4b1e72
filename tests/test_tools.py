"""query/tools.py: the whole-number arguments' checks, limits and help, and a search's offset."""

from __future__ import annotations

import pytest

from query import tools
from query.errors import TroveError


def test_an_offset_within_the_window_is_returned_as_given() -> None:
    assert tools.check_offset(0, 10) == 0
    assert tools.check_offset(990, 10) == 990  # the last page the window serves


def test_an_offset_past_the_window_names_both_numbers_and_says_what_to_do() -> None:
    with pytest.raises(TroveError) as caught:
        tools.check_offset(991, 10)
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
        tools.check_offset(offset, 10)
    assert (caught.value.code, caught.value.message) == ("INVALID_ARGUMENT", message)
