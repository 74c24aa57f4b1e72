"""The pages' Starlette routes, added to `trove serve`'s app (query/serve.py's http_app).

Every page is rendered on the server from query/site/templates (Jinja2, autoescaped) and
works without JavaScript; the CSS and the one small script (``/`` focuses the search box)
come from this host. The Content-Security-Policy lets nothing inline run, so even a
document that got a script past the renderers could not run it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from indexer.errors import IndexLockedError, StoreError
from indexer.status import human_size, local_time
from query.errors import TroveError
from query.mcp_server import elog_filter_values
from query.site import api, documents, render, search_page, status_page

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from query.mcp_server import TroveServer
    from query.reports import Report

log = logging.getLogger(__name__)
T = TypeVar("T")

HERE = Path(__file__).resolve().parent
STATIC = {"trove.css": "text/css; charset=utf-8", "trove.js": "text/javascript; charset=utf-8"}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; "
    "base-uri 'none'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["size"] = human_size
    env.filters["when"] = local_time
    env.filters["frontmatter"] = render.frontmatter_value
    return env


async def _run(call: Callable[..., T], *args: Any) -> T:
    """A query function in a worker thread; index troubles become trove's error codes
    (as the MCP tools give them)."""
    try:
        return await anyio.to_thread.run_sync(functools.partial(call, *args))
    except IndexLockedError as exc:
        raise TroveError("SEARCH_TIMEOUT", str(exc)) from exc
    except StoreError as exc:
        raise TroveError(
            "DIRECTORY_NOT_FOUND", f"the index cannot be used: {exc} (check [index] dir)"
        ) from exc


def add_routes(server: TroveServer) -> None:
    """The search page, the document pages, /status, /api/{tool} and /static/ on the
    server's HTTP app (call before its streamable_http_app is made)."""
    from starlette.responses import HTMLResponse, Response

    settings = server.trove_settings
    ctx = server.ctx
    env = templates()
    static = {name: (HERE / "static" / name).read_bytes() for name in STATIC}
    choices = elog_filter_values(settings)

    def page(name: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        values.setdefault("q", "")
        body = env.get_template(name).render(**values)
        return HTMLResponse(body, status_code=status_code, headers=HEADERS)

    def error_page(error: TroveError, **values: Any) -> HTMLResponse:
        status = api.status_of(error.code)
        return page(
            "error.html",
            status,
            status=status,
            code=error.code,
            message=error.message,
            title=f"{status} {error.code}",
            **values,
        )

    def route(path: str) -> Callable[[Callable[[Request], Any]], Any]:
        return server.custom_route(path, methods=["GET", "HEAD"], include_in_schema=False)

    @route("/")
    async def search(request: Request) -> Response:
        try:
            form = search_page.SearchForm.from_params(request.query_params)
        except TroveError as error:
            return error_page(error, q=request.query_params.get("q", ""))
        values: dict[str, Any] = {
            "form": form,
            "q": form.q,
            "choices": choices,
            "collections": search_page.LABELS,
            "sizes": search_page.PAGE_SIZES,
            "answer": None,
            "error": None,
            "title": form.q or "search",
        }
        if not form.asked:
            return page("search.html", **values)
        try:
            answer = await _run(search_page.run, ctx, form)
        except TroveError as error:
            values["error"] = error
            return page("search.html", api.status_of(error.code), **values)
        terms = render.query_terms(form.q)
        values["answer"] = answer
        values["snippets"] = [render.highlight(h.hit.snippet, terms) for h in answer.hits]
        return page("search.html", **values)

    def document(
        path: str, fetch: Callable[..., Any], *params: str
    ) -> Callable[[Callable[[Any, str], Awaitable[Response]]], Any]:
        """A document page: ``fetch(ctx, *path params)`` (a TroveError answers the error
        page), then ``show(found, q)`` (``q``: the query whose words to highlight)."""

        def register(show: Callable[[Any, str], Awaitable[Response]]) -> Any:
            @route(path)
            async def handler(request: Request) -> Response:
                q = request.query_params.get("q", "")
                try:
                    found = await _run(fetch, ctx, *(request.path_params[p] for p in params))
                except TroveError as error:
                    return error_page(error, q=q)
                return await show(found, q)

            return handler

        return register

    @document("/reports/{command}/{report}", documents.report, "command", "report")
    async def report(found: Report, q: str) -> Response:
        html = await anyio.to_thread.run_sync(render.markdown, found.content, render.query_terms(q))
        return page("report.html", report=found, html=html, q=q, title=found.report_name)

    @document("/commands/{name}", documents.command, "name")
    async def command(found: documents.CommandPage, q: str) -> Response:
        html = render.markdown(found.command.content, render.query_terms(q))
        return page(
            "command.html",
            command=found.command,
            reports=found.reports,
            html=html,
            q=q,
            title=found.command.name,
        )

    @document("/conversations/{path:path}", documents.conversation, "path")
    async def conversation(found: documents.ConversationFile, q: str) -> Response:
        terms = render.query_terms(q)
        lines = [render.highlight(line, terms) for line in found.lines]
        return page("conversation.html", file=found, lines=lines, q=q, title=found.conversation)

    @document("/elog/{message_id}", documents.elog_thread, "message_id")
    async def elog(found: documents.ElogThread, q: str) -> Response:
        terms = render.query_terms(q)
        bodies = [render.elog_body(e.raw, e.encoding, e.entry.body, terms) for e in found.entries]
        asked = found.thread.message_id
        title = next((e.entry.title for e in found.entries if e.entry.elog_id == asked), "")
        return page(
            "elog.html",
            thread=found.thread,
            entries=list(zip(found.entries, bodies, strict=True)),
            q=q,
            title=title or f"ELOG {asked}",
        )

    @route("/status")
    async def status(request: Request) -> Response:
        shown = await _run(status_page.status, ctx.watcher)
        return page("status.html", status=shown, title="status")

    @route("/static/{name}")
    async def static_file(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in static:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(
            static[name],
            media_type=STATIC[name],
            headers={**HEADERS, "Cache-Control": "public, max-age=3600"},
        )

    server.custom_route("/api/{tool}", methods=["GET"], include_in_schema=False)(
        api.endpoint(server)
    )
