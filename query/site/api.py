"""``GET /api/{tool}?arg=value...``: every MCP tool over plain HTTP, answering the tool's
structured content as JSON.

The query string is read by the tool's input schema (a list argument is repeated:
``?collections=reports&collections=elog``; whole numbers and true/false are converted)
and the call goes through the MCP server's own ``call_tool``, so an argument is checked
and an error worded exactly as for an MCP client. Errors answer
``{"error": {"code": "...", "message": "..."}}`` with the HTTP status of their code.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from query.errors import INPUT_CODES

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from query.mcp_server import TroveServer

# The HTTP status of each error code (docs/ERRORS.md).
STATUS: dict[str, int] = {
    **dict.fromkeys(INPUT_CODES, 400),
    "NOT_FOUND": 404,
    "DIRECTORY_NOT_FOUND": 404,
    "UPSTREAM_ERROR": 502,
    "INDEX_UNAVAILABLE": 503,
    "SEARCH_TIMEOUT": 504,
}
INTERNAL_ERROR = "INTERNAL_ERROR"
# A tool error reads "Error executing tool NAME: CODE: what went wrong and what to do".
_CODED = re.compile(r"(?:Error executing tool \S+: )?([A-Z][A-Z_]+): (.*)", re.DOTALL)
_WHOLE = re.compile(r"[+-]?\d+")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ApiError(Exception):
    """An API call that cannot be made as asked; ``code`` is one of query/errors.py's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        return STATUS.get(self.code, 500)


def status_of(code: str) -> int:
    return STATUS.get(code, 500)


def error_of(exc: ToolError) -> ApiError:
    """The code and message of a tool's error (its text starts with the code)."""
    m = _CODED.fullmatch(str(exc))
    if m is None:
        return ApiError(INTERNAL_ERROR, str(exc))
    return ApiError(m.group(1), m.group(2))


def arguments(pairs: list[tuple[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's arguments from query-string pairs, by its input schema. Values that do not
    convert are passed on as text, for the tool's own check to word the error."""
    properties = schema.get("properties", {})
    given: dict[str, list[str]] = {}
    for key, value in pairs:
        given.setdefault(key, []).append(value)
    args: dict[str, Any] = {}
    for key, values in given.items():
        kinds = _kinds(properties.get(key, {}))
        if "array" in kinds:
            args[key] = values
            continue
        if len(values) > 1:
            raise ApiError("INVALID_ARGUMENT", f"{key} is given {len(values)} times; give it once")
        args[key] = _converted(values[0], kinds)
    return args


def _kinds(prop: dict[str, Any]) -> set[str]:
    options = prop.get("anyOf", [prop])
    return {o.get("type", "") for o in options if isinstance(o, dict)}


def _converted(value: str, kinds: set[str]) -> Any:
    text = value.strip()
    if "integer" in kinds and _WHOLE.fullmatch(text):
        return int(text)
    if "boolean" in kinds and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    return value


async def call(
    server: TroveServer,
    tool: str,
    pairs: list[tuple[str, str]],
    schemas: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The tool's structured content (``schemas``: each tool's input schema); raises
    ApiError."""
    if tool not in schemas:
        raise ApiError(
            "NOT_FOUND", f"there is no tool {tool!r}; the tools are {', '.join(schemas)}"
        )
    args = arguments(pairs, schemas[tool])
    try:
        result = await server.call_tool(tool, args)
    except UnexpectedToolError as exc:
        raise ApiError(INTERNAL_ERROR, f"{tool} failed: {exc.__cause__ or exc}") from exc
    except ToolError as exc:
        raise error_of(exc) from exc
    content = getattr(result, "structured_content", None)
    if not isinstance(content, dict):
        raise ApiError(INTERNAL_ERROR, f"{tool} gave no structured content")
    return content


def error_response(error: ApiError) -> JSONResponse:
    from starlette.responses import JSONResponse

    return JSONResponse(
        {"error": {"code": error.code, "message": error.message}}, status_code=error.status
    )


def endpoint(server: TroveServer) -> Any:
    """The Starlette endpoint of /api/{tool}."""
    from starlette.responses import JSONResponse

    schemas: dict[str, dict[str, Any]] = {}

    async def api(request: Request) -> JSONResponse:
        if not schemas:  # the tools never change once the server is built
            schemas.update({t.name: t.input_schema for t in await server.list_tools()})
        tool = request.path_params["tool"]
        try:
            content = await call(server, tool, list(request.query_params.multi_items()), schemas)
        except ApiError as error:
            return error_response(error)
        return JSONResponse(content)

    return api
