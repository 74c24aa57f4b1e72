"""query/citations.py: the line of a match and the markdown heading above it."""

from __future__ import annotations

from query.citations import heading_above, heading_of_line, line_of

DOC = "intro\n# One\ntext one\n## Two ##\ntext two\n"


def test_line_of_counts_the_line_ends_before_a_position() -> None:
    assert line_of(DOC, 0) == 1
    assert line_of(DOC, DOC.index("\n")) == 1  # a line's own end is on it
    assert line_of(DOC, DOC.index("text two")) == 5
    assert line_of("\nsecond", 1) == 2


def test_the_heading_above_is_the_nearest_one_at_or_above_the_position() -> None:
    assert heading_above(DOC, 0) is None
    assert heading_above(DOC, DOC.index("One")) == "One"  # a heading's own line
    assert heading_above(DOC, DOC.index("text one")) == "One"
    assert heading_above(DOC, DOC.index("text two")) == "Two"  # closing #'s dropped


def test_a_heading_on_a_later_line_is_not_above() -> None:
    assert heading_above("text\n# Later", 0) is None
    assert heading_above("\n# Later", 0) is None


def test_a_heading_on_the_last_line_without_a_line_end_counts() -> None:
    text = "text\n# Last"
    assert heading_above(text, len(text) - 1) == "Last"


def test_lines_inside_a_fence_are_not_headings_and_a_fence_closes_with_its_own_mark() -> None:
    text = "# Real\n```\n# in code\n~~~\n# still code\n```\nafter\n"
    assert heading_above(text, text.index("in code")) == "Real"
    assert heading_above(text, text.index("still code")) == "Real"
    assert heading_above(text, text.index("after")) == "Real"
    tilde = "~~~\n# code\n~~~\n# Out\ntext"
    assert heading_above(tilde, tilde.index("text")) == "Out"


def test_an_empty_heading_is_none() -> None:
    assert heading_above("#\ntext", 3) is None
    assert heading_above("#   \ntext", 6) is None


def test_a_long_heading_is_cut_at_200_characters_with_a_mark() -> None:
    exact = "# " + "h" * 200 + "\ntext"
    assert heading_above(exact, exact.index("text")) == "h" * 200
    longer = "# " + "h" * 201 + "\ntext"
    assert heading_above(longer, longer.index("text")) == "h" * 200 + "…"


def test_the_heading_of_a_line_is_the_one_at_or_above_it() -> None:
    assert heading_of_line(DOC, 1) is None
    assert heading_of_line(DOC, 2) == "One"
    assert heading_of_line(DOC, 3) == "One"
    assert heading_of_line(DOC, 4) == "Two"
    assert heading_of_line("# A\n# B\n# C", 2) == "B"


def test_a_line_past_the_end_takes_the_heading_of_the_last_line() -> None:
    assert heading_of_line("# A\ntext\n# B", 10) == "B"
    assert heading_of_line("# A\ntext", 10) == "A"


def test_an_empty_first_line_has_no_heading_above_it() -> None:
    assert heading_of_line("\n# A\ntext", 1) is None
    assert heading_of_line("\n# A\ntext", 2) == "A"
    assert heading_of_line("\n# A\ntext", 3) == "A"


def test_an_empty_line_takes_the_heading_above_not_the_one_below() -> None:
    assert heading_of_line("# A\n\n# C", 2) == "A"
    assert heading_of_line("# A\n\n# C", 3) == "C"
