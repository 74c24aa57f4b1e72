"""The web page and the JSON API of `trove serve` (query/site/), through the real HTTP app
(Starlette's TestClient) over a small corpus in tmp_path; web search against a fake
SearXNG served on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from site_corpus import (
    COMMAND,
    CONVERSATION,
    H_ATTACHMENT,
    H_AUTHOR,
    H_COMMAND,
    H_CONVERSATION,
    H_CONVERSATION_FILE,
    H_CONVERSATION_FOLDER,
    H_CONVERSATION_LONG,
    H_CONVERSATION_LONG_FOLDER,
    H_CONVERSATION_OTHER_FILE,
    H_ENTITY,
    H_FOLDER,
    H_IMG,
    H_JS,
    H_LONG,
    H_LONG_IN_HITS,
    H_REPLY_ID,
    H_REPORT,
    H_REPORT_LONG,
    H_RICH,
    H_ROOT_ID,
    H_RTL,
    H_SCRIPT,
    H_SECTION,
    H_SVG,
    H_TITLE,
    HTML_ID,
    LAST_ID,
    MARK,
    NAME_ENTITY,
    NAME_RICH,
    REPORT,
    ROOT_ID,
    url_path,
    write_corpus,
)
from starlette.testclient import TestClient
from tool_names import TOOLS

from indexer.config import Settings
from indexer.reindex import reindex
from query import commands, elog, reports, search_all, workspace
from query.context import QueryContext
from query.mcp_server import build_server
from query.serve import http_app


@pytest.fixture
def make_client(
    tmp_path: Path, make_settings: Callable[..., Settings], searxng: str
) -> Iterator[Callable[..., TestClient]]:
    """A client of the HTTP app over the site corpus; sections change the settings."""
    write_corpus(
        tmp_path / "reports", tmp_path / "commands", tmp_path / "conversations", tmp_path / "elog"
    )
    opened: list[tuple[Any, TestClient]] = []

    def make(
        token: str = "",
        adjust: Callable[[Settings], Settings] = lambda s: s,
        **sections: dict[str, Any],
    ) -> TestClient:
        sections.setdefault("web", {"searxng_url": f"{searxng}/ok", "cache_ttl_s": 0})
        sections.setdefault("elog", {"rerank": "lexical"})
        settings = adjust(make_settings(**sections))
        reindex(settings)
        server = build_server(settings)
        client = TestClient(http_app(server, "127.0.0.1", token))
        client.__enter__()
        opened.append((server, client))
        return client

    yield make
    for server, client in opened:
        client.__exit__(None, None, None)
        server.close()


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture
def ctx(client: TestClient, make_settings: Callable[..., Settings]) -> Iterator[QueryContext]:
    """A query context over the same corpus (for answers to compare with)."""
    context = QueryContext.from_settings(make_settings(elog={"rerank": "lexical"}))
    yield context
    context.close()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> _Links:
    parser = _Links()
    parser.feed(html)
    return parser


def error_of(response: Any) -> dict[str, str]:
    body = response.json()
    assert set(body) == {"error"}, body
    return body["error"]


def no_live_script(html: str) -> None:
    """Nothing in the page runs but trove's own script file."""
    tags = parsed(html).tags
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts == [{"src": "/static/trove.js", "defer": None}]
    for tag, attrs in tags:
        handlers = [name for name in attrs if name.startswith("on")]
        assert not handlers, (tag, attrs)
        for name in ("href", "src", "action"):
            assert not (attrs.get(name) or "").strip().lower().startswith("javascript:"), attrs


# --------------------------------------------------------------------------- the search page


def test_the_search_page_without_a_query_shows_the_box_and_a_short_help(
    client: TestClient,
) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<input id="q" name="q" type="search"' in page.text
    assert "How to search" in page.text
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page.text


def test_a_search_finds_every_collection_and_links_each_hit_to_its_page(
    client: TestClient,
) -> None:
    page = client.get("/", params={"q": "klystron"})
    assert page.status_code == 200
    hrefs = parsed(page.text).hrefs
    assert f"/reports/{COMMAND}/{REPORT}?q=klystron#L1" in hrefs
    assert f"/commands/{COMMAND}?q=klystron" in hrefs
    assert f"/conversations/{CONVERSATION}?q=klystron#L2" in hrefs
    assert f"/elog/{ROOT_ID}?q=klystron" in hrefs
    assert "<mark>klystron</mark>" in page.text.lower()
    for href in hrefs:
        if href.startswith(("/reports/", "/commands/", "/conversations/", "/elog/")):
            assert client.get(href.partition("#")[0]).status_code == 200, href


def test_snippets_are_escaped_before_their_matches_are_marked(client: TestClient) -> None:
    page = client.get("/", params={"q": "klystron interlock", "c": "reports"})
    snippets = re.findall(r'<p class="snippet">(.*?)</p>', page.text, re.DOTALL)
    assert snippets
    for snippet in snippets:
        assert "<script" not in snippet and "<img" not in snippet
        # Only marks are tags in a snippet.
        assert not re.sub(r"</?mark>", "", snippet).count("<")


def test_ticking_collections_searches_only_those(client: TestClient) -> None:
    page = client.get("/", params=[("q", "klystron"), ("c", "elog"), ("c", "commands")])
    hrefs = [h for h in parsed(page.text).hrefs if h.startswith(("/reports/", "/conv"))]
    assert hrefs == []
    assert f"/elog/{ROOT_ID}?q=klystron" in parsed(page.text).hrefs
    assert "in Commands and ELOG" in page.text


def test_a_command_filter_searches_that_commands_reports_only(client: TestClient) -> None:
    page = client.get("/", params={"q": "interlock", "command": COMMAND})
    assert page.status_code == 200
    hits = [h for h in parsed(page.text).hrefs if h.startswith(("/reports/", "/elog/", "/com"))]
    assert hits == [f"/reports/{COMMAND}/{REPORT}?q=interlock#L1"]
    assert f"the reports of {COMMAND}" in page.text


def test_elog_filters_list_the_logbook_newest_first_even_without_words(
    client: TestClient,
) -> None:
    page = client.get("/", params={"category": "Problem", "system": "RF"})
    assert page.status_code == 200
    hits = [h for h in parsed(page.text).hrefs if h.startswith("/elog/")]
    assert hits == [f"/elog/{LAST_ID}", f"/elog/{HTML_ID}", f"/elog/{ROOT_ID}"]
    none = client.get("/", params={"q": "klystron", "category": "Info"})
    assert [h for h in parsed(none.text).hrefs if h.startswith("/elog/")] == []


def test_a_date_range_keeps_dated_documents_within_it(client: TestClient) -> None:
    inside = client.get("/", params={"q": "klystron", "since": "2025-11-01", "until": "2025-11-30"})
    hrefs = parsed(inside.text).hrefs
    assert f"/elog/{ROOT_ID}?q=klystron" in hrefs
    assert not [h for h in hrefs if h.startswith("/commands/")]  # commands have no date
    before = client.get("/", params={"q": "klystron", "until": "2025-01-01"})
    assert not [h for h in parsed(before.text).hrefs if h.startswith(("/elog/", "/reports/"))]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"q": "klystron", "since": "2025-13-01"}, "INVALID_DATE_RANGE"),
        ({"q": "klystron", "since": "2025-12-01", "until": "2025-11-01"}, "INVALID_DATE_RANGE"),
        ({"q": "klystron", "command": COMMAND, "category": "Problem"}, "INVALID_ARGUMENT"),
        ({"q": "klystron", "c": "nowhere"}, "INVALID_ARGUMENT"),
        ({"q": "klystron", "n": "500"}, "INVALID_ARGUMENT"),
        ({"q": "x" * 1001}, "INVALID_QUERY"),
        ({"q": "klystron", "command": "../etc"}, "INVALID_COMMAND_FILTER"),
    ],
)
def test_a_bad_search_is_a_readable_message_with_http_400(
    client: TestClient, params: dict[str, str], code: str
) -> None:
    page = client.get("/", params=params)
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/html")
    assert 'role="alert"' in page.text and code in page.text


@pytest.mark.parametrize(
    ("query", "status"),
    [("'><script>window.__pwned=1</script>", 200), ('"><script>window.__pwned=1</script>', 400)],
    ids=["answered", "an unclosed quote"],
)
def test_the_search_page_escapes_the_query_it_shows(
    client: TestClient, query: str, status: int
) -> None:
    page = client.get("/", params={"q": query})
    assert page.status_code == status
    assert "<script>window" not in page.text
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page.text
    no_live_script(page.text)


# --------------------------------------------------------------------------- documents


def test_a_report_page_renders_its_markdown_and_shows_raw_html_as_text(
    client: TestClient,
) -> None:
    page = client.get(f"/reports/{COMMAND}/{REPORT}", params={"q": "interlock"})
    assert page.status_code == 200
    text = page.text
    assert "<h1><mark>Klystron</mark>" not in text  # only the query's words are marked
    assert "<h1>Klystron <mark>interlock</mark> report</h1>" in text
    assert "<table>" in text and "<strong>klystron</strong>" in text
    assert "&lt;script&gt;window.__pwned = 1" in text
    assert "&lt;img src=x onerror=" in text
    assert 'href="javascript:' not in text
    no_live_script(text)


def test_a_command_page_shows_its_frontmatter_body_and_reports(client: TestClient) -> None:
    page = client.get(f"/commands/{COMMAND}", params={"q": "klystron"})
    assert page.status_code == 200
    assert "<h1>Klystron check</h1>" in page.text
    assert "Check a klystron after an interlock" in page.text
    assert "<h1>Steps</h1>" in page.text
    assert f"/reports/{COMMAND}/{REPORT}" in parsed(page.text).hrefs


def test_a_conversation_page_numbers_its_lines_for_links_to_one(client: TestClient) -> None:
    page = client.get(f"/conversations/{CONVERSATION}", params={"q": "interlock"})
    assert page.status_code == 200
    assert '<li id="L2">' in page.text
    line = re.search(r'<li id="L2">.*?</li>', page.text, re.DOTALL)
    assert line and "The klystron <mark>interlock</mark> again." in line.group()


def test_an_elog_page_shows_the_whole_thread_with_the_entry_marked(client: TestClient) -> None:
    page = client.get(f"/elog/{LAST_ID}", params={"q": "klystron"})
    assert page.status_code == 200
    ids = re.findall(r'<li class="entry depth-(\d)( current)?" id="e(\d+)"', page.text)
    assert ids == [
        ("0", "", str(ROOT_ID)),
        ("1", "", str(HTML_ID)),
        ("2", " current", str(LAST_ID)),
    ]
    assert "The <mark>klystron</mark> tripped at 08:00." in page.text


def test_an_elog_html_body_is_sanitised_and_keeps_its_markup(client: TestClient) -> None:
    page = client.get(f"/elog/{HTML_ID}")
    text = page.text
    assert "<b>interlock</b>" in text
    assert '<a href="https://example.org/rf" rel="noopener noreferrer nofollow">' in text
    assert "__pwned" not in text  # script content, handlers and javascript: URLs are gone
    no_live_script(text)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/reports/{COMMAND}/nothing.md", 404),
        ("/reports/nobody/x.md", 404),
        (f"/reports/{COMMAND}/%2E%2E", 400),
        ("/commands/nothing-like-it", 404),
        ("/conversations/2025-11-10/001-klystron-talk/gone.md", 404),
        ("/conversations/%2e%2e/reports/klystron-check/klystron_20251120_v1.md", 400),
        ("/conversations/2025-11-10/%2E%2E/%2E%2E/commands/klystron-check.md", 400),
        ("/conversations/2025-11-10/001-klystron-talk/.hidden.md", 404),
        ("/elog/123456789", 404),
        ("/elog/twelve", 400),
        ("/elog/0", 400),
    ],
)
def test_unknown_documents_are_404_and_paths_leading_out_are_400(
    client: TestClient, path: str, status: int
) -> None:
    page = client.get(path)
    assert page.status_code == status, page.text
    assert 'role="alert"' in page.text


def test_a_conversation_symlink_leading_out_of_the_folder_is_not_followed(
    client: TestClient, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("the secret\n", encoding="utf-8")
    link = tmp_path / "conversations" / "2025-11-10" / "001-klystron-talk" / "leak.md"
    link.symlink_to(secret)
    page = client.get("/conversations/2025-11-10/001-klystron-talk/leak.md")
    assert page.status_code == 404
    assert "the secret" not in page.text


# --------------------------------------------------------------------------- hostile metadata


def shows_as_text(html: str, values: list[str]) -> None:
    """Each value is in the page's text as written (escaped once: an entity shows as the
    entity), none is markup, and nothing in the page runs."""
    text = "".join(parsed(html).text)
    for value in values:
        assert value in text, f"not shown as text: {value[:80]!r}"
        if "<" in value or "&" in value:
            assert value not in html, f"not escaped: {value[:80]!r}"
    no_live_script(html)


ELOG_FIELDS = [H_TITLE, H_LONG, H_AUTHOR, H_SCRIPT, H_JS, H_ENTITY, H_SECTION, H_ATTACHMENT]
HOSTILE_PAGES = {
    "report": (f"/reports/{url_path(H_FOLDER, H_REPORT)}", [H_FOLDER, H_REPORT]),
    "report with a 255-byte name": (
        f"/reports/{url_path(H_FOLDER, H_REPORT_LONG)}",
        [H_FOLDER, H_REPORT_LONG],
    ),
    "command": (
        f"/commands/{url_path(H_COMMAND)}",
        # name, title, description, each tag, then other frontmatter keys and values
        [H_COMMAND, H_TITLE, H_LONG, H_IMG, H_JS, H_ENTITY, H_RTL, H_RICH, H_SVG],
    ),
    "command listing its reports": (
        f"/commands/{url_path(H_FOLDER)}",
        [H_FOLDER, H_REPORT, H_REPORT_LONG],
    ),
    "conversation": (
        f"/conversations/{quote(H_CONVERSATION)}",
        [H_CONVERSATION_FOLDER, H_CONVERSATION_FILE, H_CONVERSATION, H_CONVERSATION_OTHER_FILE],
    ),
    "conversation with a 255-byte folder": (
        f"/conversations/{quote(H_CONVERSATION_LONG)}",
        [H_CONVERSATION_LONG_FOLDER],
    ),
    "elog thread": (f"/elog/{H_ROOT_ID}", ELOG_FIELDS),
    "elog reply with a 10,000-character title": (f"/elog/{H_REPLY_ID}", [H_RTL, *ELOG_FIELDS]),
    "search": (
        f"/?q={MARK}&n=50",
        [
            H_REPORT,
            H_REPORT_LONG,
            H_COMMAND,
            H_FOLDER,
            H_CONVERSATION_FOLDER,
            H_CONVERSATION_LONG_FOLDER,
            H_TITLE,
            H_LONG_IN_HITS,
        ],
    ),
}


@pytest.mark.parametrize("name", HOSTILE_PAGES)
def test_hostile_names_titles_and_attributes_show_as_text_and_never_run(
    client: TestClient, name: str
) -> None:
    path, values = HOSTILE_PAGES[name]
    page = client.get(path)
    assert page.status_code == 200, page.text[:500]
    shows_as_text(page.text, values)


def test_a_hostile_title_is_the_page_title_as_text(client: TestClient) -> None:
    for path, title in ((f"/elog/{H_ROOT_ID}", H_TITLE), (f"/commands/{url_path(H_COMMAND)}", "")):
        head = client.get(path).text.split("</head>", 1)[0]
        titles = re.findall(r"<title>(.*?)</title>", head, re.DOTALL)
        assert len(titles) == 1 and "<" not in titles[0]
        if title:
            assert "".join(parsed(titles[0]).text) == f"{title} · trove"


def test_the_hostile_documents_are_found_and_each_link_opens_its_page(client: TestClient) -> None:
    page = client.get("/", params={"q": MARK, "n": "50"})
    hrefs = [h for h in parsed(page.text).hrefs if h.startswith(("/reports/", "/com", "/conv"))]
    hrefs += [h for h in parsed(page.text).hrefs if h.startswith("/elog/")]
    assert len(hrefs) == 8
    for href in hrefs:
        opened = client.get(href.partition("#")[0])
        assert opened.status_code == 200, href
        no_live_script(opened.text)


# A hostile value that a message quotes with repr() unchanged (no quote, no backslash).
H_BARE = "<b onmouseover=window.__pwned=30>bold &amp; [red]x"


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        (f"/reports/{url_path(H_BARE)}/x.md", {}, 400),
        (f"/reports/{url_path(COMMAND, H_BARE)}.md", {}, 404),
        (f"/commands/{url_path(H_BARE)}", {}, 404),
        (f"/conversations/2025-11-21/{url_path(H_BARE)}/x.md", {}, 404),
        ("/", {"q": "x", "since": H_BARE}, 400),
        ("/", {"q": "x", "until": H_BARE}, 400),
        ("/", {"q": "x", "command": H_BARE}, 400),
        ("/", {"q": "x", "category": H_BARE}, 400),
    ],
)
def test_an_error_shows_the_hostile_value_it_refuses_as_text(
    client: TestClient, path: str, params: dict[str, str], status: int
) -> None:
    page = client.get(path, params=params)
    assert page.status_code == status and 'role="alert"' in page.text
    shows_as_text(page.text, [H_BARE])
    # The form keeps what was typed, as the value of its field (a category is chosen
    # from a list, which does not hold this one).
    typed = [tag for tag in parsed(page.text).tags if tag[0] == "input"]
    for name, value in params.items():
        fields = [a for _, a in typed if a.get("name") == name]
        assert name == "category" or fields[0].get("value") == value, (name, fields)


def test_a_hostile_query_is_kept_as_text_on_every_document_page(client: TestClient) -> None:
    for path in (
        f"/elog/{H_ROOT_ID}",
        f"/reports/{url_path(H_FOLDER, H_REPORT)}",
        f"/commands/{url_path(H_COMMAND)}",
        f"/conversations/{quote(H_CONVERSATION)}",
    ):
        page = client.get(path, params={"q": f"{MARK} {H_BARE}"})
        assert page.status_code == 200, path
        boxes = [a for tag, a in parsed(page.text).tags if a.get("id") == "top-q"]
        assert boxes[0].get("value") == f"{MARK} {H_BARE}", path
        assert "<b onmouseover" not in page.text, path
        no_live_script(page.text)


def test_a_hostile_command_filter_names_the_reports_it_searched(client: TestClient) -> None:
    page = client.get("/", params={"q": MARK, "command": H_FOLDER})
    assert page.status_code == 200
    shows_as_text(page.text, [f"the reports of {H_FOLDER}", H_REPORT, H_REPORT_LONG])


def test_hostile_elog_options_show_as_text_in_the_form_and_filter_as_written(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    config = tmp_path / "elogd.cfg"
    config.write_text(
        "[elog]\nAttributes = Author, Category, System, Domain, Section, Title\n"
        f"Options Category = {H_SCRIPT}, {H_ENTITY}, {H_RICH}, Problem\n"
        f"Options System = {H_JS}, RF\n",  # no options for Domain: a free text field
        encoding="utf-8",
    )
    client = make_client(sources={"elog_config": str(config)})
    form = client.get("/")
    shows_as_text(form.text, [H_SCRIPT, H_ENTITY, H_RICH, H_JS])
    options = [a.get("value") for tag, a in parsed(form.text).tags if tag == "option"]
    assert {H_SCRIPT, H_ENTITY, H_RICH, H_JS} <= set(options)
    found = client.get("/", params={"category": H_SCRIPT, "system": H_JS})
    assert [h for h in parsed(found.text).hrefs if h.startswith("/elog/")] == [f"/elog/{H_ROOT_ID}"]
    shows_as_text(found.text, [H_TITLE])
    selected = [a.get("value") for tag, a in parsed(found.text).tags if "selected" in a]
    assert H_SCRIPT in selected and H_JS in selected
    # A note that names the filters quotes them as text.
    none = client.get("/", params={"q": MARK, "category": H_ENTITY, "domain": H_BARE})
    assert [h for h in parsed(none.text).hrefs if h.startswith("/elog/")] == []
    shows_as_text(none.text, [f"category '{H_ENTITY}'", f"domain '{H_BARE}'"])
    domain = [a for tag, a in parsed(none.text).tags if tag == "input" and a.get("id") == "domain"]
    assert domain[0].get("value") == H_BARE


def test_the_status_page_shows_hostile_folder_names_as_text(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    hostile = tmp_path / f"{H_IMG} {NAME_ENTITY} {NAME_RICH}"
    shutil.copytree(tmp_path / "reports", hostile / "reports")
    client = make_client(
        sources={"reports": str(hostile / "reports"), "commands": str(hostile / "gone")},
        index={"dir": str(hostile / "index")},
    )
    page = client.get("/status")
    assert page.status_code == 200
    shows_as_text(page.text, [str(hostile / "reports"), str(hostile / "gone"), str(hostile)])


# --------------------------------------------------------------------------- status, headers


def test_the_status_page_shows_collections_documents_and_the_watcher(client: TestClient) -> None:
    page = client.get("/status")
    assert page.status_code == 200
    rows = re.findall(r'<th scope="row">(\w+)</th>\s*<td class="num">(\d+)</td>', page.text)
    assert dict(rows) == {"reports": "3", "commands": "3", "conversations": "4", "elog": "5"}
    assert "Recent commits" in page.text
    assert "No watcher has run on this index" in page.text
    assert "Health: <strong>unavailable</strong>" in page.text


def test_pages_forbid_inline_script_and_framing(client: TestClient) -> None:
    for path in ("/", "/?q=klystron", f"/elog/{ROOT_ID}", "/status", "/elog/1"):
        csp = client.get(path).headers["content-security-policy"]
        assert "script-src 'self'" in csp and "object-src 'none'" in csp, path
        assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp


def test_the_stylesheet_and_script_come_from_the_same_host(client: TestClient) -> None:
    css = client.get("/static/trove.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "http" not in css.text  # no font or image from elsewhere
    assert client.get("/static/trove.js").status_code == 200
    assert client.get("/static/other.css").status_code == 404
    page = client.get("/?q=klystron").text
    for tag, attrs in parsed(page).tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not value.startswith(("http:", "https:", "//")), (tag, attrs)


def test_with_a_token_every_page_and_the_api_need_it(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(token="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    for path in ("/", "/?q=klystron", f"/elog/{ROOT_ID}", "/status", "/static/trove.css"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
        assert client.get(path, headers=auth).status_code == 200, path
    assert client.get("/api/search", params={"query": "klystron"}).status_code == 401
    answer = client.get("/api/search", params={"query": "klystron"}, headers=auth)
    assert answer.status_code == 200 and answer.json()["hits"]


# --------------------------------------------------------------------------- /api/{tool}


def _without(answer: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The answer without these keys, and without the time its freshness was read at
    (list_command_reports lists the folder at the time of each call)."""
    kept = {k: v for k, v in answer.items() if k not in keys}
    if isinstance(kept.get("freshness"), dict):
        kept["freshness"] = {k: v for k, v in kept["freshness"].items() if k != "as_of"}
    return kept


def test_every_tool_answers_as_a_get_with_its_structured_content(
    client: TestClient, ctx: QueryContext
) -> None:
    calls: dict[str, tuple[list[tuple[str, str | int | float | bool | None]], Any]] = {
        "search_reports": (
            [("query", "klystron"), ("max_results", "5")],
            reports.search_reports(ctx, "klystron", max_results=5),
        ),
        "list_command_reports": (
            [("command_name", COMMAND)],
            reports.list_command_reports(ctx, COMMAND),
        ),
        "get_report": (
            [("command_name", COMMAND), ("report_name", REPORT)],
            reports.get_report(ctx, COMMAND, REPORT),
        ),
        "search_commands": ([("query", "klystron")], commands.search_commands(ctx, "klystron")),
        "get_command": ([("name", COMMAND)], commands.get_command(ctx, COMMAND)),
        "list_commands": (
            [("include_dependencies", "true")],
            commands.list_commands(ctx, include_dependencies=True),
        ),
        "search_workspace": (
            [("query", "interlock"), ("date_range", "2025-11")],
            workspace.search_workspace(ctx, "interlock", "2025-11"),
        ),
        "get_conversation": (
            [("id", f"{CONVERSATION}:2"), ("limit", "1")],
            workspace.get_conversation(ctx, f"{CONVERSATION}:2", limit=1),
        ),
        "search_elog": (
            [("query", "klystron"), ("category", "Problem"), ("max_results", "2")],
            elog.search_elog(ctx, "klystron", category="Problem", max_results=2),
        ),
        "get_elog_thread": (
            [("message_id", str(HTML_ID)), ("include_replies", "false")],
            elog.get_elog_thread(ctx, HTML_ID, include_replies=False),
        ),
        "search": (
            [("query", "klystron"), ("collections", "elog"), ("collections", "reports")],
            search_all.search(ctx, "klystron", ["elog", "reports"]),
        ),
    }
    for tool, (params, expected) in calls.items():
        answer = client.get(f"/api/{tool}", params=params)
        assert answer.status_code == 200, (tool, answer.text)
        assert answer.headers["content-type"] == "application/json"
        want = expected.model_dump(mode="json")
        assert _without(answer.json(), "search_time_ms") == _without(want, "search_time_ms"), tool
    web = client.get("/api/search_web", params={"query": "whoosh", "limit": "2"})
    assert web.status_code == 200
    assert len(web.json()["results"]) == 2 and web.json()["query"] == "whoosh"
    assert set(calls) | {"search_web"} == set(TOOLS)


def test_an_api_list_argument_is_repeated_and_one_value_is_a_list_of_one(
    client: TestClient,
) -> None:
    one = client.get("/api/search", params={"query": "klystron", "collections": "elog"}).json()
    assert {h["collection"] for h in one["hits"]} == {"elog"}
    assert set(one["by_collection"]) == {"elog"}


@pytest.mark.parametrize(
    ("path", "params", "code", "words"),
    [
        ("search_reports", {"query": ""}, "INVALID_QUERY", "query is empty"),
        ("search_reports", {}, "INVALID_QUERY", "query is required"),
        ("search_reports", {"query": "x", "max_results": "0"}, "INVALID_ARGUMENT", "between 1"),
        ("search_reports", {"query": "x", "max_results": "ten"}, "INVALID_ARGUMENT", "whole"),
        ("search_reports", {"query": "x", "colour": "red"}, "INVALID_ARGUMENT", "'colour'"),
        ("list_commands", {"include_dependencies": "maybe"}, "INVALID_ARGUMENT", "true or false"),
        ("search_workspace", {"query": "x", "date_range": "2025-13"}, "INVALID_DATE_RANGE", ""),
        ("search", {"query": "x", "collections": "nowhere"}, "INVALID_ARGUMENT", "nowhere"),
        ("get_report", {"command_name": "..", "report_name": "x.md"}, "INVALID_COMMAND_FILTER", ""),
        ("search_elog", {"since": "2025-10-40"}, "INVALID_DATE_RANGE", ""),
    ],
)
def test_invalid_api_input_is_400_with_the_code_and_a_message(
    client: TestClient, path: str, params: dict[str, str], code: str, words: str
) -> None:
    answer = client.get(f"/api/{path}", params=params)
    assert answer.status_code == 400, answer.text
    error = error_of(answer)
    assert error["code"] == code and words in error["message"]
    assert not error["message"].startswith(("Error executing", code))


def test_an_api_argument_given_twice_is_400(client: TestClient) -> None:
    answer = client.get("/api/search_reports", params=[("query", "a"), ("query", "b")])
    assert answer.status_code == 400
    assert error_of(answer) == {
        "code": "INVALID_ARGUMENT",
        "message": "query is given 2 times; give it once",
    }


@pytest.mark.parametrize(
    ("path", "params", "code"),
    [
        ("no_such_tool", {}, "NOT_FOUND"),
        ("get_command", {"name": "nothing-like-it"}, "NOT_FOUND"),
        ("get_report", {"command_name": COMMAND, "report_name": "gone.md"}, "NOT_FOUND"),
        ("get_elog_thread", {"message_id": "123456789"}, "NOT_FOUND"),
        ("list_command_reports", {"command_name": "nobody"}, "NOT_FOUND"),
    ],
)
def test_what_does_not_exist_is_404(
    client: TestClient, path: str, params: dict[str, str], code: str
) -> None:
    answer = client.get(f"/api/{path}", params=params)
    assert answer.status_code == 404
    assert error_of(answer)["code"] == code


def test_a_missing_source_folder_is_404_directory_not_found(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    client = make_client(sources={"reports": str(tmp_path / "nowhere")})
    answer = client.get("/api/search_reports", params={"query": "klystron"})
    assert answer.status_code == 404
    assert error_of(answer)["code"] == "DIRECTORY_NOT_FOUND"
    page = client.get(f"/reports/{COMMAND}/{REPORT}")
    assert page.status_code == 404 and "DIRECTORY_NOT_FOUND" in page.text


def test_a_failing_searxng_is_502_upstream_error(
    make_client: Callable[..., TestClient], searxng: str
) -> None:
    client = make_client(web={"searxng_url": f"{searxng}/broken", "cache_ttl_s": 0})
    answer = client.get("/api/search_web", params={"query": "whoosh"})
    assert answer.status_code == 502
    error = error_of(answer)
    assert error["code"] == "UPSTREAM_ERROR" and "500" in error["message"]


def test_a_search_over_its_time_limit_is_504_search_timeout(
    make_client: Callable[..., TestClient],
) -> None:
    # No time at all (the config refuses 0; a test may set it).
    client = make_client(
        adjust=lambda s: dataclasses.replace(
            s, commands=dataclasses.replace(s.commands, search_timeout_ms=0)
        )
    )
    answer = client.get("/api/search_commands", params={"query": "klystron"})
    assert answer.status_code == 504
    assert error_of(answer)["code"] == "SEARCH_TIMEOUT"


def test_a_runaway_regex_in_the_elog_is_504_on_the_page_and_in_the_api(
    client: TestClient, make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    book = tmp_path / "elog" / "2025" / "251121a.log"
    from site_corpus import record

    book.write_text(
        "".join(record(90100 + i, "many a", "a" * 26 + "!") for i in range(60)), encoding="utf-8"
    )
    reindex(make_settings(elog={"rerank": "lexical"}), ["elog"])
    answer = client.get("/api/search_elog", params={"query": "(a|aa)+!x"})
    assert answer.status_code == 504
    assert error_of(answer)["code"] == "SEARCH_TIMEOUT"
    page = client.get("/", params={"q": "(a|aa)+!x", "category": "Problem"})
    assert page.status_code == 504 and "SEARCH_TIMEOUT" in page.text


def test_a_damaged_index_is_503_index_unavailable_then_answers_again(
    make_client: Callable[..., TestClient], make_settings: Callable[..., Settings]
) -> None:
    client = make_client()
    folder = make_settings().index_dir / "reports"
    segment = max(folder.glob("*.seg"), key=lambda p: p.stat().st_size)
    segment.write_bytes(b"")
    answer = client.get("/api/search_reports", params={"query": "klystron"})
    assert answer.status_code == 503, answer.text
    error = error_of(answer)
    assert error["code"] == "INDEX_UNAVAILABLE" and "rebuilt" in error["message"]
    again = client.get("/api/search_reports", params={"query": "klystron"})
    assert again.status_code == 200 and again.json()["results"]


def test_the_api_answers_get_only(client: TestClient) -> None:
    assert client.post("/api/search", json={"query": "klystron"}).status_code == 405


def test_an_elog_entry_links_to_the_logbook_when_it_has_a_web_address(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(
        elog={"rerank": "lexical", "link_base_url": "https://elog.example/SwissFEL"}
    )
    hrefs = parsed(client.get(f"/elog/{ROOT_ID}").text).hrefs
    assert f"https://elog.example/SwissFEL/{ROOT_ID}" in hrefs
    assert f"https://elog.example/SwissFEL/{LAST_ID}" in hrefs


def test_the_api_docs_give_every_error_code_its_http_status() -> None:
    from query.site.api import STATUS

    docs = Path(__file__).resolve().parent.parent / "docs" / "TOOLS.md"
    section = docs.read_text(encoding="utf-8").split("## `/api/{tool}`", 1)[1].split("\n## ", 1)[0]
    table = {
        code: int(status)
        for codes, status in re.findall(r"^\| (`.+`.*) \| (\d{3}) \|$", section, re.MULTILINE)
        for code in re.findall(r"`([A-Z_]+)`", codes)
    }
    assert table == STATUS


def test_the_search_page_links_to_the_next_page_which_continues_it(client: TestClient) -> None:
    first = client.get("/", params={"q": "klystron", "n": "1"})
    assert first.status_code == 200
    more = [h for h in parsed(first.text).hrefs if "offset=" in h]
    assert more == ["/?q=klystron&n=1&offset=1"], more
    second = client.get(more[0])
    assert second.status_code == 200 and "Hits 2-2" in second.text
    assert "offset=0" not in second.text and 'rel="prev"' in second.text
    shown = [h for h in parsed(first.text + second.text).hrefs if h.startswith("/reports/")]
    assert len(shown) == len(set(shown))  # the second page shows what the first did not
    bad = client.get("/", params={"q": "klystron", "offset": "-1"})
    assert bad.status_code == 400 and "offset" in bad.text
