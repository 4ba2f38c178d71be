"""Run one research job: claim it, keep its heartbeat, record progress, store the outcome.

The embedded pool and a Celery worker both call ``execute_job``; the store's conditional updates
make it safe to call twice for the same job (a redelivered message, a requeued job): only the
caller whose claim succeeds runs it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import get_logger, redact_text
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.models import Job, ResearchRequest
from crowdsift.service.jobs.store import JobStore
from crowdsift.service.metrics import MetricsStore, best_effort, record_failed_run, record_research

log = get_logger(__name__)

ResearchFn = Callable[[ResearchRequest, Progress], ResearchResult]


def heartbeat_every(settings: Settings) -> float:
    """Four heartbeats per stale period: one lost write never makes a live job look dead."""
    return settings.job_stale_after / 4


def worker_name(kind: str) -> str:
    """Who runs a job (host, process, a random tag), shown in the job record."""
    return f"{kind}@{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class _Recorder:
    """Progress events of one job, written one at a time (runs may report from threads)."""

    def __init__(self, store: JobStore, job_id: str) -> None:
        self._store = store
        self._job_id = job_id
        self._lock = threading.Lock()

    def __call__(self, phase: str, message: str) -> None:
        with self._lock:
            try:
                self._store.add_event(self._job_id, phase, redact_text(message))
            except CrowdsiftError as exc:  # progress is best-effort; the result is not
                log.warning("job_progress_lost", job=self._job_id, error=str(exc))


class _Heartbeat:
    """A daemon thread that says every ``every`` seconds that the job is still being run."""

    def __init__(self, store: JobStore, job_id: str, worker: str, every: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(store, job_id, worker, every), daemon=True
        )

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self, store: JobStore, job_id: str, worker: str, every: float) -> None:
        while not self._stop.wait(every):
            try:
                if not store.heartbeat(job_id, worker):
                    return  # reaped and handed to someone else: stop claiming it
            except CrowdsiftError as exc:
                log.warning("job_heartbeat_failed", job=job_id, error=str(exc))


def execute_job(
    job_id: str,
    store: JobStore,
    research: ResearchFn,
    *,
    worker: str,
    heartbeat_every: float = 5.0,
) -> Job | None:
    """Run the job if it is still queued; returns the job as it ended (None if unknown)."""
    job = store.claim(job_id, worker)
    if job is None:
        log.info("job_not_claimed", job=job_id, worker=worker)
        return store.get(job_id)
    record = _Recorder(store, job_id)
    record("job", f"started on {worker.split(':')[0]} (attempt {job.attempts})")
    with _Heartbeat(store, job_id, worker, heartbeat_every):
        try:
            result = research(job.request, record)
        except CrowdsiftError as exc:
            _fail(store, record, job_id, worker, redact_text(str(exc)))
        except Exception as exc:  # a bug must not leave the job running forever
            log.exception("job_crashed", job=job_id)
            _fail(store, record, job_id, worker, f"internal error ({type(exc).__name__}): {exc}")
        else:
            record("job", f"finished: {result.status}")
            if store.finish(job_id, worker, result):
                _count(store, lambda metrics: record_research(metrics, result))
            else:
                log.warning("job_result_discarded", job=job_id, worker=worker)
    return store.get(job_id)


def _fail(store: JobStore, record: Progress, job_id: str, worker: str, message: str) -> None:
    record("job", f"failed: {message}")
    if store.fail(job_id, worker, message):
        _count(store, record_failed_run)


def _count(store: JobStore, action: Callable[[MetricsStore], None]) -> None:
    """Count the run in the job store's database; only the worker whose outcome was stored
    counts it (a redelivered job is counted once), and a metrics failure is only a warning."""
    best_effort(lambda: action(MetricsStore(store.engine)), "research run")
