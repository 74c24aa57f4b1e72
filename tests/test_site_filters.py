"""The search page's query language and its Filters panel, through the real HTTP app over
the site corpus (tests/site_corpus.py), indexed for real: each filter typed in the box or
chosen in the panel answers the same and shows in the other; the note says how the query
was read; the heading and how hits matched are said in words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from site_corpus import (
    COMMAND,
    H_FOLDER,
    H_REPORT,
    H_REPORT_LONG,
    HTML_ID,
    LAST_ID,
    MARK,
    REPORT,
    ROOT_ID,
    served,
)
from starlette.testclient import TestClient
from test_site import hit_links, parsed, shows_as_text


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with served(tmp_path_factory.mktemp("filters")) as test_client:
        yield test_client


# Each filter typed in the box, and the same chosen in the Filters panel (sent as the
# form sends it: the box, the panel, and "f", the filters the panel showed).
TYPED_AND_CHOSEN = [
    ("klystron in:commands in:elog", [("c", "elog"), ("c", "commands")]),
    (f"interlock command:{COMMAND}", [("command", COMMAND)]),
    (
        "klystron since:2025-11-01 until:2025-11-30",
        [("since", "2025-11-01"), ("until", "2025-11-30")],
    ),
    ("klystron category:Problem system:RF", [("category", "Problem"), ("system", "RF")]),
]


@pytest.mark.parametrize(("typed", "chosen"), TYPED_AND_CHOSEN)
def test_a_filter_chosen_in_the_panel_is_written_into_the_box_and_answers_as_typed(
    client: TestClient, typed: str, chosen: list[tuple[str, str]]
) -> None:
    words = typed.split()[0]
    sent = client.get("/", params=[("q", words), ("f", ""), *chosen], follow_redirects=False)
    assert sent.status_code == 303
    location = sent.headers["location"]
    assert location == "/?" + urlencode({"q": typed})
    from_panel = client.get(location)
    from_box = client.get("/", params={"q": typed})
    assert from_panel.status_code == from_box.status_code == 200
    assert hit_links(from_panel.text) == hit_links(from_box.text)
    # The box shows the query; the panel shows its filters as chosen.
    box = [a for tag, a in parsed(from_box.text).tags if a.get("id") == "q"]
    assert box[0].get("value") == typed
    for name, value in chosen:
        assert panel_value(from_box.text, name, value), (name, value)


def panel_value(html: str, name: str, value: str) -> bool:
    """Whether the Filters panel shows ``value`` chosen for ``name``."""
    for tag, attrs in parsed(html).tags:
        if tag == "input" and attrs.get("name") == name:
            if attrs.get("type") == "checkbox":
                if attrs.get("value") == value and "checked" in attrs:
                    return True
            elif attrs.get("value") == value:
                return True
    selects = re.findall(rf'<select id="{name}" name="{name}">(.*?)</select>', html, re.DOTALL)
    return any(f'<option value="{value}" selected' in options for options in selects)


def test_typed_collections_search_only_those(client: TestClient) -> None:
    page = client.get("/", params={"q": "klystron in:elog,commands"})
    hrefs = hit_links(page.text)
    assert hrefs and not [h for h in hrefs if h.startswith(("/reports/", "/conv"))]
    assert f"/elog/{ROOT_ID}?q=klystron+in%3Aelog%2Ccommands" in hrefs
    assert "across Commands and ELOG" in page.text
    assert "read as: klystron, in commands and elog" in page.text


def test_a_command_filter_searches_that_commands_reports_and_the_command(
    client: TestClient,
) -> None:
    page = client.get("/", params={"q": f"interlock command:{COMMAND}"})
    assert page.status_code == 200
    query = urlencode({"q": f"interlock command:{COMMAND}"})
    assert sorted(hit_links(page.text)) == sorted(
        [f"/commands/{COMMAND}?{query}", f"/reports/{COMMAND}/{REPORT}?{query}#L1"]
    )
    assert f"read as: interlock, command {COMMAND}" in page.text


def test_elog_filters_list_the_logbook_newest_first_even_without_words(
    client: TestClient,
) -> None:
    page = client.get("/", params={"q": "category:Problem system:RF"})
    assert page.status_code == 200
    assert hit_links(page.text) == [
        f"/elog/{n}?q=category%3AProblem+system%3ARF" for n in (LAST_ID, HTML_ID, ROOT_ID)
    ]
    assert "matched newest first" in page.text
    none = client.get("/", params={"q": "klystron category:Info"})
    assert hit_links(none.text) == []


def test_a_date_range_keeps_dated_documents_within_it(client: TestClient) -> None:
    inside = client.get("/", params={"q": "klystron since:2025-11 until:2025-11"})
    hrefs = hit_links(inside.text)
    assert any(h.startswith(f"/elog/{ROOT_ID}?") for h in hrefs)
    assert not [h for h in hrefs if h.startswith("/commands/")]  # commands have no date
    before = client.get("/", params={"q": "klystron until:2025-01-01"})
    assert not [h for h in hit_links(before.text) if h.startswith(("/elog/", "/reports/"))]


def test_unticking_a_typed_collection_in_the_panel_takes_it_out_of_the_box(
    client: TestClient,
) -> None:
    # The panel showed in:elog (f); it is sent unticked, the box unchanged: the panel wins.
    sent = client.get("/", params={"q": "klystron in:elog", "f": "in:elog"}, follow_redirects=False)
    assert sent.headers["location"] == "/?q=klystron"
    # A filter typed while the panel is unchanged is kept.
    typed = client.get("/", params={"q": "klystron in:elog", "f": ""}, follow_redirects=False)
    assert typed.headers["location"] == "/?" + urlencode({"q": "klystron in:elog"})
    # The panel changed and the box typed: each keeps what was changed where.
    both = client.get(
        "/",
        params={"q": "klystron since:2025-01", "f": "", "category": "Problem"},
        follow_redirects=False,
    )
    assert both.headers["location"] == "/?" + urlencode(
        {"q": "klystron since:2025-01-01 category:Problem"}
    )


def test_the_note_says_how_the_query_was_read(client: TestClient) -> None:
    page = client.get("/", params={"q": 'klystron -modulator "interlock" in:reports'})
    assert page.status_code == 200
    notes = re.findall(r'<p class="note read-as">(.*?)</p>', page.text, re.DOTALL)
    assert notes == ["read as: klystron and &#34;interlock&#34;, without modulator, in reports"]
    assert "The 1 best hits" not in page.text  # one hit and no more: "1 hit"
    assert re.search(r'<h2 id="results-title">1 hit in Reports</h2>', page.text)
    # Only the words searched for are marked, not the operators' words.
    marks = {m.lower() for m in re.findall(r"<mark>(.*?)</mark>", page.text)}
    assert marks <= {"klystron", "interlock", "klystron interlock"} and "reports" not in marks


def test_the_heading_says_the_best_hits_across_all_collections(client: TestClient) -> None:
    page = client.get("/", params={"q": "klystron", "n": "2"})
    assert re.search(
        r'<h2 id="results-title">The 2 best hits across all collections</h2>', page.text
    )
    assert "in every collection" not in page.text


def test_command_hits_say_how_they_matched_in_words(client: TestClient) -> None:
    page = client.get("/", params={"q": "klystron in:commands"})
    matched = re.findall(r'<span class="match">matched (.*?)</span>', page.text)
    assert matched and set(matched) <= {"its name", "its text", "its reports"}
    assert "tier1" not in page.text and "tier2" not in page.text


def test_a_hostile_command_filter_names_the_command_it_searched(client: TestClient) -> None:
    page = client.get("/", params={"q": MARK, "command": H_FOLDER})
    assert page.status_code == 200
    shows_as_text(page.text, [f'command "{H_FOLDER}"', H_REPORT, H_REPORT_LONG])
    # The box holds the filter, the panel shows it, each as text.
    box = [a for tag, a in parsed(page.text).tags if a.get("id") == "q"]
    assert box[0].get("value") == f'{MARK} command:"{H_FOLDER}"'
    assert panel_value(page.text, "command", H_FOLDER)


def test_a_search_that_finds_nothing_shows_why_in_the_logbooks_own_words(
    client: TestClient,
) -> None:
    page = client.get("/", params={"q": "in:elog zzqxvw"})
    assert page.status_code == 200
    notes = re.findall(r'<p class="note read-as">(.*?)</p>', page.text, re.DOTALL)
    assert notes == [
        "read as: zzqxvw, in elog; elog: no entry holds &#39;zzqxvw&#39; (nor a word close to it)"
    ]
