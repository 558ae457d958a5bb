"""The web page of ``bloomkit serve`` in a real headless browser (issue 16, item 4).

Chromium from the system packages (``/usr/bin/chromium``, Debian's ``chromium``; ``make test``
installs it when it can) driven by Playwright, never a browser Playwright downloads. Skipped,
saying why, when Playwright or Chromium is missing. ``BLOOMKIT_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from _serve import SMALL_SCHEMA, Server  # noqa: E402

CHROMIUM = os.environ.get("BLOOMKIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason=f"no Chromium at {CHROMIUM} (apt-get install chromium, or set BLOOMKIT_CHROMIUM)")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Any:
    srv = Server(tmp_path_factory.mktemp("browser"), schema=SMALL_SCHEMA).start()
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=60_000)
        except Exception as e:  # a broken browser install: say so, do not fail the suite
            srv.stop()
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {str(e).splitlines()[0]}")
        pg = browser.new_page()
        pg.set_default_timeout(30_000)
        pg.goto(srv.url + "/")
        pg.wait_for_selector("body[data-ready='1']")
        yield pg
        browser.close()
    srv.stop()


def test_publish_then_search_in_the_page(page: Any, tmp_path: Path) -> None:
    assert "m = 256 bits" in page.inner_text("#summary")
    page.fill("#pub-Name", "browserperson")
    page.fill("#pub-City", "Hsinchu")
    page.fill("#pub-Age-lo", "20")
    page.fill("#pub-Age-hi", "29")
    page.fill("#pub-Latitude-lo", "25.0")
    page.fill("#pub-Latitude-hi", "25.0999")
    page.click("#publish-button")
    page.wait_for_selector("#published-id")
    pid = int(page.inner_text("#published-id").split()[-1])
    assert len(page.inner_text("#published-token")) >= 32
    page.wait_for_function("document.querySelector('#summary').textContent.startsWith('1 profiles')")

    page.fill("#q-Age-lo", "22")  # a point
    page.fill("#q-Latitude-lo", "25.01")
    page.fill("#q-Latitude-hi", "25.02")  # a range
    page.click("#search-button")
    page.wait_for_selector("#match-ids")
    assert page.inner_text("#match-ids") == f"ids: {pid}"
    assert int(page.inner_text("#res-candidates")) >= 1 and int(page.inner_text("#res-matches")) == 1
    assert 0 < float(page.inner_text("#res-predicted")) < 1
    page.screenshot(path=str(tmp_path / "page.png"), full_page=True)

    page.fill("#q-Age-lo", "40")  # no longer matches (intersect: 40 is outside 20-29 too)
    page.select_option("#mode", "intersect")
    page.click("#search-button")
    page.wait_for_function("document.querySelector('#match-ids') && "
                           "document.querySelector('#match-ids').textContent === 'no match'")


def test_bad_input_is_shown_naming_the_field(page: Any) -> None:
    page.fill("#q-Age-lo", "500")
    page.fill("#q-Latitude-lo", "")
    page.fill("#q-Latitude-hi", "")
    page.click("#search-button")
    page.wait_for_selector("#search-result.err")
    text = page.inner_text("#search-result")
    assert text.startswith("query.Age:") and "scope" in text
    page.fill("#pub-Name", "")
    page.fill("#pub-City", "")
    for f in ("#pub-Age-lo", "#pub-Age-hi", "#pub-Latitude-lo", "#pub-Latitude-hi"):
        page.fill(f, "")
    page.click("#publish-button")
    page.wait_for_selector("#publish-result.err")
    assert "attributes" in page.inner_text("#publish-result")
