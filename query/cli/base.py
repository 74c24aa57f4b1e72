"""What every command shares: the global options' state, the config, one query's
context, the options that several commands take, and the one way a command answers
(``answer``: JSON under --json, else its view for people).

A command is: parse its arguments, ``ask`` the library (or ``run`` a call that needs no
index), then ``answer``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from indexer.config import ConfigError, Settings, load_settings
from query import budget, tools
from query.cli.failures import CONFIG_CODE, fail, run
from query.cli.init_config import missing_config
from query.cli.output import Printer, pick_shape

if TYPE_CHECKING:
    from query.context import QueryContext

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


def most(results: tools.Results, what: str) -> Any:
    """The -n/--max-results option of a command that answers at most ``results``'s limit
    (``what``: "At most this many hits")."""
    return typer.Option("--max-results", "-n", help=results.cli_help(what))


# emoji=False: a name holding ":warning:" prints as written (markup=False leaves emoji
# codes on).
out = Console(highlight=False, soft_wrap=True, emoji=False)


class State:
    """The global options of this invocation (set by the root callback)."""

    config: str | None = None
    table = False


def printer() -> Printer:
    """How this invocation prints hits (see query.cli.output)."""
    return Printer(out, pick_shape(State.table), forced=State.table)


def settings() -> Settings:
    """This invocation's config; a missing file says how to write one."""
    missing = missing_config(State.config)
    if missing:
        fail(missing, 2, CONFIG_CODE)
    try:
        return load_settings(State.config)
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


def stale(hit: Any) -> str:
    """What marks a hit whose file changed after the index read it."""
    return " (stale)" if hit.stale else ""
