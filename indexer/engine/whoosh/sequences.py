"""Each segment's token sequences (indexer/engine/sequences.py) on the Whoosh engine's
side: taken from the tokens the writer makes a document's postings of, written beside the
segment (derived.py), and read from the file as searches ask (kept open: a table written
anew is renamed into place, and this one stays as it was checked)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.engine.postings import Numbering, TermNumbers
from indexer.engine.sequences import SequenceWriter, TokenSequences
from indexer.engine.whoosh.derived import SEQUENCES_PREFIX, derived_name, open_derived


def sequences_file_name(segment_id: str) -> str:
    return derived_name(SEQUENCES_PREFIX, segment_id)


def read_sequences(folder: str, segment_id: str, doc_count: int) -> TokenSequences | None:
    """A segment of ``doc_count`` documents' token sequences; None if there are none, or
    they are damaged."""
    return open_derived(
        folder, sequences_file_name(segment_id), lambda fd: TokenSequences.read(fd, doc_count)
    )


class SequencesTaker:
    """Takes a segment's documents' tokens for the token sequences of the schema's field
    that keeps them (fields.py): its name, the column its values can be read back from,
    and its tokenizer."""

    def __init__(
        self, field: str, column: str, tokens: Any, numbers: TermNumbers | None = None
    ) -> None:
        self.field, self.column, self.tokens = field, column, tokens
        self.writer = SequenceWriter(numbers)

    @classmethod
    def of(
        cls, schema: Any, numbers: Callable[[str], TermNumbers] | None = None
    ) -> SequencesTaker | None:
        """For the schema's field with token sequences; None if it has none. ``numbers``:
        the writer's numbers of a field's terms, if it numbers them (SequenceWriter)."""
        for name, field in schema.items():
            if (column := getattr(field, "trove_sequences_from", None)) is not None:
                return cls(name, column, field.analyzer.tokens, numbers and numbers(name))
        return None

    def add(
        self, docnum: int, numbering: Numbering, terms: npt.NDArray[np.uint32] | None = None
    ) -> None:
        self.writer.add(docnum, numbering, terms)

    def add_value(self, docnum: int, value: bytes) -> None:
        """A document's tokens from its value in ``column`` (a table made anew)."""
        self.writer.add_tokens(docnum, self.tokens(value.decode("utf-8")))
