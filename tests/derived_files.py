"""What every kind of data derived from a segment (fragment tops, token sequences: a file
beside the segment) is tested for, with the sample reports: a file per segment written,
and gone with its segment; one lost or damaged written anew by a reconcile, as its
writer wrote it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from indexer import store
from indexer.config import Settings, settings_from_dict
from indexer.engine.base import Segment
from indexer.sources.registry import get_source
from indexer.store import Syncer
from query.context import QueryContext
from query.count_plan import CountPlan
from query.reports import search_reports

DATA = Path(__file__).resolve().parent.parent / "data"


def sample(tmp_path: Path) -> Settings:
    shutil.copytree(DATA / "reports", tmp_path / "reports")
    raw = {
        "sources": {"reports": str(tmp_path / "reports")},
        "index": {"dir": str(tmp_path / "index")},
    }
    return settings_from_dict(raw, base=tmp_path)


def checked_segments(settings: Settings, prefix: str, check: Callable[[Segment], None]) -> int:
    """``check(segment)`` for each live segment of the reports index, once the files of
    ``prefix`` beside them are found to be one per segment (``{prefix}{id}.bin``); how
    many segments there are."""
    ctx = QueryContext.from_settings(settings)
    try:
        with ctx.indexes.snapshot("reports") as snapshot:
            assert snapshot is not None
            segments = [segment for segment, _ in snapshot.segments()]
            found = {p.name for p in (settings.index_dir / "reports").glob(f"{prefix}*")}
            assert found == {f"{prefix}{s.id}.bin" for s in segments}
            for segment in segments:
                check(segment)
            return len(segments)
    finally:
        ctx.close()


def segments_come_and_go(
    tmp_path: Path, monkeypatch, parallel: bool, check: Callable[[Settings], int], text: str
) -> None:
    """``check(settings)`` (how many segments, each checked) after a build, a change (a
    new segment holding ``text``, a deletion), a compaction and every report deleted."""
    settings = sample(tmp_path)
    syncer = Syncer(settings, get_source("reports"))
    if parallel:  # the writer processes, each with its segment
        monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 1)
    syncer.parallel = parallel
    syncer.reconcile(full=True)
    assert check(settings) >= 1
    reports = sorted((tmp_path / "reports").rglob("*.md"))
    reports[0].write_text(text, encoding="utf-8")  # a new segment, a deletion
    syncer.reconcile()
    assert check(settings) >= 2
    syncer.compact(wait=True)  # small segments re-indexed into one: theirs go
    assert check(settings) >= 1
    for path in reports:
        path.unlink()
    syncer.reconcile()  # every document deleted: the segments are dropped, and theirs
    assert check(settings) == 0


def lost_files_are_written_anew(
    tmp_path: Path, pattern: str, check: Callable[[Settings], int], delete: bool = False
) -> None:
    """A reconcile leaves the one file (of ``pattern``) alone while intact, and writes it
    anew, as the writer wrote it, flipped, cut, empty or deleted (``delete``: with a
    report deleted first, still in its segment)."""
    settings = sample(tmp_path)
    syncer = Syncer(settings, get_source("reports"))
    syncer.reconcile(full=True)
    if delete:
        min((tmp_path / "reports").rglob("*.md")).unlink()
        syncer.reconcile()
    [path] = (settings.index_dir / "reports").glob(pattern)
    written = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    syncer.reconcile()
    assert path.stat().st_mtime_ns == stamp  # intact: left alone
    for damage in ("flip", "cut", "empty", "delete"):
        if damage == "flip":
            path.write_bytes(written[:100] + bytes([written[100] ^ 1]) + written[101:])
        elif damage == "cut":
            path.write_bytes(written[: len(written) // 2])
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.unlink()
        syncer.reconcile()
        assert path.read_bytes() == written, damage  # as the writer wrote it
    assert check(settings) == 1


def answers(
    settings: Settings,
    queries: Iterable[str],
    commands: Iterable[str | None],
    plan: CountPlan = "cost",
    sizes: Iterable[int] = (1, 3, 10),
) -> list[list[tuple[str, int, str]]]:
    """search_reports' hits (path, count, match) for each query, command filter and
    number of results, counted by ``plan``: a search that reads a kind of derived data
    must answer as one that counts in the postings or the texts."""
    ctx = QueryContext.from_settings(settings)
    ctx.plan = plan
    try:
        return [
            [(h.path, h.count, h.match) for h in search_reports(ctx, q, command, n).results]
            for q in queries
            for command in commands
            for n in sizes
        ]
    finally:
        ctx.close()


def answers_the_same_damaged_or_missing(
    settings: Settings, pattern: str, queries: Iterable[str], filters: Iterable[str | None]
) -> None:
    """The searches answer as counting in the texts does, with the files of ``pattern``
    (two segments' worth) as written, with a bit of each flipped, and with them gone."""
    queries, filters = list(queries), list(filters)
    counted = answers(settings, queries, filters, "texts")
    assert any(counted)
    assert answers(settings, queries, filters) == counted
    found = sorted((settings.index_dir / "reports").glob(pattern))
    assert len(found) == 2
    for path in found:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    assert answers(settings, queries, filters) == counted
    for path in found:
        path.unlink()
    assert answers(settings, queries, filters) == counted
