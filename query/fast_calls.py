"""A plain ``tools/call`` over HTTP, answered without the SDK's per-request machinery.

In stateless mode the MCP SDK makes, for every POST, a transport, a dispatcher, a
connection and a server task, and passes the message through memory streams to reach
the tool: about twice the CPU of the search itself (bench/bench_http.py). The tools are
read-only and keep no session state, so a POST that is nothing but one ``tools/call``
request is answered here: the same checks on the request (the SDK's own DNS-rebinding
guard, content type, accepted answer type, protocol version, body size, message
shape), the same ``call_tool`` (argument checks and trove's error codes,
query/mcp_server.py), the same result and error wrapping as the SDK's tool handler, the
same JSON-RPC answer. Anything else (``initialize``, ``tools/list``, notifications,
batches, a session id, a request any check would refuse, a JSON-RPC error) goes to the
SDK's app with its body as read, and gets the SDK's answer, refusals included.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.streamable_http import CONTENT_TYPE_JSON, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    JSONRPCRequest,
    JSONRPCResponse,
    TextContent,
    jsonrpc_message_adapter,
)
from mcp_types import DEFAULT_NEGOTIATED_VERSION
from mcp_types import methods as spec
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from query.mcp_server import TroveServer

log = logging.getLogger(__name__)


class FastToolCalls:
    """ASGI middleware before the SDK's app: answers a POST to ``path`` that is one plain
    ``tools/call`` request; hands any other request to ``app``."""

    def __init__(self, app: ASGIApp, server: TroveServer, path: str) -> None:
        self.app = app
        self.server = server
        self.path = path
        # The SDK's guard, with the settings its app was made with (made before this).
        self.guard = TransportSecurityMiddleware(server.session_manager.security_settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        read = await _read_body(receive, self.server.session_manager.max_request_body_size)
        if read is None:
            return  # the client went away
        body, whole = read
        if whole:
            request = Request(scope)
            call = await self._plain_call(request, body)
            if call is not None:
                answer = await self._answer(*call)
                if answer is not None:
                    await _send_json(send, answer)
                    return
        await self.app(scope, _replay(body, whole, receive), send)

    async def _plain_call(
        self, request: Request, body: bytes
    ) -> tuple[JSONRPCRequest, CallToolRequestParams, str] | None:
        """The request and its parameters, if the SDK would take it as they are and
        run the tool; else None."""
        headers = request.headers
        version = headers.get("mcp-protocol-version", DEFAULT_NEGOTIATED_VERSION)
        content_type = headers.get("content-type", "").split(";")[0].split(",")
        if (
            "mcp-session-id" in headers
            # (another version goes the SDK's other way: StreamableHTTPSessionManager)
            or version not in HANDSHAKE_PROTOCOL_VERSIONS
            or "tools/call" in self.server._lowlevel_server.cache_hints
            or not check_accept_headers(request)[0]
            or all(part.strip() != CONTENT_TYPE_JSON for part in content_type)
        ):
            return None
        if await self.guard.validate_request(request, is_post=True) is not None:
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(from_json(body), by_name=False)
        except ValueError:  # not JSON, or not a JSON-RPC message (ValidationError is one)
            return None
        if not isinstance(message, JSONRPCRequest) or message.method != "tools/call":
            return None
        try:
            spec.validate_client_request("tools/call", version, message.params)
            params = CallToolRequestParams.model_validate(message.params or {}, by_name=False)
        except (KeyError, ValidationError):
            return None
        return message, params, version

    async def _answer(
        self, message: JSONRPCRequest, params: CallToolRequestParams, version: str
    ) -> JSONRPCResponse | None:
        """The SDK's tool handler (MCPServer._handle_call_tool) without its request
        context, and the result shaped for ``version`` as the SDK shapes it
        (ServerRunner._serialize); None for a JSON-RPC error. The SDK's server
        middleware is not run: an OpenTelemetry span, and a boundary for request state
        that trove's tools do not use."""
        try:
            result: Any = await self.server.call_tool(params.name, params.arguments or {})
        except MCPError:
            return None  # a JSON-RPC error: the SDK's to give
        except Exception as exc:  # as the SDK's handler: an error result
            if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
                log.info("Tool %r failed: %r", params.name, str(exc))
            else:
                log.exception("Tool %r raised an unexpected exception", params.name)
            result = CallToolResult(
                content=[TextContent(type="text", text=str(exc))], is_error=True
            )
        if not isinstance(result, CallToolResult):
            return None
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            shaped = spec.serialize_server_result("tools/call", version, dumped)
        except ValidationError:
            return None  # the SDK's error to give
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=shaped)


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool] | None:
    """The request's body, up to a little past ``limit`` bytes, and whether that is all
    of it (a larger one is left to the SDK, which refuses it); None if the client went
    away meanwhile."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), size <= limit
        if size > limit:
            return b"".join(chunks), False


def _replay(body: bytes, whole: bool, receive: Receive) -> Receive:
    """``receive`` as if nothing had been read: first ``body``, then the rest."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": not whole}
        return await receive()

    return replayed


async def _send_json(send: Send, answer: JSONRPCResponse) -> None:
    data = answer.model_dump_json(by_alias=True, exclude_none=True).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
