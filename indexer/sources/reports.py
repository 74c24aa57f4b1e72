"""reports: ``{reports}/{command_name}/*.md``, dated by the file name."""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Sequence
from datetime import date
from typing import Any, ClassVar

from whoosh.columns import VarBytesColumn
from whoosh.fields import COLUMN, ID, NUMERIC, STORED, TEXT, Schema
from whoosh.system import pack_uint
from whoosh.util.numlists import GrowableArray

from indexer.sources.base import (
    CJK_CHARS,
    FastPositions,
    FileData,
    LowerFirstTokenizer,
    Parsed,
    is_hidden,
)

# The content is indexed as tokens of its lower-cased text: runs of word characters,
# single CJK characters and runs of other characters that are not white space. Every
# character but white space belongs to one token, so every occurrence of a query is a
# run of consecutive tokens (the first may begin inside one, the last may end inside one),
# and positions say where those runs are. The lower-cased text itself is kept too, in a
# column: the tokens find the few reports a query can be in, the text counts it exactly.
TOKEN_PATTERN = rf"[{CJK_CHARS}]|[^\W{CJK_CHARS}]+|[^\w\s]+"

# A YYYYMMDD must start its digit run; the dashed and underscored forms need their
# separators. Scanned left to right; the first that is a real calendar date wins.
_DATE_PATTERNS = re.compile(
    r"(?<!\d)(?P<y1>\d{4})(?P<m1>\d{2})(?P<d1>\d{2})"
    r"|(?<!\d)(?P<y2>\d{4})-(?P<m2>\d{2})-(?P<d2>\d{2})(?!\d)"
    r"|(?<!\d)(?P<y3>\d{4})_(?P<m3>\d{2})_(?P<d3>\d{2})(?!\d)"
)


def date_from_name(name: str) -> date | None:
    """The first valid calendar date in a report's file name, or None."""
    pos = 0
    while (m := _DATE_PATTERNS.search(name, pos)) is not None:
        for i in "123":
            if m.group(f"y{i}"):
                try:
                    return date(int(m.group(f"y{i}")), int(m.group(f"m{i}")), int(m.group(f"d{i}")))
                except ValueError:
                    break
        pos = m.start() + 1
    return None


def tokens_analyzer() -> LowerFirstTokenizer:
    """The tokens of the lower-cased text (see TOKEN_PATTERN)."""
    return LowerFirstTokenizer(TOKEN_PATTERN)


class ArrayPositions(FastPositions):
    """Positions stored as one array of 32-bit little-endian integers.

    Whoosh's own encoding (pickled deltas) is smaller, but a search decodes the positions
    of thousands of postings per query; an array decodes in one C call, several times
    faster. Postings blocks are compressed anyway.
    """

    def encode(self, poslist: list[int]) -> bytes:
        positions = array("I", poslist)
        if sys.byteorder == "big":
            positions.byteswap()
        return pack_uint(len(positions)) + positions.tobytes()

    def decode_positions(self, valuestring: bytes) -> list[int]:
        return list(decode_positions(valuestring))


def _decode_big_endian(valuestring: bytes) -> Sequence[int]:
    positions = array("I")
    positions.frombytes(valuestring[4:])
    positions.byteswap()
    return positions


def _decode_little_endian(valuestring: bytes) -> Sequence[int]:
    return memoryview(valuestring)[4:].cast("I")  # no copy


# The positions in an ArrayPositions value.
decode_positions = _decode_little_endian if sys.byteorder == "little" else _decode_big_endian


class TextColumn(VarBytesColumn):
    """Whoosh's column of byte strings, without its 4 GB limit on a segment's values."""

    def writer(self, dbfile: Any) -> Any:
        writer = self.Writer(dbfile, self.allow_offsets, self.write_offsets_cutoff)
        writer._offsets = GrowableArray(allow_longs=True)
        return writer


class ReportsSource:
    name: ClassVar[str] = "reports"
    # 2: words of the lower-cased text; units with positions.
    # 3: tokens with positions, and the lower-cased text in a column.
    schema_version: ClassVar[int] = 3
    scored: ClassVar[bool] = False  # ranked by occurrences, then date

    def schema(self) -> Schema:
        content = TEXT(analyzer=tokens_analyzer(), phrase=True)
        content.format = ArrayPositions(field_boost=content.format.field_boost)
        return Schema(
            command=ID(stored=True),
            report_name=STORED(),
            # Days since 1970-01-01, or -1 for an undated report (sorts last).
            day=NUMERIC(int, stored=True, sortable=True, signed=True),
            # Tokens (positions): finds any query, and counts one inside a token.
            content=content,
            # The lower-cased text, UTF-8: counts any query in the reports found.
            text=COLUMN(TextColumn()),
        )

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        return len(parts) == 1 and not is_hidden(parts[0])

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        return (
            len(parts) == 2
            and not is_hidden(parts[0])
            and not is_hidden(parts[1])
            and parts[1].lower().endswith(".md")
        )

    def parse(self, file: FileData) -> Parsed:
        command, report_name = file.rel.split("/")
        day = date_from_name(report_name)
        text = file.text()
        return Parsed(
            documents=[
                {
                    "key": file.rel,
                    "command": command,
                    "report_name": report_name,
                    "day": day.toordinal() - date(1970, 1, 1).toordinal() if day else -1,
                    "content": text,
                    "text": text.lower().encode("utf-8"),
                }
            ]
        )
