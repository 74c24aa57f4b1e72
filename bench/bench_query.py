"""search_reports speed: trove's index against the alternatives a user has.

    python bench/bench_query.py [--sizes 10000,100000] [--work-dir DIR] [--queries 60]
                                [--alt-queries 8] [--seed 7] [--json FILE]
                                [--config TROVE_TOML ...] [--kinds question,word]

For each size: a generated corpus of reports (bench/gen_corpus.py; reused when the one in
WORK_DIR/reports-N was made with the same arguments), its index (built or brought up to
date first, not timed: bench_index.py times that), then queries drawn from the corpus:

  word      a word (3+ letters) drawn uniformly from the distinct words of 50 reports
  keywords  two consecutive words of a report, neither among the 100 most frequent
  fragment  4-6 letters from inside a word of 7+ letters
  cjk       2-4 consecutive CJK characters from a report that has some
  text      2-3 consecutive words as written (stop words, punctuation): shown, not a goal
  common    the most frequent words and pairs of them: the worst case, shown, not a goal
  costly    what costs an index most (issue 16): the commonest words and two-word phrases,
            e, a, to, in, re, two-letter acronyms (IP, OS, DB, UI, VM) and a fragment that
            ends one word and starts the next; every one also runs with rg, and the table
            shows each (goals: each at least as fast as rg, the class's p50 5x faster)

Each query runs through search_reports (top 10, a long-lived QueryContext as in the
server); a few of each kind also run as the spec's plain Python scan (read every file,
count the lower-cased query) and as `rg -i -F -c` over the same files, whose cost hardly
depends on the query. The scan's answers are compared with trove's. Times are wall-clock
milliseconds on a warm page cache; ratios are the alternative's p50 over trove's p50.

With ``--config``, the corpora are those of the trove.toml files given (one per size, in
place of ``--sizes``: gen_corpus.py's corpora of 10k and 100k reports, say, with their
other collections), their indexes taken as they are: nothing is generated, built or
written, and an index of another schema than this trove's is refused (a search would
rebuild it). ``--kinds`` runs only the kinds named.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gen_corpus  # bench/ is not a package: its folder is on the path

from indexer.collection import CollectionIndex
from indexer.config import Settings, load_settings
from indexer.sources.base import is_hidden
from indexer.sources.reports import ReportsSource, date_from_name
from indexer.store import Syncer
from query.context import QueryContext
from query.reports import query_words, search_reports

KINDS = ("word", "keywords", "fragment", "cjk", "text", "common", "question", "costly")
# Answered by the forgiving tiers (related, fuzzy), not compared with the scan or rg.
FORGIVING_KINDS = ("question",)
FIRST_QUESTION = "why do the timeouts and reconnecs fail"
# Every query of these runs with rg too (and the scan), and the table lists each.
EACH_KINDS = ("costly",)
# goal: (kinds, {size: p50 at least this many times faster than rg}, {size: p95 at most, ms})
GOALS: dict[str, tuple[tuple[str, ...], dict[int, float], dict[int, float]]] = {
    "word queries": (("word", "keywords"), {10000: 45, 100000: 150}, {100000: 25}),
    "fragment/CJK queries": (("fragment", "cjk"), {10000: 20, 100000: 100}, {100000: 50}),
    "costly queries": (("costly",), {10000: 5, 100000: 5}, {}),
}
FRAGMENTS = ["e", "a", "to", "in", "re"]
ACRONYMS = ["IP", "OS", "DB", "UI", "VM"]
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")
_WORD = re.compile(r"[^\W\d_]{3,}")


# --------------------------------------------------------------------------- corpus, index


def corpus(work_dir: Path, reports: int, seed: int) -> Path:
    """WORK_DIR/reports-N, generated unless it already holds that corpus."""
    out = work_dir / f"reports-{reports}"
    want = {
        "reports": reports,
        "commands": 0,
        "conversations": 0,
        "report_kb": 4.0,
        "seed": seed,
        "version": gen_corpus.GENERATOR_VERSION,
    }
    have = gen_corpus.read_manifest(out) or {}
    if any(have.get(k) != v for k, v in want.items()):
        print(f"generating {reports} reports in {out} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        shutil.rmtree(out / "index", ignore_errors=True)
        gen_corpus.generate(out, reports=reports, commands=0, conversations=0, seed=seed)
        print(f"  {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return out


def reports_of(root: Path) -> list[Path]:
    return sorted(
        p
        for d in os.scandir(root)
        if d.is_dir() and not is_hidden(d.name)
        for p in Path(d.path).iterdir()
        if p.name.endswith(".md") and not is_hidden(p.name)
    )


# --------------------------------------------------------------------------- queries


def draw_queries(files: list[Path], n: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    texts = [p.read_text(encoding="utf-8") for p in rng.sample(files, min(200, len(files)))]
    vocab = sorted({w for t in texts[:50] for w in _WORD.findall(t)})
    long_words = [w for w in vocab if len(w) >= 7]
    cjk_runs = [r for t in texts for r in _CJK_RUN.findall(t)]
    extra = 0
    while not cjk_runs and extra < 20:  # 5% of reports have CJK: look further
        extra += 1
        more = [p.read_text(encoding="utf-8") for p in rng.sample(files, min(200, len(files)))]
        cjk_runs = [r for t in more for r in _CJK_RUN.findall(t)]
    counts: dict[str, int] = {}
    for t in texts:
        for w in _WORD.findall(t.lower()):
            counts[w] = counts.get(w, 0) + 1
    by_count = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    frequent, top100 = by_count[:8], set(by_count[:100])

    def runs(text: str) -> list[list[str]]:
        """Runs of consecutive words, as written, in a text's lines."""
        return [ln.split() for ln in text.splitlines() if len(ln.split()) >= 3]

    def text_phrase() -> str:
        lines = runs(rng.choice(texts)) or [["decode", "timeout"]]
        words = rng.choice(lines)
        k = rng.randint(2, 3)
        a = rng.randrange(max(1, len(words) - k + 1))
        return " ".join(words[a : a + k]).strip("`*#().,:;")

    def keywords() -> str:
        """Two consecutive words, neither among the 100 most frequent: what people type."""
        for _ in range(1000):
            lines = runs(rng.choice(texts))
            if not lines:
                continue
            words = rng.choice(lines)
            pairs = [
                (a, b)
                for a, b in itertools.pairwise(words)
                if _WORD.fullmatch(a.lower())
                and _WORD.fullmatch(b.lower())
                and a.lower() not in top100
                and b.lower() not in top100
            ]
            if pairs:
                return " ".join(rng.choice(pairs))
        return "decode timeout"

    def fragment() -> str:
        w = rng.choice(long_words)
        k = rng.randint(4, 6)
        a = rng.randint(1, len(w) - k)
        return w[a : a + k]

    def cjk() -> str:
        run = rng.choice(cjk_runs)
        k = rng.randint(2, min(4, len(run)))
        a = rng.randrange(len(run) - k + 1)
        return run[a : a + k]

    def misspelt(w: str) -> str:
        if len(w) < 5:
            return w
        i = rng.randrange(1, len(w) - 2)
        return w[:i] + w[i + 1] + w[i] + w[i + 2 :]

    def question() -> str:
        """A plain question of 3-4 content words: some inflected, some misspelt, with stop
        words between, in an order no report holds: what the forgiving tiers answer."""
        picked = [rng.choice(long_words).lower() for _ in range(rng.randint(3, 4))]
        shaped = [misspelt(w) if i == 0 else w + "s" if i == 1 else w for i, w in enumerate(picked)]
        rng.shuffle(shaped)
        return "why do the " + " and ".join(shaped) + " fail"

    common = frequent[: max(1, n // 4)] + [f"{a} {b}" for a, b in itertools.pairwise(frequent)]
    pairs: dict[tuple[str, str], int] = {}
    for t in texts:
        for line in t.lower().splitlines():
            words = line.split()
            for a, b in itertools.pairwise(words):
                if _WORD.fullmatch(a) and _WORD.fullmatch(b):
                    pairs[a, b] = pairs.get((a, b), 0) + 1
    top_pairs = [f"{a} {b}" for (a, b), _ in sorted(pairs.items(), key=lambda kv: (-kv[1], kv))][:4]
    a, b = top_pairs[0].split() if top_pairs else ("of", "the")
    across = f"{a[-2:]} {b[:2]}"  # ends one word and starts the next ("of the" -> "of th")
    costly = list(dict.fromkeys(by_count[:5] + top_pairs + FRAGMENTS + ACRONYMS + [across]))
    out: dict[str, list[str]] = {
        "word": [rng.choice(vocab) for _ in range(n)],
        "keywords": [keywords() for _ in range(n)],
        "fragment": [fragment() for _ in range(n)],
        "cjk": [cjk() for _ in range(n)] if cjk_runs else [],
        "text": [q for q in (text_phrase() for _ in range(n * 2)) if q.strip()][:n],
        "common": common[:n],
        "question": [question() for _ in range(n)],
        "costly": costly,
    }
    # Some in capitals: the search ignores case, so this costs nothing but must still work.
    for kind in ("word", "keywords"):
        out[kind] = [q.upper() if i % 5 == 0 else q for i, q in enumerate(out[kind])]
    return out


# --------------------------------------------------------------------------- the alternatives


def python_scan(files: list[Path], query: str, n: int = 10) -> list[tuple[str, int]]:
    """The search_reports spec as written: read each file, count the lower-cased query,
    rank by count then date (then path); reports with all the words if none matched."""
    lowered = query.strip().lower()

    def scan(needles: list[str]) -> list[tuple[Path, int]]:
        hits = []
        for p in files:
            text = p.read_bytes().decode("utf-8", errors="replace").lower()
            counts = [text.count(s) for s in needles]
            if all(counts):
                hits.append((p, sum(counts)))
        return hits

    hits = scan([lowered])
    words = query_words(lowered)
    if not hits and words and words != [lowered]:
        hits = scan(words)

    def order(hit: tuple[Path, int]) -> tuple[Any, ...]:
        day = date_from_name(hit[0].name)
        return (-hit[1], -day.toordinal() if day else 1, str(hit[0]))

    return [(str(p), c) for p, c in sorted(hits, key=order)[:n]]


def ripgrep(root: Path, query: str) -> None:
    subprocess.run(
        ["rg", "-i", "-F", "-c", "--no-messages", "--", query.strip(), str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


# --------------------------------------------------------------------------- measuring


@dataclass
class Times:
    trove: list[float] = field(default_factory=list)
    scan: list[float] = field(default_factory=list)
    rg: list[float] = field(default_factory=list)
    agree: int = 0
    compared: int = 0


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = call()
    return (time.perf_counter() - started) * 1000, value


def p50(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def p95(xs: list[float]) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def warm(root: Path, files: list[Path], index_dir: Path, have_rg: bool) -> None:
    """Reads the reports (as rg and the scan read them) and trove's index files."""
    if have_rg:
        ripgrep(root, "warm the page cache")
    for f in files:
        f.read_bytes()
    for f in sorted(index_dir.rglob("*")):
        if f.is_file():
            with f.open("rb") as stream:
                while stream.read(1 << 24):
                    pass


def as_built(settings: Settings) -> None:
    """Exits unless the reports index is of this trove's schema: a search would rebuild
    one of another (an index others share, say, by code older or newer than theirs)."""
    marker = CollectionIndex(settings.index_dir, ReportsSource()).read_marker()
    found = None if marker is None else marker.get("schema_version")
    if found != ReportsSource.schema_version:
        sys.exit(
            f"{settings.index_dir / 'reports'}: schema {found}, this trove's is "
            f"{ReportsSource.schema_version}; --config takes an index as it is, and a "
            "search would rebuild it: run the code it was built with"
        )


def run_size(
    args: argparse.Namespace, size: int, have_rg: bool, config: Path | None = None
) -> dict[str, Any]:
    """One corpus: generated for ``size`` reports, or ``config``'s as it is."""
    if config is None:
        out = corpus(args.work_dir, size, args.seed)
        settings = load_settings(out / "trove.toml")
    else:
        settings = load_settings(config)
        as_built(settings)
    root = settings.source_root("reports")
    assert root is not None
    if config is None:
        print(f"bringing the {size} index up to date ...", file=sys.stderr, flush=True)
        ms, summary = timed(lambda: Syncer(settings, ReportsSource()).reconcile())
        print(f"  {ms / 1000:.0f} s ({summary.added} added)", file=sys.stderr, flush=True)
    files = reports_of(root)
    size = len(files)
    queries = draw_queries(files, args.queries, args.seed)
    ctx = QueryContext.from_settings(settings)
    # The first queries open the index and load the term lists of its segments; the first
    # plain question (one word misspelt) what the forgiving tiers keep per segment (the
    # reports' sizes, the words by length and their neighbours): each once a process.
    first_ms, _ = timed(lambda: search_reports(ctx, "timeout"))
    first_units_ms, _ = timed(lambda: search_reports(ctx, "timeout, retry"))
    first_question_ms, _ = timed(lambda: search_reports(ctx, FIRST_QUESTION))
    rss_warm = psutil.Process().memory_info().rss
    times: dict[str, Times] = {}
    for kind in args.kinds:
        # Each kind starts on a warm page cache for rg, the scan and trove's index alike
        # (on a virtual machine, pages read minutes ago can take as long as a disk).
        warm(root, files, settings.index_dir, have_rg)
        t = times[kind] = Times()
        for i, q in enumerate(queries[kind]):
            ms, answer = timed(functools.partial(search_reports, ctx, q))
            t.trove.append(ms)
            if (i < args.alt_queries or kind in EACH_KINDS) and kind not in FORGIVING_KINDS:
                ms, expected = timed(functools.partial(python_scan, files, q))
                t.scan.append(ms)
                got = [(h.path, h.count) for h in answer.results if h.match in ("exact", "words")]
                t.compared += 1
                t.agree += got == expected
                if got != expected:
                    print(f"  DIFFERENT ANSWER for {q!r}", file=sys.stderr)
                if have_rg:
                    t.rg.append(timed(functools.partial(ripgrep, root, q))[0])
        print(
            f"  {kind}: {len(t.trove)} queries, p50 {p50(t.trove):.1f} ms",
            file=sys.stderr,
            flush=True,
        )
    rss_end = psutil.Process().memory_info().rss
    ctx.close()
    costly = times.get("costly", Times())
    each = [
        (q, t, r) for q, t, r in zip(queries["costly"], costly.trove, costly.rg or [], strict=False)
    ]
    return {
        "each": each,
        "size": size,
        "first_query_ms": round(first_ms, 1),
        "first_units_query_ms": round(first_units_ms, 1),
        "first_question_ms": round(first_question_ms, 1),
        "rss_mb": (round(rss_warm / 2**20), round(rss_end / 2**20)),
        "kinds": {k: v for k, v in times.items()},
        "examples": {k: v[:3] for k, v in queries.items()},
    }


def report(result: dict[str, Any], have_rg: bool) -> list[str]:
    size = result["size"]
    lines = [
        "",
        (
            f"== {size} reports: first query after opening {result['first_query_ms']:.0f} ms, "
            f"first phrase {result['first_units_query_ms']:.0f} ms, "
            f"first question {result.get('first_question_ms', 0):.0f} ms; "
            f"process RSS {result['rss_mb'][0]} MB after those, {result['rss_mb'][1]} MB at the end"
        ),
        (
            f"{'kind':<10} {'n':>4} {'trove p50':>10} {'p95':>8} {'max':>8} | {'scan p50':>9} "
            f"{'x':>6} | {'rg p50':>8} {'x':>6} | same answer"
        ),
    ]
    kinds: dict[str, Times] = result["kinds"]

    def row(name: str, t: Times) -> str:
        rg = (
            f"{p50(t.rg):8.1f} {p50(t.rg) / p50(t.trove):5.0f}x"
            if have_rg and t.rg
            else f"{'-':>8} {'':>6}"
        )
        scan = (
            f"{p50(t.scan):9.1f} {p50(t.scan) / p50(t.trove):5.0f}x"
            if t.scan
            else f"{'-':>9} {'':>6}"  # a forgiving kind: neither the scan nor rg answers it
        )
        return (
            f"{name:<10} {len(t.trove):>4} {p50(t.trove):10.1f} {p95(t.trove):8.1f} "
            f"{max(t.trove, default=float('nan')):8.1f} | {scan} | {rg} | {t.agree}/{t.compared}"
        )

    for kind, t in kinds.items():
        if t.trove:
            lines.append(row(kind, t))
    if result["each"]:
        lines.append("costly queries, each (ms):")
        lines.append(f"  {'query':<14} {'trove':>8} {'rg':>8} {'x rg':>7}")
        for q, t, r in result["each"]:
            lines.append(f"  {q!r:<14} {t:8.1f} {r:8.1f} {r / t:6.1f}x")
        slower = [q for q, t, r in result["each"] if t > r]
        lines.append(
            "  every costly query at least as fast as rg: "
            + ("met" if not slower else f"NOT met ({', '.join(map(repr, slower))})")
        )
    lines.append("goals:")
    for goal, (members, rg_goal, p95_goal) in GOALS.items():
        if not all(k in kinds for k in members):
            continue
        t = Times()
        for k in members:
            for name in ("trove", "scan", "rg"):
                getattr(t, name).extend(getattr(kinds[k], name))
            t.agree += kinds[k].agree
            t.compared += kinds[k].compared
        lines.append(row(goal[:10], t) + f"   ({goal})")
        checks = []
        if have_rg and size in rg_goal and t.rg:
            ratio = p50(t.rg) / p50(t.trove)
            ok = "met" if ratio >= rg_goal[size] else "NOT met"
            checks.append(f"p50 {ratio:.1f}x faster than rg (goal {rg_goal[size]}x): {ok}")
        if size in p95_goal:
            ok = "met" if p95(t.trove) <= p95_goal[size] else "NOT met"
            checks.append(f"p95 {p95(t.trove):.1f} ms (goal <= {p95_goal[size]} ms): {ok}")
        if checks:
            lines.append("    " + "; ".join(checks))
    lines.append("examples: " + "; ".join(f"{k}: {v}" for k, v in result["examples"].items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="report counts, comma-separated (default 10000,100000)",
    )
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/trove-bench-query"))
    parser.add_argument("--queries", type=int, default=60, help="trove queries per kind")
    parser.add_argument(
        "--alt-queries",
        type=int,
        default=8,
        help="of those, how many also run as the Python scan and with rg",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the raw times here")
    parser.add_argument(
        "--config",
        type=Path,
        action="append",
        help="a corpus's trove.toml, its index taken as it is (repeat for more; in place of --sizes)",
    )
    parser.add_argument(
        "--kinds",
        type=lambda text: [k for k in text.split(",") if k],
        default=list(KINDS),
        help=f"the kinds of query to run, comma-separated (default {','.join(KINDS)})",
    )
    args = parser.parse_args(argv)
    if unknown := set(args.kinds) - set(KINDS):
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    have_rg = shutil.which("rg") is not None
    lines = [
        (
            f"bench_query: search_reports, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} at start"
        )
    ]
    if not have_rg:
        lines.append("ripgrep (rg) not found: the rg column is skipped (apt-get install ripgrep)")
    results = []
    runs: list[tuple[int, Path | None]] = (
        [(0, c) for c in args.config]
        if args.config
        else [(int(s), None) for s in args.sizes.split(",")]
    )
    for size, config in runs:
        result = run_size(args, size, have_rg, config)
        results.append(result)
        lines.extend(report(result, have_rg))
    lines.append(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(
            json.dumps(
                [{**r, "kinds": {k: vars(t) for k, t in r["kinds"].items()}} for r in results],
                indent=1,
                ensure_ascii=False,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
