"""conversations: ``{conversations}/{YYYY-MM or YYYY-MM-DD}/{NNN-slug}/**``."""

from __future__ import annotations

import re
from datetime import date
from typing import ClassVar

from indexer.engine.fields import Field, Keyword, Stored, Text
from indexer.sources.base import FileData, Parsed, is_hidden, lower_words

TEXT_SUFFIXES = (".md", ".markdown", ".txt", ".text")
_DATE_FOLDER = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?")


def date_folder(name: str) -> str | None:
    """'month' or 'day' for a valid date folder name (YYYY-MM or YYYY-MM-DD), else None."""
    m = _DATE_FOLDER.fullmatch(name)
    if not m:
        return None
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError:
        return None
    return "day" if m.group(3) else "month"


class ConversationsSource:
    name: ClassVar[str] = "conversations"
    # 2: the content is lower-cased before it is cut into words (it was cut first).
    # 3: file records keep their stat in a column, which a reconcile reads fast.
    schema_version: ClassVar[int] = 3
    scored: ClassVar[bool] = False  # ranked by how the literal sits in a line

    def fields(self) -> tuple[Field, ...]:
        return (
            Keyword("date", stored=True),  # the folder's own date: 2025-11 or 2025-11-10
            Keyword("month"),  # YYYY-MM for both granularities, for month filters
            Stored("granularity"),
            Keyword("conversation", stored=True),
            # Cut from the lower-cased text: the terms are then exactly the words of the
            # string search_workspace matches the lower-cased query in (lower-casing can
            # change a text's length, and 'Σ' lower-cases by what surrounds it).
            Text("content", lower_words),
        )

    def wants_dir(self, parts: tuple[str, ...]) -> bool:
        if any(is_hidden(p) for p in parts):
            return False
        return date_folder(parts[0]) is not None

    def wants_file(self, parts: tuple[str, ...]) -> bool:
        return (
            len(parts) >= 3
            and date_folder(parts[0]) is not None
            and not any(is_hidden(p) for p in parts)
            and parts[-1].lower().endswith(TEXT_SUFFIXES)
        )

    def parse(self, file: FileData) -> Parsed:
        parts = file.rel.split("/")
        folder = parts[0]
        return Parsed(
            documents=[
                {
                    "key": file.rel,
                    "date": folder,
                    "month": folder[:7],
                    "granularity": date_folder(folder),
                    "conversation": parts[1],
                    "content": file.text(),
                }
            ]
        )
