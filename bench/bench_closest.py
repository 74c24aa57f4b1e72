"""search_reports on an existing corpus and index, read only: bench_query.py's queries of
some kinds (by default its plain questions with a typo and its word kinds), for A/B runs of
two trees' code on the same index.

    python bench/bench_closest.py CORPUS_DIR [--kinds question,word,keywords] [--queries 60]
                                  [--seed 1] [--rounds 1]
    python bench/bench_closest.py --lexicon 300000 [--seed 1]

CORPUS_DIR holds a trove.toml over an index already built (bench/gen_corpus.py's, for
example /work/bench/c100k): nothing is built, reconciled or written. Run it with each
tree's code on the path (``cd TREE && PYTHONPATH=$PWD python .../bench_closest.py``) and
interleave the runs; the machine moves every figure. Prints p50 / p95 ms per kind, the
process's RSS after the first query and at the end, and, where the tree has them, what
the segments' Neighbours (query/neighbours.py) cost to make and keep.

With ``--lexicon N``: no index, but N made-up words of 3-20 letters in two segments'
lexicons (a lexicon as large as a million real reports may hold; the generated corpus
has 3,300 words of letters), and the correction of 200 misspellings of them timed both
ways: query/reports/tiers.corrections scanning, and from the Neighbours (made first, timed).
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from pathlib import Path
from typing import Any, cast

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_query import draw_queries, p50, p95, reports_of, timed  # bench/ is on the path

from indexer.config import load_settings
from query.context import QueryContext
from query.reports import search_reports


def lexicon_only(size: int, seed: int) -> list[str]:
    from indexer.engine.lexicon import Lexicon
    from query.neighbours import Neighbours
    from query.reports import tiers as report_tiers

    rng = random.Random(seed)
    letters = "etaoinshrdlucmfwypvbgkjqxz"

    def word() -> str:
        n = min(20, max(3, int(rng.gauss(8, 2.5))))
        return "".join(rng.choice(letters[: rng.randint(12, 26)]) for _ in range(n))

    words = sorted({word() for _ in range(size)})
    halves = [sorted(rng.sample(words, len(words) * 2 // 3)) for _ in range(2)]
    lexicons = [Lexicon(h, [1] * len(h)) for h in halves]

    class Segment:  # what words_by_length reads of a segment
        def __init__(self, lex: Lexicon) -> None:
            self.lex = lex

        def lexicon(self) -> Lexicon:
            return self.lex

    by_length = report_tiers.words_by_length([cast(Any, Segment(x)) for x in lexicons])
    rss = psutil.Process().memory_info().rss
    started = time.perf_counter()
    near = [Neighbours(x) for x in lexicons]
    build_ms = (time.perf_counter() - started) * 1000
    grown = psutil.Process().memory_info().rss - rss
    queries = []
    for _ in range(200):
        w = list(rng.choice(words))
        i = rng.randrange(len(w) - 1)
        w[i], w[i + 1] = w[i + 1], w[i]
        queries.append("".join(w))
    fix = report_tiers.corrections
    scan = [timed(functools.partial(fix, by_length, [q]))[0] for q in queries]
    look = [timed(functools.partial(fix, by_length, [q], near))[0] for q in queries]
    same = sum(
        report_tiers.corrections(by_length, [q]) == report_tiers.corrections(by_length, [q], near)
        for q in queries
    )
    made = (
        f"{len(words)} words, {sum(map(len, halves))} in two lexicons: Neighbours made in "
        f"{build_ms:.0f} ms, {sum(n.nbytes for n in near) / 2**20:.0f} MB "
        f"(RSS +{grown / 2**20:.0f} MB), covering words up to {min(n.covered for n in near)} "
        "letters"
    )
    return [
        made,
        f"scan   p50 {p50(scan):6.2f}  p95 {p95(scan):6.2f} ms a word",
        f"lookup p50 {p50(look):6.2f}  p95 {p95(look):6.2f} ms a word; {same}/200 the same",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, nargs="?")
    parser.add_argument("--lexicon", type=int, help="made-up words instead of a corpus")
    parser.add_argument("--kinds", default="question,word,keywords")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="times each query list runs")
    args = parser.parse_args(argv)
    if args.lexicon:
        print("\n".join(lexicon_only(args.lexicon, args.seed)), flush=True)
        return 0
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
