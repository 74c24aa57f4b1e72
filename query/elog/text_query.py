"""The ranked text query of search_elog, as plain data: the query's words, their other
number (singular/plural), quoted phrases, and the BM25F query they make (the engine's
``Ranked`` clauses, which name no engine).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.engine.base import AllOf, AnyOf, Boosted, PhraseClause, Ranked, TermClause
from query.errors import TroveError
from query.rerank import query_words

# Fields scored for each word, with their boosts.
WORD_FIELDS = (("title", 2.0), ("body", 1.0), ("attributes", 0.8))
# The weight of a word's other number against the word itself.
OTHER_NUMBER_WEIGHT = 0.7

_PHRASE = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class TextQuery:
    """A text query: what to rank by, the terms it matches on, and the words to show."""

    query: Ranked  # any word (quoted phrases required)
    strict: Ranked | None  # every word (None: one word, the same as ``query``)
    terms: tuple[tuple[str, str], ...]  # (field, text) of every optional term
    phrased: bool  # quoted phrases must match
    words: list[str]


def forms(word: str) -> list[tuple[str, float]]:
    """The word, and its other number (singular/plural) at a lower weight."""
    found = [(word, 1.0)]
    if len(word) >= 4 and word.isalpha():
        other = OTHER_NUMBER_WEIGHT
        if word.endswith("ies"):
            found.append((word[:-3] + "y", other))
        elif word.endswith("es") and not word.endswith("ses"):
            found += [(word[:-2], other), (word[:-1], other)]
        elif word.endswith("s") and not word.endswith("ss"):
            found.append((word[:-1], other))
        else:
            found.append((word + "s", other))
    return found


def text_query(query: str) -> TextQuery:
    """BM25F over title (x2), body and attributes; quoted phrases must appear.

    ``query`` is one flat AnyOf of every (field, word form) term: the same BM25F sum as
    one AnyOf per word, and a third cheaper to match. ``strict`` asks for every word (in
    any field and form), scored the same way.
    """
    phrases = [p for p in _PHRASE.findall(query) if p.strip()]
    rest = _PHRASE.sub(" ", query)
    shown: list[str] = []
    clauses: list[TermClause] = []
    per_word: list[Ranked] = []
    for word in query_words(rest):
        mine: list[TermClause] = []
        for form, weight in forms(word):
            shown.append(form)
            for name, boost in WORD_FIELDS:
                if name == "attributes" and form != word:
                    continue  # attribute values are names, not prose
                mine.append(TermClause(name, form, boost=boost * weight))
        clauses += mine
        per_word.append(AnyOf(tuple(mine)))
    required: list[Ranked] = []
    for phrase in phrases:
        parts = query_words(phrase)
        shown += parts
        if len(parts) == 1:
            required.append(
                AnyOf((TermClause("title", parts[0], boost=2.0), TermClause("body", parts[0])))
            )
        elif parts:
            row = tuple(parts)
            required.append(
                AnyOf((PhraseClause("title", row, boost=2.0), PhraseClause("body", row)))
            )
    if not clauses and not required:
        raise TroveError(
            "INVALID_QUERY",
            f"query {query!r} holds no words to search for; give words, device names or a regex",
        )
    words = list(dict.fromkeys(shown))
    terms = tuple((c.field, c.text) for c in clauses)
    strict = AllOf(tuple(required + per_word)) if len(required) + len(per_word) > 1 else None
    optional = AnyOf(tuple(clauses)) if clauses else None
    if not required:
        assert optional is not None
        return TextQuery(optional, strict, terms, False, words)
    must = AllOf(tuple(required)) if len(required) > 1 else required[0]
    combined = Boosted(must, optional) if optional is not None else must
    return TextQuery(combined, strict, terms, True, words)
