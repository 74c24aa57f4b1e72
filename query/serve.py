"""Running the MCP server: over stdio (`trove mcp`), and over streamable HTTP together with
the daemon in one process (`trove serve`).

`trove serve` answers MCP at ``/mcp``, the daemon's health at ``/health``, and the web
page and JSON API of query/site/ (``/``, ``/api/{tool}``, ...). MCP over
HTTP is stateless with JSON answers: the tools are read-only and keep no session state,
so each call is one POST answered by one JSON body (no session, no event stream). It binds to
loopback by default; any other address needs a bearer token (``$TROVE_TOKEN``, else
``[server] token``), and once a token is set every request must carry it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hmac
import ipaddress
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from indexer.config import Settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from indexer.daemon import Daemon
    from indexer.seat import WatcherKind
    from query.mcp_server import TroveServer

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
TOKEN_ENV = "TROVE_TOKEN"
# How long open connections (an MCP client's event stream) may hold up a shutdown.
GRACEFUL_SHUTDOWN_S = 3  # uvicorn takes whole seconds
DAEMON_STOP_S = 60.0


class ServeError(Exception):
    """`trove serve` cannot start as asked; ``exit_code`` 2 for bad input, 1 otherwise."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# --------------------------------------------------------------------------- both


@contextlib.contextmanager
def watching(server: TroveServer, kind: WatcherKind) -> Iterator[Daemon]:
    """This process's watcher, in a thread, while the server serves: it takes the index
    folder's seat when it is free (now, or when the process holding it stops or dies),
    catches up and watches; meanwhile it stands by. A process that cannot write the
    index folder serves the index as it is (a warning says so). Stopped on exit."""
    from indexer.daemon import CannotWatch, Daemon

    daemon = Daemon(server.trove_settings, kind=kind)

    def run() -> None:
        try:
            daemon.run()
        except CannotWatch as exc:
            log.warning("%s", exc)
        except Exception:  # the server goes on: its answers say that nobody watches
            log.exception("the watcher stopped")

    thread = threading.Thread(target=run, name="trove-watcher")
    server.ctx.watcher.local = daemon
    try:
        thread.start()  # within the try: a Ctrl-C as it starts still stops it
        yield daemon
    finally:
        daemon.stop()
        if thread.ident is not None:
            thread.join(DAEMON_STOP_S)
        if thread.is_alive():
            log.error("the watcher did not stop within %g s", DAEMON_STOP_S)


def _warming_up(settings: Settings) -> TroveServer:
    """The MCP server, its query context made first and the reports index warmed up from
    it in a thread meanwhile (query/reports/warm_up.py): importing the MCP SDK alone
    takes most of a second."""
    from query.context import QueryContext
    from query.reports.warm_up import start_warm_up

    ctx = QueryContext.from_settings(settings)
    start_warm_up(ctx)
    from query.mcp_server import build_server

    return build_server(settings, ctx)


# --------------------------------------------------------------------------- stdio


def run_stdio(settings: Settings) -> int:
    """`trove mcp`: MCP on stdin/stdout until EOF, and the index kept fresh meanwhile (this
    process watches unless another trove process does); the exit code.

    SIGTERM or SIGINT (a client that stops its server, Ctrl-C) stop the watcher, which
    ends any commit it is in, and end the process at once (0, or 130 for SIGINT): the
    SDK reads stdin in a thread that nothing can cancel, so waiting for the server's
    tasks to end would wait for the client's next line."""
    import anyio

    server = _warming_up(settings)
    try:
        with watching(server, "mcp") as daemon:

            def on_signal(signum: int, frame: Any) -> None:
                daemon.stop()
                stopped.wait(DAEMON_STOP_S)
                logging.shutdown()
                os._exit(130 if signum == signal.SIGINT else 0)

            stopped = daemon.finished
            with _handling(on_signal):
                anyio.run(server.run_stdio_async)
    finally:
        server.close()
    return 0


# --------------------------------------------------------------------------- HTTP


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_token(settings: Settings) -> str:
    return os.environ.get(TOKEN_ENV, "").strip() or settings.server.token.strip()


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {
                    "error": "unauthorized",
                    "message": "this trove server needs its bearer token: send the header "
                    f"'Authorization: Bearer <token>' (${TOKEN_ENV} or [server] token)",
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="trove"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        scheme, _, credentials = given.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)


def http_app(server: TroveServer, host: str, token: str = "") -> ASGIApp:
    """MCP over streamable HTTP at /mcp, the watcher's health at /health, and the web page
    and JSON API (query/site/)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from indexer.status import builds, health_word
    from query import site
    from query.fast_calls import FastToolCalls

    settings = server.trove_settings

    async def health(request: Request) -> JSONResponse:
        # The watcher's own view when this process is it (also when a full disk keeps
        # the status file from being written), else what its status file says.
        status = server.ctx.watcher.status()
        indexing = builds(settings)
        # 200 only once a live watcher has caught up every collection; 503 while it
        # catches up, while a first build runs, while changes cannot land (a full disk,
        # a read-only index folder), and when no watcher runs.
        word = health_word(status, bool(indexing))
        body: dict[str, Any] = {"status": word, "mcp": MCP_PATH, "watcher": status}
        if indexing:
            body["indexing"] = indexing
        return JSONResponse(body, status_code=200 if word == "ok" else 503)

    server.custom_route(HEALTH_PATH, methods=["GET"])(health)
    site.add_routes(server)
    sdk_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, stateless_http=True, json_response=True
    )
    app = FastToolCalls(sdk_app, server, MCP_PATH)
    return BearerAuth(app, token) if token else app


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free port)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        busy = exc.errno == errno.EADDRINUSE
        raise ServeError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            + ("; is another trove serve running? Choose another --port" if busy else ""),
            exit_code=1,
        ) from None
    return sock


def url_of(sock: socket.socket, path: str = "") -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}"


def serve(
    settings: Settings,
    host: str | None = None,
    port: int | None = None,
    announce: Callable[[str], None] = log.warning,
) -> int:
    """`trove serve`: the daemon and MCP over HTTP until SIGTERM/SIGINT; the exit code.

    Raises ServeError before anything starts when the host or token is wrong.
    """
    import anyio
    import uvicorn

    host = (host or settings.server.host).strip()
    port = settings.server.port if port is None else port
    token = server_token(settings)
    if not token and not is_loopback(host):
        raise ServeError(
            f"refusing to serve on {host}, which is not a loopback address, without a bearer "
            f"token: set ${TOKEN_ENV} or [server] token (clients then send 'Authorization: "
            "Bearer <token>'), or bind 127.0.0.1"
        )
    sock = listen(host, port)
    signals: list[int] = []
    web: Any = None

    def on_signal(signum: int, frame: Any) -> None:
        signals.append(signum)
        if web is not None:
            if web.should_exit and signum == signal.SIGINT:
                web.force_exit = True  # a second Ctrl-C: do not wait for open connections
            web.should_exit = True

    server = _warming_up(settings)
    try:
        with _handling(on_signal), watching(server, "serve"):
            web = _uvicorn_server()(
                uvicorn.Config(
                    http_app(server, host, token),
                    log_config=None,
                    access_log=False,
                    lifespan="on",
                    timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
                )
            )
            announce(
                f"trove serve: MCP at {url_of(sock, MCP_PATH)}, health at "
                f"{url_of(sock, HEALTH_PATH)}, the page at {url_of(sock, '/')}"
                f"{' (bearer token required)' if token else ''}; "
                f"pid {os.getpid()}, index {settings.index_dir}"
            )
            if not signals:  # a signal before uvicorn started: do not start it
                anyio.run(functools.partial(web.serve, sockets=[sock]))
    finally:
        sock.close()
        server.close()
    return 130 if signals and signals[-1] == signal.SIGINT else 0


@contextlib.contextmanager
def _handling(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGTERM and SIGINT call ``handler`` (which stops uvicorn and the daemon alike)."""
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _uvicorn_server() -> Any:
    """uvicorn's Server without its own signal handling (uvicorn is imported lazily)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # serve() handles the signals itself: they must stop the daemon too, and
            # uvicorn would re-raise them after its shutdown.
            yield

    return Server
