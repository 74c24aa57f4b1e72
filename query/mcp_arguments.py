"""The words of an argument the MCP SDK rejected before a tool ran (its schema: a number
out of range, text where a number belongs), with the code and wording the query
functions (query/args.py) give the same argument."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from query.errors import ErrorCode

# An argument the SDK rejects gets the code the query functions give the same argument.
ARGUMENT_CODES: dict[str, ErrorCode] = {
    "query": "INVALID_QUERY",
    "command_filter": "INVALID_COMMAND_FILTER",
    "command_name": "INVALID_COMMAND_FILTER",
    "date_range": "INVALID_DATE_RANGE",
    "since": "INVALID_DATE_RANGE",
    "until": "INVALID_DATE_RANGE",
}


def argument_error(exc: ValidationError, schema: dict[str, Any]) -> str:
    """'CODE: message' for arguments pydantic rejected, in the words of query/args.py."""
    problems: list[str] = []
    code: ErrorCode | None = None
    for err in exc.errors(include_url=False):
        field = str(err["loc"][0]) if err["loc"] else "arguments"
        code = code or ARGUMENT_CODES.get(field, "INVALID_ARGUMENT")
        problems.append(_problem(field, err, schema.get("properties", {}).get(field, {})))
    return f"{code or 'INVALID_ARGUMENT'}: {'; '.join(problems)}"


def _problem(field: str, err: Any, prop: dict[str, Any]) -> str:
    kind = err["type"]
    given = _shown(err.get("input"))
    if kind == "missing":
        return f"{field} is required" + (
            "; give the words to search for" if field == "query" else ""
        )
    if kind in ("greater_than_equal", "less_than_equal"):
        return f"{field} must be {_allowed_range(prop)}, got {given}"
    if kind.startswith("int_"):
        return f"{field} must be a whole number, got {given}"
    if kind.startswith("bool_"):
        return f"{field} must be true or false, got {given}"
    if kind == "string_too_short":
        return f"{field} is empty; give one or more words to search for"
    if kind == "string_too_long":
        return (
            f"{field} is {len(err.get('input') or '')} characters long; "
            f"the limit is {err['ctx']['max_length']}"
        )
    if kind.startswith("string_"):
        return f"{field} must be text, got {given}"
    return f"{field}: {err['msg']}, got {given}"


def _allowed_range(prop: dict[str, Any]) -> str:
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f"between {low} and {high}"
    return f"at least {low}" if low is not None else f"at most {high}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def and_list(items: Any) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)
