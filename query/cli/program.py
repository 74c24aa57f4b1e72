"""The `trove` command line: parses arguments, calls the library, formats the answer.

Exit codes: 0 success; 2 invalid input (the message names the problem); 1 anything else.
Logs and progress go to stderr; stdout carries only the answer (and, under --json, the
error as JSON when there is one).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from indexer.config import ConfigError, Settings, load_settings
from indexer.sources.registry import SOURCES
from indexer.status import human_size, local_time
from query import budget, tools, trove_version
from query.cli.failures import CONFIG_CODE, USAGE_CODE, err, fail, run
from query.cli.output import Column, Printer, pick_shape
from query.cli.root import HELP, RootGroup

if TYPE_CHECKING:
    from query.context import QueryContext

__all__ = ["app", "err", "fail", "main", "out", "run"]

T = TypeVar("T")
AsJson = Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")]
Offset = Annotated[
    int,
    typer.Option(
        "--offset",
        help=tools.HIT_OFFSET.cli_help(
            "Hits to skip: 0 for the first page; the next page's offset is printed (or in "
            "--json, next_offset)"
        ),
    ),
]
PartOffset = Annotated[
    int | None,
    typer.Option(
        "--offset",
        help="The first line to print (1-based); a long document comes in parts and the "
        "next part's offset is printed.",
        show_default=False,
    ),
]
PartLimit = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help=tools.PART_LIMIT.cli_help(
            "How many lines to print (default: with --offset, a part of about "
            f"{budget.DEFAULT_CHARS:,} characters; without, the whole document)"
        ),
        show_default=False,
    ),
]
# -h as well as --help, on every command.
HELP_OPTIONS = {"help_option_names": list(HELP)}

app = typer.Typer(
    name="trove",
    help="trove: a persistent full-text index of reports, commands, conversations and ELOG "
    "logbooks, searched by agents (MCP), people (this CLI) and programs (Python API).",
    cls=RootGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=HELP_OPTIONS,
)


class _SearchGroup(TyperGroup):
    """`trove search QUERY` (no collection) searches every collection: a first word that
    names no subcommand is the query of `trove search all`."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "all", self.commands["all"], args
        return super().resolve_command(ctx, args)


search_app = typer.Typer(
    help="Search every collection (trove search QUERY), or one (or the web).",
    no_args_is_help=True,
    cls=_SearchGroup,
    context_settings=HELP_OPTIONS,
)
app.add_typer(search_app, name="search")
list_app = typer.Typer(
    help="List the reports of a command, or the commands.",
    no_args_is_help=True,
    context_settings=HELP_OPTIONS,
)
app.add_typer(list_app, name="list")
get_app = typer.Typer(
    help="Show one report or one command in full.",
    no_args_is_help=True,
    context_settings=HELP_OPTIONS,
)
app.add_typer(get_app, name="get")

# emoji=False: a name holding ":warning:" prints as written (markup=False leaves emoji
# codes on).
out = Console(highlight=False, soft_wrap=True, emoji=False)


class _State:
    config: str | None = None
    table = False


def printer() -> Printer:
    """How this invocation prints hits (see query.cli.output)."""
    return Printer(out, pick_shape(_State.table))


def settings() -> Settings:
    try:
        return load_settings(_State.config)
    except ConfigError as exc:
        fail(str(exc), 2, CONFIG_CODE)


def ask(call: Callable[[QueryContext], T]) -> T:
    """Answer one query with this process's QueryContext; errors become exit codes."""
    from query.context import QueryContext

    ctx = QueryContext.from_settings(settings())
    try:
        return run(lambda: call(ctx))
    finally:
        ctx.close()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _model(found: Any) -> Any:
    return found.model_dump()


def answer(
    found: T, as_json: bool, show: Callable[[T], None], data: Callable[[T], Any] = _model
) -> None:
    """How every command answers: under --json, ``data(found)`` (the answer's model) as
    JSON on stdout; else ``show(found)``, the view for people."""
    if as_json:
        print_json(data(found))
    else:
        show(found)


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"trove {trove_version()}\n")
        raise typer.Exit()


@app.callback()
def main_options(
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help="Config file (default: $TROVE_CONFIG, then ./trove.toml).",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Log debug details to stderr.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Log only errors.")] = False,
    table: Annotated[
        bool,
        typer.Option(
            "--table", help="Print hits as tables even when piped or on a narrow terminal."
        ),
    ] = False,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print trove's version and exit.",
            is_eager=True,
            callback=_show_version,
        ),
    ] = False,
) -> None:
    """Global options go anywhere on the line: `trove status --config F` is
    `trove --config F status`."""
    _State.config = config
    _State.table = table
    level = logging.DEBUG if debug else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def _check_collections(names: list[str] | None) -> list[str] | None:
    for name in names or ():
        if name not in SOURCES:
            fail(f"unknown collection '{name}'; known: {', '.join(SOURCES)}", 2, USAGE_CODE)
    return names or None


@app.command()
def reindex(
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            help=f"Only this collection (repeatable): {', '.join(SOURCES)}.",
            show_default=False,
        ),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Rebuild from scratch.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Bring the indexes in line with the files: only what changed (--full rebuilds)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from indexer.reindex import reindex as do_reindex

    names = _check_collections(collection)
    cfg = settings()
    with Progress(
        TextColumn("{task.description:<14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done, total=total)

        summaries = run(lambda: do_reindex(cfg, names, full=full, progress=progress))
    answer(
        summaries,
        as_json,
        lambda found: _show_reindex(found, full),
        lambda found: [s.as_dict() for s in found],
    )
    if any(s.error for s in summaries):
        raise typer.Exit(1)


def _show_reindex(summaries: list[Any], full: bool) -> None:
    table = Table(title="trove reindex" + (" --full" if full else ""))
    for col in ("collection", "added", "updated", "deleted", "unchanged", "skipped", "seconds"):
        table.add_column(col, justify="left" if col == "collection" else "right")
    for s in summaries:
        if s.error:
            table.add_row(s.collection + " (failed)", *["-"] * 6)
            continue
        table.add_row(
            s.collection + (" (no source folder)" if s.missing_root else ""),
            str(s.added),
            str(s.updated),
            str(s.deleted),
            str(s.unchanged),
            str(sum(s.skipped.values())),
            f"{s.seconds:.2f}",
        )
    out.print(table)
    for s in summaries:
        for reason, count in sorted(s.skipped.items()):
            out.print(f"  {s.collection}: skipped {count} ({reason})", markup=False)
        for warning in s.warnings:
            out.print(f"  {s.collection}: {warning}", markup=False)
    for s in summaries:
        if s.error:
            err.print(f"trove: {s.collection}: {s.error}", markup=False)


def _folder_option(name: str, what: str) -> Any:
    return typer.Option(f"--{name}", help=what, show_default=False, metavar="DIR")


@app.command()
def init(
    reports: Annotated[
        str | None, _folder_option("reports", "Reports: {DIR}/{command}/*.md.")
    ] = None,
    commands: Annotated[
        str | None, _folder_option("commands", "Commands: {DIR}/*.md with frontmatter.")
    ] = None,
    conversations: Annotated[
        str | None,
        _folder_option("conversations", "Conversations: {DIR}/{YYYY-MM[-DD]}/{NNN-slug}/."),
    ] = None,
    elog: Annotated[
        str | None, _folder_option("elog", "One ELOG logbook folder (YYYY/YYMMDDa.log).")
    ] = None,
    index: Annotated[
        str | None, _folder_option("index", "Where the indexes go [.trove next to the file].")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite an existing config file.")
    ] = False,
) -> None:
    """Write a trove.toml (to --config PATH, $TROVE_CONFIG or ./trove.toml) for your folders.

    A folder that does not exist yet is written with a warning (its collection stays
    empty until it appears); an existing file is kept unless --force.
    """
    import shlex
    import tomllib

    from indexer.config import settings_from_dict
    from query.cli.init_config import InitError, config_path, plan

    target = config_path(_State.config)
    sources = {
        "reports": reports,
        "commands": commands,
        "conversations": conversations,
        "elog": elog,
    }
    try:
        written = plan(target, sources, index)
        settings_from_dict(tomllib.loads(written.text), base=target.parent, origin=target)
    except (InitError, ConfigError, tomllib.TOMLDecodeError) as exc:
        fail(str(exc), 2, USAGE_CODE)
    if target.is_dir():
        fail(f"{target} is a folder; give a file name with --config", 2, USAGE_CODE)
    if target.exists() and not force:
        fail(f"{target} already exists; pass --force to overwrite it", 2, USAGE_CODE)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(written.text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}", 1)
    for warning in written.warnings:
        err.print(f"trove: warning: {warning}", markup=False)
    out.print(f"wrote {target}:", markup=False)
    sys.stdout.write(written.text)
    here = Path("trove.toml").absolute()
    flag = "" if target == here else f" --config {shlex.quote(str(target))}"
    out.print(
        f"next: trove{flag} reindex (build the indexes), then trove{flag} serve "
        f"(keep them fresh and serve MCP), or trove{flag} search QUERY",
        markup=False,
    )


@app.command()
def daemon(
    once: Annotated[
        bool, typer.Option("--once", help="Reconcile every collection and exit (as reindex).")
    ] = False,
) -> None:
    """Reconcile, then watch the sources and keep the indexes fresh until SIGTERM/SIGINT."""
    import signal

    from indexer.daemon import Daemon

    if once:
        reindex(collection=None, full=False, as_json=False)
        return
    cfg = settings()
    worker = Daemon(cfg)
    interrupted = []

    def on_signal(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        worker.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # one line per applied batch
    err.print(f"trove daemon: pid {os.getpid()}, index {cfg.index_dir}", markup=False)
    run(worker.run)
    if interrupted and interrupted[-1] == signal.SIGINT:
        raise typer.Exit(130)


@app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Documents per collection, index size, last update, and the watcher that keeps the
    index fresh: which process, how it watches each collection and why, its catch-up."""
    from indexer.status import all_status, read_watcher_status
    from indexer.status import as_json as status_json

    cfg = settings()
    found = (run(lambda: all_status(cfg)), read_watcher_status(cfg))
    answer(found, as_json, lambda f: _show_status(cfg, *f), lambda f: status_json(*f))


def _show_status(cfg: Settings, statuses: list[Any], watcher: Any) -> None:
    from indexer.status import watch_lines, watcher_line

    # Text, not markup: a folder's path may hold brackets.
    table = Table(title=Text(f"trove status ({cfg.index_dir})"))
    for col in ("collection", "documents", "index size", "last update", "source"):
        table.add_column(
            col,
            justify="right" if col in ("documents", "index size") else "left",
            overflow="fold",
        )
    for s in statuses:
        source = s.source or "(not configured)"
        if s.source and not s.source_exists:
            source += " (missing)"
        table.add_row(
            s.collection,
            str(s.documents) if s.built else "indexing" if s.indexing else "not built",
            human_size(s.index_bytes),
            local_time(s.last_update),
            Text(source),
        )
    out.print(table)
    for s in statuses:
        for line in (s.indexing, s.problem):
            if line:
                out.print(f"  {s.collection}: {line}", markup=False)
    out.print(watcher_line(watcher), markup=False)
    for line in watch_lines(watcher):
        out.print(f"  {line}", markup=False)


@search_app.command("web")
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


def _show_web(found: Any) -> None:
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


@search_app.command("commands")
def search_commands_command(
    query: Annotated[
        str, typer.Argument(help="Keywords or a description of the job.", show_default=False)
    ],
    max_results: Annotated[
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.SEARCH_COMMANDS_RESULTS.cli_help("At most this many results"),
        ),
    ] = tools.SEARCH_COMMANDS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Find the command for a job: by file name, by content, by the reports it produced."""
    from query.commands import search_commands

    found = ask(lambda ctx: search_commands(ctx, query, max_results, offset))
    answer(found, as_json, lambda f: _show_commands(f, query))


def _show_commands(found: Any, query: str) -> None:
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
            [f"{r.score:.2f}", r.tier, r.name + _stale(r), r.description, r.match_reason]
            for r in found.results
        ],
    )
    shown.more(found.next_offset)


@search_app.command("conversations")
@search_app.command("workspace")
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
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.SEARCH_WORKSPACE_RESULTS.cli_help("At most this many lines"),
        ),
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


def _show_workspace(found: Any, query: str) -> None:
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
            [r.date, r.conversation + more, f"{where}:{r.line}{_stale(r)}", r.match, r.excerpt]
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


@search_app.command("all")
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
        int,
        typer.Option(
            "--max-results", "-n", help=tools.SEARCH_RESULTS.cli_help("At most this many hits")
        ),
    ] = tools.SEARCH_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Search every collection at once (also `trove search QUERY`): each with its own
    ranking, fused by reciprocal rank."""
    from query.search_all import search

    found = ask(lambda ctx: search(ctx, query, collection, since, until, max_results, offset))
    answer(found, as_json, lambda f: _show_all(f, query))


def _show_all(found: Any, query: str) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.hits)
    if found.note:
        shown.note(found.note)
    counts = ", ".join(f"{name} {n}" for name, n in found.by_collection.items())
    if not found.hits:
        shown.note(f"nothing found ({counts})")
        return
    shown.rows(
        f"{query!r}: the best {len(found.hits)} ({counts})",
        [
            Column("collection"),
            Column("id", fold=True),
            Column("date"),
            Column("match"),
            Column("title", grow=True),
            Column("snippet", grow=True),
        ],
        [
            [h.collection, h.id + _stale(h), (h.date or "")[:10], h.match, h.title, h.snippet[:300]]
            for h in found.hits
        ],
    )
    shown.more(found.next_offset)


@search_app.command("reports")
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
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.SEARCH_REPORTS_RESULTS.cli_help("At most this many reports"),
        ),
    ] = tools.SEARCH_REPORTS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """Find reports holding some text: most occurrences first, then newest."""
    from query.reports import search_reports

    found = ask(lambda ctx: search_reports(ctx, query, command_filter, max_results, offset))
    answer(found, as_json, lambda f: _show_reports(f, query))


def _show_reports(found: Any, query: str) -> None:
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
                f"{r.command_name}/{r.report_name}{_stale(r)}",
                r.excerpt,
            ]
            for r in found.results
        ],
    )
    shown.more(found.next_offset)


@list_app.command("reports")
def list_reports_command(
    command_name: Annotated[str, typer.Argument(help="A command's name.", show_default=False)],
    max_results: Annotated[
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.LIST_REPORTS_RESULTS.cli_help("At most this many reports"),
        ),
    ] = tools.LIST_REPORTS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """List a command's reports, newest first."""
    from query.reports import list_command_reports

    found = ask(lambda ctx: list_command_reports(ctx, command_name, max_results, offset))
    answer(found, as_json, _show_report_list)


def _show_report_list(found: Any) -> None:
    shown = printer()
    shown.freshness(found.freshness)
    shown.rows(
        f"{found.command_name}: {len(found.reports)} of {found.total} reports",
        [Column("date"), Column("size", right=True), Column("report", fold=True)],
        [[(r.date or "")[:10], human_size(r.size), r.report_name] for r in found.reports],
    )
    shown.more(found.next_offset)


@list_app.command("commands")
def list_commands_command(
    include_dependencies: Annotated[
        bool,
        typer.Option("--include-dependencies", help="Also the helpers other commands depend on."),
    ] = False,
    max_results: Annotated[
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.LIST_COMMANDS_RESULTS.cli_help("At most this many commands"),
        ),
    ] = tools.LIST_COMMANDS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """List the commands, by name."""
    from query.commands import list_commands

    found = ask(lambda ctx: list_commands(ctx, include_dependencies, max_results, offset))
    answer(found, as_json, _show_command_list)


def _show_command_list(found: Any) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.commands)
    shown.rows(
        f"{len(found.commands)} commands",
        [Column("name", fold=True), Column("description", grow=True), Column("tags", grow=True)],
        [
            [
                c.name + (" (dependency)" if c.is_dependency else "") + _stale(c),
                c.description,
                ", ".join(c.tags),
            ]
            for c in found.commands
        ],
    )
    shown.more(found.next_offset)


@get_app.command("report")
def get_report_command(
    report_id: Annotated[
        str,
        typer.Argument(
            help="A search hit's id, command/report (or the command's name, then the report's).",
            show_default=False,
        ),
    ],
    report_name: Annotated[
        str | None,
        typer.Argument(help="The report's file name (.md may be left out).", show_default=False),
    ] = None,
    offset: PartOffset = None,
    limit: PartLimit = None,
    as_json: AsJson = False,
) -> None:
    """Print one report: whole, or the lines --offset/--limit ask for."""
    from query.reports import get_report

    if report_name is None:
        command_name, _, report_name = report_id.partition("/")
    else:
        command_name = report_id
    if report_name.strip() and not report_name.lower().endswith(".md"):
        report_name += ".md"
    whole = offset is None and limit is None
    found = ask(lambda ctx: get_report(ctx, command_name, report_name, offset, limit, whole=whole))
    answer(found, as_json, _print_part)


@get_app.command("command")
def get_command_command(
    name: Annotated[str, typer.Argument(help="The command's name.", show_default=False)],
    offset: PartOffset = None,
    limit: PartLimit = None,
    as_json: AsJson = False,
) -> None:
    """Print one command: title, description, tags, then its markdown body (whole, or the
    lines of the body --offset/--limit ask for)."""
    from query.commands import get_command

    whole = offset is None and limit is None
    found = ask(lambda ctx: get_command(ctx, name, offset, limit, whole=whole))
    answer(found, as_json, _show_command)


def _show_command(found: Any) -> None:
    """A command's title, description and tags, then its body (or part)."""
    out.print(f"{found.title}  ({found.path})", markup=False, style="bold")
    out.print(found.description, markup=False)
    if found.tags:
        out.print("tags: " + ", ".join(found.tags), markup=False)
    out.print("")
    sys.stdout.flush()
    _print_part(found)


@get_app.command("conversation")
def get_conversation_command(
    conversation_id: Annotated[
        str,
        typer.Argument(
            help="A search hit's id: the file's path under the conversations folder, with or "
            "without :LINE (then printing starts at that line).",
            show_default=False,
        ),
    ],
    offset: PartOffset = None,
    limit: PartLimit = None,
    as_json: AsJson = False,
) -> None:
    """Print a conversation file: whole, or the lines --offset/--limit ask for (an id with
    :LINE starts there)."""
    from query.workspace import get_conversation

    whole = offset is None and limit is None and not _LINE_ID.search(conversation_id)
    found = ask(lambda ctx: get_conversation(ctx, conversation_id, offset, limit, whole=whole))
    answer(found, as_json, _print_part)


_LINE_ID = re.compile(r":\d+$")


def _print_part(found: Any) -> None:
    """A document (or part) to stdout as written; where it goes on, on stderr."""
    content = found.content
    sys.stdout.write(content if not content or content.endswith("\n") else content + "\n")
    if getattr(found, "truncated", False):
        err.print(f"trove: {found.path} is larger than trove reads; cut", markup=False)
    if found.note:
        err.print(f"trove: note: {found.note}", markup=False)
    if found.next_offset is not None:
        err.print(
            f"trove: lines {found.start_line}-{found.end_line} of {found.total_lines}; "
            f"more: --offset {found.next_offset}",
            markup=False,
        )


MCP_ON_A_TERMINAL = (
    "trove mcp speaks the Model Context Protocol (JSON-RPC) on stdin/stdout, for an MCP "
    "client that starts it: Claude Desktop, Claude Code, VS Code, Cursor (README.md, "
    "'MCP clients', shows each one's config). It is now waiting for a client's messages; "
    "Ctrl-D or Ctrl-C stops it. To search from the shell, use `trove search`; to serve "
    "MCP over HTTP, `trove serve`."
)


@app.command()
def mcp() -> None:
    """Serve the MCP tools over stdio, for an MCP client that starts trove itself.

    Keeps the index fresh meanwhile: unless another trove process already watches the
    index folder, this one catches up (building any index never built) and watches; if
    one does, this one stands by and takes over when it stops. stdout carries only the
    protocol; the watcher's lines go to stderr. Run on a terminal, it says so first.
    """
    from query.serve import run_stdio

    cfg = settings()
    if sys.stdin.isatty():
        err.print(MCP_ON_A_TERMINAL, markup=False)
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # the watcher's lines
    try:
        code = run(lambda: run_stdio(cfg))
    except KeyboardInterrupt:  # before the server started
        raise typer.Exit(130) from None
    if code:
        raise typer.Exit(code)


@app.command()
def serve(
    host: Annotated[
        str | None,
        typer.Option(
            "--host", help="Address to bind (default: [server] host).", show_default=False
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            help="Port (default: [server] port; 0: any free port).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The daemon and the MCP server over streamable HTTP (/mcp, /health) in one process.

    Binding anything but loopback needs a bearer token ($TROVE_TOKEN or [server] token).
    Runs until SIGTERM/SIGINT.
    """
    from query.serve import ServeError
    from query.serve import serve as run_serve

    cfg = settings()
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # one line per applied batch

    def announce(line: str) -> None:
        err.print(line, markup=False, soft_wrap=True)

    try:
        code = run(lambda: run_serve(cfg, host, port, announce))
    except ServeError as exc:
        fail(str(exc), exc.exit_code)
    if code:
        raise typer.Exit(code)


@search_app.command("elog")
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
        int,
        typer.Option(
            "--max-results",
            "-n",
            help=tools.SEARCH_ELOG_RESULTS.cli_help("At most this many entries"),
        ),
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


def _show_elog(found: Any, query: str | None) -> None:
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
                    f"#{h.elog_id}{_stale(h)}",
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
            f"#{h.elog_id}{_stale(h)}  {h.date[:16].replace('T', ' ')}  {h.author}  [{kind}]{score}",
            markup=False,
        )
        out.print(f"  {h.title}", markup=False, style="bold")
        out.print(f"  {h.snippet}", markup=False)
    shown.more(found.next_offset)


@app.command("thread")
def thread_command(
    message_id: Annotated[
        str,
        typer.Argument(
            help="An ELOG entry id (31185, or #31185 as search elog shows it).",
            metavar="ID",
            show_default=False,
        ),
    ],
    replies: Annotated[
        bool, typer.Option("--replies/--no-replies", help="Include the replies below the entry.")
    ] = True,
    parents: Annotated[
        bool, typer.Option("--parents/--no-parents", help="Include the entries above it.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the thread as JSON.")] = False,
) -> None:
    """Show an ELOG entry's thread: the root and every reply, indented by depth."""
    from query.elog import get_elog_thread

    number = message_id.removeprefix("#")
    if not (number.isascii() and number.isdigit()):
        fail(f"an ELOG entry id is a whole number, got {message_id!r}", 2, "INVALID_ARGUMENT")
    found = ask(lambda ctx: get_elog_thread(ctx, int(number), replies, parents, whole=True))
    answer(found, as_json, _show_thread)


def _show_thread(found: Any) -> None:
    for e in found.entries:
        pad = "    " * e.depth
        mark = (" <" if e.elog_id == found.message_id else "") + _stale(e)
        head = " / ".join(v for v in (e.category, e.system) if v)
        out.print(
            f"{pad}#{e.elog_id} {e.date[:16].replace('T', ' ')} {e.author} [{head}]{mark}",
            markup=False,
        )
        out.print(f"{pad}{e.title}", markup=False, style="bold")
        for line in e.body.splitlines() or [""]:
            out.print(f"{pad}  {line}", markup=False)
        if e.attachments:
            out.print(f"{pad}  attachments: {', '.join(e.attachments)}", markup=False)
        out.print("")
    if found.missing:
        out.print(
            "links to entries not in the logbook: " + ", ".join(map(str, found.missing)),
            markup=False,
        )
    printer().freshness(found.freshness, found.entries)


def _stale(hit: Any) -> str:
    """What marks a hit whose file changed after the index read it."""
    return " (stale)" if hit.stale else ""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
