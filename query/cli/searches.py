"""The searches: `trove search QUERY` (every collection, fused), `search reports`,
`search commands`, `search workspace` (or `conversations`), `search elog` and `search web`.

Each prints its hits through a ``Printer`` (query.cli.output): a table, one line per hit
or tab-separated lines, by where stdout goes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from query import tools
from query.cli.base import AsJson, Offset, answer, ask, most, out, printer, settings, stale
from query.cli.failures import run
from query.cli.output import Block, Column

if TYPE_CHECKING:
    from query.commands import CommandSearchResponse
    from query.elog import ElogSearchResponse
    from query.reports import SearchReportsResult
    from query.search_all import SearchResponse
    from query.web import WebSearchResponse
    from query.workspace import WorkspaceSearchResponse


def search_web_command(
    query: Annotated[str, typer.Argument(help="What to search the web for.", show_default=False)],
    limit: Annotated[
        int, typer.Option("--limit", help=tools.WEB_LIMIT.cli_help("At most this many results"))
    ] = tools.WEB_LIMIT.default,
    time_range: Annotated[
        str | None,
        typer.Option("--time-range", help="Only pages from the last day|week|month|year."),
    ] = None,
    categories: Annotated[
        str | None,
        typer.Option("--categories", help="SearXNG categories, comma-separated [general]."),
    ] = None,
    language: Annotated[
        str | None, typer.Option("--language", help="Result language, e.g. de or all [en].")
    ] = None,
    page: Annotated[int | None, typer.Option("--page", help="SearXNG's result page (1+).")] = None,
    as_json: AsJson = False,
) -> None:
    """Search the web through the SearXNG instance set in [web] (with its fallbacks)."""
    from query.web import search_web

    cfg = settings()
    found = run(
        lambda: search_web(
            cfg,
            query,
            limit,
            categories=categories,
            language=language,
            time_range=time_range,
            pageno=page,
        )
    )
    answer(found, as_json, _show_web)


def _show_web(found: WebSearchResponse) -> None:
    shown = printer()
    if not found.results:
        shown.note(f"no web results for {found.query!r}")
        return
    shown.rows(
        f"web: {found.query} ({found.total} results)",
        [
            Column("#", right=True),
            Column("score", right=True),
            Column("engine"),
            Column("title", grow=True),
            Column("url", fold=True),
        ],
        [
            [str(n), "-" if r.score is None else f"{r.score:.2f}", r.engine, r.title, r.url]
            for n, r in enumerate(found.results, 1)
        ],
    )


def search_commands_command(
    query: Annotated[
        str, typer.Argument(help="Keywords or a description of the job.", show_default=False)
    ],
    max_results: Annotated[
        int, most(tools.SEARCH_COMMANDS_RESULTS, "At most this many results")
    ] = tools.SEARCH_COMMANDS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Find the command for a job: by file name, by content, by the reports it produced."""
    from query.commands import search_commands

    found = ask(lambda ctx: search_commands(ctx, query, max_results, offset))
    answer(found, as_json, lambda f: _show_commands(f, query))


def _show_commands(found: CommandSearchResponse, query: str) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.results)
    if not found.results:
        shown.note(f"no command matches {query!r}")
        return
    shown.rows(
        f"commands for {query!r}: {found.total_found} found in {found.search_time_ms:.0f} ms",
        [
            Column("score", right=True),
            Column("tier"),
            Column("name", fold=True),
            Column("description", grow=True),
            Column("why", grow=True),
        ],
        [
            [f"{r.score:.2f}", r.tier, r.name + stale(r), r.description, r.match_reason]
            for r in found.results
        ],
    )
    shown.more(found.next_offset)


def search_workspace_command(
    query: Annotated[
        str,
        typer.Argument(
            help="Text to find (literal, any case; failing that: every word, the words "
            "corrected, some of the words or their stems).",
            show_default=False,
        ),
    ],
    date_range: Annotated[
        str | None,
        typer.Option(
            "--date-range",
            help="YYYY-MM (that month's folder and its day folders) or YYYY-MM-DD (one day).",
            show_default=False,
        ),
    ] = None,
    max_results: Annotated[
        int, most(tools.SEARCH_WORKSPACE_RESULTS, "At most this many lines")
    ] = tools.SEARCH_WORKSPACE_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Find lines of conversations that hold some text, best matches first, newest first;
    the match column says how a line matched (exact, words, fuzzy, related).
    `trove search conversations` is the same command."""
    from query.workspace import search_workspace

    found = ask(lambda ctx: search_workspace(ctx, query, date_range, max_results, offset))
    answer(found, as_json, lambda f: _show_workspace(f, query))


def _show_workspace(found: WorkspaceSearchResponse, query: str) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.results)
    if not found.results:
        shown.note(f"no conversation line holds {query!r}")
        if found.note:
            shown.note(found.note)
        return
    if found.note:
        shown.note(found.note)
    rows = []
    for r in found.results:
        # The whole path when piped (for the next command), the file in its folder else.
        where = r.path if shown.shape == "tsv" else r.path.rsplit(f"/{r.conversation}/", 1)[-1]
        more = f" (+{r.conversation_hits - 1})" if r.conversation_hits > 1 else ""
        rows.append(
            [r.date, r.conversation + more, f"{where}:{r.line}{stale(r)}", r.match, r.excerpt]
        )
    shown.rows(
        f"conversations: {query!r}, {found.total_found} lines ({len(rows)} shown)",
        [
            Column("date"),
            Column("conversation", fold=True),
            Column("file:line", fold=True),
            Column("match"),
            Column("excerpt", grow=True),
        ],
        rows,
    )
    shown.more(found.next_offset)


def search_all_command(
    query: Annotated[
        str, typer.Argument(help="Words, a phrase or a question.", show_default=False)
    ],
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            help="Only this collection (repeatable): reports, commands, conversations, elog.",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only documents dated on or after this day (YYYY-MM-DD)."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", help="Only documents dated on or before this day (YYYY-MM-DD)."),
    ] = None,
    max_results: Annotated[
        int, most(tools.SEARCH_RESULTS, "At most this many hits")
    ] = tools.SEARCH_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Search every collection at once (also `trove search QUERY`): each with its own
    ranking, fused by reciprocal rank."""
    from query.search_all import search

    found = ask(lambda ctx: search(ctx, query, collection, since, until, max_results, offset))
    answer(found, as_json, lambda f: _show_all(f, query))


def _show_all(found: SearchResponse, query: str) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.hits)
    if found.note:
        shown.note(found.note)
    counts = ", ".join(f"{name} {n}" for name, n in found.by_collection.items())
    if not found.hits:
        shown.note(f"nothing found ({counts})")
        return
    title = f"{query!r}: the best {len(found.hits)} ({counts})"
    if shown.blocks_fit:
        # The title when the id does not hold it (an ELOG entry's), else the heading above
        # the match; the snippet on the line below.
        shown.blocks(
            title,
            [
                Block(
                    [h.collection, h.id + stale(h), (h.date or "")[:10], h.match],
                    h.title if h.title not in h.id else h.heading or "",
                    h.snippet,
                )
                for h in found.hits
            ],
        )
        shown.more(found.next_offset)
        return
    shown.rows(
        title,
        [
            Column("collection"),
            Column("id", fold=True),
            Column("date"),
            Column("match"),
            Column("title", grow=True),
            Column("snippet", grow=True),
        ],
        [
            [h.collection, h.id + stale(h), (h.date or "")[:10], h.match, h.title, h.snippet[:300]]
            for h in found.hits
        ],
    )
    shown.more(found.next_offset)


def search_reports_command(
    query: Annotated[
        str, typer.Argument(help="Text to find (the whole query, any case).", show_default=False)
    ],
    command_filter: Annotated[
        str | None,
        typer.Option(
            "--command-filter",
            "--command",
            help="Only the reports of this command.",
            show_default=False,
        ),
    ] = None,
    max_results: Annotated[
        int, most(tools.SEARCH_REPORTS_RESULTS, "At most this many reports")
    ] = tools.SEARCH_REPORTS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Find reports holding some text: most occurrences first, then newest."""
    from query.reports import search_reports

    found = ask(lambda ctx: search_reports(ctx, query, command_filter, max_results, offset))
    answer(found, as_json, lambda f: _show_reports(f, query))


def _show_reports(found: SearchReportsResult, query: str) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.results)
    if found.note:
        shown.note(found.note)
    if not found.results:
        if found.suggestions:
            shown.note("did you mean: " + ", ".join(found.suggestions))
        return
    match = found.results[0].match
    title = f"reports: {query!r}, the best {len(found.results)}"
    if match != "exact":
        title += f" (match: {match})"
    shown.rows(
        title,
        [
            Column("count", right=True),
            Column("date"),
            Column("command / report", fold=True),
            Column("excerpt", grow=True),
        ],
        [
            [
                str(r.count),
                (r.date or "")[:10],
                f"{r.command_name}/{r.report_name}{stale(r)}",
                r.excerpt,
            ]
            for r in found.results
        ],
    )
    shown.more(found.next_offset)


def search_elog_command(
    query: Annotated[
        str | None,
        typer.Argument(
            help="Words, device names or a regex (e.g. 'beam.*energy'); omit to list the "
            "newest entries in the dates and filters.",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="From this day (YYYY-MM-DD or ISO 8601).", show_default=False),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="Through the end of this day (YYYY-MM-DD or ISO 8601).",
            show_default=False,
        ),
    ] = None,
    category: Annotated[
        str | None,
        typer.Option(
            "--category", help="e.g. Problem, Info, Pikett (any case).", show_default=False
        ),
    ] = None,
    system: Annotated[
        str | None,
        typer.Option("--system", help="e.g. RF, Vacuum, Laser (any case).", show_default=False),
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option("--domain", help="e.g. Aramis, Athos, Linac2 (any case).", show_default=False),
    ] = None,
    max_results: Annotated[
        int, most(tools.SEARCH_ELOG_RESULTS, "At most this many entries")
    ] = tools.SEARCH_ELOG_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Search the ELOG logbook: text (ranked), a regex, or by date and filters (newest first)."""
    from query.elog import search_elog

    found = ask(
        lambda ctx: search_elog(
            ctx, query, since, until, category, system, domain, max_results, offset
        )
    )
    answer(found, as_json, lambda f: _show_elog(f, query))


def _show_elog(found: ElogSearchResponse, query: str | None) -> None:
    what = repr(query) if query and query.strip() else "entries"
    shown = printer()
    shown.freshness(found.freshness, found.hits)
    if not found.hits:
        if what == "entries":
            shown.note("no ELOG entry in these dates and filters")
        else:
            shown.note(f"no ELOG entry matches {what}")
        if found.note:
            shown.note(found.note)
        if found.suggestions:
            shown.note(f"closest indexed words: {', '.join(found.suggestions)}")
        return
    if found.corrected_query:
        what = f"{what} (searched as {found.corrected_query!r})"
    title = f"elog: {what}, {len(found.hits)} of {found.total} shown, ordered by {found.ranker}"
    ranked = found.ranker != "recency"
    if shown.shape != "table":
        if found.note:
            shown.note(found.note)
        shown.rows(
            title,
            [
                Column("id"),
                Column("date"),
                Column("author"),
                Column("kind"),
                Column("score"),
                Column("title"),
                Column("snippet"),
            ],
            [
                [
                    f"#{h.elog_id}{stale(h)}",
                    h.date[:16].replace("T", " "),
                    h.author,
                    "[" + " / ".join(v for v in (h.category, h.system, h.section) if v) + "]",
                    f"{h.score:.3f}" if ranked else "",
                    h.title,
                    h.snippet,
                ]
                for h in found.hits
            ],
        )
        shown.more(found.next_offset)
        return
    # Wide: each entry as a short block, its title on a line of its own.
    shown.title(title)
    if found.note:
        shown.note(found.note)
    for h in found.hits:
        kind = " / ".join(v for v in (h.category, h.system, h.section) if v)
        score = f"  score {h.score:.3f}" if ranked else ""
        score += f"  ({h.match})" if h.match and h.match != "words" else ""
        out.print("")
        out.print(
            f"#{h.elog_id}{stale(h)}  {h.date[:16].replace('T', ' ')}  {h.author}  [{kind}]{score}",
            markup=False,
        )
        out.print(f"  {h.title}", markup=False, style="bold")
        out.print(f"  {h.snippet}", markup=False)
    shown.more(found.next_offset)
