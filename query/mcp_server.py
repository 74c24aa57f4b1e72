"""trove's MCP server: the searches of query/ as MCP tools (README.md, "MCP").

`build_server(settings)` registers every tool explicitly. A tool's signature is its
input schema (limits and defaults from the specs), its return type a pydantic model
(structured output with an output schema), and every tool is marked read-only. The
query functions are synchronous; each call runs in a worker thread so the event loop
stays responsive. Failures are raised as `ToolError("CODE: what went wrong and what to
do")`; arguments the SDK rejects before a tool runs get a code too (`call_tool`).
"""

# No `from __future__ import annotations`: tool signatures are built inside
# build_server from values known only then (the logbook's allowed values), and the SDK
# reads them as objects.

import functools
import inspect
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from indexer.config import Settings
from indexer.errors import IndexLockedError, StoreError
from indexer.sources.elog import allowed_filter_values
from query import commands, elog, reports, search_all, tools, trove_version, web, workspace
from query.args import MAX_QUERY_CHARS
from query.context import QueryContext
from query.errors import TroveError
from query.mcp_arguments import and_list, argument_error
from query.web import WebSearcher

log = logging.getLogger(__name__)

T = TypeVar("T")

SERVER_NAME = "trove"
INSTRUCTIONS = (
    "trove searches local collections (search: all of them at once): analysis reports (search_reports, "
    "list_command_reports, get_report), the commands that produce them (search_commands, "
    "get_command, list_commands), past conversations (search_workspace, get_conversation), "
    "the SwissFEL "
    "electronic logbook (search_elog, get_elog_thread), and the web through SearXNG "
    "(search_web). Errors read 'CODE: what went wrong and what to do'."
)
# The tools only read (a missing index is built from the files, which change nothing a
# caller can see); search_web alone reaches outside this machine.
LOCAL_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WEB_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
# The search_workspace spec's wording (MCP-SEARCH-002), word for word.
DATE_RANGE_DESCRIPTION = (
    "Filter by date range. Supports YYYY-MM (month) or YYYY-MM-DD (day) format. Month "
    "format matches all days within that month. Examples: '2025-11' or '2025-11-10'"
)


class TroveServer(MCPServer):
    """An MCPServer whose argument errors carry trove's codes; owns the query state."""

    def __init__(self, settings: Settings, ctx: QueryContext | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trove_settings = settings
        self.ctx = QueryContext.from_settings(settings) if ctx is None else ctx
        self._web: WebSearcher | None = None
        self._web_lock = threading.Lock()
        self._schemas: dict[str, dict[str, Any]] = {}

    def web(self) -> WebSearcher:
        """The process's web searcher, made on first use (a bad [web] fails that search)."""
        with self._web_lock:
            if self._web is None:
                self._web = WebSearcher(self.trove_settings.web)
            return self._web

    def close(self) -> None:
        if self._web is not None:
            self._web.close()
        self.ctx.close()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        schemas = await self._input_schemas()
        schema = schemas.get(name)
        if schema is None:
            raise ToolError(
                f"Error executing tool {name}: NOT_FOUND: there is no such tool; the tools "
                f"are {and_list(schemas)}"
            )
        known = schema.get("properties", {})
        unknown = [key for key in arguments if key not in known]
        if unknown:  # the SDK would drop them silently
            raise ToolError(
                f"Error executing tool {name}: INVALID_ARGUMENT: {name} has no argument "
                f"{and_list(repr(k) for k in unknown)}; its arguments are {and_list(known)}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # the arguments failed the schema
                raise ToolError(
                    f"Error executing tool {name}: {argument_error(exc.__cause__, schema)}"
                ) from exc.__cause__
            raise

    async def _input_schemas(self) -> dict[str, dict[str, Any]]:
        if not self._schemas:
            self._schemas = {t.name: t.input_schema for t in await self.list_tools()}
        return self._schemas


async def run_query(call: Callable[..., T], *args: Any) -> T:
    """Run a query function in a worker thread; trove's errors become ToolErrors."""
    try:
        return await anyio.to_thread.run_sync(functools.partial(call, *args))
    except TroveError as exc:
        raise ToolError(str(exc)) from exc
    except IndexLockedError as exc:
        raise ToolError(f"SEARCH_TIMEOUT: {exc}") from exc
    except StoreError as exc:
        raise ToolError(
            f"DIRECTORY_NOT_FOUND: the index cannot be used: {exc} (check [index] dir)"
        ) from exc


# Used as `Annotated[str, _query(...)]`: a call may stand in Annotated's metadata, where a
# type checker allows it, but not as a whole annotation.
def _query(description: str, examples: list[str]) -> Any:
    return Field(
        description=description,
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        examples=examples,
    )


# The page of hits (query/paging.py) and the part of a document (query/parts.py); the
# limits and meanings are declared once, in query/tools.py.
OFFSET = Annotated[int, tools.HIT_OFFSET.mcp_field()]
LIST_OFFSET = Annotated[int, tools.LIST_OFFSET.mcp_field()]
PART_OFFSET = Annotated[int | None, tools.PART_OFFSET.mcp_field()]
PART_LIMIT = Annotated[int | None, tools.PART_LIMIT.mcp_field()]


def _choices(attribute: str, values: list[str], examples: str) -> str:
    if not values:
        return f"Optional: filter by {attribute} (free text in this logbook), e.g. {examples}."
    listed = ", ".join(f"'{v}'" for v in values)
    return (
        f"Optional: filter by {attribute}, one of: {listed}. Matched without regard to case; "
        "older entries may also hold values outside this list."
    )


def elog_filter_values(settings: Settings) -> dict[str, list[str]]:
    """Allowed Category/System/Domain values, as search_elog checks them: the logbook's
    section of ``[sources] elog_config`` (else its first logbook section), else SwissFEL's."""
    config, root = settings.sources.elog_config, settings.source_root("elog")
    values = allowed_filter_values(config, root.name if root else None)
    if config is not None and not any(values.values()):
        values = allowed_filter_values(config)
    return values


def build_server(settings: Settings, ctx: QueryContext | None = None) -> TroveServer:
    """The MCP server over these settings (and this query context, else one of its own),
    with every tool of README.md's "MCP" registered."""
    server = TroveServer(
        settings,
        ctx,
        name=SERVER_NAME,
        title="trove: local search",
        version=trove_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    ctx = server.ctx

    def tool(fn: Callable[..., Any], annotations: ToolAnnotations = LOCAL_READ) -> None:
        server.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)

    # ------------------------------------------------------------------ reports

    async def search_reports(
        query: Annotated[
            str,
            _query(
                "Search query - words, a phrase or a plain-language question (case-insensitive). "
                "Reports holding the whole query rank first; if none does, reports holding all "
                "its words; then reports holding some of its words or their inflections; "
                "misspelt words are corrected.",
                ["decode timeout", "proxy configuration", "why do joins fail behind a proxy"],
            ),
        ],
        command_filter: Annotated[
            str | None,
            Field(
                description="Optional: filter results to reports from a specific command "
                "(its folder name; search_commands and list_commands show command names).",
                examples=["analyze_zoom_speech_sdk_log", "proxy-slow-meeting-analysis-command"],
            ),
        ] = None,
        max_results: Annotated[
            int, tools.SEARCH_REPORTS_RESULTS.mcp_field()
        ] = tools.SEARCH_REPORTS_RESULTS.default,
        offset: OFFSET = 0,
    ) -> reports.SearchReportsResult:
        """Search the analysis reports (markdown files kept in one folder per command that
        produced them) for a word, phrase or question, case-insensitively. It answers in
        tiers, the first that finds anything: each hit's `match` says which. 'exact': the
        report holds the whole query (ranked by how often, then newest); 'words': it holds
        every word, any order; 'related': some of the words or words of the same stem (more
        of the query's words first, then BM25; stop words never match alone); 'fuzzy':
        misspelt words were replaced by the closest indexed words (`corrected_query`).
        `note` says how the query was matched and, when nothing matched, which words no
        report holds (`suggestions`: the closest indexed words). Each hit has an excerpt
        around the first match, its line and heading (to cite it, or to read it there with
        get_report's offset), its date and path. next_offset asks for the next page. Then
        read one with get_report, or browse one command's reports with
        list_command_reports."""
        return await run_query(
            reports.search_reports, ctx, query, command_filter, max_results, offset
        )

    async def list_command_reports(
        command_name: Annotated[
            str,
            Field(
                description="The command whose reports to list (its folder name, as "
                "search_reports or list_commands show it).",
                examples=["analyze_zoom_speech_sdk_log"],
            ),
        ],
        max_results: Annotated[
            int, tools.LIST_REPORTS_RESULTS.mcp_field()
        ] = tools.LIST_REPORTS_RESULTS.default,
        offset: LIST_OFFSET = 0,
    ) -> reports.CommandReports:
        """List the reports one command produced, newest first (by the date in the file
        name; undated reports last), with date, size, path and link. A command with no
        reports folder gets NOT_FOUND. next_offset asks for the next page. Read one with
        get_report."""
        return await run_query(reports.list_command_reports, ctx, command_name, max_results, offset)

    async def get_report(
        command_name: Annotated[
            str, Field(description="The command that produced the report (its folder name).")
        ],
        report_name: Annotated[
            str,
            Field(
                description="The report's file name, as search_reports or "
                "list_command_reports return it (with .md)."
            ),
        ],
        offset: PART_OFFSET = None,
        limit: PART_LIMIT = None,
    ) -> reports.Report:
        """Get one report's markdown, by its command and file name as search_reports or
        list_command_reports return them, with its date, path and link. A long report
        comes in parts of whole lines: content holds start_line to end_line of
        total_lines; ask again with offset=next_offset for the next (null: the end). To
        read around a search hit, give offset a little before its line."""
        return await run_query(reports.get_report, ctx, command_name, report_name, offset, limit)

    # ------------------------------------------------------------------ commands

    async def search_commands(
        query: Annotated[
            str,
            _query(
                "Search query - keywords or natural language description of what you're "
                "looking for",
                ["speech SDK log analysis", "proxy configuration", "meeting join issue"],
            ),
        ],
        max_results: Annotated[
            int, tools.SEARCH_COMMANDS_RESULTS.mcp_field()
        ] = tools.SEARCH_COMMANDS_RESULTS.default,
        offset: OFFSET = 0,
    ) -> commands.CommandSearchResponse:
        """Find the command (a markdown playbook with YAML frontmatter) for a job, in three
        tiers: tier1 matches the command's file name, tier2 its title, description, tags
        and text (fuzzy), tier3 the reports it produced for similar problems. Scores are
        0-1, best first, each with the reason it matched. Helper commands
        (is_dependency) are left out. next_offset asks for the next page. Read the one you
        pick with get_command."""
        return await run_query(commands.search_commands, ctx, query, max_results, offset)

    async def get_command(
        name: Annotated[
            str,
            Field(
                description="The command's name: its file name without .md, as "
                "search_commands or list_commands return it.",
                examples=["analyze_zoom_speech_sdk_log"],
            ),
        ],
        offset: PART_OFFSET = None,
        limit: PART_LIMIT = None,
    ) -> commands.CommandDetail:
        """Get one command: title, description, tags, the whole frontmatter and the
        markdown body. A long body comes in parts of whole lines (start_line to end_line
        of total_lines; ask again with offset=next_offset). An unknown name gets
        NOT_FOUND with the closest names."""
        return await run_query(commands.get_command, ctx, name, offset, limit)

    async def list_commands(
        include_dependencies: Annotated[
            bool,
            Field(
                description="Also list helper commands that other commands use "
                "(is_dependency: true in their frontmatter)."
            ),
        ] = False,
        max_results: Annotated[
            int, tools.LIST_COMMANDS_RESULTS.mcp_field()
        ] = tools.LIST_COMMANDS_RESULTS.default,
        offset: LIST_OFFSET = 0,
    ) -> commands.CommandList:
        """List every command (a markdown playbook for a job) by name, with its description
        and tags; helper commands only with include_dependencies. A long list comes in
        pages (next_offset). Read one with get_command."""
        return await run_query(
            commands.list_commands, ctx, include_dependencies, max_results, offset
        )

    # ------------------------------------------------------------------ conversations

    async def search_workspace(
        query: Annotated[
            str,
            _query(
                "Text to find in past conversations: a word, phrase or question, matched "
                "case-insensitively within one line (as written first; see the tiers).",
                ["authentication", "token expiry"],
            ),
        ],
        date_range: Annotated[
            str | None,
            Field(description=DATE_RANGE_DESCRIPTION, examples=["2025-11", "2025-11-10"]),
        ] = None,
        max_results: Annotated[
            int, tools.SEARCH_WORKSPACE_RESULTS.mcp_field()
        ] = tools.SEARCH_WORKSPACE_RESULTS.default,
        offset: OFFSET = 0,
    ) -> workspace.WorkspaceSearchResponse:
        """Search past conversations (conversations/{YYYY-MM or YYYY-MM-DD}/{NNN-slug}/
        files) for a text, line by line: one result per matching line with the
        conversation, its date folder, the file, line number and an excerpt. It answers in
        tiers, the first that finds any line: match 'exact' (the query as written;
        whole-word matches first, then newest), 'words' (every word, any order),
        'fuzzy' (words no conversation holds replaced by the closest indexed words, see
        corrected_query), 'related' (some of the words or words of the same stem; stop
        words never match alone; most words first). note says how the query was matched
        or why nothing did (unknown words, with suggestions; a date_range naming no
        folder); total_found counts the matching lines of the tier that answered. Each hit's
        id (file:line) opens it with get_conversation; next_offset asks for the next
        page."""
        return await run_query(
            workspace.search_workspace, ctx, query, date_range, max_results, offset
        )

    async def get_conversation(
        id: Annotated[
            str,
            Field(
                description="A conversation file: a search_workspace hit's id "
                "(2025-11-18/001-weekly-planning/conversation.md:16, which starts the part "
                "at line 16) or the same path without its line.",
                examples=["2025-11-18/001-weekly-planning/conversation.md:16"],
            ),
        ],
        offset: PART_OFFSET = None,
        limit: PART_LIMIT = None,
    ) -> workspace.Conversation:
        """Get a conversation file, by the id a search_workspace (or search) hit carries.
        A long file comes in parts of whole lines: content holds start_line to end_line
        of total_lines; ask again with offset=next_offset for the next (null: the end).
        An id ending in :LINE starts at that line unless offset says otherwise."""
        return await run_query(workspace.get_conversation, ctx, id, offset, limit)

    # ------------------------------------------------------------------ ELOG

    allowed = elog_filter_values(settings)

    async def search_elog(
        query: Annotated[
            str | None,
            Field(
                description="Search text or regex pattern (e.g., 'beam dump', 'RF.*fault'). "
                "A query with .*, .+, .?, a bounded repeat ({3}, {0,3}), |, [...], \\d, \\w, "
                "\\s, \\b, a leading ^ or a trailing $ is a regular expression "
                "(case-insensitive, over title and text); any other is text: plain words or a "
                "question, any word form, typos forgiven. Omit to search by filters/dates only.",
                max_length=MAX_QUERY_CHARS,
                examples=["beam dump", "RF.*fault", "SATUN18"],
            ),
        ] = None,
        since: Annotated[
            str | None,
            Field(
                description="Start date for time range (YYYY-MM-DD format: from the start of "
                "that day in the logbook's own time; YYYY-MM or an ISO 8601 time such as "
                "2025-10-06T08:00:00+02:00 also work). Optional.",
                examples=["2025-10-01"],
            ),
        ] = None,
        until: Annotated[
            str | None,
            Field(
                description="End date for time range (YYYY-MM-DD format, inclusive: through "
                "the end of that day in the logbook's own time; YYYY-MM or an ISO 8601 time "
                "also work). Optional.",
                examples=["2025-10-07"],
            ),
        ] = None,
        category: Annotated[
            str | None,
            Field(description=_choices("category", allowed["Category"], "'Problem'")),
        ] = None,
        system: Annotated[
            str | None, Field(description=_choices("system", allowed["System"], "'RF'"))
        ] = None,
        domain: Annotated[
            str | None, Field(description=_choices("domain", allowed["Domain"], "'Aramis'"))
        ] = None,
        max_results: Annotated[
            int, tools.SEARCH_ELOG_RESULTS.mcp_field()
        ] = tools.SEARCH_ELOG_RESULTS.default,
        offset: OFFSET = 0,
    ) -> elog.ElogSearchResponse:
        """Search SwissFEL ELOG (electronic logbook) entries, ranked by relevance. Supports
        text search, regex patterns, time ranges and attribute filters (category, system,
        domain); all are optional and combine (no query: newest first). Each hit has its
        elog_id, title, date, author, attributes, a snippet and a link; get_elog_thread
        shows its thread.

        Text forgives: any word form matches (klystrons finds klystron); entries holding
        more of the query's words rank first, but one word missing never empties the
        answer; stop words never match alone; a word no entry holds is replaced by the
        closest indexed word (corrected_query, suggestions). Each text hit's match says
        how: words (every word), related (some of them), fuzzy (after a correction). note
        explains corrections and empty answers (words no entry holds, or the filter or
        date range that left nothing). next_offset asks for the next page."""
        return await run_query(
            elog.search_elog,
            ctx,
            query,
            since,
            until,
            category,
            system,
            domain,
            max_results,
            offset,
        )

    async def get_elog_thread(
        message_id: Annotated[
            int, Field(ge=1, description="ELOG message ID to get thread for (a hit's elog_id).")
        ],
        include_replies: Annotated[
            bool, Field(description="Include reply chain (descendants). Default: true.")
        ] = True,
        include_parents: Annotated[
            bool, Field(description="Include parent chain (ancestors). Default: true.")
        ] = True,
    ) -> elog.ElogThreadResponse:
        """Get the conversation thread of an ELOG entry, in thread order, each entry with
        its depth (0 for the thread's root). Both flags true: the whole thread (the root
        and every reply under it); parents only: the chain from the root down to the
        entry; replies only: the entry and the replies under it."""
        return await run_query(
            elog.get_elog_thread, ctx, message_id, include_replies, include_parents
        )

    # ------------------------------------------------------------------ web

    async def search_web(
        query: Annotated[
            str,
            _query(
                "The search query string to look up on the web",
                ["sqlite fts5 tokenizer", "whoosh python"],
            ),
        ],
        limit: Annotated[int, tools.WEB_LIMIT.mcp_field()] = tools.WEB_LIMIT.default,
    ) -> web.WebSearchResponse:
        """Search the web through SearXNG (a metasearch engine): titles, content snippets
        and URLs, in SearXNG's order. Use it for current or general information the local
        collections do not hold."""
        return await run_query(lambda: server.web().search(query, limit))

    # ------------------------------------------------------------------ everything

    async def search(
        query: Annotated[
            str,
            _query(
                "Words, a phrase or a question, searched in every collection with that "
                "collection's own ranking.",
                ["proxy timeout", "klystron interlock"],
            ),
        ],
        collections: Annotated[
            list[search_all.Collection] | None,
            Field(
                description="Optional: only these collections (default: all of reports, "
                "commands, conversations, elog)."
            ),
        ] = None,
        since: Annotated[
            str | None,
            Field(
                description="Optional: only documents dated on or after this day (YYYY-MM-DD); "
                "commands, which have no date, are then left out.",
                examples=["2025-10-01"],
            ),
        ] = None,
        until: Annotated[
            str | None,
            Field(
                description="Optional: only documents dated on or before this day (YYYY-MM-DD).",
                examples=["2025-12-31"],
            ),
        ] = None,
        max_results: Annotated[
            int, tools.SEARCH_RESULTS.mcp_field()
        ] = tools.SEARCH_RESULTS.default,
        offset: OFFSET = 0,
    ) -> search_all.SearchResponse:
        """Search every collection at once: reports, commands, conversations and the ELOG
        logbook. Each is searched with its own ranking and the lists are fused by
        reciprocal rank (1 / (60 + rank)), so no collection's scores dominate. Each hit
        says its `collection`, and its `id` is what that collection's get tool takes
        (get_report: command/report; get_command: name; get_conversation: path:line;
        get_elog_thread: the ELOG id); `match` is how it matched there, `line` and
        `heading` where (reports and conversations). `by_collection` counts the matches
        per collection; `note` names collections that could not be searched; next_offset
        asks for the next page. Use the per-collection tools for their filters."""
        return await run_query(
            search_all.search, ctx, query, collections, since, until, max_results, offset
        )

    for fn in (
        search_reports,
        list_command_reports,
        get_report,
        search_commands,
        get_command,
        list_commands,
        search_workspace,
        get_conversation,
        search_elog,
        get_elog_thread,
        search,
    ):
        tool(fn)
    tool(search_web, WEB_READ)
    return server
