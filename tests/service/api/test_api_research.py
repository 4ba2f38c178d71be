"""Research jobs over HTTP with the real research run on the bundled demo data: 202 and a
job id, progress as Server-Sent Events, the ResearchResult when done."""

from __future__ import annotations

from fastapi.testclient import TestClient

from crowdsift.pipeline.result import ResearchResult

from .conftest import read_events, wait_done

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


def test_a_research_job_streams_its_phases_and_returns_a_cited_result(
    client: TestClient,
) -> None:
    response = client.post(
        "/api/research", json={"question": QUESTION, "experts": ["desk_gear_weekly"]}
    )
    assert response.status_code == 202
    receipt = response.json()
    job_id = receipt["id"]
    assert receipt["status"] == "queued"
    assert response.headers["location"] == f"/api/research/{job_id}" == receipt["links"]["self"]

    messages = read_events(client, job_id)
    progress = [data for event, _, data in messages if event == "progress"]
    phases = [p["phase"] for p in progress]
    for phase in ("formulate", "search", "rerank", "drill", "synthesize", "experts"):
        assert phase in phases, phases
    assert [p["seq"] for p in progress] == list(range(1, len(progress) + 1))
    assert [e for e, _, _ in messages][-1] == "done"
    assert messages[-1][2]["status"] == "done"
    assert ("status", None, {"id": job_id, "status": "running"}) in messages

    job = client.get(f"/api/research/{job_id}").json()
    assert job["status"] == "done" and job["attempts"] == 1
    result = ResearchResult.model_validate(job["result"])
    assert result.question == QUESTION and result.engine == "local"
    assert [r.expert_id for r in result.expert_responses] == ["desk_gear_weekly"]
    reddit = result.reddit_response
    assert reddit is not None and reddit.synthesis is not None and reddit.synthesis.sources
    assert all(s.url.startswith("https://www.reddit.com/r/") for s in reddit.synthesis.sources)

    # Resuming with Last-Event-ID replays only what came after it.
    resumed = read_events(client, job_id, headers={"Last-Event-ID": "3"})
    ids = [int(i) for e, i, _ in resumed if e == "progress" and i is not None]
    assert ids == list(range(4, len(progress) + 1))


def test_reddit_only_and_experts_only_jobs_answer_what_was_asked(client: TestClient) -> None:
    experts_only = client.post(
        "/api/research",
        json={"question": QUESTION, "experts": ["homelab_field_notes"], "search_reddit": False},
    ).json()["id"]
    reddit_only = client.post("/api/research", json={"question": QUESTION}).json()["id"]

    experts_result = ResearchResult.model_validate(wait_done(client, experts_only)["result"])
    assert experts_result.reddit_response is None and experts_result.summary is None
    assert [r.expert_id for r in experts_result.expert_responses] == ["homelab_field_notes"]

    reddit_result = ResearchResult.model_validate(wait_done(client, reddit_only)["result"])
    assert reddit_result.expert_responses == []
    assert reddit_result.reddit_response is not None


def test_an_unknown_expert_is_a_422_naming_the_known_ids_and_no_job(client: TestClient) -> None:
    response = client.post(
        "/api/research",
        json={"question": QUESTION, "experts": ["nobody_here"], "search_reddit": False},
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert "unknown expert(s) nobody_here" in error["message"]
    assert "desk_gear_weekly" in error["message"]
    assert "id" not in response.json()  # refused before a job was created


def test_an_unknown_job_is_a_404_that_says_how_to_start_one(client: TestClient) -> None:
    for path in ("/api/research/0123", "/api/research/0123/events"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["error"] == {
            "code": "not_found",
            "message": "no job '0123'; start one with POST /api/research",
        }
