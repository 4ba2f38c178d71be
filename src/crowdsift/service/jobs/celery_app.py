"""Celery scale-out: research jobs sent over Redis to ``crowdsift worker`` processes.

The broker only carries job *ids*. Requests, progress and results live in the job store
(``CROWDSIFT_DATABASE_URL``, PostgreSQL when API and workers run on different machines), so
Celery needs no result backend, and every guarantee comes from the store's conditional updates:

* a message delivered twice (a redelivery after ``visibility_timeout``, a reaped job sent
  again) is harmless, because only one ``claim`` of a queued job succeeds;
* a worker that dies mid-job stops heartbeating; whoever reaps next (the API's reaper thread,
  or any worker starting) puts the job back in the queue and sends it again, or marks it
  failed after ``CROWDSIFT_JOB_MAX_ATTEMPTS`` runs. No job stays "running" forever.

Publishing is bounded (connect/read timeouts, a couple of retries), so an API whose Redis is
down answers with an error naming the (redacted) broker URL instead of hanging.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from celery import Celery, signals
from kombu.exceptions import KombuError

from crowdsift.core.config import Settings
from crowdsift.core.errors import BrokerError, ConfigError, CrowdsiftError, StoreError
from crowdsift.core.log import get_logger, redact_text, register_secrets
from crowdsift.service.jobs.execute import ResearchFn, execute_job, heartbeat_every, worker_name
from crowdsift.service.jobs.models import Job
from crowdsift.service.jobs.service import JobService
from crowdsift.service.jobs.store import JobStore, Reaped

if TYPE_CHECKING:
    from collections.abc import Callable

log = get_logger(__name__)

TASK_NAME = "crowdsift.research_job"
REDACTED = "***"
_SECRET_PARAMS = frozenset({"password", "passwd", "token", "secret"})


@dataclass(frozen=True)
class BrokerLimits:
    """How long broker I/O may take, so a dead Redis is an error and never a hang.

    ``socket_timeout`` bounds every blocking read and write (a Redis that accepts connections
    but never answers); ``publish_retries`` extra attempts ride out a Redis restart.
    ``visibility_timeout`` is how long a delivered, unacknowledged message waits before Redis
    hands it out again: it recovers a message whose worker died *before* claiming the job
    (one that claimed it is recovered sooner, by heartbeats and the reaper). A redelivery of a
    job that is still running is dropped by the failed claim, so the value only trades how
    soon such lost messages return against how many harmless duplicates long jobs cause.
    """

    connect_timeout: float = 5.0
    socket_timeout: float = 10.0
    publish_retries: int = 2
    retry_interval: float = 0.5
    visibility_timeout: float = 900.0


DEFAULT_LIMITS = BrokerLimits()


def redact_url(url: str) -> str:
    """The URL with its password (and any password/token query value) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable broker URL>"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{hostport}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, REDACTED if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="*"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The secret parts of a broker URL, to register with the log redactor."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_PARAMS and v]
    return found


def celery_config(settings: Settings, limits: BrokerLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Celery settings for crowdsift's jobs (pure, so the choices can be read and tested).

    Late acks and ``reject_on_worker_lost`` leave a message in Redis until its job ran;
    a prefetch of one keeps a busy worker from hoarding jobs another could start.
    """
    return {
        "task_default_queue": settings.worker_queue,
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_ignore_result": True,  # results live in the job store
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # A job keeps running (and writes its result to the store) when Redis blips; its late
        # ack may then be lost, and the redelivered message is dropped by the failed claim.
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "worker_redirect_stdouts": False,  # our structured logs go to stderr untouched
        "broker_connection_retry_on_startup": True,
        "broker_connection_timeout": limits.connect_timeout,
        "broker_transport_options": {
            "visibility_timeout": limits.visibility_timeout,
            "socket_connect_timeout": limits.connect_timeout,
            "socket_timeout": limits.socket_timeout,
        },
    }


class WorkerRuntime:
    """What one worker process keeps between jobs: one job store, one research service.

    The store holds a connection pool and the research service the loaded local model
    (seconds to load); both are built on first use and shared by the pool's threads.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        research: ResearchFn | None = None,
        store: JobStore | None = None,
    ) -> None:
        self._settings = settings
        self._research = research
        self._store = store
        self._lock = threading.Lock()

    def store(self) -> JobStore:
        with self._lock:
            if self._store is None:
                self._store = JobStore.from_url(self._settings.resolved_database_url)
            return self._store

    def prepare(self, *, retry_after: float = 0.5) -> None:
        """Open the job store and create every table a research run writes, once, up front.

        Each run opens its stores, and opening one creates its tables when missing: two jobs
        starting together on a fresh PostgreSQL database would race to CREATE TABLE and one
        would fail. Created here, before the pool takes jobs, they already exist. Another
        process creating them at this very moment can still win that race, hence one retry.
        """
        for attempt in (1, 2):
            try:
                self.store()
                _create_result_tables(self._settings.resolved_database_url)
                return
            except StoreError as exc:
                if attempt == 2:
                    raise
                log.warning("worker_prepare_retry", error=str(exc))
                time.sleep(retry_after)

    def research(self) -> ResearchFn:
        with self._lock:
            if self._research is None:
                from crowdsift.service.facade import ResearchService

                self._research = ResearchService(self._settings)
            return self._research

    def run(self, job_id: str) -> Job | None:
        """Run one job the way every runner does (``execute_job``); returns how it ended."""
        return execute_job(
            job_id,
            self.store(),
            self.research(),
            worker=worker_name("celery"),
            heartbeat_every=heartbeat_every(self._settings),
        )

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def _create_result_tables(url: str) -> None:
    from crowdsift.core.store import CommentStore
    from crowdsift.sources.experts.db import SqlExpertStore

    CommentStore.from_url(url).close()
    SqlExpertStore(url).close()


def make_celery(
    settings: Settings,
    *,
    runtime: WorkerRuntime | None = None,
    limits: BrokerLimits = DEFAULT_LIMITS,
) -> Celery:
    """The Celery app for ``settings.broker_url`` with the research task registered.

    ``runtime`` is what the task runs jobs with (a worker passes its own so it can close it);
    a publishing-only app gets a lazy one that is never opened.
    """
    if not settings.broker_url:
        raise _missing_broker()
    register_secrets(url_secrets(settings.broker_url))
    app = Celery("crowdsift", broker=settings.broker_url, set_as_current=False)
    app.conf.update(celery_config(settings, limits))
    jobs = runtime or WorkerRuntime(settings)

    def research_job(job_id: str) -> None:
        job = jobs.run(job_id)
        log.info("job_handled", job=job_id, status=job.status if job else "unknown")

    # The store being unreachable is the one error execute_job lets out; the job is still
    # queued (or will be reaped), so trying again later is right.
    app.task(
        name=TASK_NAME,
        shared=False,
        ignore_result=True,
        autoretry_for=(StoreError,),
        retry_backoff=2,
        retry_backoff_max=60,
        max_retries=5,
    )(research_job)
    return app


def _missing_broker() -> ConfigError:
    return ConfigError(
        "CROWDSIFT_BROKER_URL is not set: Celery workers take research jobs from a Redis "
        "broker. Set it (e.g. CROWDSIFT_BROKER_URL=redis://127.0.0.1:6379/0, the same value as "
        "the API's), or leave it unset everywhere to run jobs inside `crowdsift serve`."
    )


class CeleryDispatcher:
    """Sends job ids to the Celery queue; the broker keeps queued jobs, so none are resumed."""

    resumes_queued = False

    def __init__(
        self,
        settings: Settings,
        *,
        app: Celery | None = None,
        limits: BrokerLimits = DEFAULT_LIMITS,
    ) -> None:
        if not settings.broker_url:
            raise _missing_broker()
        self._owns_app = app is None
        self._app = app if app is not None else make_celery(settings, limits=limits)
        self._queue = settings.worker_queue
        self._where = redact_url(settings.broker_url)
        self._retry_policy = {
            "max_retries": limits.publish_retries,
            "interval_start": 0,
            "interval_step": limits.retry_interval,
            "interval_max": limits.retry_interval,
        }

    def submit(self, job_id: str) -> None:
        """Queue the job; raises ``BrokerError`` (bounded wait) when Redis cannot take it."""
        try:
            self._app.send_task(
                TASK_NAME,
                args=[job_id],
                queue=self._queue,
                retry=True,
                retry_policy=self._retry_policy,
            )
        except (KombuError, OSError) as exc:
            reason = redact_text(str(exc)) or type(exc).__name__
            raise BrokerError(
                f"could not queue job {job_id} on the broker {self._where} (queue "
                f"{self._queue!r}): {reason}. Check that Redis is running and reachable at "
                "CROWDSIFT_BROKER_URL, or unset it to run jobs in-process."
            ) from exc

    def close(self) -> None:
        """Release broker connections (only those of an app this dispatcher created)."""
        if self._owns_app:
            self._app.close()


def reap_on_start(settings: Settings, app: Celery, store: JobStore) -> Reaped:
    """Requeue (and send again) or fail what dead workers left running, once, at start.

    A restarted worker thereby picks up its predecessor's jobs even when no API is running
    its own reaper. Stale means no heartbeat for ``CROWDSIFT_JOB_STALE_AFTER`` seconds.
    """
    service = JobService(
        store,
        CeleryDispatcher(settings, app=app),
        stale_after=settings.job_stale_after,
        max_attempts=settings.job_max_attempts,
    )
    reaped = service.reap()  # not closed: the store is the worker's, the app is borrowed
    log.info("worker_reaped", requeued=reaped.requeued, failed=reaped.failed)
    return reaped


def _on_ready(settings: Settings, app: Celery, store: JobStore) -> Callable[..., None]:
    def handler(sender: Any = None, **_: Any) -> None:
        if getattr(sender, "app", None) is not app:
            return  # another app's worker in this process (embedding, tests)
        try:
            reap_on_start(settings, app, store)
        except CrowdsiftError as exc:  # the API's reaper, or the next start, will do it
            log.warning("worker_reap_failed", error=str(exc))

    return handler


def run_worker(settings: Settings, *, concurrency: int | None = None) -> None:
    """Consume ``settings.worker_queue`` until SIGTERM (``crowdsift worker``).

    Pool: **threads**. A job spends its time in HTTP waits and in the local embedding model;
    with threads one process loads that model once and every job shares it (as the embedded
    pool does), where a prefork child per job slot would each load it (seconds, and hundreds
    of MB). The cost is crash isolation: a crash kills the whole process's jobs. That is
    recovered by design (heartbeats stop, the jobs are reaped and run again up to
    ``CROWDSIFT_JOB_MAX_ATTEMPTS``), and for isolation run several workers with smaller
    ``--concurrency``. Concurrency defaults to ``CROWDSIFT_JOB_WORKERS``.

    SIGTERM is Celery's warm shutdown: stop taking jobs, finish the running ones, exit 0.
    SIGQUIT (cold) abandons running jobs; the reaper requeues them.
    Gossip, mingle and event heartbeats are off: coordination goes through the job store.
    """
    if not settings.broker_url:
        raise _missing_broker()
    runtime = WorkerRuntime(settings)
    runtime.prepare()  # a wrong CROWDSIFT_DATABASE_URL fails here, before any message
    store = runtime.store()
    app = make_celery(settings, runtime=runtime)
    app.set_current()
    on_ready = _on_ready(settings, app, store)
    signals.worker_ready.connect(on_ready, weak=False)
    workers = concurrency or settings.job_workers
    log.info(
        "worker_starting",
        broker=redact_url(settings.broker_url),
        queue=settings.worker_queue,
        pool="threads",
        concurrency=workers,
    )
    try:
        worker = app.Worker(
            hostname=f"crowdsift-{os.getpid()}@{socket.gethostname()}",
            queues=[settings.worker_queue],
            pool="threads",
            concurrency=workers,
            loglevel=settings.log_level.upper(),
            without_gossip=True,
            without_mingle=True,
            without_heartbeat=True,
        )
        worker.start()
    finally:
        signals.worker_ready.disconnect(on_ready)
        runtime.close()
        app.close()
    if worker.exitcode:
        raise BrokerError(
            f"the worker on {redact_url(settings.broker_url)} stopped with exit code "
            f"{worker.exitcode}; the log above says why (is Redis reachable?)"
        )
