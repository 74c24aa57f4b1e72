"""What every search uses to forgive a query: its words, stop words, stems, and the
closest indexed words to a word no document holds.

English Snowball stemming (PyStemmer) is the indexer's own rule: indexer/sources/base.py's
``stem``, which the stemmed ELOG fields are made with. A word's stem family in a lexicon is
found by prefix: the terms that start with the stem less its last letter (Snowball changes
at most the end of a word: "happy" -> "happi"), whose stem is the word's stem. Typo correction
compares a word with the lexicon's terms of about its length (rapidfuzz, bounded).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from rapidfuzz import fuzz, process

from indexer.engine.lexicon import Lexicon
from indexer.sources.base import CJK_CHARS, stem

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
