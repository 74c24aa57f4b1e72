"""The error codes shared by the MCP tools, the CLI and the Python API."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal[
    "INVALID_QUERY",
    "INVALID_COMMAND_FILTER",
    "INVALID_DATE_RANGE",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "DIRECTORY_NOT_FOUND",
    "SEARCH_TIMEOUT",
    "UPSTREAM_ERROR",
    # The collection's index is being built or rebuilt: the message says when to retry.
    "INDEX_UNAVAILABLE",
]

# Codes that mean the caller asked for something invalid (CLI exit code 2).
INPUT_CODES = frozenset(
    {
        "INVALID_QUERY",
        "INVALID_COMMAND_FILTER",
        "INVALID_DATE_RANGE",
        "INVALID_ARGUMENT",
    }
)


class TroveError(Exception):
    """A search failed for a reason the caller can act on; ``code`` names the reason."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode = code
        self.message = message

    @property
    def is_input_error(self) -> bool:
        return self.code in INPUT_CODES
