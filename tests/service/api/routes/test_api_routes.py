"""Input validation, errors, the API key, CORS, feed, fetch, experts and the OpenAPI document,
through TestClient (with dependency overrides where a test needs its own source)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select

from crowdsift.core import language
from crowdsift.core.models import FetchResult, SearchPlan
from crowdsift.core.question import MAX_QUESTION_CHARS
from crowdsift.feed.commands import run_index
from crowdsift.pipeline.fetch.fetcher import RedditFetcher, SearchOptions
from crowdsift.service.api.app import MAX_BODY_BYTES, create_app
from crowdsift.service.api.deps import get_fetch
from crowdsift.service.jobs.models import MAX_EXPERTS
from crowdsift.service.jobs.store import JobRow, JobStore
from crowdsift.testing.factories import raw_comment, raw_post
from crowdsift.testing.memory_source import MemorySource
from tests.service.api.conftest import demo_settings

KEY = "test-api-key-7f3a9"


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(demo_settings(tmp_path / "home"))) as client:
        yield client


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"question": "ok"}, "question", "at least 3 characters"),
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, "question", "at most 2000 characters"),
        (
            {"question": "which desk?", "experts": [f"e{i}" for i in range(MAX_EXPERTS + 1)]},
            "experts",
            "at most 10 items",
        ),
        ({"question": "which desk?", "experts": ["../etc"]}, "experts", "not an id"),
        ({"question": "which desk?", "search_reddit": False}, "body", "nothing to search"),
        ({"question": "which desk?", "engine": "gpt-9"}, "engine", "'local' or 'openai'"),
        ({"question": "which desk?", "surprise": 1}, "surprise", "Extra inputs"),
        ({}, "question", "Field required"),
    ],
)
def test_invalid_research_requests_are_422_with_what_to_fix(
    app_client: TestClient, body: dict[str, Any], field: str, words: str
) -> None:
    response = app_client.post("/api/research", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["message"].startswith("invalid request — ")
    assert words in error["message"]
    assert any(d["field"] == field and words in d["message"] for d in error["details"])


def test_malformed_and_oversized_bodies_are_refused_cleanly(app_client: TestClient) -> None:
    broken = app_client.post(
        "/api/research", content=b'{"question": ', headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422 and "JSON" in broken.json()["error"]["message"]

    huge = app_client.post(
        "/api/research",
        content=b'{"question": "' + b"a" * MAX_BODY_BYTES + b'"}',
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413
    assert huge.json()["error"]["code"] == "too_large"


def test_the_api_key_guards_every_route_but_health(tmp_path: Path) -> None:
    settings = demo_settings(tmp_path / "home", api_key=KEY)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}):
            for method, path in (
                ("GET", "/api/experts"),
                ("GET", "/api/feed?mode=random"),
                ("POST", "/api/research"),
                ("POST", "/api/fetch"),
                ("GET", "/api/research/abc"),
                ("GET", "/api/research/abc/events"),
            ):
                response = client.request(method, path, headers=headers, json={})
                assert response.status_code == 401, (method, path, headers)
                assert response.headers["www-authenticate"] == "Bearer"
                message = response.json()["error"]["message"]
                assert "Authorization: Bearer <CROWDSIFT_API_KEY>" in message
                assert KEY not in response.text
        good = client.get("/api/experts", headers={"Authorization": f"Bearer {KEY}"})
        assert good.status_code == 200 and good.json()


def test_cors_is_off_unless_origins_are_configured(tmp_path: Path) -> None:
    preflight = {
        "Origin": "http://notes.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    with TestClient(create_app(demo_settings(tmp_path / "a"))) as closed:
        response = closed.options("/api/research", headers=preflight)
        assert "access-control-allow-origin" not in response.headers
    settings = demo_settings(tmp_path / "b", cors_origins="http://notes.example")
    with TestClient(create_app(settings)) as opened:
        response = opened.options("/api/research", headers=preflight)
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "http://notes.example"
        other = opened.options("/api/research", headers={**preflight, "Origin": "http://evil"})
        assert "access-control-allow-origin" not in other.headers


def test_feed_explains_an_empty_index_then_serves_indexed_posts(tmp_path: Path) -> None:
    settings = demo_settings(tmp_path / "home")
    with TestClient(create_app(settings)) as client:
        empty = client.get("/api/feed", params={"mode": "random"})
        assert empty.status_code == 409
        assert "run `crowdsift index`" in empty.json()["error"]["message"]

        report = run_index(settings)  # the bundled demo archive
        assert report.indexed > 100

        picked = client.get("/api/feed", params={"interests": "impact driver,screws", "size": 3})
        assert picked.status_code == 200
        posts = picked.json()
        assert len(posts) == 3
        assert "impact driver" in (posts[0]["title"] + posts[0]["selftext"]).lower()
        assert len(client.get("/api/feed", params={"mode": "random", "size": 7}).json()) == 7

        no_interests = client.get("/api/feed")
        assert no_interests.status_code == 400
        assert "?interests=" in no_interests.json()["error"]["message"]
        assert client.get("/api/feed", params={"mode": "random", "size": 21}).status_code == 422
        assert client.get("/api/feed", params={"mode": "loud"}).status_code == 422


def test_fetch_runs_a_search_plan_on_the_configured_source(app_client: TestClient) -> None:
    plan = {"search_terms": ["plaud"], "subreddits": ["gadgets"]}
    response = app_client.post("/api/fetch", json=plan)
    assert response.status_code == 200
    result = FetchResult.model_validate(response.json())
    assert result.posts and all(p.subreddit == "gadgets" for p in result.posts)
    bad = app_client.post("/api/fetch", json={"search_terms": [" "], "subreddits": ["x"]})
    assert bad.status_code == 422
    assert "search_terms" in bad.json()["error"]["message"]


def test_fetch_can_be_pointed_at_another_source_through_a_dependency_override(
    app_client: TestClient,
) -> None:
    body = "I tried the Plaud for six months of meetings and the transcripts were solid."
    source = MemorySource(
        posts={("notes", "plaud"): [raw_post("n1", subreddit="notes", selftext=body)]},
        comments={"n1": [raw_comment("k1", "n1", score=12)]},
    )
    clock = datetime(2026, 11, 1, tzinfo=UTC)

    def fetch_from_memory(plan: SearchPlan) -> FetchResult:
        fetcher = RedditFetcher(source, options=SearchOptions(), clock=lambda: clock)
        return fetcher.fetch(plan).result

    app = app_client.app
    app.dependency_overrides[get_fetch] = lambda: fetch_from_memory  # type: ignore[attr-defined]
    try:
        response = app_client.post(
            "/api/fetch", json={"search_terms": ["plaud"], "subreddits": ["notes"]}
        )
    finally:
        app.dependency_overrides.clear()  # type: ignore[attr-defined]
    posts = response.json()["posts"]
    assert [p["id"] for p in posts] == ["n1"]
    assert [c["comment_id"] for c in posts[0]["comments"]] == ["k1"]
    assert ("search", "notes", "plaud", "") in source.calls


def test_experts_lists_the_bundled_panel_on_a_fresh_install(app_client: TestClient) -> None:
    experts = app_client.get("/api/experts").json()
    ids = [e["expert_id"] for e in experts]
    assert ids == ["dannye_bez_boli", "desk_gear_weekly", "homelab_field_notes"]
    assert all(e["posts"] > 0 for e in experts)


def test_openapi_publishes_every_route_and_the_request_limits(app_client: TestClient) -> None:
    document = app_client.get("/openapi.json").json()
    paths = document["paths"]
    for path in (
        "/api/research",
        "/api/research/{job_id}",
        "/api/research/{job_id}/events",
        "/api/fetch",
        "/api/feed",
        "/api/experts",
        "/healthz",
    ):
        assert path in paths, path
    request = document["components"]["schemas"]["ResearchRequest"]["properties"]
    assert request["question"]["maxLength"] == MAX_QUESTION_CHARS
    assert request["experts"]["maxItems"] == MAX_EXPERTS
    assert paths["/api/research"]["post"]["responses"]["202"]


def test_health_reports_the_job_mode_and_database(app_client: TestClient) -> None:
    assert app_client.get("/healthz").json() == {
        "status": "ok",
        "version": app_client.get("/openapi.json").json()["info"]["version"],
        "jobs": "embedded",
        "database": "ok",
    }


def test_a_broker_that_is_down_is_a_503_and_the_job_is_failed_not_lost(tmp_path: Path) -> None:
    settings = demo_settings(tmp_path / "home", broker_url="redis://127.0.0.1:1/0")
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").json()["jobs"] == "celery"
        response = client.post("/api/research", json={"question": "Which drill for concrete?"})
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["code"] == "broker_unavailable"
        assert "127.0.0.1:1" in error["message"]
    database = create_engine(settings.resolved_database_url)
    with database.connect() as conn:  # every job this app ever created
        ids = [row[0] for row in conn.execute(select(JobRow.id)).all()]
    database.dispose()
    store = JobStore.from_url(settings.resolved_database_url)
    jobs = [store.get(job_id) for job_id in ids]
    store.close()
    assert len(jobs) == 1 and jobs[0] is not None
    assert jobs[0].status == "failed"
    assert jobs[0].error is not None and jobs[0].error.startswith("could not queue the job: ")


def test_feed_reads_a_shared_chroma_server_when_configured(
    tmp_path: Path, chroma_server: str
) -> None:
    settings = demo_settings(
        tmp_path / "home", chroma_url=chroma_server, chroma_collection="api_scaled_feed"
    )
    report = run_index(settings)
    assert report.location == chroma_server and report.indexed > 100
    with TestClient(create_app(settings)) as client:
        posts = client.get("/api/feed", params={"interests": "voice recorder", "size": 4}).json()
    assert len(posts) == 4
    assert "recorder" in (posts[0]["title"] + posts[0]["selftext"]).lower()
    assert not (tmp_path / "home" / "chroma").exists()  # nothing went to a local store


def test_the_cli_publishes_the_api_request_and_job_schemas(app_client: TestClient) -> None:
    from typer.testing import CliRunner

    from crowdsift.cli.main import app

    request = json.loads(CliRunner().invoke(app, ["schema", "ResearchRequest"]).stdout)
    published = app_client.get("/openapi.json").json()["components"]["schemas"]
    assert (
        request["properties"]["question"] == published["ResearchRequest"]["properties"]["question"]
    )
    job = json.loads(CliRunner().invoke(app, ["schema", "Job"]).stdout)
    assert {"id", "status", "result", "error", "attempts"} <= set(job["properties"])


def test_language_models_load_at_startup_not_inside_the_first_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first detection loads ~190 MB of lingua models holding the GIL for seconds: the
    service does it before it serves, so no request in flight stalls behind it."""
    calls: list[str] = []
    real = language.warm_up

    def recording() -> float:
        calls.append("warm_up")
        return real()

    monkeypatch.setattr(language, "warm_up", recording)
    language._detector.cache_clear()
    with TestClient(create_app(demo_settings(tmp_path / "home"))) as client:
        assert calls == ["warm_up"]  # during startup, before the first request
        assert language._detector.cache_info().currsize == 1
        assert client.get("/healthz").status_code == 200
    assert language.detect_language("какой диктофон лучше для лекций") == "ru"
