"""search_reports on an existing corpus and index, read only: bench_query.py's queries of
some kinds (by default its plain questions with a typo and its word kinds), for A/B runs of
two trees' code on the same index.

    python bench/bench_closest.py CORPUS_DIR [--kinds question,word,keywords] [--queries 60]
                                  [--seed 1] [--rounds 1]

CORPUS_DIR holds a trove.toml over an index already built (bench/gen_corpus.py's, for
example /work/bench/c100k): nothing is built, reconciled or written. Run it with each
tree's code on the path (``cd TREE && PYTHONPATH=$PWD python .../bench_closest.py``) and
interleave the runs; the machine moves every figure. Prints p50 / p95 ms per kind, the
process's RSS after the first query and at the end, and, where the tree has them, what
the segments' Neighbours (query/neighbours.py) cost to make and keep.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_query import draw_queries, p50, p95, reports_of, timed  # bench/ is on the path

from indexer.config import load_settings
from query.context import QueryContext
from query.reports import search_reports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--kinds", default="question,word,keywords")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="times each query list runs")
    args = parser.parse_args(argv)
    settings = load_settings(args.corpus / "trove.toml")
    root = settings.source_root("reports")
    assert root is not None
    queries = draw_queries(reports_of(root), args.queries, args.seed)
    ctx = QueryContext.from_settings(settings)
    first_ms, _ = timed(lambda: search_reports(ctx, "timeout"))
    rss_warm = psutil.Process().memory_info().rss
    lines = [f"{args.corpus}: first query {first_ms:.0f} ms, RSS {rss_warm / 2**20:.0f} MB"]
    for kind in args.kinds.split(","):
        times: list[float] = []
        started = time.perf_counter()
        for _ in range(args.rounds):
            for q in queries[kind]:
                times.append(timed(functools.partial(search_reports, ctx, q))[0])
        lines.append(
            f"{kind:<10} n {len(times):>4}  p50 {p50(times):7.1f}  p95 {p95(times):7.1f}  "
            f"max {max(times):7.1f} ms  ({time.perf_counter() - started:.1f} s)"
        )
    rss_end = psutil.Process().memory_info().rss
    lines.append(f"RSS at the end {rss_end / 2**20:.0f} MB (+{(rss_end - rss_warm) / 2**20:.0f})")
    kept = ctx.memo.get("reports.neighbours")
    if kept is not None:
        from query.neighbours import Neighbours  # a tree before them keeps none

        made = list(kept._kept.values())
        build_ms = [timed(functools.partial(Neighbours, n.lexicon))[0] for n in made]
        lines.append(
            f"Neighbours: {len(made)} segments, {sum(n.nbytes for n in made) / 2**20:.1f} MB "
            f"of arrays, words covered up to {min(n.covered for n in made)} letters, made in "
            + ", ".join(f"{ms:.0f}" for ms in build_ms)
            + " ms"
        )
    ctx.close()
    print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
