"""Reading a SearXNG instance's reply: the body within its bound and the deadline, an
HTTP status or a failed connection in words that say what to fix, and the JSON's
results as WebResults (values SearXNG may send malformed made safe)."""

from __future__ import annotations

import json
import logging
import math
import socket
import time
from collections.abc import Mapping

import httpx
from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)


class WebResult(BaseModel):
    """One web page found by SearXNG."""

    model_config = ConfigDict(frozen=True)

    title: str = Field(description="The page's title.")
    content: str = Field(description="A snippet of the page's text (may be empty).")
    url: str = Field(description="The page's address.")
    score: float | None = Field(
        description="SearXNG's own relevance score, as it sent it: higher is better, but it "
        "is not on a 0-1 scale (it grows with the number of engines that found the page). "
        "Null when the instance sent none."
    )
    engine: str = Field(description="The search engine that found the page (e.g. duckduckgo).")
    category: str = Field(description="SearXNG's category of the result (e.g. general, news).")
    published_date: str | None = Field(
        default=None, description="When the page was published, as SearXNG sent it (ISO 8601)."
    )


class EndpointFailure(Exception):
    """One endpoint failed; the message reads after 'SearXNG at <endpoint> '."""


def read_body(
    response: httpx.Response, deadline: float, limit: int, truncate: bool = False
) -> bytes:
    # httpx's timeout bounds each read; the deadline bounds a server that trickles bytes.
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            if truncate:
                break
            raise EndpointFailure(
                f"sent more than {limit // (1024 * 1024)} MB; that is not a search answer"
            )
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the answer took longer than the timeout to arrive")
    return b"".join(chunks)


def status_problem(response: httpx.Response, where: str) -> str:
    status = response.status_code
    said = f"answered HTTP {status} {response.reason_phrase}".rstrip()
    if status == 403:
        return (
            f"{said}: the instance must enable JSON output; add `search: formats: "
            "[html, json]` to its settings.yml and restart it"
        )
    if status == 429:
        return (
            f"{said}: rate limited by the instance; wait and retry, raise [web] "
            "min_interval_s, or exempt this client in the instance's limiter settings"
        )
    if status == 404:
        return f"{said}: is {where} the instance's base URL?"
    if status >= 500:
        return f"{said}: the instance failed; check its logs or try again later"
    return f"{said}: expected 200 with a JSON body"


def connection_problem(exc: httpx.HTTPError, endpoint: str, where: str) -> str:
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"is not an http:// or https:// URL; check {where}"
    cause = _root_os_error(exc)
    if isinstance(cause, socket.gaierror):
        host = httpx.URL(endpoint).host
        return (
            f"cannot be reached: the host name {host!r} does not resolve ({cause.strerror or cause}); "
            f"check {where}"
        )
    if isinstance(cause, ConnectionRefusedError):
        return f"refused the connection: is SearXNG running there? check {where}"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot be reached ({cause or exc}); check the address and the network"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"broke the connection without a proper HTTP answer ({exc})"
    return f"failed: {type(exc).__name__}: {exc}"


def _root_os_error(exc: BaseException) -> OSError | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError):
            return current
        current = current.__cause__ or current.__context__
    return None


def parse_body(body: bytes, content_type: str, where: str) -> tuple[WebResult, ...]:
    text = body.decode("utf-8-sig", errors="replace")
    start = text.lstrip()[:1]
    if start not in ("{", "["):
        raise EndpointFailure(
            f"did not answer JSON (content-type {content_type or 'none'!r}, body starts "
            f"{_first_bytes(text)}): is it a SearXNG instance with JSON output enabled "
            "(`search: formats: [html, json]` in its settings.yml)"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EndpointFailure(
            f"answered malformed JSON ({exc.msg} at character {exc.pos}); the body starts "
            f"{_first_bytes(text)}"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise EndpointFailure(
            f"answered JSON without a 'results' list (starts {_first_bytes(text)}): is "
            f"{where} a SearXNG instance?"
        )
    log.debug(
        "parsed JSON: %d raw results, number_of_results=%s, %d answers, unresponsive engines: %s",
        len(data["results"]),
        data.get("number_of_results", "(not sent)"),
        len(data.get("answers") or ()),
        data.get("unresponsive_engines") or "none",
    )
    results = []
    for position, raw in enumerate(data["results"]):
        result = _to_result(raw)
        if result is None:
            log.debug("skipped raw result %d (no url): %r", position, raw)
        else:
            results.append(result)
    log.debug("mapped %d results", len(results))
    return tuple(results)


def _first_bytes(text: str, n: int = 60) -> str:
    head = " ".join(text[: n * 2].split())
    return repr(head[:n] + ("..." if len(head) > n else ""))


def _to_result(raw: object) -> WebResult | None:
    if not isinstance(raw, Mapping):
        return None
    url = raw.get("url")
    if not isinstance(url, str) or not url:
        return None
    engine = raw.get("engine")
    if not engine:
        engines = raw.get("engines")
        engine = engines[0] if isinstance(engines, list) and engines else ""
    published = raw.get("publishedDate") or raw.get("pubdate") or raw.get("published_date")
    return WebResult(
        title=_text(raw.get("title")),
        content=_text(raw.get("content")),
        url=url,
        score=_score(raw.get("score")),
        engine=_text(engine),
        category=_text(raw.get("category")),
        published_date=published if isinstance(published, str) and published else None,
    )


def _score(value: object) -> float | None:
    # Python's JSON parser accepts NaN and Infinity and turns 1e400 into inf; passed on,
    # they would make our own JSON output invalid.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        score = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    return score if math.isfinite(score) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
