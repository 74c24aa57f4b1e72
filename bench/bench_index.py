"""How fast trove builds and keeps its indexes, against a plain Python read of the files.

    python bench/bench_index.py [--reports 10000] [--workdir /tmp/trove-bench] \
        [--collections reports,commands,conversations] [--profile] [--pss]

Generates a corpus with bench/gen_corpus.py (or reuses the one in WORKDIR/corpus if it was
made with the same arguments), then for each collection measures, in one run:
  floor      walk the source folder, read every file's bytes and decode them (what any
             indexer has to do at least)
  build      Syncer.reconcile(full=True) into an empty index
  no-change  reconcile with nothing changed (3 runs, median)
  10 edited  reconcile after appending a line to 10 files (3 rounds, median)
  size       the index folder on disk
The page cache cannot be dropped here: every figure is warm cache.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import psutil
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_corpus import CorpusSpec, generate, read_manifest

from indexer.config import Settings, settings_from_dict
from indexer.sources.base import Source
from indexer.sources.registry import SOURCES, get_source
from indexer.store import Summary, Syncer

TARGET_DOCS_PER_S = 300
TARGET_NO_CHANGE_S = 1.0
EDITED_FILES = 10
ROUNDS = 3

T = TypeVar("T")
console = Console(stderr=True)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


@dataclass
class Result:
    collection: str
    files: int = 0
    megabytes: float = 0.0
    floor_s: float = 0.0
    build_s: float = 0.0
    build_cpu_s: float = 0.0
    docs: int = 0
    no_change_s: list[float] = field(default_factory=list)
    edited_s: list[float] = field(default_factory=list)
    index_mb: float = 0.0
    segments: int = 0
    peak_rss_mb: float = 0.0
    peak_total_rss_mb: float = 0.0
    # The same sum with each page shared between processes (the forked writers share
    # their parent's) counted once, in shares (PSS): the memory the build takes.
    peak_total_pss_mb: float = 0.0
    # Its parts: this process (the store: reading, parsing) and the largest writer.
    peak_own_pss_mb: float = 0.0
    peak_child_pss_mb: float = 0.0
    load: list[float] = field(default_factory=list)

    @property
    def docs_per_s(self) -> float:
        return self.docs / self.build_s if self.build_s else 0.0


# --------------------------------------------------------------------------- corpus


def ensure_corpus(corpus: Path, spec: CorpusSpec) -> None:
    manifest = read_manifest(corpus)
    wanted = {k: v for k, v in vars(spec).items()}
    if manifest and all(manifest.get(k) == v for k, v in wanted.items()):
        console.print(f"reusing the corpus in {corpus}")
        return
    console.print(f"generating the corpus in {corpus} ...")
    m = generate(corpus, spec.reports, spec.commands, spec.conversations, spec.report_kb, spec.seed)
    console.print(f"  done in {m['seconds']} s")


def load_settings(corpus: Path) -> Settings:
    config = corpus / "trove.toml"
    raw = tomllib.loads(config.read_text(encoding="utf-8"))
    return settings_from_dict(raw, base=corpus, origin=config)


# --------------------------------------------------------------------------- measures


def source_files(root: Path, source: Source) -> list[str]:
    """The collection's files, found the plain way (os.walk and the source's filters)."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        prefix = tuple(Path(folder).relative_to(root).parts)
        dirs[:] = [d for d in dirs if source.wants_dir((*prefix, d))]
        found.extend(os.path.join(folder, f) for f in files if source.wants_file((*prefix, f)))
    return found


def read_floor(root: Path, source: Source) -> tuple[float, int, int]:
    """Seconds to walk, read and decode every file; how many files; how many bytes."""
    started = time.perf_counter()
    paths = source_files(root, source)
    total = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        total += len(data.decode("utf-8", errors="replace"))
    return time.perf_counter() - started, len(paths), total


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (Whoosh's procs>1 workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def watch_memory(
    result: Result, every_s: float = 0.1, pss_every_s: float | None = None
) -> Iterator[None]:
    """Sample the resident size of this process and its children (the writer processes):
    RSS every ``every_s``, and PSS (shared pages in shares) every ``pss_every_s`` if
    given. PSS costs: the kernel walks a process's pages for it, some 17 ms a GB, so
    sampled as often as RSS it took most of a core from a 1M build (27 min instead of 19)."""
    stop = threading.Event()
    me = psutil.Process()
    next_pss = 0.0

    def sample() -> None:
        nonlocal next_pss
        while not stop.wait(every_s):
            pss = pss_every_s is not None and time.monotonic() >= next_pss
            if pss and pss_every_s is not None:
                next_pss = time.monotonic() + pss_every_s
            sizes, shares = [], []
            own = 0  # this process's PSS, the rest its writers'
            for proc in [me, *me.children(recursive=True)]:
                try:
                    if pss:
                        full = proc.memory_full_info()
                        sizes.append(full.rss)
                        share = getattr(full, "pss", full.rss)
                        if proc is me:
                            own = share
                        else:
                            shares.append(share)
                    else:
                        sizes.append(proc.memory_info().rss)
                except psutil.Error:
                    continue
            result.peak_rss_mb = max(result.peak_rss_mb, max(sizes, default=0) / 1e6)
            result.peak_total_rss_mb = max(result.peak_total_rss_mb, sum(sizes) / 1e6)
            if pss:
                total = (own + sum(shares)) / 1e6
                result.peak_total_pss_mb = max(result.peak_total_pss_mb, total)
                result.peak_own_pss_mb = max(result.peak_own_pss_mb, own / 1e6)
                child = max(shares, default=0) / 1e6
                result.peak_child_pss_mb = max(result.peak_child_pss_mb, child)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def check(summary: Summary, what: str) -> None:
    if summary.warnings or summary.skipped:
        console.print(
            f"[yellow]{what}: {len(summary.warnings)} warnings, skipped {dict(summary.skipped)}"
        )


def bench_collection(
    settings: Settings, name: str, profile: Path | None, pss_every_s: float | None = None
) -> Result:
    source = get_source(name)
    root = settings.source_root(name)
    assert root is not None
    result = Result(name)
    result.load.append(os.getloadavg()[0])

    # Twice: the first run warms the page cache for everything that follows.
    read_floor(root, source)
    result.floor_s, result.files, size = read_floor(root, source)
    result.megabytes = size / 1e6
    console.print(f"[bold]{name}[/]: {result.files} files, floor {result.floor_s:.2f} s")

    shutil.rmtree(settings.index_dir / name, ignore_errors=True)
    syncer = Syncer(settings, source)
    cpu = cpu_seconds()
    with watch_memory(result, pss_every_s=pss_every_s):
        if profile:
            profiler = cProfile.Profile()
            result.build_s, summary = timed(lambda: profiler.runcall(syncer.reconcile, full=True))
            profiler.dump_stats(profile)
        else:
            result.build_s, summary = timed(lambda: syncer.reconcile(full=True))
    result.build_cpu_s = cpu_seconds() - cpu
    result.load.append(os.getloadavg()[0])
    result.docs = summary.added
    check(summary, "build")
    console.print(f"  build {result.build_s:.1f} s, {result.docs_per_s:.0f} docs/s")

    for _ in range(ROUNDS):
        seconds, summary = timed(lambda: Syncer(settings, source).reconcile())
        assert not summary.changed, f"no-change reconcile changed something: {summary.as_dict()}"
        result.no_change_s.append(seconds)
    console.print(f"  no-change reconcile {statistics.median(result.no_change_s):.2f} s")

    paths = sorted(source_files(root, source))
    originals: dict[str, bytes] = {}
    try:
        for round_ in range(ROUNDS):
            step = max(1, len(paths) // EDITED_FILES)
            picked = paths[round_::step][:EDITED_FILES]
            for path in picked:
                data = originals.setdefault(path, Path(path).read_bytes())
                Path(path).write_bytes(
                    data + f"\nBench edit {round_}: proxy 407 loop seen again.\n".encode()
                )
            seconds, summary = timed(lambda: Syncer(settings, source).reconcile())
            assert summary.updated + summary.added == len(picked), summary.as_dict()
            result.edited_s.append(seconds)
    finally:
        for path, data in originals.items():
            Path(path).write_bytes(data)
    console.print(
        f"  reconcile after {EDITED_FILES} edits {statistics.median(result.edited_s):.2f} s"
    )

    index_path = settings.index_dir / name
    result.index_mb = folder_bytes(index_path) / 1e6
    result.segments = len(list(index_path.glob("*.seg")))
    result.load.append(os.getloadavg()[0])
    return result


# --------------------------------------------------------------------------- output


def print_table(results: list[Result], spec: CorpusSpec) -> None:
    out = Console(width=max(Console().width, 110))
    table = Table(
        title=f"trove indexing, {spec.reports} reports of ~{spec.report_kb:g} KB "
        f"(warm cache, {os.cpu_count()} CPUs)",
    )
    table.add_column("measure", no_wrap=True)
    for r in results:
        table.add_column(r.collection, justify="right")

    def row(label: str, fmt: Callable[[Result], str]) -> None:
        table.add_row(label, *(fmt(r) for r in results))

    row("files", lambda r: f"{r.files}")
    row("text read", lambda r: f"{r.megabytes:.1f} MB")
    row("floor: walk + read + decode", lambda r: f"{r.floor_s:.2f} s")
    row("floor rate", lambda r: f"{r.files / r.floor_s:,.0f} files/s")
    row("full build", lambda r: f"{r.build_s:.1f} s")
    row("full build rate", lambda r: f"{r.docs_per_s:,.0f} docs/s")
    row("full build CPU (all processes)", lambda r: f"{r.build_cpu_s:.1f} s")
    row(
        "full build peak RSS: largest process, all",
        lambda r: f"{r.peak_rss_mb:,.0f} MB, {r.peak_total_rss_mb:,.0f} MB",
    )
    row(
        "full build peak PSS, all processes",
        lambda r: f"{r.peak_total_pss_mb:,.0f} MB" if r.peak_total_pss_mb else "(--pss)",
    )
    row(
        "full build peak PSS: this process, largest writer",
        lambda r: (
            f"{r.peak_own_pss_mb:,.0f} MB, {r.peak_child_pss_mb:,.0f} MB"
            if r.peak_total_pss_mb
            else "(--pss)"
        ),
    )
    row("build / floor", lambda r: f"{r.build_s / r.floor_s:,.0f}x")
    row(
        f"no-change reconcile (median of {ROUNDS})",
        lambda r: f"{statistics.median(r.no_change_s):.2f} s",
    )
    row("no-change / floor", lambda r: f"{statistics.median(r.no_change_s) / r.floor_s:.1f}x")
    row(
        f"reconcile, {EDITED_FILES} files edited (median of {ROUNDS})",
        lambda r: f"{statistics.median(r.edited_s):.2f} s",
    )
    row("index on disk", lambda r: f"{r.index_mb:.1f} MB ({r.segments} segments)")
    # Other work on the machine slows every figure; say how much there was.
    row("load average: start, after build, end", lambda r: ", ".join(f"{x:.1f}" for x in r.load))
    out.print(table)

    for r in results:
        build_ok = r.docs_per_s >= TARGET_DOCS_PER_S
        idle = statistics.median(r.no_change_s)
        idle_ok = idle <= TARGET_NO_CHANGE_S
        out.print(
            f"{r.collection}: build {r.docs_per_s:.0f} docs/s "
            f"({'meets' if build_ok else 'MISSES'} >= {TARGET_DOCS_PER_S}); "
            f"no-change {idle:.2f} s ({'meets' if idle_ok else 'MISSES'} <= "
            f"{TARGET_NO_CHANGE_S:g} s)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reports", type=int, default=10000)
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--report-kb", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench"))
    parser.add_argument(
        "--collections", default="reports", help="comma-separated, from: " + ", ".join(SOURCES)
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile each full build (this process only) into WORKDIR",
    )
    parser.add_argument(
        "--pss",
        action="store_true",
        help="also sample the build's PSS (shared pages counted once), every 2 s: "
        "it costs the build some CPU",
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.collections.split(",") if n.strip()]
    unknown = [n for n in names if n not in SOURCES]
    if unknown or not names:
        parser.error(f"--collections: unknown {', '.join(unknown)}; known: {', '.join(SOURCES)}")

    spec = CorpusSpec(args.reports, args.commands, args.conversations, args.report_kb, args.seed)
    corpus = args.workdir / "corpus"
    ensure_corpus(corpus, spec)
    settings = load_settings(corpus)
    results = []
    for name in names:
        profile = args.workdir / f"build-{name}.prof" if args.profile else None
        results.append(bench_collection(settings, name, profile, 2.0 if args.pss else None))
        if profile:
            console.print(f"  profile: {profile}")
            pstats.Stats(str(profile), stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    print_table(results, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
