"""The query language, the help page and the browse views in a real browser
(tests/browser.py): filters typed in the box and chosen in the Filters panel, each showing
in the other; the help page's examples; a command's reports, an ELOG month and day, a
date folder's conversations, and a bad day's error page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browser import (
    CHROMIUM,
    box_value,
    first_paint,
    follow,
    hits,
    loaded,
    needs_browser,
    nothing_ran,
    screenshot,
    search_with_enter,
    wait,
)
from site_corpus import H_ROOT_ID, HTML_ID, ROOT_ID

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytest_plugins = ["browser"]
pytestmark = needs_browser

if CHROMIUM.exists():
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions


def test_filters_typed_in_the_box_narrow_the_search_and_show_in_the_panel(
    page: WebDriver, base_url: str
) -> None:
    search_with_enter(page, base_url, 'klystron -modulator in:elog since:2025-11 "tripped"')
    found = hits(page)
    assert found and {label for label, _ in found} == {"ELOG"}
    note = page.find_element(By.CSS_SELECTOR, ".note.read-as").text
    assert note == 'read as: klystron and "tripped", without modulator, in elog, since 2025-11-01'
    # The panel says what it has chosen, and shows the typed filters as chosen in it.
    summary = page.find_element(By.CSS_SELECTOR, "details.filters summary")
    assert summary.text == "Filters: in elog, since 2025-11-01"
    first_paint(page, "typed filters")
    screenshot(page, "search-typed-filters")
    summary.click()
    assert page.find_element(By.CSS_SELECTOR, "input[name=c][value=elog]").is_selected()
    assert not page.find_element(By.CSS_SELECTOR, "input[name=c][value=reports]").is_selected()
    assert page.find_element(By.ID, "since").get_attribute("value") == "2025-11-01"
    # Unticking the collection in the panel takes it out of the box.
    page.find_element(By.CSS_SELECTOR, "input[name=c][value=elog]").click()
    page.find_element(By.CSS_SELECTOR, "details.filters button[type=submit]").click()
    loaded(page, "?q=klystron+%22tripped%22+-modulator+since%3A2025-11-01")
    assert box_value(page) == 'klystron "tripped" -modulator since:2025-11-01'
    assert {label for label, _ in hits(page)} >= {"ELOG"}
    nothing_ran(page)


def test_the_help_page_lists_the_operators_and_its_examples_run(
    page: WebDriver, base_url: str
) -> None:
    page.get(f"{base_url}/")
    page.find_element(By.CSS_SELECTOR, "#hint a[href='/help']").click()
    wait(page).until(expected_conditions.url_contains("/help"))
    rows = page.find_elements(By.CSS_SELECTOR, ".help-page tbody tr")
    assert len(rows) == 8
    first_paint(page, "help")
    screenshot(page, "help")
    examples = [a.get_attribute("href") for a in page.find_elements(By.CSS_SELECTOR, ".examples a")]
    assert len(examples) >= 10
    for href in examples:
        assert href
        page.get(href)
        wait(page).until(expected_conditions.presence_of_element_located((By.ID, "results-title")))
        assert hits(page), href  # each example finds something in the sample data
        nothing_ran(page)


def test_a_commands_reports_list_newest_first_and_opens_each(
    page: WebDriver, base_url: str
) -> None:
    command = "proxy-slow-meeting-analysis-command"
    follow(page, f"{base_url}/reports", command, f"/reports/{command}")
    dates = [t.text for t in page.find_elements(By.CSS_SELECTOR, "table.listing time")]
    assert len(dates) >= 5 and dates == sorted(dates, reverse=True)
    sizes = page.find_elements(By.CSS_SELECTOR, "table.listing td.num")
    assert all(s.text.endswith("B") for s in sizes)
    first_paint(page, "reports of a command")
    screenshot(page, "browse-reports")
    page.find_element(By.CSS_SELECTOR, "table.listing th a").click()
    wait(page).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".markdown"))
    )
    nothing_ran(page)


def test_an_elog_day_lists_its_entries_and_links_each_thread(
    page: WebDriver, base_url: str
) -> None:
    # From a hit to its day.
    search_with_enter(page, base_url, "klystron in:elog")
    day_link = page.find_element(By.CSS_SELECTOR, "li.hit-elog .meta a.list")
    day = day_link.text
    day_link.click()
    wait(page).until(expected_conditions.url_contains(f"/elog?day={day}"))
    assert page.find_element(By.TAG_NAME, "h1").text == f"ELOG {day}"
    assert page.find_elements(By.CSS_SELECTOR, ".elog-list > li")
    nothing_ran(page)
    # From a month to its day, and from the day to an entry's thread.
    follow(page, f"{base_url}/elog?month=2025-11", "2025-11-20", "day=2025-11-20")
    ids = [e.get_attribute("id") for e in page.find_elements(By.CSS_SELECTOR, ".elog-list > li")]
    assert {f"e{ROOT_ID}", f"e{HTML_ID}", f"e{H_ROOT_ID}"} <= set(ids)
    nothing_ran(page)
    page.find_element(By.CSS_SELECTOR, f"#e{HTML_ID} > a").click()
    wait(page).until(expected_conditions.url_contains(f"/elog/{HTML_ID}"))
    current = page.find_element(By.CSS_SELECTOR, "li.entry.current")
    assert current.get_attribute("id") == f"e{HTML_ID}"
    # A month of the sample logbook, for the screenshot.
    page.get(f"{base_url}/elog?month=2024-03")
    assert len(page.find_elements(By.CSS_SELECTOR, ".elog-list > li")) >= 3
    first_paint(page, "elog month")
    screenshot(page, "browse-elog")


def test_conversations_list_by_date_folder_and_open_each_file(
    page: WebDriver, base_url: str
) -> None:
    follow(page, f"{base_url}/conversations", "2025-11-10", "/conversations/2025-11-10")
    names = [n.text for n in page.find_elements(By.CSS_SELECTOR, ".conversations strong")]
    assert "001-klystron-talk" in names
    first_paint(page, "conversations of a day")
    screenshot(page, "browse-conversations")
    page.find_element(By.LINK_TEXT, "notes.md").click()
    wait(page).until(expected_conditions.url_contains("/conversations/2025-11-10/"))
    assert page.find_elements(By.CSS_SELECTOR, "ol.lines li")
    nothing_ran(page)


def test_a_bad_day_is_a_clear_error_page(page: WebDriver, base_url: str) -> None:
    page.get(f"{base_url}/elog?day=2025-13-01")
    alert = page.find_element(By.CSS_SELECTOR, "[role=alert]")
    assert "400" in alert.text and "INVALID_DATE_RANGE" in alert.text
    page.get(f"{base_url}/reports/no-such-command")
    assert "404" in page.find_element(By.CSS_SELECTOR, "[role=alert]").text
