"""The `trove` command line: the app, its groups, the global options, and which function
answers each command.

Exit codes: 0 success; 2 invalid input (the message names the problem); 1 anything else.
Logs and progress go to stderr; stdout carries only the answer (and, under --json, the
error as JSON when there is one).

The commands live by concern: indexing (reindex, init, daemon, status), searches (search
and its collections, the web), documents (list, get, thread), servers (mcp, serve); base
holds what they share.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from query import trove_version
from query.cli import documents, indexing, searches, servers
from query.cli.base import State
from query.cli.root import HELP, RootGroup

__all__ = ["app", "main"]

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
            "--table",
            help="Print hits and status as tables, even when piped or on a narrow "
            "terminal (and `trove search`'s on a wide one).",
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
    State.config = config
    State.table = table
    level = logging.DEBUG if debug else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )


def _register(group: typer.Typer, *commands: tuple[str, Callable[..., None]]) -> None:
    for name, command in commands:
        group.command(name)(command)


# In the order `trove --help` and each group's help list them.
_register(
    app,
    ("reindex", indexing.reindex),
    ("init", indexing.init),
    ("daemon", indexing.daemon),
    ("status", indexing.status),
    ("mcp", servers.mcp),
    ("serve", servers.serve),
    ("thread", documents.thread_command),
)
_register(
    search_app,
    ("web", searches.search_web_command),
    ("commands", searches.search_commands_command),
    ("workspace", searches.search_workspace_command),
    ("conversations", searches.search_workspace_command),
    ("all", searches.search_all_command),
    ("reports", searches.search_reports_command),
    ("elog", searches.search_elog_command),
)
_register(
    list_app,
    ("reports", documents.list_reports_command),
    ("commands", documents.list_commands_command),
)
_register(
    get_app,
    ("report", documents.get_report_command),
    ("command", documents.get_command_command),
    ("conversation", documents.get_conversation_command),
)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
