"""The search box's query language: the operators of a query read into data, and the
matcher that checks a document against what they require.

One box serves every collection, with the language people know from GitHub, Gmail and
zoekt::

    klystron "beam loss" -pac OR modulator in:elog since:2025-10 category:"Beam loss"

Grammar (read once, left to right; ``space`` is any Unicode whitespace, ``run`` one or
more characters that are neither space nor a quote; the first alternative that fits wins)::

    query      = { space | term }
    term       = phrase | "OR" | exclusion | filter | word
    phrase     = quoted
    exclusion  = "-" quoted | "-" run                   (the run not starting with "-")
    filter     = key ":" ( quoted | run )
    key        = "in" | "command" | "since" | "until" | "category" | "system" | "domain"
                                                        (in any case)
    word       = run                                    ("-" alone is refused)
    quoted     = quote { any character but a quote } quote
    quote      = '"' | "\u201c" | "\u201d"              (straight or curly, either way round)
    in value   = collection { "," collection }          (reports, commands, conversations, elog)
    date value = YYYY "-" MM "-" DD | YYYY "-" MM | YYYY

A run ends at a space or a quote, so a quote always starts or ends a term: text right
after a closing quote is the next term (``"a b"c`` is ``"a b" c``), and a quote right
after a run starts a phrase (``x"a b"`` is ``x "a b"``), except after ``-`` or ``key:``,
whose quoted phrase or value it opens.

Meaning:

- Words and phrases (``quoted`` terms) are what is searched for. ``OR`` joins them into
  alternatives and binds loosest: ``a b OR "c d"`` is (a and b) or "c d". A query
  without OR has one alternative (a ``Clause``).
- Exclusions and filters hold for the whole query, wherever they stand.
- ``since:`` is the first day of its period and ``until:`` the last (``since:2025-10`` is
  2025-10-01, ``until:2025`` is 2025-12-31); both days count.
- ``in:`` may be given several times (``in:reports in:elog``) or with commas
  (``in:reports,elog``): any of them. Every other filter takes one value; given twice,
  the values must agree (category, system and domain in any case, as the ELOG matches
  them).
- A quoted phrase or value has its runs of spaces made single and its ends stripped; there
  is no escape: a quote cannot be searched for.

Lenient (read as words, not refused):

- ``or`` and ``Or`` are words; so are ``AND`` and ``NOT``: only ``OR`` is an operator.
- ``key:value`` with a key not listed above (``foo:bar``, ``http://host``) is a word.
- A ``-`` inside a word (``e-mail``) is part of it; only a leading ``-`` excludes, and a
  word starting with ``--`` (a command-line option, ``--force``) is a word.
- Keys and collection names are read in any case (``IN:Reports``).
- The same filter given twice with the same value, or the same exclusion twice, counts once.

Refused with ``TroveError("INVALID_QUERY", ...)``, the message naming the term and its
column (1-based, counted in the query as given: ``check_query`` strips it first): an
unclosed quote; an empty phrase or value (``""``, ``command:``, ``in:reports,``); ``-``
alone or followed by a space; a filter after ``-`` (``-in:elog``); an unknown collection;
an impossible or malformed date; ``since:`` after ``until:``; one filter given twice with
different values; OR first, last or doubled (no word or phrase between); an invalid
command name (``query.args.check_name``); and a query with nothing to search for
(exclusions or filters only), unless ``parse(..., require_words=False)``.

Matching (``Parsed.excludes``, ``holds_phrases``): text is compared after ``casefold()``
(no other Unicode normalisation). A *word character* is a Unicode letter or digit
(``str.isalnum``; ``_`` is not one) of a script written with spaces; a CJK character
(hiragana, katakana, Han, hangul) is written without them, so it is never a word's edge.
An excluded word is held where it stands with no word character run on to either end
(``pac`` is in "pac: off" and "pac_2", not in "pacman"; ``東京`` is in "東京都"). A phrase
is held where its words stand in that order with any run of whitespace between them, as
a substring (``"beam los"`` is in "Beam  loss").

Parsing is linear in the query's length (one pass, no backtracking regexes), and the
matcher's patterns are plain literals with possessive whitespace runs.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Literal, NoReturn

from indexer.cjk import CJK_CHARS
from query.args import check_name
from query.errors import TroveError

Collection = Literal["reports", "commands", "conversations", "elog"]
COLLECTIONS: tuple[Collection, ...] = ("reports", "commands", "conversations", "elog")
ELOG_FILTERS = ("category", "system", "domain")
FILTER_KEYS = ("in", "command", "since", "until", *ELOG_FILTERS)
# How to write each filter, for the messages.
FILTER_FORMS = {
    "in": f"in:{','.join(COLLECTIONS)} (one or more)",
    "command": "command:NAME",
    "since": "since:YYYY-MM-DD, since:YYYY-MM or since:YYYY",
    "until": "until:YYYY-MM-DD, until:YYYY-MM or until:YYYY",
    **{key: f'{key}:VALUE or {key}:"two words"' for key in ELOG_FILTERS},
}
QUOTES = '"\u201c\u201d'
OR_HINT = "OR goes between two words or phrases, as in: klystron OR modulator"
SEARCH_HINT = 'add a word or "a phrase" to search for'
# A term longer than this is cut in a message.
MAX_SHOWN = 40

_SPACE = re.compile(r"\s+")
_RUN = re.compile(rf"[^\s{QUOTES}]+")
_QUOTE = re.compile(rf"[{QUOTES}]")
_DATE = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")
_WORD_CHAR = rf"[^\W_{CJK_CHARS}]"
_WORD_CHAR_AT = re.compile(_WORD_CHAR)
_WORD_RUN = re.compile(rf"{_WORD_CHAR}+")


@dataclass(frozen=True)
class Term:
    """A word of a clause as written, or a phrase (``phrase``: its spaces made single)."""

    text: str
    phrase: bool = False

    def to_text(self) -> str:
        return f'"{self.text}"' if self.phrase else self.text


@dataclass(frozen=True)
class Clause:
    """One alternative of the query: its words and phrases, in the order written; a
    document answers it when it holds them all (the phrases as phrases)."""

    terms: tuple[Term, ...]

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.terms if not t.phrase)

    @property
    def phrases(self) -> tuple[str, ...]:
        """The phrases a document must hold (``holds_phrases``)."""
        return tuple(t.text for t in self.terms if t.phrase)

    def words_text(self) -> str:
        """The plain text to give a search's tiers: the words and phrases as written,
        without quotes or operators."""
        return " ".join(t.text for t in self.terms)

    def to_text(self) -> str:
        return " ".join(t.to_text() for t in self.terms)

    def describe(self, grouped: bool) -> str:
        said = " and ".join(t.to_text() for t in self.terms)
        return f"({said})" if grouped and len(self.terms) > 1 else said


@dataclass(frozen=True)
class Parsed:
    """A query read: what to search for, what to leave out, and the filters (None: the
    filter is not given; ``collections`` None: every collection)."""

    alternatives: tuple[Clause, ...]
    excluded_words: tuple[str, ...] = ()
    excluded_phrases: tuple[str, ...] = ()
    collections: frozenset[str] | None = None
    command: str | None = None
    since: date | None = None
    until: date | None = None
    category: str | None = None
    system: str | None = None
    domain: str | None = None

    def words_text(self) -> str:
        """Every alternative's words and phrases as written, without operators (what to
        highlight); a search runs each clause's own ``Clause.words_text()``."""
        return " ".join(c.words_text() for c in self.alternatives)

    def single_filters(self) -> list[tuple[str, str]]:
        """The filters of one value given, as (key, value as written in a query)."""
        values = {
            "command": self.command,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "category": self.category,
            "system": self.system,
            "domain": self.domain,
        }
        return [(key, value) for key, value in values.items() if value is not None]

    @property
    def uses_operators(self) -> bool:
        """Whether the query says more than plain words."""
        return bool(
            len(self.alternatives) > 1
            or any(c.phrases for c in self.alternatives)
            or self.excluded_words
            or self.excluded_phrases
            or self.collections is not None
            or self.single_filters()
        )

    def _collections_in_order(self) -> list[str]:
        return [c for c in COLLECTIONS if c in (self.collections or ())]

    def describe(self) -> str | None:
        """The one line saying how the query was read, as in ``read as: "exact phrase" and
        proxy, without pac, in reports and elog, since 2025-10-01``; None for plain words."""
        if not self.uses_operators:
            return None
        grouped = len(self.alternatives) > 1
        parts = [" or ".join(c.describe(grouped) for c in self.alternatives)]
        left_out = [*self.excluded_words, *(f'"{p}"' for p in self.excluded_phrases)]
        if left_out:
            parts.append(f"without {_listed(left_out)}")
        if self.collections is not None:
            parts.append(f"in {_listed(self._collections_in_order())}")
        parts += [f"{key} {_value_text(value)}" for key, value in self.single_filters()]
        return "read as: " + ", ".join(p for p in parts if p)

    def to_text(self) -> str:
        """The query written out: ``parse`` reads it back to an equal ``Parsed`` (with the
        same ``require_words``). Dates are written in full, filters last."""
        parts = [" OR ".join(c.to_text() for c in self.alternatives)]
        parts += [f"-{w}" for w in self.excluded_words]
        parts += [f'-"{p}"' for p in self.excluded_phrases]
        parts += [f"in:{c}" for c in self._collections_in_order()]
        parts += [f"{key}:{_value_text(value)}" for key, value in self.single_filters()]
        return " ".join(p for p in parts if p)

    def excludes(self, text: str) -> bool:
        """Whether ``text`` holds an excluded word as a whole word or an excluded phrase
        (case-insensitively; see the module's docstring for what a word is)."""
        if not self.excluded_words and not self.excluded_phrases:
            return False
        folded = text.casefold()
        bare, pattern = _word_finder(tuple(w.casefold() for w in self.excluded_words))
        if bare and any(m.group() in bare for m in _WORD_RUN.finditer(folded)):
            return True
        if pattern is not None and pattern.search(folded):
            return True
        return any(_phrase_pattern(p).search(folded) for p in self.excluded_phrases)

    def admits(self, text: str) -> bool:
        """Whether a document's ``text`` answers the query's operators: nothing excluded,
        and every phrase of some alternative held (any text, without alternatives)."""
        if self.excludes(text):
            return False
        return not self.alternatives or any(holds_phrases(c, text) for c in self.alternatives)


def holds_phrases(clause: Clause, text: str) -> bool:
    """Whether ``text`` holds every phrase of ``clause`` (case-insensitively, any run of
    whitespace where the phrase has a space)."""
    folded = text.casefold()
    return all(_phrase_pattern(p).search(folded) for p in clause.phrases)


def parse(query: str, *, require_words: bool = True) -> Parsed:
    """The query read (see the module's docstring); ``TroveError("INVALID_QUERY")``
    naming the term and its column if it is malformed. ``require_words=False`` lets a
    query hold no word or phrase (filters and exclusions alone: no alternatives)."""
    return _Reader(query).read(require_words)


class _Reader:
    """One pass over a query, term by term, collecting what each says."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.clauses: list[Clause] = []
        self.current: list[Term] = []
        self.open_or: int | None = None  # where the last OR stands while none follows it
        self.excluded_words: dict[str, str] = {}  # casefolded -> as first written
        self.excluded_phrases: dict[str, str] = {}
        self.collections: set[str] | None = None
        # key -> (value, start, end of the term that gave it)
        self.single: dict[str, tuple[str | date, int, int]] = {}
        self.first_exclusion: tuple[int, int] | None = None
        self.first_filter: tuple[int, int] | None = None

    def fail(self, start: int, end: int, reason: str) -> NoReturn:
        raise TroveError(
            "INVALID_QUERY", f"{_shown(self.query[start:end])} at column {start + 1}: {reason}"
        )

    def read(self, require_words: bool) -> Parsed:
        query, at = self.query, 0
        while at < len(query):
            space = _SPACE.match(query, at)
            if space:
                at = space.end()
            elif query[at] in QUOTES:
                phrase, at = self.phrase(at, at)
                self.add_term(Term(phrase, phrase=True))
            else:
                run = _RUN.match(query, at)
                assert run is not None  # neither a space nor a quote starts a run
                at = self.run(run.group(), at, run.end())
        return self.finish(require_words)

    def quoted(self, start: int, quote: int) -> tuple[str, int]:
        """The text between the quote at ``quote`` and the next one, its spaces made
        single, and where the term that began at ``start`` ends."""
        close = _QUOTE.search(self.query, quote + 1)
        if close is None:
            self.fail(start, len(self.query), "the quote is not closed: add the closing quote")
        return " ".join(self.query[quote + 1 : close.start()].split()), close.end()

    def phrase(self, start: int, quote: int) -> tuple[str, int]:
        """``quoted``, refused if it holds no word."""
        phrase, end = self.quoted(start, quote)
        if not phrase:
            self.fail(start, end, "an empty phrase: put words between the quotes")
        return phrase, end

    def run(self, run: str, start: int, end: int) -> int:
        """Reads the term that begins with ``run``; where it ends."""
        if run == "OR":
            self.add_or(start)
            return end
        if run.startswith("-") and not run.startswith("--"):
            end = self.exclusion(run[1:], start, end)
            self.first_exclusion = self.first_exclusion or (start, end)
            return end
        key, colon, value = run.partition(":")
        if colon and key.lower() in FILTER_KEYS:
            end = self.filter(key.lower(), value, start, end)
            self.first_filter = self.first_filter or (start, end)
            return end
        self.add_term(Term(run))
        return end

    def add_term(self, term: Term) -> None:
        self.current.append(term)
        self.open_or = None

    def add_or(self, start: int) -> None:
        if not self.current:
            if self.open_or is not None:
                self.fail(
                    start,
                    start + 2,
                    f"OR follows the OR at column {self.open_or + 1} with no word or phrase "
                    f"between them; {OR_HINT}",
                )
            self.fail(start, start + 2, f"OR has no word or phrase before it; {OR_HINT}")
        self.clauses.append(Clause(tuple(self.current)))
        self.current = []
        self.open_or = start

    def exclusion(self, rest: str, start: int, end: int) -> int:
        if not rest and end < len(self.query) and self.query[end] in QUOTES:
            phrase, end = self.phrase(start, end)
            self.excluded_phrases.setdefault(phrase.casefold(), phrase)
            return end
        if not rest:
            self.fail(start, end, 'leave out what? write -word or -"a phrase", no space after -')
        key, colon, _ = rest.partition(":")
        if colon and key.lower() in FILTER_KEYS:
            self.fail(start, end, f"a filter cannot be left out: give the {key.lower()}: you want")
        self.excluded_words.setdefault(rest.casefold(), rest)
        return end

    def filter(self, key: str, value: str, start: int, end: int) -> int:
        if not value and end < len(self.query) and self.query[end] in QUOTES:
            value, end = self.quoted(start, end)
        if not value:
            self.fail(start, end, f"{key}: has no value; write {FILTER_FORMS[key]}")
        if key == "in":
            self.add_collections(value, start, end)
        elif key in ("since", "until"):
            self.set_single(key, self.day(key, value, start, end), start, end)
        elif key == "command":
            try:
                check_name(value, "the command", "INVALID_QUERY", command=True)
            except TroveError as error:
                self.fail(start, end, error.message)
            self.set_single(key, value, start, end)
        else:
            self.set_single(key, value, start, end)
        return end

    def add_collections(self, value: str, start: int, end: int) -> None:
        names = [name.strip().lower() for name in value.split(",")]
        for name in names:
            if not name:
                self.fail(start, end, f"an empty collection name; write {FILTER_FORMS['in']}")
            if name not in COLLECTIONS:
                self.fail(
                    start,
                    end,
                    f"unknown collection {name!r}; the collections are {', '.join(COLLECTIONS)}",
                )
        self.collections = (self.collections or set()) | set(names)

    def day(self, key: str, value: str, start: int, end: int) -> date:
        """since: the first day of the period written, until: its last."""
        found = _DATE.fullmatch(value)
        if found is None:
            self.fail(start, end, f"not a date; write {FILTER_FORMS[key]}")
        last = key == "until"
        year, month, day = found.groups()
        try:
            first = date(int(year), int(month or (12 if last else 1)), int(day or 1))
        except ValueError as error:
            self.fail(start, end, f"not a date ({error}); write {FILTER_FORMS[key]}")
        if last and day is None:
            return first.replace(day=calendar.monthrange(first.year, first.month)[1])
        return first

    def set_single(self, key: str, value: str | date, start: int, end: int) -> None:
        if key in self.single:
            given, given_start, given_end = self.single[key]
            same = given == value or (
                key in ELOG_FILTERS and str(given).casefold() == str(value).casefold()
            )
            if not same:
                self.fail(
                    start,
                    end,
                    f"{key}: is given twice with different values (also "
                    f"{_shown(self.query[given_start:given_end])} at column {given_start + 1}); "
                    "give one",
                )
            return
        self.single[key] = (value, start, end)

    def finish(self, require_words: bool) -> Parsed:
        if self.open_or is not None:
            self.fail(
                self.open_or, self.open_or + 2, f"OR has no word or phrase after it; {OR_HINT}"
            )
        if self.current:
            self.clauses.append(Clause(tuple(self.current)))
        if "since" in self.single and "until" in self.single:
            since, until = self.given_day("since"), self.given_day("until")
            _, start, end = self.single["until"]
            if since and until and since > until:
                self.fail(
                    start,
                    end,
                    f"until: {until.isoformat()} is before since: {since.isoformat()}; "
                    "swap them or widen the range",
                )
        if not self.clauses and require_words:
            if self.first_exclusion:
                self.fail(
                    *self.first_exclusion,
                    f"nothing to search for, only what to leave out; {SEARCH_HINT}",
                )
            if self.first_filter:
                self.fail(
                    *self.first_filter,
                    f"nothing to search for: filters only narrow a search; {SEARCH_HINT}",
                )
            raise TroveError("INVALID_QUERY", f"the query is empty; {SEARCH_HINT}")
        return Parsed(
            alternatives=tuple(self.clauses),
            excluded_words=tuple(self.excluded_words.values()),
            excluded_phrases=tuple(self.excluded_phrases.values()),
            collections=frozenset(self.collections) if self.collections is not None else None,
            command=self.given_text("command"),
            since=self.given_day("since"),
            until=self.given_day("until"),
            category=self.given_text("category"),
            system=self.given_text("system"),
            domain=self.given_text("domain"),
        )

    def given_text(self, key: str) -> str | None:
        value = self.single.get(key, (None,))[0]
        return value if isinstance(value, str) else None

    def given_day(self, key: str) -> date | None:
        value = self.single.get(key, (None,))[0]
        return value if isinstance(value, date) else None


def _shown(term: str) -> str:
    """A term quoted for a message, cut if long."""
    return repr(term if len(term) <= MAX_SHOWN else term[: MAX_SHOWN - 1] + "…")


def _listed(items: list[str]) -> str:
    """a; a and b; a, b and c."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _value_text(value: str) -> str:
    """A filter's value as written in a query: quoted if it holds a space."""
    return f'"{value}"' if any(c.isspace() for c in value) else value


@lru_cache(maxsize=256)
def _word_finder(words: tuple[str, ...]) -> tuple[frozenset[str], re.Pattern[str] | None]:
    """For casefolded excluded words: those that are one run of word characters (found
    among a text's runs), and a pattern for the others (each edge that is a word
    character must not run on into the text)."""
    bare = frozenset(w for w in words if _WORD_RUN.fullmatch(w))
    others = [w for w in words if w not in bare and w]
    if not others:
        return bare, None
    shapes = [
        ("(?<!" + _WORD_CHAR + ")" if _WORD_CHAR_AT.match(w[0]) else "")
        + re.escape(w)
        + ("(?!" + _WORD_CHAR + ")" if _WORD_CHAR_AT.match(w[-1]) else "")
        for w in others
    ]
    return bare, re.compile("|".join(shapes))


@lru_cache(maxsize=256)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A casefolded phrase's words in order, any run of whitespace between them."""
    return re.compile(r"\s++".join(re.escape(w) for w in phrase.casefold().split()))
