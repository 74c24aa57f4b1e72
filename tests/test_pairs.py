"""indexer/engine/pairs.py: a segment's CJK pairs are, for every pair of CJK characters,
the documents holding it and the count ``bytes.count`` gives in each; a damaged table is
never used; the writer leaves one beside each segment it writes, a reconcile writes a
lost one anew, and a search answers the same with or without them."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from derived_files import (
    answers_the_same_damaged_or_missing,
    checked_segments,
    lost_files_are_written_anew,
    sample,
    segments_come_and_go,
)
from hypothesis import given
from hypothesis import strategies as st

from indexer.config import Settings
from indexer.engine.base import Segment
from indexer.engine.pairs import CjkPairs, PairCounter, pair_key, pairs_in
from indexer.sources.registry import get_source
from indexer.store import Syncer

# CJK characters of each range (hiragana, katakana, extension A, unified, hangul,
# compatibility), and what may stand between them: a space, an ideographic space and a
# full-width mark (three bytes, led as CJK is, but not CJK), ASCII, a two-byte letter.
CJK = ["の", "カ", "㐀", "日", "志", "志", "한", "豈"]
BETWEEN = [" ", "\u3000", "！", "a", "é", "\n"]
PAIRS = ["".join(p) for p in itertools.product(dict.fromkeys(CJK), repeat=2)]


def expected(texts: list[bytes], pair: str) -> list[tuple[int, int]]:
    """(document, count) of every document holding ``pair``, as ``bytes.count`` counts."""
    needle = pair.encode("utf-8")
    return [(d, t.count(needle)) for d, t in enumerate(texts) if needle in t]


def table_of(texts: list[bytes]) -> CjkPairs:
    counter = PairCounter()
    for d, text in enumerate(texts):
        counter.add(d, text)
    pairs = CjkPairs.parse(counter.table(len(texts)), len(texts))
    assert pairs is not None
    return pairs


def holders(pairs: CjkPairs, pair: str) -> list[tuple[int, int]]:
    found = pairs.holders(pair)
    assert found is not None
    docs, counts = found
    return list(zip(docs.tolist(), map(int, counts.tolist()), strict=True))


texts_of = st.lists(
    st.lists(st.sampled_from(CJK + BETWEEN), max_size=30).map(lambda cs: "".join(cs).encode()),
    max_size=12,
)


@given(texts_of)
def test_each_pair_is_held_by_the_documents_counting_their_texts_finds(texts) -> None:
    """Doubled characters (志志志 holds 志志 once), pairs across a space (not held), runs of
    every range."""
    pairs = table_of(texts)
    for pair in PAIRS:
        assert holders(pairs, pair) == expected(texts, pair), pair


def test_a_document_is_counted_by_the_pairs_side_by_side_in_it() -> None:
    assert pairs_in("志志志 志志志志".encode()) == {pair_key("志志"): 3}
    assert pairs_in("日志 日 志\u3000日！志".encode()) == {pair_key("日志"): 1}
    assert pairs_in(b"plain ascii") == {}
    assert pairs_in("のカ한".encode()) == {pair_key("のカ"): 1, pair_key("カ한"): 1}


def test_only_a_string_of_two_cjk_characters_is_a_pair() -> None:
    pairs = table_of(["日志".encode()])
    for not_a_pair in ("日", "日志日", "a日", "日a", "ab", "", "日\u3000"):
        assert pair_key(not_a_pair) is None
        assert pairs.holders(not_a_pair) is None
    assert holders(pairs, "志日") == []  # a pair no document holds


def test_a_damaged_cut_or_foreign_table_is_not_used() -> None:
    rng = random.Random(5)
    texts = ["".join(rng.choice(CJK + BETWEEN) for _ in range(40)).encode() for _ in range(30)]
    counter = PairCounter()
    for d, text in enumerate(texts):
        counter.add(d, text)
    data = counter.table(len(texts))
    assert CjkPairs.parse(data, len(texts)) is not None
    for at in range(len(data)):
        for bit in (0, 7):
            flipped = data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1 :]
            assert CjkPairs.parse(flipped, len(texts)) is None, (at, bit)
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        assert CjkPairs.parse(data[:cut], len(texts)) is None
    assert CjkPairs.parse(data, len(texts) + 1) is None  # another segment's
    assert CjkPairs.parse(PairCounter().table(0), 0) is not None  # no documents


def check_segments(settings: Settings) -> int:
    """Each live segment's pairs are those of its texts; how many segments there are."""

    def check(segment: Segment) -> None:
        pairs = segment.cjk_pairs()
        assert pairs is not None
        text = segment.bytes_column("text")
        texts = [text.value(d) for d in range(segment.doc_count_all)]
        held = {
            pair
            for t in texts
            for run in t.decode().split()
            for pair in (run[i : i + 2] for i in range(len(run) - 1))
            if pair_key(pair) is not None
        }
        for pair in held | {"日志", "志日"}:
            assert holders(pairs, pair) == expected(texts, pair), pair

    return checked_segments(settings, "trove-pairs-", check)


@pytest.mark.parametrize("parallel", [False, True])
def test_each_segment_written_has_its_pairs_and_a_segment_gone_takes_them(
    tmp_path: Path, monkeypatch, parallel: bool
) -> None:
    segments_come_and_go(tmp_path, monkeypatch, parallel, check_segments, "日志日志 分析\n")


def test_a_reconcile_writes_anew_the_pairs_a_segment_lost_and_leaves_the_others(
    tmp_path: Path,
) -> None:
    lost_files_are_written_anew(tmp_path, "trove-pairs-*", check_segments)


def test_a_search_answers_the_same_with_pairs_missing_or_damaged(tmp_path: Path) -> None:
    """Against counting every text: pairs held across segments, by deleted reports and
    outside a command, alone and in a plain question (the related tier)."""
    settings = sample(tmp_path)
    Syncer(settings, get_source("reports")).reconcile(full=True)
    reports = sorted((tmp_path / "reports").rglob("*.md"))
    for i, path in enumerate(reports[:6]):
        more = "日志分析 " * (i + 1) + "志志志 分析报告\n"
        path.write_text(path.read_text(encoding="utf-8") + more, encoding="utf-8")
    Syncer(settings, get_source("reports")).reconcile()  # a second segment
    reports[1].unlink()
    Syncer(settings, get_source("reports")).reconcile()  # a report deleted in it
    commands = sorted(p.name for p in (tmp_path / "reports").iterdir())
    queries = ("日志", "分析", "志志", "报告", "志日", "why does the 日志分析报告 fail")

    filters = (None, commands[0], reports[0].parent.name)
    answers_the_same_damaged_or_missing(settings, "trove-pairs-*", queries, filters)
