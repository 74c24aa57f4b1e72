"""How fast search_commands and search_workspace answer on ~10k documents, against a scan.

    python bench/bench_search.py [--workdir /tmp/trove-bench-search] [--rounds 5] \
        [--reports 10000] [--commands 200] [--conversations 5000] [--no-scan]

Generates a corpus with bench/gen_corpus.py (or reuses WORKDIR/corpus if it was made with
the same arguments): by default 10,000 reports, 200 commands and 5,000 conversations
(about 10,000 conversation files). Brings the indexes in line (reconcile: a no-op when
they are), then, in one process with one QueryContext (as the MCP server keeps it):
  cold     the first query of each search (fills the per-process caches)
  p50/p95  a fixed mix of queries, ROUNDS times each, warm; for search_workspace, the
           queries found as written and those only the lower tiers answer, apart
  scan     what a user has without trove, on a few of the queries: a Python read of every
           file (commands and reports for search_commands; conversation files, line by
           line, for search_workspace) and ripgrep (`rg -i -F -c`) for search_workspace
Worst cases (a word in every file) are shown on their own, outside the mix.
Targets: p95 <= 50 ms for each search. The page cache is warm throughout.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_corpus import CorpusSpec, generate, read_manifest

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.commands import query_keywords, search_commands
from query.context import QueryContext
from query.workspace import search_workspace

TARGET_P95_MS = 50.0
T = TypeVar("T")

COMMAND_QUERIES = (
    "speech SDK log analysis",
    "meeting join slow proxy",
    "proxy configuration",
    "meeting join issue",
    "dns resolution",
    "websocket reconect",
    "clock skew",
    "kerberos spn",
    "pac file review",
    "vpn split tunnel",
    "tls handshake certificate",
    "oauth refresh token",
    "weekly planning",
    "why does transcription stop",
    "audio frame drops",
    "decode timeout",
    "407 authentication loop",
    "relay fallback tcp",
    "mtu blackhole",
    "analyze har capture",
)
# (query, date_range); "DAY" is replaced by a day folder of the corpus.
WORKSPACE_QUERIES: tuple[tuple[str, str | None], ...] = (
    ("WSAETIMEDOUT", None),
    ("0x80072efd", None),
    ("AADSTS50076", None),
    ("ZSS-E1042 decode timeout", None),
    ("split tunnel", None),
    ("407 Proxy Authentication Required", None),
    ("decode timeout", None),
    ("kerberos", None),
    ("proxy", None),
    ("tunnel conn", None),
    ("auth fail", None),
    ("代理服务器", None),
    ("heartbeat missed", None),
    ("Contoso", None),
    ("PAC returned PROXY", None),
    ("reconnect attempt", None),
    ("resolve timeout", "2024-05"),
    ("proxy", "2024-05"),
    ("kerberos", "2025-03"),
    ("token", "DAY"),
)
# Queries no line holds as written, answered by the lower tiers (every word in any order,
# corrected words, related words): plain questions, inflected and misspelt words.
LOWER_TIER_QUERIES: tuple[tuple[str, str | None], ...] = (
    ("kerberos ticket proxy timeouts", None),
    ("decoding timeouts", None),
    ("why does the websocket keep reconnecting", None),
    ("proxies failing authentication", None),
    ("how do I fix the decode timeout regression", None),
    ("certificates expiring during handshake", None),
    ("dns timeouts after waking", None),
    ("split tunnels", None),
    ("kerberos tikcet", None),
    ("websocket reconect storm", None),
    ("handshak certificat", None),
    ("sesion token expird", None),
    ("reconnecting websockets", "2024-05"),
)
WORST_CASES: tuple[tuple[str, str | None], ...] = (("the", None), ("e", None))
SCANNED_COMMANDS = ("speech SDK log analysis", "vpn split tunnel", "clock skew")
SCANNED_WORKSPACE = (("WSAETIMEDOUT", None), ("decode timeout", None), ("proxy", None))

console = Console(stderr=True)


@dataclass
class Timing:
    label: str
    date_range: str | None = None
    found: int = 0
    cold_ms: float = 0.0
    warm_ms: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return statistics.median(self.warm_ms)


def ms(fn: Callable[..., T], *args: object) -> tuple[float, T]:
    started = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - started) * 1000, result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# --------------------------------------------------------------------------- corpus


def ensure_corpus(corpus: Path, spec: CorpusSpec) -> None:
    manifest = read_manifest(corpus)
    if manifest and all(manifest.get(k) == v for k, v in vars(spec).items()):
        console.print(f"reusing the corpus in {corpus}")
        return
    console.print(f"generating the corpus in {corpus} ...")
    shutil.rmtree(corpus / "index", ignore_errors=True)
    m = generate(corpus, spec.reports, spec.commands, spec.conversations, spec.report_kb, spec.seed)
    console.print(f"  done in {m['seconds']} s")


def load_settings(corpus: Path) -> Settings:
    config = corpus / "trove.toml"
    raw = tomllib.loads(config.read_text(encoding="utf-8"))
    return settings_from_dict(raw, base=corpus, origin=config)


def ensure_indexes(settings: Settings) -> None:
    for name in ("commands", "reports", "conversations"):
        started = time.perf_counter()
        summary = Syncer(settings, get_source(name)).reconcile()
        console.print(
            f"index {name}: {summary.added} added, {summary.updated} updated, "
            f"{summary.unchanged} unchanged in {time.perf_counter() - started:.1f} s"
        )


# --------------------------------------------------------------------------- the scans


def scan_commands(settings: Settings, query: str) -> int:
    """search_commands without an index: read every command and report, look for the words."""
    words = query_keywords(query)
    commands_root, reports_root = settings.sources.commands, settings.sources.reports
    assert commands_root is not None and reports_root is not None
    found: Counter[str] = Counter()
    for path in commands_root.glob("*.md"):
        text = path.read_text(encoding="utf-8", errors="replace").lower()
        found[path.stem] += sum(w in text for w in words)
    for folder in reports_root.iterdir():
        for path in folder.glob("*.md"):
            text = path.read_text(encoding="utf-8", errors="replace").lower()
            found[folder.name] += all(w in text for w in words)
    return sum(1 for n in found.values() if n)


def day_folders(root: Path, date_range: str | None) -> list[Path]:
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    if date_range is None:
        return folders
    if len(date_range) == 7:
        return [p for p in folders if p.name == date_range or p.name.startswith(date_range + "-")]
    return [p for p in folders if p.name == date_range]


def scan_workspace(root: Path, query: str, date_range: str | None) -> int:
    """search_workspace without an index: every file of the range, line by line."""
    needle = query.lower()
    lines = 0
    for folder in day_folders(root, date_range):
        for dirpath, _dirs, files in os.walk(folder):
            for name in files:
                with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                    lines += sum(1 for line in f if needle in line.lower())
    return lines


def ripgrep_workspace(root: Path, query: str, date_range: str | None) -> int | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    targets = [str(p) for p in day_folders(root, date_range)]
    r = subprocess.run(
        [rg, "-i", "-F", "-c", "--no-filename", "--", query, *targets],
        capture_output=True,
        text=True,
        check=False,
    )
    return sum(int(n) for n in r.stdout.split())


# --------------------------------------------------------------------------- the run


def run_mix(
    labels: list[tuple[str, str | None]],
    call: Callable[[str, str | None], int],
    rounds: int,
    seed: int,
) -> list[Timing]:
    timings = {(q, d): Timing(q, d) for q, d in labels}
    for q, d in labels:
        t = timings[(q, d)]
        t.cold_ms, t.found = ms(call, q, d)
    order = list(labels)
    rng = random.Random(seed)
    for _ in range(rounds):
        rng.shuffle(order)
        for q, d in order:
            elapsed, _ = ms(call, q, d)
            timings[(q, d)].warm_ms.append(elapsed)
    return list(timings.values())


def report(title: str, timings: list[Timing], worst: list[Timing], out: Console) -> float:
    table = Table(title=title)
    for col in ("query", "date_range", "found", "first (ms)", "p50 (ms)", "max (ms)"):
        table.add_column(col, justify="left" if col in ("query", "date_range") else "right")
    for t in timings:
        table.add_row(
            t.label,
            t.date_range or "",
            str(t.found),
            f"{t.cold_ms:.1f}",
            f"{t.p50:.1f}",
            f"{max(t.warm_ms):.1f}",
        )
    for t in worst:
        table.add_row(
            f"{t.label} (worst case)",
            t.date_range or "",
            str(t.found),
            f"{t.cold_ms:.1f}",
            f"{t.p50:.1f}",
            f"{max(t.warm_ms):.1f}",
        )
    out.print(table)
    every = [x for t in timings for x in t.warm_ms]
    p50, p95 = percentile(every, 0.5), percentile(every, 0.95)
    verdict = "meets" if p95 <= TARGET_P95_MS else "MISSES"
    out.print(
        f"{title}: {len(every)} warm queries, p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
        f"max {max(every):.1f} ms ({verdict} p95 <= {TARGET_P95_MS:g} ms)"
    )
    return p95


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reports", type=int, default=10000)
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=5000)
    parser.add_argument("--report-kb", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trove-bench-search"))
    parser.add_argument("--no-scan", action="store_true", help="skip the scans (slow)")
    args = parser.parse_args(argv)

    spec = CorpusSpec(args.reports, args.commands, args.conversations, args.report_kb, args.seed)
    corpus = args.workdir / "corpus"
    ensure_corpus(corpus, spec)
    settings = load_settings(corpus)
    ensure_indexes(settings)
    conv_root = settings.sources.conversations
    assert conv_root is not None
    files = sum(len(f) for _, _, f in os.walk(conv_root))
    days = sorted(p.name for p in conv_root.iterdir() if len(p.name) == 10)
    day = days[len(days) // 2]
    workspace_mix = [(q, day if d == "DAY" else d) for q, d in WORKSPACE_QUERIES]

    ctx = QueryContext.from_settings(settings)
    out = Console(width=max(Console().width, 110))
    try:

        def commands(q: str, _d: str | None) -> int:
            return search_commands(ctx, q).total_found

        def workspace(q: str, d: str | None) -> int:
            return search_workspace(ctx, q, d).total_found

        cmd = run_mix([(q, None) for q in COMMAND_QUERIES], commands, args.rounds, args.seed)
        ws = run_mix(workspace_mix, workspace, args.rounds, args.seed)
        ws_lower = run_mix(list(LOWER_TIER_QUERIES), workspace, args.rounds, args.seed)
        worst = run_mix(list(WORST_CASES), workspace, args.rounds, args.seed)
    finally:
        ctx.close()

    out.print(
        f"corpus: {spec.reports} reports, {spec.commands} commands, {files} conversation files "
        f"({spec.conversations} conversations); {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end, warm page cache"
    )
    p95_cmd = report("search_commands", cmd, [], out)
    p95_ws = report("search_workspace", ws, worst, out)
    p95_lower = report("search_workspace, lower tiers", ws_lower, [], out)

    if not args.no_scan:
        table = Table(title="against a scan without an index (one run each)")
        for col in (
            "search",
            "query",
            "trove p50 (ms)",
            "python scan (ms)",
            "ripgrep (ms)",
            "ratio",
        ):
            table.add_column(col, justify="left" if col in ("search", "query") else "right")
        by_cmd = {t.label: t for t in cmd}
        for q in SCANNED_COMMANDS:
            scan_ms, _ = ms(scan_commands, settings, q)
            trove = by_cmd[q].p50
            table.add_row(
                "commands", q, f"{trove:.1f}", f"{scan_ms:.0f}", "", f"{scan_ms / trove:.0f}x"
            )
        by_ws = {(t.label, t.date_range): t for t in ws}
        for q, d in SCANNED_WORKSPACE:
            scan_ms, n_scan = ms(scan_workspace, conv_root, q, d)
            rg_ms, n_rg = ms(ripgrep_workspace, conv_root, q, d)
            trove_t = by_ws[(q, d)]
            if n_scan != trove_t.found:
                console.print(f"[yellow]{q!r}: scan counts {n_scan} lines, trove {trove_t.found}")
            fastest = min(scan_ms, rg_ms if n_rg is not None else scan_ms)
            table.add_row(
                "workspace",
                q,
                f"{trove_t.p50:.1f}",
                f"{scan_ms:.0f}",
                f"{rg_ms:.0f}" if n_rg is not None else "n/a",
                f"{fastest / trove_t.p50:.0f}x",
            )
        out.print(table)
        out.print("ratio: the faster alternative's time over trove's p50")
    return 0 if max(p95_cmd, p95_ws, p95_lower) <= TARGET_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main())
