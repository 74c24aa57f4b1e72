"""indexer/engine/fragments.py: a segment's fragment tops are the documents a count of
every text would rank first, in the same order; a damaged table is never used; the
writer leaves one beside each segment it writes, and removes those of segments gone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from derived_files import (
    answers,
    checked_segments,
    lost_files_are_written_anew,
    sample,
    segments_come_and_go,
)

from indexer.config import Settings
from indexer.engine import fragments
from indexer.engine.base import Segment
from indexer.engine.fragments import FRAGMENTS, FragmentCounter, FragmentTops
from indexer.sources.registry import get_source
from indexer.store import Syncer

# Letters that make up the fragments, some that do not (a doubled letter, space, 'é'
# is two bytes, a capital never reaches a lower-cased text), to draw texts from.
PIECES = [b"e", b"t", b"o", b"to", b"ee", b" ", b"9", b"\xc3\xa9", b"x", b"ip", b"\n"]


def expected(
    texts: list[bytes], ranks: list[int], keys: list[bytes], fragment: bytes
) -> list[tuple[int, int]]:
    """(document, count) of every document holding ``fragment``, ranked as a search does:
    most occurrences, then highest rank, then lowest key."""
    held = [(d, t.count(fragment)) for d, t in enumerate(texts) if fragment in t]
    return sorted(held, key=lambda dc: (-dc[1], -ranks[dc[0]], keys[dc[0]]))


def corpus(rng: random.Random, n: int) -> tuple[list[bytes], list[int], list[bytes]]:
    texts = [b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(n)]
    ranks = [rng.choice((0, 738000, 738001, 739500)) for _ in range(n)]  # many ties
    keys = [f"cmd/{rng.randrange(10**6):06d}_{d}.md".encode() for d in range(n)]
    return texts, ranks, keys


def table_of(texts: list[bytes], ranks: list[int], keys: list[bytes]) -> FragmentTops:
    counter = FragmentCounter()
    for d, (text, rank, key) in enumerate(zip(texts, ranks, keys, strict=True)):
        counter.add(d, text, rank, key)
    tops = FragmentTops.parse(counter.table(len(texts)), len(texts))
    assert tops is not None
    return tops


@pytest.mark.parametrize(("top", "block"), [(128, 512), (4, 3), (5, 64), (16, 7)])
def test_the_tops_are_what_counting_every_text_ranks_first(monkeypatch, top, block) -> None:
    """With few kept per fragment and small blocks, the counts to keep rise block by
    block and the kept documents are cut again and again: the tops stay exact."""
    monkeypatch.setattr(fragments, "TOP", top)
    monkeypatch.setattr(fragments, "_BLOCK_DOCS", block)
    rng = random.Random(top * 1000 + block)
    for n in (0, 1, 9, 300):
        texts, ranks, keys = corpus(rng, n)
        tops = table_of(texts, ranks, keys)
        for fragment in FRAGMENTS:
            best = tops.best(fragment)
            assert best is not None
            want = expected(texts, ranks, keys, fragment)
            got = list(zip(best.docs.tolist(), best.counts.tolist(), strict=True))
            assert got == want[:top], (fragment, n)
            assert best.complete == (len(want) <= top), (fragment, n)


def test_only_fragments_of_lower_case_letters_and_digits_are_kept() -> None:
    tops = table_of([b"ee to \xc3\xa9 a.b"], [0], [b"k"])
    assert tops.best(b"to") is not None and tops.best(b"9") is not None
    for other in (b"ee", b"E", b"T", b"a.", b" ", b"\xc3\xa9", b"tom", b""):
        assert tops.best(other) is None, other
    assert len(FRAGMENTS) == 36 + 36 * 35


def test_a_damaged_or_foreign_table_is_not_used() -> None:
    texts, ranks, keys = corpus(random.Random(7), 50)
    counter = FragmentCounter()
    for d, text in enumerate(texts):
        counter.add(d, text, ranks[d], keys[d])
    data = counter.table(50)
    assert FragmentTops.parse(data, 50) is not None
    assert FragmentTops.parse(data, 51) is None  # of another segment
    assert FragmentTops.parse(data[:-1], 50) is None
    assert FragmentTops.parse(data[: len(data) // 2], 50) is None
    assert FragmentTops.parse(b"", 50) is None
    for at in range(0, len(data), max(1, len(data) // 97)):
        flipped = bytearray(data)
        flipped[at] ^= 0x40
        assert FragmentTops.parse(bytes(flipped), 50) is None, at


# --------------------------------------------------------------------------- the index


def check_segments(settings: Settings) -> int:
    """Each live segment's tops are those of its texts; how many segments there are."""

    def check(segment: Segment) -> None:
        tops = segment.fragment_tops()
        assert tops is not None
        n = segment.doc_count_all
        text = segment.bytes_column("text")
        key = segment.bytes_column("sort_key")
        texts = [text.value(d) for d in range(n)]
        keys = [key.value(d) for d in range(n)]
        ranks = list(segment.int_column("day"))
        for fragment in (b"e", b"to", b"ip", b"9", b"zq"):
            best = tops.best(fragment)
            assert best is not None
            want = expected(texts, ranks, keys, fragment)[: fragments.TOP]
            assert list(zip(best.docs.tolist(), best.counts.tolist())) == want

    return checked_segments(settings, "trove-tops-", check)


@pytest.mark.parametrize("parallel", [False, True])
def test_each_segment_written_has_its_tops_and_a_segment_gone_takes_them(
    tmp_path: Path, monkeypatch, parallel: bool
) -> None:
    segments_come_and_go(tmp_path, monkeypatch, parallel, check_segments, "to to to e\n")


def test_a_search_answers_the_same_with_tops_missing_damaged_or_cut_short(
    tmp_path: Path, monkeypatch
) -> None:
    """Few tops kept (so that deletions and a command leave too few of them): the search
    counts in the texts where they do not suffice, and where they are unreadable."""
    monkeypatch.setattr(fragments, "TOP", 3)
    settings = sample(tmp_path)
    Syncer(settings, get_source("reports")).reconcile(full=True)
    for path in sorted((tmp_path / "reports").rglob("*.md"))[:4]:
        path.write_text(path.read_text(encoding="utf-8") + "\nee to ip e\n", encoding="utf-8")
    Syncer(settings, get_source("reports")).reconcile()
    commands = sorted(p.name for p in (tmp_path / "reports").iterdir())
    queries, filters = ("e", "to", "IP", "9", "ee"), (None, commands[0])
    counted = answers(settings, queries, filters, "texts")
    assert answers(settings, queries, filters) == counted
    for path in (settings.index_dir / "reports").glob("trove-tops-*"):
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    assert answers(settings, queries, filters) == counted
    for path in (settings.index_dir / "reports").glob("trove-tops-*"):
        path.unlink()
    assert answers(settings, queries, filters) == counted


def test_a_reconcile_writes_anew_the_tops_a_segment_lost_and_leaves_the_others(
    tmp_path: Path,
) -> None:
    lost_files_are_written_anew(tmp_path, "trove-tops-*", check_segments)
