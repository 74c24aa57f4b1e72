"""A command's reports (list_command_reports) and one report, or a part of it
(get_report), read from the files."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from indexer.config import Settings
from indexer.files import SkipFile, inside, read_file
from indexer.sources.base import is_hidden
from indexer.sources.reports import date_from_name
from query import paging, parts, tools
from query.args import check_name
from query.context import QueryContext
from query.errors import ErrorCode, TroveError
from query.indexes import source_folder
from query.reports.models import CommandReports, Report, ReportInfo
from query.reports.text import COLLECTION, iso_date, report_link


def list_command_reports(
    ctx: QueryContext,
    command_name: str,
    max_results: int = tools.LIST_REPORTS_RESULTS.default,
    offset: int = 0,
) -> CommandReports:
    """A command's reports, newest first (by the file-name date; undated last); the page
    from report ``offset`` on."""
    command = check_name(command_name, "command_name", "INVALID_COMMAND_FILTER", command=True)
    tools.LIST_REPORTS_RESULTS.check(max_results)
    offset = tools.LIST_OFFSET.check(offset)
    root = reports_root(ctx.settings)
    folder = command_dir(root, command, "NOT_FOUND")
    root_real = os.path.realpath(root)
    found: list[tuple[tuple[Any, ...], str, int]] = []
    listed = time.time()
    for entry in os.scandir(folder):
        name = entry.name
        if is_hidden(name) or not name.lower().endswith(".md"):
            continue
        if entry.is_symlink() and not inside(root_real, entry.path):
            continue
        try:
            st = entry.stat()
        except OSError:
            continue
        if not entry.is_file():
            continue
        day = date_from_name(name)
        order = (day is None, -(day.toordinal() if day else 0), -st.st_mtime_ns, name)
        found.append((order, name, st.st_size))
    found.sort()
    reports = []
    shown, more = paging.page(found, offset, max_results)
    for _, name, size in shown:
        path = folder / name
        reports.append(
            ReportInfo(
                id=f"{command}/{name}",
                report_name=name,
                date=iso_date(date_from_name(name)),
                path=str(path),
                link=report_link(ctx.settings, command, name, path),
                size=size,
            )
        )
    listing = CommandReports(
        command_name=command,
        reports=reports,
        total=len(found),
        next_offset=more,
        freshness=ctx.watcher.freshness(COLLECTION, listed),
    )
    tools.LIST_REPORTS_RESULTS.fit(listing, "reports", offset, max_results)
    return listing


def get_report(
    ctx: QueryContext,
    command_name: str,
    report_name: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    whole: bool = False,
) -> Report:
    """One report: all of it, or the part from line ``offset`` (``limit`` lines, or as
    many as fit the answer's budget; see query/parts.py). ``whole``: all of it, whatever
    its size (the web page)."""
    command = check_name(command_name, "command_name", "INVALID_COMMAND_FILTER", command=True)
    name = check_name(report_name, "report_name", "INVALID_COMMAND_FILTER")
    first, count = parts.check_part(offset, limit)
    root = reports_root(ctx.settings)
    command_dir(root, command, "NOT_FOUND")
    if is_hidden(name) or not name.lower().endswith(".md"):
        raise TroveError(
            "NOT_FOUND",
            f"{name!r} is not a report (reports are .md files); "
            f"list_command_reports('{command}') shows the reports there",
        )
    try:
        data = read_file(root, f"{command}/{name}", parts.READ_MAX_BYTES)
    except (FileNotFoundError, SkipFile) as exc:
        why = "no such report" if isinstance(exc, FileNotFoundError) else str(exc)
        raise TroveError(
            "NOT_FOUND",
            f"{command}/{name}: {why}; list_command_reports('{command}') shows the reports there",
        ) from None
    path = root / command / name
    report = Report(
        id=f"{command}/{name}",
        report_name=name,
        command_name=command,
        date=iso_date(date_from_name(name)),
        path=str(path),
        link=report_link(ctx.settings, command, name, path),
        **parts.unfilled(first),
        size=data.size,
        truncated=data.truncated,
    )
    return parts.filled(report, data.text(), first, count, whole)


def reports_root(settings: Settings) -> Path:
    """The reports folder; DIRECTORY_NOT_FOUND if it is not configured or does not exist."""
    return source_folder(settings, COLLECTION)


def command_dir(root: Path, command: str, code: ErrorCode) -> Path:
    """A command's folder of reports (a checked name); ``code`` if there is none."""
    path = root / command
    if is_hidden(command) or not path.is_dir() or not inside(os.path.realpath(root), str(path)):
        raise TroveError(
            code,
            f"no command {command!r} has reports: there is no folder {command!r} in {root}",
        )
    return path
