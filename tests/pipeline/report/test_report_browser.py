"""The HTML report in real headless Chromium, opened from a file as a user opens a kept answer:
it renders (heading, answer, sources, the stance chart of an "X vs Y" question), runs nothing
hostile, and asks the network for nothing — every request the page makes is recorded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page, Route, expect

from crowdsift.pipeline.report.html import render_html
from crowdsift.pipeline.result import ResearchResult
from tests.pipeline.report.results import IMG, SCRIPT, comparison_result, hostile_result
from tests.support.browser import chromium, needs_chromium
from tests.support.paths import REPO

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@dataclass
class Opened:
    """The page and what it did besides rendering: requests, dialogs, errors, CSP reports."""

    page: Page
    url: str
    requests: list[str] = field(default_factory=list)
    routed: list[str] = field(default_factory=list)
    """Requests for anything but the file (none may happen)."""
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_quiet(self) -> None:
        assert self.requests == [self.url], f"requests besides the file: {self.requests}"
        assert self.routed == [], f"requests for other things: {self.routed}"
        assert self.dialogs == [] and self.errors == [], (self.dialogs, self.errors)
        loaded = self.page.evaluate("performance.getEntriesByType('resource').length")
        assert loaded == 0, "the page loaded a resource"


@contextmanager
def open_report(browser: Browser, result: ResearchResult, path: Path) -> Iterator[Opened]:
    path.write_text(render_html(result), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    page = context.new_page()
    opened = Opened(page=page, url=path.as_uri())

    def refuse(route: Route) -> None:  # anything but the file itself: record and refuse
        if route.request.url == opened.url:
            route.continue_()
            return
        opened.routed.append(route.request.url)
        route.abort()

    def on_dialog(dialog: Dialog) -> None:
        opened.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(message: Any) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            opened.errors.append(message.text)

    context.route("**/*", refuse)
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: opened.errors.append(str(exc)))
    page.on("console", on_console)
    page.set_default_timeout(15_000)
    try:
        page.goto(opened.url)
        yield opened
    finally:
        context.close()


def screenshot(page: Page, name: str) -> None:
    configured = os.environ.get("CROWDSIFT_TEST_ARTIFACTS")
    folder = Path(configured) if configured else REPO / "build" / "test-artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)


def test_the_report_renders_its_answer_sources_and_chart_and_fetches_nothing(
    browser: Browser, tmp_path: Path
) -> None:
    with open_report(browser, comparison_result(), tmp_path / "report.html") as opened:
        page = opened.page
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "Airflow vs Dagster for a small team?"
        )
        expect(page.locator("#answer")).to_contain_text("Airflow is boring in a good way")
        sources = page.locator("#sources")
        expect(sources.get_by_role("heading", name="Sources")).to_be_visible()
        expect(sources.locator("li[id^=source-]")).to_have_count(3)
        expect(sources.get_by_role("link", name="We moved to Dagster")).to_be_visible()

        chart = page.locator("svg.stance-chart")
        expect(chart).to_be_visible()
        expect(chart.locator("g.bar")).to_have_count(2)
        box = chart.locator("g.bar").first.locator("rect.positive").bounding_box()
        assert box is not None and box["width"] > 50
        expect(page.locator("#comparison table tbody tr")).to_have_count(2)

        page.locator('#answer a[href="#source-3"]').first.click()  # [3] lands on its entry
        assert page.url.endswith("#source-3")
        expect(page.locator("#source-3")).to_be_in_viewport()

        screenshot(page, "report.png")
        opened.assert_quiet()


def test_hostile_text_renders_as_text_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    with open_report(browser, hostile_result(), tmp_path / "hostile.html") as opened:
        page = opened.page
        expect(page.get_by_role("heading", level=1)).to_contain_text(IMG)
        expect(page.locator("#answer")).to_contain_text(SCRIPT)
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 0
        assert page.locator("svg.stance-chart g.bar").count() == 2  # the rows with counts
        hrefs = page.eval_on_selector_all("a[href]", "nodes => nodes.map(n => n.href)")
        assert hrefs and all(h.startswith(("https://www.reddit.com/", opened.url)) for h in hrefs)
        opened.assert_quiet()
