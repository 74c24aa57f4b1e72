"""reports: ``{reports}/{command_name}/*.md``, dated by the file name."""

from __future__ import annotations

import re
from datetime import date
from typing import ClassVar

from whoosh.fields import ID, NUMERIC, STORED, TEXT, Schema

from indexer.sources.base import FileData, Parsed, is_hidden, text_analyzer

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


class ReportsSource:
    name: ClassVar[str] = "reports"
    schema_version: ClassVar[int] = 1

    def schema(self) -> Schema:
        return Schema(
            command=ID(stored=True),
            report_name=STORED(),
            # Days since 1970-01-01, or -1 for an undated report (sorts last).
            day=NUMERIC(int, stored=True, sortable=True, signed=True),
            content=TEXT(analyzer=text_analyzer(), phrase=False),
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
        return Parsed(
            documents=[
                {
                    "key": file.rel,
                    "command": command,
                    "report_name": report_name,
                    "day": day.toordinal() - date(1970, 1, 1).toordinal() if day else -1,
                    "content": file.text(),
                }
            ]
        )
