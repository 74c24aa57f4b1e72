"""The answers of search_elog and get_elog_thread, as pydantic models (their MCP schemas)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, Field

from query import paging
from query.freshness import Freshness


class Shown(TypedDict):
    """What a hit and a thread entry both show of an entry, as stored ("" if absent)."""

    title: str
    date: str
    author: str
    category: str
    system: str
    domain: str
    section: str


def shown(fields: Mapping[str, Any]) -> Shown:
    """An entry's Shown fields, from its stored fields."""
    get = fields.get
    return Shown(
        title=get("title") or "",
        date=get("date") or "",
        author=get("author") or "",
        category=get("category") or "",
        system=get("system") or "",
        domain=get("domain") or "",
        section=get("section") or "",
    )


Ranker = Literal["recency", "bm25", "bm25+lexical", "bm25+semantic", "regex"]
Match = Literal["words", "related", "fuzzy"]


class ElogHit(BaseModel):
    """One logbook entry that answers a search."""

    id: str = Field(description="The entry's id, as every search's hits give it.")
    elog_id: int = Field(description="The entry's message id (for get_elog_thread).")
    title: str = Field(description="The entry's title.")
    date: str = Field(description="When it was written: ISO 8601 with the logbook's offset.")
    author: str
    category: str = Field(description="As written in the entry (may be empty).")
    system: str = Field(description="As written; multi-choice values read 'a | b'.")
    domain: str
    section: str
    snippet: str = Field(
        description="The passage of the body that matches (its start when nothing in the "
        "body does, or when there is no query)."
    )
    score: float = Field(
        description="The ranker's score (higher is better; 0 when ordered by date)."
    )
    link: str = Field(description="[elog] link_base_url + id; a file:// URL when unset.")
    match: Match | None = Field(
        default=None,
        description="How a text query matched the entry: words (it holds every word of "
        "the query, or another form of it: klystrons/klystron), related (some of them), "
        "fuzzy (after a word no entry holds was replaced by the closest one that does). "
        "Null for a regex or no query.",
    )
    stale: bool = Field(
        default=False,
        description="The logbook file the entry is in changed after the index read it (an "
        "entry of that day was added, edited or deleted): get_elog_thread shows the index's "
        "view; the entry may have changed.",
    )


class ElogSearchResponse(BaseModel):
    """The answer to search_elog."""

    hits: list[ElogHit] = Field(description="The best entries, best (or newest) first.")
    total: int = Field(description="How many entries matched, before the max_results cut.")
    ranker: Ranker = Field(
        description="What ordered the hits: recency (no query, newest first), bm25, "
        "bm25+lexical or bm25+semantic (text), regex (a regular expression)."
    )
    note: str | None = Field(
        default=None,
        description="How the query was matched when not word for word (a word corrected, "
        "stop words left out), and why an answer is empty: the words no entry holds, or "
        "the filter or date range that left no entry. Null otherwise.",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Indexed words closest to the query's words that no entry holds.",
    )
    corrected_query: str | None = Field(
        default=None,
        description="The query as searched after correcting words no entry holds (null: "
        "none was corrected).",
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness = Field(description="How current the index this answer read is.")


class ElogThreadEntry(BaseModel):
    """One entry of a thread."""

    elog_id: int
    depth: int = Field(description="Replies between the thread's root and this entry.")
    title: str
    date: str
    author: str
    category: str
    system: str
    domain: str
    section: str
    in_reply_to: int | None = Field(description="The parent's id (null on the root).")
    replies: list[int] = Field(description="Ids of its direct replies found in the logbook.")
    body: str = Field(description="The text a reader sees (tags stripped).")
    attachments: list[str]
    link: str
    cut: bool = Field(
        default=False,
        description="The body was cut to keep the answer's size (see the answer's note): "
        "get_elog_thread with this elog_id and include_replies and include_parents false "
        "reads it whole.",
    )
    stale: bool = Field(
        default=False,
        description="The logbook file the entry is in changed after the index read it.",
    )


class ElogThreadResponse(BaseModel):
    """The answer to get_elog_thread."""

    root_id: int = Field(description="The id of the thread's first entry.")
    message_id: int = Field(description="The entry that was asked for.")
    entries: list[ElogThreadEntry] = Field(
        description="Depth first from the root, replies in id order."
    )
    missing: list[int] = Field(
        default_factory=list,
        description="Ids the thread's links name that the logbook does not hold.",
    )
    note: str | None = Field(
        default=None, description="Set when bodies were cut to keep the answer's size."
    )
    freshness: Freshness = Field(description="How current the index this answer read is.")
