"""``/docs`` works offline (Swagger UI served by the app, no CDN) under a strict CSP, and
``/favicon.ico`` exists: over the ASGI app, then in real headless Chromium against uvicorn on
127.0.0.1 with every request to another host stubbed and recorded."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Route, expect, sync_playwright

from crowdsift.core.config import Settings
from crowdsift.service.api.app import create_app
from crowdsift.service.api.routes.docs import inline_script_hashes
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, needs_chromium
from tests.support.net import serve_app

_URL_ATTRIBUTE = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""")
_SCRIPT_URL = re.compile(r"""\burl:\s*['"]([^'"]+)['"]""")


def demo_settings(home: Path) -> Settings:
    return Settings(home=home, engine="local", feed_embedder="hashing")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(demo_settings(tmp_path))) as test_client:
        yield test_client


def referenced_urls(page: str) -> list[str]:
    """Every URL the docs page makes a browser load: src/href attributes and the schema URL."""
    return _URL_ATTRIBUTE.findall(page) + _SCRIPT_URL.findall(page)


def test_docs_reference_only_same_origin_urls_and_each_answers(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    page = response.text
    urls = referenced_urls(page)
    assert any(u.endswith("swagger-ui-bundle.js") for u in urls), urls
    assert any(u.endswith("swagger-ui.css") for u in urls), urls
    assert "/openapi.json" in urls and "/favicon.ico" in urls
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc and url.startswith("/"), url
        assert client.get(urljoin("http://testserver/docs", url)).status_code == 200, url
    assert "cdn" not in page.lower() and "validator.swagger.io" not in page
    assert '"validatorUrl": null' in page  # no badge image from another host


def test_docs_carry_the_strict_csp_allowing_only_their_own_initialiser(
    client: TestClient,
) -> None:
    response = client.get("/docs")
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "style-src 'self';" in csp
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    hashes = inline_script_hashes(response.text)
    assert len(hashes) == 1
    script_src = re.search(r"script-src ([^;]+);", csp)
    assert script_src is not None
    assert script_src.group(1).split() == ["'self'", f"'{hashes[0]}'"]
    assert response.headers["x-content-type-options"] == "nosniff"
    # The page at / keeps its own policy: no inline script at all.
    index_csp = client.get("/").headers["content-security-policy"]
    assert "script-src 'self';" in index_csp and "sha256" not in index_csp


def test_assets_are_served_with_their_types_and_the_cdn_pages_are_gone(
    client: TestClient,
) -> None:
    js = client.get("/docs-assets/swagger-ui-bundle.js")
    css = client.get("/docs-assets/swagger-ui.css")
    assert js.status_code == 200 and "SwaggerUIBundle" in js.text[:2000]
    assert js.headers["content-type"].split(";")[0] in ("text/javascript", "application/javascript")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert client.get("/redoc").status_code == 404  # it loaded ReDoc from a CDN


def test_favicon_is_a_small_image(client: TestClient) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/")
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO header
    assert 0 < len(response.content) < 4096


def test_the_docs_stay_out_of_the_schema(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not {"/docs", "/favicon.ico"} & set(paths)


@needs_chromium
def test_swagger_ui_renders_every_route_in_chromium_without_leaving_the_machine(
    tmp_path: Path,
) -> None:
    """The real proof of "works offline": the browser draws the operations, breaks no CSP
    rule, and asks no other host for anything."""
    outside: list[str] = []
    problems: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        app = create_app(demo_settings(tmp_path))
        with (
            serve_app(app, name="docs-test-uvicorn", timeout_graceful_shutdown=5) as base,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                context = browser.new_context()

                def stub(route: Route) -> None:
                    if route.request.url.startswith(base + "/"):
                        route.continue_()
                    else:
                        outside.append(route.request.url)
                        route.fulfill(status=204, body="")

                def on_console(message: Any) -> None:
                    if message.type == "error":
                        problems.append(message.text)

                context.route("**/*", stub)
                page = context.new_page()
                page.on("console", on_console)
                page.on("pageerror", lambda exc: problems.append(str(exc)))
                page.goto(base + "/docs")
                expect(page.locator(".opblock").first).to_be_visible(timeout=20_000)
                drawn = page.locator(".opblock-summary-path").all_inner_texts()
                expect(page.locator(".info .title")).to_contain_text("crowdsift")
                loaded = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
            finally:
                browser.close()
    assert "/api/research" in {path.replace("\u200b", "") for path in drawn}, drawn
    assert outside == [], f"the docs asked other hosts: {outside}"
    assert all(url.startswith(base + "/") for url in loaded), loaded
    assert problems == [], f"console errors (CSP or script): {problems}"
