"""The in-process job service: jobs run on the pool, failures are recorded, and a restart
resumes queued jobs and requeues the ones a dead process left running."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crowdsift.core.errors import SourceError
from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.models import Job, ResearchRequest
from crowdsift.service.jobs.service import EmbeddedDispatcher, JobService
from crowdsift.service.jobs.store import JobStore

REQUEST = ResearchRequest(question="Which standing desk lasts the longest?")


def answer(request: ResearchRequest, progress: Progress) -> ResearchResult:
    """A research function that reports two phases and echoes the question."""
    progress("scout", "searching")
    progress("synthesize", "writing")
    return ResearchResult(
        question=request.question, status="ok", engine="local", timings_ms={}, usage=Usage()
    )


def wait_for(service: JobService, job_id: str, timeout: float = 20.0) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = service.get(job_id)
        if job is not None and job.finished:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish within {timeout} s")


def make_service(
    url: str, research: Callable[[ResearchRequest, Progress], ResearchResult], **options: float
) -> JobService:
    store = JobStore.from_url(url)
    dispatcher = EmbeddedDispatcher(store, research, workers=2, heartbeat_every=0.05)
    return JobService(store, dispatcher, **options)  # type: ignore[arg-type]


def test_a_submitted_job_runs_and_records_its_progress(tmp_path: Path) -> None:
    service = make_service(f"sqlite:///{tmp_path / 'j.sqlite'}", answer)
    service.start()
    try:
        job = wait_for(service, service.submit(REQUEST).id)
        assert job.status == "done" and job.result is not None
        assert job.result.question == REQUEST.question
        phases = [e.phase for e in service.events(job.id)]
        assert phases == ["job", "scout", "synthesize", "job"]
        assert service.events(job.id)[-1].message == "finished: ok"
    finally:
        service.close()


def test_every_run_claims_its_job_under_its_own_worker_name(tmp_path: Path) -> None:
    """So a run whose job was reaped and re-claimed in the same process cannot finish it."""
    service = make_service(f"sqlite:///{tmp_path / 'j.sqlite'}", answer)
    service.start()
    try:
        jobs = [wait_for(service, service.submit(REQUEST).id) for _ in range(3)]
    finally:
        service.close()
    workers = [job.worker for job in jobs]
    assert all(w and w.startswith("embedded@") for w in workers)
    assert len(set(workers)) == 3


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (SourceError("reddit said 503; try again later"), "reddit said 503; try again later"),
        (KeyError("boom"), "internal error (KeyError)"),
    ],
)
def test_a_failing_run_ends_failed_with_its_message(
    tmp_path: Path, error: Exception, expected: str
) -> None:
    def broken(_request: ResearchRequest, _progress: Progress) -> ResearchResult:
        raise error

    service = make_service(f"sqlite:///{tmp_path / 'j.sqlite'}", broken)
    service.start()
    try:
        job = wait_for(service, service.submit(REQUEST).id)
        assert job.status == "failed" and job.result is None
        assert job.error is not None and expected in job.error
        assert service.events(job.id)[-1].message.startswith("failed: ")
    finally:
        service.close()


def test_a_restart_resumes_queued_jobs_and_keeps_finished_results(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    first = make_service(url, answer)
    first.start()
    done = wait_for(first, first.submit(REQUEST).id)
    queued = first.store.create(REQUEST)  # stored, never dispatched: the process "died"
    first.close()

    second = make_service(url, answer)
    second.start()
    try:
        assert wait_for(second, queued.id).status == "done"
        kept = second.get(done.id)
        assert kept is not None and kept.result == done.result
    finally:
        second.close()


def test_a_job_left_running_by_a_dead_process_is_run_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    store = JobStore.from_url(url)
    orphan = store.create(REQUEST)
    store.claim(orphan.id, "embedded@gone:1:x")  # running, and nobody will heartbeat it
    store.close()

    service = make_service(url, answer, stale_after=0.3, max_attempts=2)
    service.start(reap_every=0.1)
    try:
        job = wait_for(service, orphan.id)
        assert job.status == "done" and job.attempts == 2
        messages = [e.message for e in service.events(orphan.id)]
        assert "worker stopped responding; queued again" in messages
    finally:
        service.close()


def test_a_live_slow_job_is_not_reaped(tmp_path: Path) -> None:
    release = threading.Event()

    def slow(request: ResearchRequest, progress: Progress) -> ResearchResult:
        release.wait(5)
        return answer(request, progress)

    service = make_service(
        f"sqlite:///{tmp_path / 'j.sqlite'}", slow, stale_after=0.8, max_attempts=1
    )
    service.start(reap_every=0.05)
    try:
        job = service.submit(REQUEST)
        time.sleep(2.0)  # 2.5 stale periods; a heartbeat every 0.05 s keeps it alive
        running = service.get(job.id)
        assert running is not None and running.status == "running"
        release.set()
        finished = wait_for(service, job.id)
        assert finished.status == "done" and finished.attempts == 1
    finally:
        release.set()
        service.close()
