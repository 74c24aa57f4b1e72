"""The servers: `trove mcp` (MCP over stdio, for a client that starts trove) and
`trove serve` (the daemon and MCP over HTTP in one process)."""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

from query.cli.base import settings
from query.cli.failures import err, fail, run

MCP_ON_A_TERMINAL = (
    "trove mcp speaks the Model Context Protocol (JSON-RPC) on stdin/stdout, for an MCP "
    "client that starts it: Claude Desktop, Claude Code, VS Code, Cursor (README.md, "
    "'MCP clients', shows each one's config). It is now waiting for a client's messages; "
    "Ctrl-D or Ctrl-C stops it. To search from the shell, use `trove search`; to serve "
    "MCP over HTTP, `trove serve`."
)


def mcp() -> None:
    """Serve the MCP tools over stdio, for an MCP client that starts trove itself.

    Keeps the index fresh meanwhile: unless another trove process already watches the
    index folder, this one catches up (building any index never built) and watches; if
    one does, this one stands by and takes over when it stops. stdout carries only the
    protocol; the watcher's lines go to stderr. Run on a terminal, it says so first.
    """
    from query.serve import run_stdio

    cfg = settings()
    if sys.stdin.isatty():
        err.print(MCP_ON_A_TERMINAL, markup=False)
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # the watcher's lines
    try:
        code = run(lambda: run_stdio(cfg))
    except KeyboardInterrupt:  # before the server started
        raise typer.Exit(130) from None
    if code:
        raise typer.Exit(code)


def serve(
    host: Annotated[
        str | None,
        typer.Option(
            "--host", help="Address to bind (default: [server] host).", show_default=False
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            help="Port (default: [server] port; 0: any free port).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The daemon and the MCP server over streamable HTTP (/mcp, /health) in one process.

    Binding anything but loopback needs a bearer token ($TROVE_TOKEN or [server] token).
    Runs until SIGTERM/SIGINT.
    """
    from query.serve import ServeError
    from query.serve import serve as run_serve

    cfg = settings()
    if logging.getLogger().level <= logging.WARNING:
        logging.getLogger("indexer").setLevel(logging.INFO)  # one line per applied batch

    def announce(line: str) -> None:
        err.print(line, markup=False, soft_wrap=True)

    try:
        code = run(lambda: run_serve(cfg, host, port, announce))
    except ServeError as exc:
        fail(str(exc), exc.exit_code)
    if code:
        raise typer.Exit(code)
