"""The documents the pages show: a report, a command, a conversation file, an ELOG thread.

Each is read by the same library function the MCP get tools call (a conversation file,
which has no get tool, the way the indexer reads it: never outside its folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from indexer.sources.registry import get_source
from indexer.store import SkipFile, read_file
from query.commands import CommandDetail, get_command
from query.context import QueryContext
from query.elog import ElogThreadEntry, ElogThreadResponse, get_elog_thread
from query.elog.index_access import open_index
from query.errors import TroveError
from query.indexes import source_folder
from query.reports import CommandReports, Report, get_report, list_command_reports

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
    return get_report(ctx, command, name)


def command(ctx: QueryContext, name: str) -> CommandPage:
    detail = get_command(ctx, name)
    try:
        reports = list_command_reports(ctx, detail.name, MAX_COMMAND_REPORTS)
    except TroveError:  # a command without reports (or without a reports folder)
        reports = None
    return CommandPage(detail, reports)


def check_relative(path: str) -> PurePosixPath:
    """A caller-given path inside a collection's folder: relative, no '..', '.' or empty
    parts, no backslash or control character. INVALID_ARGUMENT otherwise."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or any(p in ("", ".", "..") for p in parts)
        or "\\" in path
        or any(ord(ch) < 32 for ch in path)
    ):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"{path!r} is not a path inside the conversations folder: give it relative, "
            "without '..', '.', empty parts or backslashes",
        )
    return PurePosixPath(path)


def conversation(ctx: QueryContext, path: str) -> ConversationFile:
    """One file of a conversation, by its path under the conversations folder."""
    rel = check_relative(path)
    root = source_folder(ctx.settings, "conversations")
    source = get_source("conversations")
    if not source.wants_file(rel.parts):
        raise TroveError(
            "NOT_FOUND",
            f"{path} is not a conversation file (conversations/{{YYYY-MM or YYYY-MM-DD}}/"
            "{NNN-slug}/... text files)",
        )
    max_bytes = int(ctx.settings.index.max_file_mb * 1024 * 1024)
    try:
        data = read_file(root, str(rel), max_bytes)
    except (FileNotFoundError, SkipFile) as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else str(exc)
        raise TroveError("NOT_FOUND", f"{path}: {why}") from None
    folder = root / rel.parts[0] / rel.parts[1]
    siblings = sorted(
        str(PurePosixPath(rel.parts[0], rel.parts[1], p.name))
        for p in folder.iterdir()
        if p.is_file() and source.wants_file((rel.parts[0], rel.parts[1], p.name))
    )
    return ConversationFile(
        rel=str(rel),
        conversation=rel.parts[1],
        date=rel.parts[0],
        lines=data.text().splitlines(),
        siblings=siblings,
        truncated=data.truncated,
    )


def elog_thread(ctx: QueryContext, message_id: str) -> ElogThread:
    """An entry's whole thread, each entry with its body as written."""
    if not message_id.isdigit() or int(message_id) < 1:
        raise TroveError(
            "INVALID_ARGUMENT", f"an ELOG id is a positive whole number, got {message_id!r}"
        )
    thread = get_elog_thread(ctx, int(message_id))
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
