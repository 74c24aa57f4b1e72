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
import hmac
import ipaddress
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from indexer.config import Settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

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


def build_missing_indexes(settings: Settings) -> list[str]:
    """Build the index of every collection that has none yet; the names built."""
    from indexer.reindex import reindex
    from indexer.sources.registry import SOURCES, get_source
    from indexer.store import CollectionIndex, IndexLockedError, StoreError

    missing = []
    for name in SOURCES:
        try:
            if CollectionIndex(settings.index_dir, get_source(name)).open() is None:
                missing.append(name)
        except StoreError as exc:  # a folder that is not ours: the searches say so
            log.warning("%s", exc)
    if missing:
        log.info("building the %s index(es) (first start)", ", ".join(missing))
        try:
            reindex(settings, missing)
        except IndexLockedError as exc:  # a daemon is building them: searches wait for it
            log.warning("%s", exc)
    return missing


# --------------------------------------------------------------------------- stdio


def run_stdio(settings: Settings) -> None:
    """`trove mcp`: build what is missing, then serve MCP on stdin/stdout until EOF."""
    import anyio

    from query.mcp_server import build_server

    build_missing_indexes(settings)
    server = build_server(settings)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        server.close()


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


def http_app(
    server: TroveServer,
    host: str,
    token: str = "",
    daemon_alive: Callable[[], bool] | None = None,
    daemon_health: Callable[[], dict[str, Any]] | None = None,
) -> ASGIApp:
    """MCP over streamable HTTP at /mcp, the daemon's status at /health, and the web page
    and JSON API (query/site/)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from indexer.status import STUCK_S, builds, read_daemon_status
    from query import site
    from query.fast_calls import FastToolCalls

    settings = server.trove_settings

    async def health(request: Request) -> JSONResponse:
        status = read_daemon_status(settings)
        if status is not None and daemon_health is not None:
            # In-process: the daemon's own view, also when a full disk keeps the status
            # file from being written.
            status = {**status, **daemon_health()}
            status["stuck"] = time.time() - status["heartbeat"] > STUCK_S
        running = daemon_alive() if daemon_alive else bool(status and status.get("alive"))
        # 503 while changes cannot land (a full disk, a read-only index folder), and
        # while a first build runs (searches of that collection cannot answer yet).
        ok = running and status is not None and not status.get("stuck") and not status.get("fault")
        indexing = builds(settings)
        word = ("indexing" if indexing else "ok") if ok else "unavailable"
        body: dict[str, Any] = {"status": word, "mcp": MCP_PATH, "daemon": status}
        if indexing:
            body["indexing"] = indexing
        return JSONResponse(body, status_code=200 if word == "ok" else 503)

    server.custom_route(HEALTH_PATH, methods=["GET"])(health)
    site.add_routes(server, daemon_alive, daemon_health)
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

    from indexer.daemon import Daemon
    from query.mcp_server import build_server

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
    daemon = Daemon(settings)
    failure: list[Exception] = []

    def run_daemon() -> None:
        try:
            daemon.run()
        except Exception as exc:  # noqa: BLE001 (reported by serve, and it stops the server)
            failure.append(exc)

    thread = threading.Thread(target=run_daemon, name="trove-daemon")
    signals: list[int] = []
    web: Any = None

    def on_signal(signum: int, frame: Any) -> None:
        signals.append(signum)
        daemon.stop()  # and once it has stopped, so does the web server (below)
        if web is not None:
            if web.should_exit and signum == signal.SIGINT:
                web.force_exit = True  # a second Ctrl-C: do not wait for open connections
            web.should_exit = True

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_when_daemon_ends)
            try:
                await web.serve(sockets=[sock])
            finally:
                daemon.stop()

    async def stop_when_daemon_ends() -> None:
        await anyio.to_thread.run_sync(thread.join)
        web.should_exit = True

    server: TroveServer | None = None
    with _handling(on_signal):
        thread.start()
        try:
            server = build_server(settings)
            if failure:  # the daemon could not start (another one keeps this index)
                raise failure[0]
            web = _uvicorn_server()(
                uvicorn.Config(
                    http_app(
                        server,
                        host,
                        token,
                        daemon_alive=thread.is_alive,
                        daemon_health=daemon.health_snapshot,
                    ),
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
            anyio.run(main)
        finally:
            daemon.stop()
            thread.join(DAEMON_STOP_S)
            sock.close()
            if server is not None:
                server.close()
    if failure:
        raise failure[0]
    if thread.is_alive():
        log.error("the daemon did not stop within %g s", DAEMON_STOP_S)
        return 1
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
