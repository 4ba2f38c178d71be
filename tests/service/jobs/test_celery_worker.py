"""Celery scale-out end to end: real ``crowdsift worker`` processes on this machine's Redis and
PostgreSQL. Jobs are submitted in this process (job service and HTTP API), run by a separate
worker, and read back; a worker killed with SIGKILL leaves a job that is requeued and finished
by the next worker, or failed once its attempts are spent — never left "running".
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from crowdsift.core.config import Settings
from crowdsift.service.api.app import create_app
from crowdsift.service.jobs.celery_app import (
    TASK_NAME,
    CeleryDispatcher,
    make_celery,
    reap_on_start,
)
from crowdsift.service.jobs.factory import build_job_service
from crowdsift.service.jobs.models import Job, ResearchRequest
from crowdsift.service.jobs.service import JobService
from crowdsift.service.jobs.store import JobStore
from tests.support.corpus import build_corpus
from tests.support.reddit_server import RedditProtocolServer

REDIS_URL = "redis://127.0.0.1:6379/0"
QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
REDDIT_ID, REDDIT_SECRET = "worker-test-client", "worker-test-secret-81"
STALE_AFTER = 2.0
# Real settings that make the demo research lighter, so three worker runs fit the time budget.
LIGHT_RESEARCH = {
    "CROWDSIFT_REDDIT_SUBREDDITS": "1",
    "CROWDSIFT_REDDIT_RERANK_TOP": "8",
    "CROWDSIFT_REDDIT_DRILL_TOP": "3",
    "CROWDSIFT_REDDIT_DRILL_COMMENTS": "20",
    "CROWDSIFT_REDDIT_AI_QUERIES": "0",
}


class WorkerProcess:
    """``python -m crowdsift worker`` in its own process group, its output in files."""

    def __init__(self, env: dict[str, str], logs: Path, name: str) -> None:
        self.log_path = logs / f"{name}.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "crowdsift", "worker", "--concurrency", "2"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown code runs, as in a crash."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self) -> int:
        """SIGTERM (warm shutdown); the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()


@pytest.fixture
def queue() -> Iterator[str]:
    """A queue of this test's own; its Redis keys (and messages a killed worker left unacked,
    which Redis would otherwise hand back one day) are deleted afterwards."""
    name = f"crowdsift-test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"*{name}*"))
        if keys:
            client.delete(*keys)
        for tag, payload in client.hgetall("unacked").items():
            if name.encode() in payload:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)
    finally:
        client.close()


def queued_job_ids(queue: str) -> list[str]:
    """The job ids of the research messages waiting in ``queue`` (oldest first)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        raw = client.lrange(queue, 0, -1)
    finally:
        client.close()
    ids = []
    for item in reversed(raw):  # kombu LPUSHes and BRPOPs
        message = json.loads(item)
        assert message["headers"]["task"] == TASK_NAME
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        ids.append(args[0])
    return ids


@pytest.fixture
def start_worker(
    tmp_path: Path, isolated_environment: Path, postgres_url: str, queue: str
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start workers sharing this test's home, database and queue; all are gone afterwards."""
    started: list[WorkerProcess] = []
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CROWDSIFT_", "REDDIT_"))}
    base.update(
        CROWDSIFT_BROKER_URL=REDIS_URL,
        CROWDSIFT_WORKER_QUEUE=queue,
        CROWDSIFT_DATABASE_URL=postgres_url,
        CROWDSIFT_HOME=str(isolated_environment),
        CROWDSIFT_ENGINE="local",
        CROWDSIFT_CACHE_TTL="0",
        CROWDSIFT_LOG_LEVEL="INFO",
        HF_HUB_OFFLINE="1",
        **LIGHT_RESEARCH,
    )

    def start(**env: str) -> WorkerProcess:
        worker = WorkerProcess({**base, **env}, tmp_path, f"worker{len(started)}")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.close()


def settings_for(home: Path, postgres_url: str, queue: str, **overrides: object) -> Settings:
    return Settings(
        home=home,
        broker_url=REDIS_URL,
        worker_queue=queue,
        database_url=postgres_url,
        engine="local",
        **overrides,
    )


def wait_for(
    service: JobService, job_id: str, done: Callable[[Job], bool], what: str, timeout: float
) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = service.get(job_id)
        if job is not None and done(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never {what} within {timeout} s: {service.get(job_id)}")


def finished(job: Job) -> bool:
    return job.finished


def heartbeating(job: Job) -> bool:
    """Claimed, and its worker has since said it is still on it: a job in mid-run."""
    return (
        job.status == "running"
        and job.started_at is not None
        and job.heartbeat_at is not None
        and job.heartbeat_at > job.started_at
    )


@pytest.fixture
def slow_reddit() -> Iterator[RedditProtocolServer]:
    """Reddit's API on 127.0.0.1, answering each request only after a second."""
    with RedditProtocolServer(
        client_id=REDDIT_ID, client_secret=REDDIT_SECRET, latency=1.0
    ) as server:
        build_corpus(["gadgets"], ["plaud note"], posts_per_query=4).load_into(server)
        yield server


def reddit_env(server: RedditProtocolServer, *, max_attempts: int) -> dict[str, str]:
    return {
        "CROWDSIFT_SOURCE": "reddit-api",
        "REDDIT_CLIENT_ID": REDDIT_ID,
        "REDDIT_USER_AGENT": "python:crowdsift-tests:1.0 (by /u/crowdsift-tests)",
        "REDDIT_CLIENT_SECRET": REDDIT_SECRET,
        "REDDIT_API_BASE_URL": server.base_url,
        "REDDIT_AUTH_URL": server.auth_url,
        "CROWDSIFT_JOB_STALE_AFTER": str(STALE_AFTER),
        "CROWDSIFT_JOB_MAX_ATTEMPTS": str(max_attempts),
    }


@pytest.mark.postgres
def test_a_worker_process_runs_jobs_submitted_through_the_service_and_the_api(
    start_worker: Callable[..., WorkerProcess],
    isolated_environment: Path,
    postgres_url: str,
    queue: str,
) -> None:
    settings = settings_for(isolated_environment, postgres_url, queue)
    service = build_job_service(settings)
    try:
        worker = start_worker()
        direct = service.submit(ResearchRequest(question=QUESTION))
        with TestClient(create_app(settings)) as client:
            accepted = client.post("/api/research", json={"question": QUESTION})
            assert accepted.status_code == 202, accepted.text
            via_api = accepted.json()["id"]
            job = wait_for(service, direct.id, finished, "finished", timeout=150)
            from_api = wait_for(service, via_api, finished, "finished", timeout=60)
            api_view = client.get(f"/api/research/{via_api}").json()
        events = [e.message for e in service.events(direct.id)]
    finally:
        service.close()

    for done in (job, from_api):
        assert done.status == "done", done.error
        assert done.attempts == 1
        assert done.worker is not None and done.worker.startswith("celery@")
        assert done.result is not None and done.result.question == QUESTION
        assert done.result.status in ("ok", "partial")
        reddit = done.result.reddit_response
        assert reddit is not None and reddit.ranked, "the demo archive gave no Reddit evidence"
    assert api_view["status"] == "done"
    assert api_view["result"]["reddit_response"]["ranked"]
    assert events[0].startswith("started on celery@") and events[-1].startswith("finished:")
    assert {done.worker.split(":")[1] for done in (job, from_api) if done.worker} == {
        str(worker.proc.pid)
    }

    assert worker.terminate() == 0, worker.log()
    log = worker.log()
    assert "worker_reaped" in log and "Warm shutdown" in log


@pytest.mark.postgres
def test_a_job_whose_worker_dies_is_requeued_and_finished_by_the_next_worker(
    start_worker: Callable[..., WorkerProcess],
    slow_reddit: RedditProtocolServer,
    isolated_environment: Path,
    postgres_url: str,
    queue: str,
) -> None:
    env = reddit_env(slow_reddit, max_attempts=2)
    settings = settings_for(
        isolated_environment, postgres_url, queue, job_stale_after=STALE_AFTER, job_max_attempts=2
    )
    service = build_job_service(settings)  # not started: only the workers reap here
    try:
        first = start_worker(**env)
        job_id = service.submit(ResearchRequest(question=QUESTION, subreddits=["gadgets"])).id
        # Every Reddit answer takes a second: the job cannot be over when the kill lands.
        claimed = wait_for(service, job_id, heartbeating, "ran", timeout=60)
        first.kill()

        # Nobody reaps yet: the dead worker's job just sits there, "running".
        time.sleep(STALE_AFTER + 0.5)
        orphan = service.get(job_id)
        assert orphan is not None and orphan.status == "running" and orphan.attempts == 1
        assert orphan.heartbeat_at is not None
        assert (datetime.now(UTC) - orphan.heartbeat_at).total_seconds() > STALE_AFTER

        slow_reddit.latency = 0.0  # the second run may be quick
        second = start_worker(**env)
        job = wait_for(service, job_id, finished, "finished", timeout=150)
        events = [e.message for e in service.events(job_id)]
    finally:
        service.close()

    assert job.status == "done", job.error
    assert job.attempts == 2
    assert job.worker is not None and job.worker != claimed.worker
    assert job.worker.split(":")[1] == str(second.proc.pid)
    assert "worker stopped responding; queued again" in events
    starts = [m for m in events if m.startswith("started on celery@")]
    assert len(starts) == 2
    assert starts[0].endswith("(attempt 1)") and starts[1].endswith("(attempt 2)")
    assert job.result is not None and job.result.fetch is not None
    assert any(r.path.startswith("/r/gadgets/search") for r in slow_reddit.requests)
    assert f"requeued=['{job_id}']" in second.log()
    assert second.terminate() == 0, second.log()


@pytest.mark.postgres
def test_a_job_out_of_attempts_ends_failed_with_a_message(
    start_worker: Callable[..., WorkerProcess],
    slow_reddit: RedditProtocolServer,
    isolated_environment: Path,
    postgres_url: str,
    queue: str,
) -> None:
    settings = settings_for(
        isolated_environment, postgres_url, queue, job_stale_after=STALE_AFTER, job_max_attempts=1
    )
    service = build_job_service(settings)
    try:
        worker = start_worker(**reddit_env(slow_reddit, max_attempts=1))
        job_id = service.submit(ResearchRequest(question=QUESTION, subreddits=["gadgets"])).id
        wait_for(service, job_id, heartbeating, "ran", timeout=60)
        worker.kill()
        service.start(reap_every=0.5)  # the API's reaper
        job = wait_for(service, job_id, finished, "finished", timeout=30)
        events = [e.message for e in service.events(job_id)]
    finally:
        service.close()

    assert job.status == "failed"
    assert job.attempts == 1 and job.result is None
    assert job.error is not None
    assert "stopped" in job.error and "submit it again" in job.error
    assert events[-1] == "failed: worker stopped responding"


def test_the_dispatcher_puts_the_job_id_on_the_configured_queue(
    isolated_environment: Path, queue: str
) -> None:
    dispatcher = CeleryDispatcher(Settings(broker_url=REDIS_URL, worker_queue=queue))
    try:
        dispatcher.submit("job-one")
        dispatcher.submit("job-two")
    finally:
        dispatcher.close()
    assert queued_job_ids(queue) == ["job-one", "job-two"]


def test_a_starting_worker_requeues_and_resends_stale_jobs_and_fails_spent_ones(
    tmp_path: Path, queue: str
) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.sqlite'}"
    day1 = JobStore.from_url(url, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    retry, spent, fresh = (day1.create(ResearchRequest(question=QUESTION)).id for _ in range(3))
    day1.claim(spent, "celery@dead:1:a")  # first attempt; that worker died
    day2 = JobStore.from_url(url, clock=lambda: datetime(2026, 1, 2, tzinfo=UTC))
    assert day2.reap(stale_after=60, max_attempts=2).requeued == [spent]
    day2.claim(spent, "celery@dead:2:b")  # second attempt; that worker died too
    day2.claim(retry, "celery@dead:2:b")  # first attempt
    day1.close()
    day2.close()
    store = JobStore.from_url(url)
    store.claim(fresh, "celery@alive:3:c")  # heartbeating now: left alone
    settings = Settings(broker_url=REDIS_URL, worker_queue=queue, job_max_attempts=2)
    app = make_celery(settings)
    try:
        reaped = reap_on_start(settings, app, store)
        states = {job_id: store.get(job_id) for job_id in (retry, spent, fresh)}
    finally:
        app.close()
        store.close()
    assert reaped.requeued == [retry] and reaped.failed == [spent]
    assert {job_id: job.status for job_id, job in states.items() if job is not None} == {
        retry: "queued",
        spent: "failed",
        fresh: "running",
    }
    assert queued_job_ids(queue) == [retry]  # sent again: a worker will pick it up
