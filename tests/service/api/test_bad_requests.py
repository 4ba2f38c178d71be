"""Hand-written bad requests the fuzzer does not make: bodies over the limit (declared or
streamed), broken or non-JSON bodies, huge query strings, odd job ids, out-of-range feed sizes,
NUL and other unicode in questions — each a 4xx whose body is ``{"error": {"code", "message"}}``
with a message that says what to send instead."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service import facade as service
from crowdsift.service.api.app import MAX_BODY_BYTES, create_app
from crowdsift.service.api.deps import ServiceState
from crowdsift.service.jobs.factory import build_job_service
from crowdsift.service.jobs.models import ResearchRequest

from .conftest import demo_settings, wait_done

KEY = "bad-requests-key-5e1a"
AUTH = {"Authorization": f"Bearer {KEY}"}
JSON = {**AUTH, "Content-Type": "application/json"}


def research_switched_off(_request: ResearchRequest, _progress: Progress) -> ResearchResult:
    raise CrowdsiftError("research is switched off in these tests")


def app_client(settings: Settings) -> TestClient:
    """The real app and job service; research itself fails at once (these tests read jobs,
    they never need an answer)."""
    state = ServiceState(
        settings=settings,
        jobs=build_job_service(settings, research=research_switched_off),
        feed=service.FeedService(settings),
        fetch=lambda plan: service.fetch(settings, plan, persist=False)[0],
        experts=lambda: service.list_experts(settings),
    )
    return TestClient(create_app(settings, state=state))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = demo_settings(tmp_path_factory.mktemp("bad-requests"), api_key=SecretStr(KEY))
    with app_client(settings) as test_client:
        yield test_client


def error_of(response: httpx.Response, status: int, code: str) -> str:
    """Assert the status and the error shape; return the message."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
    assert KEY not in response.text
    return message


def chunked(total: int) -> Iterator[bytes]:
    """A JSON body of ``total`` bytes sent without Content-Length (chunked)."""
    head, tail = b'{"question": "', b'"}'
    filler = total - len(head) - len(tail)
    yield head
    for start in range(0, filler, 8192):
        yield b"a" * min(8192, filler - start)
    yield tail


# ---- size -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/research", "/api/fetch"])
def test_a_body_declared_over_the_limit_is_413_before_it_is_read(
    client: TestClient, path: str
) -> None:
    body = b'{"question": "' + b"a" * MAX_BODY_BYTES + b'"}'
    message = error_of(client.post(path, content=body, headers=JSON), 413, "too_large")
    assert message == f"request body over {MAX_BODY_BYTES:,} bytes; send less"


@pytest.mark.parametrize("path", ["/api/research", "/api/fetch"])
def test_a_streamed_body_over_the_limit_is_413_too(client: TestClient, path: str) -> None:
    response = client.post(path, content=chunked(MAX_BODY_BYTES + 1024), headers=JSON)
    assert "content-length" not in response.request.headers
    assert error_of(response, 413, "too_large").startswith("request body over 65,536 bytes")


def test_a_streamed_body_under_the_limit_is_read(client: TestClient) -> None:
    response = client.post("/api/research", content=chunked(4000), headers=JSON)
    message = error_of(response, 422, "validation_error")  # read, then judged on its merits
    assert "question: String should have at most 2000 characters" in message


def test_a_content_length_that_is_not_a_number_is_400(client: TestClient) -> None:
    headers = {**JSON, "Content-Length": "12abc"}
    response = client.post("/api/research", content=b'{"question": "abc"}', headers=headers)
    assert error_of(response, 400, "bad_request") == "Content-Length is not a number"


# ---- body format ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"question": ', "body: not valid JSON (Expecting value at character 13)"),
        (b"{'question': 'single quotes'}", "body: not valid JSON (Expecting property name"),
        (b'{"question": "abc"} trailing', "body: not valid JSON (Extra data at character 20)"),
        (b"", "body: empty: send a JSON object"),
        (b'["a list"]', "body: Input should be a valid dictionary"),
        (b'"just a string"', "body: Input should be a valid dictionary"),
    ],
)
def test_bodies_that_are_not_a_json_object_are_422_saying_why(
    client: TestClient, body: bytes, words: str
) -> None:
    response = client.post("/api/research", content=body, headers=JSON)
    message = error_of(response, 422, "validation_error")
    assert message.startswith("invalid request — ") and words in message
    assert response.json()["error"]["details"][0]["field"] == "body"


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        (b'{"question": "caf\xe9 or tea?"}', "UnicodeDecodeError"),  # Latin-1, not UTF-8
        (b"[" * 20_000 + b"]" * 20_000, "RecursionError"),  # nested past the parser
    ],
)
def test_bodies_the_parser_cannot_read_are_400_saying_what_to_send(
    client: TestClient, body: bytes, cause: str
) -> None:
    message = error_of(client.post("/api/fetch", content=body, headers=JSON), 400, "bad_request")
    assert message == (
        f"could not read the request body ({cause}); send one UTF-8 JSON object with "
        "'Content-Type: application/json'"
    )


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [
        ("text/plain", "'text/plain'"),
        ("application/x-www-form-urlencoded", "'application/x-www-form-urlencoded'"),
        ("multipart/form-data; boundary=x", "'multipart/form-data'"),
        (None, "no Content-Type"),
    ],
)
def test_a_body_not_sent_as_json_is_415_naming_the_content_type(
    client: TestClient, content_type: str | None, shown: str
) -> None:
    headers = {**AUTH, **({"Content-Type": content_type} if content_type else {})}
    body = b'{"question": "Which drill for concrete?"}'
    response = client.post("/api/research", content=body, headers=headers)
    message = error_of(response, 415, "unsupported_media_type")
    assert message == (
        f"the body must be JSON: send it with 'Content-Type: application/json' (got {shown})"
    )


def test_json_with_a_structured_suffix_is_accepted(client: TestClient) -> None:
    headers = {**AUTH, "Content-Type": "application/vnd.crowdsift+json; charset=utf-8"}
    response = client.post(
        "/api/research", content=b'{"question": "Which drill?"}', headers=headers
    )
    assert response.status_code == 202, response.text


# ---- the API key comes first -------------------------------------------------------------------


def test_without_the_key_even_a_broken_body_is_401_and_says_nothing_about_it(
    client: TestClient,
) -> None:
    for headers in ({"Content-Type": "application/json"}, {"Authorization": "Bearer nope"}):
        response = client.post("/api/research", content=b'{"question": ', headers=headers)
        message = error_of(response, 401, "unauthorized")
        assert "JSON" not in message and "question" not in message
        assert response.headers["www-authenticate"] == "Bearer"
    assert client.post("/api/research", content=b'{"q', headers=JSON).status_code == 422
    assert error_of(client.delete("/api/experts"), 401, "unauthorized")


def test_a_wrong_method_is_405_naming_the_allowed_one(client: TestClient) -> None:
    response = client.delete("/api/research", headers=AUTH)
    assert error_of(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"
    assert error_of(client.put("/healthz"), 405, "method_not_allowed")


# ---- query strings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "words"),
    [
        ("-1", "greater than or equal to 1"),
        ("0", "greater than or equal to 1"),
        ("21", "less than or equal to 20"),
        ("9" * 40, "less than or equal to 20"),
        ("1e3", "valid integer"),
        ("ten", "valid integer"),
    ],
)
def test_feed_sizes_out_of_range_are_422_naming_the_parameter(
    client: TestClient, size: str, words: str
) -> None:
    response = client.get("/api/feed", params={"mode": "random", "size": size}, headers=AUTH)
    message = error_of(response, 422, "validation_error")
    assert message.startswith("invalid request — query.size: ") and words in message


@pytest.mark.parametrize("length", [501, 10_000, 60_000])
def test_huge_query_strings_are_refused_by_their_limit(client: TestClient, length: int) -> None:
    params = {"interests": "x" * length}
    response = client.get("/api/feed", params=params, headers=AUTH)
    message = error_of(response, 422, "validation_error")
    assert "query.interests: String should have at most 500 characters" in message


def test_too_many_interests_is_400(client: TestClient) -> None:
    params = {"interests": ",".join(f"i{n}" for n in range(21))}
    message = error_of(client.get("/api/feed", params=params, headers=AUTH), 400, "bad_request")
    assert message == "at most 20 interests, got 21"


# ---- job ids -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "job_id",
    ["abc", "0" * 32, "f" * 64, "%00", "caf%C3%A9", "a%20b", "..", "%E2%80%AE", "a.b"],
)
@pytest.mark.parametrize("suffix", ["", "/events"])
def test_unknown_job_ids_of_any_shape_are_404(client: TestClient, job_id: str, suffix: str) -> None:
    response = client.get(f"/api/research/{job_id}{suffix}", headers=AUTH)
    message = error_of(response, 404, "not_found")
    assert "start one with POST /api/research" in message or message == "Not Found"


def test_a_job_id_over_64_characters_is_422(client: TestClient) -> None:
    response = client.get(f"/api/research/{'a' * 65}", headers=AUTH)
    assert "path.job_id: String should have at most 64 characters" in error_of(
        response, 422, "validation_error"
    )


# ---- unicode in questions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Which drill\x00 for concrete?",  # NUL: stored and read back as sent
        "Какая дрель для бетона? 🔨",
        "\u202eright-to-left override, then a question?",
        "e\u0301 combining accents and \u200b zero width?",
    ],
)
def test_unusual_unicode_in_a_question_round_trips(client: TestClient, question: str) -> None:
    response = client.post("/api/research", json={"question": question}, headers=AUTH)
    assert response.status_code == 202, response.text
    job = client.get(response.json()["links"]["self"], headers=AUTH).json()
    assert job["request"]["question"] == question


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"question": "\\ud800 lone surrogate?"}', "question: Input should be a valid string"),
        (b'{"question": "   \\t\\n  "}', "question: String should have at least 3 characters"),
        (b'{"question": "ok", "experts": ["a\\u0000b"]}', "experts: Value error, not an id"),
    ],
)
def test_questions_that_are_not_text_are_422(client: TestClient, body: bytes, words: str) -> None:
    response = client.post("/api/research", content=body, headers=JSON)
    assert words in error_of(response, 422, "validation_error")


# ---- the database ------------------------------------------------------------------------------


@pytest.mark.postgres
def test_nul_in_ids_and_questions_never_reaches_postgres_as_an_error(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = demo_settings(tmp_path / "home", database_url=postgres_url)
    with app_client(settings) as pg:
        for suffix in ("", "/events"):
            message = error_of(pg.get(f"/api/research/%00{suffix}"), 404, "not_found")
            assert message == "no job '\\x00'; start one with POST /api/research"
        question = "Which drill\x00 for concrete?"
        response = pg.post("/api/research", json={"question": question})
        assert response.status_code == 202, response.text
        assert pg.get(response.json()["links"]["self"]).json()["request"]["question"] == question


def test_a_store_failure_is_503_in_one_line_without_the_sql(tmp_path: Path) -> None:
    settings = demo_settings(tmp_path / "home")
    with app_client(settings) as broken:
        job_id = broken.post("/api/research", json={"question": "Which drill?"}).json()["id"]
        assert wait_done(broken, job_id)["status"] == "failed"  # nothing writes any more
        database = settings.resolved_database_url.removeprefix("sqlite:///")
        with sqlite3.connect(database) as conn:
            conn.execute("DROP TABLE job_events")
            conn.execute("DROP TABLE jobs")
        conn.close()
        message = error_of(broken.get(f"/api/research/{job_id}"), 503, "store_unavailable")
        assert (
            message.startswith("reading a job in sqlite:///") and "no such table: jobs" in message
        )
        assert "[SQL" not in message and "SELECT" not in message
        assert broken.get("/healthz").json()["database"] == "unreachable"


def _jobs(client: TestClient) -> int:
    counts: dict[str, int] = client.app.state.crowdsift.jobs.store.counts_by_status()  # type: ignore[attr-defined]
    return sum(counts.values())


@pytest.mark.parametrize(
    ("experts", "missing"),
    [(["nobody"], "nobody"), (["desk_gear_weekly", "ghost", "nobody"], "ghost, nobody")],
)
def test_an_unknown_expert_is_422_before_any_job_exists(
    client: TestClient, experts: list[str], missing: str
) -> None:
    before = _jobs(client)
    response = client.post("/api/research", json={"question": "which desk?", "experts": experts},
                           headers=AUTH)  # fmt: skip
    message = error_of(response, 422, "validation_error")
    assert message.startswith(f"unknown expert(s) {missing}; known: ")
    assert "desk_gear_weekly" in message and "homelab_field_notes" in message
    assert "crowdsift experts import" in message
    details = response.json()["error"]["details"]
    assert [(d["field"], d["type"]) for d in details] == [("experts", "unknown_expert")]
    assert _jobs(client) == before


def test_a_known_expert_is_accepted_and_queued(client: TestClient) -> None:
    before = _jobs(client)
    response = client.post(
        "/api/research", json={"question": "which desk?", "experts": ["homelab_field_notes"]},
        headers=AUTH,
    )  # fmt: skip
    assert response.status_code == 202, response.text
    assert _jobs(client) == before + 1
