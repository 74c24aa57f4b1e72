"""What every search uses to forgive a query: its words, stop words, stems, the closest
indexed words to a word no document holds, and the one ladder of tiers each search gives
its own tiers to (``forgive``).

English Snowball stemming (PyStemmer) is the indexer's own rule: indexer/sources/base.py's
``stem``, which the stemmed ELOG fields are made with. A word's stem family in a lexicon is
found by prefix: the terms that start with the stem less its last letter (Snowball changes
at most the end of a word: "happy" -> "happi"), whose stem is the word's stem. Typo correction
compares a word with the lexicon's terms of about its length (rapidfuzz, bounded).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from rapidfuzz import fuzz, process

from indexer.cjk import CJK_CHARS
from indexer.engine.lexicon import Lexicon
from indexer.sources.base import stem

# Words too common to find anything by: they never match alone. NLTK's English list, and
# the function words of questions it lacks (without them, "how many" had "many", held by
# no report, corrected to "may").
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also although among another anyone anything either every
    however many may might much must neither onto shall something though upon whether yet
    """.split()  # noqa: SIM905 (a word list reads best as prose)
)
# Words of letters and digits, or runs of CJK characters.
_WORD = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+")
_CJK = re.compile(rf"[{CJK_CHARS}]")
# A stem family of more terms than this is cut there (the most common first is not known
# here: the first in order), so that a short stem stays cheap.
MAX_FAMILY = 256
# A query of at most this many content words ranks the documents holding more of them
# first (there, one word missing loses much of the meaning); a longer question ranks by
# BM25 alone, which weighs the words held well enough (CISI nDCG@10, reports: 0.227 with
# coverage first, 0.306 without).
FEW_WORDS = 4
# Typo correction: words of at least this many characters, compared with at most this
# many terms of about their length, accepted from this similarity (0-100) on.
MIN_CORRECTABLE = 4
MAX_CANDIDATES = 50_000
MIN_SIMILARITY = 75.0


def words(query: str) -> list[str]:
    """The lower-cased words of a query, each once, in order; a run of CJK characters is
    cut into its overlapping pairs (a single character stays one word)."""
    return list(dict.fromkeys(all_words(query)))


def all_words(query: str) -> list[str]:
    """The lower-cased words of a query, repeats kept (see ``words``)."""
    found: list[str] = []
    for m in _WORD.finditer(query.lower()):
        w = m.group()
        if _CJK.match(w) and len(w) > 2:
            found.extend(w[i : i + 2] for i in range(len(w) - 1))
        else:
            found.append(w)
    return found


def content_words(query: str) -> list[str]:
    """The words of a query that can match alone: all but the stop words."""
    return [w for w in words(query) if w not in STOP_WORDS]


def content_weights(query: str) -> Counter[str]:
    """How often the query says each of its content words: a word a question repeats
    weighs more."""
    return Counter(w for w in all_words(query) if w not in STOP_WORDS)


def is_cjk(word: str) -> bool:
    return bool(_CJK.match(word))


def family(lex: Lexicon, word: str) -> list[int]:
    """The terms of ``lex`` that are the word or share its stem (at most MAX_FAMILY)."""
    s = stem(word)
    prefix = s[:-1] if len(s) > 3 else s
    found = set(lex.equal_to(word))
    for k in lex.starting_with(prefix)[:MAX_FAMILY]:
        if stem(lex.term(k)) == s:
            found.add(k)
    return sorted(found)


def closest(word: str, terms: Iterable[str], limit: int = 3) -> list[str]:
    """The indexed words closest to a word no document holds, best first (none for a
    short word, a number or CJK)."""
    if len(word) < MIN_CORRECTABLE or not word.isalpha():
        return []
    n = len(word)
    pool: list[str] = []
    for term in terms:
        if abs(len(term) - n) <= 2 and term.isalpha() and term != word:
            pool.append(term)
            if len(pool) >= MAX_CANDIDATES:
                break
    found = process.extract(
        word, pool, scorer=fuzz.ratio, limit=limit * 4, score_cutoff=MIN_SIMILARITY
    )
    # Best similarity first; of equals, the one sharing the first letter, then in order.
    ranked = sorted(found, key=lambda f: (-f[1], f[0][:1] != word[:1], f[0]))
    return list(dict.fromkeys(term for term, _, _ in ranked))[:limit]


# --------------------------------------------------------------------------- the ladder

Q = TypeVar("Q")  # a query, as a search holds it (its text, or a parsed query)
A = TypeVar("A")  # a search's answer from one tier
How = Literal["as written", "related", "corrected"]


@dataclass(frozen=True)
class Ladder(Generic[Q, A]):
    """A search's tiers, for ``forgive``. Each tier answers the query it is given, or None
    when nothing matches it.

    ``as_written``: the tiers that take the query as written (the literal, then every
    word in any order); None for a search that has none (the ELOG ranks by BM25F at once).
    ``related``: documents holding some of the words or words of their stems. ``unknown``:
    of the query's words, those no document holds (nor a word of their stem family);
    ``closest``: the closest indexed words to each (``closest`` above, over the search's
    terms); ``correct``: the query with words replaced and words left out.

    The differences between searches are these parameters: ``relate_questions_first``
    (a question of many words relates before it corrects: in a question, a word no
    document holds is mostly a word, not a typo); ``drop_uncorrectable`` (a word no
    document holds and none is close to is left out of the corrected query, rather than
    kept, unmatched)."""

    related: Callable[[Q], A | None]
    unknown: Callable[[list[str]], list[str]]
    closest: Callable[[list[str]], dict[str, list[str]]]
    correct: Callable[[Q, dict[str, str], list[str]], Q]
    as_written: Callable[[Q], A | None] | None = None
    relate_questions_first: bool = True
    drop_uncorrectable: bool = False


@dataclass
class Forgiven(Generic[Q, A]):
    """What ``forgive`` found: the answer (None: nothing matched), how, and the words it
    corrected on the way."""

    answer: A | None
    how: How | None
    unknown: list[str] = field(default_factory=list)
    # Per unknown word, the closest indexed words, best first.
    fixes: dict[str, list[str]] = field(default_factory=dict)
    replaced: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    corrected: Q | None = None  # the query searched as corrected, when it answered

    @property
    def suggestions(self) -> list[str]:
        """The closest indexed words to the words no document holds, each once."""
        return list(dict.fromkeys(w for close in self.fixes.values() for w in close))


def forgive(ladder: Ladder[Q, A], query: Q, words: list[str]) -> Forgiven[Q, A]:
    """The first tier that finds anything answers, so a lower tier never pushes out a
    higher: the query as written; for a question of many words (more than FEW_WORDS of
    ``words``, its content words) the related tier; the query with its unknown words
    corrected, through every tier; the related tier."""
    if ladder.as_written is not None and (answer := ladder.as_written(query)) is not None:
        return Forgiven(answer, "as written")
    question = len(words) > FEW_WORDS and ladder.relate_questions_first
    if question and (answer := ladder.related(query)) is not None:
        return Forgiven(answer, "related")
    unknown = ladder.unknown(words)
    fixes = ladder.closest(unknown) if unknown else {}
    replaced = {w: close[0] for w, close in fixes.items() if close}
    dropped = [w for w in unknown if not fixes.get(w)] if ladder.drop_uncorrectable else []
    found: Forgiven[Q, A] = Forgiven(None, None, unknown, fixes, replaced, dropped)
    if replaced or dropped:
        corrected = ladder.correct(query, replaced, dropped)
        answer = ladder.as_written(corrected) if ladder.as_written is not None else None
        if answer is None:
            answer = ladder.related(corrected)
        if answer is not None:
            found.answer, found.how, found.corrected = answer, "corrected", corrected
            return found
    if not question and (answer := ladder.related(query)) is not None:
        found.answer, found.how = answer, "related"
    return found


def corrected_query(text: str, replaced: dict[str, str], dropped: Sequence[str] = ()) -> str:
    """``text`` with each replaced word (whole, any case) replaced and each dropped word
    left out, runs of white space made one."""
    for word, correction in [*replaced.items(), *((w, "") for w in dropped)]:
        text = re.sub(
            rf"(?<![^\W_]){re.escape(word)}(?![^\W_])",
            correction.replace("\\", "\\\\"),
            text,
            flags=re.IGNORECASE,
        )
    return " ".join(text.split())
