from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

import lookups
import pytest
from conftest import DAEMON_TIMEOUT

from indexer.collection import LOCK_FILE, MARKER_FORMAT, CollectionIndex
from indexer.config import Settings, settings_from_dict
from indexer.engine.whoosh.schema import pack_stat
from indexer.engine.whoosh.writing import WhooshIndex
from indexer.errors import ForeignIndexError, IndexLockedError, StoreError, WriteFault
from indexer.files import read_file
from indexer.reindex import reindex
from indexer.sources.commands import CommandsSource
from indexer.sources.registry import get_source
from indexer.sources.reports import ReportsSource
from indexer.store import Syncer
from query.indexes import Indexes


def indexed_keys(settings, source) -> dict[str, dict]:
    return lookups.documents(settings, source.name)


def content_hits(settings, source, word: str) -> set[str]:
    """Reports whose content has a token starting with ``word`` (whatever the analyzer)."""
    return lookups.keys_with_prefix(settings, source.name, "content", word)


def test_reconcile_applies_only_the_difference(make_settings, write, tmp_path) -> None:
    s = make_settings()
    write("reports/a/one_20251101.md", "alpha proxy")
    write("reports/a/two_20251102.md", "beta")
    write("reports/b/three.md", "gamma")
    first = Syncer(s, ReportsSource()).reconcile()
    assert (first.added, first.updated, first.deleted, first.unchanged) == (3, 0, 0, 0)

    again = Syncer(s, ReportsSource()).reconcile()
    assert (again.added, again.updated, again.deleted, again.unchanged) == (0, 0, 0, 3)

    write("reports/a/one_20251101.md", "alpha changed")
    (tmp_path / "reports/b/three.md").unlink()
    write("reports/b/four.md", "delta")
    third = Syncer(s, ReportsSource()).reconcile()
    assert (third.added, third.updated, third.deleted, third.unchanged) == (1, 1, 1, 1)
    assert set(indexed_keys(s, ReportsSource())) == {
        "a/one_20251101.md",
        "a/two_20251102.md",
        "b/four.md",
    }
    assert CollectionIndex(s.index_dir, ReportsSource()).doc_count() == 3
    assert content_hits(s, ReportsSource(), "changed") == {"a/one_20251101.md"}
    assert content_hits(s, ReportsSource(), "proxy") == set()


def test_a_touched_file_with_the_same_content_is_unchanged(make_settings, write) -> None:
    s = make_settings()
    path = write("reports/a/r.md", "same")
    Syncer(s, ReportsSource()).reconcile()
    os.utime(path, ns=(1, 1))
    touched = Syncer(s, ReportsSource()).reconcile()
    assert (touched.added, touched.updated, touched.unchanged) == (0, 0, 1)
    # ...and the new mtime was recorded, so the next pass does not read it again.
    assert Syncer(s, ReportsSource()).reconcile().unchanged == 1


def test_full_rebuild_gives_the_same_documents(make_settings, write) -> None:
    s = make_settings()
    for i in range(5):
        write(f"reports/c/r{i}.md", f"word{i}")
    Syncer(s, ReportsSource()).reconcile()
    before = set(indexed_keys(s, ReportsSource()))
    full = Syncer(s, ReportsSource()).reconcile(full=True)
    assert full.added == 5
    assert set(indexed_keys(s, ReportsSource())) == before
    assert Syncer(s, ReportsSource()).reconcile().unchanged == 5


def test_a_big_build_uses_two_processes_and_keeps_every_document(
    make_settings, write, monkeypatch
) -> None:
    from indexer import store

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    s = make_settings()
    for i in range(120):
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i}")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 120
    assert len(indexed_keys(s, ReportsSource())) == 120
    assert content_hits(s, ReportsSource(), "unique77") == {"c1/r77.md"}
    rebuilt = Syncer(s, ReportsSource()).reconcile(full=True)
    assert rebuilt.added == 120
    assert len(content_hits(s, ReportsSource(), "common")) == 120


def test_missing_source_folder_is_an_empty_collection(make_settings) -> None:
    s = make_settings()
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.missing_root and summary.added == 0
    assert CollectionIndex(s.index_dir, ReportsSource()).doc_count() == 0


def test_source_folder_deleted_empties_the_index(make_settings, write, tmp_path) -> None:
    import shutil

    s = make_settings()
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    shutil.rmtree(tmp_path / "reports")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.deleted == 1
    assert indexed_keys(s, ReportsSource()) == {}


# ---------------------------------------------------------------- bad input


def test_undecodable_bytes_are_indexed_as_far_as_they_decode(make_settings, write) -> None:
    s = make_settings()
    write("reports/a/latin.md", b"proxy caf\xe9 \xff\xfe timeout")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    assert summary.warnings == ["a/latin.md: bytes that are not UTF-8 were replaced"]
    assert content_hits(s, ReportsSource(), "timeout") == {"a/latin.md"}


def test_a_binary_file_named_md_is_skipped_with_a_reason(make_settings, write) -> None:
    s = make_settings()
    write("reports/a/image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    write("reports/a/ok.md", "fine")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.skipped == {"binary file": 1}
    assert set(indexed_keys(s, ReportsSource())) == {"a/ok.md"}
    # Remembered: the next pass does not read it again, but still reports it.
    again = Syncer(s, ReportsSource()).reconcile()
    assert again.skipped == {"binary file": 1} and again.unchanged == 1


def test_a_huge_file_is_indexed_by_a_capped_prefix(make_settings, write, tmp_path) -> None:
    s = make_settings(index={"max_file_mb": 1})
    head = "needle at the start\n"
    write(
        "reports/a/huge.md", head + "filler words here\n" * (20 * 1024 * 1024 // 18) + "tailword\n"
    )
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    size = (tmp_path / "reports/a/huge.md").stat().st_size
    assert summary.warnings == [f"a/huge.md: {size / 2**20:.1f} MB; indexed its first 1.0 MB"]
    assert content_hits(s, ReportsSource(), "needle") == {"a/huge.md"}
    assert content_hits(s, ReportsSource(), "tailword") == set()


def test_a_file_of_max_file_mb_exactly_is_whole_and_a_byte_more_is_capped(
    make_settings, write
) -> None:
    s = make_settings(index={"max_file_mb": 1})
    line = "sixteen bytes. \n"
    write("reports/a/whole.md", line * (2**20 // 16))
    write("reports/a/over.md", line * (2**20 // 16) + "y")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 2
    assert summary.warnings == ["a/over.md: 1.0 MB; indexed its first 1.0 MB"]


def test_empty_files_are_indexed_as_empty_documents(make_settings, write) -> None:
    s = make_settings()
    write("reports/a/empty.md", "")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    assert summary.warnings == ["a/empty.md: empty file"]


def test_symlinks_are_not_followed_out_of_the_root_and_loops_end(
    make_settings, write, tmp_path
) -> None:
    s = make_settings()
    write("reports/a/inside.md", "inside")
    secret = write("outside/secret.md", "secret")
    (tmp_path / "reports/a/leak.md").symlink_to(secret)
    (tmp_path / "reports/outdir").symlink_to(tmp_path / "outside")
    (tmp_path / "reports/a/alias.md").symlink_to(tmp_path / "reports/a/inside.md")
    (tmp_path / "reports/loop").symlink_to(tmp_path / "reports")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.skipped["symlink pointing outside the root"] == 2
    assert summary.skipped["folder seen before (a symlink loop or a second link)"] == 1
    keys = set(indexed_keys(s, ReportsSource()))
    assert keys == {"a/inside.md", "a/alias.md"}
    assert content_hits(s, ReportsSource(), "secret") == set()


def _a_tree_of_every_kind_of_entry(root: Path) -> None:
    """Folders and files the walk keeps, and every kind it leaves out, at the root and
    below it: hidden, a name not UTF-8, a symlink out of the root, a FIFO, a symlink to a
    file inside; commands' and conversations' layouts too."""
    for i in range(30):
        for j in range(3):
            (root / f"c{i}").mkdir(parents=True, exist_ok=True)
            (root / f"c{i}" / f"r{j}_2025110{j + 1}.md").write_text(f"report {i} {j}")
    (root / "2025-11-02" / "001-slug").mkdir(parents=True)
    (root / "2025-11-02" / "001-slug" / "conversation.md").write_text("a conversation")
    (root / "top.md").write_text("a file at the root")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "r.md").write_text("hidden")
    (root / "c1" / "r.md~").write_text("a backup")
    os.mkdir(os.path.join(os.fsencode(root), b"bad\xff"))
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    (root / "out").symlink_to(outside)
    os.mkfifo(root / "c2" / "pipe.md")
    (root / "c3" / "alias.md").symlink_to(root / "c3" / "r0_20251101.md")


@pytest.mark.parametrize("processes", [2, 3])
def test_a_walk_split_among_processes_lists_what_one_process_lists(tmp_path, processes) -> None:
    from indexer.files import _walk_split, walk

    root = tmp_path / "root"
    _a_tree_of_every_kind_of_entry(root)
    for source in (ReportsSource(), CommandsSource(), get_source("conversations")):
        one = walk(root, source)
        assert _walk_split(root, source, processes) is not None  # split, not walked again
        split = walk(root, source, processes)
        assert split.files == one.files and split.skipped == one.skipped
        assert one.files  # each layout finds files here


def test_a_split_walk_that_meets_a_folder_twice_walks_again_in_one_process(tmp_path) -> None:
    """A folder reached by two paths (a symlink to a folder inside): one process decides
    which path lists it, as a walk in one process does."""
    from indexer.files import _walk_split, walk

    root = tmp_path / "root"
    _a_tree_of_every_kind_of_entry(root)
    (root / "zz-alias").symlink_to(root / "c7")
    (root / "loop").symlink_to(root)
    source = ReportsSource()
    assert _walk_split(root, source, 2) is None
    one, split = walk(root, source), walk(root, source, 2)
    assert split.files == one.files and split.skipped == one.skipped
    assert one.skipped["folder seen before (a symlink loop or a second link)"] == 2


def test_a_root_that_cannot_be_listed_fails_a_split_walk_too(tmp_path) -> None:
    from indexer.files import walk

    root = tmp_path / "root"
    root.write_text("a file where the folder should be")
    for processes in (1, 2):
        with pytest.raises(StoreError, match="cannot list"):
            walk(root, ReportsSource(), processes)


@pytest.mark.parametrize("root_real", [False, True], ids=["alone", "root-resolved"])
def test_read_file_refuses_a_path_leading_out_of_the_root(tmp_path, root_real: bool) -> None:
    """By '..', an absolute path, a symlinked file or a symlinked folder on the way; a
    symlink that stays inside, and a root reached through a symlink, are read."""
    from indexer.files import SkipFile

    (tmp_path / "real/a").mkdir(parents=True)
    (tmp_path / "real/a/r.md").write_text("inside")
    (tmp_path / "root").symlink_to(tmp_path / "real")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/secret.md").write_text("secret")
    (tmp_path / "real/a/leak.md").symlink_to(tmp_path / "out/secret.md")
    (tmp_path / "real/away").symlink_to(tmp_path / "out")
    (tmp_path / "real/a/alias.md").symlink_to(tmp_path / "real/a/r.md")
    (tmp_path / "real/here").symlink_to(tmp_path / "real/a")
    root = tmp_path / "root"
    resolved = os.path.realpath(root) if root_real else None
    for rel in ("../out/secret.md", str(tmp_path / "out/secret.md"), "a/leak.md", "away/secret.md"):
        with pytest.raises(SkipFile, match="outside the root"):
            read_file(root, rel, 1000, resolved)
    for rel in ("a/r.md", "a/alias.md", "here/r.md", "a/../a/r.md"):
        assert read_file(root, rel, 1000, resolved).text() == "inside"


def test_a_fifo_is_not_read(make_settings, tmp_path) -> None:
    s = make_settings()
    (tmp_path / "reports/a").mkdir(parents=True)
    os.mkfifo(tmp_path / "reports/a/pipe.md")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.skipped == {"not a regular file": 1}


def deny_opening(monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    """Make opening files whose path ends with ``suffix`` fail as a permission error.

    Tests may run as root, which reads any file: making the open fail is the only way.
    """
    real_open = os.open

    def deny(path, flags, *args):
        if str(path).endswith(suffix):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)


def test_an_unreadable_file_is_skipped_and_the_rest_indexed(
    make_settings, write, monkeypatch
) -> None:
    s = make_settings()
    write("reports/a/locked.md", "locked")
    write("reports/a/ok.md", "ok")
    deny_opening(monkeypatch, "locked.md")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.skipped == {"unreadable: Permission denied": 1}
    assert set(indexed_keys(s, ReportsSource())) == {"a/ok.md"}


def test_an_unreadable_file_is_read_again_once_it_can_be(make_settings, write, monkeypatch) -> None:
    # A chmod changes neither mtime nor size: the skip must not be remembered as final.
    s = make_settings()
    write("reports/a/locked.md", "locked")
    with monkeypatch.context() as m:
        deny_opening(m, "locked.md")
        assert Syncer(s, ReportsSource()).reconcile().skipped == {
            "unreadable: Permission denied": 1
        }
    again = Syncer(s, ReportsSource()).reconcile()
    assert (again.added, again.skipped) == (1, {})
    assert set(indexed_keys(s, ReportsSource())) == {"a/locked.md"}


def test_a_source_folder_that_cannot_be_listed_leaves_the_index_as_it_was(
    make_settings, write, tmp_path, monkeypatch
) -> None:
    s = make_settings()
    write("reports/a/r.md", "kept")
    Syncer(s, ReportsSource()).reconcile()
    real_scandir = os.scandir
    root = str(tmp_path / "reports")

    def deny(path="."):
        if str(path) == root:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", deny)
    with pytest.raises(StoreError, match=f"cannot list {root}: Permission denied"):
        Syncer(s, ReportsSource()).reconcile()
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_rest_indexed(
    make_settings, write, tmp_path
) -> None:
    s = make_settings()
    write("reports/a/ok.md", "fine")
    bad = os.fsencode(tmp_path / "reports/a") + b"/caf\xe9.md"
    with open(bad, "wb") as f:
        f.write(b"latin-1 name")
    syncer = Syncer(s, ReportsSource())
    assert syncer.reconcile().skipped == {"name is not valid UTF-8": 1}
    assert set(indexed_keys(s, ReportsSource())) == {"a/ok.md"}
    # The daemon hands over the same names, decoded as os.fsdecode does, with a new file
    # after them.
    with open(bad.replace(b"caf", b"th\xe9"), "wb") as f:
        f.write(b"another")
    new = {f"a/new{i}.md" for i in range(20)}
    for rel in new:
        write(f"reports/{rel}", "after the bad names")
    summary = syncer.apply(
        [os.fsdecode(b"a/caf\xe9.md"), os.fsdecode(b"a/th\xe9\xe9.md"), *sorted(new)]
    )
    assert summary.skipped == {"name is not valid UTF-8": 2}
    assert set(indexed_keys(s, ReportsSource())) == {"a/ok.md", *new}
    # Their folder handed over: its walk skips them too, and says so.
    summary = syncer.apply(["a"])
    assert summary.skipped == {"name is not valid UTF-8": 2} and summary.unchanged == 21


def test_an_index_folder_that_cannot_be_made_is_a_clear_error(
    make_settings, write, tmp_path
) -> None:
    (tmp_path / "blocker").write_text("a file where the index folder should be")
    s = make_settings(index={"dir": str(tmp_path / "blocker/index")})
    write("reports/a/r.md", "x")
    with pytest.raises(StoreError, match="cannot use the index folder .*set \\[index\\] dir"):
        Syncer(s, ReportsSource()).reconcile()


def test_a_file_that_vanishes_between_listing_and_reading(
    make_settings, write, monkeypatch
) -> None:
    from indexer import store

    s = make_settings()
    gone = [write(f"reports/a/gone{i}.md", "soon gone") for i in range(2)]
    write("reports/a/ok.md", "ok")
    real_walk = store.walk

    def walk_then_delete(root, source, processes=1):
        listing = real_walk(root, source, processes)
        for path in gone:
            path.unlink()
        return listing

    monkeypatch.setattr(store, "walk", walk_then_delete)
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.skipped == {"vanished before it could be read": 2}
    assert set(indexed_keys(s, ReportsSource())) == {"a/ok.md"}


def test_a_foreign_folder_at_the_index_path_is_never_deleted(
    make_settings, write, tmp_path
) -> None:
    s = make_settings()
    write("reports/a/r.md", "x")
    precious = write("index/reports/thesis.tex", "years of work")
    with pytest.raises(ForeignIndexError, match="not a trove index"):
        Syncer(s, ReportsSource()).reconcile()
    assert precious.read_text() == "years of work"
    assert sorted(os.listdir(tmp_path / "index/reports")) == ["thesis.tex"]


def test_a_corrupt_trove_index_is_rebuilt(make_settings, write, tmp_path, caplog) -> None:
    s = make_settings()
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    for f in (tmp_path / "index/reports").iterdir():
        if f.suffix == ".toc":
            f.write_bytes(b"garbage")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}


def test_an_index_missing_a_segment_is_rebuilt_saying_why_with_progress(
    make_settings, write, tmp_path, caplog
) -> None:
    """The table of contents reads, a segment it names is gone: the reconcile fails to
    read it, finds it damaged, says so and rebuilds it, reporting its progress."""
    s = make_settings()
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    write("reports/a/s.md", "y")
    [segment] = (tmp_path / "index/reports").glob("*.seg")
    segment.unlink()
    progress: list[tuple[int, int]] = []
    with caplog.at_level("WARNING", logger="indexer.store"):
        summary = Syncer(s, ReportsSource()).reconcile(
            progress=lambda done, total: progress.append((done, total))
        )
    assert (summary.added, summary.collection) == (2, "reports")
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md", "a/s.md"}
    # The log says which index, why, and what is done.
    [said] = [r.getMessage() for r in caplog.records if "index damaged" in r.getMessage()]
    assert said.startswith(f"{tmp_path / 'index' / 'reports'}: index damaged (")
    assert said.endswith("); rebuilding it from the files")
    assert re.search(r"index damaged \(\w+Error: ", said), said  # why, from the read
    assert progress and progress[-1] == (2, 2)


def test_each_way_into_the_store_sums_up_its_collection_and_its_time(
    make_settings, write, tmp_path, caplog
) -> None:
    """reconcile, apply, rebuild and compact (the daemon's and the CLI's ways in) each
    name their collection and take no longer than the call did."""
    s = make_settings()
    write("reports/a/r.md", "x")
    syncer = Syncer(s, ReportsSource())

    def timed(call: Any) -> Any:
        started = time.perf_counter()
        summary = call()
        took = time.perf_counter() - started
        assert summary.collection == "reports"
        assert 0 < summary.seconds <= took
        return summary

    assert timed(syncer.reconcile).added == 1
    write("reports/a/s.md", "y")
    assert timed(lambda: syncer.apply(["a/s.md"])).added == 1
    with caplog.at_level("WARNING", logger="indexer.store"):
        assert timed(lambda: syncer.rebuild("a test")).added == 2
    assert [r.getMessage() for r in caplog.records] == [
        f"{syncer.index.path}: index damaged (a test); rebuilding it from the files"
    ]
    shutil.rmtree(tmp_path / "index")
    assert timed(lambda: syncer.apply(["a/s.md"])).added == 2  # no index yet: built
    for f in (tmp_path / "index/reports").iterdir():
        if f.suffix == ".toc":
            f.write_bytes(b"garbage")
    write("reports/a/t.md", "z")
    assert timed(lambda: syncer.apply(["a/t.md"])).added == 3  # unreadable: built anew
    for segment in (tmp_path / "index/reports").glob("*.seg"):
        segment.unlink()
    write("reports/a/u.md", "w")
    assert timed(lambda: syncer.apply(["a/u.md"])).added == 4  # a segment gone: rebuilt


def test_derived_data_that_cannot_be_written_is_logged_and_the_reconcile_stands(
    make_settings, write, tmp_path, caplog
) -> None:
    """A fragment tops file that cannot be written in place (a folder of its name): the
    reconcile commits, says which index and why, and searches go without it."""
    s = make_settings()
    write("reports/a/r.md", "proxy timeout")
    Syncer(s, ReportsSource()).reconcile()
    [tops] = (tmp_path / "index/reports").glob("trove-tops-*")
    tops.unlink()
    tops.mkdir()
    write("reports/a/s.md", "proxy again")
    with caplog.at_level("WARNING", logger="indexer.store"):
        summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1 and summary.error == ""
    [said] = [r.getMessage() for r in caplog.records if "derived data" in r.getMessage()]
    assert said.startswith(f"{tmp_path / 'index' / 'reports'}: could not write derived data anew:")
    assert "Is a directory" in said
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md", "a/s.md"}
    tops.rmdir()
    Syncer(s, ReportsSource()).reconcile()
    assert tops.is_file()  # written once it can be


def test_a_build_killed_as_it_wrote_its_marker_is_built(make_settings, write, tmp_path) -> None:
    """What a process killed between writing the marker and renaming it into place
    leaves: the lock and the marker's temporary file, and no marker (found by a kill -9
    test under load: the folder was taken for a foreign one)."""
    s = make_settings()
    write("reports/a/r.md", "x")
    index = CollectionIndex(s.index_dir, ReportsSource())
    with index.locked():
        (index.path / "trove-index.json.tmp").write_text('{"format": "trove-in')
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1 and summary.error == ""
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}
    assert not (index.path / "trove-index.json.tmp").exists()


def test_a_build_killed_before_its_first_commit_is_rebuilt(make_settings, write, tmp_path) -> None:
    # What a process killed right after claiming the folder leaves: the marker and the lock.
    s = make_settings()
    write("reports/a/r.md", "x")
    index = CollectionIndex(s.index_dir, ReportsSource())
    with index.locked():
        index.write_marker(last_update=None)
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}


def test_another_schema_version_is_rebuilt_never_misread(make_settings, write, tmp_path) -> None:
    s = make_settings()
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    marker = tmp_path / "index/reports/trove-index.json"
    data = json.loads(marker.read_text())
    data["schema_version"] = 0
    marker.write_text(json.dumps(data))
    assert CollectionIndex(s.index_dir, ReportsSource()).open() is None
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 1
    assert json.loads(marker.read_text())["schema_version"] == ReportsSource.schema_version


def test_a_second_writer_waits_then_names_the_holder(make_settings, write, tmp_path) -> None:
    s = make_settings(index={"lock_timeout_s": 0.3})
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from indexer.config import settings_from_dict
            from indexer.sources.reports import ReportsSource
            from indexer.store import CollectionIndex
            ix = CollectionIndex({str(s.index_dir)!r}, ReportsSource())
            with ix.locked():
                print("locked", flush=True)
                sys.stdin.readline()
        """),
            b"caf\xe9",  # an argument that is not UTF-8 (Latin-1 here)
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(IndexLockedError) as info:
            Syncer(s, ReportsSource()).reconcile()
        # Named by its pid and its command line (this test's: python -c ...).
        assert f"pid {holder.pid} ({sys.executable} -c " in str(info.value)
        assert str(info.value).count("caf\N{REPLACEMENT CHARACTER})") == 1
        assert "waited 0.3 s" in str(info.value)
        # A lock file without the command line (an older trove's), or unreadable.
        lock = s.index_dir / "reports" / LOCK_FILE
        for content, named in (
            (f'{{"pid": {holder.pid}}}', f"pid {holder.pid} (?)"),
            ("", "another process"),
        ):
            lock.write_text(content)
            with pytest.raises(IndexLockedError) as info:
                Syncer(s, ReportsSource()).reconcile()
            assert f"being written by {named}; waited" in str(info.value)
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
        holder.stdout.close()
    assert Syncer(s, ReportsSource()).reconcile().unchanged == 1


def test_a_writer_whose_command_line_cannot_be_read_is_named_by_its_pid(
    make_settings, write, monkeypatch
) -> None:
    """/proc unreadable (a fault no test can make: put there): the lock names the pid
    and "?" for the command line."""
    import builtins

    _, index = one_report_indexed(make_settings, write)
    real_open = builtins.open

    def no_proc(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith("/proc/"):
            raise PermissionError(13, "Permission denied", file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_proc)
    with index.locked():
        held = json.loads((index.path / LOCK_FILE).read_text())
    assert (held["pid"], held["argv"]) == (os.getpid(), "?")


def test_apply_rechecks_only_the_given_paths(make_settings, write, tmp_path) -> None:
    s = make_settings()
    write("commands/a.md", "---\ntitle: A\n---\nalpha")
    write("commands/b.md", "---\ntitle: B\n---\nbeta")
    Syncer(s, CommandsSource()).reconcile()
    write("commands/a.md", "---\ntitle: A2\n---\nalpha two")
    write("commands/c.md", "gamma")
    (tmp_path / "commands/b.md").unlink()
    applied = Syncer(s, CommandsSource()).apply(["a.md", "b.md"])
    assert (applied.added, applied.updated, applied.deleted) == (0, 1, 1)
    assert set(indexed_keys(s, CommandsSource())) == {"a.md"}
    assert Syncer(s, CommandsSource()).apply(["c.md", "notes.txt"]).added == 1


def test_apply_on_a_folder_rewalks_it_and_drops_what_went_away(
    make_settings, write, tmp_path
) -> None:
    import shutil

    s = make_settings()
    write("reports/a/r1.md", "one")
    write("reports/a/r2.md", "two")
    write("reports/b/r3.md", "three")
    Syncer(s, ReportsSource()).reconcile()
    shutil.rmtree(tmp_path / "reports/a")
    write("reports/c/r4.md", "four")
    assert Syncer(s, ReportsSource()).apply(["a"]).deleted == 2
    assert Syncer(s, ReportsSource()).apply(["c"]).added == 1
    assert set(indexed_keys(s, ReportsSource())) == {"b/r3.md", "c/r4.md"}


def test_reindex_rejects_an_unknown_collection(make_settings) -> None:
    with pytest.raises(ValueError, match="unknown collection nope"):
        reindex(make_settings(), ["nope"])


def segment_sizes(settings, source) -> list[tuple[int, int]]:
    """(documents, deleted documents) of each segment of the index."""
    return lookups.segment_sizes(settings, source.name)


def test_compaction_reindexes_small_segments_into_one_and_keeps_every_document(
    make_settings, write
) -> None:
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    for i in range(6):
        write(f"reports/a/r{i}.md", f"report {i} word{i}")
        syncer.apply([f"a/r{i}.md"])
    # One segment a batch: the report and its file record.
    assert segment_sizes(s, ReportsSource()) == [(2, 0)] * 6
    before = indexed_keys(s, ReportsSource())

    assert syncer.compact() is True
    assert segment_sizes(s, ReportsSource()) == [(12, 0)]
    assert indexed_keys(s, ReportsSource()) == before
    assert content_hits(s, ReportsSource(), "word3") == {"a/r3.md"}
    assert syncer.compact() is False  # nothing left to do
    assert syncer.reconcile().unchanged == 6


def four_batches(make_settings: Any, write: Any) -> tuple[Settings, Syncer]:
    """Four reports, each applied in a batch of its own: four small segments."""
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    for i in range(4):
        write(f"reports/a/r{i}.md", f"report {i}")
        syncer.apply([f"a/r{i}.md"])
    return s, syncer


def test_compaction_that_changes_nothing_keeps_the_time_of_the_last_update(
    make_settings, write
) -> None:
    """Re-indexing the same documents is no update: the marker keeps its time (what
    status shows as the index's last change)."""
    _, syncer = four_batches(make_settings, write)
    marker = syncer.index.read_marker()
    assert marker is not None
    assert syncer.compact() is True
    assert syncer.index.read_marker() == marker


def test_compaction_drops_the_record_of_a_skipped_file_gone_meanwhile(
    make_settings, write, tmp_path
) -> None:
    s, syncer = four_batches(make_settings, write)
    write("reports/a/blob.md", b"\x00binary")
    assert syncer.apply(["a/blob.md"]).skipped == {"binary file": 1}
    (tmp_path / "reports/a/blob.md").unlink()
    assert syncer.compact() is True
    index = syncer.index.open()
    assert index is not None
    assert index.file_stats().skipped == set()
    assert segment_sizes(s, ReportsSource()) == [(8, 0)]


def test_compacting_an_index_marked_damaged_leaves_it_to_the_rebuild(make_settings, write) -> None:
    """The index was marked damaged after compaction found work to do (a search found
    the damage): compaction makes the new empty index, says no build is running, and
    leaves the rebuild to the next reconcile."""
    from indexer.building import read_build

    _, syncer = four_batches(make_settings, write)
    syncer.index.write_marker(damaged=True)
    assert syncer.compact() is False
    assert read_build(syncer.index.path) is None
    assert syncer.reconcile().added == 4


def test_compaction_brings_a_file_changed_meanwhile_up_to_date(
    make_settings, write, tmp_path
) -> None:
    s, syncer = four_batches(make_settings, write)
    write("reports/a/r1.md", "rewritten while nobody watched")
    (tmp_path / "reports/a/r2.md").unlink()
    assert syncer.compact() is True
    assert set(indexed_keys(s, ReportsSource())) == {"a/r0.md", "a/r1.md", "a/r3.md"}
    assert content_hits(s, ReportsSource(), "rewritten") == {"a/r1.md"}
    assert sum(live - deleted for live, deleted in segment_sizes(s, ReportsSource())) == 6


def test_a_segment_whose_documents_are_all_deleted_is_dropped(
    make_settings, write, tmp_path
) -> None:
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    write("reports/keep/k.md", "kept")
    syncer.reconcile()
    for i in range(3):
        write(f"reports/gone/g{i}.md", f"gone {i}")
    syncer.apply(["gone"])
    assert len(segment_sizes(s, ReportsSource())) == 2
    for i in range(3):
        (tmp_path / f"reports/gone/g{i}.md").unlink()
    (tmp_path / "reports/gone").rmdir()
    syncer.apply(["gone"])
    assert segment_sizes(s, ReportsSource()) == [(2, 0)]
    assert set(indexed_keys(s, ReportsSource())) == {"keep/k.md"}


def test_compaction_that_finds_a_change_says_so_and_notes_the_update(
    make_settings, write, tmp_path, caplog
) -> None:
    _, syncer = four_batches(make_settings, write)
    marker = syncer.index.read_marker()
    assert marker is not None
    before = marker["last_update"]
    write("reports/a/r1.md", "rewritten while nobody watched")
    with caplog.at_level("INFO", logger="indexer.store"):
        assert syncer.compact() is True
    [said] = [r.getMessage() for r in caplog.records if "compacting" in r.getMessage()]
    assert said.startswith("reports: compacting also found {'collection': 'reports',")
    assert "'updated': 1," in said
    marker = syncer.index.read_marker()
    assert marker is not None and marker["last_update"] > before


def test_compaction_told_to_wait_waits_for_another_writer(make_settings, write) -> None:
    """Another writer holds the index as compaction asks for it: compaction waits (does
    not give up or fail) until it lets go."""
    s, syncer = four_batches(make_settings, write)
    asked, done = threading.Event(), threading.Event()
    locked = syncer.index.locked

    def asking(timeout: float | None = None) -> Any:
        asked.set()
        return locked(timeout)

    compacted: list[bool | BaseException] = []

    def compaction() -> None:
        try:
            compacted.append(syncer.compact(wait=True))
        except BaseException as exc:  # noqa: BLE001 (what the test looks at)
            compacted.append(exc)
        done.set()

    with locked():
        syncer.index.locked = asking  # type: ignore[method-assign,assignment]
        other = threading.Thread(target=compaction)
        other.start()
        assert asked.wait(DAEMON_TIMEOUT)
        assert not done.wait(0.5)  # still waiting for the lock
    assert done.wait(DAEMON_TIMEOUT)
    other.join(DAEMON_TIMEOUT)
    assert compacted == [True]
    assert len(segment_sizes(s, ReportsSource())) == 1


def test_a_build_says_it_is_writing_once_every_file_is_read(
    make_settings, write, monkeypatch
) -> None:
    """What `trove status` shows of a build: reading (with counts), then writing."""
    from indexer import building

    phases: list[tuple[str, int, int]] = []
    original = building.BuildRecorder._write

    def recorded(self: Any, phase: str, done: int, total: int) -> None:
        phases.append((phase, done, total))
        original(self, phase, done, total)

    monkeypatch.setattr(building.BuildRecorder, "_write", recorded)
    s = make_settings()
    for i in range(3):
        write(f"reports/a/r{i}.md", f"report {i}")
    Syncer(s, ReportsSource()).reconcile()
    assert phases[-2:] == [("reading", 3, 3), ("writing", 3, 3)]


@pytest.mark.parametrize("parallel", [False, True])
def test_a_reconcile_of_many_changes_brings_every_document_up_to_date(
    make_settings, write, tmp_path, monkeypatch, parallel
) -> None:
    """Updates, deletions and additions, past the count a build is written in writer
    processes from (only a build streams its documents to them)."""
    from indexer import store

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 1)
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    syncer.parallel = parallel
    for i in range(12):
        write(f"reports/a/r{i}.md", f"report {i} before")
    write("reports/a/bin.md", b"\x00binary")
    syncer.reconcile()
    for i in range(4):
        write(f"reports/a/r{i}.md", f"report {i} after")
    for i in range(4, 7):
        (tmp_path / f"reports/a/r{i}.md").unlink()
    (tmp_path / "reports/a/bin.md").unlink()  # skipped, and now gone
    write("reports/b/new.md", "a new report after")
    summary = syncer.reconcile()
    assert (summary.added, summary.updated, summary.deleted) == (1, 4, 3)
    want = {f"a/r{i}.md" for i in (0, 1, 2, 3, 7, 8, 9, 10, 11)} | {"b/new.md"}
    assert set(indexed_keys(s, ReportsSource())) == want
    assert content_hits(s, ReportsSource(), "after") == {
        *(f"a/r{i}.md" for i in range(4)),
        "b/new.md",
    }
    assert content_hits(s, ReportsSource(), "before") == want - content_hits(
        s, ReportsSource(), "after"
    )
    index = syncer.index.open()
    assert index is not None
    assert set(index.file_stats().files) == want  # the skipped file's record went too


def test_a_skipped_file_deleted_loses_its_record(make_settings, write, tmp_path) -> None:
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    write("reports/a/r.md", "a report")
    write("reports/a/bin.md", b"\x00binary")
    assert syncer.reconcile().skipped == {"binary file": 1}
    (tmp_path / "reports/a/bin.md").unlink()
    syncer.reconcile()
    index = syncer.index.open()
    assert index is not None
    stats = index.file_stats()
    assert set(stats.files) == {"a/r.md"} and not stats.skipped


def test_compaction_gives_way_to_another_writer(make_settings, write) -> None:
    s, syncer = four_batches(make_settings, write)
    with syncer.index.locked():
        assert syncer.compact() is False
    assert len(segment_sizes(s, ReportsSource())) == 4
    assert syncer.compact() is True


def test_a_big_batch_is_applied_as_one_reconcile(make_settings, write, monkeypatch) -> None:
    from indexer import store

    monkeypatch.setattr(store, "APPLY_MAX_PATHS", 5)
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    write("reports/old/o.md", "old")
    syncer.reconcile()
    rels = [f"new/n{i}.md" for i in range(8)]
    for rel in rels:
        write(f"reports/{rel}", f"new {rel}")
    summary = syncer.apply(rels)
    # A reconcile: it also counts the files the batch did not name.
    assert (summary.added, summary.unchanged) == (8, 1)
    assert set(indexed_keys(s, ReportsSource())) == {"old/o.md", *rels}


def test_a_parallel_build_whose_workers_fill_their_memory_writes_more_segments_and_loses_nothing(
    make_settings, write, monkeypatch
) -> None:
    from indexer import store
    from indexer.engine.whoosh import inverting, writing
    from indexer.engine.whoosh.reading import WhooshSegment

    def small_workers(self, codec, parallel, cpus):
        assert parallel
        return inverting.TroveMpWriter(
            self.native, procs=2, limitmb=1, multisegment=True, codec=codec
        )

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    monkeypatch.setattr(writing.WhooshIndex, "_writer", small_workers)
    s = make_settings()
    for i in range(600):
        words = " ".join(f"w{(i * 7 + j) % 900}" for j in range(120))
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i} {words}")
    summary = Syncer(s, ReportsSource()).reconcile()
    assert summary.added == 600
    index = CollectionIndex(s.index_dir, ReportsSource()).open()
    assert index is not None and len(index.segments()) > 2  # a worker ended a segment early
    assert len(indexed_keys(s, ReportsSource())) == 600
    assert len(content_hits(s, ReportsSource(), "common")) == 600
    assert content_hits(s, ReportsSource(), "unique577") == {"c1/r577.md"}
    # The file records are in the parent's segment, not the workers': each file's state
    # is found all the same.
    recorded = lookups.file_states(s, "reports")
    assert len(recorded) == 600
    indexes = Indexes(s)
    try:
        with indexes.snapshot("reports") as snap:
            assert snap is not None
            segments = [segment for segment, _ in snap.segments()]
            assert all(isinstance(segment, WhooshSegment) for segment in segments)
            assert any(cast(WhooshSegment, s).file_records() == 0 for s in segments)
            assert {rel: snap.file_state(rel) for rel in recorded} == recorded
    finally:
        indexes.close()


def test_a_parallel_builds_worker_frees_each_segments_postings_before_the_next(
    make_settings, write, monkeypatch
) -> None:
    """A worker ends a segment when its postings fill its memory: the writer of the
    segment it ended must be gone (its postings with it) when the next one starts, or
    the worker's memory grows with every segment it writes."""
    import weakref

    from indexer import store
    from indexer.engine.whoosh import inverting, writing

    def small_workers(self, codec, parallel, cpus):
        return inverting.TroveMpWriter(
            self.native, procs=2, limitmb=1, multisegment=True, codec=codec
        )

    made: list[weakref.ref[inverting.TroveSegmentWriter]] = []
    init = inverting.TroveSegmentWriter.__init__

    def minding_the_last(self, *args, **kwargs):
        if any(writer() is not None for writer in made):
            os._exit(5)  # in the worker: a writer of an ended segment is still held
        init(self, *args, **kwargs)
        made.append(weakref.ref(self))

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    monkeypatch.setattr(writing.WhooshIndex, "_writer", small_workers)
    monkeypatch.setattr(inverting.TroveSegmentWriter, "__init__", minding_the_last)
    s = make_settings()
    for i in range(600):
        words = " ".join(f"w{(i * 7 + j) % 900}" for j in range(120))
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i} {words}")
    assert Syncer(s, ReportsSource()).reconcile().added == 600
    index = CollectionIndex(s.index_dir, ReportsSource()).open()
    assert index is not None and len(index.segments()) > 3  # workers started new writers


def test_a_parallel_build_fails_when_a_worker_dies_and_the_index_keeps_what_it_had(
    make_settings, write, monkeypatch
) -> None:
    from whoosh.writing import IndexingError  # noqa: TID251 (the engine's own error)

    from indexer import store
    from indexer.engine.whoosh import inverting

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    s = make_settings()
    write("reports/c0/first.md", "common before")
    Syncer(s, ReportsSource()).reconcile()
    for i in range(120):
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i}")
    add_document = inverting.TroveSegmentWriter.add_document

    def dies_on_r77(self, **fields):
        if fields.get("key") == "c1/r77.md":
            os._exit(3)  # a worker process killed mid-build (forked: only the worker)
        add_document(self, **fields)

    monkeypatch.setattr(inverting.TroveSegmentWriter, "add_document", dies_on_r77)
    with pytest.raises(IndexingError, match=r"ended without their segments \(exit codes .*3"):
        Syncer(s, ReportsSource()).reconcile()
    assert set(indexed_keys(s, ReportsSource())) == {"c0/first.md"}
    monkeypatch.setattr(inverting.TroveSegmentWriter, "add_document", add_document)
    assert Syncer(s, ReportsSource()).reconcile().added == 120


def test_a_parallel_build_whose_workers_die_early_fails_rather_than_waiting_for_them(
    make_settings, write, monkeypatch, caplog
) -> None:
    """More job files than the workers' queue holds: with every worker gone, the build
    must not wait forever for room in it; the index it began, empty, is not damaged."""
    from whoosh.writing import IndexingError  # noqa: TID251 (the engine's own error)

    from indexer import store
    from indexer.engine.whoosh import inverting

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    s = make_settings()
    for i in range(2000):
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i}")

    def dies(self, **fields):
        os._exit(9)  # as the OOM killer would end it

    monkeypatch.setattr(inverting.TroveSegmentWriter, "add_document", dies)
    with pytest.raises(IndexingError, match=r"ended mid-build \(exit codes 9"):
        Syncer(s, ReportsSource()).reconcile()
    assert indexed_keys(s, ReportsSource()) == {}
    assert "damaged" not in caplog.text


def test_a_parallel_build_stopped_while_its_files_are_read_leaves_no_worker_and_no_document(
    make_settings, write, monkeypatch
) -> None:
    import multiprocessing
    import threading

    from indexer import store
    from indexer.errors import Interrupted

    monkeypatch.setattr(store, "PARALLEL_THRESHOLD", 50)
    s = make_settings()
    for i in range(700):
        write(f"reports/c{i % 4}/r{i}.md", f"common unique{i}")
    syncer = Syncer(s, ReportsSource())
    stop = syncer.cancel = threading.Event()
    read: list[int] = []

    def stop_after_the_first_files(done: int, total: int) -> None:
        read.append(done)
        if done >= 200:  # the writers have started on the first files by now
            stop.set()

    with pytest.raises(Interrupted):
        syncer.reconcile(progress=stop_after_the_first_files)
    assert read[-1] < 700  # stopped while reading, not after
    assert not multiprocessing.active_children()
    assert indexed_keys(s, ReportsSource()) == {}
    syncer.cancel = None
    assert Syncer(s, ReportsSource()).reconcile().added == 700


# --------------------------------------------------------------------------- the catch-up
#
# A reconcile compares the walk with the file stats the index reads fast, and reads the
# bookkeeping of the files that differ only. The old way read all of it: with
# CATCH_UP_MAX_SHARE and APPLY_MAX_PATHS below 0 a reconcile still does, and the two must agree exactly.

SEP = "=" * 40


def elog_record(mid: int, body: str) -> str:
    return (
        f"$@MID@$: {mid}\nDate: Wed, 22 May 2024 06:06:38 +0200\nSubject: s{mid}\n{SEP}\n{body}\n"
    )


class Twin:
    """One tree of files written the same way (bytes and mtimes) in two folders, each with
    its own index: ``fast`` reconciled by the catch-up, ``full`` by reading the whole
    bookkeeping."""

    def __init__(self, tmp_path: Path, rng: random.Random) -> None:
        self.rng = rng
        self.roots = {side: tmp_path / side for side in ("fast", "full")}
        self.settings = {
            side: settings_from_dict(
                {
                    "sources": {"reports": str(root / "reports"), "elog": str(root / "elog")},
                    "index": {"dir": str(root / "index")},
                },
                base=root,
            )
            for side, root in self.roots.items()
        }
        self.reports: dict[str, str | bytes] = {}
        self.days: dict[str, dict[int, str]] = {}  # ELOG day file: {id: body}
        self.clock = 1_700_000_000 * 10**9
        self.next_id = 1
        self.denied: set[str] = set()

    # ---- files, the same in both folders

    def put(self, rel: str, data: str | bytes) -> None:
        self.clock += 10**9
        raw = data.encode() if isinstance(data, str) else data
        for root in self.roots.values():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(raw)
            os.utime(path, ns=(self.clock, self.clock))

    def remove(self, rel: str) -> None:
        for root in self.roots.values():
            (root / rel).unlink()

    def put_day(self, name: str) -> None:
        records = self.days[name]
        if records:
            self.put(f"elog/2024/{name}", "".join(elog_record(m, b) for m, b in records.items()))
        else:  # elogd removes a file it emptied
            del self.days[name]
            self.remove(f"elog/2024/{name}")

    def words(self) -> str:
        return " ".join(
            self.rng.choice(["proxy", "token", "beam", "dump", "klystron"]) for _ in range(4)
        )

    # ---- changes

    def add_report(self) -> None:
        rel = f"a/r{self.rng.randrange(1000):03d}_20251101.md"
        self.reports[rel] = self.words()
        self.put(f"reports/{rel}", self.reports[rel])

    def change(self) -> None:
        """One change of a random kind."""
        rng = self.rng
        kind = rng.choice(
            ["add", "edit", "delete", "rename", "touch", "binary", "deny", "entry", "move", "copy"]
        )
        if not self.reports or kind == "add":
            self.add_report()
            return
        rel = rng.choice(sorted(self.reports))
        if kind == "edit":
            self.reports[rel] = f"{self.reports[rel]!s} {self.words()}"
        elif kind == "delete":
            del self.reports[rel]
            self.remove(f"reports/{rel}")
            return
        elif kind == "rename":
            new = f"b/{rel.rsplit('/', 1)[1]}"
            if new in self.reports:
                return
            self.reports[new] = self.reports.pop(rel)
            self.remove(f"reports/{rel}")
            rel = new
        elif kind == "binary":  # and back, if it was binary already
            was = self.reports[rel]
            self.reports[rel] = (
                self.words() if isinstance(was, bytes) else b"\x00\x01" + os.urandom(8)
            )
        elif kind == "deny":  # unreadable, or readable again (permissions change no mtime)
            self.denied ^= {rel}
            return
        elif kind in ("entry", "move", "copy"):
            self.change_elog(kind)
            return
        self.put(f"reports/{rel}", self.reports[rel])  # touch: the same bytes, a new mtime

    def change_elog(self, kind: str) -> None:
        rng = self.rng
        day = f"2405{rng.randrange(10, 16)}a.log"
        records = self.days.setdefault(day, {})
        owners = [(d, m) for d, rs in sorted(self.days.items()) for m in rs]
        if kind == "entry" or not owners:
            records[self.next_id] = self.words()
            self.next_id += 1
            self.put_day(day)
            return
        source, mid = rng.choice(owners)
        if source == day:
            self.days[day][mid] = self.words()  # edited in place
        else:
            records[mid] = self.days[source][mid]
            if kind == "move":  # from one day file to another, both written
                del self.days[source][mid]
                self.put_day(source)
        self.put_day(day)

    # ---- reconciling both, and what their indexes hold

    def reconcile(self, monkeypatch: pytest.MonkeyPatch) -> None:
        with monkeypatch.context() as m:
            for rel in self.denied:
                deny_opening(m, rel)  # in both folders
            results = {}
            for side, share in (("fast", math.inf), ("full", -1.0)):
                m.setattr("indexer.store.CATCH_UP_MAX_SHARE", share)
                m.setattr("indexer.store.APPLY_MAX_PATHS", -1)
                for name in ("reports", "elog"):
                    syncer = Syncer(self.settings[side], get_source(name))
                    syncer.parallel = False
                    summary = syncer.reconcile().as_dict()
                    del summary["seconds"]
                    results[side, name] = summary
        for name in ("reports", "elog"):
            assert results["fast", name] == results["full", name], name
            assert held(self.settings["fast"], name) == held(self.settings["full"], name), name


def held(settings: Settings, name: str) -> tuple[Any, ...]:
    """What an index holds (its bookkeeping: each document's hash covers its fields), and
    a check that its file stats read fast are its file records'."""
    index = CollectionIndex(settings.index_dir, get_source(name)).open()
    if index is None:
        return ()
    files, docs = index.bookkeeping()
    stats = index.file_stats()
    assert stats.files == {rel: (f.mtime_ns, f.size) for rel, f in files.items()}
    assert stats.skipped == {rel for rel, f in files.items() if f.skipped}
    assert stats.documents == sum(map(len, docs.values())) == index.doc_count()
    index.verify()
    return files, docs


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("built", ["fresh", "incrementally"])
def test_the_catch_up_gives_the_index_and_summary_a_full_read_of_the_bookkeeping_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, built: str
) -> None:
    twin = Twin(tmp_path, random.Random(seed))
    for _ in range(12):
        twin.add_report()
        twin.change_elog("entry")
        if built == "incrementally":  # many small segments, deletions, compactions
            twin.change()
            twin.reconcile(monkeypatch)
    twin.reconcile(monkeypatch)
    for _ in range(20):
        for _ in range(twin.rng.randrange(1, 4)):
            twin.change()
        twin.reconcile(monkeypatch)
    twin.reconcile(monkeypatch)  # nothing changed


def test_the_file_stats_are_the_live_file_records(make_settings, write, tmp_path) -> None:
    s = make_settings()
    for i in range(5):
        write(f"reports/a/r{i}.md", f"report {i}")
    write("reports/a/bin.md", b"\x00binary")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    write("reports/a/r1.md", "edited")  # its old record is deleted in the first segment
    (tmp_path / "reports/a/r2.md").unlink()
    syncer.reconcile()
    index = CollectionIndex(s.index_dir, ReportsSource()).open()
    assert index is not None
    stats = index.file_stats()
    on_disk = {
        f"a/{p.name}": (p.stat().st_mtime_ns, p.stat().st_size)
        for p in (tmp_path / "reports/a").iterdir()
    }
    assert stats.files == on_disk and "a/r2.md" not in stats.files
    assert stats.skipped == {"a/bin.md"}
    assert stats.documents == 4 == index.doc_count()
    assert len(segment_sizes(s, ReportsSource())) == 2


def test_a_snapshots_file_state_is_the_live_record_as_files_change(
    make_settings, write, tmp_path
) -> None:
    """Snapshot.file_state reads the fstat column of the segment holding the live record
    and keeps what it looked up: it follows a record replaced in a newer segment, one
    deleted, and a new file."""
    s = make_settings()
    for i in range(3):
        write(f"reports/a/r{i}.md", f"report {i}")
    syncer = Syncer(s, ReportsSource())
    rels = ["a/r0.md", "a/r1.md", "a/r2.md", "a/r3.md", "a/none.md"]

    indexes = Indexes(s)  # one reader, whose segments keep what they looked up

    def seen() -> dict[str, tuple[int, int] | None]:
        with indexes.snapshot("reports") as snap:
            assert snap is not None
            first = {rel: snap.file_state(rel) for rel in rels}
            assert first == {rel: snap.file_state(rel) for rel in rels}  # kept: the same
            return first

    try:
        for change in (
            lambda: None,
            lambda: write("reports/a/r1.md", "edited, and longer"),
            lambda: (tmp_path / "reports/a/r2.md").unlink(),
            lambda: write("reports/a/r3.md", "new"),
        ):
            change()
            syncer.reconcile()
            recorded = lookups.file_states(s, "reports")
            assert seen() == {rel: recorded.get(rel) for rel in rels}
    finally:
        indexes.close()


def test_a_reconcile_with_nothing_changed_reads_no_bookkeeping_and_commits_nothing(
    make_settings, write, monkeypatch
) -> None:
    s = make_settings()
    for i in range(5):
        write(f"reports/a/r{i}.md", f"report {i}")
    write("reports/a/bin.md", b"\x00binary")
    Syncer(s, ReportsSource()).reconcile()
    marker = CollectionIndex(s.index_dir, ReportsSource()).read_marker()
    asked: list[set[str]] = []
    real = WhooshIndex.bookkeeping_of

    def bookkeeping_of(self: WhooshIndex, files: Iterable[str]) -> Any:
        asked.append(set(files))
        return real(self, asked[-1])

    monkeypatch.setattr(WhooshIndex, "bookkeeping", None)  # never read whole
    monkeypatch.setattr(WhooshIndex, "bookkeeping_of", bookkeeping_of)
    summary = Syncer(s, ReportsSource()).reconcile()
    assert (summary.unchanged, summary.skipped, summary.changed) == (5, {"binary file": 1}, False)
    assert asked == [{"a/bin.md"}]  # a file skipped: its reason is read from its record
    assert CollectionIndex(s.index_dir, ReportsSource()).read_marker() == marker


def _flip_stat(settings: Settings, rel: str, at: int) -> None:
    """Damage the file stat of ``rel`` where the segment files hold it: byte ``at`` of it
    (16: the skipped flag, 0: the mtime)."""
    root = settings.source_root("reports")
    assert root is not None
    path = root / rel
    st = path.stat()
    value = pack_stat(rel, st.st_mtime_ns, st.st_size, False)
    for segment in (settings.index_dir / "reports").glob("*.seg"):
        data = segment.read_bytes()
        if data.count(value) == 1:
            i = data.index(value) + at
            segment.write_bytes(data[:i] + bytes([data[i] ^ 0x02]) + data[i + 1 :])
            return
    raise AssertionError(f"no file stat of {rel} found")


@pytest.mark.parametrize("at", [16, 0], ids=["unreadable", "disagrees with its record"])
def test_a_damaged_file_stat_is_damage_and_the_index_is_rebuilt(
    make_settings, write, caplog: pytest.LogCaptureFixture, at: int
) -> None:
    s = make_settings()
    for i in range(3):
        write(f"reports/a/r{i}.md", f"report {i} proxy")
    Syncer(s, ReportsSource()).reconcile()
    _flip_stat(s, "a/r1.md", at)
    summary = Syncer(s, ReportsSource()).reconcile()
    assert "index damaged" in caplog.text
    assert (summary.added, summary.unchanged) == (3, 0)
    assert content_hits(s, ReportsSource(), "proxy") == {"a/r0.md", "a/r1.md", "a/r2.md"}
    assert Syncer(s, ReportsSource()).reconcile().unchanged == 3


def test_file_records_written_without_their_stat_are_damage_and_the_index_is_rebuilt(
    make_settings, write, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    s = make_settings()
    write("reports/a/r0.md", "report proxy")
    with monkeypatch.context() as m:  # a column missing its values
        m.setattr("indexer.engine.whoosh.writing.pack_stat", lambda *args: b"")
        Syncer(s, ReportsSource()).reconcile()
    assert CollectionIndex(s.index_dir, ReportsSource()).damaged() is not None
    summary = Syncer(s, ReportsSource()).reconcile()
    assert "index damaged" in caplog.text and summary.added == 1
    assert CollectionIndex(s.index_dir, ReportsSource()).damaged() is None


# ---- what a reconcile says and keeps of files that change in place (each kind of file
# the store meets: a logbook of several entries, one that cannot be parsed, one that
# becomes binary, one touched, several skipped for one reason)


def test_an_entry_in_two_logbook_files_is_indexed_once_and_counted_once_as_added(
    make_settings, write
) -> None:
    """A logbook file copied by hand holds an entry of another: one document, counted once
    as added (the second file's copy updates it)."""
    s = make_settings()
    write("elog/2024/240522a.log", elog_record(1, "entry one") + elog_record(7, "entry seven"))
    write("elog/2024/240523a.log", elog_record(7, "entry seven, copied"))
    summary = Syncer(s, get_source("elog")).reconcile()
    assert len(indexed_keys(s, get_source("elog"))) == 2
    assert (summary.added, summary.updated) == (2, 1)


def test_a_file_that_vanishes_before_it_is_read_loses_its_documents_in_the_same_pass(
    make_settings, write, monkeypatch
) -> None:
    """Listed, then gone before it is read (a race no test can time: put there)."""
    from indexer import store

    s = make_settings()
    write("reports/a/stays.md", "stays")
    write("reports/a/goes.md", "goes")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    write("reports/a/goes.md", "edited, then deleted as it is read")
    read = store.read_file

    def vanishing(root: Path, rel: str, *args: Any) -> Any:
        if rel == "a/goes.md":
            raise FileNotFoundError(2, "No such file or directory", rel)
        return read(root, rel, *args)

    monkeypatch.setattr(store, "read_file", vanishing)
    summary = syncer.reconcile()
    assert summary.skipped == {"vanished before it could be read": 1}
    assert summary.deleted == 1
    assert set(indexed_keys(s, ReportsSource())) == {"a/stays.md"}


def test_a_document_s_hash_stays_what_earlier_troves_recorded() -> None:
    """An index records each document's hash to tell an unchanged document; a hash that
    changed between versions would re-index every document after an upgrade."""
    from indexer.store import doc_hash

    doc = {"key": "a/r.md", "content": "a report", "date": 20251101}
    assert doc_hash(doc) == "eb87268db72c43bbeed73e811a31f197"


def test_one_entry_edited_in_a_logbook_is_one_update_and_the_others_stay(
    make_settings, write
) -> None:
    s = make_settings()
    syncer = Syncer(s, get_source("elog"))
    bodies = {1: "entry one", 2: "entry two", 3: "entry three"}

    def logbook() -> None:
        write("elog/2024/240522a.log", "".join(elog_record(m, b) for m, b in bodies.items()))

    logbook()
    assert syncer.reconcile().added == 3
    bodies[2] = "entry two, edited"
    logbook()
    summary = syncer.reconcile()
    assert (summary.added, summary.updated, summary.deleted, summary.unchanged) == (0, 1, 0, 2)
    bodies[3] = "entry three, edited"  # the entry edited before is as the index holds it
    logbook()
    summary = syncer.reconcile()
    assert (summary.added, summary.updated, summary.deleted, summary.unchanged) == (0, 1, 0, 2)
    assert syncer.reconcile().unchanged == 3


def test_a_file_that_cannot_be_parsed_is_skipped_logged_and_loses_what_it_held(
    make_settings, write, monkeypatch, caplog
) -> None:
    """A parser that fails (a fault no report makes; the parser's own tests own its
    inputs): that file is skipped with the reason, the others are indexed, its old
    documents go, and once it parses again it is indexed."""
    s = make_settings()
    write("reports/a/good.md", "a good report")
    write("reports/a/bad.md", "parsed well at first")
    write("reports/a/worse.md", "fine too")
    syncer = Syncer(s, ReportsSource())
    assert syncer.reconcile().added == 3
    parse = ReportsSource.parse

    def failing(self: Any, file: Any) -> Any:
        if "FAIL" in file.text():
            raise ValueError("a parser's bug")
        return parse(self, file)

    monkeypatch.setattr(ReportsSource, "parse", failing)
    write("reports/a/bad.md", "now it makes the parser FAIL")
    write("reports/a/worse.md", "and this one FAIL too")
    with caplog.at_level("ERROR", logger="indexer.store"):
        summary = syncer.reconcile()
    assert summary.skipped == {"cannot parse: ValueError": 2}
    assert summary.deleted == 2
    assert set(indexed_keys(s, ReportsSource())) == {"a/good.md"}
    assert sorted(r.getMessage() for r in caplog.records) == [
        "a/bad.md: cannot parse",
        "a/worse.md: cannot parse",
    ]
    # Recorded as such: the next reconcile does not read them again (nor logs them).
    caplog.clear()
    with caplog.at_level("ERROR", logger="indexer.store"):
        assert syncer.reconcile().skipped == {"cannot parse: ValueError": 2}
    assert caplog.records == []
    index = syncer.index.open()
    assert index is not None
    assert index.file_stats().skipped == {"a/bad.md", "a/worse.md"}
    write("reports/a/bad.md", "parsed well again")
    assert syncer.reconcile().added == 1
    assert content_hits(s, ReportsSource(), "again") == {"a/bad.md"}


def test_a_report_that_becomes_binary_loses_its_document(make_settings, write) -> None:
    s = make_settings()
    write("reports/a/r.md", "words to forget")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    write("reports/a/r.md", b"\x00now binary")
    summary = syncer.reconcile()
    assert summary.skipped == {"binary file": 1} and summary.deleted == 1
    assert indexed_keys(s, ReportsSource()) == {}


def test_files_skipped_for_one_reason_are_each_counted(make_settings, write) -> None:
    s = make_settings()
    for name in ("x", "y", "z"):
        write(f"reports/a/{name}.md", b"\x00binary")
    syncer = Syncer(s, ReportsSource())
    assert syncer.reconcile().skipped == {"binary file": 3}
    assert syncer.reconcile().skipped == {"binary file": 3}  # unchanged since: counted again


def test_a_touched_file_is_read_once_and_its_new_time_kept(make_settings, write, tmp_path) -> None:
    """The same bytes with a new mtime, a report and an empty one: nothing changes, and
    the next reconcile finds the files as recorded."""
    s = make_settings()
    write("reports/a/r.md", "unchanged words")
    write("reports/a/empty.md", "")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    for name in ("r", "empty"):
        path = tmp_path / f"reports/a/{name}.md"
        os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    summary = syncer.reconcile()  # (an empty report is a document too)
    assert (summary.added, summary.updated, summary.deleted, summary.unchanged) == (0, 0, 0, 2)
    index = syncer.index.open()
    assert index is not None
    stats = index.file_stats()
    for name in ("r", "empty"):
        path = tmp_path / f"reports/a/{name}.md"
        assert stats.files[f"a/{name}.md"] == (path.stat().st_mtime_ns, path.stat().st_size)


def test_a_touched_logbook_of_no_entries_is_nothing_to_do(make_settings, write, tmp_path) -> None:
    """A file that yields no document, touched (the same bytes, a new mtime)."""
    s = make_settings()
    write("elog/2024/240522a.log", elog_record(1, "one entry"))
    write("elog/2024/240523a.log", "")
    syncer = Syncer(s, get_source("elog"))
    assert syncer.reconcile().added == 1
    path = tmp_path / "elog/2024/240523a.log"
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    summary = syncer.reconcile()
    assert (summary.added, summary.updated, summary.deleted, summary.unchanged) == (0, 0, 0, 1)


def test_a_batch_indexes_only_what_the_collection_takes(make_settings, write) -> None:
    """Hidden files and folders, and files outside a command folder, named by a batch."""
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    names = ["a/r.md", ".hidden/h.md", "a/.h.md", "top.md", "a/deeper/d.md", "a/notes.txt"]
    for rel in names:
        write(f"reports/{rel}", "a batch")
    summary = syncer.apply(names)
    assert summary.added == 1
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}


def test_a_batch_over_a_missing_root_and_a_folder_gone(make_settings, write, tmp_path) -> None:
    s = make_settings()
    write("reports/a/r.md", "kept")
    write("reports/b/x.md", "in a folder that goes")
    write("reports/b/y.md", "in it too")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    shutil.rmtree(tmp_path / "reports/b")
    assert syncer.apply(["b"]).deleted == 2
    assert set(indexed_keys(s, ReportsSource())) == {"a/r.md"}
    shutil.rmtree(tmp_path / "reports")
    summary = syncer.apply(["a/r.md"])
    assert summary.deleted == 1
    assert indexed_keys(s, ReportsSource()) == {}


def test_batches_that_leave_many_segments_are_compacted_as_they_come(
    make_settings, write, monkeypatch
) -> None:
    from indexer import store

    monkeypatch.setattr(store, "BUSY_MAX_SEGMENTS", 3)
    s = make_settings()
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    for i in range(6):
        write(f"reports/a/r{i}.md", f"report {i}")
        syncer.apply([f"a/r{i}.md"])
        assert len(segment_sizes(s, ReportsSource())) <= 3
    assert set(indexed_keys(s, ReportsSource())) == {f"a/r{i}.md" for i in range(6)}


def test_a_full_reconcile_of_no_files_empties_the_index(make_settings, write, tmp_path) -> None:
    s = make_settings()
    write("reports/a/r.md", "gone soon")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    (tmp_path / "reports/a/r.md").unlink()
    syncer.reconcile(full=True)
    assert indexed_keys(s, ReportsSource()) == {}


def test_each_commit_notes_when_it_was_made(make_settings, write) -> None:
    """The marker's last update: what freshness says of an answer."""
    s = make_settings()
    write("reports/a/r.md", "x")
    syncer = Syncer(s, ReportsSource())
    for change in (syncer.reconcile, lambda: syncer.apply(["a/r.md"])):
        write("reports/a/r.md", f"changed {change}")
        started = time.time()
        change()
        marker = syncer.index.read_marker()
        assert marker is not None and started <= marker["last_update"] <= time.time()


def test_a_stopped_reconcile_says_which_collection(make_settings, write) -> None:
    from indexer.errors import Interrupted

    s = make_settings()
    write("reports/a/r.md", "x")
    syncer = Syncer(s, ReportsSource())
    syncer.cancel = threading.Event()
    syncer.cancel.set()
    with pytest.raises(Interrupted, match="^reports: stopped before committing$"):
        syncer.reconcile()


def test_a_reconcile_of_an_index_reports_its_progress(make_settings, write) -> None:
    """`trove reindex` of an index already built shows the files it reads."""
    s = make_settings()
    write("reports/a/r.md", "x")
    syncer = Syncer(s, ReportsSource())
    syncer.reconcile()
    write("reports/a/r.md", "changed")
    write("reports/a/s.md", "new")
    progress: list[tuple[int, int]] = []
    syncer.reconcile(progress=lambda done, total: progress.append((done, total)))
    assert progress and progress[-1] == (2, 2)


def test_damage_is_said_of_an_index_of_this_schema_only(make_settings, write, monkeypatch) -> None:
    """CollectionIndex.damaged: None for a folder never built and for an index of another
    schema (rebuilt as outdated, not as damaged); "marked damaged" where the marker says
    so; else why its own check fails ("Type: message", or the type alone)."""
    s = make_settings()
    index = CollectionIndex(s.index_dir, ReportsSource())
    assert index.damaged() is None and index.doc_count() == 0  # never built
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    assert index.damaged() is None and index.doc_count() == 1
    engine = type(index.engine)

    def failing_open(self, path, fields, scored):  # a read that fails, as damage does
        raise failure

    monkeypatch.setattr(engine, "open", failing_open)
    for failure, said in (
        (ValueError("cut short"), "ValueError: cut short"),
        (EOFError(), "EOFError"),
    ):
        assert index.damaged() == said
    monkeypatch.undo()
    marker = index.read_marker()
    assert marker is not None
    index.write_marker(damaged=True)
    assert index.damaged() == "marked damaged"
    monkeypatch.setattr(ReportsSource, "schema_version", marker["schema_version"] + 1)
    assert index.damaged() is None  # of another schema: outdated, not damaged
    assert index.doc_count() == 0  # (and not opened: it is rebuilt)


def one_report_indexed(
    make_settings: Callable[..., Settings], write: Callable[..., Path], **settings: Any
) -> tuple[Settings, CollectionIndex]:
    """Settings of a reports folder holding one report, its index built, and the index."""
    s = make_settings(**settings)
    write("reports/a/r.md", "x")
    Syncer(s, ReportsSource()).reconcile()
    return s, CollectionIndex(s.index_dir, ReportsSource())


def test_the_marker_names_its_collection_and_a_later_mark_keeps_its_last_update(
    make_settings, write
) -> None:
    _, index = one_report_indexed(make_settings, write)
    marker = index.read_marker()
    assert marker is not None and marker["collection"] == "reports"
    assert isinstance(marker["last_update"], float)
    index.write_marker(damaged=True)
    assert index.read_marker() == {**marker, "damaged": True}


@pytest.mark.parametrize("why", ["schema", "unreadable"])
def test_an_index_rebuilt_by_its_writer_says_why_in_one_line(
    make_settings, write, caplog, why: str
) -> None:
    s, index = one_report_indexed(make_settings, write)
    marker = index.read_marker()
    assert marker is not None
    if why == "schema":
        index.write_marker(schema_version=999)
    else:  # the table of contents gone: the index cannot be opened
        for toc in index.path.glob("*.toc"):
            toc.unlink()
    caplog.set_level("WARNING", logger="indexer.collection")
    assert Syncer(s, ReportsSource()).reconcile().added == 1
    [said] = [r.getMessage() for r in caplog.records if "rebuilding it" in r.getMessage()]
    if why == "schema":
        version = ReportsSource.schema_version
        assert (
            said
            == f"{index.path}: index schema version 999, this trove needs {version}; rebuilding it"
        )
    else:
        # Why, as the engine says it (Whoosh: its table of contents is missing).
        assert re.fullmatch(
            re.escape(f"{index.path}: index unreadable (")
            + r"Index .* does not exist.*\); rebuilding it",
            said,
        ), said


@pytest.mark.parametrize("folder", ["a file", "files, no marker", "another collection's", "format"])
def test_a_folder_that_is_not_this_collections_index_is_refused_saying_what_to_do(
    make_settings, write, folder: str
) -> None:
    """Each way the index folder is not ours: the one message, whole, and nothing changed."""
    s = make_settings()
    write("reports/a/r.md", "x")
    path = s.index_dir / "reports"
    s.index_dir.mkdir(parents=True, exist_ok=True)
    if folder == "a file":
        path.write_text("mine")
        said = (
            f"{path} exists and is not a folder; trove will not touch it. "
            "Move it away or set [index] dir to another folder."
        )
    elif folder == "files, no marker":
        path.mkdir()
        (path / "notes.txt").write_text("mine")
        said = (
            f"{path} holds files but is not a trove index (no trove-index.json); trove will "
            "not delete them. Move it away or set [index] dir to another folder."
        )
    else:
        Syncer(s, ReportsSource()).reconcile()
        index = CollectionIndex(s.index_dir, ReportsSource())
        index.write_marker(**({"collection": "commands"} if folder != "format" else {"format": 0}))
        said = (
            f"{path} is not a trove index of 'reports' (trove-index.json says otherwise); "
            "trove will not touch it."
        )
    before = sorted(p.name for p in path.iterdir()) if path.is_dir() else path.read_text()
    with pytest.raises(ForeignIndexError) as refused:
        Syncer(s, ReportsSource()).reconcile()
    assert str(refused.value) == said
    assert (sorted(p.name for p in path.iterdir()) if path.is_dir() else path.read_text()) == before


@pytest.mark.parametrize("content", ["[1]", '"ours"', "{", "\udcff"])
def test_a_marker_that_is_not_a_json_object_is_damage_and_the_index_is_rebuilt(
    make_settings, write, content: str
) -> None:
    s, index = one_report_indexed(make_settings, write)
    index.marker_path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert index.read_marker() == {"format": MARKER_FORMAT, "damaged": True}
    assert index.open() is None  # (no schema said: not opened)
    assert Syncer(s, ReportsSource()).reconcile().added == 1  # rebuilt from the files
    assert index.damaged() is None and index.doc_count() == 1


def test_a_marker_that_cannot_be_written_is_a_write_fault_and_changes_nothing(
    make_settings, write, small_disk
) -> None:
    """On a read-only index folder (its temporary file cannot even be made): WriteFault,
    saying which file and why, and the folder as it was."""
    _, index = one_report_indexed(make_settings, write, index={"dir": str(small_disk.path)})
    marker = index.marker_path.read_bytes()
    files = sorted(p.name for p in index.path.iterdir())
    small_disk.read_only(True)
    try:
        with pytest.raises(WriteFault) as refused:
            index.write_marker(damaged=True)
    finally:
        small_disk.read_only(False)
    assert str(refused.value) == f"could not write {index.marker_path}: Read-only file system"
    assert index.marker_path.read_bytes() == marker
    assert sorted(p.name for p in index.path.iterdir()) == files
