"""query/budget.py: the size every answer keeps, and how it is cut to keep it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from query import budget


class _Hit(BaseModel):
    text: str


class _Answer(BaseModel):
    hits: list[_Hit]
    next_offset: int | None = None
    note: str | None = None


def _answer(n: int, chars: int = 100, note: str | None = None) -> _Answer:
    return _Answer(hits=[_Hit(text=f"{i:03d}" + "x" * (chars - 3)) for i in range(n)], note=note)


def test_clip_keeps_a_text_up_to_the_limit_and_cuts_a_longer_one_with_the_mark() -> None:
    assert budget.clip("abcd", 4) == "abcd"
    assert budget.clip("abcde", 4) == "abcd…"
    assert budget.clip("x" * 5000, None) == "x" * 5000


def test_clip_cuts_at_field_chars_by_default() -> None:
    assert budget.FIELD_CHARS == 1_000
    assert budget.clip("y" * 1000) == "y" * 1000
    assert budget.clip("y" * 1001) == "y" * 1000 + "…"


def test_clip_values_clips_every_text_key_and_value_and_keeps_the_rest() -> None:
    value = {"k" * 6: ["v" * 6, 7, None, {"inner": "w" * 6}], "n": 1.5, 3: True}
    assert budget.clip_values(value, 4) == {
        "kkkk…": ["vvvv…", 7, None, {"inne…": "wwww…"}],
        "n": 1.5,
        "3": True,
    }


def test_clip_values_keeps_the_first_100_items_of_a_list_or_mapping() -> None:
    assert budget.clip_values(list(range(150))) == list(range(100))
    assert budget.clip_values(list(range(100))) == list(range(100))
    mapping = budget.clip_values({f"{i:03d}": i for i in range(150)})
    assert list(mapping) == [f"{i:03d}" for i in range(100)]


def test_clip_values_cuts_at_field_chars_by_default() -> None:
    assert budget.clip_values(["z" * 1001, "z" * 1000]) == ["z" * 1000 + "…", "z" * 1000]


def test_size_is_the_length_of_the_answers_json() -> None:
    answer = _answer(2)
    assert budget.size(answer) == len(answer.model_dump_json())


def test_default_arguments_get_the_default_budget_and_any_other_the_maximum() -> None:
    assert budget.limit_for(True) == budget.DEFAULT_CHARS == 40_000
    assert budget.limit_for(False) == budget.MAX_CHARS == 80_000


def test_a_page_that_fits_is_left_as_it_is() -> None:
    answer = _answer(5)
    limit = budget.size(answer)  # exactly at the limit still fits
    budget.fit_page(answer, "hits", 30, limit)
    assert (len(answer.hits), answer.next_offset, answer.note) == (5, None, None)


def test_the_default_limit_of_a_page_is_the_maximum() -> None:
    fits = _answer(70, chars=1000)  # about 71,000 characters
    budget.fit_page(fits, "hits", 0)
    assert len(fits.hits) == 70
    too_big = _answer(90, chars=1000)
    budget.fit_page(too_big, "hits", 0)
    assert len(too_big.hits) < 90
    assert budget.size(too_big) <= budget.MAX_CHARS


def test_a_page_too_big_keeps_the_most_hits_that_leave_room_for_the_note() -> None:
    # Room for exactly 6 hits and the note: 6 are kept, not 5.
    limit = budget.size(_answer(6)) + 200
    answer = _answer(10)
    budget.fit_page(answer, "hits", 30, limit)
    assert [h.text for h in answer.hits] == [h.text for h in _answer(6).hits]
    assert answer.next_offset == 36
    assert answer.note == (
        f"cut to 6 hits to keep the answer under {limit:,} characters; ask again with "
        "offset=36 for the rest"
    )
    assert budget.size(answer) <= limit


def test_a_page_one_character_short_of_room_for_the_note_drops_one_more_hit() -> None:
    limit = budget.size(_answer(6)) + 199
    answer = _answer(10)
    budget.fit_page(answer, "hits", 0, limit)
    assert (len(answer.hits), answer.next_offset) == (5, 5)


def test_a_page_always_keeps_its_first_hit_even_if_that_is_too_big() -> None:
    answer = _answer(3, chars=5000)
    budget.fit_page(answer, "hits", 7, 1000)
    assert len(answer.hits) == 1
    assert answer.next_offset == 8
    assert answer.note is not None
    assert answer.note.startswith("cut to 1 hit to keep the answer under 1,000 characters;")


def test_a_cut_is_added_to_the_note_the_answer_already_has() -> None:
    answer = _answer(10, note="reports: no index")
    limit = budget.size(_answer(3, note="reports: no index")) + 200
    budget.fit_page(answer, "hits", 0, limit)
    assert answer.note == (
        f"reports: no index; cut to 3 hits to keep the answer under {limit:,} characters; "
        "ask again with offset=3 for the rest"
    )


@pytest.mark.parametrize("n", [2, 11])
def test_a_cut_page_never_exceeds_its_limit(n: int) -> None:
    answer = _answer(n, chars=300)
    budget.fit_page(answer, "hits", 0, 700)
    assert budget.size(answer) <= 700
