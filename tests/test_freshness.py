"""Fresh wherever trove answers: `trove mcp` processes started by the real MCP client over
stdio keep their index fresh, share one watcher, hand it over when it is killed, catch up
with what changed while none ran, and say in every answer how fresh it is. Real
processes, real files; every wait is bounded (polling the real tools is the measurement)."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import lookups
import psutil
import pytest
from conftest import SmallDisk, reconcile_processes
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from indexer.config import settings_from_dict, settings_from_file
from indexer.files import walk
from indexer.sources.registry import get_source
from query import freshness

pytestmark = pytest.mark.anyio

START_S = 60  # a process's start-up, on a busy machine
FRESH_S = 10  # a change reaches the answers (the targets are far below: bench/)
COMMAND = "net"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _config(tmp_path: Path, **daemon: object) -> Path:
    for folder in ("reports", "commands", "conversations", "elog"):
        (tmp_path / folder).mkdir(exist_ok=True)
    settings = {"quiet_ms": 50, "max_delay_ms": 300, **daemon}
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in settings.items())
    config = tmp_path / "trove.toml"
    config.write_text(
        '[sources]\nreports = "reports"\ncommands = "commands"\n'
        'conversations = "conversations"\nelog = "elog"\n'
        f'[index]\ndir = "index"\nlock_timeout_s = 60\n[elog]\nrerank = "lexical"\n'
        f"[daemon]\n{lines}\n",
        encoding="utf-8",
    )
    return config


def _report(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "reports" / COMMAND / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Mcp:
    """A `trove mcp` process, started by the real MCP client over stdio."""

    def __init__(self, client: Client, tag: str) -> None:
        self.client = client
        self.tag = tag
        self.pid = _pid_of(tag)

    async def search(self, query: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool("search_reports", {"query": query, **arguments})
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content


def _pid_of(tag: str) -> int:
    """The pid of the trove process started with TROVE_TEST_TAG=tag."""
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.environ().get("TROVE_TEST_TAG") == tag and "mcp" in proc.cmdline():
                return proc.pid
        except psutil.Error:
            continue
    raise AssertionError(f"no trove mcp process tagged {tag}")


@asynccontextmanager
async def mcp(
    config: Path, tag: str, prefix: list[str] | None = None, errlog: TextIO | None = None
) -> AsyncIterator[Mcp]:
    command = [*(prefix or []), sys.executable, "-m", "query.cli", "--config", str(config), "mcp"]
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={
            "HF_HUB_OFFLINE": "1",
            "TROVE_TEST_TAG": tag,
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        },
        cwd=str(config.parent),
    )
    body_done = False
    try:
        async with Client(stdio_client(params, errlog=errlog or sys.stderr)) as client:
            yield Mcp(client, tag)
            body_done = True
    except Exception:
        if not body_done:
            raise
        # The body ended well; a server the test killed ends its client badly: fine.


async def until(check: Callable[[], Awaitable[bool]], timeout: float = FRESH_S) -> float:
    """Ask ``check`` again and again until it holds (bounded); the seconds it took."""
    started = time.monotonic()
    with anyio.fail_after(timeout):
        while not await check():
            await anyio.sleep(0.02)
    return time.monotonic() - started


def _status(config: Path) -> dict[str, Any]:
    try:
        return json.loads((settings_from_file(config).index_dir / "daemon.json").read_bytes())
    except (OSError, ValueError):
        return {}


async def _watching(config: Path, pid: int | None = None) -> dict[str, Any]:
    """The status file once a live watcher (``pid`` if given) has caught up."""

    async def ready() -> bool:
        s = _status(config)
        return s.get("state") == "watching" and (pid is None or s.get("pid") == pid)

    await until(ready, START_S)
    return _status(config)


async def _reindex(config: Path) -> None:
    await anyio.run_process([sys.executable, "-m", "query.cli", "--config", str(config), "reindex"])


def _names(answer: dict[str, Any]) -> list[str]:
    return [r["report_name"] for r in answer["results"]]


# --------------------------------------------------------------------------- one process


async def test_a_report_written_while_trove_mcp_runs_is_found_by_its_next_searches(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    async with mcp(config, "one") as server:
        first = await server.search("okapiunicorn")
        assert first["results"] == []
        watcher = first["freshness"]["watcher"]
        assert watcher == {"pid": server.pid, "kind": "mcp", "mode": "events"}
        await _watching(config, server.pid)

        _report(tmp_path, "okapi_20251201.md", "the okapiunicorn was seen")

        async def found() -> bool:
            return _names(await server.search("okapiunicorn")) == ["okapi_20251201.md"]

        await until(found)
        answer = await server.search("okapiunicorn")
        assert answer["results"][0]["stale"] is False
        assert answer["freshness"]["as_of"] is not None and not answer["freshness"]["catching_up"]


async def _a_late_report_and_the_reports_lock_held(tmp_path: Path) -> tuple[Path, int]:
    """An index of a seed report, then a report written while nothing ran
    ("okapiunicorn"); the config, and the reports index's writer lock held here (a file
    descriptor, to close): the catch-up of reports waits for it."""
    config = _config(tmp_path)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    await _reindex(config)
    _report(tmp_path, "late_20251202.md", "written while nothing ran: okapiunicorn")
    lock = os.open(tmp_path / "index" / "reports" / "writer.lock", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return config, lock


async def test_a_file_written_while_nothing_ran_is_found_once_the_catch_up_ends_and_answers_say_so(
    tmp_path: Path,
) -> None:
    config, lock = await _a_late_report_and_the_reports_lock_held(tmp_path)
    try:
        async with mcp(config, "late") as server:

            async def catching_up() -> bool:
                return (await server.search("okapiunicorn"))["freshness"]["catching_up"]

            await until(catching_up)  # the watcher started, and is not done
            during = await server.search("okapiunicorn")
            assert during["results"] == [] and during["freshness"]["watcher"]["kind"] == "mcp"
            fcntl.flock(lock, fcntl.LOCK_UN)

            async def caught_up() -> bool:
                answer = await server.search("okapiunicorn")
                return not answer["freshness"]["catching_up"] and bool(answer["results"])

            await until(caught_up)
            assert _names(await server.search("okapiunicorn")) == ["late_20251202.md"]
    finally:
        os.close(lock)


async def test_a_trove_mcp_killed_during_its_catch_up_leaves_no_reconcile_behind(
    tmp_path: Path,
) -> None:
    """kill -9 of a `trove mcp` whose catch-up runs (its reconcile process waits for the
    reports' writer lock, held here): the reconcile process ends with it, and the next
    `trove mcp` catches up and answers."""
    config, lock = await _a_late_report_and_the_reports_lock_held(tmp_path)
    try:
        async with mcp(config, "killed") as server:

            async def reconciling() -> bool:
                return bool(reconcile_processes(server.pid))

            await until(reconciling, START_S)
            [child] = reconcile_processes(server.pid)
            os.kill(server.pid, signal.SIGKILL)
            await anyio.to_thread.run_sync(child.wait, FRESH_S)
    finally:
        os.close(lock)
    async with mcp(config, "next") as server:
        await _watching(config, server.pid)
        assert _names(await server.search("okapiunicorn")) == ["late_20251202.md"]


async def test_polling_mode_sees_new_edited_and_deleted_files(tmp_path: Path) -> None:
    config = _config(tmp_path, watch="poll", poll_interval_s=0.2, sweep_s=0.4)
    path = _report(tmp_path, "polled_20251101.md", "first words")
    async with mcp(config, "poll") as server:
        status = await _watching(config, server.pid)
        assert status["collections"]["reports"]["mode"] == "poll"
        assert status["collections"]["reports"]["why"] == '[daemon] watch = "poll"'
        answer = await server.search("first")
        assert answer["freshness"]["watcher"]["mode"] == "poll"

        _report(tmp_path, "new_20251102.md", "a zebrafish arrives")

        async def new() -> bool:
            return _names(await server.search("zebrafish")) == ["new_20251102.md"]

        await until(new)
        stat = path.stat()
        path.write_text("other words", encoding="utf-8")  # an edit in place, same folder
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))

        async def edited() -> bool:
            return _names(await server.search("other words")) == ["polled_20251101.md"]

        await until(edited)
        path.unlink()

        async def deleted() -> bool:
            return (await server.search("other words"))["results"] == []

        await until(deleted)


# --------------------------------------------------------------------------- several


async def test_three_trove_mcp_processes_share_one_watcher_and_a_kill_9_hands_it_over(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    async with AsyncExitStack() as stack:
        servers = [await stack.enter_async_context(mcp(config, f"m{i}")) for i in range(3)]
        answers = [await s.search("seed") for s in servers]
        watchers = {a["freshness"]["watcher"]["pid"] for a in answers}
        pids = {s.tag: s.pid for s in servers}
        assert len(watchers) == 1, answers  # one watcher for the three
        (watcher_pid,) = watchers
        assert watcher_pid in pids.values()
        await _watching(config, watcher_pid)
        # Exactly one holds the seat: the others stand by.
        assert json.loads((tmp_path / "index" / "daemon.lock").read_text())["pid"] == watcher_pid

        os.kill(watcher_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        _report(tmp_path, "after_20251203.md", "written after the kill: okapiunicorn")
        others = [s for s in servers if pids[s.tag] != watcher_pid]

        async def seen_by_all() -> bool:
            found = [_names(await s.search("okapiunicorn")) for s in others]
            return all(f == ["after_20251203.md"] for f in found)

        await until(seen_by_all)
        assert time.monotonic() - killed_at < FRESH_S
        new = (await others[0].search("okapiunicorn"))["freshness"]["watcher"]["pid"]
        assert new in {pids[s.tag] for s in others}
        assert (await others[1].search("okapiunicorn"))["freshness"]["watcher"]["pid"] == new


async def test_200_edits_through_5_kills_of_the_watcher_lose_nothing(tmp_path: Path) -> None:
    import random

    config = _config(tmp_path)
    rng = random.Random(7)
    live: dict[str, str] = {}  # report name -> its latest word
    for i in range(20):
        _report(tmp_path, f"r{i}_20251101.md", f"report word{i}x")
        live[f"r{i}_20251101.md"] = f"word{i}x"
    kills = 0
    serial = 20
    async with AsyncExitStack() as stack:
        servers = [await stack.enter_async_context(mcp(config, f"k{i}")) for i in range(3)]
        await _watching(config)
        for edit in range(200):
            if edit % 40 == 39 and kills < 5:  # kill the watcher, start a replacement
                victim = _status(config).get("pid")
                if victim in {s.pid for s in servers}:
                    os.kill(victim, signal.SIGKILL)
                    kills += 1
                    servers = [s for s in servers if s.pid != victim]
                    servers.append(await stack.enter_async_context(mcp(config, f"n{kills}")))
            serial += 1
            word = f"word{serial}x"
            kind = rng.choice(("add", "edit", "delete", "move", "rename"))
            names = sorted(live)
            if kind == "add" or not names:
                name = f"r{serial}_20251102.md"
                _report(tmp_path, name, f"added {word}")
                live[name] = word
            elif kind == "edit":
                name = rng.choice(names)
                _report(tmp_path, name, f"edited {word}")
                live[name] = word
            elif kind == "delete":
                name = rng.choice(names)
                (tmp_path / "reports" / COMMAND / name).unlink()
                del live[name]
            elif kind == "move":
                name = rng.choice(names)
                moved = f"m{serial}_20251103.md"
                os.rename(
                    tmp_path / "reports" / COMMAND / name, tmp_path / "reports" / COMMAND / moved
                )
                live[moved] = live.pop(name)
            else:  # an editor's save: a temporary file renamed over the report
                name = rng.choice(names)
                tmp = tmp_path / "reports" / COMMAND / f".{name}.swp"
                tmp.write_text(f"saved {word}", encoding="utf-8")
                os.replace(tmp, tmp_path / "reports" / COMMAND / name)
                live[name] = word
        assert kills == 5
        settings = settings_from_file(config)
        disk = walk(tmp_path / "reports", get_source("reports")).files

        async def in_line() -> bool:
            return set(lookups.documents(settings, "reports")) == set(disk) and (
                lookups.file_states(settings, "reports") == disk
            )

        await until(in_line, START_S)
        for name, word in sorted(live.items()):
            assert _names(await servers[-1].search(word)) == [name], (name, word)


async def test_stale_is_right_for_every_hit_while_the_watcher_is_paused(tmp_path: Path) -> None:
    config = _config(tmp_path)
    paths = [_report(tmp_path, f"r{i}_20251101.md", f"klystron report {i}") for i in range(6)]
    async with mcp(config, "watcher"), mcp(config, "reader") as reader:
        first = await reader.search("klystron")
        assert sorted(_names(first)) == sorted(p.name for p in paths)
        assert not any(r["stale"] for r in first["results"])
        watcher_pid = first["freshness"]["watcher"]["pid"]
        await _watching(config, watcher_pid)
        os.kill(watcher_pid, signal.SIGSTOP)
        try:
            paths[1].write_text("klystron report 1, edited to be longer", encoding="utf-8")
            paths[3].unlink()
            # An edit of the same size, a second later: only the time tells it.
            stat = paths[4].stat()
            paths[4].write_text("klystron REPORT 4", encoding="utf-8")
            os.utime(paths[4], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
            answer = await reader.search("klystron")
            # The index still holds the paused watcher's view: both edited reports are
            # stale; the deleted one is left out (its excerpt cannot be read).
            stale = {r["report_name"]: r["stale"] for r in answer["results"]}
            assert stale == {p.name: i in (1, 4) for i, p in enumerate(paths) if i != 3}
            assert answer["freshness"]["watcher"]["pid"] == watcher_pid
        finally:
            os.kill(watcher_pid, signal.SIGCONT)

        async def fresh() -> bool:
            answer = await reader.search("klystron")
            return len(answer["results"]) == 5 and not any(r["stale"] for r in answer["results"])

        await until(fresh)


# --------------------------------------------------------------------------- faults


async def test_a_source_folder_that_vanishes_and_appears_again_is_followed(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    async with mcp(config, "roots") as server:
        await _watching(config, server.pid)
        shutil.rmtree(tmp_path / "reports")

        async def gone() -> bool:
            result = await server.client.call_tool("search_reports", {"query": "seed"})
            return result.is_error and "DIRECTORY_NOT_FOUND" in str(result.content)

        await until(gone)
        _report(tmp_path, "back_20251202.md", "the folder is back with an okapiunicorn")

        async def back() -> bool:
            result = await server.client.call_tool("search_reports", {"query": "okapiunicorn"})
            return not result.is_error and bool((result.structured_content or {})["results"])

        await until(back)
        assert _names(await server.search("seed")) == []  # what went with the folder is gone


async def test_a_read_only_index_folder_is_served_as_it_is_with_no_watcher(
    tmp_path: Path, small_disk: SmallDisk
) -> None:
    config = _config(tmp_path)
    text = config.read_text().replace('dir = "index"', f'dir = "{small_disk.path / "index"}"')
    config.write_text(text)
    _report(tmp_path, "seed_20251101.md", "a seed report about klystrons")
    await _reindex(config)
    small_disk.read_only(True)
    try:
        errors = tmp_path / "stderr.txt"
        with errors.open("w") as err:
            async with mcp(config, "ro", errlog=err) as server:
                answer = await server.search("klystrons")
                assert _names(answer) == ["seed_20251101.md"]
                assert answer["freshness"]["watcher"] is None
                assert answer["freshness"]["as_of"] is not None
                _report(tmp_path, "new_20251202.md", "klystrons again")
                assert _names(await server.search("klystrons")) == ["seed_20251101.md"]
        said = errors.read_text()
        assert "cannot keep" in said and "answers come from the index as it is" in said
        assert "Traceback" not in said
    finally:
        small_disk.read_only(False)


async def test_a_full_disk_holds_the_changes_until_there_is_room(
    tmp_path: Path, small_disk: SmallDisk
) -> None:
    config = _config(tmp_path)
    text = config.read_text().replace('dir = "index"', f'dir = "{small_disk.path / "index"}"')
    config.write_text(text)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    async with mcp(config, "full") as server:
        await _watching(config, server.pid)
        small_disk.fill()
        _report(tmp_path, "zebra_20251202.md", "a zebrafish report " * 20000)

        async def held() -> bool:
            answer = await server.search("seed")
            return answer["freshness"]["pending"] > 0 and "disk full" in _status(config)["fault"]

        await until(held)
        assert _names(await server.search("seed")) == ["seed_20251101.md"]  # it still answers
        small_disk.free()

        async def landed() -> bool:
            answer = await server.search("zebrafish")
            return bool(answer["results"]) and answer["freshness"]["pending"] == 0

        await until(landed, START_S)


SETPRIV = shutil.which("setpriv")


@pytest.mark.skipif(
    os.geteuid() != 0 or SETPRIV is None, reason="needs root and setpriv to act as another user"
)
async def test_a_user_who_cannot_write_the_index_folder_reads_it_and_never_takes_the_seat(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    _report(tmp_path, "seed_20251101.md", "a seed report")
    index = tmp_path / "index"
    index.mkdir()
    os.chown(index, 65534, 65534)  # another user's folder, 0755: readable, not writable
    index.chmod(0o755)
    # Root without the capabilities that pass over file permissions: what any other
    # user meets in that folder.
    restricted = [SETPRIV or "setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    errors = tmp_path / "stderr.txt"
    async with mcp(config, "owner") as owner:
        await _watching(config, owner.pid)
        with errors.open("w") as err:
            async with mcp(config, "other", prefix=restricted, errlog=err) as other:
                answer = await other.search("seed")
                assert _names(answer) == ["seed_20251101.md"]
                assert answer["freshness"]["watcher"]["pid"] == owner.pid
                os.kill(owner.pid, signal.SIGKILL)

                async def unwatched() -> bool:
                    return (await other.search("seed"))["freshness"]["watcher"] is None

                await until(unwatched)
                assert json.loads((index / "daemon.lock").read_text())["pid"] == owner.pid
    said = errors.read_text()
    assert "not writable by this user" in said and "Traceback" not in said


# --------------------------------------------------------------------------- in this process
# query/freshness.py itself, on a status file written in tmp_path (no watcher runs).


class _Snapshot:
    """What freshness reads of a snapshot: its commit time and the files it recorded."""

    def __init__(self, committed: float, files: dict[str, tuple[int, int]]) -> None:
        self.committed = committed
        self.files = files

    def file_state(self, rel: str) -> tuple[int, int] | None:
        return self.files.get(rel)


class _Local:
    def __init__(self, watching: bool, health: dict[str, Any]) -> None:
        self.watching = watching
        self.health = health

    def health_snapshot(self) -> dict[str, Any]:
        return self.health


class _Hit:
    def __init__(self, file: str) -> None:
        self.file = file
        self.stale = False


def _view(tmp_path: Path, status: object = None) -> freshness.WatcherView:
    settings = settings_from_dict({"index": {"dir": str(tmp_path / "index")}}, base=tmp_path)
    (tmp_path / "index").mkdir(exist_ok=True)
    if status is not None:
        (tmp_path / "index" / "daemon.json").write_text(json.dumps(status))
    return freshness.WatcherView(settings)


def _fresh(**values: Any) -> freshness.Freshness:
    defaults: dict[str, Any] = {"as_of": None, "watcher": None, "pending": 0, "catching_up": False}
    return freshness.Freshness(**(defaults | values))


def _watcher(mode: str = "events", kind: str = "mcp", pid: int = 12) -> freshness.WatcherInfo:
    return freshness.WatcherInfo(pid=pid, kind=kind, mode=mode)  # type: ignore[arg-type]


LIVE = {"pid": os.getpid(), "kind": "mcp", "state": "watching", "pending": 3}


def test_a_time_is_written_in_utc_to_the_millisecond() -> None:
    assert freshness.iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert freshness.iso_time(1_795_000_000.1239) == "2026-11-18T11:06:40.123Z"


def test_with_no_status_file_there_is_no_watcher(tmp_path: Path) -> None:
    view = _view(tmp_path)
    assert view.status() is None
    assert view.freshness("reports", None) == _fresh()


def test_an_unreadable_status_file_is_no_watcher(tmp_path: Path) -> None:
    view = _view(tmp_path)
    (tmp_path / "index" / "daemon.json").mkdir()
    assert view.status() is None


def test_a_live_watcher_is_named_with_its_mode_and_pending_changes(tmp_path: Path) -> None:
    status = LIVE | {"collections": {"reports": {"mode": "poll"}, "elog": {"mode": "events"}}}
    view = _view(tmp_path, status)
    assert view.freshness("reports", 0.5) == _fresh(
        as_of="1970-01-01T00:00:00.500Z", watcher=_watcher("poll", pid=os.getpid()), pending=3
    )
    assert view.freshness("elog", None).watcher == _watcher("events", pid=os.getpid())
    assert view.freshness("commands", None).watcher == _watcher("events", pid=os.getpid())


def test_a_watcher_of_an_unknown_kind_or_without_a_pid_is_shown_as_a_daemon(
    tmp_path: Path,
) -> None:
    local = _Local(True, {"kind": "other", "state": "watching"})
    view = _view(tmp_path)
    view.local = local
    assert view.freshness("reports", None).watcher == _watcher(kind="daemon", pid=0)


def test_a_stopped_watcher_is_no_watcher_and_its_pending_changes_are_not_counted(
    tmp_path: Path,
) -> None:
    view = _view(tmp_path, LIVE | {"state": "stopped"})
    status = view.status()
    assert status is not None and status["alive"] is False
    assert view.freshness("reports", None) == _fresh()


@pytest.mark.parametrize(
    ("state", "caught_up", "catching_up"),
    [
        ("starting", False, True),
        ("catching up", False, True),
        ("catching up", True, False),
        ("watching", False, False),
    ],
)
def test_an_answer_is_catching_up_while_the_watcher_has_not_caught_up_its_collection(
    tmp_path: Path, state: str, caught_up: bool, catching_up: bool
) -> None:
    status = LIVE | {"state": state, "collections": {"reports": {"caught_up": caught_up}}}
    assert _view(tmp_path, status).freshness("reports", None).catching_up is catching_up


def test_the_watcher_in_this_process_answers_from_memory_while_it_watches(
    tmp_path: Path,
) -> None:
    view = _view(tmp_path, LIVE | {"pending": 9})
    view.local = _Local(True, {"pid": 5, "kind": "serve", "state": "watching", "pending": 1})
    status = view.status()
    assert status is not None
    assert (status["pid"], status["alive"], status["stuck"]) == (5, True, False)
    view.local = _Local(False, {"pid": 5})
    status = view.status()
    assert status is not None
    assert (status["pid"], status["pending"]) == (os.getpid(), 9)


def test_the_status_file_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    view = _view(tmp_path, LIVE | {"pending": 1})
    path = tmp_path / "index" / "daemon.json"
    assert view.freshness("reports", None).pending == 1
    before = path.stat()
    path.write_text(json.dumps(LIVE | {"pending": 2}))  # same size, same mtime below
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert view.freshness("reports", None).pending == 1
    path.write_text(json.dumps(LIVE | {"pending": 22}))
    assert view.freshness("reports", None).pending == 22


def test_the_freshness_of_a_snapshot_is_as_of_its_commit_in_its_collection(
    tmp_path: Path,
) -> None:
    view = _view(tmp_path, LIVE | {"collections": {"reports": {"mode": "poll"}}})
    snapshot: Any = _Snapshot(1.0, {})
    fresh = freshness.of_snapshot(view, "reports", snapshot)
    assert fresh.as_of == "1970-01-01T00:00:01.000Z"
    assert fresh.watcher is not None and fresh.watcher.mode == "poll"
    assert freshness.of_snapshot(view, "reports", None).as_of is None


def test_combined_freshness_is_the_oldest_commit_all_pending_and_any_catching_up() -> None:
    assert freshness.combined([]) is None
    parts = [
        _fresh(as_of="2026-01-02T00:00:00.000Z", watcher=_watcher("events"), pending=2),
        _fresh(as_of=None, pending=5, catching_up=True),
        _fresh(as_of="2026-01-01T00:00:00.000Z", watcher=_watcher("poll", pid=99)),
    ]
    assert freshness.combined(iter(parts)) == _fresh(
        as_of="2026-01-01T00:00:00.000Z", watcher=_watcher("poll"), pending=5, catching_up=True
    )
    events = [_fresh(watcher=_watcher("events")), _fresh(pending=1)]
    assert freshness.combined(events) == _fresh(watcher=_watcher("events"), pending=1)
    assert freshness.combined([_fresh(), _fresh()]) == _fresh()


def test_a_file_changed_or_gone_since_the_commit_is_stale(tmp_path: Path) -> None:
    same, edited, grown = (tmp_path / n for n in ("same", "edited", "grown"))
    for path in (same, edited, grown):
        path.write_text("text")
    recorded = {p.name: (p.stat().st_mtime_ns, 4) for p in (same, edited, grown)}
    recorded["gone"] = (1, 1)
    st = edited.stat()
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    grown.write_text("texts")
    os.utime(grown, ns=(st.st_atime_ns, recorded["grown"][0]))
    (tmp_path / "folder").mkdir()
    recorded["folder"] = ((tmp_path / "folder").stat().st_mtime_ns, 0)
    snapshot: Any = _Snapshot(0.0, recorded)
    names = ["same", "edited", "grown", "gone", "unknown", "folder", "same"]
    assert freshness.stale_files(snapshot, tmp_path, names) == {
        "edited",
        "grown",
        "gone",
        "unknown",
        "folder",
    }
    hits = [_Hit(n) for n in ("same", "gone", "same")]
    freshness.mark_stale(snapshot, tmp_path, iter(hits), lambda h: h.file)
    assert [h.stale for h in hits] == [False, True, False]


def test_the_commit_time_is_shown_in_local_time_or_never() -> None:
    assert freshness.as_of_local(_fresh()) == "never"
    local = dt.datetime.fromtimestamp(1_795_000_000).strftime("%Y-%m-%d %H:%M:%S")
    assert freshness.as_of_local(_fresh(as_of="2026-11-18T11:06:40.123Z")) == local


def test_the_summary_names_the_watcher_its_mode_and_what_it_is_doing() -> None:
    assert freshness.summary(_fresh()) == "index as of never; no watcher keeps it fresh"
    watched = _fresh(watcher=_watcher("poll", "serve", 12))
    assert (
        freshness.summary(watched) == "index as of never; kept fresh by trove serve (pid 12, poll)"
    )
    busy = _fresh(watcher=_watcher(), catching_up=True, pending=1)
    assert freshness.summary(busy) == (
        "index as of never; kept fresh by trove mcp (pid 12, events), catching up, 1 change pending"
    )
    assert freshness.summary(_fresh(watcher=_watcher(), pending=2)).endswith(
        "(pid 12, events), 2 changes pending"
    )


def test_the_warning_says_why_an_answer_may_not_show_the_files_as_they_are() -> None:
    assert freshness.warning(None, 3) is None
    assert freshness.warning(_fresh(watcher=_watcher()), 0) is None
    assert freshness.warning(_fresh(), 0) == (
        "no watcher keeps the index fresh: it is as of never (trove daemon, serve or mcp keep "
        "it fresh; trove reindex brings it up to date once)"
    )
    assert freshness.warning(_fresh(watcher=_watcher(), catching_up=True), 1) == (
        "the watcher is still catching up with changes made while none ran; "
        "1 hit changed on disk after the index read it (stale)"
    )
    assert freshness.warning(_fresh(watcher=_watcher()), 2) == (
        "2 hits changed on disk after the index read them (stale)"
    )
