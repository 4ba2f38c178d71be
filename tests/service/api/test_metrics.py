"""Durable counters and ``GET /metrics``: atomic upserts on real SQLite and PostgreSQL (two
threads at once included), the counts a real research job and a real fetch leave behind, parsed
back with prometheus_client's own parser, and the API key."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from crowdsift.core.config import Settings
from crowdsift.core.errors import SourceError
from crowdsift.engines.base import Usage
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.research import research_async
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.pipeline.telemetry import run_telemetry
from crowdsift.pipeline.wiring import ResearchOptions
from crowdsift.service import facade as service
from crowdsift.service.api.app import create_app
from crowdsift.service.api.deps import ServiceState
from crowdsift.service.jobs.execute import execute_job
from crowdsift.service.jobs.models import Job, ResearchRequest
from crowdsift.service.jobs.service import EmbeddedDispatcher, JobService
from crowdsift.service.jobs.store import JobStore
from crowdsift.service.metrics import MetricSample, MetricsStore, render_prometheus

from .conftest import demo_settings, wait_done

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
KEY = "metrics-key-5c1e2"
Labels = frozenset[tuple[str, str]]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def metrics_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetricsStore]:
    url = (
        f"sqlite:///{tmp_path / 'metrics.sqlite'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    store = MetricsStore.from_url(url)
    yield store
    store.close()


def sample(name: str, value: float, **labels: str) -> MetricSample:
    return MetricSample(name=name, labels=labels, value=value)


def key(name: str, **labels: str) -> tuple[str, Labels]:
    return name, frozenset(labels.items())


def totals(store: MetricsStore) -> dict[tuple[str, Labels], float]:
    return {(s.name, frozenset(s.labels.items())): s.value for s in store.totals()}


def parsed(body: str) -> dict[tuple[str, Labels], float]:
    """Every sample of a Prometheus text body, by name and labels (parsed by the client)."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def test_add_upserts_sums_and_keys_labels_regardless_of_their_order(
    metrics_store: MetricsStore,
) -> None:
    metrics_store.add([])
    metrics_store.add(
        [
            sample("crowdsift_rejections_total", 2, source="archive", reason="too_short"),
            sample("crowdsift_rejections_total", 3, reason="too_short", source="archive"),
            sample("crowdsift_llm_cost_usd_total", 0.25),
        ]
    )
    metrics_store.add(
        [
            sample("crowdsift_rejections_total", 4, reason="too_short", source="archive"),
            sample("crowdsift_rejections_total", 1, source="youtube", reason="irrelevant"),
            sample("crowdsift_llm_cost_usd_total", 0.5),
        ]
    )
    assert totals(metrics_store) == {
        key("crowdsift_rejections_total", source="archive", reason="too_short"): 9,
        key("crowdsift_rejections_total", source="youtube", reason="irrelevant"): 1,
        key("crowdsift_llm_cost_usd_total"): 0.75,
    }


def test_two_threads_incrementing_at_once_lose_no_count(metrics_store: MetricsStore) -> None:
    rounds = 40
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def increment(worker: str) -> None:
        try:
            start.wait()
            for _ in range(rounds):
                metrics_store.add(
                    [
                        sample("crowdsift_items_total", 1, source="archive", stage="seen"),
                        sample("crowdsift_llm_calls_total", 2, phase="map"),
                        sample("crowdsift_research_runs_total", 1, status=worker),
                    ]
                )
        except BaseException as exc:  # surfaced below, on the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=increment, args=(name,)) for name in ("ok", "partial")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    counts = totals(metrics_store)
    assert counts[key("crowdsift_items_total", source="archive", stage="seen")] == 2 * rounds
    assert counts[key("crowdsift_llm_calls_total", phase="map")] == 4 * rounds
    for status in ("ok", "partial"):
        assert counts[key("crowdsift_research_runs_total", status=status)] == rounds


def test_rendering_escapes_labels_and_always_shows_every_family(
    metrics_store: MetricsStore,
) -> None:
    odd = 'expert:a"b\\c\nd'
    metrics_store.add([sample("crowdsift_items_total", 3, source=odd, stage="seen")])
    body = render_prometheus(metrics_store, {"done": 2, "failed": 1}).decode()
    values = parsed(body)
    assert values[key("crowdsift_items_total", source=odd, stage="seen")] == 3
    assert values[key("crowdsift_llm_cost_usd_total")] == 0
    for status, count in (("queued", 0), ("running", 0), ("done", 2), ("failed", 1)):
        assert values[key("crowdsift_jobs", status=status)] == count
    assert "# TYPE crowdsift_rejections_total counter" in body
    assert "# TYPE crowdsift_jobs gauge" in body


def research_service(settings: Settings) -> tuple[JobService, LocalEngine]:
    """The embedded job service running the real research run (local engine, hashing embedder:
    fast and offline) on the bundled demo data."""
    engine = LocalEngine(embedder=HashingEmbedder())

    def run(request: ResearchRequest, progress: Progress) -> ResearchResult:
        return asyncio.run(
            research_async(
                request.question,
                experts=request.experts,
                search_reddit=request.search_reddit,
                settings=settings,
                options=ResearchOptions(progress=progress, shared_engine=engine, persist=False),
            )
        )

    store = JobStore.from_url(settings.resolved_database_url)
    return JobService(store, EmbeddedDispatcher(store, run, workers=1)), engine


def scrape_when_counted(
    client: TestClient, timeout: float = 30.0
) -> dict[tuple[str, Labels], float]:
    """The job is "done" as soon as its result is stored; its counts follow right after."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = client.get("/metrics")
        values = parsed(response.text)
        if any(name == "crowdsift_research_runs_total" for name, _ in values):
            return values
        time.sleep(0.05)
    raise AssertionError(f"no research run was counted within {timeout} s")


def test_metrics_count_what_a_real_research_job_reported(tmp_path: Path) -> None:
    settings = demo_settings(tmp_path / "home")
    jobs, engine = research_service(settings)
    state = ServiceState(
        settings=settings,
        jobs=jobs,
        feed=service.FeedService(settings),
        fetch=lambda plan: service.fetch(settings, plan)[0],
        experts=lambda: service.list_experts(settings),
    )
    with TestClient(create_app(state=state)) as client:
        body = {"question": QUESTION, "experts": ["desk_gear_weekly"]}
        job = wait_done(client, client.post("/api/research", json=body).json()["id"])
        assert job["status"] == "done"
        values = scrape_when_counted(client)
        response = client.get("/metrics")
        assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    asyncio.run(engine.aclose())

    result = ResearchResult.model_validate(job["result"])
    fetch = result.fetch
    assert fetch is not None and fetch.post_rejections

    def value(name: str, **labels: str) -> float:
        return values.get(key(name, **labels), 0.0)

    source = fetch.source
    assert value("crowdsift_items_total", source=source, stage="seen") == fetch.posts_seen
    assert value("crowdsift_items_total", source=source, stage="accepted") == fetch.posts_accepted
    assert value("crowdsift_items_total", source=source, stage="relevant") == fetch.posts_relevant
    for reason, count in fetch.post_rejections.items():
        assert value("crowdsift_rejections_total", source=source, reason=str(reason)) == count
    reddit = result.reddit_response
    assert reddit is not None
    near = value("crowdsift_rejections_total", source=source, reason="near_duplicate")
    assert near == reddit.duplicates_removed

    counts = result.expert_responses[0].counts
    expert = "expert:desk_gear_weekly"
    assert value("crowdsift_items_total", source=expert, stage="seen") == counts["posts"]
    relevant = counts["high"] + counts["medium_selected"]
    assert value("crowdsift_items_total", source=expert, stage="relevant") == relevant
    assert value("crowdsift_rejections_total", source=expert, reason="low") == counts["low"]

    assert result.usage.by_phase
    for phase, calls in result.usage.by_phase.items():
        assert value("crowdsift_llm_calls_total", phase=phase) == calls
    assert value("crowdsift_research_runs_total", status=result.status) == 1
    assert value("crowdsift_jobs", status="done") == 1
    assert value("crowdsift_jobs", status="queued") == 0
    telemetry = run_telemetry(result)
    rejected = sum(
        v for (name, labels), v in values.items() if name == "crowdsift_rejections_total"
    )
    assert rejected == sum(sum(s.rejections.values()) for s in telemetry.sources.values())


def ended(job: Job | None) -> str:
    assert job is not None
    return job.status


def test_a_failed_job_is_counted_and_a_broken_counter_table_never_fails_a_job(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite'}"
    store = JobStore.from_url(url)
    calls: list[str] = []

    def answer(request: ResearchRequest, _progress: Progress) -> ResearchResult:
        calls.append(request.question)
        if "fail" in request.question:
            raise SourceError("the archive is gone")
        return ResearchResult(
            question=request.question, status="partial", engine="local", timings_ms={},
            usage=Usage(calls=3, by_phase={"filter": 3}),
        )  # fmt: skip

    failed = store.create(ResearchRequest(question="please fail now"))
    done = store.create(ResearchRequest(question="which desk lasts?"))
    assert ended(execute_job(failed.id, store, answer, worker="w")) == "failed"
    assert ended(execute_job(done.id, store, answer, worker="w")) == "done"
    # A second delivery of a finished job is not run, so not counted, again.
    execute_job(done.id, store, answer, worker="w2")
    counters = MetricsStore(store.engine)
    counts = totals(counters)
    assert counts[key("crowdsift_research_runs_total", status="failed")] == 1
    assert counts[key("crowdsift_research_runs_total", status="partial")] == 1
    assert counts[key("crowdsift_llm_calls_total", phase="filter")] == 3
    assert len(calls) == 2

    # A counter table this version cannot upsert into (no key on name, labels): the job is
    # still done, only the count is lost.
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE metric_counters"))
        conn.execute(text("CREATE TABLE metric_counters (name TEXT, labels TEXT, value REAL)"))
    another = store.create(ResearchRequest(question="which chair lasts?"))
    assert ended(execute_job(another.id, store, answer, worker="w")) == "done"
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM metric_counters")).scalar() == 0
    store.close()


def test_a_fetch_through_the_api_is_counted(tmp_path: Path) -> None:
    with TestClient(create_app(demo_settings(tmp_path / "home"))) as client:
        plan = {"search_terms": ["plaud"], "subreddits": ["gadgets"]}
        posts = client.post("/api/fetch", json=plan).json()["posts"]
        values = parsed(client.get("/metrics").text)
    assert posts
    source = posts[0]["source"]

    def value(name: str, **labels: str) -> float:
        return values.get(key(name, **labels), 0.0)

    assert value("crowdsift_fetch_runs_total") == 1
    assert value("crowdsift_items_total", source=source, stage="relevant") == len(posts)
    seen = value("crowdsift_items_total", source=source, stage="seen")
    accepted = value("crowdsift_items_total", source=source, stage="accepted")
    rejected = sum(
        v
        for (name, labels), v in values.items()
        if name == "crowdsift_rejections_total" and ("source", source) in labels
    )
    assert accepted == len(posts) and seen == accepted + rejected and rejected > 0


def test_metrics_need_the_api_key_when_one_is_set_and_stay_out_of_the_schema(
    tmp_path: Path,
) -> None:
    with TestClient(create_app(demo_settings(tmp_path / "home", api_key=KEY))) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = client.get("/metrics", headers=headers)
            assert refused.status_code == 401 and KEY not in refused.text
        good = client.get("/metrics", headers={"Authorization": f"Bearer {KEY}"})
        assert good.status_code == 200
        assert good.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert parsed(good.text)[key("crowdsift_jobs", status="done")] == 0
        schema = client.get("/openapi.json", headers={"Authorization": f"Bearer {KEY}"}).json()
        assert "/metrics" not in schema["paths"]
