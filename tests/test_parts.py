"""query/parts.py: a document read a part at a time, by lines, within a size budget."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from query import budget, parts
from query.errors import TroveError


class _Doc(BaseModel):
    name: str = "doc"
    content: str = ""
    start_line: int = 0
    end_line: int = 0
    total_lines: int = 0
    next_offset: int | None = None
    note: str | None = None


def test_no_offset_is_the_first_line_and_no_limit_is_by_size() -> None:
    assert parts.check_part(None, None) == (1, None)
    assert parts.check_part(3, 100_000) == (3, 100_000)


@pytest.mark.parametrize(
    ("offset", "limit", "message"),
    [
        (0, None, "offset must be 1 or more, got 0"),
        ("2", None, "offset must be a whole number, got '2'"),
        (1, 0, "limit must be between 1 and 100000, got 0"),
        (1, 100_001, "limit must be between 1 and 100000, got 100001"),
    ],
)
def test_an_offset_below_1_or_a_limit_outside_1_to_100000_is_invalid(
    offset: object, limit: object, message: str
) -> None:
    with pytest.raises(TroveError) as caught:
        parts.check_part(offset, limit)
    assert (caught.value.code, caught.value.message) == ("INVALID_ARGUMENT", message)


def test_the_room_for_content_is_the_budget_less_the_rest_and_the_slack() -> None:
    assert parts.room_for(1000, None) == 40_000 - 1000 - 400
    assert parts.room_for(1000, 5) == 80_000 - 1000 - 400


def test_a_part_takes_the_lines_whose_json_fits_the_room() -> None:
    text = "aaaa\n" * 10  # each line is 6 characters of JSON ("aaaa\\n")
    part = parts.part_of(text, 1, None, 2 + 3 * 6)
    assert part == parts.Part("aaaa\n" * 3, 1, 3, 10, 4)
    assert parts.part_of(text, 1, None, 2 + 3 * 6 - 1).end_line == 2


def test_a_part_counts_json_escapes_against_its_room() -> None:
    text = 'q"\n' * 4  # 'q\\"\\n': 5 characters each
    assert parts.part_of(text, 1, None, 2 + 2 * 5).end_line == 2


def test_a_part_holds_at_least_one_line_however_small_the_room() -> None:
    part = parts.part_of("long line\nnext\n", 1, None, 0)
    assert part == parts.Part("long line\n", 1, 1, 2, 2)


def test_a_part_from_an_offset_ends_at_the_document_end_with_no_next_offset() -> None:
    text = "one\ntwo\nthree"
    assert parts.part_of(text, 2, None, 1000) == parts.Part("two\nthree", 2, 3, 3, None)
    assert parts.part_of(text, 3, None, 1000) == parts.Part("three", 3, 3, 3, None)


def test_a_part_past_the_end_is_empty() -> None:
    assert parts.part_of("one\ntwo\n", 3, None, 1000) == parts.Part("", 3, 2, 2, None)
    assert parts.part_of("", 1, 5, 1000) == parts.Part("", 1, 0, 0, None)


def test_a_limit_takes_that_many_lines_without_a_note() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 11))
    part = parts.part_of(text, 4, 3, 1000)
    assert part == parts.Part("line 4\nline 5\nline 6\n", 4, 6, 10, 7)
    assert parts.part_of(text, 9, 5, 1000) == parts.Part("line 9\nline 10\n", 9, 10, 10, None)


def test_a_limit_the_room_cannot_hold_is_cut_short_with_a_note() -> None:
    text = "aaaa\n" * 10
    part = parts.part_of(text, 2, 5, 2 + 2 * 6)
    assert (part.start_line, part.end_line, part.next_offset) == (2, 3, 4)
    assert part.note == (
        "cut at line 3 of the 5 asked for, to keep the answer under 80,000 characters; "
        "ask again with offset=4"
    )


def test_a_line_longer_than_2000_characters_is_cut_with_a_marker_and_keeps_its_end() -> None:
    exact = "e" * 2000 + "\r\n"
    assert parts.part_of(exact, 1, None, 10**6).content == exact
    longer = "l" * 2001 + "\r\n" + "next"
    part = parts.part_of(longer, 1, None, 10**6)
    assert part.content == (
        "l" * 2000 + " … [line cut: 2,001 characters in all; the file has it whole]\r\nnext"
    )
    assert part.total_lines == 2


def test_a_long_line_is_measured_up_to_its_line_end_only() -> None:
    spaces = "s" * 1999 + "     \n"  # 2,004 characters before its end, spaces counted
    assert parts.part_of(spaces, 1, None, 10**6).content == (
        "s" * 1999 + "  … [line cut: 2,004 characters in all; the file has it whole]\n"
    )
    x_end = "l" * 2001 + "XX\n"
    assert parts.part_of(x_end, 1, None, 10**6).content == (
        "l" * 2000 + " … [line cut: 2,003 characters in all; the file has it whole]\n"
    )


def test_a_cut_line_is_measured_as_cut() -> None:
    line = "l" * 5000 + "\n"
    shown = "l" * 2000 + parts.LINE_CUT.format(n=5000) + "\n"
    cost = len(json.dumps(shown)) - 2
    part = parts.part_of(line * 3, 1, None, 2 + 2 * cost)
    assert part.end_line == 2


def test_filled_puts_the_part_in_the_answer_within_the_default_budget() -> None:
    text = "".join(f"{i:05d}" + "x" * 95 + "\n" for i in range(1000))  # 101,000 characters
    answer = parts.filled(_Doc(), text, 1, None)
    room = parts.room_for(budget.size(_Doc()), None)
    expected = parts.part_of(text, 1, None, room)
    assert (answer.content, answer.start_line, answer.end_line) == (
        expected.content,
        1,
        expected.end_line,
    )
    assert (answer.total_lines, answer.next_offset) == (1000, expected.end_line + 1)
    assert answer.note is None
    assert budget.size(answer) <= budget.DEFAULT_CHARS
    assert expected.end_line < 1000


def test_filled_with_a_limit_may_take_up_to_the_maximum_budget() -> None:
    text = "".join(f"{i:05d}" + "x" * 95 + "\n" for i in range(1000))
    answer = parts.filled(_Doc(), text, 1, 1000)
    assert 40_000 < budget.size(answer) <= budget.MAX_CHARS
    assert answer.note is not None
    assert answer.note.startswith(f"cut at line {answer.end_line} of the 1000 asked for")


def test_filled_adds_a_parts_note_to_the_answers_note() -> None:
    text = "".join(f"{i:05d}" + "x" * 95 + "\n" for i in range(1000))
    answer = parts.filled(_Doc(note="renamed"), text, 1, 1000)
    assert answer.note is not None
    assert answer.note.startswith("renamed; cut at line ")


def test_filled_whole_holds_every_line_uncut() -> None:
    text = "# t\n" + "w" * 3000 + "\nend"
    answer = parts.filled(_Doc(next_offset=9, note="old"), text, 2, 1, whole=True)
    assert answer.content == text
    assert (answer.start_line, answer.end_line, answer.total_lines) == (1, 3, 3)
    assert (answer.next_offset, answer.note) == (None, None)


def test_an_unfilled_answer_holds_no_lines_from_its_offset() -> None:
    assert parts.unfilled(7) == {
        "content": "",
        "start_line": 7,
        "end_line": 6,
        "total_lines": 0,
        "next_offset": None,
    }
    answer = _Doc(**parts.unfilled(1))
    assert parts.filled(answer, "a\nb\n", 1, None).content == "a\nb\n"
