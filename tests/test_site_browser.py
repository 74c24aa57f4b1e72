"""The web page in a real browser (tests/browser.py: chromium through selenium, against a
real `trove serve`): searching, each document page, hostile names, the phone, the keyboard
and the page without JavaScript. tests/test_site_browser_views.py has the query language,
the help page and the browse views.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from browser import (
    CHROMIUM,
    PHONE,
    box_value,
    first_paint,
    hits,
    loaded,
    needs_browser,
    nothing_ran,
    screenshot,
    search_with_enter,
    wait,
)
from site_corpus import (
    COMMAND,
    CONVERSATION,
    H_ATTACHMENT,
    H_AUTHOR,
    H_COMMAND,
    H_CONVERSATION,
    H_CONVERSATION_FOLDER,
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
    H_TITLE,
    HTML_ID,
    LAST_ID,
    MARK,
    REPORT,
    ROOT_ID,
    url_path,
)

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytest_plugins = ["browser"]
pytestmark = needs_browser

if CHROMIUM.exists():
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions


# --------------------------------------------------------------------------- tests


def test_a_search_typed_and_sent_with_enter_shows_hits_from_every_collection(
    page: WebDriver, base_url: str
) -> None:
    search_with_enter(page, base_url, "klystron")
    found = hits(page)
    assert {label for label, _ in found} == {"Reports", "Commands", "Conversations", "ELOG"}
    marks = page.find_elements(By.CSS_SELECTOR, ".snippet mark")
    assert marks and all(m.text.lower() == "klystron" for m in marks)
    nothing_ran(page)
    first_paint(page, "search")
    screenshot(page, "search")
    # The first hit's link opens its document.
    first = found[0][1]
    page.find_element(By.CSS_SELECTOR, "li.hit h3 a").click()
    wait(page).until(expected_conditions.url_to_be(first))
    assert page.find_element(By.TAG_NAME, "h1").text
    nothing_ran(page)


def test_the_empty_search_page_shows_its_help(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/")
    assert "How to search" in page.find_element(By.CSS_SELECTOR, ".help").text
    first_paint(page, "empty search")
    screenshot(page, "search-empty")


def test_filters_chosen_in_the_form_narrow_the_search(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/")
    page.find_element(By.CSS_SELECTOR, "details.filters summary").click()
    page.find_element(By.CSS_SELECTOR, "input[name=c][value=elog]").click()
    page.find_element(By.ID, "q").send_keys("klystron", Keys.ENTER)
    wait(page).until(expected_conditions.presence_of_element_located((By.ID, "results-title")))
    found = hits(page)
    assert found and {label for label, _ in found} == {"ELOG"}
    # The panel's choice is written into the box, and the panel keeps it.
    assert box_value(page) == "klystron in:elog"
    assert page.find_element(By.CSS_SELECTOR, "input[name=c][value=elog]").is_selected()
    # An ELOG category narrows further, and shows in the box too.
    page.find_element(By.CSS_SELECTOR, "details.filters summary").click()
    category = page.find_element(By.ID, "category")
    category.find_element(By.CSS_SELECTOR, "option[value=Problem]").click()
    page.find_element(By.CSS_SELECTOR, "details.filters button[type=submit]").click()
    loaded(page, "category%3AProblem")
    assert box_value(page) == "klystron in:elog category:Problem"
    problem = hits(page)
    assert problem and len(problem) <= len(found)
    query = "?q=klystron+in%3Aelog+category%3AProblem"
    assert f"/elog/{ROOT_ID}{query}" in {href.removeprefix(base_url) for _, href in problem}
    first_paint(page, "filtered search")
    screenshot(page, "search-filtered")


def test_a_report_holding_script_renders_and_runs_none_of_it(
    page: WebDriver, base_url: str
) -> None:
    page.get(f"{base_url}/reports/{COMMAND}/{REPORT}?q=interlock")
    nothing_ran(page)
    assert page.find_element(By.CSS_SELECTOR, ".markdown h1").text == "Klystron interlock report"
    body = page.find_element(By.CSS_SELECTOR, ".markdown").text
    assert "<script>window.__pwned = 1" in body  # shown as text
    assert "onerror=" in body
    assert page.find_elements(By.CSS_SELECTOR, ".markdown table")
    assert [m.text for m in page.find_elements(By.CSS_SELECTOR, ".markdown h1 mark")] == [
        "interlock"
    ]
    for link in page.find_elements(By.CSS_SELECTOR, ".markdown a"):
        assert not (link.get_attribute("href") or "").startswith("javascript:")
    first_paint(page, "report")
    screenshot(page, "report")


def test_a_command_page_shows_the_command_and_links_its_reports(
    page: WebDriver, base_url: str
) -> None:
    page.get(f"{base_url}/commands/{COMMAND}")
    assert page.find_element(By.TAG_NAME, "h1").text == "Klystron check"
    page.find_element(By.LINK_TEXT, REPORT).click()
    wait(page).until(expected_conditions.url_contains(f"/reports/{COMMAND}/"))
    nothing_ran(page)
    page.get(f"{base_url}/commands/proxy-slow-meeting-analysis-command")
    first_paint(page, "command")
    screenshot(page, "command")


def test_a_conversation_link_points_at_its_line(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/conversations/{CONVERSATION}?q=interlock#L2")
    target = page.execute_script("return document.querySelector(':target').id")
    assert target == "L2"
    assert page.find_element(By.CSS_SELECTOR, "#L2 mark").text == "interlock"
    first_paint(page, "conversation")
    screenshot(page, "conversation")


def test_an_elog_entry_shows_in_its_whole_thread_and_its_html_runs_nothing(
    page: WebDriver, base_url: str
) -> None:
    page.get(f"{base_url}/elog/{HTML_ID}?q=klystron")
    entries = page.find_elements(By.CSS_SELECTOR, "li.entry")
    assert [e.get_attribute("id") for e in entries] == [f"e{ROOT_ID}", f"e{HTML_ID}", f"e{LAST_ID}"]
    current = page.find_element(By.CSS_SELECTOR, "li.entry.current")
    assert current.get_attribute("id") == f"e{HTML_ID}"
    assert current.find_element(By.CSS_SELECTOR, ".elog-html b").text == "interlock"
    nothing_ran(page)
    # Hover what had onmouseover, click what had a javascript: link: nothing runs (a
    # javascript: URL that ran would also replace the page with its value).
    ActionChains(page).move_to_element(
        current.find_element(By.XPATH, ".//p[contains(., 'hover here')]")
    ).perform()
    nothing_ran(page)
    current.find_element(By.LINK_TEXT, "details").click()
    nothing_ran(page)
    assert len(page.find_elements(By.CSS_SELECTOR, "li.entry")) == 3
    first_paint(page, "elog thread")
    screenshot(page, "elog-thread")


def _shown(text: str) -> str:
    """A value as the browser shows it: runs of white space made one space."""
    return " ".join(text.split())


# Pages showing the hostile documents of site_corpus.py: path, its h1 (None: not
# checked), the values it shows.
HOSTILE_PAGES = [
    (
        f"/elog/{H_ROOT_ID}",
        H_TITLE,
        [H_AUTHOR, H_SCRIPT, H_JS, H_ENTITY, H_SECTION, H_ATTACHMENT, H_LONG, H_RTL],
    ),
    (f"/elog/{H_REPLY_ID}", H_LONG, [H_TITLE]),
    (f"/commands/{url_path(H_COMMAND)}", H_TITLE, [H_COMMAND, H_LONG, H_IMG, H_JS, H_RICH]),
    (f"/commands/{url_path(H_FOLDER)}", f"{MARK}'s reports", [H_REPORT, H_REPORT_LONG]),
    (f"/reports/{url_path(H_FOLDER, H_REPORT)}", H_REPORT, [H_FOLDER]),
    (f"/reports/{url_path(H_FOLDER, H_REPORT_LONG)}", H_REPORT_LONG, [H_FOLDER]),
    (
        f"/conversations/{quote(H_CONVERSATION)}",
        H_CONVERSATION_FOLDER,
        [H_CONVERSATION_OTHER_FILE],
    ),
    (f"/reports/{url_path(H_FOLDER)}", H_FOLDER, [H_REPORT, H_REPORT_LONG]),
    ("/elog?day=2025-11-20", None, [H_TITLE, H_AUTHOR, H_SCRIPT, H_JS, H_LONG_IN_HITS]),
    (
        "/conversations/2025-11-21",
        None,
        [H_CONVERSATION_FOLDER, H_CONVERSATION_OTHER_FILE],
    ),
    (
        f"/?q={MARK}&n=50",
        None,
        [
            H_REPORT,
            H_REPORT_LONG,
            H_COMMAND,
            H_FOLDER,
            H_CONVERSATION_FOLDER,
            H_TITLE,
            H_LONG_IN_HITS,
        ],
    ),
]


def test_hostile_names_titles_and_attributes_show_as_text_and_run_nothing(
    page: WebDriver, base_url: str
) -> None:
    for path, h1, values in HOSTILE_PAGES:
        page.get(f"{base_url}{path}")
        nothing_ran(page)
        main = page.find_element(By.TAG_NAME, "main")
        # No element was made of a hostile string: the page's own have none of these.
        assert main.find_elements(By.CSS_SELECTOR, "img, svg, script, b") == [], path
        if h1 is not None:
            assert main.find_element(By.TAG_NAME, "h1").text == _shown(h1), path
        text = main.text
        for value in values:
            assert _shown(value) in text, (path, value[:80])
        # Nothing in the live document could run later: no handler, no javascript: link.
        live = page.execute_script(
            "return [...document.querySelectorAll('*')].filter(e => [...e.attributes].some("
            "a => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value))).length"
        )
        assert live == 0, path
    page.get(f"{base_url}/elog/{H_ROOT_ID}")
    assert page.title == f"{_shown(H_TITLE)} · trove"
    screenshot(page, "elog-thread-hostile")


# The top and left edges of each character of an element's text, in the text's order.
LEFTS = """
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
const lefts = [];
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  for (let i = 0; i < n.length; i++) {
    if (!n.data[i].trim()) continue;
    const r = document.createRange();
    r.setStart(n, i);
    r.setEnd(n, i + 1);
    const box = r.getBoundingClientRect();
    lefts.push([Math.round(box.top), box.left]);
  }
}
return lefts;
"""


def reads_left_to_right(driver: WebDriver, element: Any) -> None:
    """Each line of the element's text is laid out in the text's order."""
    boxes = driver.execute_script(LEFTS, element)
    assert boxes, element.text
    for (top, left), (next_top, next_left) in itertools.pairwise(boxes):
        assert next_top > top or (next_top == top and next_left > left), (element.text, boxes)


def test_a_right_to_left_override_in_a_name_never_reorders_what_follows_it(
    page: WebDriver, base_url: str
) -> None:
    # Each of these follows a name ending inside a U+202E (right-to-left override), on
    # the same line: an entry's id after its title, "reply to #id" after an author, a
    # report's date after its name, a conversation's file after another's name.
    page.get(f"{base_url}/elog/{H_ROOT_ID}")
    reads_left_to_right(page, page.find_element(By.CSS_SELECTOR, f"#e{H_ROOT_ID} h2 .id"))
    reads_left_to_right(page, page.find_element(By.CSS_SELECTOR, f"#e{H_REPLY_ID} h2 .id"))
    reply_to = page.find_element(By.CSS_SELECTOR, f"#e{H_REPLY_ID} .meta a[href='#e{H_ROOT_ID}']")
    reads_left_to_right(page, reply_to)
    page.get(f"{base_url}/commands/{url_path(H_FOLDER)}")
    for when in page.find_elements(By.CSS_SELECTOR, ".reports time"):
        reads_left_to_right(page, when)
    page.get(f"{base_url}/conversations/{quote(H_CONVERSATION)}")
    reads_left_to_right(page, page.find_element(By.CSS_SELECTOR, ".facts strong"))


def test_a_sample_elog_thread_reads_in_order(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/elog/31303")
    ids = [e.get_attribute("id") for e in page.find_elements(By.CSS_SELECTOR, "li.entry")]
    assert ids[0] == "e31302" and "e31303" in ids and len(ids) >= 3
    first_paint(page, "sample elog thread")
    screenshot(page, "elog-thread-sample")


def test_the_status_page_shows_every_collection_and_the_daemon(
    page: WebDriver, base_url: str
) -> None:
    page.get(f"{base_url}/status")
    rows = page.find_elements(By.CSS_SELECTOR, "tbody th[scope=row]")
    assert [r.text for r in rows] == ["reports", "commands", "conversations", "elog"]
    assert "pid" in page.find_element(By.CSS_SELECTOR, ".health").text
    first_paint(page, "status")
    screenshot(page, "status")


def test_slash_moves_the_focus_to_the_search_box(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/elog/{ROOT_ID}")
    page.find_element(By.TAG_NAME, "body").send_keys("/")
    assert page.switch_to.active_element.get_attribute("id") == "top-q"
    page.switch_to.active_element.send_keys("interlock", Keys.ENTER)
    wait(page).until(expected_conditions.url_contains("q=interlock"))
    assert hits(page)


def test_every_page_reads_on_a_phone_without_sideways_scrolling(
    page: WebDriver, base_url: str
) -> None:
    page.set_window_size(*PHONE)
    paths = [
        "/?q=klystron",
        f"/reports/{COMMAND}/{REPORT}",
        f"/conversations/{quote(CONVERSATION)}",
        f"/elog/{HTML_ID}",
        "/status",
        "/help",
        "/reports",
        f"/reports/{url_path(H_FOLDER)}",
        "/elog?day=2025-11-20",
        "/elog",
        "/conversations/2025-11-21",
        *(path for path, _, _ in HOSTILE_PAGES),
    ]
    for path in paths:
        page.get(f"{base_url}{path}")
        overflow = page.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, (path, overflow)
    page.get(f"{base_url}/?q=klystron")
    screenshot(page, "search-phone")


def test_the_pages_work_without_javascript(
    tmp_path: Path, base_url: str, browser: WebDriver
) -> None:
    # The same browser with script switched off for this host (Chrome DevTools).
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        browser.get(f"{base_url}/")
        browser.find_element(By.ID, "q").send_keys("klystron", Keys.ENTER)
        wait(browser).until(
            expected_conditions.presence_of_element_located((By.ID, "results-title"))
        )
        assert hits(browser)
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
