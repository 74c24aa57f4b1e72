"""How Whoosh analyses and stores trove's fields: the analyzer that wraps a field's plain
tokenizer, the postings formats, and the bytes column.

Whoosh's formats take every term from the analyzer as a Token object, one at a time; the
formats here take a field's terms from its tokenizer all at once when the analyzer is a
TokensAnalyzer, which makes the same postings for about a quarter less CPU per build.

Each index's table of contents pickles the schema with these classes by name; trove opens
its indexes with the schema it builds (indexer/engine/whoosh/storage.py), never with the
pickled one, so they may move, but they must stay picklable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
from whoosh.analysis import Token, Tokenizer
from whoosh.columns import VarBytesColumn
from whoosh.formats import Frequency
from whoosh.system import pack_uint
from whoosh.util.numlists import GrowableArray

from indexer.engine.fields import PositionedTokenizer
from indexer.engine.fields import Tokenizer as Tokens
from indexer.engine.postings import (
    DocPostings,
    Numbering,
    TermNumbers,
    next_tokens_columns,
    next_tokens_frequency,
    next_tokens_postings,
    numbered,
)


class TokensAnalyzer(Tokenizer):
    """A Whoosh analyzer made of a field's plain tokenizer (indexer/engine/fields.py).

    Terms are yielded as they are (the tokenizer lower-cases); with ``positions``, each at
    its position from ``positioned`` if given, else at its place in the list. Character
    offsets are not known.
    """

    def __init__(self, tokens: Tokens, positioned: PositionedTokenizer | None = None) -> None:
        self.tokens = tokens
        self.positioned = positioned

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Token]:
        if chars:
            raise ValueError("a TokensAnalyzer knows no character offsets")
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not positions:
            pairs = [(term, 0) for term in self.tokens(value)]
        elif self.positioned is None:
            pairs = [(term, pos) for pos, term in enumerate(self.tokens(value))]
        else:
            pairs = self.positioned(value)
        for term, pos in pairs:
            t.text = term
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = term
            if positions:
                t.pos = start_pos + pos
            yield t


def _terms(value: Any, analyzer: Any) -> list[str] | None:
    """The terms of a TokensAnalyzer, all at once; None for another analyzer."""
    if type(analyzer) is not TokensAnalyzer or not isinstance(value, str):
        return None
    return analyzer.tokens(value)


class FastFrequency(Frequency):
    """Whoosh's Frequency format, computed in one pass for a TokensAnalyzer."""

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        terms = _terms(value, analyzer)
        if terms is None:
            return super().word_values(value, analyzer, **kwargs)
        fb = self.field_boost
        return ((w, n, n * fb, pack_uint(n)) for w, n in Counter(terms).items())


class NextTokens(Frequency):
    """Whoosh's Frequency format, and what follows each term: a posting's value is
    indexer.engine.postings.next_tokens_postings's (the frequency as Frequency stores it,
    then the hashes of the distinct tokens that follow the term in the document)."""

    posting_size = -1  # values of varying length

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        tokens = _terms(value, analyzer)
        if tokens is None:
            tokens = [t.text for t in analyzer(value, mode="index", **kwargs)]
        fb = self.field_boost
        return ((w, n, n * fb, v) for w, n, v in next_tokens_postings(tokens))

    def pool_columns(
        self, value: str, analyzer: Any, boost: float, numbers: TermNumbers
    ) -> tuple[DocPostings, int, Numbering] | None:
        """The postings ``word_values`` gives, as a writer pools them: as columns, each
        term numbered by ``numbers``, its weight times ``boost``; the field's length; and
        its tokens numbered (indexer/engine/postings.py), for the segment's token
        sequences. None for an analyzer other than a TokensAnalyzer."""
        tokens = _terms(value, analyzer)
        if tokens is None:
            return None
        numbering = numbered(tokens)
        words, sequence = numbering
        terms = numbers.number(words)
        if not tokens:
            empty = np.empty(0, dtype=np.uint32)
            return DocPostings(terms, empty, empty, b""), 0, numbering
        counts, lengths, values = next_tokens_columns(sequence, numbers.hashes(terms))
        doc = DocPostings(terms, counts.astype(np.uint32), lengths, values, self.field_boost, boost)
        return doc, len(tokens), numbering

    def decode_frequency(self, valuestring: bytes) -> int:
        return next_tokens_frequency(valuestring)

    def decode_weight(self, valuestring: bytes) -> float:
        return self.decode_frequency(valuestring) * self.field_boost

    def combine(self, vs: list[bytes]) -> bytes:
        raise NotImplementedError("NextTokens values cannot be combined")


class TextColumn(VarBytesColumn):
    """Whoosh's column of byte strings, without its 4 GB limit on a segment's values."""

    def writer(self, dbfile: Any) -> Any:
        writer = self.Writer(dbfile, self.allow_offsets, self.write_offsets_cutoff)
        writer._offsets = GrowableArray(allow_longs=True)
        return writer
