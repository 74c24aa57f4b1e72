"""trove's query side: the searches, their answers, and the MCP server, CLI and web page
that serve them."""

from importlib.metadata import PackageNotFoundError, version


def trove_version() -> str:
    """trove's version as installed (what `trove --version` and MCP's initialize report)."""
    try:
        return version("trove")
    except PackageNotFoundError:  # run from a tree that was never installed
        return "0+unknown"
