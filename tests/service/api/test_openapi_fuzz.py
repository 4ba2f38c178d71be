"""Schemathesis over the app's own OpenAPI document, against a real uvicorn on 127.0.0.1.

The app is the real one (job service with its executor, SQLite store, event stream, indexed
demo feed, archive fetch); only the research run is swapped for one that fails at once, so a
fuzzed job ends in milliseconds and its event stream closes instead of running the engine.

Two checks are left out on purpose: ``positive_data_acceptance`` (the models' validators refuse
values JSON Schema cannot express — blank search terms, subreddit name rules, "nothing to
search") and ``negative_data_rejection`` (pydantic's lax mode reads ``0`` as ``false``). Both
answer 4xx with a message, which is what the API promises; no 5xx and a declared shape for
every declared response is what is checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from pydantic import SecretStr
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.feed.commands import run_index
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service import facade as service
from crowdsift.service.api.app import create_app
from crowdsift.service.api.deps import ServiceState
from crowdsift.service.jobs.factory import build_job_service
from crowdsift.service.jobs.models import ResearchRequest
from tests.support.net import serve_app

from .conftest import demo_settings

KEY = "fuzz-api-key-41d0c7"

# The document the app serves at /openapi.json (``test_the_fuzzed_document_is_the_served_one``
# checks that); building the app needs no server, and the document depends on no setting.
DOCUMENT = create_app(Settings(home=Path("unused"))).openapi()
schema = schemathesis.openapi.from_dict(DOCUMENT)

BOUNDED = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def research_switched_off(_request: ResearchRequest, progress: Progress) -> ResearchResult:
    """Jobs go through the real executor and end ``failed`` straight away."""
    progress("job", "research is switched off for the fuzz run")
    raise CrowdsiftError("research is switched off for the fuzz run")


def fuzz_app(settings: Settings) -> FastAPI:
    state = ServiceState(
        settings=settings,
        jobs=build_job_service(settings, research=research_switched_off),
        feed=service.FeedService(settings),
        fetch=lambda plan: service.fetch(settings, plan, persist=False)[0],
        experts=lambda: service.list_experts(settings),
        sse_poll_seconds=0.02,
    )
    return create_app(settings, state=state)


def serve(app: FastAPI) -> AbstractContextManager[str]:
    """``app`` under a real uvicorn on a free port of 127.0.0.1, stopped on exit."""
    return serve_app(app, name="fuzz-uvicorn")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = demo_settings(tmp_path_factory.mktemp("fuzz-home"), api_key=SecretStr(KEY))
    run_index(settings)  # the demo archive, so /api/feed answers with posts, not only 409
    with serve(fuzz_app(settings)) as url:
        yield url


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def header(response: schemathesis.Response, name: str) -> str:
    """Schemathesis keeps headers as lower-cased lists."""
    return ", ".join(response.headers.get(name, []))


def error_body_shape(_ctx: Any, response: schemathesis.Response, _case: schemathesis.Case) -> None:
    """Every 4xx/5xx is ``{"error": {"code", "message"}}``, whatever the route."""
    if response.status_code < 400:
        return
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error["code"], str) and error["code"], body
    assert isinstance(error["message"], str) and error["message"], body
    assert KEY not in response.text


def test_the_fuzzed_document_is_the_served_one(base_url: str, http: requests.Session) -> None:
    served = http.get(f"{base_url}/openapi.json")
    assert served.status_code == 200
    assert served.json() == DOCUMENT
    guarded = DOCUMENT["paths"]["/api/research"]["post"]["responses"]
    assert {"400", "401", "413", "415", "422"} <= set(guarded)


@BOUNDED
@schema.parametrize()
def test_no_operation_answers_5xx_or_breaks_its_schema(
    case: schemathesis.Case, base_url: str, http: requests.Session
) -> None:
    case.call_and_validate(
        base_url=base_url,
        session=http,
        headers={"Authorization": f"Bearer {KEY}"},
        additional_checks=[error_body_shape],
        excluded_checks=[positive_data_acceptance, negative_data_rejection],
    )


@settings(BOUNDED, max_examples=10)
@schema.parametrize()
def test_without_the_key_every_api_route_answers_401(
    case: schemathesis.Case, base_url: str, http: requests.Session
) -> None:
    response = case.call(base_url=base_url, session=http)
    case.validate_response(response, checks=[not_a_server_error, error_body_shape])
    sent = (case.method, case.formatted_path, response.status_code, response.text)
    if case.path.startswith("/api/"):  # any method, any body: the key is checked first
        assert response.status_code in (401, 413), sent
        assert response.status_code == 413 or header(response, "www-authenticate") == "Bearer"
    elif case.method.upper() != case.operation.method.upper():  # probes of undeclared methods
        assert response.status_code == 405, sent
        assert header(response, "allow") == case.operation.method.upper(), sent
    else:
        assert response.status_code == 200, sent
