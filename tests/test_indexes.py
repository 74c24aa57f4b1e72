from __future__ import annotations

import subprocess
import sys
import textwrap

from indexer.engine.base import TermClause
from indexer.engine.whoosh.reading import WhooshSnapshot
from indexer.sources.commands import CommandsSource
from indexer.store import Syncer
from query.indexes import Indexes


def names(indexes: Indexes) -> set[str]:
    with indexes.snapshot("commands") as s:
        if s is None:
            return set()
        stored = (d for segment, _ in s.segments() for _, d in segment.live_stored())
        return {d["name"] for d in stored if d["kind"] == "doc"}


def test_an_open_searcher_sees_another_process_commit_on_its_next_query(
    make_settings, write
) -> None:
    settings = make_settings()
    indexes = Indexes(settings)
    assert names(indexes) == set()  # never built: no searcher, no error
    write("commands/a.md", "alpha")
    Syncer(settings, CommandsSource()).reconcile()
    assert names(indexes) == {"a"}

    with indexes.snapshot("commands") as first:
        pass
    generation = indexes.generation("commands")
    assert names(indexes) == {"a"}
    with indexes.snapshot("commands") as same:
        # Nothing committed: the searcher is reused, not reopened.
        assert isinstance(first, WhooshSnapshot) and isinstance(same, WhooshSnapshot)
        assert same.searcher is first.searcher

    write("commands/b.md", "beta")
    code = textwrap.dedent(f"""
        from indexer.config import settings_from_dict
        from indexer.sources.commands import CommandsSource
        from indexer.store import Syncer
        s = settings_from_dict({{"sources": {{"commands": {str(settings.sources.commands)!r}}},
                                "index": {{"dir": {str(settings.index_dir)!r}}}}}, base=__import__("pathlib").Path("/"))
        print(Syncer(s, CommandsSource()).reconcile().added)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.strip() == "1", out.stderr
    assert names(indexes) == {"a", "b"}
    assert indexes.generation("commands") > generation
    indexes.close()


def _read_then_marked_of_another_version(make_settings, write, tmp_path) -> Indexes:
    """Commands indexed and read; then the folder's marker names another schema version
    (as a trove of another version leaves it)."""
    import json

    settings = make_settings()
    write("commands/a.md", "alpha")
    Syncer(settings, CommandsSource()).reconcile()
    indexes = Indexes(settings)
    assert names(indexes) == {"a"}
    marker = tmp_path / "index/commands/trove-index.json"
    data = json.loads(marker.read_text())
    data["schema_version"] += 1
    marker.write_text(json.dumps(data))
    return indexes


def test_a_rebuilt_index_of_a_new_schema_is_reopened(make_settings, write, tmp_path) -> None:
    indexes = _read_then_marked_of_another_version(make_settings, write, tmp_path)
    settings = indexes.settings
    with indexes.snapshot("commands") as before:
        pass
    # The writer finds another version on disk and rebuilds; the reader reopens.
    assert Syncer(settings, CommandsSource()).reconcile().added == 1
    assert names(indexes) == {"a"}
    with indexes.snapshot("commands") as after:
        assert isinstance(before, WhooshSnapshot) and isinstance(after, WhooshSnapshot)
        assert after.searcher is not before.searcher
    with indexes.snapshot("commands") as s:
        assert s is not None
        assert len(s.matching(TermClause("kind", "doc"))) == 1
    indexes.close()


def test_an_index_a_trove_of_another_schema_version_committed_to_is_not_read(
    make_settings, write, tmp_path
) -> None:
    """Another trove rebuilt the folder for its schema and committed: this process reads
    no index there (its fields may differ), rather than refreshing its searcher over it."""
    from indexer.engine.whoosh.storage import open_index

    indexes = _read_then_marked_of_another_version(make_settings, write, tmp_path)
    other = open_index(tmp_path / "index/commands", CommandsSource().fields())
    other.writer().commit()  # a commit of nothing: a new generation all the same
    with indexes.snapshot("commands") as s:
        assert s is None
    indexes.close()
