"""A field's terms read from Whoosh 2.7.4's terms file in one go, with numpy: the terms
(one string), where each term's postings are and how many documents hold it.

The terms file is a table of records in key order, each a key length and a value length
(4 bytes each, big-endian), the key (the field's number, 2 bytes, then the term's UTF-8)
and the value (a term info: flags, weight, document frequency, ...; then, unless the
flags say the postings are inlined in it, their offset and length: Whoosh 2.7.4 never
inlines them, its writer's inlining being broken, but reads them so). After the records,
the file keeps the position of every record in one array: a field's records are a run of
it, and each record's fields are gathered from the positions at once. Whoosh's own
reader reads each record with several small reads and makes an object of each: 1.3 s for
a segment of 100,000 reports; a loop over the records in Python still took 75-190 ms a
segment of 40,000 reports, which the first search of a process pays for every segment.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from whoosh.codec.whoosh3 import W3TermInfo, W3TermsReader

_RECORD_HEAD = 8  # key length, value length
_FIELD_NUMBER = 2  # the key's first bytes: the field's number
_INFO_SIZE = W3TermInfo._struct.size  # flags (1), weight (4), doc frequency (4), ...
_DOC_FREQUENCY_AT = 5
_EXTENT_SIZE = 12  # after the info: the postings' offset (8) and length (4)
# The position array's type codes (struct's), as numpy types (the file is big-endian).
_POSITIONS = {"B": ">u1", "H": ">u2", "i": ">i4", "I": ">u4", "q": ">i8"}


class FieldTerms(NamedTuple):
    """A field's terms, in order: ``joined`` holds each after a NUL (as Lexicon keeps
    them), ``starts`` where each begins in it (a term may hold a NUL itself: a report's
    run of punctuation can); per term, where its postings are (-1: inlined in its info)
    and their length, and how many documents hold it."""

    joined: str
    starts: array[int]
    offsets: array[int]
    lengths: array[int]
    doc_counts: array[int]


def read_terms(terms_reader: Any, field: str) -> FieldTerms | None:
    """The field's terms; None if the terms file is not of the layout read here;
    ValueError (UnicodeDecodeError for a term) if its records do not hold together (a
    damaged file: whoever meets it rebuilds the index)."""
    if not isinstance(terms_reader, W3TermsReader):
        return None
    table = terms_reader._tindex
    dtype = _POSITIONS.get(table.extras.get("indextype"))
    number = terms_reader._fieldmap.get(field)
    if dtype is None or table.indexsize != np.dtype(dtype).itemsize:
        return None
    if number is None or table.indexlen == 0:
        return _no_terms()
    size = table.indexlen * table.indexsize
    positions = np.frombuffer(table.dbfile.get(table.indexbase, size), dtype=dtype)
    # The records in order, each at least a head and a field number long; the field's
    # are those whose key starts with its number: a run, found by bisection.
    ends_of_data = np.append(positions[1:], table.endofdata).astype(np.int64)
    if np.any(positions < table.startofdata) or np.any(
        positions.astype(np.int64) + _RECORD_HEAD + _FIELD_NUMBER > ends_of_data
    ):
        raise ValueError(f"{field}: the terms file's record positions are out of order")

    def number_at(i: int) -> int:
        return _number_at(table, int(positions[i]))

    lo = bisect_left(range(len(positions)), number, key=number_at)
    hi = bisect_left(range(len(positions)), number + 1, lo=lo, key=number_at)
    if lo == hi:
        return _no_terms()
    start, end = int(positions[lo]), int(ends_of_data[hi - 1])
    data = np.frombuffer(table.dbfile.get(start, end - start), dtype=np.uint8)
    at = positions[lo:hi].astype(np.int64) - start
    key_lengths, value_lengths = _int32(data, at), _int32(data, at + 4)
    info = at + _RECORD_HEAD + key_lengths
    ends = info + value_lengths
    inlined = data[np.clip(info, 0, len(data) - 1)] != 0  # (checked below: within)
    numbers = _int16(data, at + _RECORD_HEAD)
    if (
        np.any(ends[:-1] != at[1:])  # the records follow one another
        or ends[-1] > len(data)
        or np.any(key_lengths < _FIELD_NUMBER)
        or np.any(value_lengths < np.where(inlined, _INFO_SIZE, _INFO_SIZE + _EXTENT_SIZE))
        or np.any(numbers != number)
    ):
        raise ValueError(f"{field}: the terms file's records do not hold together")
    doc_counts = _int32(data, info + _DOC_FREQUENCY_AT).astype(np.uint32)
    offsets = np.full(len(at), -1, dtype=np.int64)
    lengths = np.zeros(len(at), dtype=np.int64)
    extent = info[~inlined] + _INFO_SIZE
    offsets[~inlined] = _int32(data, extent) << 32 | _int32(data, extent + 4).astype(np.uint32)
    lengths[~inlined] = _int32(data, extent + 8)
    if np.any(offsets[~inlined] < 0) or np.any(lengths < 0):
        raise ValueError(f"{field}: a term's postings lie before the file's start")
    terms_at = at + _RECORD_HEAD + _FIELD_NUMBER
    return FieldTerms(
        *_joined(data, terms_at, key_lengths - _FIELD_NUMBER),
        array("q", offsets.tobytes()),
        array("Q", lengths.astype(np.uint64).tobytes()),
        array("Q", doc_counts.astype(np.uint64).tobytes()),
    )


def _no_terms() -> FieldTerms:
    return FieldTerms("", array("Q"), array("q"), array("Q"), array("Q"))


def _number_at(table: Any, position: int) -> int:
    """The field number of the record at ``position``."""
    return int.from_bytes(table.dbfile.get(position + _RECORD_HEAD, _FIELD_NUMBER), "big")


def _int16(data: npt.NDArray[np.uint8], at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The big-endian unsigned 16-bit numbers at ``at`` of ``data``."""
    return data[at].astype(np.int64) << 8 | data[at + 1]


def _int32(data: npt.NDArray[np.uint8], at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The big-endian signed 32-bit numbers at ``at`` of ``data``."""
    b = [data[at + i].astype(np.int64) for i in range(4)]
    unsigned = b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
    return np.where(unsigned >= 1 << 31, unsigned - (1 << 32), unsigned)


def _joined(
    data: npt.NDArray[np.uint8], at: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64]
) -> tuple[str, array[int]]:
    """The terms (``lengths`` bytes of UTF-8 at ``at``), each after a NUL, and a NUL at
    the end, and where each begins in that string (in characters); UnicodeDecodeError
    if one is not UTF-8."""
    total = int(lengths.sum())
    out_at = np.cumsum(lengths + 1) - lengths  # where each term goes: after its NUL
    out = np.zeros(total + len(lengths) + 1, dtype=np.uint8)
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.repeat(out_at, lengths) + within] = data[np.repeat(at, lengths) + within]
    joined = out.tobytes().decode("utf-8")
    # A byte starts a character unless it continues one (10xxxxxx).
    characters_before = np.cumsum((out & 0xC0) != 0x80) - 1
    starts = characters_before[out_at].astype(np.uint64)
    return joined, array("Q", starts.tobytes())
