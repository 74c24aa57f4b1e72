"""The page's browse views (/reports, /commands, /elog, /conversations), its help page and
hint, through the real HTTP app over the site corpus (tests/site_corpus.py), indexed for
real; and the listing functions behind them against a plain scan of data/."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from indexed import indexed, settings_for
from site_corpus import (
    COMMAND,
    CONVERSATION,
    H_AUTHOR,
    H_CONVERSATION,
    H_CONVERSATION_FILE,
    H_CONVERSATION_FOLDER,
    H_CONVERSATION_LONG_FOLDER,
    H_CONVERSATION_OTHER_FILE,
    H_FOLDER,
    H_REPLY_ID,
    H_REPORT,
    H_REPORT_LONG,
    H_ROOT_ID,
    H_SCRIPT,
    H_TITLE,
    HTML_ID,
    LAST_ID,
    REPORT,
    ROOT_ID,
    served,
    url_path,
)
from starlette.testclient import TestClient
from test_site import no_live_script, parsed, shows_as_text

from indexer.sources.conversations import date_folder
from indexer.sources.reports import date_from_name
from query.context import QueryContext
from query.elog import list_elog, search_elog
from query.reports import list_report_commands
from query.site import syntax_help
from query.syntax import parse
from query.workspace import list_conversations

REPO = Path(__file__).resolve().parent.parent
DAY = "2025-11-20"  # every ELOG entry of the site corpus is of this day
# A hostile value that a message quotes with repr() unchanged (no quote, no backslash).
H_BARE = "<b onmouseover=window.__pwned=30>bold &amp; [red]x"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browse")


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[TestClient]:
    with served(root) as test_client:
        yield test_client


def ok(client: TestClient, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, (path, page.text[:300])
    no_live_script(page.text)
    return page.text


def main_text(html: str) -> str:
    body = html.split('<main id="main"', 1)[1].split("</main>", 1)[0]
    return " ".join("".join(parsed(body).text).split())


def next_link(html: str) -> str | None:
    found = re.findall(r'<a href="([^"]*)" rel="next">more</a>', html)
    return found[0].replace("&amp;", "&") if found else None


# --------------------------------------------------------------------------- reports


def test_the_reports_list_every_command_with_how_many_and_the_newest(client: TestClient) -> None:
    html = ok(client, "/reports")
    shows_as_text(html, [H_FOLDER])
    assert f"/reports/{url_path(COMMAND)}" in parsed(html).hrefs
    assert f"/reports/{url_path(H_FOLDER)}" in parsed(html).hrefs
    assert "2025-11-22" in main_text(html)  # H_FOLDER's newest


def test_a_commands_reports_are_listed_newest_first_with_dates_and_sizes(
    client: TestClient,
) -> None:
    html = ok(client, f"/reports/{url_path(H_FOLDER)}")
    shows_as_text(html, [H_FOLDER, H_REPORT, H_REPORT_LONG])
    links = [h for h in parsed(html).hrefs if h.startswith(f"/reports/{quote(H_FOLDER)}/")]
    # Newest first: the report of the 22nd, then the one of the 21st.
    names = [h.rsplit("/", 1)[1] for h in links]
    assert names == [quote(H_REPORT_LONG), quote(H_REPORT)]
    text = main_text(html)
    assert "2025-11-22" in text and "2025-11-21" in text and " B" in text
    for link in links:
        ok(client, link)


def test_the_reports_list_comes_in_pages(client: TestClient) -> None:
    first = ok(client, f"/reports/{url_path(H_FOLDER)}?n=1")
    more = next_link(first)
    assert more == f"/reports/{url_path(H_FOLDER)}?n=1&offset=1"
    second = ok(client, more)
    assert next_link(second) is None and 'rel="prev"' in second
    assert "Reports 2-2 of 2" in main_text(second)
    assert H_REPORT in "".join(parsed(second).text) and H_REPORT not in "".join(parsed(first).text)


# --------------------------------------------------------------------------- ELOG


def test_an_elog_day_lists_its_entries_newest_first_with_thread_links(client: TestClient) -> None:
    html = ok(client, f"/elog?day={DAY}")
    ids = [int(h.split("/")[2]) for h in parsed(html).hrefs if re.fullmatch(r"/elog/\d+", h)]
    entries = list(dict.fromkeys(ids))
    # Each entry links to its thread; newest first (their minutes are their ids' last digit).
    assert set(entries) >= {ROOT_ID, HTML_ID, LAST_ID, H_ROOT_ID, H_REPLY_ID}
    assert entries.index(LAST_ID) < entries.index(HTML_ID) < entries.index(ROOT_ID)
    text = main_text(html)
    assert f"reply to #{ROOT_ID}" in text and "5 entries, newest first" in text
    shows_as_text(html, [H_TITLE, H_AUTHOR, H_SCRIPT])
    for thread in (ROOT_ID, H_REPLY_ID):
        ok(client, f"/elog/{thread}")


def test_an_elog_month_lists_its_days_and_the_logbook_its_months(client: TestClient) -> None:
    month = ok(client, "/elog?month=2025-11")
    assert "/elog?day=2025-11-20" in parsed(month).hrefs and "2025-11-20 (5)" in main_text(month)
    whole = ok(client, "/elog")
    assert "/elog?month=2025-11" in parsed(whole).hrefs and "2025-11 (5)" in main_text(whole)


def test_the_elog_list_comes_in_pages_that_continue_each_other(client: TestClient) -> None:
    seen: list[str] = []
    path: str | None = f"/elog?day={DAY}&n=2"
    pages = 0
    while path is not None:
        html = ok(client, path)
        seen += [h for h in dict.fromkeys(parsed(html).hrefs) if re.fullmatch(r"/elog/\d+", h)]
        seen = list(dict.fromkeys(seen))
        path = next_link(html)
        pages += 1
    assert pages == 3
    assert {f"/elog/{n}" for n in (ROOT_ID, HTML_ID, LAST_ID, H_ROOT_ID, H_REPLY_ID)} <= set(seen)


# --------------------------------------------------------------------------- conversations


def test_conversations_are_listed_by_date_folder(client: TestClient) -> None:
    every = ok(client, "/conversations")
    assert {"/conversations/2025-11-21", "/conversations/2025-11-10"} <= set(parsed(every).hrefs)
    day = ok(client, "/conversations/2025-11-21")
    shows_as_text(
        day,
        [H_CONVERSATION_FOLDER, H_CONVERSATION_FILE, H_CONVERSATION_OTHER_FILE],
    )
    assert H_CONVERSATION_LONG_FOLDER in "".join(parsed(day).text)
    assert "/conversations/" + quote(H_CONVERSATION) in parsed(day).hrefs
    ok(client, "/conversations/" + quote(H_CONVERSATION))
    # A month holds its day folders.
    month = ok(client, "/conversations/2025-11")
    assert "/conversations/" + quote(CONVERSATION) in parsed(month).hrefs
    assert "3 conversations" in main_text(month)


def test_the_conversations_list_comes_in_pages(client: TestClient) -> None:
    first = ok(client, "/conversations/2025-11?n=2")
    more = next_link(first)
    assert more == "/conversations/2025-11?n=2&offset=2"
    second = ok(client, more)
    assert "Conversations 3-3 of 3" in main_text(second) and next_link(second) is None


# --------------------------------------------------------------------------- links to the lists


def test_each_hit_links_to_the_list_it_is_in(client: TestClient) -> None:
    html = ok(client, "/?q=klystron")
    hrefs = parsed(html).hrefs
    for listed in (f"/reports/{COMMAND}", f"/elog?day={DAY}", "/conversations/2025-11-10"):
        assert listed in hrefs, listed
        ok(client, listed)
    report_list = ok(client, f"/reports/{COMMAND}")
    assert f"/reports/{COMMAND}/{REPORT}" in parsed(report_list).hrefs


def test_each_document_page_links_to_the_list_it_is_in(client: TestClient) -> None:
    for document, listed in (
        (f"/reports/{COMMAND}/{REPORT}", f"/reports/{COMMAND}"),
        (f"/elog/{HTML_ID}", f"/elog?day={DAY}"),
        (f"/conversations/{CONVERSATION}", "/conversations/2025-11-10"),
        (f"/commands/{COMMAND}", "/commands"),
    ):
        crumbs = re.findall(r'<p class="crumbs">(.*?)</p>', ok(client, document), re.DOTALL)
        assert f'href="{listed}"' in crumbs[0], document
        ok(client, listed)


def test_the_status_page_links_each_collection_to_its_list(client: TestClient) -> None:
    html = ok(client, "/status")
    rows = re.findall(r'<th scope="row"><a href="([^"]+)"[^>]*>(\w+)</a>', html)
    assert [name for _, name in rows] == ["reports", "commands", "conversations", "elog"]
    for href, _ in rows:
        ok(client, href)


# --------------------------------------------------------------------------- bad input


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


BAD = [
    ("/elog?day=2025-13-01", 400, "INVALID_DATE_RANGE"),
    ("/elog?day=2025-02-30", 400, "INVALID_DATE_RANGE"),
    ("/elog?day=2025-11", 400, "INVALID_DATE_RANGE"),
    ("/elog?month=2025-13", 400, "INVALID_DATE_RANGE"),
    ("/elog?day=2025-11-20&month=2025-11", 400, "INVALID_ARGUMENT"),
    (f"/elog?day={DAY}&offset=-1", 400, "INVALID_ARGUMENT"),
    ("/elog?n=0", 400, "INVALID_ARGUMENT"),
    ("/elog?n=100000", 400, "INVALID_ARGUMENT"),
    ("/reports/no-such-command", 404, "NOT_FOUND"),
    ("/reports/%2E%2E", 400, "INVALID_COMMAND_FILTER"),
    (f"/reports/{COMMAND}?offset=-1", 400, "INVALID_ARGUMENT"),
    (f"/reports/{COMMAND}?offset=x", 400, "INVALID_ARGUMENT"),
    ("/commands?offset=-5", 400, "INVALID_ARGUMENT"),
    ("/conversations/2025-13-01", 400, "INVALID_DATE_RANGE"),
    ("/conversations/2025-11-12", 404, "NOT_FOUND"),
    ("/conversations/%2E%2E", 400, "INVALID_DATE_RANGE"),
    ("/conversations/2025-11?offset=-1", 400, "INVALID_ARGUMENT"),
]


def test_bad_input_is_a_clear_error_page_and_changes_nothing(
    client: TestClient, root: Path
) -> None:
    before = _tree(root)
    for path, status, code in BAD:
        page = client.get(path)
        assert page.status_code == status, (path, page.status_code)
        assert 'role="alert"' in page.text and code in page.text, path
        no_live_script(page.text)
    assert _tree(root) == before


@pytest.mark.parametrize(
    "path",
    [
        f"/elog?{urlencode({'day': H_BARE})}",
        f"/elog?{urlencode({'month': H_BARE})}",
        f"/reports/{url_path(H_BARE)}",
        f"/conversations/{url_path(H_BARE)}",
        f"/reports/{COMMAND}?{urlencode({'offset': H_BARE})}",
    ],
)
def test_a_hostile_value_in_a_browse_url_shows_as_text(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code in (400, 404) and 'role="alert"' in page.text
    shows_as_text(page.text, [H_BARE])


# --------------------------------------------------------------------------- help and hint


def test_the_search_box_has_a_one_line_hint_linking_to_the_help(client: TestClient) -> None:
    html = ok(client, "/")
    hint = re.findall(r'<p class="hint" id="hint">(.*?)</p>', html, re.DOTALL)
    assert len(hint) == 1 and 'href="/help"' in hint[0]
    assert 'aria-describedby="hint"' in html


def test_the_help_page_shows_each_operator_and_examples_that_run(client: TestClient) -> None:
    html = ok(client, "/help")
    examples = [h for h in parsed(html).hrefs if h.startswith("/?q=")]
    assert len(examples) == len(syntax_help.EXAMPLES)
    for href in examples:
        page = client.get(href)
        assert page.status_code == 200, href  # each parses and answers


def _doc_operators() -> list[tuple[str, str]]:
    text = (REPO / "docs" / "QUERY-LANGUAGE.md").read_text(encoding="utf-8")
    table = text.split("## Operators", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]
    return [tuple(c.strip() for c in row.strip("|").split(" | ")) for row in rows]  # type: ignore[misc]


def test_the_help_pages_operators_are_the_query_languages_doc_row_for_row() -> None:
    assert _doc_operators() == list(syntax_help.OPERATORS)


def test_the_help_pages_examples_use_every_operator() -> None:
    read = [parse(query) for query, _ in syntax_help.EXAMPLES]
    assert any(c.phrases for p in read for c in p.alternatives)
    assert any(p.excluded_words for p in read) and any(p.excluded_phrases for p in read)
    assert any(len(p.alternatives) > 1 for p in read)
    assert any(p.collections and len(p.collections) > 1 for p in read)
    for key in ("command", "since", "until", "category", "system", "domain"):
        assert any(getattr(p, key) for p in read), key
    assert any('category:"' in query for query, _ in syntax_help.EXAMPLES)  # a quoted value


# --------------------------------------------------------------------------- the listings, on data/


@pytest.fixture(scope="module")
def data_ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryContext]:
    ctx = indexed(settings_for(REPO / "data", tmp_path_factory.mktemp("data-index")))
    yield ctx
    ctx.close()


def test_the_report_commands_are_the_folders_of_data(data_ctx: QueryContext) -> None:
    found = list_report_commands(data_ctx)
    root = REPO / "data" / "reports"
    want = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        names = [p.name for p in folder.iterdir() if p.suffix == ".md"]
        days = [d for d in map(date_from_name, names) if d]
        want.append((folder.name, len(names), max(days).isoformat() if days else None))
    got = [(c.command_name, c.reports, c.newest[:10] if c.newest else None) for c in found.commands]
    assert got == want


def _conversations(root: Path, date_range: str | None) -> list[tuple[str, str, list[str]]]:
    """What a plain walk of the conversations folder finds, newest folder first."""
    found = []
    for folder in os.listdir(root):
        if date_folder(folder) is None:
            continue
        if date_range and not (folder == date_range or folder.startswith(date_range + "-")):
            continue
        for conversation in os.listdir(root / folder):
            files = sorted(
                str(p.relative_to(root))
                for p in (root / folder / conversation).rglob("*")
                if p.is_file()
            )
            found.append((folder, conversation, files))
    found.sort(key=lambda item: item[1])  # by name within a folder (the sort below is stable)
    # Newest month first; in a month its day folders, newest first, then its month folder.
    found.sort(key=lambda item: (item[0][:7], len(item[0]) == 10, item[0]), reverse=True)
    return found


@pytest.mark.parametrize("date_range", [None, "2025-11", "2025-11-10", "2025-10"])
def test_the_conversations_listed_are_those_of_the_folders(
    data_ctx: QueryContext, date_range: str | None
) -> None:
    root = REPO / "data" / "conversations"
    found = list_conversations(data_ctx, date_range, max_results=500)
    got = [(c.date, c.conversation, [f.id for f in c.files]) for c in found.conversations]
    assert got == _conversations(root, date_range)
    assert found.total == len(got)
    for c in found.conversations:
        for f in c.files:
            assert f.size == (root / f.id).stat().st_size


def test_the_elog_listing_agrees_with_search_elog_by_month_and_by_day(
    data_ctx: QueryContext,
) -> None:
    whole = list_elog(data_ctx, None, max_results=500)
    assert whole.total == search_elog(data_ctx, None, max_results=1).total
    assert sum(p.entries for p in whole.periods) == whole.total
    dates = [e.date for e in whole.entries]
    assert len(whole.entries) == whole.total
    stamps = [date.fromisoformat(d[:10]) for d in dates]
    assert stamps == sorted(stamps, reverse=True)
    for month in whole.periods[:6]:
        listed = list_elog(data_ctx, month.value, max_results=500)
        asked = search_elog(data_ctx, None, since=month.value, until=month.value, max_results=50)
        assert listed.total == month.entries == asked.total
        assert [e.elog_id for e in listed.entries] == [h.elog_id for h in asked.hits]
        for day in listed.periods:
            one = list_elog(data_ctx, day.value, max_results=500)
            assert one.total == day.entries
            assert {e.date[:10] for e in one.entries} == {day.value}


def test_the_elog_listings_pages_continue_each_other(data_ctx: QueryContext) -> None:
    whole = list_elog(data_ctx, None, max_results=500)
    paged: list[int] = []
    offset: int | None = 0
    while offset is not None:
        page = list_elog(data_ctx, None, max_results=7, offset=offset)
        paged += [e.elog_id for e in page.entries]
        offset = page.next_offset
    assert paged == [e.elog_id for e in whole.entries]


def test_the_elog_listing_names_the_days_before_and_after(data_ctx: QueryContext) -> None:
    days = sorted({e.date[:10] for e in list_elog(data_ctx, None, max_results=500).entries})
    middle = days[len(days) // 2]
    one = list_elog(data_ctx, middle)
    assert (one.earlier, one.later) == (days[days.index(middle) - 1], days[days.index(middle) + 1])
    assert list_elog(data_ctx, days[0]).earlier is None
    assert list_elog(data_ctx, days[-1]).later is None
    empty = list_elog(data_ctx, "1999-01-01")
    assert empty.total == 0 and empty.later == days[0] and empty.earlier is None
