"""What watching a tree by polling costs: trove's Poller against watchdog's PollingObserver.

    python bench/bench_polling.py [--files 10000] [--folders 200] [--interval 2]
        [--sweep 30] [--budget 0.02] [--live 20] [--trials 5] [--workdir DIR]

Builds ``--files`` small reports in ``--folders`` command folders (the reports layout),
then measures, for the Poller and for the PollingObserver's way (a DirectorySnapshot of
the tree and its diff with the last one, every pass):
- the CPU time of one idle pass (the Poller's over one whole sweep period, as its slices
  differ), and the CPU share that makes at ``--interval`` (each waits the interval, then
  makes a pass);
- the CPU share of each running idle for ``--live`` seconds, as the process counts it;
- the time from an edit in place (same size) and from a new file to its event.
Reading the event queue is the measurement itself, not a test wait.
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.polling import PollingObserver
from watchdog.utils.dirsnapshot import DirectorySnapshot, DirectorySnapshotDiff

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.polling import Poller
from indexer.sources.reports import ReportsSource

BODY = "# report\n\nproxy token decode websocket\n" * 4


def build(root: Path, files: int, folders: int) -> list[Path]:
    """``files`` reports spread over ``folders`` command folders."""
    paths = []
    for i in range(files):
        folder = root / f"cmd{i % folders:03d}"
        if i < folders:
            folder.mkdir(parents=True)
        path = folder / f"r{i:06d}_20251101.md"
        path.write_text(BODY)
        paths.append(path)
    # An idle tree: no folder changed in the last seconds (those are listed every pass).
    hour_ago = time.time_ns() - 3600 * 10**9
    for i in range(min(files, folders)):
        os.utime(root / f"cmd{i:03d}", ns=(hour_ago, hour_ago))
    return paths


def cpu_of(action: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds of this thread, wall seconds) of one call."""
    cpu, wall = time.thread_time(), time.perf_counter()
    action()
    return time.thread_time() - cpu, time.perf_counter() - wall


def live_share(seconds: float) -> float:
    """The process's CPU share over ``seconds`` of wall time (this thread only waits)."""
    before = time.process_time()
    time.sleep(seconds)
    return (time.process_time() - before) / seconds


def edit_in_place(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[::-1] if text[::-1] != text else text.upper())


def latency(
    events: queue.Queue[FileSystemEvent],
    path: Path,
    change: Callable[[Path], object],
    kind: str,
    timeout: float,
) -> float:
    """Seconds from ``change(path)`` to the event of that ``kind`` on ``path``."""
    while not events.empty():
        events.get_nowait()
    change(path)
    started = time.perf_counter()
    deadline = started + timeout
    while (left := deadline - time.perf_counter()) > 0:
        try:
            event = events.get(timeout=left)
        except queue.Empty:
            break
        if event.event_type == kind and event.src_path == str(path):
            return time.perf_counter() - started
    return math.inf


class _ToQueue(FileSystemEventHandler):
    def __init__(self, events: queue.Queue[FileSystemEvent]) -> None:
        self.events = events

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.events.put(event)


def measure_latencies(
    events: queue.Queue[FileSystemEvent],
    paths: list[Path],
    rng: random.Random,
    trials: int,
    interval: float,
    timeout: float,
) -> tuple[list[float], list[float]]:
    edits, news = [], []
    for trial in range(trials):
        # At a random moment of the interval, as changes come (not just after a pass).
        time.sleep(rng.uniform(0, interval))
        target = rng.choice(paths)
        edits.append(latency(events, target, edit_in_place, "modified", timeout))
        time.sleep(rng.uniform(0, interval))
        new = target.parent / f"new{trial}_{rng.randrange(10**9)}_20251102.md"
        news.append(latency(events, new, lambda p: p.write_text(BODY), "created", timeout))
    return edits, news


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--sweep", type=float, default=30.0)
    parser.add_argument("--budget", type=float, default=0.02)
    parser.add_argument("--live", type=float, default=20.0, help="seconds of each live run")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    console = Console()

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = Path(tmp) / "reports"
        started = time.perf_counter()
        paths = build(root, args.files, args.folders)
        console.print(
            f"{args.files:,} files in {args.folders} folders built in "
            f"{time.perf_counter() - started:.1f} s"
        )
        source = ReportsSource()
        process = psutil.Process()

        # --- the Poller, pass by pass, in this thread
        events: queue.Queue[FileSystemEvent] = queue.Queue()
        poller = Poller(root, source, events.put, args.interval, args.sweep, args.budget)
        rss = process.memory_info().rss
        first_cpu, _ = cpu_of(poller.poll)
        poller_mb = (process.memory_info().rss - rss) / 2**20
        passes = max(1, math.ceil(args.sweep / args.interval))
        idle = [cpu_of(poller.poll) for _ in range(passes)]
        assert events.empty(), "an idle pass reported something"
        poller_cpu = statistics.mean(c for c, _ in idle)
        poller_wall = statistics.mean(w for _, w in idle)
        swept = poller.last_swept

        # --- the PollingObserver's pass: a snapshot of the tree and its diff with the last
        previous = DirectorySnapshot(str(root))
        snaps = []
        for _ in range(3):

            def snapshot_pass() -> None:
                nonlocal previous
                current = DirectorySnapshot(str(root))
                DirectorySnapshotDiff(previous, current)
                previous = current

            snaps.append(cpu_of(snapshot_pass))
        snap_cpu = statistics.mean(c for c, _ in snaps)
        snap_wall = statistics.mean(w for _, w in snaps)

        # --- each running idle, then the time from a change to its event
        poller = Poller(root, source, events.put, args.interval, args.sweep, args.budget)
        poller.start()
        try:
            poller_live = live_share(args.live)
            timeout = 2 * args.sweep + 10
            p_edits, p_news = measure_latencies(
                events, paths, rng, args.trials, args.interval, timeout
            )
        finally:
            poller.stop()
            poller.join()
        observer = PollingObserver(timeout=args.interval)
        observer.schedule(_ToQueue(events), str(root), recursive=True)
        observer.start()
        try:
            observer_live = live_share(args.live)
            o_edits, o_news = measure_latencies(
                events, paths, rng, args.trials, args.interval, 4 * args.interval + 60
            )
        finally:
            observer.stop()
            observer.join()

    def share(cpu: float, wall: float) -> str:
        return f"{100 * cpu / (args.interval + wall):.2f}%"

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:,.1f}"

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} / {max(values):.2f}"

    table = Table(
        title=f"{args.files:,} files, {args.folders} folders; interval {args.interval:g} s, "
        f"sweep {args.sweep:g} s, budget {args.budget:g}"
    )
    table.add_column("")
    table.add_column("Poller", justify="right")
    table.add_column("PollingObserver", justify="right")
    table.add_column("ratio", justify="right")
    table.add_row("first pass: CPU ms", ms(first_cpu), ms(snap_cpu), "")
    table.add_row(
        "idle pass: CPU ms",
        ms(poller_cpu),
        ms(snap_cpu),
        f"{snap_cpu / poller_cpu:.0f}x" if poller_cpu else "",
    )
    table.add_row("idle pass: wall ms", ms(poller_wall), ms(snap_wall), "")
    table.add_row("files stat'ed a pass", f"{swept:,}", f"{args.files:,}", "")
    table.add_row(
        "CPU share, from passes", share(poller_cpu, poller_wall), share(snap_cpu, snap_wall), ""
    )
    table.add_row(
        f"CPU share, {args.live:g} s live",
        f"{100 * poller_live:.2f}%",
        f"{100 * observer_live:.2f}%",
        f"{observer_live / poller_live:.0f}x" if poller_live else "",
    )
    table.add_row("edit in place -> event, s (p50 / max)", spread(p_edits), spread(o_edits), "")
    table.add_row("new file -> event, s (p50 / max)", spread(p_news), spread(o_news), "")
    table.add_row("memory after the first pass, MB", f"{poller_mb:.1f}", "", "")
    console.print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
