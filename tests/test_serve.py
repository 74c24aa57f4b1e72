"""`trove mcp` over stdio and `trove serve` over streamable HTTP, as real processes spoken
to by the real MCP client; every wait is bounded."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from indexer.config import Settings
from query.serve import is_loopback, server_token

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parent.parent
START_S = 60  # a process's start-up, on a busy machine
REPORT_DIR = "reports/proxy-slow-meeting-analysis-command"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Trove:
    """A `trove` process started by a test; stderr lines are collected as they come."""

    def __init__(self, config: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "query.cli", "--config", str(config), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, name="trove-stderr", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            self.lines.put(line)

    def wait_line(self, pattern: str, timeout: float = START_S) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no line matching {pattern!r}; stderr: {''.join(self.stderr)}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code

    def stdout(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def start() -> Iterator[Callable[..., Trove]]:
    started: list[Trove] = []

    def run(config: Path, *args: str, env: dict[str, str] | None = None) -> Trove:
        trove = Trove(config, *args, env=env)
        started.append(trove)
        return trove

    yield run
    for trove in started:
        trove.kill()


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A copy of the sample data with its own config and no index yet."""
    shutil.copytree(REPO / "data", tmp_path / "data")
    config = tmp_path / "trove.toml"
    text = (REPO / "trove.toml").read_text(encoding="utf-8")
    config.write_text(text.replace('rerank = "auto"', 'rerank = "lexical"'), encoding="utf-8")
    return config


@pytest.fixture
def small(tmp_path: Path, write: Callable[[str, str], Path]) -> Path:
    """A small corpus and a config whose [server] port (1) --port must override."""
    write(f"{REPORT_DIR}/proxy_20251201_v1.md", "# Proxy\n\nWe saw a proxy timeout.\n")
    write("commands/proxy-slow-meeting-analysis-command.md", "---\ntitle: Proxy\n---\nSteps.\n")
    write("conversations/2025-11-10/001-auth/notes.md", "authentication token\n")
    return write(
        "trove.toml",
        f"""
[sources]
reports = "{tmp_path / "reports"}"
commands = "{tmp_path / "commands"}"
conversations = "{tmp_path / "conversations"}"
elog = "{tmp_path / "elog"}"

[index]
dir = "{tmp_path / "index"}"

[elog]
rerank = "lexical"

[daemon]
quiet_ms = 50
max_delay_ms = 200

[server]
host = "127.0.0.1"
port = 1
""",
    )


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


# --------------------------------------------------------------------------- trove mcp


async def test_trove_mcp_builds_the_missing_index_and_answers_the_real_client_over_stdio(
    sample: Path, tmp_path: Path
) -> None:
    index = tmp_path / ".trove"
    assert not index.exists()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "query.cli", "--config", str(sample), "mcp"],
        env={"HF_HUB_OFFLINE": "1"},
        cwd=str(tmp_path),
    )
    with anyio.fail_after(START_S):
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == 12
            # The first search waits for the index its watcher (this very process) builds.
            reports = structured(await client.call_tool("search_reports", {"query": "proxy"}))
            assert reports["results"]
            watcher = reports["freshness"]["watcher"]
            assert watcher["kind"] == "mcp" and watcher["mode"] == "events"
            assert json.loads((index / "daemon.lock").read_text())["pid"] == watcher["pid"]
            lines = structured(
                await client.call_tool(
                    "search_workspace", {"query": "token", "date_range": "2025-11"}
                )
            )
            assert all(h["date"].startswith("2025-11") for h in lines["results"])
            bad = await client.call_tool("search_reports", {"query": "proxy", "max_results": 0})
            assert bad.is_error
            assert isinstance(bad.content[0], TextContent), bad.content[0]
            assert "INVALID_ARGUMENT: max_results must be between 1 and 100" in (
                bad.content[0].text
            )


def test_trove_mcp_writes_nothing_but_protocol_to_stdout(sample: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "query.cli", "--config", str(sample), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for x in stdout:
            lines.put(x)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def ask(message: dict[str, Any]) -> dict[str, Any] | None:
        stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        stdin.flush()
        if "id" not in message:
            return None
        answer = json.loads(lines.get(timeout=START_S))
        assert answer["id"] == message["id"]
        return answer

    try:
        hello = ask(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            }
        )
        ask({"method": "notifications/initialized"})
        found = ask(
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "search_commands", "arguments": {"query": "proxy"}},
            }
        )
        empty = ask(
            {
                "id": 3,
                "method": "tools/call",
                "params": {"name": "search_reports", "arguments": {"query": ""}},
            }
        )
        proc.stdin.close()  # EOF: the server ends
        assert proc.wait(START_S) == 0
        reader.join(10)
        stderr = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert lines.empty()  # nothing but the three answers was written
    assert hello is not None and hello["result"]["serverInfo"]["name"] == "trove"
    assert found is not None and found["result"]["structuredContent"]["results"]
    assert empty is not None and empty["result"]["isError"] is True
    assert "INVALID_QUERY" in empty["result"]["content"][0]["text"]
    assert "reports: watching" in stderr and "commands: watching" in stderr


# --------------------------------------------------------------------------- trove serve


async def _health(url: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.get(url, headers=headers)


async def _daemon(health_url: str, ready: Callable[[dict[str, Any]], bool], **headers: str) -> Any:
    """The daemon's status from /health once ``ready`` holds (polled, bounded)."""
    with anyio.fail_after(START_S):
        while True:
            response = await _health(health_url, **headers)
            body = response.json()
            if response.status_code == 200 and ready(body["watcher"]):
                return body["watcher"]
            await anyio.sleep(0.05)


@asynccontextmanager
async def mcp_client(url: str, token: str | None = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_trove_serve_answers_mcp_over_http_and_a_file_written_meanwhile_is_found(
    small: Path, tmp_path: Path, write: Callable[[str, str], Path], start: Callable[..., Trove]
) -> None:
    trove = start(small, "serve", "--port", "0")
    m = trove.wait_line(r"MCP at (http://127\.0\.0\.1:(\d+)/mcp), health at (http://\S+/health)")
    url, port, health_url = m.group(1), int(m.group(2)), m.group(3)
    assert port not in (0, 1)  # --port overrides [server] port
    before = await _daemon(health_url, lambda d: d["state"] == "watching")
    assert before["pid"] == trove.proc.pid

    with anyio.fail_after(START_S):
        async with mcp_client(url) as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools][:3] == [
                "search_reports",
                "list_command_reports",
                "get_report",
            ]
            first = structured(await client.call_tool("search_reports", {"query": "zebrafish"}))
            assert first["results"] == []

            write(f"{REPORT_DIR}/zebra_20260101_v1.md", "# New\n\nA zebrafish in the proxy.\n")
            await _daemon(
                health_url, lambda d: (d["last_commit"] or 0) > (before["last_commit"] or 0)
            )
            found = structured(await client.call_tool("search_reports", {"query": "zebrafish"}))
            assert [r["report_name"] for r in found["results"]] == ["zebra_20260101_v1.md"]

    # Stateless, with JSON answers: a call needs no session, and its answer is one JSON
    # body, not an event stream.
    async with httpx.AsyncClient(timeout=10) as http:
        call = {"name": "search_reports", "arguments": {"query": "zebrafish"}}
        raw = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert raw.status_code == 200 and "mcp-session-id" not in raw.headers
    assert raw.headers["content-type"].startswith("application/json")
    results = raw.json()["result"]["structuredContent"]["results"]
    assert [r["report_name"] for r in results] == ["zebra_20260101_v1.md"]

    # One watcher per index: a second `trove serve` on it serves too, and stands by...
    second = start(small, "serve", "--port", "0")
    second.wait_line(rf"trove serve \(pid {trove.proc.pid}\) watches .* stands by")
    second_health = second.wait_line(r"health at (http://\S+/health)").group(1)
    watcher = await _daemon(second_health, lambda d: d["pid"] == trove.proc.pid)
    assert watcher["kind"] == "serve"

    assert trove.stop(signal.SIGTERM) == 0
    assert trove.stdout() == ""
    # ...until the first stops: then it takes over, catches up and watches.
    taken = await _daemon(second_health, lambda d: d["pid"] == second.proc.pid)
    assert taken["state"] == "watching" and taken["kind"] == "serve"
    assert second.stop(signal.SIGTERM) == 0
    status = json.loads((tmp_path / "index" / "daemon.json").read_text(encoding="utf-8"))
    assert status["state"] == "stopped" and status["pid"] == second.proc.pid


def test_trove_serve_refuses_another_address_without_a_token(
    small: Path, start: Callable[..., Trove]
) -> None:
    trove = start(small, "serve", "--host", "0.0.0.0", "--port", "0", env={"TROVE_TOKEN": ""})
    assert trove.proc.wait(START_S) == 2
    trove.stop()
    message = "".join(trove.stderr)
    assert "refusing to serve on 0.0.0.0" in message and "TROVE_TOKEN" in message


def test_trove_serve_on_a_busy_port_says_so(small: Path, start: Callable[..., Trove]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        trove = start(small, "serve", "--port", str(port))
        assert trove.proc.wait(START_S) == 1
    trove.stop()
    assert f"cannot listen on 127.0.0.1:{port}" in "".join(trove.stderr)


async def test_trove_serve_with_a_token_answers_only_requests_that_carry_it(
    small: Path, start: Callable[..., Trove]
) -> None:
    token = "s3cret-token"
    trove = start(small, "serve", "--host", "0.0.0.0", "--port", "0", env={"TROVE_TOKEN": token})
    port = int(trove.wait_line(r"MCP at http://0\.0\.0\.0:(\d+)/mcp,.*bearer token")[1])
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    await _daemon(f"{base}/health", lambda d: d["state"] == "watching", **auth)

    assert (await _health(f"{base}/health")).status_code == 401
    assert (await _health(f"{base}/health", Authorization="Bearer wrong")).status_code == 401
    async with httpx.AsyncClient(timeout=10) as http:
        denied = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert denied.status_code == 401
    assert denied.headers["www-authenticate"].startswith("Bearer")

    with anyio.fail_after(START_S):
        async with mcp_client(f"{base}/mcp", token) as client:
            answer = structured(await client.call_tool("search_commands", {"query": "proxy"}))
            assert answer["results"][0]["name"] == "proxy-slow-meeting-analysis-command"
        with pytest.raises(ExceptionGroup) as refused:  # the client's handshake got the 401
            async with mcp_client(f"{base}/mcp") as client:
                await client.list_tools()
    assert refused.group_contains(MCPError, depth=None)

    assert trove.stop(signal.SIGINT) == 130


def test_loopback_hosts_are_told_from_others() -> None:
    for host in ("127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.org", ""):
        assert not is_loopback(host), host


def test_the_token_comes_from_the_environment_else_the_config(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(server={"token": "from-config"})
    monkeypatch.delenv("TROVE_TOKEN", raising=False)
    assert server_token(settings) == "from-config"
    monkeypatch.setenv("TROVE_TOKEN", "from-env")
    assert server_token(settings) == "from-env"
    assert server_token(make_settings()) == "from-env"
