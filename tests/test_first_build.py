"""A collection's first build: searches, `trove status` and `/health` say it is being built
(n of N) instead of answering as if the index were empty.

A real build is held at its last progress report (the build's own callback blocks on an
event), so the test decides when it ends; nothing is faked about the index or the files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.building import BUILD_FILE, read_build
from indexer.config import Settings
from indexer.sources.reports import ReportsSource
from indexer.status import builds, collection_status
from indexer.store import Summary, Syncer
from query.cli import app
from query.context import QueryContext
from query.errors import TroveError
from query.reports import search_reports

WAIT_S = 20.0
REPORTS = 5


def _write_reports(write: Callable[[str, str], Path]) -> None:
    for i in range(REPORTS):
        write(
            f"reports/triage/report_2025010{i + 1}.md",
            f"# Report {i}\n\nThe gateway dropped packets.\n",
        )


class HeldBuild:
    """A first build of the reports index in a thread, held at its last progress report
    until ``release()``."""

    def __init__(self, settings: Settings) -> None:
        self.syncer = Syncer(settings, ReportsSource())
        self.syncer.parallel = False
        self.reached = threading.Event()
        self.go = threading.Event()
        self.summary: list[Summary] = []
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, name="held-build")

    def _progress(self, done: int, total: int) -> None:
        if done == total:
            self.reached.set()
            assert self.go.wait(WAIT_S), "the test never released the build"

    def _run(self) -> None:
        try:
            self.summary.append(self.syncer.reconcile(progress=self._progress))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def release(self) -> None:
        self.go.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive() and not self.errors, self.errors


@pytest.fixture
def held_build(make_settings, write) -> Iterator[Callable[[], HeldBuild]]:
    builds_started: list[HeldBuild] = []

    def start() -> HeldBuild:
        _write_reports(write)
        build = HeldBuild(make_settings())
        build.thread.start()
        assert build.reached.wait(WAIT_S), build.errors
        builds_started.append(build)
        return build

    yield start
    for build in builds_started:
        build.go.set()
        build.thread.join(WAIT_S)


def test_a_search_during_a_first_build_answers_index_unavailable_with_its_progress(
    make_settings, held_build
) -> None:
    build = held_build()
    ctx = QueryContext.from_settings(make_settings())
    ctx.indexes.build_wait_s = 0.2
    try:
        with pytest.raises(TroveError) as caught:
            search_reports(ctx, "gateway")
        assert caught.value.code == "INDEX_UNAVAILABLE"
        assert f"{REPORTS} of {REPORTS} files read" in caught.value.message
        assert "trove status" in caught.value.message
        build.release()
        # Once built, the same process answers from the index.
        assert len(search_reports(ctx, "gateway").results) == REPORTS
    finally:
        ctx.close()


def test_a_search_waits_for_a_first_build_that_ends_within_its_wait(
    make_settings, held_build
) -> None:
    build = held_build()
    ctx = QueryContext.from_settings(make_settings())
    ctx.indexes.build_wait_s = WAIT_S
    answers: list[int] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            answers.append(len(search_reports(ctx, "gateway").results))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    asking = threading.Thread(target=ask)
    asking.start()
    # The search is not answered while the build is held: it has nothing to answer with.
    asking.join(0.3)
    assert asking.is_alive() and not answers and not errors
    build.release()
    asking.join(WAIT_S)
    ctx.close()
    assert not errors, errors
    assert answers == [REPORTS]  # every report: never the empty index's []


def test_the_build_is_announced_before_its_empty_index_can_be_read(
    make_settings, write, monkeypatch
) -> None:
    """A search at the instant the writer has created the empty index (before it reads a
    file) sees a build, not an empty collection. The instant is caught by wrapping the
    engine's real ``create``: the race is too narrow to hit on purpose."""
    _write_reports(write)
    settings = make_settings()
    syncer = Syncer(settings, ReportsSource())
    syncer.parallel = False
    engine = syncer.index.engine
    real_create = engine.create
    seen: list[str] = []

    def create_then_search(*args, **kwargs):
        index = real_create(*args, **kwargs)
        ctx = QueryContext.from_settings(settings)
        ctx.indexes.build_wait_s = 0.0
        try:
            seen.append(f"{len(search_reports(ctx, 'gateway').results)} hits")
        except TroveError as exc:
            seen.append(exc.code)
        finally:
            ctx.close()
        return index

    monkeypatch.setattr(engine, "create", create_then_search)
    syncer.reconcile()
    assert seen == ["INDEX_UNAVAILABLE"]
    assert read_build(settings.index_dir / "reports") is None


def test_a_build_that_begins_while_a_search_opens_the_index_is_waited_for(
    make_settings, write, held_build, monkeypatch
) -> None:
    """The search looked for a build, found none, and a first build created its empty index
    before the search took its snapshot: the search waits for the build, never answers
    from the empty index."""
    _write_reports(write)
    ctx = QueryContext.from_settings(make_settings())
    ctx.indexes.build_wait_s = WAIT_S
    real_wait = ctx.indexes._wait_for_build
    started: list[HeldBuild] = []
    began = threading.Event()

    def wait_then_build_begins(name: str, deadline: float) -> None:
        real_wait(name, deadline)
        if not started:
            started.append(held_build())  # held with its empty index committed
            began.set()

    monkeypatch.setattr(ctx.indexes, "_wait_for_build", wait_then_build_begins)
    answers: list[int] = []
    asking = threading.Thread(
        target=lambda: answers.append(len(search_reports(ctx, "gateway").results))
    )
    asking.start()
    try:
        assert began.wait(WAIT_S)
        asking.join(0.3)
        assert asking.is_alive() and not answers  # waiting on the build, not answering []
        started[0].release()
        asking.join(WAIT_S)
        assert answers == [REPORTS]
    finally:
        ctx.close()


def test_status_and_its_json_say_indexing_n_of_n_during_a_first_build(
    make_settings, held_build
) -> None:
    settings = make_settings()
    build = held_build()
    status = collection_status(settings, "reports")
    assert not status.built
    assert status.indexing.startswith(f"indexing ({REPORTS} of {REPORTS} files read")
    assert builds(settings)["reports"]["done"] == REPORTS

    config = Path(settings.index_dir).parent / "trove.toml"
    config.write_text(
        f'[sources]\nreports = "{settings.sources.reports}"\n[index]\ndir = "{settings.index_dir}"\n',
        encoding="utf-8",
    )
    shown = CliRunner().invoke(app, ["--config", str(config), "status"])
    assert shown.exit_code == 0, shown.output
    assert "reports: indexing (5 of 5 files read" in shown.output
    as_json = CliRunner().invoke(app, ["--config", str(config), "status", "--json"])
    reports = next(
        c for c in json.loads(as_json.output)["collections"] if c["collection"] == "reports"
    )
    assert reports["indexing"].startswith("indexing (") and reports["built"] is False

    build.release()
    assert collection_status(settings, "reports").indexing == ""
    assert builds(settings) == {}
    assert not (settings.index_dir / "reports" / BUILD_FILE).exists()


def test_health_says_indexing_with_503_until_the_first_build_commits(
    make_settings, held_build
) -> None:
    from starlette.testclient import TestClient

    from indexer.daemon import Daemon
    from query.mcp_server import build_server
    from query.serve import http_app

    settings = make_settings()
    build = held_build()
    daemon = Daemon(settings, ["reports"])  # waits for the held build's lock
    thread = threading.Thread(target=daemon.run, name="test-daemon")
    thread.start()
    server = build_server(settings)
    server.ctx.watcher.local = daemon
    try:
        app_ = http_app(server, "127.0.0.1")
        with TestClient(app_) as client:
            first = client.get("/health")
            assert first.status_code == 503, first.text
            body = first.json()
            assert body["status"] == "indexing"
            assert body["indexing"]["reports"]["message"].startswith("indexing (5 of 5 files read")
            build.release()
            assert daemon.wait_ready(WAIT_S)
            after = client.get("/health")
            assert after.status_code == 200 and after.json()["status"] == "ok"
            assert "indexing" not in after.json()
    finally:
        build.go.set()
        daemon.stop()
        thread.join(WAIT_S)
        server.close()


def test_a_build_file_left_by_a_writer_that_died_is_ignored(make_settings, write) -> None:
    _write_reports(write)
    settings = make_settings()
    Syncer(settings, ReportsSource()).reconcile()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    path = settings.index_dir / "reports"
    (path / BUILD_FILE).write_text(
        json.dumps(
            {"pid": int(dead.stdout), "since": 0, "phase": "reading", "done": 1, "total": 9}
        ),
        encoding="utf-8",
    )
    assert read_build(path) is None
    ctx = QueryContext.from_settings(settings)
    try:
        assert len(search_reports(ctx, "gateway").results) == REPORTS
    finally:
        ctx.close()
    assert collection_status(settings, "reports").indexing == ""


def test_a_failed_first_build_leaves_no_build_file(make_settings, write) -> None:
    _write_reports(write)
    settings = make_settings()
    syncer = Syncer(settings, ReportsSource())

    def fail(done: int, total: int) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError):
        syncer.reconcile(progress=fail)
    assert not (settings.index_dir / "reports" / BUILD_FILE).exists()
    assert builds(settings) == {}


@pytest.mark.parametrize(
    "content", ["{not json", "[]", '{"pid": "me", "since": 0}', "", "\x00\xff"]
)
def test_a_build_file_that_cannot_be_read_says_nothing(make_settings, write, content: str) -> None:
    _write_reports(write)
    settings = make_settings()
    Syncer(settings, ReportsSource()).reconcile()
    path = settings.index_dir / "reports"
    (path / BUILD_FILE).write_text(content, encoding="utf-8", errors="surrogateescape")
    assert read_build(path) is None
    assert collection_status(settings, "reports").indexing == ""
    ctx = QueryContext.from_settings(settings)
    try:
        assert len(search_reports(ctx, "gateway").results) == REPORTS
    finally:
        ctx.close()
