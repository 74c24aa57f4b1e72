"""The fields of a collection's documents, declared in terms no engine owns.

A source (indexer/sources/) lists its fields with these; each engine maps them to its own
schema. A field that is searched by its terms names the plain function that cuts a value
into them, so that any engine (and a plain scan of the files) finds the very same terms,
frequencies and positions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

# A value's terms in order, repeats kept; term i is at position i.
Tokenizer = Callable[[str], list[str]]
# A value's terms with their positions, where terms do not take one position each.
PositionedTokenizer = Callable[[str], list[tuple[str, int]]]


@dataclass(frozen=True)
class Keyword:
    """Terms looked up whole: the value itself (``tokens`` None) or the terms ``tokens``
    cuts it into. Postings hold no frequency."""

    name: str
    stored: bool = False
    tokens: Tokenizer | None = None


@dataclass(frozen=True)
class Text:
    """A text searched by its terms.

    ``postings`` says what each posting holds beside the document: ``"frequency"``, the
    term's frequency; ``"next_tokens"``, the frequency and the distinct terms that follow
    the term in the document (indexer/engine/postings.py); ``"positions"``, the term's
    positions, for phrases (``positions`` gives them where ``tokens`` does not take one
    position per term).

    With ``sequences_from`` (``"next_tokens"`` postings only), each segment also keeps
    every document's terms in order (indexer/engine/sequences.py); it names the bytes
    column whose value (UTF-8) ``tokens`` cuts into the same terms, from which a lost
    table is made anew. Where a bytes column has fragment tops too (``tops_by``), each
    segment also keeps the documents that hold each common term of this field most,
    ranked as the fragment tops are (indexer/engine/term_tops.py).
    """

    name: str
    tokens: Tokenizer
    postings: Literal["frequency", "next_tokens", "positions"] = "frequency"
    stored: bool = False
    positions: PositionedTokenizer | None = None
    sequences_from: str | None = None


@dataclass(frozen=True)
class Number:
    """An integer of ``bits`` bits (signed), found by value and by range; ``sortable``
    keeps a column of every document's value."""

    name: str
    bits: Literal[32, 64] = 32
    stored: bool = False
    sortable: bool = False


@dataclass(frozen=True)
class Boolean:
    """True or false, found by value."""

    name: str
    stored: bool = False


@dataclass(frozen=True)
class BytesColumn:
    """A byte string per document, read by document number; not searched.

    With ``tops_by`` (a number field, then a bytes column), each segment also keeps the
    documents whose value holds each one- or two-character fragment most
    (indexer/engine/fragments.py), tied ones ranked by those two fields, and every pair
    of CJK characters side by side in a value, with the documents holding it and how
    often (indexer/engine/pairs.py)."""

    name: str
    tops_by: tuple[str, str] | None = None


@dataclass(frozen=True)
class Stored:
    """Any value (of plain Python types) kept with the document; not searched."""

    name: str


Field = Keyword | Text | Number | Boolean | BytesColumn | Stored
