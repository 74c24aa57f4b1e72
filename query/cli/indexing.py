"""The commands that build and keep the indexes: `trove reindex`, `trove init` (the config
file they read), `trove daemon` (the watcher on its own) and `trove status`."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from indexer.config import ConfigError, Settings
from indexer.sources.registry import SOURCES
from indexer.status import human_size, local_time
from query.cli.base import State, answer, out, printer, settings
from query.cli.failures import USAGE_CODE, err, fail, run
from query.cli.output import Column

if TYPE_CHECKING:
    from indexer.status import CollectionStatus
    from indexer.store import Summary


def _check_collections(names: list[str] | None) -> list[str] | None:
    for name in names or ():
        if name not in SOURCES:
            fail(f"unknown collection '{name}'; known: {', '.join(SOURCES)}", 2, USAGE_CODE)
    return names or None


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


def _show_reindex(summaries: list[Summary], full: bool) -> None:
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

    target = config_path(State.config)
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


def daemon(
    once: Annotated[
        bool, typer.Option("--once", help="Reconcile every collection and exit (as reindex).")
    ] = False,
) -> None:
    """Reconcile, then watch the sources and keep the indexes fresh until SIGTERM/SIGINT."""
    import signal
    import threading

    from indexer.daemon import Daemon

    if once:
        reindex(collection=None, full=False, as_json=False)
        return
    cfg = settings()
    worker = Daemon(cfg)
    interrupted = []

    def on_signal(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        # From another thread: the daemon runs in this one, and stopping takes a lock
        # that the code this signal interrupted may hold.
        threading.Thread(target=worker.stop, name="trove-stop").start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # one line per applied batch
    err.print(f"trove daemon: pid {os.getpid()}, index {cfg.index_dir}", markup=False)
    run(worker.run)
    if interrupted and interrupted[-1] == signal.SIGINT:
        raise typer.Exit(130)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Documents per collection, index size, last update, and the watcher that keeps the
    index fresh: which process, how it watches each collection and why, its catch-up.
    A table on a terminal; piped, a tab-separated line per collection."""
    from indexer.status import all_status, read_watcher_status
    from indexer.status import as_json as status_json

    cfg = settings()
    found = (run(lambda: all_status(cfg)), read_watcher_status(cfg))
    answer(found, as_json, lambda f: _show_status(cfg, *f), lambda f: status_json(*f))


def _show_status(
    cfg: Settings, statuses: list[CollectionStatus], watcher: dict[str, Any] | None
) -> None:
    """A table on a terminal, whatever its width (or with --table); piped, one
    tab-separated line per collection, the title and the lines about the watcher as
    ``# `` comments, as the searches print their hits."""
    from indexer.status import watch_lines, watcher_line

    shown = printer()
    title = f"trove status ({cfg.index_dir})"
    rows = [
        [
            s.collection,
            str(s.documents) if s.built else "indexing" if s.indexing else "not built",
            human_size(s.index_bytes),
            local_time(s.last_update),
            (s.source or "(not configured)")
            + (" (missing)" if s.source and not s.source_exists else ""),
        ]
        for s in statuses
    ]
    if shown.shape == "tsv":
        shown.rows(title, [Column(name) for name in _STATUS_COLUMNS], rows)
    else:
        # Text, not markup: a folder's path may hold brackets.
        table = Table(title=Text(title))
        for col in _STATUS_COLUMNS:
            table.add_column(
                col,
                justify="right" if col in ("documents", "index size") else "left",
                overflow="fold",
            )
        for row in rows:
            table.add_row(*(Text(v) for v in row))
        shown.table(table)
    for s in statuses:
        for line in (s.indexing, s.problem):
            if line:
                shown.note(f"  {s.collection}: {line}")
    shown.note(watcher_line(watcher))
    for line in watch_lines(watcher):
        shown.note(f"  {line}")


_STATUS_COLUMNS = ("collection", "documents", "index size", "last update", "source")
