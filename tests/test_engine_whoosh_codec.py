"""TroveCodec: Whoosh's W3 codec with protocol-5 postings blocks of few objects, read by
Whoosh as its own."""

from __future__ import annotations

import pickle
import random
import zlib
from array import array
from io import BytesIO
from pathlib import Path
from pickle import Unpickler, dumps, loads

import pytest
from whoosh import index as whoosh_index  # noqa: TID251 (an engine test)
from whoosh.codec.whoosh3 import W3Codec  # noqa: TID251
from whoosh.fields import ID, TEXT, Schema  # noqa: TID251
from whoosh.query import Phrase, Term  # noqa: TID251

from indexer.engine.whoosh.codec import (
    BLOCK_PROTOCOL,
    EXTENSIONS,
    PackedValues,
    TroveCodec,
    compact,
)

WORDS = ["proxy", "timeout", "decode", "join", "meeting", "pac", "winhttp", "retry"]


def _build(
    folder: Path, codec: W3Codec, texts: list[str], body: TEXT | None = None
) -> whoosh_index.Index:
    folder.mkdir()
    schema = Schema(key=ID(stored=True), body=body or TEXT(phrase=True))
    ix = whoosh_index.create_in(str(folder), schema)
    writer = ix.writer(codec=codec)
    for i, text in enumerate(texts):
        writer.add_document(key=str(i), body=text)
    writer.commit()
    return ix


def _postings(ix: whoosh_index.Index, word: str) -> list[tuple[int, float, list[int]]]:
    with ix.searcher() as searcher:
        matcher = searcher.postings("body", word)
        out = []
        while matcher.is_active():
            out.append((matcher.id(), matcher.weight(), matcher.value_as("positions")))
            matcher.next()
        return out


def test_whoosh_reads_trove_codec_postings_as_it_reads_its_own(tmp_path: Path) -> None:
    rng = random.Random(5)
    # Enough documents for several blocks of 128 postings per word.
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 60))) for _ in range(600)]
    theirs = _build(tmp_path / "w3", W3Codec(), texts)
    ours = _build(tmp_path / "trove", TroveCodec(), texts)
    for word in WORDS:
        expected = _postings(theirs, word)
        assert len(expected) > 3 * 128
        assert _postings(ours, word) == expected
    with theirs.searcher() as a, ours.searcher() as b:
        for first, second in zip(WORDS, WORDS[1:] + WORDS[:1], strict=True):
            phrase = Phrase("body", [first, second])
            assert sorted(h["key"] for h in b.search(phrase, limit=None)) == sorted(
                h["key"] for h in a.search(phrase, limit=None)
            )
        assert b.search(Term("body", "proxy")).scored_length() > 0


def _first_block(ix: whoosh_index.Index, word: bytes) -> tuple[tuple, bytes]:
    """The info tuple and the data of the first postings block of ``word``."""
    with ix.reader() as reader:
        (leaf, _), *_ = reader.leaf_readers()
        terms = leaf._terms
        offset, length = terms.term_info("body", word).extent()
        if isinstance(length, tuple):
            (length,) = length
        data = terms._postfile.get(offset, length)
    stream = BytesIO(data)
    stream.seek(8)  # the 4-byte magic, then the first block's 4-byte length
    info = Unpickler(stream).load()
    size = int.from_bytes(data[4:8], "big", signed=True)
    return info, data[stream.tell() : 8 + abs(size)]


def test_trove_codec_blocks_are_pickled_with_protocol_5_and_not_compressed(
    tmp_path: Path,
) -> None:
    texts = ["proxy timeout proxy"] * 300
    info, block = _first_block(_build(tmp_path / "trove", TroveCodec(), texts), b"proxy")
    assert not info[3]  # the block's compressed flag
    assert info[2] == 2 and isinstance(info[2], int)  # the max weight, a count
    assert block[:2] == bytes([0x80, BLOCK_PROTOCOL])
    # Compressed when asked, as Whoosh does, and read by Whoosh all the same.
    texts = [f"proxy {i} timeout proxy" for i in range(300)]
    ix = _build(tmp_path / "compressed", TroveCodec(compression=3), texts)
    info, block = _first_block(ix, b"proxy")
    assert info[3]
    assert zlib.decompress(block)[:2] == bytes([0x80, BLOCK_PROTOCOL])
    assert len(_postings(ix, "proxy")) == 300


def test_trove_codec_blocks_hold_arrays_and_packed_values(tmp_path: Path) -> None:
    rng = random.Random(6)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 30))) for _ in range(300)]
    ix = _build(tmp_path / "trove", TroveCodec(), texts)
    _, block = _first_block(ix, b"proxy")
    ids, weights, values = loads(block)
    assert isinstance(ids, array) and isinstance(weights, array)
    assert isinstance(values, PackedValues) and len(values) == len(ids) == 128
    # Each of the smallest type: ids differ by a few documents, weights are counts,
    # the values (positions) end within 64 KB.
    assert (ids.typecode, weights.typecode, values.ends.typecode) == ("B", "B", "H")
    # What Whoosh reads from them is what it wrote: the positions of each posting.
    expected = _postings(_build(tmp_path / "w3", W3Codec(), texts), "proxy")[:128]
    fmt = ix.schema["body"].format
    assert [fmt.decode_positions(v) for v in values] == [p for *_, p in expected]


def test_blocks_take_a_wider_type_only_where_their_numbers_need_it(tmp_path: Path) -> None:
    # "rare" in every 300th document (ids differ by 300: 2 bytes), boosted weights (not
    # whole: floats), values of over 64 KB in all (ends of 4 bytes).
    texts = [("rare " if i % 300 == 0 else "") + "common " * (1 + i % 3) for i in range(128 * 300)]
    ix = _build(tmp_path / "wide", TroveCodec(), texts, TEXT(phrase=True, field_boost=1.5))
    ids, weights, _ = loads(_first_block(ix, b"rare")[1])
    assert ids.typecode == "H" and weights == 1.5  # one weight for all: Whoosh's float
    ids, weights, _ = loads(_first_block(ix, b"common")[1])
    assert (ids.typecode, weights.typecode) == ("B", "f")
    assert list(weights[:3]) == [1.5, 3.0, 4.5]
    long = PackedValues.of([b"x" * 70_000, b"y"])
    assert long.ends.typecode == "I" and loads(dumps(long, BLOCK_PROTOCOL)) == long
    with ix.searcher() as searcher:
        assert searcher.doc_frequency("body", "rare") == 128


def test_compact_takes_the_smallest_unsigned_type() -> None:
    assert [compact(n).typecode for n in ([], [0, 255], [256], [65535], [65536], [2**32 - 1])] == [
        "B",
        "B",
        "H",
        "H",
        "I",
        "I",
    ]
    assert list(compact(array("I", [1, 70_000]))) == [1, 70_000]
    with pytest.raises(ValueError, match="does not fit 4 bytes"):
        compact([2**32])


def test_packed_values_behave_as_a_sequence_of_bytes() -> None:
    values = [b"ab", b"", b"\x00c", b"def"]
    packed = PackedValues.of(values)
    assert len(packed) == 4 and list(packed) == values
    assert [packed[i] for i in range(-4, 4)] == values + values
    assert packed[1:3] == values[1:3] and packed[::-1] == values[::-1]
    assert loads(dumps(packed, BLOCK_PROTOCOL)) == packed
    assert list(loads(dumps(packed, 2))) == values
    for i in (4, -5):
        with pytest.raises(IndexError):
            packed[i]
    empty = PackedValues.of([])
    assert len(empty) == 0 and list(empty) == [] and loads(dumps(empty)) == empty
    # As blocks written before compact ends pickled them: 4-byte ends, no type.
    assert PackedValues(b"ab\x00cdef", array("I", [2, 2, 4, 7]).tobytes()) == packed


def test_indexes_written_before_the_codec_moved_still_unpickle_it() -> None:
    """Their tables of contents and blocks name indexer.codec's classes."""
    for cls in (TroveCodec, PackedValues):
        # GLOBAL by module and name, as protocol 2 wrote them (no extension codes then).
        old = b"\x80\x02cindexer.codec\n" + cls.__name__.encode() + b"\nq\x00."
        assert pickle.loads(old) is cls


def test_blocks_name_their_classes_by_extension_code_and_read_back() -> None:
    """Two bytes a class in a block's pickle (copyreg's registry), where their module
    and name took 92 bytes; read back by a process that imported the codec."""
    block = (compact([1, 2]), compact([3, 300]), PackedValues.of([b"ab", b"c"]))
    data = dumps(block, BLOCK_PROTOCOL)
    assert b"array" not in data and b"PackedValues" not in data
    for (module, name), code in EXTENSIONS.items():
        assert bytes([0x82, code]) in data, (module, name)
    assert loads(data) == block


# ---- the writer that groups postings by term (indexer/engine/whoosh/inverting.py)


def _segment_files(folder: Path) -> dict[str, bytes]:
    """A one-segment index's files by extension (the segment's random id left out)."""
    files = {}
    for path in folder.iterdir():
        if path.name.startswith("MAIN_"):
            files[path.name.split(".", 1)[1]] = path.read_bytes()
    return files


@pytest.mark.parametrize(
    ("collection", "limitmb"),
    [("reports", 128), ("reports", 1), ("conversations", 128), ("elog", 128)],
    ids=["reports", "reports-spilling-runs", "conversations", "elog-with-field-lengths"],
)
def test_the_grouping_writer_writes_the_segment_whoosh_writes_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collection: str, limitmb: int
) -> None:
    from whoosh.writing import SegmentWriter  # noqa: TID251

    from indexer.config import settings_from_dict
    from indexer.engine.whoosh import inverting, writing
    from indexer.sources.registry import get_source
    from indexer.store import Syncer

    rng = random.Random(7)
    words = [f"{w}{i}" for w in WORDS for i in range(20)] + ["the", "a", "é", "数据"]
    root = tmp_path / "src"
    for i in range(300):  # several blocks of 128 postings for the common words
        body = " ".join(rng.choice(words[: rng.randrange(8, len(words))]) for _ in range(80))
        if collection == "reports":
            path = root / "triage" / f"r_2025-01-{i % 28 + 1:02d}_{i}.md"
            text = f"# Report {i}\n\n{body}\n"
        elif collection == "conversations":
            path = root / "2025-01" / f"{i:03d}-talk" / "conversation.md"
            text = f"## User\n\n{body}\n\n## Assistant\n\n{body[::-1]}\n"
        else:
            path = root / "250101a.log"
            text = "".join(
                f"$@MID@$: {j}\nDate: Wed, 01 Jan 2025 10:00:00 +0100\nAuthor: A\n"
                f"Subject: entry {j}\n========================================\n"
                f"{' '.join(rng.choice(words) for _ in range(60))}\n"
                for j in range(1, 301)
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if collection == "elog":
            break

    built = {}
    for name, make in (("whoosh", SegmentWriter), ("grouping", inverting.TroveSegmentWriter)):

        def one_segment(self, codec, parallel, cpus, make=make):
            return make(self.native, limitmb=limitmb, codec=codec, _lk=False, compound=False)

        monkeypatch.setattr(writing.WhooshIndex, "_writer", one_segment)
        settings = settings_from_dict(
            {"sources": {collection: str(root)}, "index": {"dir": str(tmp_path / name)}},
            base=tmp_path,
        )
        summary = Syncer(settings, get_source(collection)).reconcile()
        assert summary.added >= 300 and not summary.error
        built[name] = _segment_files(tmp_path / name / collection)
    assert set(built["grouping"]) == set(built["whoosh"]) and len(built["whoosh"]) >= 3
    for ext, data in built["whoosh"].items():
        assert built["grouping"][ext] == data, f"{ext} differs"
