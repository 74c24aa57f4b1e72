"""The answers of search_reports, list_command_reports and get_report: pydantic models
(their MCP output schemas)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from query import paging, parts
from query.freshness import Freshness

Match = Literal["exact", "words", "related", "fuzzy"]


class ReportHit(BaseModel):
    id: str = Field(description="command/report: what get_report and trove get take")
    report_name: str = Field(description="Report file name")
    command_name: str = Field(description="Command that generated this report")
    date: str | None = Field(
        description="Report date from the file name (ISO 8601, midnight UTC), or null"
    )
    excerpt: str = Field(description="The text around the first match; '...' where cut")
    line: int = Field(description="The 1-based line of the match the excerpt shows")
    heading: str | None = Field(
        description="The nearest markdown heading above that line (without its #'s), or null"
    )
    link: str = Field(description="URL of the report, or its file:// URL")
    path: str = Field(description="Full file path to the report")
    count: int = Field(
        description="Occurrences of what matched: the query ('exact'), its words ('words'), "
        "the words or words of the same stem it holds ('related')"
    )
    stale: bool = Field(
        default=False,
        description="The file changed after the index read it (the excerpt is from the file "
        "as it is now; its rank and count from the index): get_report shows it as it is",
    )
    match: Match = Field(
        description="How the report matched; the first tier that finds anything answers: "
        "'exact', the report holds the whole query (case-insensitive); 'words', no report "
        "did, and this one holds every word of it, in any order; 'related', no report "
        "held every word, and this one holds some of the words or words of the same stem "
        "(stop words never match alone), more of the query's words first; 'fuzzy', words "
        "no report holds were replaced by the closest indexed words (corrected_query)"
    )


class SearchReportsResult(BaseModel):
    results: list[ReportHit] = Field(
        description="The reports that match, best first (most occurrences, then newest; "
        "'related': most of the query's words, then BM25 over stems, then newest)"
    )
    note: str | None = Field(
        default=None,
        description="How the query was matched (null for 'exact'); when nothing matched, "
        "which words no report holds and the closest indexed words",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Indexed words closest to the query's words that no report holds",
    )
    corrected_query: str | None = Field(
        default=None, description="The query as corrected, when match is 'fuzzy'"
    )
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    freshness: Freshness = Field(description="How current the index this answer read is")


class ReportInfo(BaseModel):
    id: str = Field(description="command/report: what get_report and trove get take")
    report_name: str
    date: str | None = Field(description="Date from the file name (ISO 8601), or null")
    path: str
    link: str
    size: int = Field(description="Size in bytes")


class CommandReports(BaseModel):
    command_name: str
    reports: list[ReportInfo] = Field(description="Newest first; undated reports last")
    total: int = Field(description="Reports of this command; reports holds the newest of them")
    next_offset: int | None = Field(default=None, description=paging.NEXT_OFFSET_DESCRIPTION)
    note: str | None = Field(default=None, description="Set when the list was cut to fit")
    freshness: Freshness = Field(
        description="The listing reads the folder itself: as_of is the time of the call"
    )


class Report(BaseModel):
    id: str = Field(description="command/report: what search hits call it")
    report_name: str
    command_name: str
    date: str | None = Field(description="Date from the file name (ISO 8601), or null")
    path: str
    link: str
    content: str = Field(
        description="The report's markdown, lines start_line to end_line (a long report "
        "comes in parts: see next_offset)"
    )
    start_line: int = Field(description=parts.START_LINE)
    end_line: int = Field(description=parts.END_LINE)
    total_lines: int = Field(description=parts.TOTAL_LINES)
    next_offset: int | None = Field(description=parts.NEXT_OFFSET)
    note: str | None = Field(default=None, description=parts.PART_NOTE)
    size: int = Field(description="Size of the file in bytes")
    truncated: bool = Field(
        description=f"The file is larger than {parts.READ_MAX_BYTES // 1048576} MB: the lines "
        "past that are not served"
    )
