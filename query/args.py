"""Argument checks shared by every search: the same input gets the same error everywhere."""

from __future__ import annotations

import re

from query.errors import ErrorCode, TroveError

MAX_QUERY_CHARS = 1000
# A name that is one path component: no separators, no "..", no control characters.
_NAME = re.compile(r"[^/\\\x00-\x1f\x7f]+")
# A command name is also a portable one: none of the characters Windows refuses in file
# names, no space at either end (a caller's slip, never a command's name).
_NOT_PORTABLE = re.compile(r'[<>:"|?*]|^\s|\s$')


def check_query(query: str | None, field: str = "query") -> str:
    """The query, stripped; INVALID_QUERY if it is empty, whitespace or too long."""
    if query is None or not isinstance(query, str) or not query.strip():
        raise TroveError("INVALID_QUERY", f"{field} is empty; give one or more words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise TroveError(
            "INVALID_QUERY",
            f"{field} is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}",
        )
    if "\x00" in query:
        raise TroveError("INVALID_QUERY", f"{field} holds a NUL character")
    return query.strip()


def check_range(value: int, name: str, low: int, high: int) -> int:
    """An integer argument within [low, high]; INVALID_ARGUMENT otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TroveError("INVALID_ARGUMENT", f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise TroveError("INVALID_ARGUMENT", f"{name} must be between {low} and {high}, got {value}")
    return value


def check_name(value: str | None, what: str, code: ErrorCode, command: bool = False) -> str:
    """A caller-given name that must be one path component (never leads outside a folder);
    a ``command`` name must also be portable (see _NOT_PORTABLE)."""
    if not isinstance(value, str) or not value.strip():
        raise TroveError(code, f"{what} is empty")
    if (
        value in (".", "..")
        or ".." in value
        or not _NAME.fullmatch(value)
        or len(value) > 255
        or (command and _NOT_PORTABLE.search(value))
    ):
        rules = "'/', '\\', '..', control characters" + (
            ", any of < > : \" | ? * or spaces at either end" if command else ""
        )
        raise TroveError(
            code,
            f"{what} {value!r} is not a valid name: it must be one file or folder name, "
            f"without {rules}",
        )
    return value
