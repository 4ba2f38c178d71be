"""The job store's state machine on real SQLite and PostgreSQL: claims are exclusive, only the
owner may finish, stale jobs are requeued or failed, events come back in order."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import ResearchResult
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.jobs.store import JobStore


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def result_for(question: str) -> ResearchResult:
    return ResearchResult(
        question=question, status="ok", engine="local", timings_ms={"total": 1.0}, usage=Usage()
    )


REQUEST = ResearchRequest(question="Which standing desk lasts?", experts=["desk_gear_weekly"])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_and_clock(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[JobStore, Clock]]:
    url = (
        f"sqlite:///{tmp_path / 'jobs.sqlite'}"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    clock = Clock()
    store = JobStore.from_url(url, clock=clock)
    yield store, clock
    store.close()


def test_a_job_is_claimed_once_and_finished_only_by_its_worker(
    store_and_clock: tuple[JobStore, Clock],
) -> None:
    store, _ = store_and_clock
    job = store.create(REQUEST)
    assert job.status == "queued" and job.attempts == 0 and job.request == REQUEST

    claimed = store.claim(job.id, "w1")
    assert claimed is not None and claimed.status == "running" and claimed.worker == "w1"
    assert claimed.attempts == 1
    assert store.claim(job.id, "w2") is None  # a redelivered message runs nothing

    assert not store.finish(job.id, "w2", result_for("other"))
    assert store.finish(job.id, "w1", result_for(REQUEST.question))
    done = store.get(job.id)
    assert done is not None and done.status == "done" and done.finished
    assert done.result == result_for(REQUEST.question)
    assert not store.fail(job.id, "w1", "too late")  # a finished job stays finished


def test_stale_jobs_are_requeued_then_failed_after_max_attempts(
    store_and_clock: tuple[JobStore, Clock],
) -> None:
    store, clock = store_and_clock
    job = store.create(REQUEST)
    fresh = store.create(REQUEST)
    store.claim(job.id, "dead")
    clock.advance(30)
    store.claim(fresh.id, "alive")

    clock.advance(40)  # job: 70 s silent; fresh: 40 s
    reaped = store.reap(stale_after=60, max_attempts=2)
    assert reaped.requeued == [job.id] and reaped.failed == []
    requeued = store.get(job.id)
    assert requeued is not None and requeued.status == "queued" and requeued.worker is None
    running = store.get(fresh.id)
    assert running is not None and running.status == "running"

    assert store.heartbeat(fresh.id, "alive")
    assert not store.heartbeat(job.id, "dead")  # the dead worker lost the job

    store.claim(job.id, "second")
    clock.advance(61)
    reaped = store.reap(stale_after=60, max_attempts=2)
    assert reaped.failed == [job.id]  # its second attempt went silent too
    assert reaped.requeued == [fresh.id]  # first attempt only: one more try
    failed = store.get(job.id)
    assert failed is not None and failed.status == "failed" and failed.attempts == 2
    assert failed.error is not None and "stopped" in failed.error and "submit it" in failed.error


def test_events_are_numbered_and_read_after_a_sequence(
    store_and_clock: tuple[JobStore, Clock],
) -> None:
    store, _ = store_and_clock
    job = store.create(REQUEST)
    other = store.create(REQUEST)
    for phase in ("formulate", "scout", "drill"):
        store.add_event(job.id, phase, f"{phase} step")
    store.add_event(other.id, "scout", "elsewhere")

    assert [e.seq for e in store.events(job.id)] == [1, 2, 3]
    assert [e.phase for e in store.events(job.id, after=1)] == ["scout", "drill"]
    assert [e.message for e in store.events(other.id)] == ["elsewhere"]
    assert store.events("f" * 32) == []


def test_queued_lists_only_queued_jobs_oldest_first(
    store_and_clock: tuple[JobStore, Clock],
) -> None:
    store, clock = store_and_clock
    first = store.create(REQUEST)
    clock.advance(1)
    second = store.create(REQUEST)
    clock.advance(1)
    third = store.create(REQUEST)
    store.claim(second.id, "w")
    assert store.queued() == [first.id, third.id]
