"""What search_workspace answers: its hits and the response around them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from query import paging, parts
from query.freshness import Freshness
from query.workspace import limits

Match = Literal["exact", "words", "related", "fuzzy"]


class WorkspaceHit(BaseModel):
    """One line of a conversation file that holds the query."""

    id: str = Field(
        description="The file's path relative to the conversations folder, and the line: "
        "2025-11-18/001-weekly-planning/conversation.md:16 (what get_conversation takes)."
    )
    conversation: str = Field(description="The conversation's folder name (e.g. 001-debug-auth).")
    date: str = Field(
        description="The date folder the conversation is in, as named: 2025-11 (a month "
        "folder) or 2025-11-10 (a day folder)."
    )
    path: str = Field(description="Absolute path of the file.")
    line: int = Field(description="Line number in the file (1-based).")
    heading: str | None = Field(
        description="The nearest markdown heading above the line (without its #'s), or null."
    )
    excerpt: str = Field(
        description="The matching line (long lines cut to the part around the match, "
        "marked with …)."
    )
    score: float = Field(
        description="Relevance 0-1, case ignored: 1 when the query matches whole words; "
        "less at the start or end of a word, least inside one."
    )
    conversation_hits: int = Field(
        description="How many lines of this conversation match (results show at most "
        f"{limits.LINES_PER_CONVERSATION} per conversation while others match too)."
    )
    match: Match = Field(
        default="exact",
        description="How the line matched; the first tier that finds any line answers: "
        "'exact', the line holds the query as written (case-insensitive); 'words', no "
        "line did, and this one holds every word of it, in any order; 'related', no line "
        "held every word, and this one holds some of the words or words of the same stem "
        "(stop words never match alone), more of the query's words first; 'fuzzy', words "
        "no conversation holds were replaced by the closest indexed words "
        "(corrected_query).",
    )
    stale: bool = Field(
        default=False,
        description="The file changed after the index read it (the excerpt is the line as it "
        "is now; the line number may have moved).",
    )


class WorkspaceSearchResponse(BaseModel):
    """The answer to search_workspace."""

    results: list[WorkspaceHit] = Field(
        description="Best first; ties newest first (date folder, then conversation); a "
        "conversation's first 3 lines before its other lines."
    )
    total_found: int = Field(
        description="How many lines match in all (in the tier that answered), before max_results."
    )
    note: str | None = Field(
        default=None,
        description="How the query was matched (null for 'exact'); when nothing matched, "
        "why: which words no conversation holds and the closest indexed words, or that "
        "the date_range names no conversation folder.",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Indexed words closest to the query's words that no conversation holds.",
    )
    corrected_query: str | None = Field(
        default=None, description="The query as corrected, when match is 'fuzzy'."
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness = Field(description="How current the index this answer read is.")


class Conversation(BaseModel):
    """A conversation file, or a part of it (get_conversation)."""

    id: str = Field(
        description="The file's path relative to the conversations folder, as hits give it "
        "(without their :LINE)."
    )
    conversation: str = Field(description="The conversation's folder name.")
    date: str = Field(description="Its date folder, as named (2025-11 or 2025-11-10).")
    path: str = Field(description="Absolute path of the file.")
    content: str = Field(
        description="The file's text, lines start_line to end_line: a long file comes in "
        "parts (see next_offset)."
    )
    start_line: int = Field(description=parts.START_LINE)
    end_line: int = Field(description=parts.END_LINE)
    total_lines: int = Field(description=parts.TOTAL_LINES)
    next_offset: int | None = Field(description=parts.NEXT_OFFSET)
    note: str | None = Field(default=None, description=parts.PART_NOTE)
    size: int = Field(description="Size of the file in bytes.")
    truncated: bool = Field(
        description=f"The file is larger than {parts.READ_MAX_BYTES // 1048576} MB: the lines "
        "past that are not served."
    )
