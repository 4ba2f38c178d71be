"""Submitting, reading and looking after research jobs, whoever runs them.

``JobService`` joins the store with a ``Dispatcher``: the embedded thread pool by default, Celery
workers when ``CROWDSIFT_BROKER_URL`` is set. A reaper thread moves jobs whose worker went silent
back to the queue (or to failed after ``CROWDSIFT_JOB_MAX_ATTEMPTS``), so no job stays "running"
forever, whichever way its worker died.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger
from crowdsift.service.jobs.execute import ResearchFn, execute_job, worker_name
from crowdsift.service.jobs.models import Job, JobEvent, ResearchRequest
from crowdsift.service.jobs.store import JobStore, Reaped

log = get_logger(__name__)


class Dispatcher(Protocol):
    """Gets a stored, queued job run somewhere."""

    #: True when queued jobs live only in the database (an embedded pool), so a restarted
    #: process must resubmit them; False when a broker keeps them (Celery).
    resumes_queued: bool

    def submit(self, job_id: str) -> None: ...

    def close(self) -> None: ...


class EmbeddedDispatcher:
    """Runs jobs in this process on a bounded thread pool (``CROWDSIFT_JOB_WORKERS``)."""

    resumes_queued = True

    def __init__(
        self,
        store: JobStore,
        research: ResearchFn,
        *,
        workers: int = 2,
        heartbeat_every: float = 5.0,
    ) -> None:
        self._store = store
        self._research = research
        self._heartbeat_every = heartbeat_every
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crowdsift-job")

    def submit(self, job_id: str) -> None:
        self._pool.submit(self._run, job_id)

    def _run(self, job_id: str) -> None:
        # A name per run, as each Celery delivery has: if a live job is wrongly reaped and
        # claimed again in this process, the older run fails the `worker = :me` check.
        try:
            execute_job(
                job_id,
                self._store,
                self._research,
                worker=worker_name("embedded"),
                heartbeat_every=self._heartbeat_every,
            )
        except CrowdsiftError as exc:  # the store itself failed; the reaper will retry
            log.error("job_execution_failed", job=job_id, error=str(exc))

    def close(self) -> None:
        """Finish running jobs; queued ones stay queued in the store for the next start."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class JobService:
    """Create jobs, hand them to the dispatcher, read them back, reap stale ones."""

    def __init__(
        self,
        store: JobStore,
        dispatcher: Dispatcher,
        *,
        stale_after: float = 60.0,
        max_attempts: int = 2,
    ) -> None:
        self.store = store
        self.dispatcher = dispatcher
        self.stale_after = stale_after
        self.max_attempts = max_attempts
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None

    def start(self, *, reap_every: float | None = None) -> None:
        """Reap what a previous process left, resume queued jobs, then reap periodically."""
        self.reap()
        if self.dispatcher.resumes_queued:
            for job_id in self.store.queued():
                self.dispatcher.submit(job_id)
        every = reap_every if reap_every is not None else max(self.stale_after / 2, 0.5)
        self._reaper = threading.Thread(
            target=self._reap_loop, args=(every,), name="crowdsift-reaper", daemon=True
        )
        self._reaper.start()

    def submit(self, request: ResearchRequest) -> Job:
        """Store the job, then hand it over; if nobody can take it, it is failed, not lost."""
        job = self.store.create(request)
        self._dispatch(job.id)
        return job

    def _dispatch(self, job_id: str) -> None:
        try:
            self.dispatcher.submit(job_id)
        except CrowdsiftError as exc:
            self.store.abandon(job_id, f"could not queue the job: {exc}")
            raise

    def get(self, job_id: str) -> Job | None:
        return self.store.get(job_id)

    def events(self, job_id: str, *, after: int = 0) -> list[JobEvent]:
        return self.store.events(job_id, after=after)

    def reap(self) -> Reaped:
        reaped = self.store.reap(stale_after=self.stale_after, max_attempts=self.max_attempts)
        for job_id in reaped.requeued:
            log.warning("job_requeued", job=job_id, reason="worker stopped sending heartbeats")
            try:  # one job that cannot be sent must not strand the rest of the batch
                self.store.add_event(job_id, "job", "worker stopped responding; queued again")
                self._dispatch(job_id)
            except Exception as exc:
                log.error(
                    "job_requeue_failed", job=job_id, error_type=type(exc).__name__,
                    error=str(exc),
                )  # fmt: skip
        for job_id in reaped.failed:
            log.warning("job_abandoned", job=job_id)
            self.store.add_event(job_id, "job", "failed: worker stopped responding")
        return reaped

    def _reap_loop(self, every: float) -> None:
        """Sweep every ``every`` seconds until ``close``; no failing sweep ends the loop.

        Were this thread to die, stale jobs would never be requeued again (and nothing would
        say so), so whatever one sweep raises is logged and the next sweep tries again.
        """
        while not self._stop.wait(every):
            try:
                self.reap()
            except CrowdsiftError as exc:  # the store is unreachable: expected, retried
                log.warning("job_reap_failed", error_type=type(exc).__name__, error=str(exc))
            except Exception as exc:  # a bug: say so loudly, but keep reaping
                log.error("job_reap_failed", error_type=type(exc).__name__, error=str(exc))

    def close(self) -> None:
        self._stop.set()
        if self._reaper is not None:
            self._reaper.join()
        self.dispatcher.close()
        self.store.close()
