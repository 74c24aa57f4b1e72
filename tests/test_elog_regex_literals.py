"""query/elog/regex_literals.py: the literals a regex cannot match without.

Narrowing by a literal the regex does not need would lose matches, so the property
checked here is that every string the ``regex`` package matches holds what
``required_literals`` asks for. The strings come from random patterns built with a
sampler of strings that match them, and from random text. Last, the worker threads
that match a regex over the candidates (query/elog/regex_search.py) find what one loop
does, whatever the number of candidates and of cores.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import regex

from query.elog.regex_literals import Lit, Need, required_literals

FLAGS = regex.IGNORECASE | regex.MULTILINE


def holds(need: Need, text: str) -> bool:
    """Whether ``text`` has what ``need`` asks for, in any case (a literal with
    ``starts``/``ends`` at a line's start/end)."""
    if need is None:
        return True
    if isinstance(need, Lit):
        anchored = ("^" if need.starts else "") + regex.escape(need.text)
        anchored += "$" if need.ends else ""
        return regex.search(anchored, text, FLAGS) is not None
    kind, parts = need
    found = [holds(part, text) for part in parts]
    return any(found) if kind == "or" else all(found)


# --------------------------------------------------------------------------- fixed cases


@pytest.mark.parametrize(
    ("pattern", "needed"),
    [
        # Runs of literal characters, cut by anything else.
        ("beam", Lit("beam")),
        (r"5\.8 GeV", Lit("5.8 GeV")),
        ("5[.]8", Lit("5.8")),  # a class of one character is that character
        (r"a\-b\:c\ d", Lit("a-b:c d")),
        (r"\x41\u00e9B", Lit("AéB")),
        (r"line\nnext", Lit("line\nnext")),
        (r"S\d\dCB", ("and", [Lit("S"), Lit("CB")])),
        (r"gap\w*scan", ("and", [Lit("gap"), Lit("scan")])),
        ("[ab]eam", Lit("eam")),
        ("[^b]eam", Lit("eam")),
        # Quantifiers: at least once keeps the item, else it is optional.
        (r"x\d{0,3}y", ("and", [Lit("x"), Lit("y")])),
        ("ab{0,3}c", ("and", [Lit("a"), Lit("c")])),
        ("ab{1,3}c", ("and", [Lit("a"), Lit("b"), Lit("c")])),
        ("ab{2}c", ("and", [Lit("a"), Lit("b"), Lit("c")])),
        ("(beam)+ line", ("and", [Lit("beam"), Lit(" line")])),
        ("(beam)*line", Lit("line")),
        ("(beam)?line", Lit("line")),
        ("(?:beam )?line", Lit("line")),
        ("beam+?line", ("and", [Lit("bea"), Lit("m"), Lit("line")])),
        ("beam++line", ("and", [Lit("bea"), Lit("m"), Lit("line")])),
        # Alternation, nested groups.
        ("RF|LLRF|klystron", ("or", [Lit("RF"), Lit("LLRF"), Lit("klystron")])),
        ("RF|", None),
        ("RF|.", None),
        (
            "(RF|LLRF) (trip|fault)",
            (
                "and",
                [("or", [Lit("RF"), Lit("LLRF")]), Lit(" "), ("or", [Lit("trip"), Lit("fault")])],
            ),
        ),
        ("((ab|cd)e)+f", ("and", [("and", [("or", [Lit("ab"), Lit("cd")]), Lit("e")]), Lit("f")])),
        ("(?:ab)(?:cd)e", Lit("abcde")),  # a plain (?:...) joins the run around it
        ("(?:a|b)c", ("and", [("or", [Lit("a"), Lit("b")]), Lit("c")])),
        ("(?>ab)c", ("and", [Lit("ab"), Lit("c")])),
        ("(?P<name>beam)(?<other>line)", ("and", [Lit("beam"), Lit("line")])),
        # Anchors.
        ("^beam", Lit("beam", starts=True)),
        (r"\Abeam", Lit("beam", starts=True)),
        ("beam$", Lit("beam", ends=True)),
        (r"beam\Z", Lit("beam", ends=True)),
        ("^beam$", Lit("beam", starts=True, ends=True)),
        (r"\bbeam\b", Lit("beam")),
        # Inline flags, comments, lookarounds, backreferences, conditionals.
        ("(?i)beam", Lit("beam")),
        ("(?ms)beam.*line", ("and", [Lit("beam"), Lit("line")])),
        ("beam(?i)line", Lit("beamline")),
        ("(?i:beam)line", ("and", [Lit("beam"), Lit("line")])),
        ("(?-i:beam)", Lit("beam")),
        ("bea(?#a comment)m", Lit("beam")),
        ("beam(?=line)", Lit("beam")),
        ("beam(?!line)x", ("and", [Lit("beam"), Lit("x")])),
        ("(?<=beam)line", Lit("line")),
        ("(?<!beam)line", Lit("line")),
        ("(?P<n>ab)(?P=n)c", ("and", [Lit("ab"), Lit("c")])),
        ("(?P<n>a)?(?(n)b|c)d", Lit("d")),
        # Not read: nothing is required.
        ("(?x)b e a m", None),  # verbose: whitespace means nothing
        ("(?:foo){e<=1}", None),  # fuzzy matching
        ("a{,}b", None),
        (r"(a)\1", None),  # backreference or octal: not read
        (r"\0", None),
        (r"\p{L}eam", None),
        (r"\N{MICRO SIGN}m", None),
        (r"\Gbeam", None),
        ("[[:alpha:]]eam", None),
        ("[a--b]eam", None),
        ("(?V1)beam", None),
        ("(?|a|b)", None),
        ("(?R)", None),
        # Invalid: nothing is required (the search reports INVALID_QUERY before).
        ("(ab", None),
        ("ab)", None),
        ("[ab", None),
        ("*a", None),
        ("a**", None),
        ("a{3,2}", None),
        ("a\\", None),
        ("(?", None),
        ("(?<n>a", None),
        ("(?P=)", None),
        ("^*", None),
        ("", None),
    ],
)
def test_a_regex_requires_exactly_the_literals_it_cannot_match_without(
    pattern: str, needed: Need
) -> None:
    assert required_literals(pattern) == needed


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"5\.8 GeV", "the beam at 5.8 gev today"),
        ("RF|LLRF", "an llrf fault"),
        (r"x\d{0,3}y", "xy"),
        ("((ab|cd)e)+f", "cdeabef"),
        ("(beam)?line", "line"),
        ("(?i)BEAM", "beam"),
        ("^Re: RF", "first line\nre: rf trip"),
        ("trip$", "rf trip\nnext line"),
        ("ſtatus|zz", "Status"),  # long s matches s in any case
        (r"\bmm\b", "35 mm² flange"),
        ("K|zz", "\u212a"),  # the Kelvin sign matches k
    ],
)
def test_every_match_holds_the_required_literals(pattern: str, text: str) -> None:
    assert regex.search(pattern, text, FLAGS) is not None
    assert holds(required_literals(pattern), text)


# --------------------------------------------------------------------------- random patterns


@dataclass
class Node:
    """A random pattern, and a way to make strings it matches."""

    pattern: str
    sample: Callable[[random.Random], str]


ALPHABET = "abAB -:.éÉ"
ZERO_WIDTH = ["(?#note)", r"\b", r"\B", "^", "$", "(?=[ab])", "(?!zz)", "(?<=a)", "(?<!b)"]
LETTERS = "abAB"
_SPECIAL = set(".^$*+?{}[]\\|()")


def char_node(rng: random.Random) -> Node:
    c = rng.choice(ALPHABET)
    shown = "\\" + c if c in _SPECIAL else c
    return Node(shown, lambda r: r.choice([c, c.swapcase()]))


def class_node(rng: random.Random) -> Node:
    choices: list[tuple[str, Callable[[random.Random], str]]] = [
        ("[ab]", lambda r: r.choice("abAB")),
        ("[^a]", lambda r: r.choice("bB -:é")),
        ("[.]", lambda r: "."),
        ("[a-z]", lambda r: r.choice(string.ascii_lowercase)),
        (r"\d", lambda r: r.choice(string.digits)),
        (r"\w", lambda r: r.choice("abAB09_é")),
        (r"\s", lambda r: " "),
        (".", lambda r: r.choice(ALPHABET)),
    ]
    shown, sample = rng.choice(choices)
    return Node(shown, sample)


def quantified(rng: random.Random, node: Node) -> Node:
    low, high, shown = rng.choice(
        [(0, 3, "*"), (1, 3, "+"), (0, 1, "?"), (2, 2, "{2}"), (0, 3, "{0,3}"), (1, 3, "{1,}")]
    )
    shown += rng.choice(["", "", "?"])  # lazy

    def sample(r: random.Random) -> str:
        return "".join(node.sample(r) for _ in range(r.randint(low, high)))

    return Node(node.pattern + shown, sample)


def sequence(rng: random.Random, depth: int) -> Node:
    parts: list[Node] = []
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.15 and depth < 3:
            inner = alternation(rng, depth + 1)
            opening = rng.choice(["(", "(?:", f"(?P<g{rng.randint(0, 10**6)}>", "(?i:"])
            node = Node(opening + inner.pattern + ")", inner.sample)
        elif roll < 0.35:
            node = class_node(rng)
        else:
            node = char_node(rng)
        if rng.random() < 0.3:
            node = quantified(rng, node)
        parts.append(node)
        if rng.random() < 0.1:  # zero-width: the samples that happen to fit match
            parts.append(Node(rng.choice(ZERO_WIDTH), lambda r: ""))

    def sample(r: random.Random) -> str:
        return "".join(p.sample(r) for p in parts)

    return Node("".join(p.pattern for p in parts), sample)


def alternation(rng: random.Random, depth: int) -> Node:
    branches = [sequence(rng, depth) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return Node("|".join(b.pattern for b in branches), lambda r: r.choice(branches).sample(r))


def random_pattern(rng: random.Random) -> Node:
    node = alternation(rng, 0)
    start, end = rng.choice(["", "", "^", r"\A", "(?i)"]), rng.choice(["", "", "$", r"\Z"])
    if start in ("^", r"\A") or end:
        node = Node(f"(?:{node.pattern})", node.sample)
    return Node(start + node.pattern + end, node.sample)


def surrounded(rng: random.Random, text: str) -> str:
    """The text, maybe with random text (and line ends) before and after it."""
    before = "".join(rng.choice(ALPHABET + "\n") for _ in range(rng.randint(0, 4)))
    after = "".join(rng.choice(ALPHABET + "\n") for _ in range(rng.randint(0, 4)))
    return rng.choice(["", before]) + text + rng.choice(["", after])


def test_every_string_a_random_regex_matches_holds_what_it_requires() -> None:
    rng = random.Random(20251124)
    patterns = narrowed = matched = 0
    for _ in range(3000):
        node = random_pattern(rng)
        compiled = regex.compile(node.pattern, FLAGS)
        need = required_literals(node.pattern)
        patterns += 1
        narrowed += need is not None
        texts = [surrounded(rng, node.sample(rng)) for _ in range(8)]
        texts += ["".join(rng.choice(ALPHABET + "\n") for _ in range(8)) for _ in range(8)]
        for text in texts:
            if compiled.search(text) is not None:
                matched += 1
                assert holds(need, text), (node.pattern, need, text)
    # The check is worth something only if most patterns narrow and most samples match.
    assert narrowed > patterns // 2
    assert matched > patterns * 4


@pytest.mark.parametrize("seed", range(5))
def test_the_parser_never_fails_on_arbitrary_text(seed: int) -> None:
    rng = random.Random(seed)
    pieces = list("ab()[]{}|*+?.^$\\-:,0123456789<>=!#PiLmsux") + ["(?", "(?:", "\\d", "{2,3}"]
    for _ in range(2000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        need = required_literals(pattern)
        try:
            compiled = regex.compile(pattern, FLAGS)
        except (regex.error, ValueError, OverflowError, RecursionError):
            continue
        for text in ("", "ab", "a(b)c", "{2,3}", "0123456789", "a\nb", pattern):
            if compiled.search(text) is not None:
                assert holds(need, text), (pattern, need, text)


def test_a_deeply_nested_pattern_requires_nothing_rather_than_failing() -> None:
    assert required_literals("(" * 5000 + "a" + ")" * 5000) is None


@pytest.mark.parametrize("count", [1, 499, 500, 700, 999, 1000, 1501])
@pytest.mark.parametrize("cores", [1, 2, 8])
def test_the_workers_find_what_one_loop_over_the_candidates_finds(
    count: int, cores: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from query.elog import regex_search

    monkeypatch.setattr(regex_search.os, "cpu_count", lambda: cores)
    rng = random.Random(count * 10 + cores)
    words = ["beam", "klystron", "trip", "vacuum", "gun", "laser"]
    texts = [
        (d, " ".join(rng.choices(words, k=2)), " ".join(rng.choices(words, k=8)))
        for d in range(0, 3 * count, 3)  # document numbers with gaps
    ]
    pattern = regex.compile(r"kly\w+ tr(ip|ap)")
    found = regex_search.regex_matches(pattern, texts, "kly.+ trip")
    expected = []
    for d, title, body in texts:
        m = pattern.search(body)
        if pattern.search(title) or m:
            expected.append((d, 2.0 * bool(pattern.search(title)) + bool(m), m and m.span()))
    assert sorted((h.docnum, h.score, h.span) for h in found) == expected
