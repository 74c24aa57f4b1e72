"""query/neighbours.py: the closest indexed words found from the deletion neighbourhoods
are exactly those of the scan (query/forgiving.py's ``closest`` over every indexed word of
about the word's length), for the three searches that correct words."""

from __future__ import annotations

import random
import shutil
import string
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from rapidfuzz import fuzz

import query.elog.search as elog_search
from indexer.config import Settings
from indexer.engine.lexicon import Lexicon
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query import forgiving, neighbours
from query.context import QueryContext
from query.elog import search_elog
from query.elog.caches import elog_cache, indexed_neighbours, indexed_words
from query.elog.index_access import open_index
from query.forgiving import MIN_CORRECTABLE, MIN_SIMILARITY, closest
from query.neighbours import (
    Neighbours,
    closest_near,
    first_holder,
    kept_deletions,
    query_deletions,
)
from query.reports import search_reports
from query.reports import tiers as report_tiers
from query.workspace import search_workspace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from gen_corpus import generate  # bench/ is not a package: its folder is on the path

# ------------------------------------------------------------------------- the bounds


def test_the_deletions_cover_every_pair_the_cut_off_accepts() -> None:
    # Words of n and m letters with exactly c in common (their longest common
    # subsequence), scored by rapidfuzz itself: each accepted pair's losses fit the bounds.
    for n in range(MIN_CORRECTABLE, 40):
        for m in range(max(1, n - 2), n + 3):
            for c in range(min(n, m) + 1):
                word, term = "a" * c + "b" * (n - c), "a" * c + "c" * (m - c)
                if fuzz.ratio(word, term) >= MIN_SIMILARITY:
                    assert n - c <= query_deletions(n), (word, term)
                    assert m - c <= kept_deletions(m), (word, term)


def test_at_75_the_bounds_are_those_the_docstring_names() -> None:
    assert [query_deletions(n) for n in range(1, 14)] == [-1, -1, -1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4]
    assert [kept_deletions(m) for m in range(1, 14)] == [-1, -1, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4]


# ------------------------------------------------------------------ synthetic lexicons


def lexicon(words: list[str]) -> Lexicon:
    terms = sorted(set(words))
    return Lexicon(terms, [1] * len(terms))


class _Segment:
    """What ``words_by_length`` reads of a segment: its content terms."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex

    def lexicon(self, field: str = "content") -> Lexicon:
        return self.lex


class Lexicons:
    """Lexicons as segments hold them, their words as each search's scan pools them, and
    their Neighbours."""

    def __init__(self, lexicons: list[Lexicon], **budget: int) -> None:
        self.lexicons = lexicons
        self.by_length = report_tiers.words_by_length(cast(Any, [_Segment(x) for x in lexicons]))
        self.every = sorted({t for x in lexicons for t in x.terms() if t.isalpha()})
        self.near = [Neighbours(x, **budget) for x in lexicons]

    def scans(self, word: str) -> dict[str, list[str]]:
        """The scan's answer in each search's pool order: reports (by length, then
        segment by segment), conversations (segment by segment, then by length), ELOG
        (code point order)."""
        n = len(word)
        pool = dict.fromkeys(
            t
            for x in self.lexicons
            for m in range(n - 2, n + 3)
            for t in x.terms()
            if len(t) == m and t.isalpha()
        )
        return {
            "reports": report_tiers.corrections(self.by_length, [word])[word],
            "conversations": closest(word, pool),
            "elog": closest(word, self.every),
        }

    def lookups(self, word: str) -> dict[str, list[str] | None]:
        """The same from the Neighbours, in each search's order."""
        first = first_holder(self.near)
        return {
            "reports": report_tiers.corrections(self.by_length, [word], self.near)[word],
            "conversations": closest_near(word, self.near, lambda t: (first(t), len(t), t)),
            "elog": closest_near(word, self.near, str),
        }


def misspelt(rng: random.Random, word: str, alphabet: str, edits: int) -> str:
    """The word after some insertions, deletions, substitutions and transpositions."""
    for _ in range(edits):
        i = rng.randrange(len(word) + 1)
        c = rng.choice(alphabet)
        kind = rng.randrange(4)
        if kind == 0 or len(word) < 2:
            word = word[:i] + c + word[i:]
        elif kind == 1:
            i = min(i, len(word) - 1)
            word = word[:i] + word[i + 1 :]
        elif kind == 2:
            i = min(i, len(word) - 1)
            word = word[:i] + c + word[i + 1 :]
        else:
            i = min(i, len(word) - 2)
            word = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return word


def random_lexicons(rng: random.Random, alphabet: str, size: int) -> list[Lexicon]:
    """Three lexicons of words of 1-16 letters that share some words (as segments do)."""
    words = [
        "".join(rng.choice(alphabet) for _ in range(min(16, max(1, int(rng.gauss(7, 3))))))
        for _ in range(size)
    ]
    words += ["speed", "taken", "ward", "x1y2", "代理超时"]
    return [lexicon(rng.sample(words, size // 2)) for _ in range(3)]


BOUNDARY = ["speech", "token", "word", "worda"]


@pytest.mark.parametrize("seed", range(6))
def test_random_misspellings_get_what_the_scan_gives(seed: int) -> None:
    rng = random.Random(seed)
    # A small alphabet makes dense lexicons: many words equally close, ties past 4 x limit.
    alphabet = "abcde" if seed % 2 else string.ascii_lowercase
    lexicons = Lexicons(random_lexicons(rng, alphabet, 3000))
    words = lexicons.every
    queries = [misspelt(rng, rng.choice(words), alphabet, rng.randint(1, 3)) for _ in range(300)]
    queries += BOUNDARY + ["abc", "ab12", "2025", "代理超市", "zzzzqqqqxxxx", "a" * 30]
    for q in queries:
        assert lexicons.lookups(q) == lexicons.scans(q), q


def test_the_boundary_pairs_at_the_cut_off_are_treated_as_the_scan_treats_them() -> None:
    lexicons = Lexicons([lexicon(["speed", "taken", "ward"]), lexicon(["taken", "tokenised"])])
    got = lexicons.lookups("speech")
    assert got == lexicons.scans("speech") == {k: [] for k in got}  # 72.7
    got = lexicons.lookups("token")
    assert got == lexicons.scans("token") == {k: ["taken"] for k in got}  # 80
    got = lexicons.lookups("word")
    assert got == lexicons.scans("word") == {k: ["ward"] for k in got}  # 75


def test_of_many_equally_close_words_the_pool_order_picks_those_ranked() -> None:
    # 20 words 80 similar to 'token': the scan ranks the first 12 it meets, which differ
    # with each search's order (the second segment holds the first letters of the
    # alphabet, the first the last ones).
    late, early = [c + "oken" for c in "nopqrsuvwxyz"], [c + "oken" for c in "abcdefgh"]
    lexicons = Lexicons([lexicon(late), lexicon(early)])
    expected = {"reports": ["noken", "ooken", "poken"], "elog": ["aoken", "boken", "coken"]}
    expected["conversations"] = expected["reports"]
    assert lexicons.scans("token") == expected
    assert lexicons.lookups("token") == expected


@pytest.mark.parametrize("budget", [{"max_entries": 0}, {"max_entries": 5000}, {"max_length": 6}])
def test_lengths_past_the_budget_are_scanned_with_the_same_answers(budget: dict[str, int]) -> None:
    rng = random.Random(7)
    lexicons = Lexicons(random_lexicons(rng, "abcdefg", 2000), **budget)
    assert max(x.covered for x in lexicons.near) < 12
    for _ in range(150):
        q = misspelt(rng, rng.choice(lexicons.every), "abcdefg", rng.randint(1, 2))
        assert lexicons.lookups(q) == lexicons.scans(q), q


def test_a_pool_cut_at_max_candidates_is_cut_as_the_scan_cuts_it(monkeypatch) -> None:
    # Reports name the scan's last word kept; the other two scan when the pool may be cut.
    for module in (forgiving, neighbours, report_tiers):
        monkeypatch.setattr(module, "MAX_CANDIDATES", 60)
    rng = random.Random(3)
    lexicons = Lexicons(random_lexicons(rng, "abcdef", 600))
    cut = 0
    for _ in range(300):
        q = misspelt(rng, rng.choice(lexicons.every), "abcdef", rng.randint(1, 2))
        got, expected = lexicons.lookups(q), lexicons.scans(q)
        assert got["reports"] == expected["reports"], q
        if got["elog"] is None:
            cut += 1
            assert got["conversations"] is None
        else:
            assert got == expected, q
    assert cut > 100
    # The word itself is left out of the pool, so the word after the cut comes in.
    few = Lexicons([lexicon(["aaaa", "aaab", "aabb"] + [f"zz{c}{d}" for c in "xy" for d in "vw"])])
    for module in (forgiving, neighbours, report_tiers):
        monkeypatch.setattr(module, "MAX_CANDIDATES", 2)
    for q in ("aaaa", "aaab", "aabb", "abbb"):
        assert few.lookups(q)["reports"] == few.scans(q)["reports"], q


# ------------------------------------------------------ through the searches, on corpora


def indexed_in_two_segments(s: Settings) -> QueryContext:
    """Each collection indexed in two commits (two segments): half its files, then all."""
    held: dict[Path, bytes] = {}
    for name in ("reports", "conversations", "elog"):
        root = s.source_root(name)
        assert root is not None
        for path in sorted(p for p in root.rglob("*") if p.is_file())[::2]:
            held[path] = path.read_bytes()
            path.unlink()
        Syncer(s, get_source(name)).reconcile()
    for path, data in held.items():
        path.write_bytes(data)
    for name in ("reports", "conversations", "elog"):
        Syncer(s, get_source(name)).reconcile()
    return QueryContext.from_settings(s)


@contextmanager
def scanning(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every search corrects by today's scan while this is open."""
    with monkeypatch.context() as m:
        m.setattr(report_tiers, "neighbours", lambda memo, segments: None)
        m.setattr(neighbours, "closest_near", lambda *args, **kwargs: None)
        m.setattr(elog_search, "closest_near", lambda *args, **kwargs: None)
        yield


Search = Callable[[QueryContext, str], list[str]]
SEARCHES: dict[str, Search] = {
    "reports": lambda ctx, q: search_reports(ctx, q).suggestions,
    "conversations": lambda ctx, q: search_workspace(ctx, q).suggestions,
    "elog": lambda ctx, q: search_elog(ctx, q, rerank="off").suggestions,
}


def indexed_words_of(ctx: QueryContext, name: str) -> list[str]:
    field = {"reports": ["content"], "conversations": ["content"]}.get(
        name, ["title", "body", "attributes"]
    )
    with ctx.indexes.snapshot(name) as snapshot:
        assert snapshot is not None and len(snapshot.segments()) >= 2
        return sorted(
            {
                t
                for segment, _ in snapshot.segments()
                for f in field
                for t in segment.lexicon(f).terms()
                if t.isalpha() and len(t) >= 3
            }
        )


def assert_the_same_as_the_scan(ctx: QueryContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """Misspellings of each collection's words get the same suggestions (the closest
    words, in order) as from the scan: through search_reports and search_workspace; for
    search_elog, many by the two lookups its correction makes and a few through it (an
    ELOG search costs more)."""
    rng = random.Random(11)
    for name in ("reports", "conversations", "elog"):
        words = indexed_words_of(ctx, name)
        queries = [
            misspelt(rng, rng.choice(words), "aeinorstlmp", rng.randint(1, 2)) for _ in range(60)
        ]
        queries += [rng.choice(words) + "s", "qxqxqxqx", "t0ken", "代理超市", "a" * 25]
        searched = queries[:8] if name == "elog" else queries
        got: list[list[str] | None] = [SEARCHES[name](ctx, q) for q in searched]
        with scanning(monkeypatch):
            expected = [SEARCHES[name](ctx, q) for q in searched]
        assert got == expected, name
        if name == "elog":
            with open_index(ctx) as index:
                cache = elog_cache(ctx)
                got = [closest_near(q, indexed_neighbours(index, cache), str) for q in queries]
                expected = [closest(q, indexed_words(index, cache)) for q in queries]
            assert got == expected, name
        assert sum(map(bool, got)) > 20, name  # most misspellings were corrected


def sample_data(root: Path) -> None:
    for name in ("reports", "conversations"):
        shutil.copytree(ROOT / "data" / name, root / name)


def generated(root: Path) -> None:
    generate(root, reports=300, commands=0, conversations=80)


@pytest.mark.parametrize("corpus", [sample_data, generated])
def test_on_a_corpus_each_search_corrects_as_the_scan(
    corpus: Callable[[Path], None], tmp_path: Path, make_settings, monkeypatch
) -> None:
    # The sample data (data/) or bench/gen_corpus.py's, with the sample logbook.
    corpus(tmp_path)
    shutil.copytree(ROOT / "data" / "elog" / "SwissFEL", tmp_path / "elog")
    ctx = indexed_in_two_segments(make_settings(elog={"rerank": "lexical"}))
    try:
        assert_the_same_as_the_scan(ctx, monkeypatch)
    finally:
        ctx.close()


# --------------------------------------------------------------------------- durability


def test_a_new_segment_gets_its_own_neighbours_and_a_lost_one_is_made_again(
    write, make_settings
) -> None:
    write("reports/net/a_20251101.md", "The proxy timeout came back.")
    s = make_settings()
    ctx = QueryContext.from_settings(s)
    try:
        assert search_reports(ctx, "porxy").suggestions == ["proxy"]
        write("reports/net/b_20251102.md", "A websocket handshake.")
        Syncer(s, get_source("reports")).reconcile()
        assert search_reports(ctx, "handshkae").suggestions == ["handshake"]
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            ids = {segment.id for segment, _ in snapshot.segments()}
        kept = ctx.memo["reports.neighbours"]
        assert len(ids) == 2 and set(kept._kept) == ids
        ctx.memo.clear()  # derived data lost: made again on the next correction
        assert search_reports(ctx, "handshkae").suggestions == ["handshake"]
        assert set(ctx.memo["reports.neighbours"]._kept) == ids
    finally:
        ctx.close()
