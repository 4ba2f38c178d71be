"""The reaper thread outlives a failing sweep: whatever one sweep raises is logged, the next
sweep still requeues stale jobs, and the loop ends only when the service is closed.

Time is the store's injected clock (a job goes stale when the test says so) and every sweep
is reported on a queue, so the tests wait for events, never for wall-clock periods.
"""

from __future__ import annotations

import queue
from collections.abc import MutableMapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from crowdsift.core.errors import StoreError
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.jobs.service import JobService
from crowdsift.service.jobs.store import JobStore, Reaped

REQUEST = ResearchRequest(question="Which standing desk lasts the longest?")
STALE_AFTER = 60.0
WAIT = 10.0  # only ever reached when the reaper has stopped, i.e. when the test fails


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class ScriptedStore(JobStore):
    """A real SQLite job store whose sweeps raise what the test scripts, in order.

    ``failures[n]`` is raised by the n-th sweep (``None``: that sweep works); sweeps past the
    script work. Each sweep puts ``"ok"`` or ``"raised"`` on ``sweeps`` when it ends.
    """

    failures: list[Exception | None]
    sweeps: queue.Queue[str]

    def script(self, failures: list[Exception | None]) -> None:
        self.failures = list(failures)
        self.sweeps = queue.Queue()

    def reap(self, *, stale_after: float, max_attempts: int) -> Reaped:
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            self.sweeps.put("raised")
            raise failure
        reaped = super().reap(stale_after=stale_after, max_attempts=max_attempts)
        self.sweeps.put("ok")
        return reaped


class RecordingDispatcher:
    """Takes job ids and keeps them (a broker-like dispatcher: nothing resumed on start)."""

    resumes_queued = False

    def __init__(self) -> None:
        self.submitted: queue.Queue[str] = queue.Queue()

    def submit(self, job_id: str) -> None:
        self.submitted.put(job_id)

    def close(self) -> None:
        pass


def next_from(items: queue.Queue[str], waiting_for: str) -> str:
    try:
        return items.get(timeout=WAIT)
    except queue.Empty:
        raise AssertionError(f"the reaper thread stopped: no {waiting_for} in {WAIT} s") from None


def make_store(tmp_path: Path, clock: Clock, failures: list[Exception | None]) -> ScriptedStore:
    store = ScriptedStore.from_url(f"sqlite:///{tmp_path / 'jobs.sqlite'}", clock=clock)
    assert isinstance(store, ScriptedStore)
    store.script(failures)
    return store


def reap_failures(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] == "job_reap_failed"]


@pytest.mark.parametrize(
    ("failure", "level"),
    [
        (RuntimeError("a bug in one sweep"), "error"),  # what used to kill the thread
        (StoreError("the database is unreachable; check CROWDSIFT_DATABASE_URL"), "warning"),
    ],
    ids=["bug", "store-error"],
)
def test_a_sweep_that_raises_does_not_stop_the_reaper(
    tmp_path: Path, failure: Exception, level: str
) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock, [None, failure])  # start's own sweep works, the next not
    orphan = store.create(REQUEST)
    store.claim(orphan.id, "embedded@gone:1:x")  # running, and nobody will heartbeat it
    dispatcher = RecordingDispatcher()
    service = JobService(store, dispatcher, stale_after=STALE_AFTER, max_attempts=2)

    with capture_logs() as logs:
        service.start(reap_every=0.01)
        try:
            assert next_from(store.sweeps, "first sweep") == "ok"  # start's: nothing stale yet
            assert next_from(store.sweeps, "failing sweep") == "raised"
            clock.advance(STALE_AFTER + 1)  # the orphan is stale from now on
            assert next_from(dispatcher.submitted, "requeued job") == orphan.id
            requeued = store.get(orphan.id)
            assert requeued is not None and requeued.status == "queued"
        finally:
            service.close()

    (logged,) = reap_failures(logs)
    assert logged["log_level"] == level
    assert logged["error_type"] == type(failure).__name__
    assert logged["error"] == str(failure)
    assert any(entry["event"] == "job_requeued" and entry["job"] == orphan.id for entry in logs)


def test_the_reaper_keeps_sweeping_through_repeated_failures_until_closed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock, [None, *(RuntimeError(f"bug {n}") for n in range(3))])
    service = JobService(store, RecordingDispatcher(), stale_after=STALE_AFTER)

    with capture_logs() as logs:
        service.start(reap_every=0.01)
        try:
            seen = [next_from(store.sweeps, f"sweep {n}") for n in range(5)]
        finally:
            service.close()  # returns only once the reaper thread has ended

    assert seen == ["ok", "raised", "raised", "raised", "ok"]
    failures = reap_failures(logs)
    assert [entry["error"] for entry in failures] == ["bug 0", "bug 1", "bug 2"]
    assert {entry["error_type"] for entry in failures} == {"RuntimeError"}


class FlakyDispatcher(RecordingDispatcher):
    """Refuses the first job it is given with an unexpected error, takes the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.refused: list[str] = []

    def submit(self, job_id: str) -> None:
        if not self.refused:
            self.refused.append(job_id)
            raise RuntimeError("the broker connection dropped")
        super().submit(job_id)


def test_one_job_that_cannot_be_sent_does_not_strand_the_rest_of_the_batch(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = make_store(tmp_path, clock, [])
    orphans = [store.create(REQUEST) for _ in range(3)]
    for job in orphans:
        store.claim(job.id, "embedded@gone:1:x")
    dispatcher = FlakyDispatcher()
    service = JobService(store, dispatcher, stale_after=STALE_AFTER, max_attempts=2)
    clock.advance(STALE_AFTER + 1)

    with capture_logs() as logs:
        reaped = service.reap()

    assert sorted(reaped.requeued) == sorted(job.id for job in orphans)
    sent = [dispatcher.submitted.get_nowait() for _ in range(dispatcher.submitted.qsize())]
    assert sorted([*sent, *dispatcher.refused]) == sorted(job.id for job in orphans)
    assert len(sent) == 2
    (failed,) = [entry for entry in logs if entry["event"] == "job_requeue_failed"]
    assert failed["job"] == dispatcher.refused[0] and failed["error_type"] == "RuntimeError"
    service.close()
