"""query/fast_calls.py: a plain tools/call over HTTP gets, without the SDK's per-request
machinery, the very answer the SDK gives; every other request goes to the SDK."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from test_engines_agree import settings as sample_settings

from indexer.reindex import reindex
from query.fast_calls import FastToolCalls
from query.mcp_server import build_server
from query.serve import MCP_PATH, http_app

DATA = Path(__file__).resolve().parent.parent / "data"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Counting:
    """An ASGI app in front of another that counts the HTTP requests it is handed."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.requests += scope["type"] == "http"
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def clients(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TestClient, TestClient, Counting]]:
    """(trove's app, the SDK's app alone, what trove's app hands to the SDK), each over
    its own server of the same index."""
    tmp_path = tmp_path_factory.mktemp("fast")
    shutil.copytree(DATA, tmp_path / "data")
    config = sample_settings(tmp_path)  # search_web: no SearXNG at its default address
    reindex(config)
    servers = [build_server(config), build_server(config)]
    fast = http_app(servers[0], "127.0.0.1")
    assert isinstance(fast, FastToolCalls)
    handed = fast.app = Counting(fast.app)
    sdk = http_app(servers[1], "127.0.0.1")
    assert isinstance(sdk, FastToolCalls)
    with (
        TestClient(fast, base_url="http://127.0.0.1:8000") as a,
        TestClient(sdk.app, base_url="http://127.0.0.1:8000") as b,
    ):
        yield a, b, handed
    for server in servers:
        server.close()


def timeless(answer: Any) -> Any:
    """A tool's answer without its search_time_ms and the time its freshness was read
    at (list_command_reports lists at each call), in its structured content and in the
    JSON text of its content."""

    def drop(content: dict[str, Any]) -> None:
        content.pop("search_time_ms", None)
        if isinstance(content.get("freshness"), dict):
            content["freshness"].pop("as_of", None)

    result = answer.get("result") if isinstance(answer, dict) else None
    if isinstance(result, dict):
        if isinstance(result.get("structuredContent"), dict):
            drop(result["structuredContent"])
        for block in result.get("content", []):
            try:
                text = json.loads(block["text"])
            except (KeyError, ValueError):
                continue
            if isinstance(text, dict):
                drop(text)
                block["text"] = text
    return answer


def call(name: str, arguments: dict[str, Any] | None = None, id_: Any = 1) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


PLAIN_CALLS = [
    call("search_reports", {"query": "proxy"}),
    call("search_reports", {"query": "e", "max_results": 3}, "a string id"),
    call("search_reports", {"query": "timout"}),  # a fuzzy answer with a note
    call("search_reports", {"query": "proxy", "max_results": 0}),  # INVALID_MAX_RESULTS
    call("search_reports", {"query": "proxy", "colour": "red"}),  # an unknown argument
    call("search_reports", {}),  # the query missing
    call("search_reports"),  # no arguments at all
    call("search_reports", {"query": "   "}),  # INVALID_QUERY from the tool itself
    call("search_reports", {"query": "proxy", "command_filter": "no_such_command"}),
    call("list_command_reports", {"command_name": "analyze_zoom_speech_sdk_log"}),
    call("get_report", {"command_name": "analyze_zoom_speech_sdk_log", "report_name": "nope"}),
    call("search_commands", {"query": "meeting"}),
    call("list_commands", {}),
    call("search_workspace", {"query": "proxy", "date_range": "2025-11"}),
    call("search_workspace", {"query": "proxy", "date_range": "last week"}),
    call("search_elog", {"query": "beam", "max_results": 2}),
    call("get_elog_thread", {"message_id": 10**9}),
    call("search", {"query": "proxy timeout"}),
    call("search_web", {"query": "whoosh"}),  # the SearXNG here does not answer: an error
    call("no_such_tool", {}),
]


@pytest.mark.parametrize("body", PLAIN_CALLS, ids=lambda b: json.dumps(b["params"])[:60])
def test_a_plain_tool_call_is_answered_as_the_sdk_answers_it_without_the_sdk(
    clients: tuple[TestClient, TestClient, Counting], body: dict[str, Any]
) -> None:
    fast, sdk, handed = clients
    before = handed.requests
    got = fast.post(MCP_PATH, json=body, headers=HEADERS)
    assert handed.requests == before  # answered before the SDK's app
    want = sdk.post(MCP_PATH, json=body, headers=HEADERS)
    assert (got.status_code, got.headers["content-type"]) == (
        want.status_code,
        want.headers["content-type"],
    )
    assert timeless(got.json()) == timeless(want.json())
    assert got.json()["id"] == body["id"]


OTHER_REQUESTS: list[tuple[str, Any, dict[str, str]]] = [
    # (what, body, headers over HEADERS)
    (
        "initialize",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {},
    ),
    ("tools/list", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {}),
    ("a notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, {}),
    ("a batch", [call("search_reports", {"query": "proxy"})], {}),
    ("not JSON", "{not json", {}),
    ("params not an object", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": 7}, {}),
    ("a name that is not a string", call(7, {}), {}),  # type: ignore[arg-type]
    (
        "another content type",
        call("search_reports", {"query": "x"}),
        {"content-type": "text/plain"},
    ),
    ("JSON not accepted", call("search_reports", {"query": "x"}), {"accept": "text/html"}),
    ("a foreign Host", call("search_reports", {"query": "x"}), {"host": "evil.example"}),
    ("a foreign Origin", call("search_reports", {"query": "x"}), {"origin": "http://evil.example"}),
    (
        "an unknown protocol version",
        call("search_reports", {"query": "x"}),
        {"mcp-protocol-version": "1999-01-01"},
    ),
    ("a session id", call("search_reports", {"query": "x"}), {"mcp-session-id": "abc"}),
]


@pytest.mark.parametrize(("what", "body", "headers"), OTHER_REQUESTS, ids=lambda x: str(x)[:30])
def test_any_other_request_goes_to_the_sdk_as_it_came(
    clients: tuple[TestClient, TestClient, Counting], what: str, body: Any, headers: dict[str, str]
) -> None:
    fast, sdk, handed = clients
    content = body if isinstance(body, str) else json.dumps(body)
    before = handed.requests
    got = fast.post(MCP_PATH, content=content, headers={**HEADERS, **headers})
    assert handed.requests == before + 1, what
    want = sdk.post(MCP_PATH, content=content, headers={**HEADERS, **headers})
    assert got.status_code == want.status_code, what
    assert got.headers.get("content-type") == want.headers.get("content-type"), what
    if got.content and got.headers.get("content-type", "").startswith("application/json"):
        answer, expected = got.json(), want.json()
        if isinstance(answer, dict) and "result" in answer and "serverInfo" in answer["result"]:
            answer["result"].pop("serverInfo"), expected["result"].pop("serverInfo")
        assert answer == expected, what


def test_a_body_past_the_sdk_limit_goes_to_the_sdk_whole(
    clients: tuple[TestClient, TestClient, Counting],
) -> None:
    fast, sdk, handed = clients
    body = json.dumps(call("search_reports", {"query": "x" * (5 << 20)}))
    before = handed.requests
    got = fast.post(MCP_PATH, content=body, headers=HEADERS)
    assert handed.requests == before + 1
    want = sdk.post(MCP_PATH, content=body, headers=HEADERS)
    assert got.status_code == want.status_code == 413
