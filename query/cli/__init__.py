"""The `trove` command line (query.cli:main), a thin layer over the Python API.

program: the Typer app, its global options and which function answers each command;
base: what the commands share (the config, one query's context, ``answer``); the
commands by concern: indexing (reindex, init, daemon, status), searches, documents
(list, get, thread), servers (mcp, serve); root: global options anywhere, usage errors as
JSON; output: tables, lines or tab-separated hits; failures: errors at the edge (exit
codes, JSON, CLI words for MCP tools); init_config: what `trove init` writes.
"""

from __future__ import annotations

from query.cli.base import out
from query.cli.program import app, main

__all__ = ["app", "main", "out"]
