"""The text of the document a hit of every collection's search stands for, to check it
against what a query's phrases and exclusions require (query/syntax.py): a report's,
command's or conversation's file as the indexer reads it, an ELOG entry's title, body and
attribute values as the index keeps them.

A search admits a hit only when its whole document holds the phrases and none of the
excluded words, so the texts are read here, for the hits a page shows and those it skips,
at most the first thousand of a search (query/tools.py's MAX_WINDOW).
"""

from __future__ import annotations

from indexer.files import SkipFile, read_file
from query.context import QueryContext
from query.elog.index_access import open_index
from query.errors import TroveError


class HitTexts:
    """Reads the documents of hits, each once, for one search."""

    def __init__(self, ctx: QueryContext) -> None:
        self.ctx = ctx
        self.max_bytes = int(ctx.settings.index.max_file_mb * 1024 * 1024)
        self._read: dict[tuple[str, str], str] = {}

    def text(self, collection: str, hit_id: str) -> str:
        """The document's text; empty when it is gone or cannot be read (then it holds no
        phrase, and no excluded word: the hit's ``stale`` says its file changed)."""
        key = (collection, hit_id)
        found = self._read.get(key)
        if found is None:
            found = self._read[key] = self._text(collection, hit_id)
        return found

    def _text(self, collection: str, hit_id: str) -> str:
        if collection == "elog":
            return self._entry(hit_id)
        rel = {
            "reports": hit_id,
            "commands": f"{hit_id}.md",
            "conversations": hit_id.rpartition(":")[0] or hit_id,
        }[collection]
        root = self.ctx.settings.source_root(collection)
        if root is None:
            return ""
        try:
            return read_file(root, rel, self.max_bytes).text()
        except (FileNotFoundError, SkipFile):
            return ""

    def _entry(self, hit_id: str) -> str:
        try:
            with open_index(self.ctx) as index:  # not held between searches of the logbook
                fields = index.document(hit_id)
        except TroveError:
            return ""
        if fields is None:
            return ""
        attrs = fields.get("attrs") or {}
        parts = [fields.get("title", ""), fields.get("body", ""), *map(str, attrs.values())]
        return "\n".join(parts)
