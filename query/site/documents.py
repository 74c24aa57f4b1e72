"""The documents the pages show: a report, a command, a conversation file, an ELOG thread.

Each is read whole by the same library function the MCP get tools call (never outside
its folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from indexer.sources.registry import get_source
from query.commands import CommandDetail, get_command
from query.context import QueryContext
from query.elog import ElogThreadEntry, ElogThreadResponse, get_elog_thread
from query.elog.index_access import open_index
from query.errors import TroveError
from query.reports import CommandReports, Report, get_report, list_command_reports
from query.workspace import get_conversation

MAX_COMMAND_REPORTS = 50


@dataclass
class CommandPage:
    command: CommandDetail
    reports: CommandReports | None


@dataclass
class ConversationFile:
    rel: str
    conversation: str
    date: str
    lines: list[str]
    siblings: list[str]  # the conversation's other files, relative to the root
    truncated: bool


@dataclass
class ElogEntryBody:
    entry: ElogThreadEntry
    raw: str
    encoding: str


@dataclass
class ElogThread:
    thread: ElogThreadResponse
    entries: list[ElogEntryBody]


def report(ctx: QueryContext, command: str, name: str) -> Report:
    return get_report(ctx, command, name, whole=True)


def command(ctx: QueryContext, name: str) -> CommandPage:
    detail = get_command(ctx, name, whole=True)
    try:
        reports = list_command_reports(ctx, detail.name, MAX_COMMAND_REPORTS)
    except TroveError:  # a command without reports (or without a reports folder)
        reports = None
    return CommandPage(detail, reports)


def conversation(ctx: QueryContext, path: str) -> ConversationFile:
    """One file of a conversation, by its path under the conversations folder (a hit's
    id without its :LINE)."""
    found = get_conversation(ctx, path, whole=True)
    rel = PurePosixPath(found.id)
    source = get_source("conversations")
    folder = Path(found.path).parent
    siblings = sorted(
        str(PurePosixPath(*rel.parts[:-1], p.name))
        for p in folder.iterdir()
        if p.is_file() and source.wants_file((*rel.parts[:-1], p.name))
    )
    return ConversationFile(
        rel=found.id,
        conversation=found.conversation,
        date=found.date,
        lines=found.content.splitlines(),
        siblings=siblings,
        truncated=found.truncated,
    )


def elog_thread(ctx: QueryContext, message_id: str) -> ElogThread:
    """An entry's whole thread, each entry with its body as written."""
    if not message_id.isdigit() or int(message_id) < 1:
        raise TroveError(
            "INVALID_ARGUMENT", f"an ELOG id is a positive whole number, got {message_id!r}"
        )
    thread = get_elog_thread(ctx, int(message_id), whole=True)
    with open_index(ctx) as index:
        stored = {e.elog_id: index.document(str(e.elog_id)) or {} for e in thread.entries}
    entries = [
        ElogEntryBody(
            e,
            raw=stored[e.elog_id].get("raw_body") or e.body,
            encoding=stored[e.elog_id].get("encoding") or "plain",
        )
        for e in thread.entries
    ]
    return ElogThread(thread, entries)
