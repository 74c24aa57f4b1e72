"""Each segment's suffixes in order (indexer/engine/suffixes.py): the table against every
suffix put in order by hand, refused whole when damaged, written with each segment and
written anew by a reconcile when lost, and lookups and searches the same with it, with
a damaged one and without it."""

from __future__ import annotations

import os
from itertools import repeat
from pathlib import Path

from derived_files import (
    answers_the_same_damaged_or_missing,
    checked_segments,
    lost_files_are_written_anew,
    sample,
    segments_come_and_go,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.config import Settings
from indexer.engine.base import Segment
from indexer.engine.lexicon import Lexicon
from indexer.engine.suffixes import SuffixOrder, suffix_table
from indexer.sources.registry import get_source
from indexer.store import Syncer

# Terms as an analyser leaves them: no NUL, CJK, emoji, a dotted capital, combining marks.
TERMS = st.lists(
    st.text(st.sampled_from("ab_z中文😀İ\u0301é"), min_size=1, max_size=7),
    max_size=40,
    unique=True,
).map(sorted)


def lexicon_of(terms: list[str]) -> Lexicon:
    return Lexicon(terms, repeat(1, len(terms)))


def read(tmp_path: Path, data: bytes) -> SuffixOrder | None:
    path = tmp_path / "suffixes.bin"
    path.write_bytes(data)
    return SuffixOrder.read(os.open(path, os.O_RDONLY))


@settings(max_examples=200, deadline=None)
@given(TERMS)
def test_the_order_is_every_suffix_of_every_term_in_order(terms: list[str]) -> None:
    owners, offsets = lexicon_of(terms).suffix_order()
    suffixes = [terms[k][at:] for k, at in zip(owners, offsets, strict=True)]
    assert sorted((k, at) for k, at in zip(owners, offsets, strict=True)) == [
        (k, at) for k, t in enumerate(terms) for at in range(len(t))
    ]
    assert suffixes == sorted(suffixes)


@settings(max_examples=200, deadline=None)
@given(TERMS, st.lists(st.text(st.sampled_from("ab_z中😀İ\u0301"), min_size=1, max_size=4)))
def test_lookups_in_the_order_kept_find_what_a_scan_finds(
    tmp_path_factory, terms: list[str], probes: list[str]
) -> None:
    kept = read(tmp_path_factory.mktemp("t"), suffix_table(lexicon_of(terms)))
    assert kept is not None
    lexicon = lexicon_of(terms)
    assert kept.of(lexicon)
    lexicon.use_suffix_order(kept.owners, kept.offsets)
    for s in [*probes, *(t[1:] for t in terms), *terms]:
        if not s:
            continue
        assert lexicon.containing(s) == [k for k, t in enumerate(terms) if s in t], s
        assert lexicon.ending_with(s) == [k for k, t in enumerate(terms) if t.endswith(s)], s


def test_a_damaged_cut_or_foreign_table_is_not_used(tmp_path: Path) -> None:
    terms = sorted({f"w{i}x{i * 7 % 13}" for i in range(60)} | {"中文", "İstanbul"})
    data = suffix_table(lexicon_of(terms))
    found = read(tmp_path, data)
    assert found is not None and found.of(lexicon_of(terms))
    for at in range(len(data)):  # every byte, one bit flipped
        assert read(tmp_path, data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]) is None, at
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        assert read(tmp_path, data[:cut]) is None
    assert read(tmp_path, data + b"\0") is None
    other = read(tmp_path, data)
    assert other is not None and not other.of(lexicon_of(terms[1:]))  # another lexicon's
    assert read(tmp_path, suffix_table(lexicon_of([]))) is not None  # no terms


def check_segments(settings: Settings) -> int:
    """Each live segment's table is its lexicon's suffixes in order, and the lexicon
    bisects in it; how many segments there are."""

    def check(segment: Segment) -> None:
        lexicon = segment.lexicon("content")
        assert lexicon.ordered
        owners, offsets = lexicon.suffix_order()
        name = os.path.join(segment.folder, f"trove-sufx-{segment.id}.bin")  # type: ignore[attr-defined]
        kept = SuffixOrder.read(os.open(name, os.O_RDONLY))
        assert kept is not None
        assert (list(kept.owners), list(kept.offsets)) == (list(owners), list(offsets))

    return checked_segments(settings, "trove-sufx-", check)


def test_each_segment_written_has_its_suffixes_and_a_segment_gone_takes_them(
    tmp_path: Path, monkeypatch
) -> None:
    for parallel in (False, True):
        segments_come_and_go(
            tmp_path / str(parallel), monkeypatch, parallel, check_segments, "zebra proxy\n"
        )


def test_a_reconcile_writes_anew_the_suffixes_a_segment_lost_and_leaves_the_others(
    tmp_path: Path,
) -> None:
    lost_files_are_written_anew(tmp_path, "trove-sufx-*", check_segments)


def test_searches_answer_the_same_with_the_suffixes_missing_or_damaged(tmp_path: Path) -> None:
    """Words inside others, fragments, words ending others and phrases (whose first word
    ends a term and last starts one), in two segments, with a command filter."""
    settings = sample(tmp_path)
    Syncer(settings, get_source("reports")).reconcile(full=True)
    reports = sorted((tmp_path / "reports").rglob("*.md"))
    for path in reports[:6]:
        path.write_text(path.read_text(encoding="utf-8") + "\nmicroproxy zebrafish\n", "utf-8")
    Syncer(settings, get_source("reports")).reconcile()  # a second segment
    commands = sorted(p.name for p in (tmp_path / "reports").iterdir())
    queries = ("roxy", "proxy", "ebra", "imeou", "out err", "ing", "中", "zqxw")
    filters = (None, commands[0])
    answers_the_same_damaged_or_missing(settings, "trove-sufx-*", queries, filters)
