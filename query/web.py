"""Web search through a SearXNG instance's JSON API (``GET {searxng_url}/search``).

A `WebSearcher` is built once per process from ``[web]`` settings and kept: it owns the
HTTP client, a TTL cache of answers and a per-process rate limit. `search_web` takes the
process's searcher for its settings from `shared_searcher`, so one-off calls share the
cache and the rate limit too. The endpoints
(``searxng_url``, then each of ``fallback_urls``) are tried in order; any failure of one
(connection, timeout, 403, 429, other HTTP status, a body that is not SearXNG JSON)
moves on to the next, and when all fail the error lists each endpoint's failure.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Literal, Self

import httpx
from pydantic import BaseModel, Field

from indexer.config import Settings, WebSettings
from query import tools
from query.args import check_query, check_range
from query.errors import TroveError
from query.searxng import (
    EndpointFailure,
    WebResult,
    connection_problem,
    parse_body,
    read_body,
    status_problem,
)

log = logging.getLogger(__name__)

TIME_RANGES = ("day", "week", "month", "year")
DEFAULT_CATEGORIES = "general"
DEFAULT_LANGUAGE = "en"
# A SearXNG page is tens of kilobytes; anything far larger is not a search answer.
MAX_BODY_BYTES = 10 * 1024 * 1024
CACHE_MAX_ENTRIES = 256

TimeRange = Literal["day", "week", "month", "year"]

_CATEGORIES_RE = re.compile(r"[A-Za-z0-9_ ]+(,[A-Za-z0-9_ ]+)*")
_LANGUAGE_RE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*|all|auto")


class WebSearchResponse(BaseModel):
    """The answer to a web search."""

    query: str = Field(description="The query that was searched.")
    total: int = Field(description="How many results this answer holds.")
    results: list[WebResult] = Field(description="The results, in SearXNG's order.")


class _TurnTooFar(Exception):
    """The rate limit's next free turn is further away than a caller may wait."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"the next free turn is {wait:.1f} s away")
        self.wait = wait


class _TTLCache:
    """A small thread-safe cache whose entries expire ``ttl`` seconds after they were stored."""

    def __init__(self, ttl: float, clock: Callable[[], float], max_entries: int) -> None:
        self.ttl = ttl
        self._clock = clock
        self._max = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[tuple[str, str], ...], tuple[float, Any]] = OrderedDict()

    def get(self, key: tuple[tuple[str, str], ...]) -> Any | None:
        if self.ttl <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored, value = entry
            if self._clock() - stored >= self.ttl:
                del self._entries[key]
                return None
            return value

    def put(self, key: tuple[tuple[str, str], ...], value: Any) -> None:
        if self.ttl <= 0:
            return
        with self._lock:
            self._entries[key] = (self._clock(), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class _RateLimiter:
    """Spaces upstream requests at least ``interval`` seconds apart, across threads.

    Each caller reserves the next free turn under a lock, then sleeps until it comes,
    so waiting callers never busy-loop and never take the same turn.
    """

    def __init__(
        self,
        interval: float,
        max_wait: float,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.interval = interval
        self.max_wait = max_wait
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_turn: float | None = None

    def wait_turn(self) -> float:
        """Wait (bounded) until this caller may send a request; return the seconds waited."""
        if self.interval <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            turn = now if self._next_turn is None else max(now, self._next_turn)
            wait = turn - now
            if wait > self.max_wait:
                raise _TurnTooFar(wait)
            self._next_turn = turn + self.interval
        if wait > 0:
            log.debug("rate limit: waiting %.3f s ([web] min_interval_s = %g)", wait, self.interval)
            self._sleep(wait)
        return wait


class WebSearcher:
    """Searches the web through SearXNG; keep one per process (it caches and rate-limits).

    ``clock`` and ``sleep`` drive the cache and the rate limit (tests pass fakes); the
    HTTP timeout always runs on real time.
    """

    def __init__(
        self,
        settings: WebSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        max_wait_s: float | None = None,
    ) -> None:
        self.settings = settings
        self.endpoints = _endpoints(settings)
        self._client = httpx.Client(
            timeout=settings.timeout_s,
            follow_redirects=True,
            headers={"Accept": "application/json", "User-Agent": "trove (web search)"},
        )
        self._cache = _TTLCache(settings.cache_ttl_s, clock, CACHE_MAX_ENTRIES)
        # Where the wait bound comes from, for the error that says how to move it.
        self._wait_bound = (
            ("max_wait_s", "raise max_wait_s")
            if max_wait_s is not None
            else (
                "the larger of [web] timeout_s and min_interval_s",
                "raise [web] timeout_s to let searches wait longer",
            )
        )
        if max_wait_s is None:
            max_wait_s = max(settings.timeout_s, settings.min_interval_s)
        self._limiter = _RateLimiter(settings.min_interval_s, max_wait_s, clock, sleep)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def clear_cache(self) -> None:
        self._cache.clear()

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        categories: str | None = None,
        language: str | None = None,
        time_range: str | None = None,
        pageno: int | None = None,
        safesearch: int | None = None,
    ) -> WebSearchResponse:
        """Search the web; at most ``limit`` (1-50) results, in SearXNG's order.

        Raises `TroveError`: INVALID_QUERY / INVALID_ARGUMENT for bad arguments,
        UPSTREAM_ERROR when no endpoint gave an answer.
        """
        text = check_query(query, hint="give the words to search the web for")
        tools.WEB_LIMIT.check(limit)
        params = _request_params(text, categories, language, time_range, pageno, safesearch)
        key = tuple(sorted(params.items()))
        results = self._cache.get(key)
        if results is not None:
            log.debug("cache hit for %s (%d results cached)", params, len(results))
        else:
            log.debug("cache miss for %s", params)
            try:
                self._limiter.wait_turn()
            except _TurnTooFar as exc:
                raise TroveError("UPSTREAM_ERROR", self._no_turn_message(exc.wait)) from None
            results = self._fetch(params)
            self._cache.put(key, results)
        chosen = list(results[:limit])
        return WebSearchResponse(query=text, total=len(chosen), results=chosen)

    def _no_turn_message(self, wait: float) -> str:
        first, *rest = self.endpoints
        others = f" (nor were its {len(rest)} fallback(s))" if rest else ""
        source, raise_it = self._wait_bound
        return (
            f"SearXNG at {first} was not asked{others}: too many web searches are queued; "
            f"this one's turn under [web] min_interval_s = {self._limiter.interval:g} s is "
            f"{wait:.1f} s away, more than the {self._limiter.max_wait:g} s a search may wait "
            f"({source}); retry in {math.ceil(wait)} s, {raise_it}, or lower "
            "min_interval_s if the instance allows more requests"
        )

    def _fetch(self, params: dict[str, str]) -> tuple[WebResult, ...]:
        failures: list[str] = []
        for endpoint in self.endpoints:
            where = (
                "[web] searxng_url"
                if endpoint == self.settings.searxng_url.strip()
                else "[web] fallback_urls"
            )
            try:
                results = self._fetch_from(endpoint, where, params)
            except EndpointFailure as exc:
                failures.append(f"SearXNG at {endpoint} {exc}")
                log.debug("%s", failures[-1])
                continue
            if failures:
                log.warning(
                    "answered by %s after %d endpoint(s) failed: %s",
                    endpoint,
                    len(failures),
                    "; ".join(failures),
                )
            return results
        if len(failures) == 1:
            raise TroveError("UPSTREAM_ERROR", failures[0])
        listed = "; ".join(f"({n}) {f}" for n, f in enumerate(failures, 1))
        raise TroveError(
            "UPSTREAM_ERROR",
            f"all {len(failures)} SearXNG endpoints failed ([web] searxng_url, then "
            f"fallback_urls, in order): {listed}",
        )

    def _fetch_from(
        self, endpoint: str, where: str, params: dict[str, str]
    ) -> tuple[WebResult, ...]:
        url = _search_url(endpoint)
        timeout = self.settings.timeout_s
        log.debug("GET %s params=%s (timeout %g s)", url, params, timeout)
        started = time.monotonic()
        try:
            with self._client.stream("GET", url, params=params) as response:
                log.debug(
                    "%s answered %d %s (content-type %r) after %.3f s",
                    url,
                    response.status_code,
                    response.reason_phrase,
                    response.headers.get("content-type", ""),
                    time.monotonic() - started,
                )
                if response.status_code != 200:
                    body = read_body(response, started + timeout, limit=2048, truncate=True)
                    log.debug("error body starts: %r", body[:300])
                    raise EndpointFailure(status_problem(response, where))
                body = read_body(response, started + timeout, limit=MAX_BODY_BYTES)
        except httpx.TimeoutException as exc:
            log.debug("%s: timeout: %r", url, exc)
            raise EndpointFailure(
                f"did not answer within {timeout:g} s ([web] timeout_s): it may be overloaded "
                "or unreachable"
            ) from exc
        except httpx.HTTPError as exc:
            log.debug("%s: request failed: %r", url, exc)
            raise EndpointFailure(connection_problem(exc, endpoint, where)) from exc
        except httpx.InvalidURL as exc:
            raise EndpointFailure(f"is not a usable URL ({exc}); check {where}") from exc
        log.debug("read %d bytes: %r", len(body), body[:500])
        return parse_body(body, response.headers.get("content-type", ""), where)


def search_web(
    settings: Settings | WebSettings,
    query: str,
    limit: int = 10,
    *,
    categories: str | None = None,
    language: str | None = None,
    time_range: str | None = None,
    pageno: int | None = None,
    safesearch: int | None = None,
) -> WebSearchResponse:
    """One web search with the process's `WebSearcher` for these settings, so repeated
    calls are cached and rate-limited like calls on one searcher."""
    web = settings.web if isinstance(settings, Settings) else settings
    return shared_searcher(web).search(
        query,
        limit,
        categories=categories,
        language=language,
        time_range=time_range,
        pageno=pageno,
        safesearch=safesearch,
    )


class _SearcherRegistry:
    """One `WebSearcher` per distinct ``[web]`` configuration, made on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._searchers: dict[tuple[tuple[str, object], ...], WebSearcher] = {}

    def get(self, settings: WebSettings) -> WebSearcher:
        key = _settings_key(settings)
        # Made under the lock: two racing callers must not end up with two rate limits.
        with self._lock:
            searcher = self._searchers.get(key)
            if searcher is None:
                searcher = self._searchers[key] = WebSearcher(settings)
            return searcher

    def close_all(self) -> None:
        with self._lock:
            searchers = list(self._searchers.values())
            self._searchers.clear()
        for searcher in searchers:
            searcher.close()


# Process state by design: the cache and the rate limit are only worth anything if every
# search_web call in the process shares them. Nothing is opened until the first search.
_SHARED = _SearcherRegistry()


def shared_searcher(settings: WebSettings) -> WebSearcher:
    """The process's `WebSearcher` for these settings (equal settings share one); kept open."""
    return _SHARED.get(settings)


def close_shared_searchers() -> None:
    """Close and forget every shared `WebSearcher` (their caches and rate limits go too)."""
    _SHARED.close_all()


def _settings_key(settings: WebSettings) -> tuple[tuple[str, object], ...]:
    # Every field, so a setting added later cannot make two configurations share a
    # searcher; lists become tuples so settings built by hand with a list still hash.
    return tuple(
        (f.name, tuple(value) if isinstance(value, list) else value)
        for f in dataclasses.fields(settings)
        for value in (getattr(settings, f.name),)
    )


def _endpoints(settings: WebSettings) -> tuple[str, ...]:
    seen: list[str] = []
    for url in (settings.searxng_url, *settings.fallback_urls):
        url = url.strip()
        if url and url not in seen:
            seen.append(url)
    if not seen:
        raise TroveError(
            "UPSTREAM_ERROR", "no SearXNG endpoint is configured: set [web] searxng_url"
        )
    return tuple(seen)


def _search_url(endpoint: str) -> str:
    base = endpoint.rstrip("/")
    return base if base.endswith("/search") else base + "/search"


def _request_params(
    query: str,
    categories: str | None,
    language: str | None,
    time_range: str | None,
    pageno: int | None,
    safesearch: int | None,
) -> dict[str, str]:
    """The query string sent to SearXNG; it is also the cache key (it names no endpoint)."""
    if categories is None:
        categories = DEFAULT_CATEGORIES
    if not isinstance(categories, str) or not _CATEGORIES_RE.fullmatch(categories.strip()):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"categories must be comma-separated SearXNG category names (e.g. 'general,news'), "
            f"got {categories!r}",
        )
    if language is None:
        language = DEFAULT_LANGUAGE
    if not isinstance(language, str) or not _LANGUAGE_RE.fullmatch(language.strip()):
        raise TroveError(
            "INVALID_ARGUMENT",
            f"language must be a language code such as 'en', 'de-CH', 'all' or 'auto', "
            f"got {language!r}",
        )
    params = {
        "q": query,
        "format": "json",
        "categories": ",".join(c.strip() for c in categories.split(",")),
        "language": language.strip(),
    }
    if time_range is not None:
        if time_range not in TIME_RANGES:
            raise TroveError(
                "INVALID_ARGUMENT",
                f"time_range must be one of {', '.join(TIME_RANGES)}, got {time_range!r}",
            )
        params["time_range"] = time_range
    if pageno is not None:
        params["pageno"] = str(check_range(pageno, "pageno", 1, None))
    if safesearch is not None:
        params["safesearch"] = str(check_range(safesearch, "safesearch", 0, 2))
    return params
