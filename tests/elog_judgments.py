"""20 judged queries over the sample logbook (data/elog), and the measures of a ranking.

Each query lists the entries that answer it (grade 2) and those that help (grade 1);
every other entry is not relevant. Used by tests/test_elog_search.py (a floor on
quality) and bench/bench_elog.py (MRR and nDCG@10 of BM25 alone, lexical and semantic
rerank). Some queries use the logbook's words, some paraphrase them (``BLM bypass``
for ``Überbrückung``, ``loose encoder cable`` for ``Loose connector at the encoder
cable``), which is where the rerankers differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

JUDGED: list[tuple[str, dict[int, int]]] = [
    ("RF trip S30CB09", {27051: 2, 31180: 2, 27052: 1, 31181: 1, 31185: 1, 31193: 1}),
    ("klystron vacuum interlock", {31180: 2, 31181: 2}),
    ("thyratron replaced", {31193: 2, 31185: 1, 27421: 1}),
    ("SATUN18 gap stuck", {34455: 2, 34251: 1}),
    ("gap motor exchange SATUN18-DDRM005-R", {31488: 2, 31489: 2}),
    ("vacuum pressure rise", {31611: 2, 24117: 2, 24118: 1}),
    ("power supply earth fault", {31302: 2, 31303: 2, 31309: 2}),
    ("energy feedback oscillates", {34077: 2, 34078: 2}),
    ("beam energy calibration", {27188: 2}),
    ("gun laser UV pulse energy drift", {24231: 2, 27420: 1}),
    ("cooling water temperature alarm", {27377: 2, 34522: 1}),
    ("beam dump temperature warning", {34522: 2, 34520: 2}),
    ("winter shutdown", {24520: 2, 27560: 2, 31811: 2}),
    ("power glitch tripped everything", {34188: 2, 34189: 1}),
    ("arrival time jitter", {27311: 2}),
    ("seed laser alignment Athos", {31760: 2, 27503: 1}),
    ("how to restore undulator gaps after a trip", {27240: 2}),
    ("BLM bypass SARBD01", {27130: 2, 27131: 2}),
    ("loose encoder cable", {34252: 2, 34251: 1}),
    ("first beam after the shutdown", {27004: 2, 34010: 2, 31022: 1}),
]


def reciprocal_rank(ranked: Sequence[int], grades: dict[int, int]) -> float:
    """1/rank of the first relevant entry (0 when none is ranked)."""
    for rank, mid in enumerate(ranked, 1):
        if grades.get(mid, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg(ranked: Sequence[int], grades: dict[int, int], k: int = 10) -> float:
    """nDCG@k with gains 2^grade - 1."""

    def dcg(gains: Sequence[int]) -> float:
        return sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains[:k]))

    ideal = dcg(sorted(grades.values(), reverse=True))
    return dcg([grades.get(mid, 0) for mid in ranked]) / ideal if ideal else 0.0


def evaluate(search: Callable[[str], Sequence[int]]) -> dict[str, float]:
    """Mean reciprocal rank and mean nDCG@10 of ``search`` (query -> ranked ids)."""
    rr, nd = [], []
    for query, grades in JUDGED:
        ranked = list(search(query))[:10]
        rr.append(reciprocal_rank(ranked, grades))
        nd.append(ndcg(ranked, grades))
    return {"mrr": sum(rr) / len(rr), "ndcg@10": sum(nd) / len(nd)}


# Questions asked as people ask them: in sentences, with plurals and other word forms,
# and misspelt; each names the entry that must be among the first three.
FORGIVING: list[tuple[str, int]] = [
    ("klystrons tripping on vacuum", 31180),
    ("why did the thyratrons get replaced", 31193),
    ("thyratorn", 31193),
    ("klystorn arcs", 27051),
    ("vaccum presure rising in Athos", 31611),
    ("earth faults on magnet power supplies", 31302),
    ("oscillating energy feedbacks", 34077),
    ("how do I restore the undulator gaps", 27240),
    ("cooling water temprature alarms", 27377),
    ("loose connectors on encoder cables", 34252),
    ("arrival time jitter after switching the reference", 27311),
    ("seed lasers aligned", 31760),
    ("beam dump temperatures too high", 34522),
    ("calibrating the beam energy", 27188),
    ("power glitches", 34188),
    ("gun laser UV energy drifting", 24231),
    ("pressure rose after an RF trip", 24117),
    ("comparing PVs in archiver plots", 34402),
    ("console PC upgrades", 34530),
    ("gap readbacks jumping", 34251),
]
