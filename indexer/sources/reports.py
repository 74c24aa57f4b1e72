"""reports: ``{reports}/{command_name}/*.md``, dated by the file name."""

from __future__ import annotations

import re
from array import array
from collections import Counter, defaultdict
from datetime import date
from itertools import pairwise
from typing import Any, ClassVar
from zlib import crc32

from whoosh.columns import VarBytesColumn
from whoosh.fields import COLUMN, ID, NUMERIC, STORED, TEXT, Schema
from whoosh.formats import Frequency
from whoosh.system import pack_uint, unpack_uint
from whoosh.util.numlists import GrowableArray

from indexer.codec import little_endian
from indexer.sources.base import (
    CJK_CHARS,
    FileData,
    LowerFirstTokenizer,
    Parsed,
    is_hidden,
    lower_first_terms,
)

# The content is indexed as tokens of its lower-cased text: runs of word characters,
# single CJK characters and runs of other characters that are not white space. Every
# character but white space belongs to one token, so every occurrence of a query is a
# run of consecutive tokens (the first may begin inside one, the last may end inside
# one). The lower-cased text itself is kept too, in a column: the tokens (and which
# tokens follow which) find the few reports a query can be in, the text counts it
# exactly.
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


def token_hash(token: str) -> bytes:
    """A token as NextTokens records it: CRC-32 of its UTF-8, 4 bytes little-endian."""
    return crc32(token.encode("utf-8")).to_bytes(4, "little")


class NextTokens(Frequency):
    """Whoosh's Frequency format, and what follows each term.

    A posting's value is the term's frequency in the document (4 bytes, as Frequency
    stores it), then the distinct tokens that follow the term there: each token's
    token_hash, in order of the hashes. Whether the second token of a query ever follows
    its first in a report is then one ``bytes`` search in the first's posting for that
    report, where lining up positions took a set per report. (A hash may also be found
    astride two others: the text decides.)
    """

    posting_size = -1  # values of varying length

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        tokens = lower_first_terms(value, analyzer)
        if tokens is None:
            tokens = [t.text for t in analyzer(value, mode="index", **kwargs)]
        fb = self.field_boost
        counts = Counter(tokens)
        hashes = {t: crc32(t.encode("utf-8")) for t in counts}
        follows: dict[str, set[int]] = defaultdict(set)
        for a, b in set(pairwise(tokens)):
            follows[a].add(hashes[b])
        for w, n in counts.items():
            after = little_endian(array("I", sorted(follows.get(w, ()))))
            yield (w, n, n * fb, pack_uint(n) + after.tobytes())

    def decode_frequency(self, valuestring: bytes) -> int:
        return unpack_uint(valuestring[:4])[0]

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


class ReportsSource:
    name: ClassVar[str] = "reports"
    # 2: words of the lower-cased text; units with positions.
    # 3: tokens with positions, and the lower-cased text in a column.
    # 4: tokens with what follows each (NextTokens) in place of positions; keys in a column.
    # 5: days as date ordinals, 0 undated (-1 was undated and 1969-12-31 both); postings
    #    blocks of few objects (indexer/codec.py).
    schema_version: ClassVar[int] = 5
    scored: ClassVar[bool] = False  # ranked by occurrences, then date

    def schema(self) -> Schema:
        content = TEXT(analyzer=tokens_analyzer(), phrase=False)
        content.format = NextTokens(field_boost=content.format.field_boost)
        return Schema(
            command=ID(stored=True),
            report_name=STORED(),
            # The date's ordinal (date.toordinal(), 1 for 0001-01-01), or 0 for an
            # undated report (sorts last).
            day=NUMERIC(int, stored=True, sortable=True, signed=True),
            # Tokens (with the tokens that follow each): finds any query, and counts one
            # inside a token.
            content=content,
            # The lower-cased text, UTF-8: counts any query in the reports found.
            text=COLUMN(TextColumn()),
            # The key (command/report_name), UTF-8: orders reports tied on count and
            # date, and names the best, without reading stored fields.
            sort_key=COLUMN(TextColumn()),
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
                    "day": day.toordinal() if day else 0,
                    "content": text,
                    "text": text.lower().encode("utf-8"),
                    "sort_key": file.rel.encode("utf-8"),
                }
            ]
        )
