"""What search_commands, get_command and list_commands answer (pydantic models: their
fields are the tools' output schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from query import paging, parts
from query.freshness import Freshness

COLLECTION = "commands"
Tier = Literal["tier1", "tier2", "tier3"]


class CommandMatch(BaseModel):
    """One command found by search_commands."""

    id: str = Field(description="The command's name: what get_command and trove get take.")
    name: str = Field(description="Command name (the file name without .md).")
    score: float = Field(description="Relevance 0-1, higher is better; comparable across tiers.")
    tier: Tier = Field(
        description="The highest tier that found it: tier1 file name, tier2 content and "
        "frontmatter, tier3 the command's reports."
    )
    description: str = Field(
        description="The command's description (frontmatter, or its first paragraph)."
    )
    match_reason: str = Field(description="Why it matched: which words matched where.")
    stale: bool = Field(
        default=False,
        description="The command's file changed after the index read it: get_command shows it "
        "as it is.",
    )


class CommandSearchResponse(BaseModel):
    """The answer to search_commands."""

    results: list[CommandMatch] = Field(description="Best first.")
    search_time_ms: float = Field(description="Time the search took, in milliseconds.")
    total_found: int = Field(description="How many commands matched, before max_results.")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the page was cut to fit.")
    freshness: Freshness = Field(description="How current the index this answer read is.")


class CommandDetail(BaseModel):
    """One command in full (get_command)."""

    name: str = Field(description="Command name (the file name without .md).")
    title: str = Field(description="Title from the frontmatter (the name if none).")
    description: str = Field(
        description="Description from the frontmatter, or the first paragraph."
    )
    tags: list[str] = Field(description="Tags from the frontmatter.")
    frontmatter: dict[str, Any] = Field(
        description="The whole YAML frontmatter as JSON (empty if missing or malformed; a "
        "text over 1,000 characters is cut when the frontmatter would crowd the answer: "
        "see note)."
    )
    content: str = Field(
        description="The markdown body (the file without its frontmatter), lines start_line "
        "to end_line: a long body comes in parts (see next_offset)."
    )
    start_line: int = Field(description=parts.START_LINE + " Lines of the body.")
    end_line: int = Field(description=parts.END_LINE)
    total_lines: int = Field(description=parts.TOTAL_LINES)
    next_offset: int | None = Field(description=parts.NEXT_OFFSET)
    note: str | None = Field(default=None, description=parts.PART_NOTE)
    path: str = Field(description="Absolute path of the command file.")
    is_dependency: bool = Field(
        description="Whether it is a helper of other commands (is_dependency: true)."
    )


class CommandSummary(BaseModel):
    """One command in a listing."""

    id: str = Field(description="The command's name: what get_command and trove get take.")
    name: str = Field(description="Command name (the file name without .md).")
    description: str = Field(description="The command's description.")
    tags: list[str] = Field(description="Tags from the frontmatter.")
    is_dependency: bool = Field(description="Whether it is a helper of other commands.")
    stale: bool = Field(
        default=False, description="The command's file changed after the index read it."
    )


class CommandList(BaseModel):
    """The answer to list_commands."""

    commands: list[CommandSummary] = Field(description="By name.")
    total: int = Field(description="How many commands the listing holds in all.")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the list was cut to fit.")
    freshness: Freshness = Field(description="How current the index this answer read is.")
