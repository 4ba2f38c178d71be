"""``GET /api/research/{id}/report.md|.html``: a finished job's answer as a report, the content
types right, and a job that is unknown, unfinished or failed answered in the API's error shape.

The jobs are real (job service, store, dispatcher); only the research is crafted, so each test
controls when a job finishes and what it found."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.api.app import create_app
from crowdsift.service.api.deps import ServiceState
from crowdsift.service.facade import FeedService
from crowdsift.service.jobs.factory import build_job_service
from crowdsift.service.jobs.models import ResearchRequest
from tests.pipeline.report.results import IMG, hostile_result
from tests.service.api.conftest import demo_settings, wait_done

RELEASE = threading.Event()
"""Set to let a job whose question starts with "wait" finish."""


def _research(request: ResearchRequest, _progress: Progress) -> ResearchResult:
    if request.question.startswith("wait"):
        RELEASE.wait(timeout=60)
    if request.question.startswith("fail"):
        raise RuntimeError("the research broke")
    return hostile_result().model_copy(update={"question": request.question})


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = demo_settings(tmp_path_factory.mktemp("reports-home"))
    state = ServiceState(
        settings=settings,
        jobs=build_job_service(settings, research=_research),
        feed=FeedService(settings),
        fetch=_no_fetch,
        experts=lambda: [],
    )
    with TestClient(create_app(settings, state=state)) as test_client:
        yield test_client
    RELEASE.set()


def _no_fetch(_plan: object) -> Any:
    raise AssertionError("reports never fetch")


def submit(client: TestClient, question: str) -> str:
    response = client.post("/api/research", json={"question": question})
    assert response.status_code == 202
    job_id: str = response.json()["id"]
    return job_id


@pytest.mark.parametrize(
    ("suffix", "media", "check"),
    [
        ("md", "text/markdown", lambda body: body.startswith("# Which one? \\<img")),
        ("html", "text/html", lambda body: body.startswith("<!DOCTYPE html>") and "<svg" in body),
    ],
)
def test_a_finished_job_has_both_reports(
    client: TestClient, suffix: str, media: str, check: Callable[[str], bool]
) -> None:
    job_id = submit(client, f"Which one? {IMG}")
    assert wait_done(client, job_id)["status"] == "done"
    response = client.get(f"/api/research/{job_id}/report.{suffix}")
    assert response.status_code == 200
    assert response.headers["content-type"] == f"{media}; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert check(response.text), response.text[:200]
    assert IMG not in response.text  # the question and the evidence, escaped
    if suffix == "html":
        policy = response.headers["content-security-policy"]
        assert policy.startswith("default-src 'none'") and "script-src" not in policy


def test_an_unknown_job_is_a_404_in_the_error_shape(client: TestClient) -> None:
    for suffix in ("md", "html"):
        response = client.get(f"/api/research/{'0' * 32}/report.{suffix}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_an_unfinished_job_is_a_409_that_says_when_to_come_back(client: TestClient) -> None:
    RELEASE.clear()
    job_id = submit(client, "wait for it, please")
    try:
        response = client.get(f"/api/research/{job_id}/report.html")
        assert response.status_code == 409
        error = response.json()["error"]
        assert error["code"] == "conflict"
        assert (
            "once it is done" in error["message"] and f"/api/research/{job_id}" in error["message"]
        )
    finally:
        RELEASE.set()
    assert wait_done(client, job_id)["status"] == "done"
    assert client.get(f"/api/research/{job_id}/report.html").status_code == 200


def test_a_failed_job_has_no_report(client: TestClient) -> None:
    job_id = submit(client, "fail this one")
    assert wait_done(client, job_id)["status"] == "failed"
    response = client.get(f"/api/research/{job_id}/report.md")
    assert response.status_code == 409
    assert "failed, so it has no report" in response.json()["error"]["message"]


def test_the_openapi_document_lists_the_reports(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for suffix, media in (("md", "text/markdown"), ("html", "text/html")):
        route = paths[f"/api/research/{{job_id}}/report.{suffix}"]["get"]
        assert media in route["responses"]["200"]["content"]
        assert {"404", "409"} <= set(route["responses"])


def test_the_reports_are_also_served_under_api_jobs(client: TestClient) -> None:
    job_id = submit(client, "Is the Plaud Note worth it?")
    assert wait_done(client, job_id)["status"] == "done"
    for suffix in ("md", "html"):
        research = client.get(f"/api/research/{job_id}/report.{suffix}")
        alias = client.get(f"/api/jobs/{job_id}/report.{suffix}")
        assert alias.status_code == 200 == research.status_code
        assert alias.content == research.content
    assert client.get("/api/jobs/0000/report.md").status_code == 404
