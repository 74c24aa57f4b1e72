"""query/tools.py: the whole-number arguments' checks, limits and help, and a search's offset."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, create_model

from query import budget, tools
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


def test_results_declares_a_max_results_from_1_with_its_default_and_meaning() -> None:
    assert tools.results(10, 100) == tools.Results(
        "max_results", 1, 100, "Maximum number of results to return", 10
    )
    assert tools.results(5, 20, "Lines") == tools.Results("max_results", 1, 20, "Lines", 5)


def test_a_bounded_argument_takes_both_ends_and_refuses_past_either() -> None:
    results = tools.results(10, 50)
    assert results.check(1) == 1 and results.check(50) == 50
    for value in (0, 51):
        with pytest.raises(TroveError) as caught:
            results.check(value)
        assert caught.value.message == f"max_results must be between 1 and 50, got {value}"


def test_an_argument_without_an_upper_limit_takes_any_number_from_its_low() -> None:
    assert tools.LIST_OFFSET.check(10**9) == 10**9
    with pytest.raises(TroveError, match="offset must be 0 or more, got -1"):
        tools.LIST_OFFSET.check(-1)


def test_none_is_left_for_the_tool_to_choose_and_anything_else_is_checked() -> None:
    assert tools.PART_LIMIT.check_or_none(None) is None
    assert tools.PART_LIMIT.check_or_none(7) == 7
    with pytest.raises(TroveError, match="limit must be between 1 and 100000, got 0"):
        tools.PART_LIMIT.check_or_none(0)


def test_the_limits_in_words_and_the_clis_help_end_with_them() -> None:
    assert tools.SEARCH_ELOG_RESULTS.limits == "1-50"
    assert tools.PART_OFFSET.limits == "1 or more"
    assert tools.HIT_OFFSET.cli_help("Hits to skip") == "Hits to skip (0-999)."


def test_the_mcp_schema_of_an_argument_holds_its_limits_and_meaning() -> None:
    field = tools.SEARCH_RESULTS.mcp_field()
    schema = create_model("Args", max_results=(int, field)).model_json_schema()
    assert schema["properties"]["max_results"] == {
        "description": "Maximum number of hits to return",
        "maximum": 50,
        "minimum": 1,
        "title": "Max Results",
        "type": "integer",
    }
    unbounded = create_model("Args", offset=(int, tools.PART_OFFSET.mcp_field()))
    assert "maximum" not in unbounded.model_json_schema()["properties"]["offset"]


class _Hit(BaseModel):
    text: str


class _Page(BaseModel):
    hits: list[_Hit]
    next_offset: int | None = None
    note: str | None = None


def _page() -> _Page:
    """A page of about 60,000 characters: over the default budget, under the maximum."""
    return _Page(hits=[_Hit(text="x" * 1000) for _ in range(60)])


def test_a_page_asked_with_the_default_is_cut_to_the_default_budget_and_any_other_to_the_max() -> (
    None
):
    by_default = _page()
    tools.SEARCH_RESULTS.fit(by_default, "hits", 20, tools.SEARCH_RESULTS.default)
    assert budget.size(by_default) <= budget.DEFAULT_CHARS < budget.size(_page())
    assert by_default.next_offset == 20 + len(by_default.hits)
    asked = _page()
    tools.SEARCH_RESULTS.fit(asked, "hits", 20, 60)
    assert (len(asked.hits), asked.next_offset, asked.note) == (60, None, None)
