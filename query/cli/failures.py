"""The CLI's edge for errors: a one-line message on stderr and an exit code, plus the error
as JSON on stdout when the command was given ``--json``.

The library's messages name MCP tools (``list_command_reports('x') shows the reports
there``); here they name the commands a person types (`` `trove list reports x` ``).
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar, get_args

import typer
from rich.console import Console

from indexer.config import ConfigError
from indexer.errors import StoreError
from query.errors import ErrorCode, TroveError

T = TypeVar("T")

# Messages are never wrapped: each is one line, whatever the width.
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

# Each MCP tool and the command that does the same; a call's arguments follow it.
TOOL_COMMANDS = {
    "search_reports": "trove search reports",
    "list_command_reports": "trove list reports",
    "get_report": "trove get report",
    "search_commands": "trove search commands",
    "get_command": "trove get command",
    "list_commands": "trove list commands",
    "search_workspace": "trove search workspace",
    "get_conversation": "trove get conversation",
    "search_elog": "trove search elog",
    "get_elog_thread": "trove thread",
    "search_web": "trove search web",
    "search": "trove search",
}
# A tool's name, then maybe its call's arguments; `search` only as a call, since the
# word is ordinary English too.
_TOOL = re.compile(
    r"(?<![\w`])(?:(?P<name>"
    + "|".join(sorted((n for n in TOOL_COMMANDS if n != "search"), key=len, reverse=True))
    + r")(?:\((?P<args>[^()]*)\))?|(?P<search>search)\((?P<search_args>[^()]*)\))(?![\w`])"
)

# Codes of errors that are not the library's (whose codes are in query.errors).
CONFIG_CODE = "INVALID_CONFIG"
USAGE_CODE = "INVALID_ARGUMENT"
INDEX_CODE = "INDEX_ERROR"
OTHER_CODE = "ERROR"


class Mode:
    """Whether this invocation asked for JSON (its errors are JSON too)."""

    json = False


def cli_words(message: str) -> str:
    """``message`` with each MCP tool (or call of one) replaced by its CLI command."""

    def command(match: re.Match[str]) -> str:
        name = match.group("name") or match.group("search")
        raw = match.group("args") if match.group("name") else match.group("search_args")
        words = [TOOL_COMMANDS[name]]
        if raw and raw.strip():
            try:
                args = ast.literal_eval(f"({raw},)")
            except (SyntaxError, ValueError):
                return match.group(0)
            words += [shlex.quote(str(a)) for a in args]
        return "`" + " ".join(words) + "`"

    return _TOOL.sub(command, message)


def error_json(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


def fail(message: str, exit_code: int = 1, code: str = OTHER_CODE) -> NoReturn:
    """Stop with ``message`` on stderr (after ``code`` when it is the library's) and
    ``exit_code``; with --json, the error as JSON on stdout as well."""
    message = cli_words(message)
    if Mode.json:
        sys.stdout.write(error_json(code, message) + "\n")
    shown = f"{code}: {message}" if code in get_args(ErrorCode) else message
    err.print(f"trove: {shown}", markup=False)
    raise typer.Exit(exit_code)


def run(call: Callable[[], T]) -> T:
    """Run a library call, turning trove's errors into a message and an exit code."""
    try:
        return call()
    except TroveError as exc:
        fail(exc.message, 2 if exc.is_input_error else 1, exc.code)
    except ConfigError as exc:
        fail(str(exc), 2, CONFIG_CODE)
    except StoreError as exc:
        fail(str(exc), 1, INDEX_CODE)
