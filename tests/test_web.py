"""Web search through SearXNG, against a fake SearXNG served on 127.0.0.1 by a real HTTP server.

The fake answers by the first part of the path: ``{base}/current/search`` answers the
current-format fixture, ``{base}/forbidden/search`` a 403, and so on, so one server gives
every endpoint a test needs. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qsl, urlsplit

import pytest
from typer.testing import CliRunner, Result

from indexer.config import Settings, WebSettings
from query import web
from query.errors import TroveError
from query.web import WebSearcher, WebSearchResponse, search_web

FIXTURES = Path(__file__).parent / "fixtures" / "searxng"
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html lang='en'><head><title>SearXNG</title></head>"
    b"<body><form id='search'>...</form></body></html>"
)
# How long the "slow" endpoint holds a request at most (the fixture releases it sooner).
SLOW_HOLD_S = 5.0
# Scores Python's JSON parser reads as NaN, +-inf or an int too large for a float, next to
# two ordinary ones; NaN and Infinity are not JSON, but some servers send them.
ODD_SCORES = (
    b'{"query": "odd", "results": ['
    b'{"url": "https://odd.example/nan", "title": "nan", "score": NaN},'
    b'{"url": "https://odd.example/inf", "title": "inf", "score": Infinity},'
    b'{"url": "https://odd.example/-inf", "title": "-inf", "score": -Infinity},'
    b'{"url": "https://odd.example/1e400", "title": "1e400", "score": 1e400},'
    b'{"url": "https://odd.example/huge", "title": "huge", "score": 1' + b"0" * 400 + b"},"
    b'{"url": "https://odd.example/float", "title": "float", "score": 2.5},'
    b'{"url": "https://odd.example/int", "title": "int", "score": 3}'
    b"]}"
)


@dataclass
class Hit:
    behaviour: str
    params: dict[str, str]
    at: float


@dataclass
class FakeSearxng:
    base: str
    hits: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, behaviour: str) -> str:
        return f"{self.base}/{behaviour}"

    def record(self, hit: Hit) -> None:
        with self.lock:
            self.hits.append(hit)

    def behaviours(self) -> list[str]:
        with self.lock:
            return [h.behaviour for h in self.hits]

    def params(self) -> list[dict[str, str]]:
        with self.lock:
            return [h.params for h in self.hits]

    def times(self) -> list[float]:
        with self.lock:
            return [h.at for h in self.hits]


def _fixture_bytes(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


def _handler(fake: FakeSearxng) -> type[BaseHTTPRequestHandler]:
    bodies = {name: _fixture_bytes(name) for name in ("current", "older", "empty")}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            behaviour = parts.path.strip("/").split("/")[0]
            fake.record(Hit(behaviour, dict(parse_qsl(parts.query)), time.monotonic()))
            if not parts.path.endswith("/search"):
                self.answer(404, "text/html", b"<h1>Not Found</h1>")
            elif behaviour in bodies:
                self.answer(200, "application/json", bodies[behaviour])
            elif behaviour == "forbidden":
                # What SearXNG answers when format=json is not in search.formats.
                self.answer(403, "text/html; charset=utf-8", b"<h1>403 Forbidden</h1>")
            elif behaviour == "limited":
                self.answer(429, "text/plain", b"Too Many Requests")
            elif behaviour == "broken":
                self.answer(500, "text/html", b"<h1>Internal Server Error</h1>")
            elif behaviour == "html":
                self.answer(200, "text/html; charset=utf-8", HTML_PAGE)
            elif behaviour == "badjson":
                self.answer(200, "application/json", b'{"query": "x", "results": [{"url": ')
            elif behaviour == "oddscores":
                self.answer(200, "application/json", ODD_SCORES)
            elif behaviour == "notsearx":
                self.answer(200, "application/json", b'{"status": "ok", "version": "1.2"}')
            elif behaviour == "slow":
                fake.release.wait(SLOW_HOLD_S)
                self.answer(200, "application/json", bodies["current"])
            else:
                self.answer(404, "text/html", b"<h1>Not Found</h1>")

        def answer(self, status: int, content_type: str, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (the slow endpoint's timeout)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def searxng() -> Iterator[FakeSearxng]:
    fake = FakeSearxng(base="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="fake-searxng", daemon=True
    )
    thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()  # joins the request threads (block_on_close)
        thread.join(timeout=5)
        assert not thread.is_alive(), "the fake SearXNG server thread is still running"


@pytest.fixture
def dead_url() -> str:
    """An endpoint nobody listens on: a port that was bound, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def _fresh_shared_searchers() -> Iterator[None]:
    # search_web keeps one searcher per process: no cache or rate limit crosses tests.
    web.close_shared_searchers()
    yield
    web.close_shared_searchers()


class FakeClock:
    """A monotonic clock that moves only when told to (or when slept on)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def advance(self, seconds: float) -> None:
        self.now += seconds


def searcher(
    url: str,
    *fallbacks: str,
    clock: FakeClock | None = None,
    sleep: Callable[[float], None] | None = None,
    timeout_s: float = 5.0,
    cache_ttl_s: float = 300.0,
    min_interval_s: float = 0.0,
) -> WebSearcher:
    settings = WebSettings(
        searxng_url=url,
        fallback_urls=fallbacks,
        timeout_s=timeout_s,
        cache_ttl_s=cache_ttl_s,
        min_interval_s=min_interval_s,
    )
    if clock is None:
        return WebSearcher(settings)
    return WebSearcher(settings, clock=clock, sleep=sleep or clock.sleep)


def upstream_error(s: WebSearcher, query: str = "whoosh python") -> str:
    with pytest.raises(TroveError) as info:
        s.search(query)
    assert info.value.code == "UPSTREAM_ERROR"
    return info.value.message


# --- answers ---------------------------------------------------------------------------


def test_results_are_cut_to_the_limit_on_our_side(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("current")) as s:
        assert s.search("whoosh python").total == 10
        five = s.search("whoosh python", limit=5)
        everything = s.search("whoosh python", limit=50)
    assert five.total == len(five.results) == 5
    assert everything.total == len(everything.results) == 23  # all the fixture holds
    assert [r.url for r in five.results] == [r.url for r in everything.results[:5]]
    assert all("limit" not in p for p in searxng.params())


def test_fields_are_mapped_from_a_current_searxng_answer(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("current")) as s:
        answer = s.search("  whoosh python  ", limit=4)
    assert answer.query == "whoosh python"
    first, second, _, fourth = answer.results
    assert first.model_dump() == {
        "title": "Whoosh [docs] & <Quick start>",
        "content": "Quick start: create a schema, add documents, search.",
        "url": "https://site00.example.org/whoosh/guide-0",
        "score": 8.0,
        "engine": "duckduckgo",
        "category": "general",
        "published_date": "2024-11-05T00:00:00",
    }
    assert second.published_date == "2023-02-14T09:30:00"
    assert second.score == 4.0  # SearXNG's raw score, not scaled to 0-1
    assert (fourth.engine, fourth.category, fourth.published_date) == ("github", "it", None)


def test_an_older_searxng_answer_with_number_of_results_and_string_answers_is_read(
    searxng: FakeSearxng,
) -> None:
    with searcher(searxng.url("older")) as s:
        answer = s.search("sqlite full text")
    assert answer.total == 3
    docs, fts5, unscored = answer.results
    assert docs.title == "sqlite3 — DB-API 2.0 interface"
    assert docs.score == pytest.approx(2.6666666666666665)
    assert (docs.engine, docs.category, docs.published_date) == ("google", "general", None)
    assert fts5.published_date == "2021-06-01T00:00:00"
    assert (unscored.score, unscored.content) == (None, "")


def test_no_results_is_an_empty_answer_not_an_error(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("empty")) as s:
        answer = s.search("zxqv nothing matches")
    assert answer == WebSearchResponse(query="zxqv nothing matches", total=0, results=[])


def test_the_request_carries_the_default_parameters_and_nothing_else(
    searxng: FakeSearxng,
) -> None:
    with searcher(searxng.url("current")) as s:
        s.search("whoosh python", limit=3)
    assert searxng.params() == [
        {"q": "whoosh python", "format": "json", "categories": "general", "language": "en"}
    ]


def test_optional_parameters_are_passed_to_searxng(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("current")) as s:
        s.search(
            "whoosh",
            categories="news, it",
            language="de-CH",
            time_range="week",
            pageno=2,
            safesearch=0,
        )
    assert searxng.params() == [
        {
            "q": "whoosh",
            "format": "json",
            "categories": "news,it",
            "language": "de-CH",
            "time_range": "week",
            "pageno": "2",
            "safesearch": "0",
        }
    ]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ({"query": ""}, "INVALID_QUERY", "empty"),
        ({"query": "   \n\t"}, "INVALID_QUERY", "empty"),
        ({"query": "x" * 1001}, "INVALID_QUERY", "1000"),
        ({"limit": 0}, "INVALID_ARGUMENT", "limit must be between 1 and 50"),
        ({"limit": 51}, "INVALID_ARGUMENT", "limit must be between 1 and 50"),
        ({"limit": True}, "INVALID_ARGUMENT", "whole number"),
        ({"limit": "5"}, "INVALID_ARGUMENT", "whole number"),
        ({"time_range": "decade"}, "INVALID_ARGUMENT", "day, week, month, year"),
        ({"pageno": 0}, "INVALID_ARGUMENT", "pageno must be 1 or more"),
        ({"safesearch": 3}, "INVALID_ARGUMENT", "safesearch must be between 0 and 2"),
        ({"safesearch": -1}, "INVALID_ARGUMENT", "safesearch must be between 0 and 2"),
        ({"language": "en&format=html"}, "INVALID_ARGUMENT", "language"),
        ({"categories": ""}, "INVALID_ARGUMENT", "categories"),
    ],
)
def test_invalid_arguments_are_refused_before_any_request(
    searxng: FakeSearxng, args: dict[str, object], code: str, words: str
) -> None:
    call = {"query": "whoosh", **args}
    with searcher(searxng.url("current")) as s, pytest.raises(TroveError) as info:
        s.search(**call)  # type: ignore[arg-type]
    assert info.value.code == code
    assert words in info.value.message
    assert searxng.hits == []


def test_a_query_of_exactly_the_maximum_length_is_searched(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("current")) as s:
        assert s.search("y" * 1000, limit=1).total == 1
    assert searxng.params()[0]["q"] == "y" * 1000


def test_search_web_takes_settings_or_web_settings(searxng: FakeSearxng) -> None:
    web_settings = WebSettings(searxng_url=searxng.url("older"))
    assert search_web(web_settings, "sqlite", limit=2).total == 2
    assert search_web(Settings(web=web_settings), "sqlite").total == 3
    assert len(searxng.hits) == 1  # the same configuration, so the same cache


def test_scores_that_are_not_finite_numbers_become_null(
    searxng: FakeSearxng, cli: ModuleType, tmp_path: Path
) -> None:
    with searcher(searxng.url("oddscores")) as s:
        answer = s.search("odd", limit=50)
    assert {r.title: r.score for r in answer.results} == {
        "nan": None,
        "inf": None,
        "-inf": None,
        "1e400": None,
        "huge": None,
        "float": 2.5,
        "int": 3.0,
    }
    json.dumps(answer.model_dump(), allow_nan=False)  # raises on NaN or Infinity

    def not_json(constant: str) -> object:
        raise AssertionError(f"{constant} in the JSON output")

    config = _config(tmp_path, searxng.url("oddscores"))
    result = _invoke(cli, config, "search", "web", "odd", "--limit", "50", "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout, parse_constant=not_json)
    assert [r["score"] for r in printed["results"]] == [None] * 5 + [2.5, 3.0]


@pytest.mark.parametrize("suffix", ["/", "/search", "/search/"])
def test_the_endpoint_may_end_in_a_slash_or_the_search_path(
    searxng: FakeSearxng, suffix: str
) -> None:
    with searcher(searxng.url("current") + suffix) as s:
        assert s.search("whoosh", limit=1).total == 1


# --- failover and errors ---------------------------------------------------------------


def test_failover_tries_the_endpoints_in_order_until_one_answers(
    searxng: FakeSearxng, dead_url: str
) -> None:
    behaviours = ["forbidden", "limited", "broken", "html", "badjson", "older", "current"]
    with searcher(dead_url, *(searxng.url(b) for b in behaviours)) as s:
        answer = s.search("sqlite")
    assert answer.total == 3  # the older fixture's three results
    assert searxng.behaviours() == ["forbidden", "limited", "broken", "html", "badjson", "older"]


def test_a_slow_endpoint_is_given_up_for_the_next_one(searxng: FakeSearxng) -> None:
    started = time.monotonic()
    with searcher(searxng.url("slow"), searxng.url("older"), timeout_s=0.3) as s:
        answer = s.search("sqlite")
    assert answer.total == 3
    assert time.monotonic() - started < SLOW_HOLD_S / 2
    assert searxng.behaviours() == ["slow", "older"]


def test_when_every_endpoint_fails_the_error_lists_each_failure_in_order(
    searxng: FakeSearxng, dead_url: str
) -> None:
    urls = [dead_url] + [searxng.url(b) for b in ("forbidden", "limited", "broken", "html", "slow")]
    with searcher(*urls, timeout_s=0.3) as s:
        message = upstream_error(s)
    assert message.startswith("all 6 SearXNG endpoints failed")
    reasons = [
        "refused the connection",
        "403",
        "429",
        "500",
        "did not answer JSON",
        "did not answer within 0.3 s",
    ]
    positions = []
    for n, (url, reason) in enumerate(zip(urls, reasons, strict=True), 1):
        entry = f"({n}) SearXNG at {url} "
        assert entry in message
        start = message.index(entry)
        assert reason in message[start:].split(f"({n + 1}) ")[0]
        positions.append(start)
    assert positions == sorted(positions)


def test_a_refused_connection_names_the_endpoint(dead_url: str) -> None:
    with searcher(dead_url) as s:
        message = upstream_error(s)
    assert message.startswith(f"SearXNG at {dead_url} refused the connection")
    assert "is SearXNG running there?" in message
    assert "[web] searxng_url" in message


def test_a_host_name_that_does_not_resolve_is_reported_as_such(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_such_host(host: str, *args: object, **kwargs: object) -> list[object]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    with searcher("http://searxng.invalid:8080") as s:
        message = upstream_error(s)
    assert message.startswith("SearXNG at http://searxng.invalid:8080 cannot be reached")
    assert "'searxng.invalid' does not resolve" in message


def test_a_timeout_names_the_endpoint_and_the_setting(searxng: FakeSearxng) -> None:
    started = time.monotonic()
    with searcher(searxng.url("slow"), timeout_s=0.3) as s:
        message = upstream_error(s)
    assert time.monotonic() - started < SLOW_HOLD_S / 2
    assert message.startswith(f"SearXNG at {searxng.url('slow')} did not answer within 0.3 s")
    assert "[web] timeout_s" in message


def test_403_says_how_to_enable_json_output(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("forbidden")) as s:
        message = upstream_error(s)
    assert message.startswith(f"SearXNG at {searxng.url('forbidden')} answered HTTP 403 Forbidden")
    assert "must enable JSON output" in message
    assert "`search: formats: [html, json]`" in message
    assert "settings.yml" in message


def test_429_says_the_instance_rate_limits(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("limited")) as s:
        message = upstream_error(s)
    assert message.startswith(f"SearXNG at {searxng.url('limited')} answered HTTP 429")
    assert "rate limited" in message
    assert "min_interval_s" in message


def test_another_http_status_is_named(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("broken")) as s:
        message = upstream_error(s)
    assert message.startswith(
        f"SearXNG at {searxng.url('broken')} answered HTTP 500 Internal Server Error"
    )
    assert "check its logs" in message


def test_a_wrong_base_url_gets_a_404_hint(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("nowhere")) as s:
        message = upstream_error(s)
    assert "answered HTTP 404 Not Found" in message
    assert "base URL" in message


def test_an_html_answer_is_quoted(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("html")) as s:
        message = upstream_error(s)
    assert message.startswith(f"SearXNG at {searxng.url('html')} did not answer JSON")
    assert "text/html; charset=utf-8" in message
    assert "body starts \"<!DOCTYPE html> <html lang='en'><head><title>SearXNG" in message
    assert "`search: formats: [html, json]`" in message


def test_malformed_json_is_quoted(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("badjson")) as s:
        message = upstream_error(s)
    assert "answered malformed JSON" in message
    assert """'{"query": "x", "results": [{"url":'""" in message


def test_json_that_is_not_a_searxng_answer_is_refused(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("notsearx")) as s:
        message = upstream_error(s)
    assert "answered JSON without a 'results' list" in message
    assert '"status": "ok"' in message


def test_an_oversized_answer_is_refused(
    searxng: FakeSearxng, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fixture is ~15 KB: lower the cap below it rather than serve megabytes.
    monkeypatch.setattr(web, "MAX_BODY_BYTES", 4096)
    with searcher(searxng.url("current")) as s:
        message = upstream_error(s)
    assert "sent more than" in message
    assert "not a search answer" in message


def test_a_url_without_http_scheme_is_reported(searxng: FakeSearxng) -> None:
    with searcher("127.0.0.1:8080", searxng.url("current")) as s:
        assert s.search("whoosh").total == 10  # the fallback answered
    with searcher("ftp://127.0.0.1/") as s:
        assert upstream_error(s).endswith(
            "is not an http:// or https:// URL; check [web] searxng_url"
        )
    with searcher(searxng.url("broken"), "ftp://127.0.0.1/") as s:
        assert upstream_error(s).endswith("check [web] fallback_urls")


# --- cache -----------------------------------------------------------------------------


def test_identical_requests_within_the_ttl_are_answered_from_memory(
    searxng: FakeSearxng,
) -> None:
    clock = FakeClock()
    with searcher(searxng.url("current"), clock=clock, cache_ttl_s=300) as s:
        first = s.search("whoosh python", limit=10)
        clock.advance(299)
        again = s.search("whoosh python", limit=10)
        fewer = s.search("whoosh python", limit=3)  # the same request to SearXNG
        assert len(searxng.hits) == 1
        assert again == first
        assert fewer.results == first.results[:3]
        clock.advance(1)  # 300 s after the first request: expired
        s.search("whoosh python")
        assert len(searxng.hits) == 2


def test_requests_that_differ_are_not_answered_from_the_cache(searxng: FakeSearxng) -> None:
    clock = FakeClock()
    with searcher(searxng.url("current"), clock=clock) as s:
        s.search("whoosh python")
        s.search("whoosh python", time_range="week")
        s.search("whoosh python", pageno=2)
        s.search("whoosh", language="de")
        s.search("whoosh python", time_range="week")  # cached
    assert len(searxng.hits) == 4


def test_the_cache_does_not_depend_on_which_endpoint_answered(
    searxng: FakeSearxng, dead_url: str
) -> None:
    clock = FakeClock()
    with searcher(dead_url, searxng.url("current"), clock=clock) as s:
        s.search("whoosh")
        s.search("whoosh")
    assert searxng.behaviours() == ["current"]


def test_a_zero_ttl_turns_the_cache_off(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("current"), cache_ttl_s=0) as s:
        s.search("whoosh")
        s.search("whoosh")
    assert len(searxng.hits) == 2


def test_failures_are_not_cached(searxng: FakeSearxng) -> None:
    with searcher(searxng.url("broken")) as s:
        upstream_error(s)
        upstream_error(s)
    assert len(searxng.hits) == 2


# --- rate limit ------------------------------------------------------------------------


def test_the_rate_limit_waits_between_upstream_requests(searxng: FakeSearxng) -> None:
    clock = FakeClock()
    with searcher(searxng.url("current"), clock=clock, min_interval_s=2.0) as s:
        s.search("one")
        s.search("two")
        s.search("two")  # cached: no request, no wait
        clock.advance(0.5)
        s.search("three")
        assert clock.sleeps == [2.0, 1.5]
        clock.advance(10)
        s.search("four")
        assert clock.sleeps == [2.0, 1.5]
    assert len(searxng.hits) == 4


def test_the_rate_limit_wait_is_bounded(searxng: FakeSearxng) -> None:
    clock = FakeClock()
    # A sleep that does not move the clock: each caller queues behind the last one.
    with searcher(
        searxng.url("current"), clock=clock, sleep=lambda _: None, min_interval_s=2.0
    ) as s:
        s.search("one")
        s.search("two")  # waits 2 s
        s.search("three")  # waits 4 s: still within the bound (max(timeout_s, interval) = 5)
        with pytest.raises(TroveError) as info:
            s.search("four")  # would wait 6 s
    assert info.value.code == "UPSTREAM_ERROR"
    assert info.value.message == (
        f"SearXNG at {searxng.url('current')} was not asked: too many web searches are "
        "queued; this one's turn under [web] min_interval_s = 2 s is 6.0 s away, more than "
        "the 5 s a search may wait (the larger of [web] timeout_s and min_interval_s); "
        "retry in 6 s, raise [web] timeout_s to let searches wait longer, or lower "
        "min_interval_s if the instance allows more requests"
    )
    assert len(searxng.hits) == 3


def test_a_search_refused_its_turn_says_its_fallbacks_were_not_asked_either(
    searxng: FakeSearxng,
) -> None:
    clock = FakeClock()
    s = searcher(
        searxng.url("current"),
        searxng.url("older"),
        clock=clock,
        sleep=lambda _: None,
        min_interval_s=10.0,
    )
    with s:
        s.search("one")
        s.search("two")  # waits 10 s: the bound is max(timeout_s, interval) = 10
        message = upstream_error(s, "three")
    assert message.startswith(
        f"SearXNG at {searxng.url('current')} was not asked (nor were its 1 fallback(s))"
    )
    assert searxng.behaviours() == ["current", "current"]


def test_identical_search_web_calls_send_one_upstream_request(searxng: FakeSearxng) -> None:
    settings = WebSettings(searxng_url=searxng.url("current"), cache_ttl_s=300)
    first = search_web(settings, "whoosh python")
    # Equal settings built anew, as each CLI run or caller does, still share the cache.
    again = search_web(WebSettings(searxng_url=searxng.url("current")), "whoosh python")
    assert again == first
    assert len(searxng.hits) == 1
    web.close_shared_searchers()  # forgets the cache with the searcher
    search_web(settings, "whoosh python")
    assert len(searxng.hits) == 2


def test_different_search_web_calls_within_min_interval_are_spaced(
    searxng: FakeSearxng,
) -> None:
    interval = 0.25
    settings = WebSettings(searxng_url=searxng.url("current"), min_interval_s=interval)
    started = time.monotonic()
    search_web(settings, "a")
    search_web(settings, "b")
    assert time.monotonic() - started >= interval  # the second call waited its turn
    search_web(settings, "a")  # cached: neither a request nor a wait
    first, second = searxng.times()
    assert second - first >= interval * 0.6  # arrival jitter on a busy machine


def test_only_equal_web_settings_share_a_searcher(searxng: FakeSearxng) -> None:
    url = searxng.url("current")
    one = web.shared_searcher(WebSettings(searxng_url=url))
    assert web.shared_searcher(WebSettings(searxng_url=url)) is one
    assert web.shared_searcher(WebSettings(searxng_url=url, min_interval_s=1)) is not one
    assert web.shared_searcher(WebSettings(searxng_url=url, fallback_urls=(url,))) is not one


def test_threads_asking_at_once_get_the_same_shared_searcher(searxng: FakeSearxng) -> None:
    url = searxng.url("current")
    start = threading.Barrier(8)
    got: list[WebSearcher] = []

    def ask() -> None:
        start.wait(timeout=5)
        got.append(web.shared_searcher(WebSettings(searxng_url=url, min_interval_s=1)))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)
    assert len(got) == 8 and all(s is got[0] for s in got)


def test_the_rate_limit_spaces_real_requests_across_threads(searxng: FakeSearxng) -> None:
    interval = 0.25
    started = time.monotonic()
    with searcher(searxng.url("current"), min_interval_s=interval) as s:
        s.search("sequential 1")
        s.search("sequential 2")
        errors: list[TroveError] = []

        def one(n: int) -> None:
            try:
                s.search(f"parallel {n}")
            except TroveError as exc:  # surfaced below (others fail the test by themselves)
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
    elapsed = time.monotonic() - started
    times = sorted(searxng.times())
    assert len(times) == 6
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= interval * 0.6, gaps  # arrival jitter on a busy machine
    assert elapsed < 5 * interval + 3.0  # bounded: the waits add up, nothing more


# --- logging ---------------------------------------------------------------------------


def test_debug_logging_shows_endpoint_parameters_status_and_parse_steps(
    searxng: FakeSearxng, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="query.web")
    caplog.set_level(logging.DEBUG, logger="query.searxng")  # the reply's parse steps
    with searcher(searxng.url("forbidden"), searxng.url("older")) as s:
        s.search("sqlite")
    text = caplog.text
    assert f"GET {searxng.url('forbidden')}/search" in text
    assert "'format': 'json'" in text and "'q': 'sqlite'" in text
    assert "answered 403 Forbidden" in text
    assert "answered 200 OK" in text
    assert f"answered by {searxng.url('older')} after 1 endpoint(s) failed" in text
    assert "number_of_results=1830000" in text
    assert "mapped 3 results" in text


# --- CLI -------------------------------------------------------------------------------


@pytest.fixture
def cli() -> Iterator[ModuleType]:
    from query import cli as cli_module

    # Piped (CliRunner): one line per result, nothing cut. Logging restored after --debug.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield cli_module
    root.handlers[:] = handlers
    root.setLevel(level)


def _config(tmp_path: Path, url: str, *fallbacks: str) -> Path:
    path = tmp_path / "trove.toml"
    path.write_text(
        f"[web]\nsearxng_url = {json.dumps(url)}\nfallback_urls = {json.dumps(list(fallbacks))}\n"
        "timeout_s = 2\n",
        encoding="utf-8",
    )
    return path


def _invoke(cli_module: ModuleType, config: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli_module.app,
        ["--config", str(config), *args],
    )


def test_cli_prints_every_result_with_its_title_link_engine_and_score(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path
) -> None:
    result = _invoke(cli, _config(tmp_path, searxng.url("current")), "search", "web", "whoosh")
    assert result.exit_code == 0, result.output
    assert "Whoosh [docs] & <Quick start>" in result.stdout
    assert "https://site00.example.org/whoosh/guide-0" in result.stdout
    assert "duckduckgo" in result.stdout and "8.00" in result.stdout
    assert "guide-9" in result.stdout and "guide-10" not in result.stdout


def test_cli_prints_json_and_enforces_the_limit(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path
) -> None:
    config = _config(tmp_path, searxng.url("current"))
    result = _invoke(cli, config, "search", "web", "whoosh", "--limit", "3", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["query"] == "whoosh" and answer["total"] == 3
    assert set(answer["results"][0]) == {
        "title",
        "content",
        "url",
        "score",
        "engine",
        "category",
        "published_date",
    }


def test_cli_says_so_when_nothing_was_found(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path
) -> None:
    result = _invoke(cli, _config(tmp_path, searxng.url("empty")), "search", "web", "zxqv")
    assert result.exit_code == 0
    assert "no web results for 'zxqv'" in result.stdout


def test_cli_exits_2_on_bad_input_and_1_when_searxng_fails(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path, dead_url: str
) -> None:
    config = _config(tmp_path, searxng.url("current"))
    empty = _invoke(cli, config, "search", "web", " ")
    assert empty.exit_code == 2
    assert "INVALID_QUERY" in empty.stderr
    too_many = _invoke(cli, config, "search", "web", "whoosh", "--limit", "51")
    assert too_many.exit_code == 2
    assert "limit must be between 1 and 50" in too_many.stderr
    down = _invoke(cli, _config(tmp_path, dead_url), "search", "web", "whoosh")
    assert down.exit_code == 1
    assert f"UPSTREAM_ERROR: SearXNG at {dead_url} refused the connection" in down.stderr
    assert down.stdout == ""


def test_cli_debug_logs_go_to_stderr_never_stdout(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path
) -> None:
    config = _config(tmp_path, searxng.url("forbidden"), searxng.url("current"))
    result = CliRunner().invoke(
        cli.app,
        ["--config", str(config), "--debug", "search", "web", "whoosh", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["total"] == 10
    assert f"GET {searxng.url('forbidden')}/search" in result.stderr
    assert "answered 403 Forbidden" in result.stderr


def test_cli_passes_the_search_options_to_searxng(
    cli: ModuleType, searxng: FakeSearxng, tmp_path: Path
) -> None:
    config = _config(tmp_path, searxng.url("current"))
    options = ["--time-range", "week", "--page", "2", "--language", "de", "--categories", "it"]
    result = _invoke(cli, config, "search", "web", "whoosh", *options, "--json")
    assert result.exit_code == 0, result.output
    assert searxng.params() == [
        {
            "q": "whoosh",
            "format": "json",
            "categories": "it",
            "language": "de",
            "time_range": "week",
            "pageno": "2",
        }
    ]
    bad = _invoke(cli, config, "search", "web", "whoosh", "--time-range", "decade")
    assert bad.exit_code == 2
    assert "time_range must be one of day, week, month, year" in bad.stderr
