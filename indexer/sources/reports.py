"""reports: ``{reports}/{command_name}/*.md``, dated by the file name."""

from __future__ import annotations

import re
from datetime import date
from typing import ClassVar

from indexer.cjk import CJK_CHARS
from indexer.engine.fields import BytesColumn, Field, Keyword, Number, Stored, Text
from indexer.sources.base import FileData, Parsed, is_hidden

# The content is indexed as tokens of its lower-cased text: runs of word characters,
# single CJK characters and runs of other characters that are not white space. Every
# character but white space belongs to one token, so every occurrence of a query is a
# run of consecutive tokens (the first may begin inside one, the last may end inside
# one). The lower-cased text itself is kept too, in a column: the tokens (and which
# tokens follow which) find the few reports a query can be in, the text counts it
# exactly.
TOKEN_PATTERN = rf"[{CJK_CHARS}]|[^\W{CJK_CHARS}]+|[^\w\s]+"
_TOKEN = re.compile(TOKEN_PATTERN)

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


def tokens(text: str) -> list[str]:
    """The tokens of the lower-cased text (see TOKEN_PATTERN): ``_TOKEN.findall`` of it.

    No token holds whitespace, so the text is cut at whitespace first, and a piece of
    ASCII letters and digits (most of them) is a token as it is; only the other pieces
    go through the pattern, whose class test costs ~70 ns a character."""
    found: list[str] = []
    take, search = found.append, _TOKEN.findall
    for piece in text.lower().split():
        if piece.isascii() and piece.isalnum():
            take(piece)
        else:
            found.extend(search(piece))
    return found


class ReportsSource:
    name: ClassVar[str] = "reports"
    # 2: words of the lower-cased text; units with positions.
    # 3: tokens with positions, and the lower-cased text in a column.
    # 4: tokens with what follows each (NextTokens) in place of positions; keys in a column.
    # 5: days as date ordinals, 0 undated (-1 was undated and 1969-12-31 both); postings
    #    blocks of few objects (indexer/engine/whoosh/codec.py).
    # 6: per segment, the reports that hold each one- or two-character fragment most.
    # 7: file records keep their stat in a column, which a reconcile reads fast.
    # 8: per segment, every report's tokens in order, as codes.
    # 9: a posting's frequency in 1 byte (most) and what follows it in 2 bytes a token,
    #    blocks of arrays of the smallest type (a third less index).
    schema_version: ClassVar[int] = 9
    scored: ClassVar[bool] = False  # ranked by occurrences, then date

    def fields(self) -> tuple[Field, ...]:
        return (
            Keyword("command", stored=True),
            Stored("report_name"),
            # The date's ordinal (date.toordinal(), 1 for 0001-01-01), or 0 for an
            # undated report (sorts last).
            Number("day", stored=True, sortable=True),
            # Tokens (with the tokens that follow each): finds any query, and counts one
            # inside a token; per segment, every report's tokens in order, where a query
            # of several tokens can be (made anew from the text if lost), and the reports
            # that hold each common term most.
            Text("content", tokens, postings="next_tokens", sequences_from="text"),
            # The lower-cased text, UTF-8: counts any query in the reports found; and
            # per segment, the reports that hold each short fragment most, and each pair
            # of CJK characters.
            BytesColumn("text", tops_by=("day", "sort_key")),
            # The key (command/report_name), UTF-8: orders reports tied on count and
            # date, and names the best, without reading stored fields.
            BytesColumn("sort_key"),
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
