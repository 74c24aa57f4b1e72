"""The ranked text query of search_elog, as plain data: the query's words and their
stems, quoted phrases, and the BM25F query they make (the engine's ``Ranked`` clauses,
which name no engine).

Words are ranked by BM25 over the whole entry stemmed (title, body and attribute
values as one text: indexer/sources/elog.py's ``entry_stems``), so ``klystrons`` finds
``klystron``, plus a light boost where the stemmed title holds them (BM25F). Stop words
never match alone: they are left out (a query of nothing else finds nothing, and says
so). In a query of few words, two words next to each other add a boost where their
stems stand in a row in the title or the body.

The weights were tuned on CISI (bench/bench_relevance.py): one saturation over the whole
entry ranks better than each field saturating apart (nDCG@10 0.357 against 0.314), the
title boost adds a little (0.349 without), and the pair boost helps only short queries
(in a question of twenty words most adjacent pairs are noise: 0.334 with it, 0.314
without).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from indexer.engine.base import AllOf, AnyOf, Boosted, PhraseClause, Ranked, TermClause
from query.errors import TroveError
from query.forgiving import FEW_WORDS, STOP_WORDS, all_words, stem
from query.rerank import query_words

# The stemmed field an entry holds a word in (every word it holds, wherever).
ENTRY_FIELD = "entry_stems"
# Stemmed fields scored for each word, with their boosts.
WORD_FIELDS = ((ENTRY_FIELD, 1.0), ("title_stems", 0.2))
# Two adjacent query words in a row in the title or the body (stems): a proximity boost,
# for queries of at most FEW_WORDS words.
PAIR_FIELDS = (("title_stems", 1.0), ("body_stems", 0.5))
# A query's words past this count are not searched (a query is at most 1,000
# characters, but every word costs a postings read and a clause).
MAX_WORDS = 32

_PHRASE = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class TextQuery:
    """A text query: what to rank by, the words it is made of, and the words to show.

    ``words`` are the words matched on, one per stem (stop words left out; unknown words
    corrected or dropped by the caller); ``stems`` theirs, in the same order. ``required`` is the quoted phrases (None: there are none).
    """

    words: tuple[str, ...]
    stems: tuple[str, ...]
    required: Ranked | None
    shown: list[str]  # every word a snippet may show
    stop_words: tuple[str, ...] = ()  # the query's stop words (left out)
    # How often the query says each stem (a word a question repeats weighs more); 1 if
    # not given.
    times: tuple[tuple[str, int], ...] = ()

    @property
    def query(self) -> Ranked:
        """Any of the words (and the phrases, if quoted), each word's BM25F over the
        stemmed fields summed, adjacent words in a row adding a boost."""
        return self._ranked(all_words=False)

    @property
    def strict(self) -> Ranked:
        """As ``query``, but every word required (the same score where both match)."""
        return self._ranked(all_words=True)

    def word_clause(self, s: str) -> AnyOf:
        n = dict(self.times).get(s, 1)
        return AnyOf(tuple(TermClause(name, s, boost=boost * n) for name, boost in WORD_FIELDS))

    def pairs(self) -> list[PhraseClause]:
        if len(self.stems) > FEW_WORDS:
            return []
        found = []
        for a, b in zip(self.stems, self.stems[1:], strict=False):
            found += [PhraseClause(name, (a, b), boost=boost) for name, boost in PAIR_FIELDS]
        return found

    def _ranked(self, all_words: bool) -> Ranked:
        per_word = [self.word_clause(s) for s in self.stems]
        pairs = self.pairs()
        if not per_word:
            if self.required is None:
                raise ValueError("a text query without words or phrases ranks nothing")
            return self.required
        words: Ranked
        if all_words and len(per_word) > 1:
            words = AllOf(tuple(per_word))
            if pairs:
                words = Boosted(words, AnyOf(tuple(pairs)))
        else:
            clauses: list[Ranked] = [c for word in per_word for c in word.clauses]
            words = AnyOf((*clauses, *pairs))
        if self.required is None:
            return words
        return Boosted(self.required, words)

    def without_phrases(self) -> TextQuery:
        """The same query with its quoted phrases' words as ordinary words."""
        phrase_words = [w for w in self.shown if w not in STOP_WORDS]
        return replace(self.with_words([*self.words, *phrase_words]), required=None)

    def with_words(self, words: list[str]) -> TextQuery:
        """The same query over other words (a correction's)."""
        kept, stems = _by_stem(words)
        return TextQuery(
            kept,
            stems,
            self.required,
            list(dict.fromkeys(self.shown + words)),
            self.stop_words,
            self.times,
        )


def _by_stem(words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words with one per stem (the first), at most MAX_WORDS, and their stems."""
    seen: dict[str, str] = {}
    for w in words:
        seen.setdefault(stem(w), w)
        if len(seen) >= MAX_WORDS:
            break
    return tuple(seen.values()), tuple(seen)


def split_query(query: str) -> tuple[list[str], list[str], list[str]]:
    """(quoted phrases, the words outside them, those words less the stop words)."""
    phrases = [p for p in _PHRASE.findall(query) if p.strip()]
    words = query_words(_PHRASE.sub(" ", query))
    return phrases, words, [w for w in words if w not in STOP_WORDS]


def text_query(query: str) -> TextQuery:
    """BM25F over stemmed title, body and attributes; quoted phrases must appear
    (in the title or the body, as written)."""
    phrases, every, content = split_query(query)
    words, stems = _by_stem(content)
    stop_words = tuple(w for w in every if w in STOP_WORDS)
    required: list[Ranked] = []
    shown = list(content)
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
    if not every and not required:
        raise TroveError(
            "INVALID_QUERY",
            f"query {query!r} holds no words to search for; give words, device names or a regex",
        )
    must = None if not required else AllOf(tuple(required)) if len(required) > 1 else required[0]
    said = Counter(stem(w) for w in all_words(_PHRASE.sub(" ", query)) if w not in STOP_WORDS)
    times = tuple((s, said[s]) for s in stems if said[s] > 1)
    return TextQuery(words, stems, must, list(dict.fromkeys(shown)), stop_words, times)
