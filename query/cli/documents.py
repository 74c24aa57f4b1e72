"""The documents: `trove list reports|commands`, `trove get report|command|conversation`
(a document whole, or the part --offset/--limit ask for) and `trove thread` (an ELOG
entry's thread)."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from indexer.status import human_size
from query import tools
from query.cli.base import (
    AsJson,
    Offset,
    PartLimit,
    PartOffset,
    answer,
    ask,
    most,
    out,
    printer,
    stale,
)
from query.cli.failures import err, fail
from query.cli.output import Column

if TYPE_CHECKING:
    from query.commands import CommandDetail, CommandList
    from query.elog import ElogThreadResponse
    from query.reports import CommandReports, Report
    from query.workspace import Conversation


def list_reports_command(
    command_name: Annotated[str, typer.Argument(help="A command's name.", show_default=False)],
    max_results: Annotated[
        int, most(tools.LIST_REPORTS_RESULTS, "At most this many reports")
    ] = tools.LIST_REPORTS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """List a command's reports, newest first."""
    from query.reports import list_command_reports

    found = ask(lambda ctx: list_command_reports(ctx, command_name, max_results, offset))
    answer(found, as_json, _show_report_list)


def _show_report_list(found: CommandReports) -> None:
    shown = printer()
    shown.freshness(found.freshness)
    shown.rows(
        f"{found.command_name}: {len(found.reports)} of {found.total} reports",
        [Column("date"), Column("size", right=True), Column("report", fold=True)],
        [[(r.date or "")[:10], human_size(r.size), r.report_name] for r in found.reports],
    )
    shown.more(found.next_offset)


def list_commands_command(
    include_dependencies: Annotated[
        bool,
        typer.Option("--include-dependencies", help="Also the helpers other commands depend on."),
    ] = False,
    max_results: Annotated[
        int, most(tools.LIST_COMMANDS_RESULTS, "At most this many commands")
    ] = tools.LIST_COMMANDS_RESULTS.default,
    offset: Offset = 0,
    as_json: AsJson = False,
) -> None:
    """List the commands, by name."""
    from query.commands import list_commands

    found = ask(lambda ctx: list_commands(ctx, include_dependencies, max_results, offset))
    answer(found, as_json, _show_command_list)


def _show_command_list(found: CommandList) -> None:
    shown = printer()
    shown.freshness(found.freshness, found.commands)
    shown.rows(
        f"{len(found.commands)} commands",
        [Column("name", fold=True), Column("description", grow=True), Column("tags", grow=True)],
        [
            [
                c.name + (" (dependency)" if c.is_dependency else "") + stale(c),
                c.description,
                ", ".join(c.tags),
            ]
            for c in found.commands
        ],
    )
    shown.more(found.next_offset)


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


def _show_command(found: CommandDetail) -> None:
    """A command's title, description and tags, then its body (or part)."""
    out.print(f"{found.title}  ({found.path})", markup=False, style="bold")
    out.print(found.description, markup=False)
    if found.tags:
        out.print("tags: " + ", ".join(found.tags), markup=False)
    out.print("")
    sys.stdout.flush()
    _print_part(found)


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


def _print_part(found: Report | CommandDetail | Conversation) -> None:
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


def _show_thread(found: ElogThreadResponse) -> None:
    for e in found.entries:
        pad = "    " * e.depth
        mark = (" <" if e.elog_id == found.message_id else "") + stale(e)
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
