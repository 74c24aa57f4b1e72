"""How fresh the daemon keeps the index: file write -> visible to a query in another process.

    python bench/bench_freshness.py [--reports 10000] [--edits 50] [--burst 5000] [--workdir DIR]

Generates (or reuses) a corpus with bench/gen_corpus.py, starts `trove daemon` on it as a
separate process, then from this process (a reader that keeps its searcher open, as a
query server does):
- makes ``--edits`` changes, alternating new files and modifications of existing ones,
  each with a unique word, and times from the write returning to search_reports finding
  that word (p50/p95/max);
- creates ``--burst`` files in one go in a new folder and times until all are indexed;
- reads the daemon's resident memory.
Polling the reader every millisecond is the measurement itself, not a test wait.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen_corpus import MANIFEST, generate

from indexer.config import settings_from_file
from indexer.engine.base import TermClause
from indexer.sources.registry import get_source
from indexer.store import CollectionIndex
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
    args = parser.parse_args(argv)
    console = Console()

    cfg = ensure_corpus(args.workdir, args.reports)
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

    table = Table(title=f"trove freshness ({args.reports} reports, 2 cores, warm cache)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
