"""trove's fields (indexer/engine/fields.py) as a Whoosh schema, with the bookkeeping the
store's writer keeps in every index.

Besides the source's documents (``kind`` "doc", keyed by the source's ``key``, tagged
with the ``file`` they came from and the hash of their fields, ``dhash``), an index holds
one file record per file (``kind`` "file", keyed by FILE_KEY_PREFIX and the file's path)
with the ``fstate`` reconcile compares with the disk. A file record also keeps its path,
mtime, size and whether the file was skipped in the ``fstat`` column, which a reconcile
reads in one go per segment rather than every record's stored fields (a zlib decompress
and an unpickle each).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from whoosh.columns import VarBytesColumn
from whoosh.fields import BOOLEAN, COLUMN, ID, NUMERIC, STORED, TEXT, FieldType, Schema

from indexer.engine.fields import Boolean, BytesColumn, Field, Keyword, Number, Stored, Text
from indexer.engine.whoosh.formats import FastFrequency, NextTokens, TextColumn, TokensAnalyzer

KIND_DOC = "doc"
KIND_FILE = "file"
FILE_KEY_PREFIX = "//file/"  # no relative path starts with "//"
FILE_STAT = "fstat"  # a file record's column (documents have none: an empty value)
# A file record's fstat: mtime_ns and size, skipped (0 or 1), then the path in UTF-8.
_STAT = struct.Struct("<qq")
_PATH_AT = _STAT.size + 1


def pack_stat(rel: str, mtime_ns: int, size: int, skipped: bool) -> bytes:
    return _STAT.pack(mtime_ns, size) + bytes([skipped]) + rel.encode("utf-8")


def unpack_stat(value: bytes) -> tuple[int, int]:
    """A file record's fstat value: (mtime_ns, size)."""
    mtime_ns, size = _STAT.unpack_from(value)
    return int(mtime_ns), int(size)


def unpack_stats(
    data: bytes,
    offsets: Sequence[int],
    lengths: Sequence[int],
    docs: Iterable[int],
    into: tuple[dict[str, tuple[int, int]], set[str]],
) -> int:
    """Adds the fstat values of these documents of a column (its values joined as
    ``data``) to ``into``: (mtime_ns, size) by path, and the paths of files skipped; how
    many. Raises on a value no writer made (damage)."""
    files, skipped = into
    unpack = _STAT.unpack_from
    n = 0
    for doc in docs:
        at, length = offsets[doc], lengths[doc]
        if length <= _PATH_AT:
            raise ValueError(f"a damaged file stat: {data[at : at + length]!r}")
        rel = data[at + _PATH_AT : at + length].decode("utf-8")
        files[rel] = unpack(data, at)
        if flag := data[at + _STAT.size]:
            if flag != 1:
                raise ValueError(f"a damaged file stat of {rel}: skipped is {flag}")
            skipped.add(rel)
        n += 1
    return n


def whoosh_field(field: Field) -> FieldType:
    """The Whoosh field type of a field."""
    match field:
        case Keyword(tokens=None):
            return ID(stored=field.stored)
        case Keyword(tokens=tokens) if tokens is not None:
            return ID(stored=field.stored, analyzer=TokensAnalyzer(tokens))
        case Text(postings="positions"):
            return TEXT(analyzer=TokensAnalyzer(field.tokens, field.positions), stored=field.stored)
        case Text():
            text = TEXT(analyzer=TokensAnalyzer(field.tokens), phrase=False, stored=field.stored)
            fmt = NextTokens if field.postings == "next_tokens" else FastFrequency
            text.format = fmt(field_boost=text.format.field_boost)
            if field.sequences_from is not None:
                if field.postings != "next_tokens":
                    raise TypeError(f"{field.name}: token sequences need next_tokens postings")
                # Read by the writer, as trove_tops_by is.
                text.trove_sequences_from = field.sequences_from
            return text
        case Number():
            return NUMERIC(int, bits=field.bits, stored=field.stored, sortable=field.sortable)
        case Boolean():
            return BOOLEAN(stored=field.stored)
        case BytesColumn():
            column = COLUMN(TextColumn())
            # Kept with the schema in the table of contents: the writer reads it there.
            column.trove_tops_by = field.tops_by
            return column
        case Stored():
            return STORED()
    raise TypeError(f"not a field: {field!r}")


def whoosh_schema(fields: Iterable[Field]) -> Schema:
    """The schema of a collection's index: its fields and the store's bookkeeping."""
    schema = Schema()
    for field in fields:
        schema.add(field.name, whoosh_field(field))
    schema.add("key", ID(stored=True, unique=True))
    schema.add("kind", ID(stored=True))
    schema.add("file", ID(stored=True))
    schema.add("dhash", STORED())
    schema.add("fstate", STORED())
    schema.add(FILE_STAT, COLUMN(VarBytesColumn()))
    return schema
