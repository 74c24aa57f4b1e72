"""The root command group: global options accepted anywhere on the line, and usage errors
as JSON under ``--json``."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from query.cli.failures import USAGE_CODE, Mode, error_json

# The global options: flags, and options that take a value.
GLOBAL_FLAGS = ("--debug", "--quiet", "-q", "--table", "--version", "-V")
GLOBAL_VALUES = ("--config", "-c")
HELP = ("-h", "--help")


def options_with_values(command: Any) -> set[str]:
    """Every option string, in this command and those below it, that takes a value: the
    word after it is that value, never a global option."""
    found: set[str] = set()
    for cmd in _walk(command):
        for p in cmd.params:
            if p.param_type_name == "option" and not p.is_flag and not p.count:
                found.update(p.opts)
    return found


def _walk(command: Any) -> Iterator[Any]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _walk(sub)


def hoist_globals(args: Sequence[str], takes_value: set[str]) -> list[str]:
    """``args`` with the global options moved to the front, in their order, so that
    ``trove status --config F`` reads as ``trove --config F status``. ``--`` ends the
    options: what follows it stays where it is."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        has_next = i + 1 < len(args)
        if arg == "--":
            rest += args[i:]
            break
        if arg in GLOBAL_FLAGS or arg.startswith("--config="):
            front.append(arg)
        elif arg in GLOBAL_VALUES and has_next:
            front += [arg, args[i + 1]]
            i += 1
        elif arg in takes_value and has_next:
            rest += [arg, args[i + 1]]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return front + rest


class RootGroup(TyperGroup):
    """`trove` itself."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **extra: Any) -> Any:
        argv = hoist_globals(
            sys.argv[1:] if args is None else list(args), options_with_values(self)
        )
        end = argv.index("--") if "--" in argv else len(argv)
        Mode.json = "--json" in argv[:end]
        return super().main(argv, *rest, **extra)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as exc:
            _as_json(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as exc:
            _as_json(exc)
            raise


def _as_json(exc: typer.TyperException) -> None:
    """Under --json, a usage error (bad option, missing argument) as JSON on stdout; click
    still prints it for people on stderr."""
    if Mode.json:
        code = USAGE_CODE if exc.exit_code == 2 else "ERROR"
        sys.stdout.write(error_json(code, exc.format_message()) + "\n")
