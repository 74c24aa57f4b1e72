"""The MCP server through the real MCP client, in memory: the tool list and its schemas as
the specs give them, one call of every tool, and every error code, including those of
arguments the SDK rejects before a tool runs."""

from __future__ import annotations

import shutil
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent
from tool_names import TOOLS

from indexer.config import Settings
from query import reports as reports_module
from query.mcp_server import DATE_RANGE_DESCRIPTION, TroveServer, build_server

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parent.parent
SAMPLE_ELOG = REPO / "data" / "elog" / "SwissFEL"

PROXY_COMMAND = "proxy-slow-meeting-analysis-command"
PROXY_REPORT = "proxy-slow-meeting-analysis-command_报告_20251201_172952_v1.md"
SPEECH_COMMAND = "analyze_zoom_speech_sdk_log"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def corpus(write: Callable[[str, str], Path]) -> None:
    write(
        f"reports/{PROXY_COMMAND}/{PROXY_REPORT}",
        "# Proxy analysis\n\nWe detected proxy timeout issue during meeting join. "
        "The WinHTTP call waited 30 s.\n",
    )
    write(
        f"reports/{PROXY_COMMAND}/proxy_notes_2025-10-02.md",
        "# Older notes\n\nNo proxy problem seen.\n",
    )
    write(
        f"reports/{SPEECH_COMMAND}/Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md",
        "# Speech SDK\n\nAnalyzing decode response timing. Token validation shows delays.\n",
    )
    write(
        f"commands/{SPEECH_COMMAND}.md",
        "---\ntitle: Analyze Zoom Speech SDK logs\n"
        "description: Analyzes Zoom Speech SDK log files for issues\n"
        "tags: [speech, sdk, logs]\n---\n\n# Steps\n\nRead the log, find decode errors.\n",
    )
    write(
        f"commands/{PROXY_COMMAND}.md",
        "---\ntitle: Proxy slow meeting analysis\n"
        "description: Analyzes proxy logs for slow meeting join issues\n"
        "tags: [proxy, meeting]\n---\n\nCollect the proxy log and time each hop.\n",
    )
    write(
        "commands/log_common_parsers.md",
        "---\ntitle: Common log parsers\ndescription: Shared parsing helpers\n"
        "is_dependency: true\n---\n\nHelpers.\n",
    )
    write("conversations/2025-11/001-old-auth/conversation.md", "We discussed authentication.\n")
    write(
        "conversations/2025-11-10/001-brainstorm/notes.md",
        "First line\nThe authentication token expired at noon.\n",
    )
    write("conversations/2025-12-02/001-later/notes.md", "More authentication work.\n")


@pytest.fixture
def elog_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "elog"
    shutil.copytree(SAMPLE_ELOG / "2025", folder / "2025")
    return folder


@pytest.fixture
def make_server(
    make_settings: Callable[..., Settings], corpus: None, elog_folder: Path, searxng: str
) -> Iterator[Callable[..., TroveServer]]:
    built: list[TroveServer] = []

    def make(**sections: dict[str, Any]) -> TroveServer:
        sections.setdefault("web", {"searxng_url": f"{searxng}/ok", "cache_ttl_s": 0})
        sections.setdefault("elog", {"rerank": "lexical"})  # no embedding model to load
        server = build_server(make_settings(**sections))
        built.append(server)
        return server

    yield make
    for server in built:
        server.close()


@pytest.fixture
def server(make_server: Callable[..., TroveServer]) -> TroveServer:
    return make_server()


@asynccontextmanager
async def connected(server: TroveServer, **options: Any) -> AsyncIterator[Client]:
    with anyio.fail_after(30):
        async with Client(server, **options) as client:
            yield client


def first_text(result: CallToolResult) -> str:
    """The text of a tool result's first content block (which must be text)."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def call_ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, first_text(result)
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client, tool: str, args: dict[str, Any], code: str) -> str:
    result: CallToolResult = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    text = first_text(result)
    prefix = f"Error executing tool {tool}: {code}: "
    assert text.startswith(prefix), text
    assert len(text) > len(prefix) + 10, text  # says what went wrong
    return text[len(prefix) :]


async def tools_by_name(client: Client) -> dict[str, Any]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


# --------------------------------------------------------------------------- the tool list


async def test_the_server_lists_exactly_the_design_tools_each_read_only_with_an_output_schema(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        tools = await tools_by_name(client)
    assert list(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True, name
        assert tool.annotations.destructive_hint is False, name
        assert len(tool.description or "") > 80, name
        assert "\n " not in (tool.description or ""), name  # docstring indentation removed
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
    assert tools["search_web"].annotations.open_world_hint is True
    assert tools["search_reports"].annotations.open_world_hint is False


async def test_the_handshake_names_trove_and_tells_what_the_tools_are_for(
    server: TroveServer,
) -> None:
    async with connected(server, mode="legacy") as client:
        assert client.server_info is not None and client.server_info.name == "trove"
        assert "search_workspace" in (client.instructions or "")


def _prop(tool: Any, name: str) -> dict[str, Any]:
    return tool.input_schema["properties"][name]


def _types(prop: dict[str, Any]) -> set[str]:
    return {v["type"] for v in prop.get("anyOf", [prop])}


def _limits(prop: dict[str, Any]) -> tuple[Any, Any, Any, set[str]]:
    return prop.get("default"), prop.get("minimum"), prop.get("maximum"), _types(prop)


async def test_arguments_have_the_spec_names_types_defaults_and_limits(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        tools = await tools_by_name(client)
    # The specs' arguments, then the pages (offset) and parts (offset, limit) every
    # search, listing and document tool takes beyond them.
    expected = {
        "search_reports": (["query", "command_filter", "max_results", "offset"], ["query"]),
        "list_command_reports": (["command_name", "max_results", "offset"], ["command_name"]),
        "get_report": (
            ["command_name", "report_name", "offset", "limit"],
            ["command_name", "report_name"],
        ),
        "search_commands": (["query", "max_results", "offset"], ["query"]),
        "get_command": (["name", "offset", "limit"], ["name"]),
        "list_commands": (["include_dependencies", "max_results", "offset"], []),
        "search_workspace": (["query", "date_range", "max_results", "offset"], ["query"]),
        "get_conversation": (["id", "offset", "limit"], ["id"]),
        "search_elog": (
            ["query", "since", "until", "category", "system", "domain", "max_results", "offset"],
            [],
        ),
        "get_elog_thread": (["message_id", "include_replies", "include_parents"], ["message_id"]),
        "search_web": (["query", "limit"], ["query"]),
        "search": (
            ["query", "collections", "since", "until", "max_results", "offset"],
            ["query"],
        ),
    }
    for name, (properties, required) in expected.items():
        schema = tools[name].input_schema
        assert list(schema["properties"]) == properties, name
        assert sorted(schema.get("required", [])) == sorted(required), name
        for prop in schema["properties"].values():
            assert prop.get("description"), (name, prop)

    limits = {
        ("search_reports", "max_results"): (10, 1, 100),
        ("list_command_reports", "max_results"): (50, 1, 1000),
        ("search_commands", "max_results"): (10, 1, 100),
        ("search_workspace", "max_results"): (10, 1, 100),
        ("search_elog", "max_results"): (10, 1, 50),
        ("search_web", "limit"): (10, 1, 50),
    }
    for (name, arg), (default, low, high) in limits.items():
        assert _limits(_prop(tools[name], arg)) == (default, low, high, {"integer"}), name
    for name in ("search_reports", "search_commands", "search_workspace", "search_web"):
        query = _prop(tools[name], "query")
        assert (query["type"], query["minLength"], query["maxLength"]) == ("string", 1, 1000)
    assert _types(_prop(tools["search_reports"], "command_filter")) == {"string", "null"}
    assert _prop(tools["list_commands"], "include_dependencies")["default"] is False
    thread = tools["get_elog_thread"]
    assert _prop(thread, "message_id")["type"] == "integer"
    for flag in ("include_replies", "include_parents"):
        assert (_prop(thread, flag)["type"], _prop(thread, flag)["default"]) == ("boolean", True)
    for arg in ("query", "since", "until", "category", "system", "domain"):
        prop = _prop(tools["search_elog"], arg)
        assert _types(prop) == {"string", "null"} and prop["default"] is None, arg


async def test_date_range_is_described_as_mcp_search_002_says(server: TroveServer) -> None:
    async with connected(server) as client:
        tools = await tools_by_name(client)
    description = _prop(tools["search_workspace"], "date_range")["description"]
    assert description == DATE_RANGE_DESCRIPTION
    for needed in (
        "YYYY-MM (month)",
        "YYYY-MM-DD (day)",
        "Month format matches all days within that month",
        "'2025-11'",
        "'2025-11-10'",
    ):
        assert needed in description


async def test_no_internal_knob_is_exposed(server: TroveServer) -> None:
    async with connected(server) as client:
        tools = await tools_by_name(client)
    knobs = {"n_results", "top_k", "n_fetch", "rerank", "scope", "use_regex", "filters"}
    knobs |= {"timeout", "searxng_url", "categories", "language", "pageno", "path", "index"}
    for tool in tools.values():
        assert not knobs & set(tool.input_schema["properties"]), tool.name


async def test_elog_filters_list_the_swissfel_values_without_a_logbook_config(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        tools = await tools_by_name(client)
    search = tools["search_elog"]
    assert "'Pikett'" in _prop(search, "category")["description"]
    assert "'Timing & Sync'" in _prop(search, "system")["description"]
    assert "'Athos Beamlines'" in _prop(search, "domain")["description"]


async def test_elog_filters_list_the_values_of_the_configured_logbook_config(
    make_server: Callable[..., TroveServer], write: Callable[[str, str], Path]
) -> None:
    config = write(
        "elogd.cfg",
        "[global]\nport = 8080\n[elog]\nAttributes = Author, Category, System, Title\n"
        "Options Category = Alarm, Routine\nMOptions System = Cryo, Magnets\n",
    )
    server = make_server(sources={"elog_config": str(config)})
    async with connected(server) as client:
        tools = await tools_by_name(client)
    search = tools["search_elog"]
    category = _prop(search, "category")["description"]
    assert "'Alarm', 'Routine'" in category and "Pikett" not in category
    assert "'Cryo', 'Magnets'" in _prop(search, "system")["description"]
    assert "free text" in _prop(search, "domain")["description"]


# --------------------------------------------------------------------------- each tool


async def test_search_reports_finds_the_report_holding_the_query(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(client, "search_reports", {"query": "proxy timeout"})
        filtered = await call_ok(
            client,
            "search_reports",
            {"query": "decode response", "command_filter": SPEECH_COMMAND, "max_results": 1},
        )
    [hit] = answer["results"]
    assert hit["report_name"] == PROXY_REPORT
    assert hit["command_name"] == PROXY_COMMAND
    assert hit["date"] == "2025-12-01T00:00:00.000Z"
    assert "proxy timeout" in hit["excerpt"]
    assert hit["path"].endswith(f"{PROXY_COMMAND}/{PROXY_REPORT}")
    assert hit["link"].startswith("file://")
    assert [h["command_name"] for h in filtered["results"]] == [SPEECH_COMMAND]


async def test_list_command_reports_lists_newest_first(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(client, "list_command_reports", {"command_name": PROXY_COMMAND})
    assert answer["command_name"] == PROXY_COMMAND
    assert [r["report_name"] for r in answer["reports"]] == [
        PROXY_REPORT,
        "proxy_notes_2025-10-02.md",
    ]


async def test_get_report_returns_the_whole_content(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(
            client, "get_report", {"command_name": PROXY_COMMAND, "report_name": PROXY_REPORT}
        )
    assert answer["content"].startswith("# Proxy analysis")
    assert answer["date"] == "2025-12-01T00:00:00.000Z"


async def test_search_commands_finds_the_command_by_its_file_name(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(client, "search_commands", {"query": "speech SDK log analysis"})
    best = answer["results"][0]
    assert (best["name"], best["tier"]) == (SPEECH_COMMAND, "tier1")
    assert 0 < best["score"] <= 1 and best["match_reason"]
    assert answer["total_found"] >= 1 and answer["search_time_ms"] >= 0


async def test_get_command_returns_frontmatter_and_body(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(client, "get_command", {"name": SPEECH_COMMAND})
    assert answer["title"] == "Analyze Zoom Speech SDK logs"
    assert answer["tags"] == ["speech", "sdk", "logs"]
    assert "find decode errors" in answer["content"]


async def test_list_commands_hides_helpers_unless_asked(server: TroveServer) -> None:
    async with connected(server) as client:
        plain = await call_ok(client, "list_commands", {})
        everything = await call_ok(client, "list_commands", {"include_dependencies": True})
    assert [c["name"] for c in plain["commands"]] == [SPEECH_COMMAND, PROXY_COMMAND]
    assert "log_common_parsers" in [c["name"] for c in everything["commands"]]


async def test_search_workspace_filters_by_month_and_by_day(server: TroveServer) -> None:
    async with connected(server) as client:
        month = await call_ok(
            client, "search_workspace", {"query": "authentication", "date_range": "2025-11"}
        )
        day = await call_ok(
            client, "search_workspace", {"query": "authentication", "date_range": "2025-11-10"}
        )
        everything = await call_ok(client, "search_workspace", {"query": "authentication"})
    assert sorted(h["date"] for h in month["results"]) == ["2025-11", "2025-11-10"]
    [hit] = day["results"]
    assert (hit["conversation"], hit["line"]) == ("001-brainstorm", 2)
    assert everything["total_found"] == 3


async def test_search_web_answers_from_searxng(server: TroveServer) -> None:
    async with connected(server) as client:
        answer = await call_ok(client, "search_web", {"query": "whoosh python", "limit": 2})
    assert answer["query"] == "whoosh python"
    assert answer["total"] == len(answer["results"]) == 2
    assert {"title", "content", "url", "score", "engine", "category"} <= set(answer["results"][0])


async def test_search_elog_finds_entries_by_text_dates_and_filters(server: TroveServer) -> None:
    async with connected(server) as client:
        text = await call_ok(
            client, "search_elog", {"query": "beam dump", "since": "2025-10-01", "max_results": 5}
        )
        filtered = await call_ok(
            client,
            "search_elog",
            {"since": "2025-10-07", "until": "2025-10-07", "domain": "aramis"},
        )
    hit = text["hits"][0]
    assert hit["elog_id"] == 34522 and hit["title"] == "Aramis beam dump temperature"
    assert {"date", "author", "category", "system", "domain", "section", "snippet", "score"} <= set(
        hit
    )
    assert all(h["date"] >= "2025-10-01" for h in text["hits"])
    assert [h["elog_id"] for h in filtered["hits"]] == [34522]
    assert filtered["ranker"] == "recency"


async def test_get_elog_thread_returns_the_thread_in_order_with_depths(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        whole = await call_ok(client, "get_elog_thread", {"message_id": 34078})
        parents = await call_ok(
            client, "get_elog_thread", {"message_id": 34077, "include_parents": False}
        )
    assert whole["root_id"] == 34077 and whole["message_id"] == 34078
    assert [(e["elog_id"], e["depth"]) for e in whole["entries"]] == [(34077, 0), (34078, 1)]
    assert [e["elog_id"] for e in parents["entries"]] == [34077, 34078]


# --------------------------------------------------------------------------- error codes


async def test_bad_queries_are_invalid_query_whether_the_sdk_or_the_search_catches_them(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        # caught by the SDK's validation, before the tool runs
        assert "required" in await call_error(client, "search_reports", {}, "INVALID_QUERY")
        assert "empty" in await call_error(client, "search_reports", {"query": ""}, "INVALID_QUERY")
        assert "limit is 1000" in await call_error(
            client, "search_commands", {"query": "x" * 1001}, "INVALID_QUERY"
        )
        assert "text" in await call_error(
            client, "search_workspace", {"query": 42}, "INVALID_QUERY"
        )
        # caught by the search itself
        assert "empty" in await call_error(
            client, "search_reports", {"query": "   "}, "INVALID_QUERY"
        )
        await call_error(client, "search_workspace", {"query": "\n\t"}, "INVALID_QUERY")
        await call_error(client, "search_web", {"query": " \t"}, "INVALID_QUERY")


async def test_out_of_range_or_mistyped_arguments_are_invalid_argument(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        message = await call_error(
            client, "search_reports", {"query": "proxy", "max_results": 500}, "INVALID_ARGUMENT"
        )
        assert message == "max_results must be between 1 and 100, got 500"
        message = await call_error(
            client, "search_web", {"query": "x", "limit": 0}, "INVALID_ARGUMENT"
        )
        assert message == "limit must be between 1 and 50, got 0"
        assert "whole number" in await call_error(
            client,
            "list_command_reports",
            {"command_name": PROXY_COMMAND, "max_results": "many"},
            "INVALID_ARGUMENT",
        )
        assert "true or false" in await call_error(
            client, "list_commands", {"include_dependencies": "maybe"}, "INVALID_ARGUMENT"
        )
        assert "required" in await call_error(
            client, "get_report", {"command_name": PROXY_COMMAND}, "INVALID_ARGUMENT"
        )
        message = await call_error(client, "get_elog_thread", {"message_id": 0}, "INVALID_ARGUMENT")
        assert message == "message_id must be at least 1, got 0"
        message = await call_error(
            client, "search_reports", {"query": "proxy", "limit": 3}, "INVALID_ARGUMENT"
        )
        assert "no argument 'limit'" in message and "max_results" in message


async def test_a_bad_argument_never_reaches_the_function(
    server: TroveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(reports_module, "search_reports", lambda *args: calls.append(args))
    async with connected(server) as client:
        await call_error(
            client, "search_reports", {"query": "x", "max_results": 101}, "INVALID_ARGUMENT"
        )
        await call_error(client, "search_reports", {"query": ""}, "INVALID_QUERY")
    assert calls == []


async def test_invalid_names_and_date_ranges_get_their_own_codes(server: TroveServer) -> None:
    async with connected(server) as client:
        await call_error(
            client,
            "search_reports",
            {"query": "proxy", "command_filter": "../etc"},
            "INVALID_COMMAND_FILTER",
        )
        await call_error(
            client,
            "search_reports",
            {"query": "proxy", "command_filter": 7},
            "INVALID_COMMAND_FILTER",
        )
        await call_error(
            client, "list_command_reports", {"command_name": 7}, "INVALID_COMMAND_FILTER"
        )
        await call_error(
            client, "list_command_reports", {"command_name": "a:b"}, "INVALID_COMMAND_FILTER"
        )
        for bad in ("2025-13", "2025-11-1", "2025-02-30", "November"):
            message = await call_error(
                client,
                "search_workspace",
                {"query": "authentication", "date_range": bad},
                "INVALID_DATE_RANGE",
            )
            assert "YYYY-MM" in message


async def test_unknown_names_are_not_found(server: TroveServer) -> None:
    async with connected(server) as client:
        await call_error(
            client, "list_command_reports", {"command_name": "no_such_command"}, "NOT_FOUND"
        )
        await call_error(
            client,
            "get_report",
            {"command_name": PROXY_COMMAND, "report_name": "missing_20250101.md"},
            "NOT_FOUND",
        )
        assert SPEECH_COMMAND in await call_error(  # the closest name is suggested
            client, "get_command", {"name": "analyze_zoom_speech"}, "NOT_FOUND"
        )
        result = await client.call_tool("search_everything", {"query": "x"})
    assert result.is_error
    assert first_text(result).startswith(
        "Error executing tool search_everything: NOT_FOUND: there is no such tool"
    )


async def test_elog_arguments_get_their_codes(server: TroveServer) -> None:
    async with connected(server) as client:
        await call_error(client, "get_elog_thread", {"message_id": 999_999_999}, "NOT_FOUND")
        await call_error(client, "search_elog", {"since": "2025-13-01"}, "INVALID_DATE_RANGE")
        # the same argument with the wrong type, caught by the SDK: the same code
        await call_error(client, "search_elog", {"since": 20251001}, "INVALID_DATE_RANGE")
        await call_error(client, "search_elog", {"until": ["2025"]}, "INVALID_DATE_RANGE")
        await call_error(
            client,
            "search_elog",
            {"since": "2025-10-08", "until": "2025-10-01"},
            "INVALID_DATE_RANGE",
        )
        assert "did you mean 'Problem'" in await call_error(
            client, "search_elog", {"category": "Problme"}, "INVALID_ARGUMENT"
        )
        await call_error(client, "search_elog", {"query": "y" * 1001}, "INVALID_QUERY")


async def test_a_missing_source_folder_is_directory_not_found(
    make_server: Callable[..., TroveServer], tmp_path: Path
) -> None:
    server = make_server(
        sources={"reports": str(tmp_path / "nowhere"), "commands": str(tmp_path / "none")}
    )
    async with connected(server) as client:
        await call_error(client, "search_reports", {"query": "proxy"}, "DIRECTORY_NOT_FOUND")
        await call_error(client, "list_commands", {}, "DIRECTORY_NOT_FOUND")


async def test_a_search_over_its_time_limit_is_search_timeout(
    make_server: Callable[..., TroveServer],
) -> None:
    # 1 ms: the first search builds the index, which takes longer than that.
    server = make_server(commands={"search_timeout_ms": 1})
    async with connected(server) as client:
        await call_error(client, "search_commands", {"query": "proxy"}, "SEARCH_TIMEOUT")


async def test_a_failing_or_missing_searxng_is_upstream_error(
    make_server: Callable[..., TroveServer], searxng: str
) -> None:
    server = make_server(web={"searxng_url": f"{searxng}/broken", "cache_ttl_s": 0})
    async with connected(server) as client:
        assert "500" in await call_error(
            client, "search_web", {"query": "whoosh"}, "UPSTREAM_ERROR"
        )
    # No SearXNG configured: the server still starts; only search_web says so.
    server = make_server(web={"searxng_url": ""})
    async with connected(server) as client:
        assert "searxng_url" in await call_error(
            client, "search_web", {"query": "whoosh"}, "UPSTREAM_ERROR"
        )
        assert (await call_ok(client, "list_commands", {}))["commands"]


# --------------------------------------------------------------------------- the event loop


async def test_a_slow_search_runs_in_a_worker_thread_and_the_server_keeps_answering(
    server: TroveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    ran_in: list[threading.Thread] = []
    real = reports_module.search_reports

    def slow(*args: Any) -> Any:
        ran_in.append(threading.current_thread())
        assert release.wait(10)
        return real(*args)

    monkeypatch.setattr(reports_module, "search_reports", slow)
    async with connected(server) as client:
        results: list[CallToolResult] = []

        async def search() -> None:
            results.append(await client.call_tool("search_reports", {"query": "proxy"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(search)
            # While the search waits, other calls are answered.
            answer = await call_ok(client, "get_command", {"name": SPEECH_COMMAND})
            assert answer["name"] == SPEECH_COMMAND
            assert not results
            release.set()
    assert ran_in and ran_in[0] is not threading.main_thread()
    assert not results[0].is_error and results[0].structured_content["results"]


# --------------------------------------------------------------------------- search


async def test_search_finds_every_collection_at_once_fused_by_reciprocal_rank(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        proxy = await call_ok(client, "search", {"query": "proxy"})
        auth = await call_ok(client, "search", {"query": "authentication", "max_results": 50})
        beam = await call_ok(client, "search", {"query": "beam dump"})
    # Each collection's own first hit shares the best score, 1 / (60 + 1).
    firsts = {h["collection"]: h for h in reversed(proxy["hits"])}
    assert {"reports", "commands"} <= set(firsts)
    assert firsts["reports"]["score"] == firsts["commands"]["score"] == round(1 / 61, 6)
    assert proxy["hits"][0]["score"] == round(1 / 61, 6)
    scores = [h["score"] for h in proxy["hits"]]
    assert scores == sorted(scores, reverse=True)
    # ids are what the collection's get tool takes.
    report = firsts["reports"]
    assert report["id"] == f"{PROXY_COMMAND}/{PROXY_REPORT}" and report["match"] == "exact"
    assert firsts["commands"]["id"] == PROXY_COMMAND
    assert proxy["by_collection"]["reports"] == 2
    lines = [h for h in auth["hits"] if h["collection"] == "conversations"]
    assert len(lines) == 3 and all(":" in h["id"] for h in lines)
    assert auth["by_collection"]["conversations"] == 3
    assert beam["hits"] and {h["collection"] for h in beam["hits"]} == {"elog"}
    assert beam["hits"][0]["id"].isdigit()


async def test_search_filters_collections_and_dates_and_checks_its_arguments(
    server: TroveServer,
) -> None:
    async with connected(server) as client:
        only = await call_ok(
            client, "search", {"query": "authentication", "collections": ["conversations"]}
        )
        dated = await call_ok(
            client,
            "search",
            {"query": "authentication proxy", "since": "2025-11-10", "until": "2025-11-30"},
        )
        await call_error(
            client, "search", {"query": "x", "since": "2025-13-01"}, "INVALID_DATE_RANGE"
        )
        await call_error(
            client,
            "search",
            {"query": "x", "since": "2025-12-01", "until": "2025-11-01"},
            "INVALID_DATE_RANGE",
        )
        await call_error(client, "search", {"query": "  "}, "INVALID_QUERY")
        await call_error(client, "search", {"query": "x", "max_results": 51}, "INVALID_ARGUMENT")
        await call_error(
            client, "search", {"query": "x", "collections": ["web"]}, "INVALID_ARGUMENT"
        )
    assert {h["collection"] for h in only["hits"]} == {"conversations"}
    assert list(only["by_collection"]) == ["conversations"]
    # Dated: commands (no date) left out; the month folder 2025-11 meets the span, the
    # line of 2025-12-02 does not.
    assert "commands" not in dated["by_collection"]
    days = {h["date"][:10] for h in dated["hits"]}
    assert days and all("2025-11" <= d <= "2025-11-30" for d in days)
    assert not any(h["date"].startswith("2025-12") for h in dated["hits"])
