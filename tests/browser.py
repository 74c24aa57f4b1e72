"""The browser the page's browser tests drive (a plugin of tests/test_site_browser*.py,
through ``pytest_plugins``): Debian's chromium, headless, driven by selenium through
chromium-driver, against a real `trove serve` over a copy of the sample data (plus the
documents of site_corpus.py, some of which hold script); one of each for the session.

Each page's first paint is measured with the browser's performance API and printed (run
with -s to see it), never asserted; each page's screenshot is saved in tests/screenshots/.
The README's screenshots (docs/page-*.png) are some of these: run the tests with
TROVE_DOCS_SCREENSHOTS=1 to copy them there.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_corpus import write_corpus
from test_serve import START_S, Trove

from indexer.config import load_settings
from indexer.reindex import reindex

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REPO = Path(__file__).resolve().parent.parent
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
WAIT_S = 15.0
DESKTOP = (1280, 900)
PHONE = (390, 844)

needs_browser = pytest.mark.skipif(
    not CHROMIUM.exists() or not CHROMEDRIVER.exists(),
    reason="the browser tests need Debian's chromium and chromium-driver "
    "(/usr/bin/chromium, /usr/bin/chromedriver): apt-get install chromium chromium-driver",
)

if CHROMIUM.exists():
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

FIRST_PAINT: dict[str, float] = {}
# The screenshots docs/ holds (as page-NAME.png), updated with TROVE_DOCS_SCREENSHOTS=1.
DOCS = REPO / "docs"
DOCS_SCREENSHOTS = (
    "search",
    "search-phone",
    "search-typed-filters",
    "browse-elog",
    "elog-thread",
)


@pytest.fixture(scope="session")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `trove serve` over the sample data and the site corpus; its page's URL."""
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(REPO / "data", root / "data")
    data = root / "data"
    write_corpus(
        data / "reports", data / "commands", data / "conversations", data / "elog" / "SwissFEL"
    )
    config = root / "trove.toml"
    text = (REPO / "trove.toml").read_text(encoding="utf-8")
    config.write_text(text.replace('rerank = "auto"', 'rerank = "lexical"'), encoding="utf-8")
    reindex(load_settings(config))  # built before the server starts: every search answers
    env = {"HOME": str(root / "home"), "HF_HUB_OFFLINE": "1"}
    trove = Trove(config, "serve", "--port", "0", env=env)
    try:
        url = trove.wait_line(r"the page at (http://127\.0\.0\.1:\d+/)", timeout=START_S)[1]
        yield url.rstrip("/")
        assert trove.stop(signal.SIGTERM) == 0
    finally:
        trove.kill()


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-proxy-server",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()
        if FIRST_PAINT:
            shown = ", ".join(f"{page} {ms:.0f} ms" for page, ms in FIRST_PAINT.items())
            print(f"\nfirst paint per page: {shown}", file=sys.stderr)


@pytest.fixture
def page(browser: WebDriver) -> WebDriver:
    browser.set_window_size(*DESKTOP)
    return browser


def first_paint(driver: WebDriver, name: str) -> float:
    """The page's first contentful paint (else DOMContentLoaded), in ms; printed."""
    ms = driver.execute_script(
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "if (p) return p.startTime;"
        "const n = performance.getEntriesByType('navigation')[0];"
        "return n ? n.domContentLoadedEventEnd : null;"
    )
    assert isinstance(ms, (int, float)), ms
    FIRST_PAINT[name] = float(ms)
    print(f"first paint {name}: {ms:.0f} ms")
    return float(ms)


def screenshot(driver: WebDriver, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    assert driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    if name in DOCS_SCREENSHOTS and os.environ.get("TROVE_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(SCREENSHOTS / f"{name}.png", DOCS / f"page-{name}.png")


def nothing_ran(driver: WebDriver) -> None:
    """No script a document holds has run: none set window.__pwned or the title, and no
    dialog is open."""
    try:
        alert = driver.switch_to.alert
    except NoAlertPresentException:
        pass
    else:
        text = alert.text
        alert.dismiss()
        raise AssertionError(f"a dialog opened: {text!r}")
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert driver.title != "pwned"  # a page's own title may hold the word, as text


def wait(driver: WebDriver) -> Any:
    return WebDriverWait(driver, WAIT_S)


def hits(driver: WebDriver) -> list[tuple[str, str]]:
    """(collection label, link) of each hit on a results page."""
    return [
        (
            li.find_element(By.CSS_SELECTOR, ".tag").text,
            li.find_element(By.CSS_SELECTOR, "h3 a").get_attribute("href") or "",
        )
        for li in driver.find_elements(By.CSS_SELECTOR, "li.hit")
    ]


def search_with_enter(driver: WebDriver, base_url: str, words: str) -> None:
    driver.get(f"{base_url}/")
    box = driver.switch_to.active_element  # autofocus: the search box has the focus
    assert box.get_attribute("id") == "q"
    box.send_keys(words, Keys.ENTER)
    wait(driver).until(expected_conditions.presence_of_element_located((By.ID, "results-title")))
    wait(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")


def loaded(driver: WebDriver, url_part: str) -> None:
    """Wait for a page whose URL holds ``url_part`` to have loaded whole."""
    wait(driver).until(expected_conditions.url_contains(url_part))
    wait(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")


def box_value(driver: WebDriver) -> str:
    return driver.find_element(By.ID, "q").get_attribute("value") or ""


def follow(driver: WebDriver, url: str, link_text: str, lands_on: str) -> None:
    """Open ``url``, click its link ``link_text``, wait for a URL holding ``lands_on``."""
    driver.get(url)
    driver.find_element(By.LINK_TEXT, link_text).click()
    wait(driver).until(expected_conditions.url_contains(lands_on))
