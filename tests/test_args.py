"""query/args.py: the checks every search makes of its arguments, and their messages."""

from __future__ import annotations

import pytest

from query.args import MAX_QUERY_CHARS, check_name, check_query, check_range
from query.errors import TroveError


def refused(call: object, *args: object, **kwargs: object) -> TroveError:
    with pytest.raises(TroveError) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return info.value


def test_a_query_is_stripped_and_kept_up_to_the_limit() -> None:
    assert check_query("  klystron arc \n") == "klystron arc"
    assert check_query("x" * MAX_QUERY_CHARS) == "x" * MAX_QUERY_CHARS
    assert check_query(" x ", optional=True) == "x"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "query is empty; give one or more words to search for"),
        ("  \t", "query is empty; give one or more words to search for"),
        (None, "query is empty; give one or more words to search for"),
        (5, "query must be text, got int"),
        (["a"], "query must be text, got list"),
        (
            "x" * (MAX_QUERY_CHARS + 1),
            "query is 1001 characters long; the limit is 1000: shorten it",
        ),
        ("a\x00b", "query holds a NUL character"),
    ],
)
def test_a_bad_query_is_invalid_query_saying_why(query: object, message: str) -> None:
    error = refused(check_query, query)
    assert (error.code, error.message) == ("INVALID_QUERY", message)


def test_an_optional_query_may_be_missing_or_blank_but_not_bad() -> None:
    assert check_query(None, optional=True) is None
    assert check_query("   ", optional=True) is None
    error = refused(check_query, 3, "pattern", optional=True)
    assert error.message == "pattern must be text, got int"


def test_the_field_and_hint_name_what_was_asked() -> None:
    error = refused(check_query, "", "pattern", hint="give a regex")
    assert error.message == "pattern is empty; give a regex"


@pytest.mark.parametrize("value", [1, 5, 10])
def test_a_number_within_its_bounds_is_kept(value: int) -> None:
    assert check_range(value, "n", 1, 10) == value
    assert check_range(value, "n", 1, None) == value


@pytest.mark.parametrize(
    ("value", "high", "message"),
    [
        (0, 10, "n must be between 1 and 10, got 0"),
        (11, 10, "n must be between 1 and 10, got 11"),
        (0, None, "n must be 1 or more, got 0"),
        (True, 10, "n must be a whole number, got True"),
        (2.0, 10, "n must be a whole number, got 2.0"),
        ("3", 10, "n must be a whole number, got '3'"),
    ],
)
def test_a_number_out_of_bounds_or_not_whole_is_invalid_argument(
    value: object, high: int | None, message: str
) -> None:
    error = refused(check_range, value, "n", 1, high)
    assert (error.code, error.message) == ("INVALID_ARGUMENT", message)


@pytest.mark.parametrize(
    "name", ["klystron-check", "a.b", "x" * 255, "日志-command", "[red]x", "a b", ".hidden"]
)
def test_a_name_of_one_path_component_is_kept(name: str) -> None:
    assert check_name(name, "command_name", "INVALID_COMMAND_FILTER", command=True) == name
    assert check_name(name, "report_name", "INVALID_COMMAND_FILTER") == name


@pytest.mark.parametrize(
    "name",
    ["", "  ", ".", "..", "a..b", "a/b", "/abs", "a\\b", "a\x00b", "a\nb", "a\x7fb", "x" * 256],
)
def test_a_name_that_could_lead_out_of_its_folder_is_refused(name: str) -> None:
    for command in (False, True):
        error = refused(check_name, name, "report_name", "INVALID_COMMAND_FILTER", command=command)
        assert error.code == "INVALID_COMMAND_FILTER"


def test_the_refusal_names_the_argument_and_the_rules() -> None:
    assert refused(check_name, " ", "command_name", "INVALID_ARGUMENT").message == (
        "command_name is empty"
    )
    assert refused(check_name, None, "command_name", "INVALID_ARGUMENT").message == (
        "command_name is empty"
    )
    error = refused(check_name, "a/b", "report_name", "INVALID_COMMAND_FILTER")
    assert error.message == (
        "report_name 'a/b' is not a valid name: it must be one file or folder name, "
        "without '/', '\\', '..', control characters"
    )
    error = refused(check_name, "a:b", "command_name", "INVALID_COMMAND_FILTER", command=True)
    assert error.code == "INVALID_COMMAND_FILTER"
    assert error.message == (
        "command_name 'a:b' is not a valid name: it must be one file or folder name, "
        "without '/', '\\', '..', control characters, "
        'any of < > : " | ? * or spaces at either end'
    )


@pytest.mark.parametrize("name", ["a<b", "a>b", "a:b", 'a"b', "a|b", "a?b", "a*b", " a", "a "])
def test_a_command_name_is_also_portable(name: str) -> None:
    error = refused(check_name, name, "command_name", "INVALID_COMMAND_FILTER", command=True)
    assert error.code == "INVALID_COMMAND_FILTER"
    assert check_name(name, "report_name", "INVALID_COMMAND_FILTER") == name
