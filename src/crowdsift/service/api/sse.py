"""A job's progress as Server-Sent Events, read from the job store.

The store is the only channel between whoever runs the job (this process's pool or a Celery
worker elsewhere) and the client, so the stream reads it: cheap (one indexed query per read),
and identical in both modes. Between reads it waits for the store's ``changes`` signal, which
this process's own job threads raise on every write, or for ``poll`` seconds, whichever comes
first: a job run here is streamed as it happens, one run by a Celery worker within a poll.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from crowdsift.service.jobs.models import JobEvent
from crowdsift.service.jobs.service import JobService

KEEPALIVE_SECONDS = 15.0


def format_event(event: str, data: object, event_id: int | None = None) -> str:
    """One SSE message; JSON data has no raw newlines, so one ``data:`` line suffices."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _progress(event: JobEvent) -> str:
    return format_event("progress", event.model_dump(mode="json"), event.seq)


async def job_event_stream(
    jobs: JobService,
    job_id: str,
    *,
    after: int = 0,
    poll: float = 0.25,
    request: Request | None = None,
) -> AsyncIterator[str]:
    """Progress events after ``after``, then ``done`` once the job has finished."""
    last = after
    idle = 0.0
    status = None
    changes = jobs.store.changes
    loop = asyncio.get_running_loop()
    while True:
        seen = changes.version  # before reading: a write after this wakes the wait below
        job = await run_in_threadpool(jobs.get, job_id)
        for event in await run_in_threadpool(jobs.events, job_id, after=last):
            last = event.seq
            idle = 0.0
            yield _progress(event)
        if job is None:
            yield format_event("done", {"id": job_id, "status": "unknown"})
            return
        if job.status != status:
            status = job.status
            yield format_event("status", {"id": job_id, "status": status})
        if job.finished:
            # Events written between our read of the job and of its events are sent above:
            # the job row was read first, so anything before "finished" is already out.
            yield format_event("done", {"id": job_id, "status": job.status, "error": job.error})
            return
        if request is not None and await request.is_disconnected():
            return
        started = loop.time()
        await changes.wait(seen, poll)
        idle += loop.time() - started
        if idle >= KEEPALIVE_SECONDS:
            idle = 0.0
            yield ": keep-alive\n\n"
