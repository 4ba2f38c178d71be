"""The web page at ``/`` in real headless Chromium, against a real uvicorn server on 127.0.0.1.

Two kinds of server: one running real research jobs (local engine, bundled demo archive and
demo experts) for the flow a user sees, and one whose jobs return a crafted ``ResearchResult``
carrying hostile text in every field the page renders, so the escaping is checked everywhere
and not only where the demo data happens to put its hostile post. Every request the browser
makes to anything but the test server is answered by a stub, so nothing leaves the machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from playwright.sync_api import Browser, Dialog, Locator, Page, Route, expect
from pydantic import SecretStr

from crowdsift.core.citations import Citation
from crowdsift.core.config import Settings
from crowdsift.core.models import SourceStatus
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.pipeline.synthesis.cited import CitedSpan, CitedText
from crowdsift.service.api.app import create_app
from crowdsift.service.api.deps import ServiceState
from crowdsift.service.api.routes.web import static_dir
from crowdsift.service.facade import FeedService
from crowdsift.service.jobs.factory import build_job_service
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.sources.experts.models import ExpertSummary
from crowdsift.sources.youtube import SKIP_NOTICE as YOUTUBE_SKIP_NOTICE
from tests.support.browser import chromium, needs_chromium
from tests.support.net import serve_app
from tests.support.paths import REPO

JOB_TIMEOUT_MS = 120_000

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
JS_URL = "javascript:alert(1)"
MIXED_JS_URL = " JaVaScRiPt:alert(3)"
DATA_URL = "data:text/html,<script>alert(4)</script>"
SAFE_THREAD = "https://www.reddit.com/r/gadgets/comments/abc123/hostile_thread/"
API_KEY = "web-test-key-8c1f2e"

pytestmark = needs_chromium


# ---- servers --------------------------------------------------------------------------------


def serve(app: FastAPI) -> AbstractContextManager[str]:
    """``app`` under a real uvicorn on a free port of 127.0.0.1, stopped on exit."""
    return serve_app(app, name="web-test-uvicorn", timeout_graceful_shutdown=5)


@contextmanager
def clean_environment() -> Iterator[None]:
    """Module-wide servers outlive the per-test env isolation, so isolate them too."""
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            ours = name.startswith(("CROWDSIFT_", "REDDIT_", "OPENAI_", "MODEL_", "ARCTIC_"))
            if ours and not name.startswith("CROWDSIFT_TEST_"):
                mp.delenv(name)
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def research_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Real jobs: local engine, bundled demo archive and demo experts, SQLite job store."""
    with clean_environment():
        home = tmp_path_factory.mktemp("web-real-home")
        settings = Settings(home=home, engine="local", source="archive", job_workers=1)
        with serve(create_app(settings)) as url:
            yield url


def crafted_app(
    settings: Settings, result: ResearchResult | Callable[[ResearchRequest], ResearchResult]
) -> FastAPI:
    """An app whose jobs report hostile progress and return ``result`` (or what it makes of
    the request) — the real job service, store and event stream; only research is injected."""

    def research(request: ResearchRequest, progress: Progress) -> ResearchResult:
        progress("scout", f"searching for {IMG} {SCRIPT}")
        progress("synthesize", "writing the answer")
        made = result if isinstance(result, ResearchResult) else result(request)
        return made.model_copy(update={"question": request.question})

    experts = [
        ExpertSummary(
            expert_id="hostile", name=f"Hostile {IMG}", channel="hostile", language="en", posts=2
        )
    ]
    state = ServiceState(
        settings=settings,
        jobs=build_job_service(settings, research=research),
        feed=FeedService(settings),
        fetch=_no_fetch,
        experts=lambda: experts,
        sse_poll_seconds=0.05,
    )
    return create_app(settings, state=state)


def _no_fetch(_plan: object) -> Any:
    raise AssertionError("the page never calls /api/fetch")


@pytest.fixture(scope="module")
def crafted_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with clean_environment():
        settings = Settings(home=tmp_path_factory.mktemp("web-crafted-home"), engine="local")
        with serve(crafted_app(settings, hostile_result())) as url:
            yield url


@pytest.fixture(scope="module")
def keyed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with clean_environment():
        settings = Settings(
            home=tmp_path_factory.mktemp("web-keyed-home"),
            engine="local",
            api_key=SecretStr(API_KEY),
        )
        with serve(crafted_app(settings, hostile_result())) as url:
            yield url


# ---- browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@dataclass
class Tab:
    """A page plus what it did that the tests check: dialogs, script errors, CSP violations,
    requests to anywhere but the test server."""

    page: Page
    base_url: str
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert self.dialogs == [], f"a dialog fired: {self.dialogs}"
        assert self.errors == [], f"page errors: {self.errors}"


@contextmanager
def open_tab(browser: Browser, base_url: str, *, width: int = 1100) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    tab = Tab(page=page, base_url=base_url)

    def stub_outside(route: Route) -> None:
        url = route.request.url
        if url.startswith(base_url + "/"):
            route.continue_()
        else:
            tab.outside.append(url)
            route.fulfill(status=200, content_type="text/plain", body="stub of an outside page")

    def on_dialog(dialog: Dialog) -> None:
        tab.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(message: Any) -> None:
        if "Content Security Policy" in message.text:
            tab.errors.append(message.text)

    context.route("**/*", stub_outside)
    context.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    page.on("console", on_console)
    page.set_default_timeout(20_000)
    try:
        page.goto(base_url + "/")
        yield tab
    finally:
        context.close()


def ask(page: Page, question: str = "Is the Plaud Note worth it?") -> None:
    """Ask ``question`` from the page's form and wait until the job is done."""
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask").click()
    wait_done(page)


def wait_done(page: Page) -> None:
    expect(page.locator("#job-status")).to_have_text("Done.", timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#submit")).to_be_enabled()


def artifacts_dir() -> Path:
    configured = os.environ.get("CROWDSIFT_TEST_ARTIFACTS")
    path = Path(configured) if configured else REPO / "build" / "test-artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


def screenshot(page: Page, name: str) -> Path:
    path = artifacts_dir() / name
    path.unlink(missing_ok=True)
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return path


def hrefs(page: Page, selector: str) -> list[str]:
    result: list[str] = page.eval_on_selector_all(
        selector, "nodes => nodes.map(n => n.getAttribute('href'))"
    )
    return result


# ---- real research runs -----------------------------------------------------------------------


def test_a_question_to_an_expert_and_reddit_shows_progress_answers_and_sources(
    research_url: str, browser: Browser
) -> None:
    with open_tab(browser, research_url) as tab:
        page = tab.page
        expert = page.locator('#expert-list input[value="desk_gear_weekly"]')
        expect(expert).to_have_count(1)
        expert.check()
        page.get_by_label("Your question").fill(
            "Is the Plaud Note worth it compared to a phone recording app?"
        )
        expect(page.get_by_label("Search Reddit")).to_be_checked()
        page.get_by_role("button", name="Ask").click()

        expect(page.locator("#submit")).to_be_disabled()
        card = page.locator('article.expert-card[data-expert="desk_gear_weekly"]')
        expect(card).to_have_count(1)
        expect(card.locator("h3")).to_have_text("Desk Gear Weekly")  # its name, not its id
        expect(page.locator("#progress-list li").first).to_be_visible()
        wait_done(page)

        progress = page.locator("#progress-list").inner_text()
        assert "asking desk_gear_weekly" in progress
        for phase in ("experts", "search", "rerank", "drill", "synthesize", "job"):
            assert phase in progress, f"no {phase!r} progress in {progress!r}"

        expect(page.locator("#result-meta")).to_contain_text("extractive, not an LLM")
        expect(card).to_contain_text("Extractive summary by the local engine")
        expert_links = hrefs(page, 'article.expert-card[data-expert="desk_gear_weekly"] a')
        outward = [h for h in expert_links if not h.startswith("#")]
        assert outward and all(h.startswith("https://t.me/desk_gear_weekly/") for h in outward)
        expect(card.locator("sup.cite a").first).to_be_visible()  # [post:N] became [n] …
        for href in hrefs(page, 'article.expert-card[data-expert="desk_gear_weekly"] sup.cite a'):
            assert re.fullmatch(r"#expert-0-src-\d+", href), href  # … into the card's own list
            expect(card.locator(f"ol.sources li{href}")).to_have_count(1)

        community = page.locator("#community")
        expect(community.get_by_role("heading", name="Community Insights")).to_be_visible()
        expect(community).to_contain_text("What the community says")
        expect(community).to_contain_text("Reddit summary")
        reddit_links = [h for h in hrefs(page, "#community a") if not h.startswith("#")]
        assert len(reddit_links) > 5
        assert all(h.startswith("https://www.reddit.com/r/") for h in reddit_links)
        expect(community.locator("ol.sources")).to_have_count(1)  # one list for the one answer
        cites = hrefs(page, "#community sup.cite a")
        assert cites and all(re.fullmatch(r"#reddit-src-\d+", h) for h in cites)
        for href in set(cites):  # every [n] leads to its entry in that list
            expect(community.locator(f"ol.sources {href}")).to_have_count(1)
        assert not re.search(r"\b(post|comment):", community.inner_text())  # no internal ids
        anchor = community.locator("ol.sources a").first
        assert anchor.get_attribute("target") == "_blank"
        assert anchor.get_attribute("rel") == "noopener noreferrer"

        with page.context.expect_page() as opened:
            anchor.click()
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.url == anchor.get_attribute("href")
        assert tab.outside == [popup.url]  # the click was the only request off the server
        popup.close()

        screenshot(page, "web-page.png")
        tab.assert_clean()


def test_reddit_only_hides_expert_cards_and_keeps_the_demo_hostile_post_inert(
    research_url: str, browser: Browser
) -> None:
    with open_tab(browser, research_url, width=390) as tab:  # phone width
        page = tab.page
        expect(page.locator("#expert-list input")).not_to_have_count(0)
        page.get_by_label("Your question").fill(
            "NotePin transcript export broken after the app update?"
        )
        page.get_by_role("button", name="Ask").click()
        expect(page.locator("#progress-list li").first).to_be_visible()
        expect(page.locator("#expert-answers")).to_be_hidden()
        assert page.locator(".expert-card").count() == 0
        wait_done(page)

        assert page.locator(".expert-card").count() == 0
        expect(page.locator("#expert-answers")).to_be_hidden()
        community = page.locator("#community")
        expect(community).to_be_visible()
        # The demo archive's hostile post is in the answer's sources, its title as text (its
        # body, a question, is no longer quoted as a claim; the crafted results cover bodies).
        text = community.inner_text()
        assert "<img src=x onerror=alert(1)> Plaud NotePin transcript export broken?" in text
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1  # the page's own app.js (its imports add none)
        screenshot(page, "web-page-reddit-only-phone.png")
        tab.assert_clean()
        assert tab.outside == []


SOURCE_LIST_JS = """list => [...list.querySelectorAll(':scope > li')].map(group => {
    const head = group.querySelector(':scope > .src-thread');
    const link = head.querySelector('a');
    const entry = (node, quote) => ({
        n: node.querySelector('.src-n').textContent,
        href: (node.querySelector(':scope > a, :scope > .src-thread a') || {}).href || null,
        quote: quote ? quote.textContent : '',
    });
    return {
        title: link ? link.textContent : head.textContent,
        href: link ? link.href : null,
        thread: head.querySelector('.src-n')
            ? entry(group, group.querySelector(':scope > .src-quote')) : null,
        comments: [...group.querySelectorAll('.cited-comments > li')].map(li => {
            const a = li.querySelector('a');
            return { n: li.querySelector('.src-n').textContent, href: a ? a.href : null,
                     quote: a ? a.textContent : '' };
        }),
    };
})"""
SECTIONS_JS = """answer => [...answer.querySelectorAll('section.block')]
    .filter(s => s.querySelector(':scope > h3') && s.querySelector(':scope > h3').textContent
        !== 'Sources')
    .map(s => [s.querySelector(':scope > h3').textContent,
               s.innerText.slice(s.querySelector(':scope > h3').innerText.length)])"""


def sentence_keys(text: str) -> list[str]:
    """The sentences of shown text by their words (no [n], quotes, case or "(6 points)")."""
    text = re.sub(r"\[\d+\]", " ", text)
    keys = []
    for piece in re.split(r"(?<=[.!?…])[\"”’)\]]*\s+|\n+", text):
        piece = re.sub(r"\(\d+ points?\)", " ", piece)
        key = " ".join(re.findall(r"\w+", piece.lower()))
        if len(key.split()) >= 4:  # a badge ("157 votes") or a lone word is not a sentence
            keys.append(key)
    return keys


def test_after_the_answer_renders_its_sources_are_one_list_of_quoted_numbered_links(
    research_url: str, browser: Browser
) -> None:
    """A real demo-archive answer: one source list; every entry numbered, linked and quoting
    the sentence it supports; comments under their thread; no sentence in two sections."""
    with open_tab(browser, research_url) as tab:
        page = tab.page
        page.get_by_label("Your question").fill(
            "Is the Plaud Note worth it compared to a phone recording app?"
        )
        page.get_by_role("button", name="Ask").click()
        wait_done(page)
        answers = page.locator("#community .reddit-summary")
        expect(answers).to_have_count(1)
        answer = answers.first
        expect(answer.locator("ol.sources")).to_have_count(1)  # one list per answer
        expect(page.locator("#community ol")).to_have_count(1)
        groups: list[dict[str, Any]] = answer.locator("ol.sources").evaluate(SOURCE_LIST_JS)
        assert len(groups) >= 3

        sections = dict(answer.evaluate(SECTIONS_JS))
        # The minority report may be empty: the answer never repeats a sentence it already quotes.
        assert {"What the community says", "Cautions"} <= set(sections)
        said = " ".join(sentence_keys(" ".join(sections.values())))
        numbers: list[int] = []
        for group in groups:
            assert group["href"] and re.match(r"https?://", group["href"]), group  # title links
            assert group["title"].strip() and not group["title"].startswith("http"), group
            entries = ([group["thread"]] if group["thread"] else []) + group["comments"]
            assert entries, f"a thread with nothing numbered under it: {group}"
            for entry in entries:
                assert re.fullmatch(r"\[\d+\]", entry["n"]), entry
                numbers.append(int(entry["n"][1:-1]))
                assert entry["href"] and re.match(r"https?://", entry["href"]), entry
                counted = re.fullmatch(r"counted for “(.+)” in the comparison", entry["quote"])
                if counted:  # a source of a comparison row says so, and the row is there
                    assert counted[1] in sections["Comparison"], entry
                    continue
                quote = entry["quote"].strip("“”")
                assert 20 <= len(quote) <= 161, entry
                # the quote is a sentence the answer shows above, not a label
                first = sentence_keys(quote.rstrip("…"))[0]
                assert " ".join(first.split()[:6]) in said, (entry, said)
            for comment in group["comments"]:  # under its own thread's title
                assert comment["href"].startswith(group["href"]), (comment, group)
        assert numbers == list(range(1, len(numbers) + 1)), numbers
        assert len({g["title"] for g in groups}) == len(groups)  # each thread once

        where: dict[str, str] = {}
        for heading, text in sections.items():
            for key in sentence_keys(text):
                assert where.setdefault(key, heading) == heading, (
                    f"{key!r} is in {where[key]!r} and again in {heading!r}"
                )
        shown = answer.inner_text()
        assert "median" not in shown and "Upvoted at or above" not in shown
        if "Minority report" in sections:  # its votes stand beside each item, not a rule's name
            expect(
                answer.locator("section.block", has_text="Minority report").first
            ).to_contain_text(" votes")
        for href in hrefs(page, "#community .also-read a"):
            assert href.startswith("https://"), href
        tab.assert_clean()
        assert tab.outside == []


# ---- crafted results: escaping everywhere -------------------------------------------------------


def hostile_result() -> ResearchResult:
    """Hostile text and URLs in every field the page renders."""
    when = datetime(2026, 1, 2, tzinfo=UTC).isoformat()
    synthesis = {
        "summary": f"{IMG} is the consensus [post:a1] and {SCRIPT} the dissent [comment:b2].",
        # each field its own sentence: the page shows a sentence once, in its first section
        "hidden_gems": [{"text": f"gem {IMG}", "sources": [JS_URL, SAFE_THREAD], "score": 9}],
        "minority_report": [{"text": f"dissent {SCRIPT}", "sources": [MIXED_JS_URL], "votes": 4}],
        "pivot_alerts": [
            {"from_option": IMG, "to_option": SCRIPT, "text": f"pivot {IMG}", "sources": [DATA_URL]}
        ],
        "comparison_table": [
            {
                "option": IMG,
                "verdict": SCRIPT,
                "pros": [f"pro {IMG}"],
                "cons": [f"con {SCRIPT}"],
                "sources": [JS_URL],
            }
        ],
        "sources": [
            {"kind": "thread", "id": "a1", "url": JS_URL, "title": f"thread {IMG}"},
            {"kind": "comment", "id": "b2", "url": SAFE_THREAD, "title": f"safe {SCRIPT}"},
        ],
    }
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "partial",
            "engine": "local",
            "summary": {
                "status": "partial",
                "summary": f"Summary {IMG} [post:p1]",
                "highlights": [SCRIPT],
                "cautions": [IMG],
                "sources": [
                    {"post_id": "p1", "url": SAFE_THREAD, "subreddit": IMG, "title": SCRIPT}
                ],
                "prompt_version": "v1",
                "engine": "local",
                "reason": f"reason {IMG}",
            },
            "expert_responses": [
                {
                    "expert_id": "hostile",
                    "answer": f"- {IMG} says so [post:1]\n- and {SCRIPT} [post:2]\n{IMG}",
                    "main_sources": [
                        {
                            "post_id": 1,
                            "url": JS_URL,
                            "date": when,
                            "relevance": "HIGH",
                            "excerpt": IMG,
                        },
                        {
                            "post_id": 2,
                            "url": "https://t.me/hostile/2",
                            "date": when,
                            "relevance": "MEDIUM",
                            "excerpt": SCRIPT,
                        },
                    ],
                    "comment_sections": [
                        {"kind": "expert_notes", "title": f"Notes {IMG}", "text": SCRIPT}
                    ],
                    "notes": [IMG],
                    "removed_citations": [IMG],
                }
            ],
            "reddit_response": {
                "status": "partial",
                "engine": "local",
                "source": IMG,
                "threads_drilled": 2,
                "comments_drilled": 3,
                "synthesis": synthesis,
                "errors": [f"error {IMG}"],
            },
            "timings_ms": {},
            "usage": {},
        }
    )


def test_hostile_text_in_every_rendered_field_stays_text_and_no_unsafe_link_exists(
    crafted_url: str, browser: Browser
) -> None:
    with open_tab(browser, crafted_url) as tab:
        page = tab.page
        expert = page.locator('#expert-list input[value="hostile"]')
        expect(expert).to_have_count(1)
        expert.check()
        page.get_by_label("Your question").fill(f"Is {IMG} safe?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)

        body = page.locator("body").inner_text()
        assert body.count(IMG) >= 15, "hostile text should be shown, as text, everywhere"
        assert body.count(SCRIPT) >= 8
        assert JS_URL in body  # an unsafe URL is shown as plain text
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1
        assert page.evaluate(
            "[...document.querySelectorAll('*')]"
            ".every(n => [...n.attributes].every(a => !a.name.startsWith('on')))"
        ), "some element has an event-handler attribute"

        links = hrefs(page, "a[href]")
        assert links, "the safe sources should still be links"
        reports = [h for h in links if re.fullmatch(r"/api/research/[\w-]+/report\.(md|html)", h)]
        assert len(reports) == 2  # the answer's own reports, on this server
        assert all(h.startswith(("https://", "#")) for h in links if h not in reports), links
        assert page.locator("a[href^='javascript' i], a[href^='data' i]").count() == 0
        assert SAFE_THREAD in links and "https://t.me/hostile/2" in links
        blank = page.locator("a[target=_blank]")
        assert blank.count() == len([h for h in links if h.startswith("https://")]) + 2
        for index in range(blank.count()):
            assert blank.nth(index).get_attribute("rel") == "noopener noreferrer"

        expect(page.locator(".not-a-link").first).to_contain_text("javascript:alert(1)")
        expect(page.locator(".sample-banner")).to_have_count(0)  # not sample data
        # the Reddit block shows the overall status (partial), never a part's own "ok"
        expect(page.locator("#community .badge-ok")).to_have_count(0)
        expect(page.locator("#progress-list")).to_contain_text(f"searching for {IMG}")
        expect(page.locator("#result-meta")).to_contain_text("partial")
        tab.assert_clean()
        assert tab.outside == []


def test_when_the_event_stream_breaks_the_page_polls_for_the_result(
    crafted_url: str, browser: Browser
) -> None:
    with open_tab(browser, crafted_url) as tab:
        page = tab.page
        broken: list[str] = []

        def break_stream(route: Route) -> None:
            broken.append(route.request.url)
            route.abort()

        page.route("**/api/research/*/events", break_stream)
        expect(page.locator("#expert-list input")).to_have_count(1)
        page.get_by_label("Your question").fill("Does it work without the stream?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)

        assert len(broken) == 3  # tried the stream a few times, then polled
        expect(page.locator("#progress-list")).to_contain_text("live progress unavailable")
        expect(page.locator("#community")).to_contain_text("What the community says")
        expect(page.locator("#expert-answers")).to_be_hidden()
        tab.assert_clean()


def test_a_server_validation_error_is_shown_and_the_form_stays_usable(
    crafted_url: str, browser: Browser
) -> None:
    with open_tab(browser, crafted_url) as tab:
        page = tab.page
        expect(page.locator("#expert-list input")).to_have_count(1)
        page.get_by_label("Search Reddit").uncheck()
        page.get_by_label("Your question").fill("Anything?")
        page.get_by_role("button", name="Ask").click()
        expect(page.locator("#form-error")).to_contain_text("Pick at least one expert")

        page.get_by_label("Search Reddit").check()
        # Past the textarea's maxlength, as a script could: the server's 422 message is shown.
        page.eval_on_selector("#question", "node => { node.value = 'x'.repeat(2001); }")
        page.get_by_role("button", name="Ask").click()
        error = page.locator("#form-error")
        expect(error).to_contain_text("question")
        expect(error).to_contain_text("2000")
        expect(page.locator("#submit")).to_be_enabled()
        expect(page.locator("#results")).to_be_hidden()
        tab.assert_clean()


# ---- YouTube and Amazon -------------------------------------------------------------------------

YT_URL = "https://www.youtube.com/watch?v=abc123XYZ_0"
YT_PLAIN_URL = "https://www.youtube.com/watch?v=def456uvw_1"
AMZN_URL = "https://www.amazon.com/dp/B0HOSTILE1"


@dataclass
class Scripted:
    """The jobs' research: the next prepared result for each request, the requests kept."""

    results: list[ResearchResult] = field(default_factory=list)
    requests: list[ResearchRequest] = field(default_factory=list)

    def __call__(self, request: ResearchRequest) -> ResearchResult:
        self.requests.append(request)
        return self.results.pop(0)


@pytest.fixture(scope="module")
def sources_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Scripted]]:
    scripted = Scripted()
    with clean_environment():
        settings = Settings(home=tmp_path_factory.mktemp("web-sources-home"), engine="local")
        with serve(crafted_app(settings, scripted)) as url:
            yield url, scripted


def videos_and_products_result() -> ResearchResult:
    """Reddit, YouTube and Amazon in one summary; hostile text in titles, channels, comments."""
    video = {
        "kind": "youtube",
        "id": "abc123XYZ_0",
        "title": f"Review {IMG}",
        "text": SCRIPT,
        "url": YT_URL,
        "where": f"Channel {SCRIPT}",
        "published_at": datetime(2026, 3, 4, tzinfo=UTC).isoformat(),
        "metrics": {"views": 12345, "likes": 678, "comments": 90},
        "comments": [{"id": "c1", "text": f"comment {IMG}", "likes": 5}],
    }
    plain = {"kind": "youtube", "id": "def456uvw_1", "title": "Second look", "text": "",
             "url": YT_PLAIN_URL, "where": "Plain channel"}  # fmt: skip
    product = {
        "kind": "amazon",
        "id": "B0HOSTILE1",
        "title": f"Product {SCRIPT}",
        "text": "features",
        "url": AMZN_URL,
        "where": f"www.amazon.com {IMG}",
        "metrics": {"rating": 4.6, "reviews": 1234},
        "comments": [{"id": "r1", "text": f"review {SCRIPT}", "likes": 2}],
    }
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "partial",
            "engine": "local",
            "summary": {
                "status": "ok",
                "summary": "Reddit says yes [post:p1], the video agrees [post:yt-abc123XYZ_0] "
                "and buyers too [post:amzn-B0HOSTILE1].",
                "sources": [
                    {
                        "post_id": "p1",
                        "url": SAFE_THREAD,
                        "subreddit": "gadgets",
                        "title": "A thread",
                    },
                    {
                        "post_id": "yt-abc123XYZ_0",
                        "kind": "youtube",
                        "url": YT_URL,
                        "subreddit": f"Channel {SCRIPT}",
                        "title": f"Review {IMG}",
                    },
                    {
                        "post_id": "amzn-B0HOSTILE1",
                        "kind": "amazon",
                        "url": AMZN_URL,
                        "subreddit": "www.amazon.com",
                        "title": f"Product {SCRIPT}",
                    },
                ],
                "prompt_version": "v1",
                "engine": "local",
            },
            "source_fetches": [
                {
                    "kind": "youtube",
                    "query": "q",
                    "items": [video, plain],
                    "fetched": 5,
                    "yield_ratio": 0.4,
                    "refetched": True,
                },
                {
                    "kind": "amazon",
                    "query": "q",
                    "items": [product],
                    "fetched": 5,
                    "yield_ratio": 0.2,
                    "errors": [f"refetch failed {IMG}"],
                },
            ],
            "timings_ms": {},
            "usage": {},
        }
    )


def youtube_skipped_result() -> ResearchResult:
    skipped = {"kind": "youtube", "query": "q", "skipped": YOUTUBE_SKIP_NOTICE}
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "ok",
            "engine": "local",
            "source_fetches": [skipped],
            "timings_ms": {},
            "usage": {},
        }
    )


def ask_and_capture_body(page: Page) -> dict[str, Any]:
    """Click Ask; the JSON body the page POSTed to /api/research."""
    with page.expect_request(
        lambda r: r.method == "POST" and r.url.endswith("/api/research")
    ) as posted:
        page.get_by_role("button", name="Ask").click()
    body: dict[str, Any] = posted.value.post_data_json
    return body


def _expect_other_sources(page: Page, other: Locator) -> None:
    """The "Other sources" section: a block per kind with its yield, items and errors."""
    expect(other.get_by_role("heading", name="Other sources")).to_be_visible()
    youtube = other.locator('.source-fetch[data-kind="youtube"]')
    expect(youtube.locator("h3")).to_have_text("YouTube")
    expect(youtube).to_contain_text("2 relevant of 5 (yield 40%, refetched once)")
    expect(youtube.locator(".evidence-item").first).to_contain_text(
        f"Channel {SCRIPT} · 12.3K views · 678 likes · 90 comments · 2026-03-04"
    )
    amazon = other.locator('.source-fetch[data-kind="amazon"]')
    expect(amazon).to_contain_text("1 relevant of 5 (yield 20%)")
    expect(amazon.locator(".evidence-item")).to_contain_text("★ 4.6 · 1.2K reviews")
    expect(amazon.locator("ul.error")).to_have_text(f"refetch failed {IMG}")
    assert hrefs(page, "#other-sources a") == [YT_URL, YT_PLAIN_URL, AMZN_URL]
    expect(other.get_by_role("link", name=f"YouTube: Review {IMG}")).to_have_text(f"Review {IMG}")
    for opener in other.locator("details summary").all():
        opener.click()
    expect(youtube.locator("details")).to_contain_text(f"comment {IMG}")
    expect(amazon.locator("details")).to_contain_text(f"review {SCRIPT}")


def test_youtube_and_amazon_boxes_send_sources_and_the_page_shows_kinds_items_and_skips(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    url, scripted = sources_server
    scripted.results[:] = [videos_and_products_result(), youtube_skipped_result()]
    with open_tab(browser, url) as tab:
        page = tab.page
        expect(page.locator("#expert-list input")).to_have_count(1)
        expect(page.get_by_label("Search YouTube")).not_to_be_checked()
        page.get_by_label("Your question").fill("Which voice recorder do people keep?")
        page.get_by_label("Search YouTube").check()
        page.get_by_label("Search Amazon").check()
        body = ask_and_capture_body(page)
        assert body["sources"] == ["youtube", "amazon"] and body["search_reddit"] is True
        wait_done(page)
        assert scripted.requests[-1].sources == ["youtube", "amazon"]

        summary = page.locator("#community .reddit-summary")
        expect(summary.locator("h3").first).to_have_text("Reddit + YouTube + Amazon summary")
        cited = summary.locator("ol.sources > li")
        assert cited.evaluate_all("ns => ns.map(n => n.dataset.kind)") == [
            "reddit",
            "youtube",
            "amazon",
        ]
        assert cited.locator(".badge").all_inner_texts() == ["Reddit", "YouTube", "Amazon"]
        expect(cited.nth(1)).to_contain_text(f"Channel {SCRIPT}")  # the channel, not r/…
        assert hrefs(page, "#community sup.cite a") == [f"#reddit-src-{n}" for n in (1, 2, 3)]
        assert hrefs(page, "#community ol.sources a") == [SAFE_THREAD, YT_URL, AMZN_URL]

        other = page.locator("#other-sources")
        _expect_other_sources(page, other)

        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1
        assert page.evaluate(
            "[...document.querySelectorAll('*')]"
            ".every(n => [...n.attributes].every(a => !a.name.startsWith('on')))"
        ), "some element has an event-handler attribute"
        # every link is a source or an anchor, but the answer's two reports on this server
        outward = hrefs(page, "#results a[href]:not(.report)")
        assert all(h.startswith(("https://", "#")) for h in outward)
        assert len(hrefs(page, "#results a.report")) == 2
        screenshot(page, "web-page-other-sources.png")

        # YouTube alone, Reddit off: no key on the server, so the one-line skip notice.
        page.get_by_label("Search Reddit").uncheck()
        page.get_by_label("Search Amazon").uncheck()
        body = ask_and_capture_body(page)
        assert body["sources"] == ["youtube"] and body["search_reddit"] is False
        expect(other.locator(".skip-notice")).to_have_text(YOUTUBE_SKIP_NOTICE)
        wait_done(page)
        assert scripted.requests[-1].sources == ["youtube"]
        expect(other.locator(".evidence-item")).to_have_count(0)
        expect(other.locator(".source-fetch")).to_have_count(1)
        expect(page.locator("#community")).to_contain_text("The search brought nothing back.")
        tab.assert_clean()
        assert tab.outside == []


UNQUOTED_THREAD = "https://www.reddit.com/r/gadgets/comments/z9/read_never_quoted/"


def sample_partial_result() -> ResearchResult:
    """Sample data; the Reddit parts say ok while the result is partial; a comment is cited
    together with its thread, another without it; a thread the answer read is never cited."""
    thread = "https://www.reddit.com/r/gadgets/comments/a1/plaud_after_a_month/"
    other = "https://www.reddit.com/r/gadgets/comments/b2/other_thread/"
    synthesis = {
        "summary": "Owners like it [post:a1][comment:k9]. Some bump the switch [comment:c7].",
        "hidden_gems": [{"text": "Set gain to high", "sources": [f"{thread}k9/"], "score": 12}],
        "sources": [
            {"kind": "thread", "id": "a1", "url": thread, "title": "Plaud after a month"},
            {"kind": "comment", "id": "k9", "url": f"{thread}k9/", "title": "Plaud after a month"},
            {"kind": "comment", "id": "c7", "url": f"{other}c7/", "title": "Other thread"},
        ],
    }
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "partial",
            "engine": "local",
            "sample_data": True,
            "window": "threads since 2026-10-26",
            "summary": {
                "status": "ok",
                "summary": synthesis["summary"],
                "highlights": ["Battery lasts [comment:k9] and [post:gone1] vanished."],
                "sources": [
                    {"post_id": "a1", "url": thread, "subreddit": "gadgets",
                     "title": "Plaud after a month"},
                    {"post_id": "z9", "url": UNQUOTED_THREAD, "subreddit": "gadgets",
                     "title": "Read, never quoted"},
                ],
                "prompt_version": "v1",
                "engine": "local",
            },
            "reddit_response": {
                "status": "ok",
                "engine": "local",
                "source": "archive",
                "synthesis": synthesis,
                "errors": ["r/diy: 503 after 3 retries"],
            },
            "timings_ms": {},
            "usage": {},
        }
    )  # fmt: skip


def test_one_source_list_with_anchors_badges_that_agree_and_the_sample_banner(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    url, scripted = sources_server
    scripted.results[:] = [sample_partial_result()]
    with open_tab(browser, url) as tab:
        page = tab.page
        expect(page.locator("#expert-list input")).to_have_count(1)
        ask(page)

        banner = page.locator("#result-meta .sample-banner")
        expect(banner).to_contain_text("SAMPLE")
        expect(banner).to_contain_text("not from real Reddit content")
        answer = page.locator("#community .reddit-summary")
        assert banner.bounding_box()["y"] < answer.bounding_box()["y"]  # type: ignore[index]

        # every status badge says the overall "partial"; the parts' own "ok" is not shown
        expect(page.locator("#results .badge-ok")).to_have_count(0)
        expect(page.locator("#result-meta .badge-partial")).to_have_count(1)
        expect(page.locator("#community .card-meta .badge-partial")).to_have_count(2)
        expect(page.locator("#result-meta")).to_contain_text("r/diy: 503 after 3 retries")
        # the reason is said once, beside "Status:"; the answer's own line shows only badges
        expect(page.locator("#community .answer-meta")).not_to_contain_text("503")
        expect(page.locator("#result-meta .window")).to_have_text(
            "Window: threads since 2026-10-26"
        )

        community = page.locator("#community")
        expect(community.locator("ol.sources")).to_have_count(1)
        entries = community.locator("ol.sources > li")
        expect(entries).to_have_count(2)  # two threads; comments are listed under them
        expect(entries.nth(0)).to_contain_text("[1]")
        expect(entries.nth(0).locator(".src-quote")).to_have_text("“Owners like it.”")
        expect(entries.nth(0).locator(".cited-comments li")).to_have_text(["[2] “Owners like it.”"])
        expect(entries.nth(1).locator(".src-n")).to_have_text(["[3]"])  # thread not a source …
        thread_link = entries.nth(1).locator(".src-thread a")  # … yet its title links to it
        expect(thread_link).to_have_text("Other thread")
        assert thread_link.get_attribute("href") == (
            "https://www.reddit.com/r/gadgets/comments/b2/other_thread/"
        )
        expect(entries.nth(1).locator(".cited-comments li")).to_have_text(
            ["[3] “Some bump the switch.”"]
        )
        # a thread read but never cited has nothing to number: one linked "also read" line
        also = answer.locator(".also-read a")
        expect(also).to_have_text(["Read, never quoted"])
        assert also.get_attribute("href") == UNQUOTED_THREAD
        sources_text = community.locator("ol.sources").inner_text()
        assert sources_text.count("Plaud after a month") == 1
        assert sources_text.count("Other thread") == 1
        assert "never quoted" not in sources_text
        prose = answer.locator(".prose").first.inner_text()
        assert "Owners like it [1][2]. Some bump the switch [3]." in prose
        expect(answer).to_contain_text("Battery lasts [2] and vanished.")  # unknown id dropped
        cites = hrefs(page, "#community sup.cite a")
        assert cites[:3] == ["#reddit-src-1", "#reddit-src-2", "#reddit-src-3"]
        assert "#reddit-src-2" in hrefs(page, "#community .source-links a")  # the gem's [2]
        page.locator("#community sup.cite a").nth(2).click()
        assert page.evaluate("location.hash") == "#reddit-src-3"
        assert page.evaluate("document.querySelector(':target').textContent").startswith("[3]")
        assert not re.search(r"\b(post|comment):", page.locator("#results").inner_text())
        tab.assert_clean()
        assert tab.outside == []


def quoted_marker_result() -> ResearchResult:
    """``sample_partial_result`` whose answer quotes an owner who typed "[post:a1]" (a source
    of this very answer) in a reply. In the claims that is prose; the contract string beside
    them cannot tell it from a citation: only a page that numbers the lists keeps it prose."""
    result = sample_partial_result()
    assert result.summary is not None and result.reddit_response is not None
    quoted = CitedText(
        spans=(
            CitedSpan(
                text="“Read the pinned review [post:a1] first,” one owner says ",
                cites=(Citation("comment", "k9"),),
            ),
            CitedSpan(text=". Some bump the switch ", cites=(Citation("comment", "c7"),)),
            CitedSpan(text="."),
        )
    )
    summary = result.summary.model_copy(update={"summary": quoted})
    synthesis = result.reddit_response.synthesis
    assert synthesis is not None
    reddit = result.reddit_response.model_copy(
        update={"synthesis": synthesis.model_copy(update={"summary": quoted})}
    )
    return result.model_copy(update={"summary": summary, "reddit_response": reddit})


def test_the_page_numbers_the_citation_lists_and_a_quoted_marker_stays_prose(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    url, scripted = sources_server
    scripted.results[:] = [quoted_marker_result()]
    with open_tab(browser, url) as tab:
        page = tab.page
        ask(page)

        answer = page.locator("#community .reddit-summary")
        prose = answer.locator(".prose").first.inner_text()
        quote = "“Read the pinned review [post:a1] first,” one owner says"
        assert prose == f"{quote} [1]. Some bump the switch [2]."
        cites = hrefs(page, "#community .prose sup.cite a")
        assert cites == ["#reddit-src-1", "#reddit-src-2"]  # the two lists, nothing from the quote
        entries = page.locator("#community ol.sources > li")
        expect(entries.nth(0).locator(".src-n")).to_have_text(["[1]"])  # thread a1 is no source
        expect(entries.nth(0).locator(".cited-comments li")).to_have_text(
            ["[1] “Read the pinned review [post:a1] first,” one owner says.”"]
        )
        tab.assert_clean()


# ---- API key ----------------------------------------------------------------------------------


def test_with_an_api_key_the_page_asks_for_it_then_works(keyed_url: str, browser: Browser) -> None:
    with open_tab(browser, keyed_url) as tab:
        page = tab.page
        auth = page.locator("#auth")
        expect(auth).to_be_visible()
        expect(page.locator("#expert-list input")).to_have_count(0)

        page.get_by_label("API key", exact=True).fill("not-the-key")
        page.get_by_role("button", name="Use this key").click()
        expect(auth).to_be_visible()
        expect(page.locator("#auth-message")).to_contain_text("refused")

        page.get_by_label("API key", exact=True).fill(API_KEY)
        page.get_by_role("button", name="Use this key").click()
        expect(auth).to_be_hidden()
        expect(page.locator("#expert-list input")).to_have_count(1)
        assert page.evaluate("sessionStorage.getItem('crowdsift.apiKey')") == API_KEY

        page.get_by_label("Your question").fill("Does the key work for jobs too?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)  # POST, the event stream and GET all sent the key
        expect(page.locator("#progress-list")).to_contain_text("writing the answer")
        expect(page.locator("#community")).to_contain_text("What the community says")
        assert API_KEY not in page.locator("body").inner_text()
        tab.assert_clean()


def test_the_page_and_its_files_need_no_key_and_carry_a_strict_csp(
    keyed_url: str, browser: Browser
) -> None:
    with open_tab(browser, keyed_url) as tab:
        page = tab.page
        response = page.request.get(keyed_url + "/")
        assert response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        for path in ("/static/app.js", "/static/style.css"):
            assert page.request.get(keyed_url + path).status == 200
        assert page.request.get(keyed_url + "/api/experts").status == 401
        tab.assert_clean()


def test_every_script_module_is_served_as_javascript_and_never_parses_html(
    keyed_url: str, browser: Browser
) -> None:
    """Browsers refuse a module script (app.js and each file it imports) that is not served
    with a JavaScript MIME type, so a missing mapping would leave the page dead; and no module
    may hand data to an HTML parser, since everything shown comes from strangers."""
    modules = sorted(Path(static_dir()).glob("*.js"))
    assert {m.name for m in modules} >= {"app.js", "api.js", "dom.js", "render.js", "stream.js"}
    with open_tab(browser, keyed_url) as tab:
        for module in modules:
            response = tab.page.request.get(f"{keyed_url}/static/{module.name}")
            assert response.status == 200, module.name
            mime = response.headers["content-type"].split(";")[0].strip()
            assert mime in ("text/javascript", "application/javascript"), (module.name, mime)
        loaded = tab.page.evaluate(
            "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
        )
        for module in modules:  # the entry module really imports every one of them
            assert f"/static/{module.name}" in loaded, (module.name, loaded)
        expect(tab.page.locator("#auth")).to_be_visible()  # the module graph ran
        tab.assert_clean()
    unsafe = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|Function\("
    )
    for module in modules:
        code = module.read_text("utf-8")
        code_lines = [x for x in code.splitlines() if not x.lstrip().startswith(("//", "*", "/*"))]
        hits = [line for line in code_lines if unsafe.search(line)]
        assert hits == [], f"{module.name} parses HTML or code: {hits}"


def expert_and_reddit_result() -> ResearchResult:
    """An expert answer and a Reddit answer, each citing its own sources; the Reddit answer has
    highlights but no cautions and no staff-engineer sections; YouTube kept one video."""
    thread = "https://www.reddit.com/r/gadgets/comments/a1/plaud_after_a_month/"
    other = "https://www.reddit.com/r/gadgets/comments/b2/other_thread/"
    channel = "https://t.me/hostile_channel"
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "ok",
            "engine": "local",
            "summary": {
                "status": "ok",
                "summary": "Owners like it [post:b2]. The battery lasts a week [post:a1].",
                "highlights": ["Transcripts arrive in minutes [post:a1]."],
                "sources": [
                    {"post_id": "b2", "url": other, "subreddit": "gadgets", "title": "Other"},
                    {"post_id": "a1", "url": thread, "subreddit": "gadgets", "title": "Plaud"},
                ],
                "prompt_version": "v1",
                "engine": "local",
            },
            "reddit_response": {"status": "ok", "engine": "local", "source": "archive"},
            "expert_responses": [
                {
                    "expert_id": "hostile",
                    "status": "ok",
                    "answer": "Worth it for calls [post:7]; the app is slow [post:3].",
                    "main_sources": [
                        {"post_id": 3, "url": f"{channel}/3", "date": "2026-01-02T00:00:00Z",
                         "relevance": "HIGH"},
                        {"post_id": 7, "url": f"{channel}/7", "date": "2026-01-05T00:00:00Z",
                         "relevance": "HIGH"},
                    ],
                }
            ],
            "source_fetches": [
                {
                    "kind": "youtube", "query": "plaud", "fetched": 1, "yield_ratio": 1.0,
                    "items": [{"kind": "youtube", "id": "vid00000001", "title": "A review",
                               "text": "x", "url": "https://www.youtube.com/watch?v=vid00000001",
                               "where": "Desk Reviews"}],
                }
            ],
            "timings_ms": {},
            "usage": {},
        }
    )  # fmt: skip


def test_each_answer_has_its_sections_and_one_numbered_source_list_of_its_own(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    url, scripted = sources_server
    scripted.results[:] = [expert_and_reddit_result()]
    with open_tab(browser, url) as tab:
        page = tab.page
        page.locator('#expert-list input[value="hostile"]').check()
        ask(page)

        results = page.locator("#results")
        expect(results.locator("ol")).to_have_count(2)  # one numbered list per answer, no more
        card = page.locator('article.expert-card[data-expert="hostile"]')
        expect(card.locator("ol.sources")).to_have_count(1)
        assert "Worth it for calls [1]; the app is slow [2]." in card.locator(".prose").inner_text()
        card_cites = hrefs(page, 'article.expert-card[data-expert="hostile"] sup.cite a')
        assert card_cites == ["#expert-0-src-1", "#expert-0-src-2"]  # into the card's own list
        expect(card.locator("ol.sources > li").first).to_contain_text("Post 7")

        answer = page.locator("#community .reddit-summary")
        box = answer.bounding_box()
        assert box is not None and box["y"] < (card.bounding_box() or {"y": 0})["y"]  # as the
        # terminal prints it: the community's answer, then each expert's, then other sources
        headings = answer.locator("section.block > h3").all_inner_texts()
        assert headings == ["What the community says", "Highlights", "Sources"]  # none empty
        assert "Owners like it [1]. The battery lasts a week [2]." in answer.inner_text()
        cites = hrefs(page, "#community sup.cite a")
        assert cites == ["#reddit-src-1", "#reddit-src-2", "#reddit-src-2"]
        expect(page.locator("#other-sources .evidence-item")).to_have_count(1)  # not numbered
        expect(results.locator(".badge-partial")).to_have_count(0)  # the result is ok: so is
        expect(page.locator("#result-meta .badge-ok")).to_have_count(1)  # every badge
        screenshot(page, "web-page-answers.png")
        tab.assert_clean()
        assert tab.outside == []


def test_each_source_that_failed_is_one_line_above_the_answer_and_stays_text(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    """``source_status`` on the page: a fallback is never silent, an ``ok`` source is not a
    warning, and a detail from a server is shown as text, never run."""
    url, scripted = sources_server
    statuses = [
        SourceStatus(source="reddit-api", status="not_configured", detail="no keys", requests=0),
        SourceStatus(source="arctic-shift", status="unreachable", detail=f"{SCRIPT} refused",
                     requests=1),
        SourceStatus(source="archive", status="ok", detail="the sample archive", requests=4),
    ]  # fmt: skip
    scripted.results[:] = [
        videos_and_products_result().model_copy(update={"source_status": statuses})
    ]
    with open_tab(browser, url) as tab:
        page = tab.page
        page.get_by_label("Your question").fill("Which voice recorder do people keep?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)
        lines = page.locator("ul.source-status li")
        expect(lines).to_have_count(1)  # only the source that failed
        expect(lines.first).to_have_text(f"arctic-shift unreachable: {SCRIPT} refused")
        tab.assert_clean()


THREAD_A1 = "https://www.reddit.com/r/gadgets/comments/a1/plaud_after_a_month/"


def dissent_result() -> ResearchResult:
    """A Reddit answer whose minority report says something the rest of the answer does not:
    the section stays, and each dissent carries its votes and a number into the source list."""
    thread = THREAD_A1
    reply = f"{thread}c9/"
    synthesis = {
        "summary": "Owners like the transcripts [post:a1].",
        "minority_report": [
            {
                "text": "A phone app with a clip-on mic does the same for free.",
                "sources": [reply],
                "votes": 7,
            }
        ],
        "sources": [
            {"kind": "thread", "id": "a1", "url": thread, "title": "Plaud after a month"},
            {"kind": "comment", "id": "c9", "url": reply, "title": "Plaud after a month"},
        ],
    }
    return ResearchResult.model_validate(
        {
            "question": "placeholder",
            "status": "ok",
            "engine": "local",
            "summary": {
                "status": "ok",
                "summary": "Owners like the transcripts [post:a1].",
                "sources": [
                    {"post_id": "a1", "url": thread, "subreddit": "gadgets",
                     "title": "Plaud after a month"},
                ],
                "prompt_version": "v1",
                "engine": "local",
            },
            "reddit_response": {
                "status": "ok", "engine": "local", "source": "archive",
                "threads_drilled": 1, "comments_drilled": 1, "synthesis": synthesis,
            },
            "timings_ms": {},
            "usage": {},
        }
    )  # fmt: skip


def test_a_minority_report_shows_each_dissent_with_its_votes_and_its_numbered_source(
    sources_server: tuple[str, Scripted], browser: Browser
) -> None:
    url, scripted = sources_server
    scripted.results[:] = [dissent_result()]
    with open_tab(browser, url) as tab:
        page = tab.page
        ask(page)

        answer = page.locator("#community .reddit-summary")
        section = answer.locator("section.block", has_text="Minority report")
        expect(section).to_have_count(1)
        expect(section).to_contain_text("A phone app with a clip-on mic does the same for free.")
        expect(section).to_contain_text("7 votes")
        cites = section.locator("sup.cite a")
        expect(cites).to_have_count(1)
        target = (cites.first.get_attribute("href") or "").lstrip("#")
        entry = answer.locator(f"ol.sources li[id='{target}']")
        expect(entry).to_have_count(1)  # the number leads into the answer's one source list
        expect(entry.locator("a").first).to_have_attribute("href", f"{THREAD_A1}c9/")
        expect(entry).to_contain_text("A phone app with a clip-on mic")
        tab.assert_clean()
        assert tab.outside == []


# ---- reports ------------------------------------------------------------------------------------


def test_the_answer_links_to_its_markdown_and_html_reports(
    crafted_url: str, browser: Browser
) -> None:
    with open_tab(browser, crafted_url) as tab:
        page = tab.page
        page.get_by_label("Your question").fill("Which report formats are there?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)
        links = page.locator("#result-meta .reports a")
        expect(links).to_have_text(["Markdown", "HTML"])
        md, html = hrefs(page, "#result-meta .reports a")
        job = re.fullmatch(r"/api/research/([\w-]+)/report\.md", md)
        assert job is not None and html == f"/api/research/{job[1]}/report.html"
        report = page.request.get(crafted_url + md)
        assert report.status == 200
        assert report.headers["content-type"].startswith("text/markdown")
        assert "Which report formats are there?" in report.text()

        with page.context.expect_page() as opened:
            links.nth(1).click()
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.url == crafted_url + html
        expect(popup.locator("body")).to_contain_text("Which report formats are there?")
        popup.close()
        tab.assert_clean()
        assert tab.outside == []


def test_with_an_api_key_a_report_link_fetches_the_file_with_the_key(
    keyed_url: str, browser: Browser
) -> None:
    with open_tab(browser, keyed_url) as tab:
        page = tab.page
        page.get_by_label("API key", exact=True).fill(API_KEY)
        page.get_by_role("button", name="Use this key").click()
        page.get_by_label("Your question").fill("Can I keep this answer as a file?")
        page.get_by_role("button", name="Ask").click()
        wait_done(page)
        md = hrefs(page, "#result-meta .reports a")[0]
        assert page.request.get(keyed_url + md).status == 401  # a bare link would be refused
        with page.expect_download() as saving:
            page.locator("#result-meta .reports a").first.click()
        download = saving.value
        job = md.split("/")[3]
        assert download.suggested_filename == f"crowdsift-{job}.md"
        saved = Path(download.path()).read_text("utf-8")
        assert "Can I keep this answer as a file?" in saved
        assert API_KEY not in saved
        tab.assert_clean()
