"""get_conversation: a conversation file, or a part of it, by the id its hits carry."""

from __future__ import annotations

import os
import re

from indexer.files import SkipFile, read_file
from indexer.sources.conversations import ConversationsSource
from query import parts
from query.context import QueryContext
from query.errors import TroveError
from query.indexes import source_folder
from query.workspace.models import Conversation
from query.workspace.view import COLLECTION

_LINE = re.compile(r":([^:/]*)$")
_SOURCE = ConversationsSource()


def get_conversation(
    ctx: QueryContext,
    id: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    whole: bool = False,
) -> Conversation:
    """A conversation file by its id (``2025-11-18/001-weekly-planning/notes.md``, a hit's
    id ``...notes.md:16`` too: then the part starts at that line unless ``offset`` says
    otherwise), all of it or the part from line ``offset`` (query/parts.py).

    INVALID_ARGUMENT for an id that is not a relative path inside the conversations
    folder (``..``, absolute, a NUL) or whose line is not a number; NOT_FOUND for one
    that names no conversation file. ``whole``: all of it, whatever its size (the web
    page)."""
    root = source_folder(ctx.settings, COLLECTION)
    rel, line = _split(root, id)
    first, count = parts.check_part(line if offset is None else offset, limit)
    try:
        data = read_file(root, rel, parts.READ_MAX_BYTES)
    except (FileNotFoundError, SkipFile) as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else str(exc)
        raise TroveError("NOT_FOUND", f"no conversation file {rel!r}: {why}; {_HINT}") from None
    folder, conversation = rel.split("/")[:2]
    answer = Conversation(
        id=rel,
        conversation=conversation,
        date=folder,
        path=str(root / rel),
        **parts.unfilled(first),
        size=data.size,
        truncated=data.truncated,
    )
    return parts.filled(answer, data.text(), first, count, whole)


_HINT = "search_workspace gives the ids of conversation files (its hits' id)"


def _split(root: os.PathLike[str], id: object) -> tuple[str, int | None]:
    """The file's path relative to the root, checked, and the line an id ends with."""
    if not isinstance(id, str) or not id.strip():
        raise TroveError("INVALID_ARGUMENT", f"id is empty; {_HINT}")
    if "\x00" in id:
        raise TroveError("INVALID_ARGUMENT", "id holds a NUL character")
    rel, line = id.strip(), None
    m = _LINE.search(rel)
    if m is not None and not os.path.isfile(os.path.join(root, rel)):
        rel = rel[: m.start()]
        if not m.group(1).isdigit():
            raise TroveError(
                "INVALID_ARGUMENT",
                f"the line in id {id!r} must be a number (path:LINE), got {m.group(1)!r}",
            )
        line = max(1, int(m.group(1)))
    if rel.startswith("/") or os.path.isabs(rel) or "\\" in rel:
        raise TroveError(
            "INVALID_ARGUMENT",
            f"id {id!r} must be a path relative to the conversations folder, not an absolute "
            f"one; {_HINT}",
        )
    names = rel.split("/")
    if any(n in ("", ".", "..") for n in names):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"id {id!r} must name a file inside the conversations folder (no '..', '.' or "
            f"empty names); {_HINT}",
        )
    wanted = _SOURCE.wants_file(tuple(names)) and all(
        _SOURCE.wants_dir(tuple(names[:i])) for i in range(1, len(names))
    )
    if not wanted:
        raise TroveError(
            "NOT_FOUND",
            f"{rel!r} is not a conversation file ({{YYYY-MM or YYYY-MM-DD}}/{{conversation}}/"
            f"... .md or .txt); {_HINT}",
        )
    return rel, line
