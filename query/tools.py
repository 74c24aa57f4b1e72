"""The tools' whole-number arguments, declared once: their defaults, limits and meaning.

The MCP schema (query/mcp_server.py: ``mcp_field``), the JSON API (which reads that
schema), the CLI's options and help (query/cli/program.py: ``cli_help``) and the Python
API's checks (each search's ``check``) are all made from these declarations, so a limit
is written in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from query import budget
from query.args import check_range
from query.errors import TroveError

# Hits past the first MAX_WINDOW of a search are not served (query/paging.py).
MAX_WINDOW = 1000


@dataclass(frozen=True)
class Bounds:
    """A whole-number argument: its name, limits (``high`` None: no upper one) and meaning."""

    name: str
    low: int
    high: int | None
    meaning: str

    def check(self, value: object) -> int:
        """``value``, or INVALID_ARGUMENT if it is not a whole number within the limits."""
        return check_range(value, self.name, self.low, self.high)

    def check_or_none(self, value: object) -> int | None:
        """``value`` checked; None (the tool chooses) stays None."""
        return None if value is None else self.check(value)

    @property
    def limits(self) -> str:
        """The limits in words: '1-100', '0 or more'."""
        return f"{self.low}-{self.high}" if self.high is not None else f"{self.low} or more"

    def mcp_field(self) -> Any:
        """The pydantic Field of the MCP tool's argument (its schema)."""
        return Field(ge=self.low, le=self.high, description=self.meaning)

    def cli_help(self, people: str) -> str:
        """The CLI option's help: ``people``'s words for it, then its limits."""
        return f"{people} ({self.limits})."


@dataclass(frozen=True)
class Count(Bounds):
    """A whole-number argument with a default."""

    default: int = 0

    def fit(self, answer: Any, hits: str, offset: int, value: int) -> None:
        """Cut ``answer``'s page (its list ``hits``) to its budget (query/budget.py): the
        default one when ``value``, this argument as asked, is its default."""
        budget.fit_page(answer, hits, offset, budget.limit_for(value == self.default))


@dataclass(frozen=True)
class Results(Count):
    """A search's ``max_results``: 1 to ``high``."""

    high: int


def results(
    default: int, high: int, meaning: str = "Maximum number of results to return"
) -> Results:
    return Results("max_results", 1, high, meaning, default)


SEARCH_REPORTS_RESULTS = results(10, 100)
LIST_REPORTS_RESULTS = results(50, 1000, "Maximum number of reports to return (newest first)")
SEARCH_COMMANDS_RESULTS = results(10, 100)
LIST_COMMANDS_RESULTS = results(1000, 1000, "Maximum number of commands to return")
SEARCH_WORKSPACE_RESULTS = results(10, 100, "Maximum number of matching lines to return")
SEARCH_ELOG_RESULTS = results(10, 50)
SEARCH_RESULTS = results(10, 50, "Maximum number of hits to return")
WEB_LIMIT = Count("limit", 1, 50, "Maximum number of results to return", 10)

# The page of hits a search answers (query/paging.py).
HIT_OFFSET = Count(
    "offset",
    0,
    MAX_WINDOW - 1,
    "Hits to skip: 0 for the first page; the previous answer's next_offset for the next. "
    f"offset + max_results may be at most {MAX_WINDOW}.",
)
LIST_OFFSET = Count(
    "offset",
    0,
    None,
    "Entries to skip: 0 for the first page; the previous answer's next_offset for the next.",
)
# The part of a document a get tool answers (query/parts.py).
PART_OFFSET = Bounds(
    "offset",
    1,
    None,
    "The first line to return (1-based; default 1). Long documents come in parts: ask "
    "again with offset=next_offset for the next.",
)
PART_LIMIT = Bounds(
    "limit",
    1,
    100_000,
    f"How many lines to return (default: as many as keep the answer under "
    f"{budget.DEFAULT_CHARS:,} characters; never more than {budget.MAX_CHARS:,}).",
)


def check_offset(offset: object, max_results: int) -> int:
    """A search's ``offset``; INVALID_ARGUMENT if it is not a whole number, is negative, or
    asks for hits past the first MAX_WINDOW."""
    offset = LIST_OFFSET.check(offset)
    if offset + max_results > MAX_WINDOW:
        raise TroveError(
            "INVALID_ARGUMENT",
            f"offset + max_results must be at most {MAX_WINDOW}, got {offset} + {max_results}: "
            f"hits past the first {MAX_WINDOW} are not served; narrow the query (a filter, "
            "more words) instead",
        )
    return offset
