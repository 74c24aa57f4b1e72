"""How fast `trove mcp` answers a client that has just started it (the issue's 1 s goal).

    python bench/bench_mcp_start.py [--runs 7] [--workdir /tmp/trove-bench-mcp]

On a copy of the sample data (data/), with the real MCP client over stdio, it times from
spawning `trove --config ... mcp` to the answer of `initialize`, and to the answer of a
first `search_reports`: with the indexes already built (``--runs`` times, median and
worst), and once with no index at all (`trove mcp` builds them before serving). For
scale, the floors no server can go under: starting Python, and importing the MCP SDK.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
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


async def one_start(config: Path) -> tuple[float, float]:
    """Seconds from spawn to initialize answered, and to the first search answered."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query.cli", "--quiet", "--config", str(config), "mcp"],
        env={"HF_HUB_OFFLINE": "1"},
        cwd=str(config.parent),
    )
    started = time.perf_counter()
    async with Client(params) as client:
        initialized = time.perf_counter() - started
        result = await client.call_tool("search_reports", {"query": "proxy timeout"})
        searched = time.perf_counter() - started
        assert not result.is_error and result.structured_content["results"]
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
    args = parser.parse_args(argv)

    config = prepare(args.workdir)
    cold_init, cold_search = anyio.run(one_start, config)  # builds the indexes
    warm = [anyio.run(one_start, config) for _ in range(args.runs)]
    inits = [w[0] for w in warm]
    searches = [w[1] for w in warm]
    python = floor("pass", args.runs)
    sdk = floor("import mcp.server.mcpserver", args.runs)

    table = Table(title=f"trove mcp start-up on the sample data ({args.runs} runs, medians)")
    table.add_column("measure")
    table.add_column("seconds", justify="right")
    table.add_row("spawn -> initialize answered (indexes built)", f"{statistics.median(inits):.2f}")
    table.add_row(
        "spawn -> first search answered (indexes built)", f"{statistics.median(searches):.2f}"
    )
    table.add_row("  worst of the runs", f"{max(searches):.2f}")
    table.add_row("spawn -> initialize answered (no index yet)", f"{cold_init:.2f}")
    table.add_row("spawn -> first search answered (no index yet)", f"{cold_search:.2f}")
    table.add_row("floor: python -c pass", f"{python:.2f}")
    table.add_row("floor: python -c 'import mcp.server.mcpserver'", f"{sdk:.2f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
