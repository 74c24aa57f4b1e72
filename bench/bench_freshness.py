"""How fresh trove keeps the index: file write -> visible to the next search.

    python bench/bench_freshness.py [--reports 10000] [--edits 50] [--burst 5000] [--workdir DIR]
                                    [--via daemon|mcp] [--watch auto|events|poll] [--kills 5]

Generates (or reuses) a corpus with bench/gen_corpus.py. ``--via daemon`` (the default)
starts `trove daemon` on it as a separate process, then from this process (a reader that
keeps its searcher open, as a query server does):
- makes ``--edits`` changes, alternating new files and modifications of existing ones,
  each with a unique word, and times from the write returning to search_reports finding
  that word (p50/p95/max);
- creates ``--burst`` files in one go in a new folder and times until all are indexed;
- reads the daemon's resident memory.

``--via mcp`` is what an MCP client's setup gives: no daemon, only `trove mcp`, started by
the real MCP client over stdio. It writes a report while nothing runs, starts `trove mcp`,
and times its first answer and its catch-up (the report is found once it ends); reads the
server's memory after it; then makes ``--edits`` changes of every kind (add, edit,
delete, move, an editor's save by rename) and times each until the next search_reports
call shows it, counting any not shown within 10 s as missed. With ``--kills N`` it then
starts two more `trove mcp` and N times kills the watcher with SIGKILL, writes a report,
and times until the others find it (a new `trove mcp` replaces each killed one).
``--watch`` writes a config beside the corpus's with that ``[daemon] watch``.
Polling the answers every millisecond is the measurement itself, not a test wait.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen_corpus import MANIFEST, generate

from indexer.collection import CollectionIndex
from indexer.config import Settings, settings_from_file
from indexer.engine.base import TermClause
from indexer.sources.registry import get_source
from query.context import QueryContext
from query.reports import search_reports


def ensure_corpus(workdir: Path, reports: int) -> Path:
    manifest = workdir / MANIFEST
    if manifest.exists() and json.loads(manifest.read_text()).get("reports") == reports:
        return workdir / "trove.toml"
    generate(workdir, reports=reports, commands=50, conversations=200)
    return workdir / "trove.toml"


def wait_status(index_dir: Path, pid: int, state: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = json.loads((index_dir / "daemon.json").read_text())
            if data.get("pid") == pid and data.get("state") == state:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise SystemExit(f"daemon never reached state {state!r}")


def until(predicate, timeout: float = 30.0) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            return float("inf")
        time.sleep(0.001)
    return time.perf_counter() - start


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reports", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench-freshness"))
    parser.add_argument("--via", choices=("daemon", "mcp"), default="daemon")
    parser.add_argument("--watch", choices=("auto", "events", "poll"), default="auto")
    parser.add_argument("--kills", type=int, default=0)
    args = parser.parse_args(argv)
    console = Console()

    cfg = ensure_corpus(args.workdir, args.reports)
    if args.watch != "auto":
        watched = cfg.with_name(f"trove-{args.watch}.toml")
        watched.write_text(cfg.read_text() + f'\n[daemon]\nwatch = "{args.watch}"\n')
        cfg = watched
    if args.via == "mcp":
        title = f"trove mcp freshness ({args.reports} reports, watch {args.watch})"
        _print(console, anyio.run(via_mcp, cfg, args), title)
        return 0
    settings = settings_from_file(cfg)
    reports_root = settings.sources.reports
    if reports_root is None:
        raise SystemExit(f"{cfg} names no reports folder")
    for leftover in ("fresh", "burst"):
        for f in (reports_root / leftover).glob("*.md"):
            f.unlink()

    started = time.perf_counter()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "query.cli", "--quiet", "--config", str(cfg), "daemon"],
        stdout=subprocess.DEVNULL,
    )
    rows: list[tuple[str, str]] = []
    try:
        wait_status(settings.index_dir, daemon.pid, "watching")
        rows.append(
            ("daemon start-up (reconcile + watch)", f"{time.perf_counter() - started:.2f} s")
        )
        ctx = QueryContext.from_settings(settings)
        reports_index = CollectionIndex(settings.index_dir, get_source("reports"))
        rows.append(("reports in the index", f"{reports_index.doc_count()}"))

        existing = sorted((reports_root).glob("*/*.md"))[:: max(1, args.reports // args.edits)]
        (reports_root / "fresh").mkdir(exist_ok=True)
        latencies: list[float] = []
        for i in range(args.edits):
            word = f"freshword{i:04d}x{os.getpid()}"
            if i % 2 == 0:
                path = reports_root / "fresh" / f"fresh_{i:04d}_20251122.md"
                text = f"# new report {i}\n\nThe token {word} appears here.\n"
            else:
                path = existing[i % len(existing)]
                text = path.read_text() + f"\nappended {word}\n"
            path.write_text(text)
            latency = until(lambda w=word: bool(search_reports(ctx, w).results))
            latencies.append(latency)
        rows += [
            (f"write -> visible, {args.edits} edits: p50", f"{pct(latencies, 50) * 1000:.0f} ms"),
            ("write -> visible: p95", f"{pct(latencies, 95) * 1000:.0f} ms"),
            ("write -> visible: max", f"{max(latencies) * 1000:.0f} ms"),
            ("write -> visible: mean", f"{statistics.mean(latencies) * 1000:.0f} ms"),
        ]

        rss = psutil.Process(daemon.pid).memory_info().rss
        rows.append(
            (f"daemon RSS at {reports_index.doc_count()} reports", f"{rss / 1048576:.0f} MB")
        )

        burst = reports_root / "burst"
        burst.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        for i in range(args.burst):
            (burst / f"burst_{i:05d}.md").write_text(f"burst report {i} burstword\n")
        written = time.perf_counter() - t0

        def burst_done() -> bool:
            with ctx.indexes.snapshot("reports") as snapshot:
                return (
                    snapshot is not None
                    and len(snapshot.matching(TermClause("command", "burst"))) >= args.burst
                )

        took = until(burst_done, timeout=600)
        rows += [
            (f"burst of {args.burst} files: writing them", f"{written:.2f} s"),
            (f"burst: all {args.burst} indexed, from the first write", f"{written + took:.2f} s"),
        ]
        rss = psutil.Process(daemon.pid).memory_info().rss
        rows.append(
            (f"daemon RSS at {reports_index.doc_count()} reports", f"{rss / 1048576:.0f} MB")
        )
        status = json.loads((settings.index_dir / "daemon.json").read_text())
        rows.append(("daemon errors / overflows", f"{status['errors']} / {status['overflows']}"))
        ctx.close()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        for leftover in ("fresh", "burst"):
            folder = reports_root / leftover
            if folder.exists():
                for f in folder.glob("*.md"):
                    f.unlink()
                folder.rmdir()

    _print(console, rows, f"trove freshness ({args.reports} reports, 2 cores, warm cache)")
    return 0


def _print(console: Console, rows: list[tuple[str, str]], title: str) -> None:
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


# --------------------------------------------------------------------------- via trove mcp

MISSED_S = 10.0


class Server:
    """A `trove mcp` started by the real MCP client over stdio."""

    def __init__(self, client: Client, tag: str) -> None:
        self.client = client
        self.tag = tag
        self.pid = next(
            p.pid
            for p in psutil.Process().children(recursive=True)
            if p.environ().get("TROVE_BENCH_TAG") == tag and "mcp" in p.cmdline()
        )

    async def search(self, query: str) -> dict[str, Any]:
        result = await self.client.call_tool("search_reports", {"query": query})
        if result.is_error or result.structured_content is None:
            raise SystemExit(f"search_reports failed: {result.content}")
        return result.structured_content


@asynccontextmanager
async def mcp_server(cfg: Path, tag: str) -> AsyncIterator[Server]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query.cli", "--quiet", "--config", str(cfg), "mcp"],
        env={"HF_HUB_OFFLINE": "1", "TROVE_BENCH_TAG": tag},
        cwd=str(cfg.parent),
    )
    done = False
    try:
        async with Client(params) as client:
            yield Server(client, tag)
            done = True
    except Exception:
        if not done:
            raise  # a server killed on purpose ends its client badly: fine


async def shown(check: Callable[[], Awaitable[bool]], timeout: float = MISSED_S) -> float | None:
    """Seconds until ``check`` holds (None: not within ``timeout``)."""
    start = time.perf_counter()
    while not await check():
        if time.perf_counter() - start > timeout:
            return None
        await anyio.sleep(0.001)
    return time.perf_counter() - start


def status_of(settings: Settings) -> dict[str, Any]:
    try:
        return json.loads((settings.index_dir / "daemon.json").read_bytes())
    except (OSError, ValueError):
        return {}


async def via_mcp(cfg: Path, args: argparse.Namespace) -> list[tuple[str, str]]:
    """The --via mcp run (see the module's docstring); the rows of its table."""
    settings = settings_from_file(cfg)
    root = settings.sources.reports
    assert root is not None
    fresh = root / "fresh"
    fresh.mkdir(exist_ok=True)
    for f in fresh.glob("*.md"):
        f.unlink()
    rows = []
    tag = f"bench{os.getpid()}"
    offline = f"offlineword{os.getpid()}x"
    (fresh / "offline_20251122.md").write_text(f"written while nothing ran: {offline}\n")
    spawned = time.perf_counter()
    async with AsyncExitStack() as stack:
        server = await stack.enter_async_context(mcp_server(cfg, tag))
        first = await server.search(offline)
        rows.append(
            ("first answer, from spawning trove mcp", f"{time.perf_counter() - spawned:.2f} s")
        )
        rows.append(
            (
                "  it said catching_up / found the offline report",
                f"{first['freshness']['catching_up']} / {bool(first['results'])}",
            )
        )
        child_peak = 0  # the RSS of the process reconciling for the watcher, as sampled
        next_sample = 0.0  # sampled every 0.1 s: reading /proc takes the CPU it measures
        while not (
            status_of(settings).get("pid") == server.pid
            and status_of(settings).get("state") == "watching"
        ):
            if time.monotonic() >= next_sample:
                next_sample = time.monotonic() + 0.1
                for child in psutil.Process(server.pid).children():
                    with contextlib.suppress(psutil.Error):
                        child_peak = max(child_peak, child.memory_info().rss)
            await anyio.sleep(0.005)
        rows.append(("catch-up ended, from spawning", f"{time.perf_counter() - spawned:.2f} s"))
        rows.append(
            (
                "  the catch-up itself (every collection)",
                f"{status_of(settings)['catch_up_s']:.2f} s",
            )
        )
        after = await server.search(offline)
        rows.append(("  the offline report found after it", str(bool(after["results"]))))
        rss = psutil.Process(server.pid).memory_info().rss / 1048576
        rows.append(("trove mcp (the watcher) RSS after its catch-up", f"{rss:.0f} MB"))
        rows.append(
            ("  its reconcile process's peak RSS (sampled)", f"{child_peak / 1048576:.0f} MB")
        )

        existing = sorted(root.glob("*/*.md"))[:: max(1, args.reports // max(1, args.edits))]
        kinds = ("add", "edit", "delete", "move", "rename")
        latencies: dict[str, list[float]] = {k: [] for k in kinds}
        missed = 0
        for i in range(args.edits):
            kind = kinds[i % len(kinds)]
            word = f"freshword{i:04d}x{os.getpid()}"
            target = existing[i % len(existing)]
            if kind == "add":
                (fresh / f"fresh_{i:04d}_20251122.md").write_text(f"# new {i}\n\n{word}\n")
            elif kind == "edit":
                target.write_text(target.read_text() + f"\nappended {word}\n")
            elif kind == "rename":  # an editor's save: a temporary file renamed over it
                tmp = target.with_name(f".{target.name}.swp")
                tmp.write_text(target.read_text() + f"\nsaved {word}\n")
                os.replace(tmp, target)
            elif kind == "move":
                moved = fresh / f"moved_{i:04d}_20251122.md"
                (fresh / f"tomove_{i:04d}_20251122.md").write_text(f"to move {word}\n")
                await shown(partial(_found, server, word))  # in the index first
                os.rename(fresh / f"tomove_{i:04d}_20251122.md", moved)
            else:  # delete
                gone = fresh / f"todelete_{i:04d}_20251122.md"
                gone.write_text(f"to delete {word}\n")
                await shown(partial(_found, server, word))
                gone.unlink()
            if kind == "delete":
                took = await shown(partial(_absent, server, word))
            elif kind == "move":
                took = await shown(partial(_found, server, word, "moved_"))
            else:
                took = await shown(partial(_found, server, word))
            if took is None:
                missed += 1
            else:
                latencies[kind].append(took)
        every = [t for ts in latencies.values() for t in ts]
        if every:
            rows.append(
                (
                    f"save -> visible, {args.edits} edits: p50 / p95 / max",
                    f"{pct(every, 50) * 1000:.0f} / {pct(every, 95) * 1000:.0f} / {max(every) * 1000:.0f} ms",
                )
            )
            for kind, ts in latencies.items():
                if ts:
                    rows.append(
                        (
                            f"  {kind}: p50 / max",
                            f"{pct(ts, 50) * 1000:.0f} / {max(ts) * 1000:.0f} ms",
                        )
                    )
        rows.append(("missed (not shown within 10 s)", str(missed)))

        if args.kills:
            servers = [server]
            for n in range(2):
                servers.append(await stack.enter_async_context(mcp_server(cfg, f"{tag}s{n}")))
            takeovers = []
            for k in range(args.kills):
                victim = int(status_of(settings)["pid"])
                os.kill(victim, signal.SIGKILL)
                word = f"killword{k}x{os.getpid()}"
                (fresh / f"afterkill_{k}_20251122.md").write_text(f"after a kill {word}\n")
                others = [s for s in servers if s.pid != victim]
                took = await shown(partial(_found, others[0], word), timeout=30)
                takeovers.append(float("inf") if took is None else took)
                servers = others
                servers.append(await stack.enter_async_context(mcp_server(cfg, f"{tag}r{k}")))
            rows.append(
                (
                    f"kill -9 of the watcher -> a new report visible ({args.kills} kills): p50 / max",
                    f"{pct(takeovers, 50) * 1000:.0f} / {max(takeovers) * 1000:.0f} ms",
                )
            )
    for f in fresh.glob("*.md"):
        f.unlink()
    fresh.rmdir()
    return rows


async def _found(server: Server, word: str, prefix: str = "") -> bool:
    results = (await server.search(word))["results"]
    return any(r["report_name"].startswith(prefix) for r in results)


async def _absent(server: Server, word: str) -> bool:
    return not (await server.search(word))["results"]


if __name__ == "__main__":
    raise SystemExit(main())
