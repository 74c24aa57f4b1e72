"""The `trove` command line (query.cli:main), a thin layer over the Python API.

program: the Typer app and its commands; root: global options anywhere, usage errors as
JSON; output: tables, lines or tab-separated hits; failures: errors at the edge (exit
codes, JSON, CLI words for MCP tools); init_config: what `trove init` writes.
"""

from __future__ import annotations

from query.cli.program import app, main, out

__all__ = ["app", "main", "out"]
