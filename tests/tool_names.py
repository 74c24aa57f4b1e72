"""The MCP tools trove registers, in the order it lists them (tests of the MCP server and
of the JSON API that serves each one)."""

TOOLS = [
    "search_reports",
    "list_command_reports",
    "get_report",
    "search_commands",
    "get_command",
    "list_commands",
    "search_workspace",
    "get_conversation",
    "search_elog",
    "get_elog_thread",
    "search",
    "search_web",
]
