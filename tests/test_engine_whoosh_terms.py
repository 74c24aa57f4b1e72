"""indexer/engine/whoosh/terms.py reads a field's terms from Whoosh's terms file in one
go: the same terms, postings extents and document counts as Whoosh's own reader finds,
record by record; a damaged file is a ValueError (never another error), and the index's
check finds what the read would meet."""

from __future__ import annotations

import random
from itertools import accumulate
from typing import Any

import pytest
from indexed import COLLECTIONS, indexed_sample
from whoosh.codec.whoosh3 import W3TermsReader  # noqa: TID251
from whoosh.fields import BOOLEAN, NUMERIC  # noqa: TID251
from whoosh.filedb.structfile import BufferFile  # noqa: TID251

from indexer.config import settings_from_dict
from indexer.engine.whoosh.terms import read_terms
from indexer.sources.reports import ReportsSource
from indexer.store import Syncer
from query.context import QueryContext
from query.reports import search_reports

Read = tuple[str, list[int], list[int], list[int], list[int]]  # joined, starts, offsets, ...


def as_whoosh_reads(terms: Any, field: str) -> Read:
    """The field's terms as Whoosh's reader reads them, one record at a time."""
    names, offsets, lengths, doc_counts = [], [], [], []
    for (name, tbytes), info in terms.items():
        if name != field:
            continue
        names.append(tbytes.decode("utf-8"))
        doc_counts.append(info.doc_frequency())
        if info.is_inlined():
            offsets.append(-1)
            lengths.append(0)
        else:
            offset, length = info.extent()
            offsets.append(offset)
            lengths.append(length[0] if isinstance(length, tuple) else length)
    joined = "\0" + "\0".join(names) + "\0" if names else ""
    starts = list(accumulate((len(n) + 1 for n in names[:-1]), initial=1)) if names else []
    return joined, starts, offsets, lengths, doc_counts


def as_read(terms: Any, field: str) -> Read:
    found = read_terms(terms, field)
    assert found is not None
    return (
        found.joined,
        list(found.starts),
        list(found.offsets),
        list(found.lengths),
        list(found.doc_counts),
    )


def text_fields(segment: Any) -> list[str]:
    schema = segment.reader.schema
    names = {name for (name, _), _ in segment.reader._terms.items()}
    return sorted(n for n in names if not isinstance(schema[n], (NUMERIC, BOOLEAN)))


@pytest.fixture(scope="module")
def sample_ctx(tmp_path_factory):
    ctx = indexed_sample(tmp_path_factory.mktemp("terms"))
    yield ctx
    ctx.close()


def test_every_text_field_of_every_collection_reads_as_whoosh_reads_it(sample_ctx) -> None:
    seen: list[tuple[str, list[int]]] = []
    for collection in COLLECTIONS:
        with sample_ctx.indexes.snapshot(collection) as snapshot:
            for segment, _ in snapshot.segments():
                terms = segment.reader._terms
                for field in text_fields(segment):
                    found = as_read(terms, field)
                    assert found == as_whoosh_reads(terms, field), (collection, field)
                    seen.append((found[0], found[2]))
                assert as_read(terms, "no such field") == ("", [], [], [], [])
    assert any(not joined.isascii() for joined, _ in seen)  # terms not ASCII were read


def test_a_damaged_terms_file_is_a_value_error_or_reads_as_whoosh_reads_it(sample_ctx) -> None:
    """Bytes flipped anywhere in the records and in the array of their positions: the read
    raises ValueError, or (a flip in a term's bytes or numbers) reads what Whoosh's own
    reader reads from the same bytes."""
    with sample_ctx.indexes.snapshot("reports") as snapshot:
        segment = max((s for s, _ in snapshot.segments()), key=lambda s: s.doc_count_all)
        terms = segment.reader._terms
        table = terms._tindex
        raw = bytes(terms._dbfile.get(0, table.indexbase + table.indexlen * table.indexsize))
        raw += bytes(terms._dbfile.get(len(raw), _length(terms) - len(raw)))
        codec = terms._codec
    number = terms._fieldmap["content"]
    first = table.closest_key_pos(number.to_bytes(2, "big"))
    after = table.closest_key_pos((number + 1).to_bytes(2, "big")) or table.endofdata
    positions = (table.indexbase, table.indexbase + table.indexlen * table.indexsize)
    rng = random.Random(5)
    places = [rng.randrange(first, after) for _ in range(300)]
    places += [rng.randrange(*positions) for _ in range(100)]
    outcomes = {"refused": 0, "same": 0, "whoosh fails": 0}
    for at in places:
        damaged = bytearray(raw)
        damaged[at] ^= 1 << rng.randrange(8)
        reader = W3TermsReader(codec, BufferFile(memoryview(bytes(damaged))), len(damaged), None)
        try:
            found = as_read(reader, "content")
        except ValueError:
            outcomes["refused"] += 1
            continue
        try:
            expected = as_whoosh_reads(reader, "content")
        except Exception:  # noqa: BLE001 (Whoosh fails on it: the index's check does too)
            outcomes["whoosh fails"] += 1
            continue
        assert found == expected, at
        outcomes["same"] += 1
    assert outcomes["refused"] > 10 and outcomes["same"] > 10, outcomes


def _length(terms: Any) -> int:
    terms._dbfile.seek(0, 2)
    return terms._dbfile.tell()


def test_a_term_holding_a_nul_is_read_whole_and_found(tmp_path) -> None:
    """A report's text past its first 8 KB may hold a NUL (only the first 8 KB are looked
    at for a binary file), and a run of punctuation holding it is a term: the terms are
    still read as Whoosh reads them, each where it begins, and the report is found."""
    settings = settings_from_dict(
        {"sources": {"reports": str(tmp_path / "reports")}, "index": {"dir": str(tmp_path / "i")}},
        base=tmp_path,
    )
    report = tmp_path / "reports" / "cmd" / "r_20250101.md"
    report.parent.mkdir(parents=True)
    report.write_bytes(b"hello world " * 1000 + b"x .\x00; y proxy timeout \xc3\xa9t\xc3\xa9\n")
    syncer = Syncer(settings, ReportsSource())
    syncer.parallel = False
    assert syncer.reconcile().added == 1
    ctx = QueryContext.from_settings(settings)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            segments: list[Any] = [s for s, _ in snapshot.segments()]  # the Whoosh engine's
            (segment,) = segments
            terms = segment.reader._terms
            found = as_read(terms, "content")
            assert found == as_whoosh_reads(terms, "content")
            lexicon = segment.lexicon("content")
            terms = found[0][1:-1].split("\0")
            assert ".\x00;" in [lexicon.term(k) for k in range(len(lexicon))]
            assert len(lexicon) == len(terms) - 1  # one term holds a NUL
        for query in ("proxy", "y proxy", "été"):
            assert [r.report_name for r in search_reports(ctx, query).results] == [report.name]
    finally:
        ctx.close()
