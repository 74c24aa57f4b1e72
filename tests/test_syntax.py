"""query/syntax.py: the search box's query language, its refusals, its written-out form
and description, and the matcher, against plain references written here."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from query.args import MAX_QUERY_CHARS, check_query
from query.errors import TroveError
from query.syntax import (
    COLLECTIONS,
    FILTER_KEYS,
    Clause,
    Parsed,
    Term,
    holds_phrases,
    parse,
)

# The conftest's autouse fixtures (HOME in tmp_path, no thread left) hold for the whole
# test: sharing them between examples is what they are for.
BOUNDED = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def clause(*terms: str) -> Clause:
    """A clause of words, and of phrases written in quotes: clause("a", '"b c"')."""
    return Clause(tuple(Term(t.strip('"'), phrase=t.startswith('"')) for t in terms))


def read(*alternatives: Clause, **fields: object) -> Parsed:
    return Parsed(alternatives=alternatives, **fields)  # type: ignore[arg-type]


def refused(query: str, **kwargs: bool) -> TroveError:
    with pytest.raises(TroveError) as info:
        parse(query, **kwargs)
    assert info.value.code == "INVALID_QUERY"
    return info.value


# --------------------------------------------------------------------------- reading

READINGS = [
    ("klystron", read(clause("klystron"))),
    ("klystron arc", read(clause("klystron", "arc"))),
    ('"exact phrase"', read(clause('"exact phrase"'))),
    ('  "exact \t\n phrase "  ', read(clause('"exact phrase"'))),
    ("\u201ccurly quotes\u201d", read(clause('"curly quotes"'))),
    ('"either\u201d way\u201c round"', read(clause('"either"', "way", '"round"'))),
    ('"exact phrase" proxy', read(clause('"exact phrase"', "proxy"))),
    ("a -word", read(clause("a"), excluded_words=("word",))),
    ('a -"left out"', read(clause("a"), excluded_phrases=("left out",))),
    ("a -b -B -b", read(clause("a"), excluded_words=("b",))),
    ('a -"x y" -"X  Y"', read(clause("a"), excluded_phrases=("x y",))),
    ("-OR a", read(clause("a"), excluded_words=("OR",))),
    ("a OR b", read(clause("a"), clause("b"))),
    ('"a b" OR c', read(clause('"a b"'), clause("c"))),
    ('a b OR "c d" e OR f', read(clause("a", "b"), clause('"c d"', "e"), clause("f"))),
    ("a or b", read(clause("a", "or", "b"))),
    ("a Or b AND c NOT d", read(clause("a", "Or", "b", "AND", "c", "NOT", "d"))),
    ('"OR" a', read(clause('"OR"', "a"))),
    ("in:reports x", read(clause("x"), collections=frozenset({"reports"}))),
    ("in:reports in:elog x", read(clause("x"), collections=frozenset({"reports", "elog"}))),
    ("in:reports,elog x", read(clause("x"), collections=frozenset({"reports", "elog"}))),
    ('in:"reports, elog" x', read(clause("x"), collections=frozenset({"reports", "elog"}))),
    ("IN:Reports x in:ELOG", read(clause("x"), collections=frozenset({"reports", "elog"}))),
    ("in:reports in:reports x", read(clause("x"), collections=frozenset({"reports"}))),
    ("command:build x", read(clause("x"), command="build")),
    ('command:"my tool" x', read(clause("x"), command="my tool")),
    ("command:a x command:a", read(clause("x"), command="a")),
    ("since:2025-10-06 x", read(clause("x"), since=date(2025, 10, 6))),
    ("since:2025-10 x", read(clause("x"), since=date(2025, 10, 1))),
    ("since:2025 x", read(clause("x"), since=date(2025, 1, 1))),
    ("until:2025-10-06 x", read(clause("x"), until=date(2025, 10, 6))),
    ("until:2025-10 x", read(clause("x"), until=date(2025, 10, 31))),
    ("until:2024-02 x", read(clause("x"), until=date(2024, 2, 29))),
    ("until:2025-02 x", read(clause("x"), until=date(2025, 2, 28))),
    ("until:2025 x", read(clause("x"), until=date(2025, 12, 31))),
    ('since:"2025-10" x', read(clause("x"), since=date(2025, 10, 1))),
    (
        "since:2025-10 until:2025-10 x",
        read(clause("x"), since=date(2025, 10, 1), until=date(2025, 10, 31)),
    ),
    (
        "since:2025-10-06 until:2025-10-06 x",
        read(clause("x"), since=date(2025, 10, 6), until=date(2025, 10, 6)),
    ),
    ("since:2025-10 since:2025-10-01 x", read(clause("x"), since=date(2025, 10, 1))),
    ('category:"Beam loss" x', read(clause("x"), category="Beam loss")),
    ('category:"  Beam   loss " x', read(clause("x"), category="Beam loss")),
    ("category:Beam x category:BEAM", read(clause("x"), category="Beam")),
    ("system:RF domain:Linac x", read(clause("x"), system="RF", domain="Linac")),
    ("Category:Info x", read(clause("x"), category="Info")),
    ("Ünïcödé STRASSE straße", read(clause("Ünïcödé", "STRASSE", "straße"))),
    ("東京 加速器", read(clause("東京", "加速器"))),
    ('"東京 加速器" -ビーム', read(clause('"東京 加速器"'), excluded_words=("ビーム",))),
    ("a\u3000b", read(clause("a", "b"))),
    ("e-mail x-ray -pre-amp", read(clause("e-mail", "x-ray"), excluded_words=("pre-amp",))),
    ("--force -- x", read(clause("--force", "--", "x"))),
    ("foo:bar http://psi.ch/x", read(clause("foo:bar", "http://psi.ch/x"))),
    ("-foo:bar x", read(clause("x"), excluded_words=("foo:bar",))),
    ('"a b"c', read(clause('"a b"', "c"))),
    ('x"a b"', read(clause("x", '"a b"'))),
    ('"a"-b', read(clause('"a"'), excluded_words=("b",))),
    ('"a"in:elog', read(clause('"a"'), collections=frozenset({"elog"}))),
    ('in:elog"a"', read(clause('"a"'), collections=frozenset({"elog"}))),
    ('a OR"b"', read(clause("a"), clause('"b"'))),
    (
        'a in:elog OR -c b since:2025 OR "d e" -"f g"',
        read(
            clause("a"),
            clause("b"),
            clause('"d e"'),
            excluded_words=("c",),
            excluded_phrases=("f g",),
            collections=frozenset({"elog"}),
            since=date(2025, 1, 1),
        ),
    ),
]


@pytest.mark.parametrize(("query", "expected"), READINGS, ids=[q for q, _ in READINGS])
def test_each_operator_is_read_as_documented(query: str, expected: Parsed) -> None:
    assert parse(query) == expected


def test_a_query_of_filters_or_exclusions_alone_is_read_when_words_are_not_required() -> None:
    assert parse("in:elog category:Info", require_words=False) == read(
        collections=frozenset({"elog"}), category="Info"
    )
    assert parse("-a", require_words=False) == read(excluded_words=("a",))
    assert parse("", require_words=False) == read()


def test_words_text_is_the_words_and_phrases_as_written() -> None:
    parsed = parse('Beam "Loss  at" -x in:elog SATUN01 OR rf')
    assert [c.words_text() for c in parsed.alternatives] == ["Beam Loss at SATUN01", "rf"]
    assert parsed.alternatives[0].words == ("Beam", "SATUN01")
    assert parsed.alternatives[0].phrases == ("Loss at",)
    assert parsed.words_text() == "Beam Loss at SATUN01 rf"


# --------------------------------------------------------------------------- refusals

MALFORMED = [
    # (query, the term named, its column, what the message says)
    ("since:2025-13-01 a", "since:2025-13-01", 1, "month must be in 1..12"),
    ("a since:2025-02-30", "since:2025-02-30", 3, "day is out of range"),
    ("a since:2025-00", "since:2025-00", 3, "month must be in 1..12"),
    ("a until:0000", "until:0000", 3, "year 0 is out of range"),
    ("a since:yesterday", "since:yesterday", 3, "write since:YYYY-MM-DD"),
    ("a since:2025-1-01", "since:2025-1-01", 3, "not a date"),
    ("a since:2025/10/01", "since:2025/10/01", 3, "not a date"),
    ("a until:20251001", "until:20251001", 3, "write until:YYYY-MM-DD"),
    ("a since:\uff12\uff10\uff12\uff15", "since:\uff12\uff10\uff12\uff15", 3, "not a date"),
    ("a until:2025-10-01T08:00", "until:2025-10-01T08:00", 3, "not a date"),
    ('"abc', '"abc', 1, "the quote is not closed"),
    ('a "b c', '"b c', 3, "the quote is not closed"),
    ('a -"b c', '-"b c', 3, "the quote is not closed"),
    ('a category:"Beam loss', 'category:"Beam loss', 3, "the quote is not closed"),
    ("a b \u201cc", "\u201cc", 5, "the quote is not closed"),
    ('""', '""', 1, "an empty phrase"),
    ('a "  "', '"  "', 3, "an empty phrase"),
    ('-"" a', '-""', 1, "an empty phrase"),
    ("-a", "-a", 1, "nothing to search for, only what to leave out; add a word"),
    ('-a -"b c"', "-a", 1, "nothing to search for"),
    ('-"b c" -a', '-"b c"', 1, "nothing to search for"),
    ("  -a", "-a", 3, "nothing to search for"),
    ("in:elog", "in:elog", 1, "nothing to search for: filters only narrow a search"),
    ("since:2025 -a", "-a", 12, "nothing to search for"),
    ("in:nowhere a", "in:nowhere", 1, "the collections are reports, commands, conversations"),
    ("a in:reports,nowhere", "in:reports,nowhere", 3, "unknown collection 'nowhere'"),
    ("a in:", "in:", 3, "in: has no value; write in:reports,"),
    ("a in:reports,", "in:reports,", 3, "an empty collection name"),
    ("a in:,elog", "in:,elog", 3, "an empty collection name"),
    ('a in:"  "', 'in:"  "', 3, "in: has no value"),
    ("command: a", "command:", 1, "command: has no value; write command:NAME"),
    ('a command:""', 'command:""', 3, "command: has no value"),
    ("a since:", "since:", 3, "since: has no value"),
    ('a until:""', 'until:""', 3, "until: has no value"),
    ("a category:", "category:", 3, "category: has no value"),
    ('a system:"  "', 'system:"  "', 3, "system: has no value"),
    ("a domain:", "domain:", 3, "domain: has no value"),
    ("a since:2025-10 until:2025-09", "until:2025-09", 17, "2025-09-30 is before since: 2025-10"),
    ("a until:2024 since:2025", "until:2024", 3, "until: 2024-12-31 is before"),
    ("a command:x command:y", "command:y", 13, "given twice with different values (also"),
    # Followed by more: the message names the term alone.
    ("a in:reports,,elog b", "in:reports,,elog", 3, "an empty collection name"),
    (
        "a command:x command:y b",
        "command:y",
        13,
        "given twice with different values (also 'command:x' at column 3); give one",
    ),
    ("a since:2025 since:2024", "since:2024", 14, "'since:2025' at column 3"),
    ("a until:2025-01 until:2025-02", "until:2025-02", 17, "given twice"),
    ("a category:RF category:Beam", "category:Beam", 15, "given twice"),
    ("OR a", "OR", 1, "OR has no word or phrase before it"),
    ("OR", "OR", 1, "OR has no word or phrase before it"),
    ("-x OR a", "OR", 4, "OR has no word or phrase before it"),
    ("a OR", "OR", 3, "OR has no word or phrase after it"),
    ("a OR -x", "OR", 3, "OR has no word or phrase after it"),
    ("a OR in:elog", "OR", 3, "OR has no word or phrase after it"),
    ("a OR OR b", "OR", 6, "OR follows the OR at column 3"),
    ("a OR -x OR b", "OR", 9, "OR follows the OR at column 3"),
    ("- a", "-", 1, 'write -word or -"a phrase"'),
    ("a -", "-", 3, "leave out what?"),
    ("a -in:elog", "-in:elog", 3, "a filter cannot be left out: give the in: you want"),
    ("a -Since:2025", "-Since:2025", 3, "a filter cannot be left out"),
    ("a command:../etc", "command:../etc", 3, "is not a valid name"),
    ("a command:x:y", "command:x:y", 3, "is not a valid name"),
    ("a command:a*b", "command:a*b", 3, "is not a valid name"),
]


@pytest.mark.parametrize(
    ("query", "term", "column", "says"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_a_malformed_query_is_refused_naming_the_term_and_its_column(
    query: str, term: str, column: int, says: str
) -> None:
    message = refused(query).message
    assert message.startswith(f"{term!r} at column {column}: "), message
    assert says in message


def test_an_empty_query_is_refused_without_a_term() -> None:
    assert refused("  ").message == 'the query is empty; add a word or "a phrase" to search for'


def test_a_long_term_is_cut_in_the_message() -> None:
    message = refused('a "' + "x" * 100).message
    assert message.startswith(repr('"' + "x" * 38 + "…") + " at column 3: ")


def test_refusals_are_input_errors() -> None:
    assert refused("-a").is_input_error


# --------------------------------------------------------------------------- bounded time

# Each is run through the parser alone (longer than check_query allows) and as the
# longest query check_query lets through; a parser that backtracked or rescanned would
# take minutes here, past the suite's timeout, rather than milliseconds.
MANY_OPERATORS = [
    ("-a " * 10_000, "nothing to search for"),
    ('"' * 5_000, "an empty phrase"),
    ('"' * 5_001, "an empty phrase"),
    ('"a' * 5_001, "the quote is not closed"),
    ("OR " * 3_000, "no word or phrase before it"),
    ("a OR " * 3_000, "no word or phrase after it"),
    ("a " + "OR a " * 3_000 + "-", "leave out what?"),
    ("in:elog " * 3_000, "nothing to search for"),
    ("a " + "since:2025 " * 3_000 + "since:2024", "given twice"),
    ("x -" + "-" * 10_000 + " :" * 10_000, None),
    ('a "' + "b " * 10_000 + '"', None),
    ("a " + '"b" ' * 5_000, None),
    ("a " + "-b " * 10_000, None),
    ("a OR " * 3_000 + "a", None),
    ("in:reports,elog " * 3_000 + "a", None),
]


@pytest.mark.parametrize(("query", "says"), MANY_OPERATORS, ids=range(len(MANY_OPERATORS)))
def test_thousands_of_operators_are_read_in_one_pass(query: str, says: str | None) -> None:
    if says is None:
        assert parse(query).alternatives
    else:
        assert says in refused(query).message
    try:
        parse(check_query(query[:MAX_QUERY_CHARS]))
    except TroveError as error:
        assert error.code == "INVALID_QUERY"


def test_the_matcher_is_not_slowed_by_a_hostile_text() -> None:
    parsed = parse('x -"a a a a b" -' + "a" * 500)
    assert not parsed.excludes(("a " * 20_000 + "\t" * 20_000) * 3)
    assert parsed.excludes("a " * 20_000 + "a a b")


# --------------------------------------------------------------------------- describe, to_text


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("klystron arc", None),
        ("a or b", None),
        (
            '"exact phrase" proxy -pac in:reports in:elog since:2025-10',
            'read as: "exact phrase" and proxy, without pac, in reports and elog, since 2025-10-01',
        ),
        ('a b OR "c d"', 'read as: (a and b) or "c d"'),
        ('a -x -y -"z w"', 'read as: a, without x, y and "z w"'),
        ("a in:elog,commands,reports", "read as: a, in reports, commands and elog"),
        (
            'a command:build until:2025 category:"Beam loss" system:RF domain:Linac',
            (
                'read as: a, command build, until 2025-12-31, category "Beam loss", '
                "system RF, domain Linac"
            ),
        ),
    ],
)
def test_describe_says_how_a_query_was_read(query: str, note: str | None) -> None:
    assert parse(query).describe() == note


def test_describe_without_words() -> None:
    parsed = parse("in:elog -x", require_words=False)
    assert parsed.describe() == "read as: without x, in elog"


def test_to_text_writes_a_query_in_full() -> None:
    parsed = parse('since:2025-10 b "c  d" OR e -f -"g h" in:elog,reports category:"Beam loss"')
    assert parsed.to_text() == (
        'b "c d" OR e -f -"g h" in:reports in:elog since:2025-10-01 category:"Beam loss"'
    )
    panel = replace(parsed, collections=frozenset({"commands"}), until=date(2025, 12, 31))
    assert parse(panel.to_text()) == panel


# --------------------------------------------------------------------------- properties

PIECES = [
    "a", "Bß", "東京", "e-mail", "--x", "foo:bar", "OR", "or", "-", "-a", "--", '"', '"a b"',
    "\u201c", "\u201d", ":", ",", "in:", "in:elog", "in:reports,elog", "in:nowhere",
    "command:", "command:x", "command:y", "command:../x", "since:2025", "since:2025-10",
    "until:2025-02-29", "until:2024-02-29", "since:x", "category:", 'category:"B l"',
    "system:RF", "domain:Linac", "-in:elog", "-\"", " ", "\t", "\u3000", "\n",
]  # fmt: skip
soups = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12).map("".join)
spaced_soups = st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join)


@BOUNDED
@given(st.one_of(st.text(), soups, spaced_soups), st.booleans())
@example('a"b"c OR -"d', True)
def test_parse_answers_any_text_or_refuses_it_with_invalid_query(
    query: str, require_words: bool
) -> None:
    try:
        parse(query, require_words=require_words)
    except TroveError as error:
        assert error.code == "INVALID_QUERY"
        assert error.message


@BOUNDED
@given(st.one_of(soups, spaced_soups), st.booleans())
def test_a_query_read_reads_back_from_its_text(query: str, require_words: bool) -> None:
    try:
        parsed = parse(query, require_words=require_words)
    except TroveError:
        return
    assert parse(parsed.to_text(), require_words=require_words) == parsed


OPERATOR_PIECES = ('"', "\u201c", "\u201d", "OR", "-", ":")


@BOUNDED
@given(st.one_of(soups, spaced_soups))
def test_describe_speaks_whenever_an_operator_was_used(query: str) -> None:
    try:
        parsed = parse(query)
    except TroveError:
        return
    note = parsed.describe()
    if note is None:
        assert not parsed.uses_operators
        # Plain words: at most words that only look like operators ("e-mail", "foo:bar").
        assert all(len(c.terms) == len(c.words) for c in parsed.alternatives)
    else:
        assert note.startswith("read as: ") and len(note) > len("read as: ")
    if not any(piece in query for piece in OPERATOR_PIECES):
        assert note is None


# Words, phrases and values as parse reads them, drawn directly.
letters = st.sampled_from(list("abcinXYZßẞİıσςΣ09_-:.+東京ビーム한é"))
runs = st.text(letters, min_size=1, max_size=6)


def is_word(text: str) -> bool:
    key, colon, _ = text.partition(":")
    return (
        text != "OR"
        and (not text.startswith("-") or text.startswith("--"))
        and not (colon and key.lower() in FILTER_KEYS)
    )


words = runs.filter(is_word)
excluded = runs.filter(lambda w: not w.startswith("-") and (w == "OR" or is_word(w)))
phrases = st.lists(runs, min_size=1, max_size=3).map(" ".join)
terms = st.one_of(words.map(Term), phrases.map(lambda p: Term(p, phrase=True)))
clauses = st.lists(terms, min_size=1, max_size=4).map(lambda ts: Clause(tuple(ts)))
values = st.lists(st.text(st.sampled_from(list("abRF東-.")), min_size=1), min_size=1).map(" ".join)


def once(items: list[str]) -> tuple[str, ...]:
    """The items, each once (compared casefolded), as parse keeps exclusions."""
    kept: dict[str, str] = {}
    for item in items:
        kept.setdefault(item.casefold(), item)
    return tuple(kept.values())


@st.composite
def parsed_queries(draw: st.DrawFn) -> Parsed:
    since, until = sorted(draw(st.lists(st.dates(), min_size=2, max_size=2)))
    optional = st.booleans()
    return Parsed(
        alternatives=tuple(draw(st.lists(clauses, min_size=1, max_size=3))),
        excluded_words=once(draw(st.lists(excluded, max_size=3))),
        excluded_phrases=once(draw(st.lists(phrases, max_size=2))),
        collections=draw(st.none() | st.frozensets(st.sampled_from(COLLECTIONS), min_size=1)),
        command=draw(
            st.none() | st.from_regex(r"[a-z][a-z0-9_-]{0,8}( [a-z0-9]+)?", fullmatch=True)
        ),
        since=since if draw(optional) else None,
        until=until if draw(optional) else None,
        category=draw(st.none() | values),
        system=draw(st.none() | values),
        domain=draw(st.none() | values),
    )


@BOUNDED
@given(parsed_queries())
def test_to_text_reads_back_to_the_same_query(parsed: Parsed) -> None:
    assert parse(parsed.to_text()) == parsed
    assert (parsed.describe() is None) == (not parsed.uses_operators)


# --------------------------------------------------------------------------- the matcher

CJK_BLOCKS = [(0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF)]  # fmt: skip


def spaced_letter(char: str) -> bool:
    return char.isalnum() and not any(low <= ord(char) <= high for low, high in CJK_BLOCKS)


def holds_word(text: str, word: str) -> bool:
    """The reference: every place the casefolded word stands in the casefolded text, by
    str.find, with no letter or digit of a spaced script on both sides of either edge."""
    text, word = text.casefold(), word.casefold()
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        joined_before = at > 0 and spaced_letter(text[at - 1]) and spaced_letter(word[0])
        joined_after = end < len(text) and spaced_letter(text[end]) and spaced_letter(word[-1])
        if not joined_before and not joined_after:
            return True
        at = text.find(word, at + 1)
    return False


def holds_phrase(text: str, phrase: str) -> bool:
    """The reference: the phrase in the text, both casefolded, every whitespace run one space."""
    return " ".join(phrase.casefold().split()) in " ".join(text.casefold().split())


text_chars = st.sampled_from(list("abAB ßSs_-.:+ \t\n\u3000東京ビ한İiσΣς09"))
texts = st.text(text_chars, max_size=40)
needles = st.text(text_chars, min_size=1, max_size=4)


@BOUNDED
@given(
    texts,
    st.lists(needles.filter(lambda w: w.split() == [w]), max_size=3),
    st.lists(needles.filter(str.strip), max_size=2),
)
@example("pac_2 pacman", ["pac"], [])
@example("東京都", ["東京"], [])
@example("STRASSE", ["straße"], [])
@example("x-ray", ["-ray"], [])
@example("Beam\n loss", [], ["beam  LOSS"])
def test_excludes_agrees_with_the_reference(
    text: str, words: list[str], phrases: list[str]
) -> None:
    parsed = Parsed(
        alternatives=(clause("x"),), excluded_words=tuple(words), excluded_phrases=tuple(phrases)
    )
    expected = any(holds_word(text, w) for w in words) or any(
        holds_phrase(text, p) for p in phrases
    )
    assert parsed.excludes(text) == expected


@BOUNDED
@given(texts, st.lists(needles.filter(str.strip), max_size=3))
def test_holds_phrases_agrees_with_the_reference(text: str, phrases: list[str]) -> None:
    required = Clause(tuple(Term(p, phrase=True) for p in phrases))
    assert holds_phrases(required, text) == all(holds_phrase(text, p) for p in phrases)


@pytest.mark.parametrize(
    ("text", "admitted"),
    [
        ("The beam loss at SATUN01", True),
        ("beam\n  LOSS, then arc", False),  # arc is left out
        ("Beam loss archive", True),  # arc is not a whole word there
        ("an RF  trip", True),  # the second alternative's phrase
        ("beam lost, RF-trip", False),  # neither phrase
        ("rf tripped", True),  # a phrase is held as a substring, as the exact tier finds it
    ],
)
def test_admits_a_document_by_its_exclusions_and_some_alternatives_phrases(
    text: str, admitted: bool
) -> None:
    assert parse('x "beam loss" OR "rf trip" -arc').admits(text) == admitted
    assert parse("klystron OR modulator").admits("no phrase is asked for")
