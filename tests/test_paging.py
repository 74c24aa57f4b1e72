"""query/paging.py: the window a page needs and the page it answers."""

from __future__ import annotations

from query import paging


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
