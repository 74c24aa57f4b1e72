"""What literals a regex cannot match without, read from the pattern by a small parser of
its own: search_elog looks them up in the index's terms to narrow the entries a regex
is run on.

The parser reads literal characters, escapes, ``.``, character classes, groups of every
common kind, alternation, quantifiers, anchors and inline flags. It is conservative:
given syntax it does not know, or that the ``regex`` package (which does the matching)
may read otherwise than it does (POSIX classes, set operations, ``\\p{..}``, fuzzy
matching, verbose mode...), it requires nothing. That costs speed, never a match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Lit:
    """A literal a match must contain; ``starts``/``ends``: a line or text anchor
    (``^``, ``$``) stands right before/after it, so a word there starts/ends too."""

    text: str
    starts: bool = False
    ends: bool = False


# A requirement: a literal, ("and", [...]) or ("or", [...]); None: no requirement.
Need = Lit | tuple[str, list["Need"]] | None


def required_literals(pattern: str) -> Need:
    """The literals any match of ``pattern`` must contain, as an and/or tree.

    ``beam.*energy`` needs ``("and", [Lit("beam"), Lit("energy")])``; ``RF|LLRF``
    needs ``("or", [Lit("RF"), Lit("LLRF")])``. Where the pattern holds syntax the
    parser does not read, or is invalid, nothing is required.
    """
    try:
        return _seq_need(_Parser(pattern).parse())
    except (_Unsure, RecursionError):
        return None


# --------------------------------------------------------------------------- the parse


class _Unsure(Exception):
    """The pattern holds syntax the parser does not read as the regex package may."""


@dataclass(frozen=True)
class _Char:
    """One literal character."""

    char: str


@dataclass(frozen=True)
class _Anchor:
    """``^`` or ``\\A`` (left), ``$`` or ``\\Z`` (right)."""

    side: Literal["left", "right"]


@dataclass(frozen=True)
class _Other:
    """Anything that requires no literal: ``.``, a class, ``\\b``, a lookaround, a
    backreference, a conditional."""


@dataclass(frozen=True)
class _Group:
    """A group's contents (a sequence; alternatives are one ``_Branch`` in it);
    ``inline``: a plain ``(?:...)``, whose contents join the sequence around it."""

    body: tuple[_Item, ...]
    inline: bool = False


@dataclass(frozen=True)
class _Branch:
    alternatives: tuple[tuple[_Item, ...], ...]


@dataclass(frozen=True)
class _Repeat:
    """An item repeated at least ``low`` times."""

    low: int
    body: tuple[_Item, ...]


_Item = _Char | _Anchor | _Other | _Group | _Branch | _Repeat

_OTHER = _Other()
_Kind = Literal["group", "inline", "other", "none"]
_CLASS_ESCAPES = frozenset("dDwWsSbB")  # \b is no term boundary: "mm²" is one term
_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX = re.compile(r"[0-9a-fA-F]+")
_COUNT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS = re.compile(r"([aiLmsux]*)(?:-([imsx]+))?")
_GROUP_NAME = re.compile(r"[^\W\d]\w*")
# Inside a class, what only the regex package reads as set syntax (VERSION1).
_SET_OPERATORS = ("--", "&&", "||", "~~")


class _Parser:
    """A recursive descent over the pattern; ``parse`` gives its top-level sequence."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0

    def parse(self) -> tuple[_Item, ...]:
        items = self._alternation()
        if self.pos != len(self.pattern):  # an unmatched ")"
            raise _Unsure
        return items

    def _peek(self, ahead: int = 0) -> str:
        return self.pattern[self.pos + ahead : self.pos + ahead + 1]

    def _alternation(self) -> tuple[_Item, ...]:
        alternatives = [self._sequence()]
        while self._peek() == "|":
            self.pos += 1
            alternatives.append(self._sequence())
        if len(alternatives) == 1:
            return alternatives[0]
        return (_Branch(tuple(alternatives)),)

    def _sequence(self) -> tuple[_Item, ...]:
        items: list[_Item] = []
        while self.pos < len(self.pattern) and self._peek() not in "|)":
            c = self._peek()
            if c in "*+?{":
                low = self._quantifier()
                if not items or isinstance(items[-1], (_Anchor, _Repeat)):
                    raise _Unsure  # nothing to repeat, or a repeat repeated
                items[-1] = _Repeat(low, (items[-1],))
            elif c == "(":
                items += self._group()
            elif c == "[":
                items.append(self._class())
            elif c == "\\":
                items.append(self._escape())
            else:
                self.pos += 1
                if c == ".":
                    items.append(_OTHER)
                elif c == "^":
                    items.append(_Anchor("left"))
                elif c == "$":
                    items.append(_Anchor("right"))
                else:
                    items.append(_Char(c))
        flat: list[_Item] = []
        for item in items:
            if isinstance(item, _Group) and item.inline:
                flat += item.body
            else:
                flat.append(item)
        return tuple(flat)

    def _quantifier(self) -> int:
        """The least count of the quantifier here (and a lazy or possessive mark after)."""
        c = self._peek()
        if c == "{":
            m = _COUNT.match(self.pattern, self.pos)
            if m is None or not (m.group(1) or m.group(3)):
                raise _Unsure  # a literal brace to re, fuzzy matching to regex...
            low = int(m.group(1) or 0)
            if m.group(3) and int(m.group(3)) < low:
                raise _Unsure
            self.pos = m.end()
        else:
            low = 1 if c == "+" else 0
            self.pos += 1
        if self._peek() in ("?", "+"):
            self.pos += 1
        return low

    def _group(self) -> list[_Item]:
        """The items of a group: none for a comment or flags, one otherwise."""
        self.pos += 1
        kind: _Kind = "group"
        if self._peek() == "?":
            self.pos += 1
            kind = self._extension()
            if kind == "none":
                return []
        body = self._alternation()
        if self._peek() != ")":
            raise _Unsure
        self.pos += 1
        if kind == "other":
            return [_OTHER]
        return [_Group(body, inline=kind == "inline")]

    def _extension(self) -> _Kind:
        """Reads what follows ``(?``: "group" or "inline" (``?:``) when the group's
        contents must match, "other" when they need not (lookarounds, backreferences,
        conditionals), "none" when the whole group is read (a comment, flags for the
        whole pattern)."""
        c, rest = self._peek(), self.pattern[self.pos :]
        if not c:
            raise _Unsure
        if c in ":>":  # non-capturing, atomic
            self.pos += 1
            return "inline" if c == ":" else "group"
        if c in "=!" or rest.startswith(("<=", "<!")):
            self.pos += 1 if c in "=!" else 2
            return "other"
        if rest.startswith(("P<", "<")):
            self.pos += 2 if c == "P" else 1
            self._name(">")
            return "group"
        if rest.startswith("P="):  # a backreference
            self.pos += 2
            self._name(")")
            self.pos -= 1  # the ")" that closes the group
            return "other"
        if c == "#":
            end = self.pattern.find(")", self.pos)
            if end < 0:
                raise _Unsure
            self.pos = end + 1
            return "none"
        if c == "(":  # a conditional: (?(1)yes|no)
            end = self.pattern.find(")", self.pos)
            if end < 0:
                raise _Unsure
            self.pos = end + 1
            return "other"
        m = _FLAGS.match(self.pattern, self.pos)
        assert m is not None  # it matches the empty string
        on, off = m.group(1), m.group(2)
        after = self.pattern[m.end() : m.end() + 1]
        if "x" in on or not (on or off):
            raise _Unsure  # verbose mode, or what the parser does not know
        self.pos = m.end() + 1
        if after == ":":
            return "group"
        if after == ")" and not off:
            return "none"  # flags for the whole pattern
        raise _Unsure

    def _name(self, end: str) -> None:
        """Reads a group's name and the character that ends it."""
        m = _GROUP_NAME.match(self.pattern, self.pos)
        if m is None or self.pattern[m.end() : m.end() + 1] != end:
            raise _Unsure
        self.pos = m.end() + 1

    def _class(self) -> _Item:
        """A ``[...]`` class: one literal character if that is all it holds."""
        self.pos += 1
        negated = self._peek() == "^"
        if negated:
            self.pos += 1
        members: list[str] = []
        while True:
            c = self._peek()
            if not c:
                raise _Unsure  # unterminated
            if c == "]" and members:
                self.pos += 1
                break
            if c == "[" or self.pattern[self.pos : self.pos + 2] in _SET_OPERATORS:
                raise _Unsure  # POSIX classes, nested sets, set operations
            if c == "\\":
                escaped = self._peek(1)
                if not escaped or escaped in "pPN":
                    raise _Unsure
                self.pos += 2
                members.append("\\" + escaped)
            else:
                self.pos += 1
                members.append(c)
        if len(members) == 1 and not negated:
            member = members[0]
            if len(member) == 1:
                return _Char(member)
            if not member[1].isalnum():
                return _Char(member[1])
        return _OTHER

    def _escape(self) -> _Item:
        c = self._peek(1)
        self.pos += 2
        if c in _CLASS_ESCAPES:
            return _OTHER
        if c == "A":
            return _Anchor("left")
        if c == "Z":
            return _Anchor("right")
        if c in _CONTROL_ESCAPES:
            return _Char(_CONTROL_ESCAPES[c])
        if c in _HEX_ESCAPES:
            digits = self.pattern[self.pos : self.pos + _HEX_ESCAPES[c]]
            if len(digits) != _HEX_ESCAPES[c] or not _HEX.fullmatch(digits):
                raise _Unsure
            self.pos += len(digits)
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise _Unsure
            return _Char(chr(code))
        if not c or c.isalnum():
            raise _Unsure  # backreferences, octal, \p, \N, \G, \K... or a trailing "\"
        return _Char(c)


# --------------------------------------------------------------------------- the needs


def _seq_need(items: tuple[_Item, ...]) -> Need:
    """What a sequence needs: its runs of literal characters, and what its groups,
    repeats (at least once) and alternatives need."""
    needs: list[Need] = []
    run: list[str] = []
    run_starts = anchored = False

    def flush(ends: bool) -> None:
        if run:
            needs.append(Lit("".join(run), run_starts, ends))
            run.clear()

    for item in items:
        if isinstance(item, _Char):
            if not run:
                run_starts = anchored
            run.append(item.char)
            anchored = False
            continue
        flush(isinstance(item, _Anchor) and item.side == "right")
        anchored = isinstance(item, _Anchor) and item.side == "left"
        if isinstance(item, _Group):
            needs.append(_seq_need(item.body))
        elif isinstance(item, _Repeat):
            if item.low >= 1:
                needs.append(_seq_need(item.body))
        elif isinstance(item, _Branch):
            alternatives = [_seq_need(alt) for alt in item.alternatives]
            needs.append(None if any(a is None for a in alternatives) else ("or", alternatives))
    flush(False)
    kept: list[Need] = [n for n in needs if n is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ("and", kept)
