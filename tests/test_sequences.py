"""indexer/engine/sequences.py: a segment's token sequences find exactly the runs of
tokens a walk over every document's tokens finds; a damaged table is never used; the
writer leaves one beside each segment it writes, a reconcile writes anew one that is
lost, and those of segments gone are removed."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from derived_files import checked_segments, lost_files_are_written_anew, segments_come_and_go

from indexer.config import Settings
from indexer.engine import sequences
from indexer.engine.base import Segment
from indexer.engine.lexicon import Lexicon
from indexer.engine.sequences import SequenceWriter, TokenSequences
from indexer.sources.reports import tokens

WORDS = ["the", "then", "bathe", "of", "in", "x", ".", "日", "ß", "a"]


def documents(rng: random.Random, n: int) -> list[list[str] | None]:
    """Each document's tokens (None: never added, as a file record is not)."""
    docs: list[list[str] | None] = []
    for _ in range(n):
        if rng.random() < 0.1:
            docs.append(None)
        else:
            docs.append([rng.choice(WORDS) for _ in range(rng.randint(0, 30))])
    return docs


def table_of(docs: list[list[str] | None]) -> bytes:
    writer = SequenceWriter()
    for d, toks in enumerate(docs):
        if toks is not None:
            writer.add_tokens(d, toks)
    return writer.table(len(docs))


def walked(docs: list[list[str] | None], allowed: list[set[str]]) -> list[int]:
    """Per document, the runs of len(allowed) tokens whose j-th is one of allowed[j]."""
    k = len(allowed)
    return [
        sum(all(toks[i + j] in allowed[j] for j in range(k)) for i in range(len(toks) - k + 1))
        if toks
        else 0
        for toks in docs
    ]


@pytest.mark.parametrize("coded", [sequences.CODED, 4])
def test_runs_are_those_a_walk_over_the_tokens_finds(monkeypatch, coded: int) -> None:
    """With few codes (past them, terms share OTHER, taken for any of them) the runs are
    at least those of the terms asked for, and exactly them with a code each; runs
    across the parts compared on each core are found once."""
    monkeypatch.setattr(sequences, "CODED", coded)
    monkeypatch.setattr(sequences, "_RUN_CODES", 7)
    rng = random.Random(coded)
    for n in (0, 1, 5, 60):
        docs = documents(rng, n)
        table = TokenSequences.parse(table_of(docs), n)
        assert table is not None
        terms = sorted({t for toks in docs if toks for t in toks})
        lexicon = Lexicon(terms, [1] * len(terms))
        coded_terms = set(table.terms())
        assert len(coded_terms) == min(coded, len(terms))
        for _ in range(40):
            k = rng.randint(1, 4)
            allowed = [set(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(k)]
            ks = [[lexicon.equal_to(t)[0] for t in sorted(a) if t in terms] for a in allowed]
            codes = [table.codes_of(lexicon, each) for each in ks]
            assert all(c is not None for c in codes)
            got = table.runs([c for c in codes if c is not None]).tolist()
            present = [a & set(terms) for a in allowed]
            exact = walked(docs, present)
            uncoded = set(terms) - coded_terms
            # OTHER stands for any term without a code of its own.
            assert got == walked(docs, [a | uncoded if a & uncoded else a for a in present])
            assert all(g >= e for g, e in zip(got, exact, strict=True))
            if not any(a & uncoded for a in present):
                assert got == exact, allowed


def test_the_codes_follow_the_terms_in_order_and_a_lexicon_they_miss_is_refused() -> None:
    docs: list[list[str] | None] = [["the", "then", "bathe"], None, ["the", "the"]]
    table = TokenSequences.parse(table_of(docs), 3)
    assert table is not None
    assert table.terms() == ["bathe", "the", "then"]
    same = Lexicon(["bathe", "the", "then"], [1, 2, 1])
    starting = table.codes_of(same, same.starting_with("the"))
    assert starting is not None and starting.tolist() == [1, 2]  # consecutive codes
    other = Lexicon(["bathe", "other", "the"], [1, 1, 2])  # 'other' has no code, no OTHER
    assert table.codes_of(other, other.equal_to("other")) is None
    found = table.codes_of(other, other.equal_to("the"))
    assert found is not None and found.tolist() == [1]
    assert table.runs([np.array([1], np.uint16)] * 2).tolist() == [0, 0, 1]


def test_a_document_added_out_of_order_is_refused() -> None:
    writer = SequenceWriter()
    writer.add_tokens(3, ["a"])
    with pytest.raises(ValueError):
        writer.add_tokens(2, ["a"])


def test_a_damaged_or_foreign_table_is_not_used() -> None:
    docs = documents(random.Random(5), 40)
    data = table_of(docs)
    assert TokenSequences.parse(data, 40) is not None
    assert TokenSequences.parse(data, 41) is None  # of another segment
    assert TokenSequences.parse(data[:-1], 40) is None
    assert TokenSequences.parse(data[: len(data) // 2], 40) is None
    assert TokenSequences.parse(b"", 40) is None
    for at in range(0, len(data), max(1, len(data) // 97)):
        flipped = bytearray(data)
        flipped[at] ^= 0x40
        assert TokenSequences.parse(bytes(flipped), 40) is None, at


def test_a_table_read_from_its_file_is_the_one_parsed(tmp_path: Path, monkeypatch) -> None:
    """Read from the file a part at a time (parts of 7 codes here, chunks of 5 checked),
    the codes and runs are those of the table in memory; a closed one is not read."""
    monkeypatch.setattr(sequences, "_RUN_CODES", 7)
    monkeypatch.setattr(sequences, "_CHECKED_CODES", 5)
    rng = random.Random(7)
    docs = documents(rng, 50)
    data = table_of(docs)
    path = tmp_path / "table.bin"
    path.write_bytes(data)
    parsed = TokenSequences.parse(data, 50)
    read = TokenSequences.read(os.open(path, os.O_RDONLY), 50)
    assert parsed is not None and read is not None
    assert read.codes(5, 9).tolist() == parsed.codes().tolist()[5:9]
    assert len(read) == len(parsed) and read.codes().tolist() == parsed.codes().tolist()
    assert read.terms() == parsed.terms()
    codes = sorted(set(parsed.codes().tolist()) - {sequences.BOUNDARY})
    for _ in range(30):
        sets = [np.array(sorted(rng.sample(codes, 2)), np.uint16) for _ in range(rng.randint(1, 3))]
        assert read.runs(sets).tolist() == parsed.runs(sets).tolist()
    assert read.intact()
    read.close()
    with pytest.raises(OSError):
        read.codes()
    assert TokenSequences.read(os.open(path, os.O_RDONLY), 51) is None  # of another segment


def test_a_flip_anywhere_in_the_file_is_found_before_its_codes_are_used(
    tmp_path: Path, monkeypatch
) -> None:
    """All but the codes are checked as the file is opened (no table); a chunk of codes
    the first time it is read (OSError, then for every read; the table not intact),
    while the chunks before it still read as written."""
    monkeypatch.setattr(sequences, "_CHECKED_CODES", 16)
    data = table_of(documents(random.Random(3), 30))
    parsed = TokenSequences.parse(data, 30)
    assert parsed is not None
    written = parsed.codes().tolist()
    layout = sequences._layout(data, len(data), 30)
    assert layout is not None
    codes = range(layout.codes_at, layout.codes_at + 2 * layout.codes)
    path = tmp_path / "table.bin"
    for at in range(len(data)):
        flipped = bytearray(data)
        flipped[at] ^= 0x10
        path.write_bytes(bytes(flipped))
        assert TokenSequences.parse(bytes(flipped), 30) is None, at
        read = TokenSequences.read(os.open(path, os.O_RDONLY), 30)
        if at not in codes:
            assert read is None, at
            continue
        assert read is not None, at
        chunk = 16 * ((at - layout.codes_at) // 2 // 16)  # the first code of its chunk
        assert read.codes(0, chunk).tolist() == written[:chunk], at
        with pytest.raises(OSError):
            read.codes(chunk, min(len(written), chunk + 16))
        with pytest.raises(OSError):
            read.codes(0, 1)
        assert not read.intact(), at
        read.close()


# --------------------------------------------------------------------------- the index


def check_segments(settings: Settings) -> int:
    """Each live segment's table is the one its texts make (their tokens, every document
    of the segment's); how many segments there are."""

    def check(segment: Segment) -> None:
        assert segment.token_sequences() is not None
        text = segment.bytes_column("text")
        docs = [tokens(text.value(d).decode()) for d in range(segment.doc_count_all)]
        path = settings.index_dir / "reports" / f"trove-seqs-{segment.id}.bin"
        assert path.read_bytes() == table_of([toks or None for toks in docs])

    return checked_segments(settings, "trove-seqs-", check)


@pytest.mark.parametrize("parallel", [False, True])
def test_each_segment_written_has_its_sequences_and_a_segment_gone_takes_them(
    tmp_path: Path, monkeypatch, parallel: bool
) -> None:
    segments_come_and_go(tmp_path, monkeypatch, parallel, check_segments, "the the then\n")


def test_a_reconcile_writes_anew_the_sequences_a_segment_lost_and_leaves_the_others(
    tmp_path: Path,
) -> None:
    """Made anew from every document's text, those deleted since too: as written."""
    lost_files_are_written_anew(tmp_path, "trove-seqs-*", check_segments, delete=True)
