"""``since`` in the HTTP API: ``POST /api/research`` and ``POST /api/fetch`` take it, a bad value
is a 422 listing the accepted forms, and the research run receives the resolved bound."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from crowdsift.core.models import FetchResult, RejectReason, SearchPlan
from crowdsift.core.since import ACCEPTED_FORMS
from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
from crowdsift.pipeline.result import ResearchResult
from crowdsift.service.api.app import create_app
from crowdsift.service.api.deps import get_fetch
from crowdsift.service.facade import ResearchService
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.testing.factories import raw_post
from crowdsift.testing.memory_source import MemorySource

from .conftest import demo_settings

CLOCK = datetime(2026, 11, 25, 12, tzinfo=UTC)


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(demo_settings(tmp_path / "home"))) as client:
        yield client


@pytest.mark.parametrize("path", ["/api/research", "/api/fetch"])
def test_a_bad_since_is_a_422_listing_the_forms(app_client: TestClient, path: str) -> None:
    body: dict[str, Any] = (
        {"question": "which desk?", "since": "last week"}
        if path == "/api/research"
        else {"search_terms": ["plaud"], "subreddits": ["gadgets"], "since": "last week"}
    )
    response = app_client.post(path, json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert ACCEPTED_FORMS in error["message"]
    assert any(d["field"] == "since" for d in error["details"])


def test_fetch_since_keeps_older_posts_out(app_client: TestClient) -> None:
    fresh = int((CLOCK - timedelta(days=3)).timestamp())
    stale = int((CLOCK - timedelta(days=90)).timestamp())
    source = MemorySource(
        posts={
            ("notes", "plaud"): [
                raw_post("new1", subreddit="notes", created_utc=fresh),
                raw_post("old1", subreddit="notes", created_utc=stale),
            ]
        }
    )
    reports: list[Any] = []

    def fetch_from_memory(plan: SearchPlan) -> FetchResult:
        outcome = RedditFetcher(source, options=SearchOptions(), clock=lambda: CLOCK).fetch(plan)
        reports.append(outcome.report)
        return outcome.result

    app = app_client.app
    app.dependency_overrides[get_fetch] = lambda: fetch_from_memory  # type: ignore[attr-defined]
    try:
        response = app_client.post(
            "/api/fetch",
            json={"search_terms": ["plaud"], "subreddits": ["notes"], "since": "2026-11-01"},
        )
    finally:
        app.dependency_overrides.clear()  # type: ignore[attr-defined]
    assert response.status_code == 200
    data = response.json()
    assert [p["id"] for p in data["posts"]] == ["new1"]
    assert data["since"] == "2026-11-01T00:00:00Z"
    assert reports[0].post_rejections == {RejectReason.TOO_OLD: 1}


def test_research_request_resolves_since_and_the_service_passes_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = ResearchRequest(question="which desk?", since="2026-10-26")
    assert request.since == datetime(2026, 10, 26, tzinfo=UTC)
    relative = ResearchRequest(question="which desk?", since="30d").since
    assert relative is not None and relative < datetime.now(UTC) - timedelta(days=29)
    seen: list[Any] = []

    async def fake_research(_question: str, **kwargs: Any) -> ResearchResult:
        seen.append(kwargs["options"].since)
        raise RuntimeError("stop here")

    import crowdsift.pipeline.research as research_module

    monkeypatch.setattr(research_module, "research_async", fake_research)
    service = ResearchService(demo_settings(tmp_path / "home"))
    with pytest.raises(RuntimeError, match="stop here"):
        service(request.model_copy(update={"engine": "openai"}), lambda _stage, _message: None)
    assert seen == [datetime(2026, 10, 26, tzinfo=UTC)]


def test_openapi_documents_since(app_client: TestClient) -> None:
    schemas = app_client.get("/openapi.json").json()["components"]["schemas"]
    assert "since" in schemas["ResearchRequest"]["properties"]
    assert "since" in schemas["SearchPlan"]["properties"]


def test_a_queued_request_keeps_the_bound_its_caller_meant() -> None:
    """A job record (or a Celery message) carries the resolved datetime, not "30d": a worker
    that starts it later searches the same window."""
    request = ResearchRequest(question="which desk?", since="30d")
    stored = request.model_dump_json()
    assert '"since":"' in stored and "30d" not in stored
    assert ResearchRequest.model_validate_json(stored).since == request.since
