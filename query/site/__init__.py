"""trove's web page and JSON API, served by `trove serve` next to /mcp and /health.

``/`` searches every collection (the query language of query/syntax.py; ``/help`` shows
it); ``/reports/...``, ``/commands/...``, ``/conversations/...`` and ``/elog/...`` show
one document (an ELOG entry within its thread); ``/reports``, ``/reports/{command}``,
``/commands``, ``/elog?day=`` or ``?month=`` and ``/conversations/{date folder}`` list a
collection without a query; ``/status`` shows the indexes and the daemon; ``/api/{tool}``
is every MCP tool as a GET answering JSON. The modules: ``routes`` (the Starlette
routes), ``api``, ``search_page``, ``syntax_help`` (the help page's operators and
examples), ``browse`` (the lists), ``documents``, ``status_page`` and ``render`` (safe
HTML).
"""

from query.site.routes import add_routes

__all__ = ["add_routes"]
