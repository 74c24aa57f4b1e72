"""Each segment's suffixes in order (indexer/engine/suffixes.py) on the Whoosh engine's
side: of the terms of the field with token sequences (the reports' content), made from
the writer's terms as it ends the segment, or from the segment's lexicon (a table made
anew), written beside the segment (derived.py), and mapped by the segment's lexicon."""

from __future__ import annotations

from itertools import repeat
from typing import Any

from indexer.engine.lexicon import Lexicon
from indexer.engine.suffixes import SuffixOrder, suffix_table
from indexer.engine.whoosh.derived import SUFFIXES_PREFIX, derived_name, open_derived
from indexer.engine.whoosh.sequences import SequencesTaker


def suffixes_file_name(segment_id: str) -> str:
    return derived_name(SUFFIXES_PREFIX, segment_id)


def suffixes_field(schema: Any) -> str | None:
    """The field whose terms' suffixes a segment keeps in order; None if it has none."""
    sequences = SequencesTaker.of(schema)
    return None if sequences is None else sequences.field


def read_suffixes(folder: str, segment_id: str, doc_count: int) -> SuffixOrder | None:
    """A segment's suffixes in order; None if there are none, or they are damaged."""
    return open_derived(folder, suffixes_file_name(segment_id), SuffixOrder.read)


def table_of_terms(terms: list[str]) -> bytes:
    """The table of these terms' suffixes (the terms in order)."""
    return suffix_table(Lexicon(terms, repeat(0, len(terms))))
