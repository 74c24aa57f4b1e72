"""Argument checks shared by every search: the same input gets the same error everywhere."""

from __future__ import annotations

import re
from typing import Literal, overload

from query.errors import ErrorCode, TroveError

MAX_QUERY_CHARS = 1000
# A name that is one path component: no separators, no "..", no control characters.
_NAME = re.compile(r"[^/\\\x00-\x1f\x7f]+")
# A command name is also a portable one: none of the characters Windows refuses in file
# names, no space at either end (a caller's slip, never a command's name).
_NOT_PORTABLE = re.compile(r'[<>:"|?*]|^\s|\s$')


@overload
def check_query(
    query: object, field: str = ..., *, optional: Literal[False] = ..., hint: str = ...
) -> str: ...
@overload
def check_query(
    query: object, field: str = ..., *, optional: Literal[True], hint: str = ...
) -> str | None: ...
def check_query(
    query: object,
    field: str = "query",
    *,
    optional: bool = False,
    hint: str = "give one or more words to search for",
) -> str | None:
    """The query, stripped; INVALID_QUERY if it is not text, too long or holds a NUL, and
    if it is empty or blank, unless ``optional`` (then None)."""
    if query is None and optional:
        return None
    if query is not None and not isinstance(query, str):
        raise TroveError("INVALID_QUERY", f"{field} must be text, got {type(query).__name__}")
    text = (query or "").strip()
    if not text:
        if optional:
            return None
        raise TroveError("INVALID_QUERY", f"{field} is empty; {hint}")
    if len(text) > MAX_QUERY_CHARS:
        raise TroveError(
            "INVALID_QUERY",
            f"{field} is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}: shorten it",
        )
    if "\x00" in text:
        raise TroveError("INVALID_QUERY", f"{field} holds a NUL character")
    return text


def check_range(value: object, name: str, low: int, high: int | None) -> int:
    """An integer argument within [low, high] (no upper bound if ``high`` is None);
    INVALID_ARGUMENT otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TroveError("INVALID_ARGUMENT", f"{name} must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"between {low} and {high}" if high is not None else f"{low} or more"
        raise TroveError("INVALID_ARGUMENT", f"{name} must be {allowed}, got {value}")
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
            ', any of < > : " | ? * or spaces at either end' if command else ""
        )
        raise TroveError(
            code,
            f"{what} {value!r} is not a valid name: it must be one file or folder name, "
            f"without {rules}",
        )
    return value
