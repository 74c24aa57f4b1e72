"""Call trove's MCP tools from Python with the official MCP SDK (`pip install mcp`).

The client starts `trove mcp` as a subprocess and talks to it over stdin/stdout, as
Claude Desktop or VS Code do. Run it with the Python that has trove installed:

    .venv/bin/python contrib/mcp_client_example.py --config trove.toml "proxy timeout"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(config: str, query: str) -> None:
    server = StdioServerParameters(
        command=sys.executable,  # or "trove", wherever it is on PATH
        args=["-m", "query.cli", "--quiet", "--config", config, "mcp"],
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        print("tools:", ", ".join(tool.name for tool in tools.tools))

        # Every collection at once; each hit's id is what its collection's get tool takes.
        found = await session.call_tool("search", {"query": query, "max_results": 3})
        hits = (found.structured_content or {}).get("hits", [])
        for hit in hits:
            print(f"{hit['collection']:<13} {hit['id']}")

        # A tool error is a result with is_error set, its text naming the error code.
        missing = await session.call_tool("get_command", {"name": "no-such-command"})
        print("error:", missing.is_error, missing.content[0].text if missing.content else "")

        first = next((h for h in hits if h["collection"] == "reports"), None)
        if first:
            command, report = first["id"].split("/", 1)
            got = await session.call_tool(
                "get_report", {"command_name": command, "report_name": report}
            )
            content = (got.structured_content or {}).get("content", "")
            print("report:", json.dumps(content.splitlines()[0] if content else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="trove.toml", help="trove's config file")
    parser.add_argument("query", nargs="?", default="proxy timeout")
    args = parser.parse_args()
    asyncio.run(main(args.config, args.query))
