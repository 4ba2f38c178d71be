"""Build the job service from settings: Celery with ``CROWDSIFT_BROKER_URL``, else in-process."""

from __future__ import annotations

from crowdsift.core.config import Settings
from crowdsift.service.jobs.execute import ResearchFn, heartbeat_every
from crowdsift.service.jobs.service import Dispatcher, EmbeddedDispatcher, JobService
from crowdsift.service.jobs.store import JobStore


def build_job_service(settings: Settings, research: ResearchFn | None = None) -> JobService:
    """The store in the configured database and the configured dispatcher (not yet started)."""
    store = JobStore.from_url(settings.resolved_database_url)
    dispatcher: Dispatcher
    if settings.broker_url:
        from crowdsift.service.jobs.celery_app import CeleryDispatcher

        dispatcher = CeleryDispatcher(settings)
    else:
        if research is None:
            from crowdsift.service.facade import ResearchService

            research = ResearchService(settings)
        dispatcher = EmbeddedDispatcher(
            store, research, workers=settings.job_workers, heartbeat_every=heartbeat_every(settings)
        )
    return JobService(
        store,
        dispatcher,
        stale_after=settings.job_stale_after,
        max_attempts=settings.job_max_attempts,
    )
