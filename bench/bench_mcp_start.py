"""How fast `trove mcp` answers a client that has just started it (the issue's 1 s goal).

    python bench/bench_mcp_start.py [--runs 7] [--workdir /tmp/trove-bench-mcp]
                                    [--config CORPUS/trove.toml]

On a copy of the sample data (data/), with the real MCP client over stdio, it times from
spawning `trove --config ... mcp` to the answer of `initialize`, and to the answer of a
first `search_reports`: with the indexes already built (``--runs`` times, median and
worst), and once with no index at all (`trove mcp` builds them before serving). For
scale, the floors no server can go under: starting Python, and importing the MCP SDK.

With ``--config`` (a corpus of bench/gen_corpus.py whose reports index is built, e.g.
100,000 reports) it times that corpus instead, and also the server's resident memory
after its first search and after a search that counts in every text (``e``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
import psutil
from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.table import Table

REPO = Path(__file__).resolve().parent.parent


def prepare(workdir: Path) -> Path:
    """A copy of data/ with a config (lexical rerank: no model at start anyway)."""
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(REPO / "data", workdir / "data")
    text = (REPO / "trove.toml").read_text(encoding="utf-8")
    config = workdir / "trove.toml"
    config.write_text(text.replace('rerank = "auto"', 'rerank = "lexical"'), encoding="utf-8")
    return config


RSS: list[tuple[int, int]] = []  # per start: the server's RSS after its first search, after 'e'


def server_rss() -> int:
    """The resident memory of the server this process spawned (the largest child)."""
    children = psutil.Process().children(recursive=True)
    return max((c.memory_info().rss for c in children if c.is_running()), default=0)


async def one_start(config: Path) -> tuple[float, float]:
    """Seconds from spawn to initialize answered, and to the first search answered."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query.cli", "--quiet", "--config", str(config), "mcp"],
        # PYTHONPATH passed on: a checkout run with it is the code the server runs.
        env={"HF_HUB_OFFLINE": "1", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}},
        cwd=str(config.parent),
    )
    started = time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - started
        result = await client.call_tool("search_reports", {"query": "proxy timeout"})
        searched = time.perf_counter() - started
        assert not result.is_error and result.structured_content["results"]
        first = server_rss()
        await client.call_tool("search_reports", {"query": "e"})
        RSS.append((first, server_rss()))
    return initialized, searched


def floor(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench-mcp"))
    parser.add_argument("--config", type=Path, help="a built corpus's trove.toml")
    args = parser.parse_args(argv)

    config = args.config.resolve() if args.config else prepare(args.workdir)
    cold_init = cold_search = float("nan")
    if not args.config:
        cold_init, cold_search = anyio.run(one_start, config)  # builds the indexes
    warm = [anyio.run(one_start, config) for _ in range(args.runs)]
    inits = [w[0] for w in warm]
    searches = [w[1] for w in warm]
    python = floor("pass", args.runs)
    sdk = floor("import mcp.server.mcpserver", args.runs)

    what = f"{config.parent.name}" if args.config else "the sample data"
    table = Table(title=f"trove mcp start-up on {what} ({args.runs} runs, medians)")
    table.add_column("measure")
    table.add_column("seconds", justify="right")
    table.add_row("spawn -> initialize answered (indexes built)", f"{statistics.median(inits):.2f}")
    table.add_row(
        "spawn -> first search answered (indexes built)", f"{statistics.median(searches):.2f}"
    )
    table.add_row("  worst of the runs", f"{max(searches):.2f}")
    table.add_row(
        "initialize answered -> first search answered",
        f"{statistics.median(s - i for i, s in warm):.2f}",
    )
    if not args.config:
        table.add_row("spawn -> initialize answered (no index yet)", f"{cold_init:.2f}")
        table.add_row("spawn -> first search answered (no index yet)", f"{cold_search:.2f}")
    mb = 2**20
    table.add_row(
        "server RSS after the first search, MB", f"{statistics.median(r[0] for r in RSS) / mb:.0f}"
    )
    table.add_row("server RSS after 'e' too, MB", f"{max(r[1] for r in RSS) / mb:.0f}")
    table.add_row("floor: python -c pass", f"{python:.2f}")
    table.add_row("floor: python -c 'import mcp.server.mcpserver'", f"{sdk:.2f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
