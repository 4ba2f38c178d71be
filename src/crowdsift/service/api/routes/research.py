"""``/api/research``: submit a research job, read it, stream its progress."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from crowdsift.core.errors import ArchiveError, UnknownExpertError
from crowdsift.service.api.deps import ExpertsFn, ServiceState, get_experts, get_jobs, get_state
from crowdsift.service.api.models import JSON_BODY_ERRORS, JobAccepted, JobLinks, error_responses
from crowdsift.service.api.sse import job_event_stream
from crowdsift.service.jobs.models import Job, ResearchRequest
from crowdsift.service.jobs.service import JobService

router = APIRouter(prefix="/api/research", tags=["research"])
Jobs = Annotated[JobService, Depends(get_jobs)]
Experts = Annotated[ExpertsFn, Depends(get_experts)]
JobId = Annotated[str, Path(max_length=64, description="the id POST /api/research returned")]


@router.post(
    "",
    status_code=202,
    response_model=JobAccepted,
    responses=JSON_BODY_ERRORS,
    summary="Start a research job",
)
def submit(
    request: ResearchRequest, response: Response, jobs: Jobs, listing: Experts
) -> JobAccepted:
    """Queue the question; the answer arrives at ``links.self`` (poll) or ``links.events``
    (Server-Sent Events). Unknown experts are refused (422) before any job exists."""
    check_experts(request.experts, listing)
    job = jobs.submit(request)
    links = JobLinks(self=f"/api/research/{job.id}", events=f"/api/research/{job.id}/events")
    response.headers["Location"] = links.self
    return JobAccepted(id=job.id, status=job.status, created_at=job.created_at, links=links)


def check_experts(requested: list[str], listing: ExpertsFn) -> None:
    """Raise ``UnknownExpertError`` unless every requested id is imported or bundled (a job
    imports a bundled demo expert on first use, as ``crowdsift ask --experts`` does)."""
    if not requested:
        return
    known = {expert.expert_id for expert in listing()} | _demo_ids()
    missing = [expert_id for expert_id in requested if expert_id not in known]
    if missing:
        raise UnknownExpertError(missing, sorted(known))


def _demo_ids() -> set[str]:
    from crowdsift.sources.experts.demo import demo_manifest
    from crowdsift.sources.experts.importer import slugify

    try:
        return {slugify(entry.channel) for entry in demo_manifest()}
    except ArchiveError:  # installed without the demo archives: only imported experts count
        return set()


#: What a job id can look like (ours are 32 hex digits); anything else names no job, and is
#: never sent to the database (PostgreSQL refuses NUL in text, and that would be a 503).
_JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _job_or_404(jobs: JobService, job_id: str) -> Job:
    job = jobs.get(job_id) if _JOB_ID.fullmatch(job_id) else None
    if job is None:
        raise HTTPException(404, f"no job {job_id!r}; start one with POST /api/research")
    return job


@router.get(
    "/{job_id}",
    response_model=Job,
    responses=error_responses(404, 422),
    summary="A job's status, and its ResearchResult once done",
)
def read(job_id: JobId, jobs: Jobs) -> Job:
    return _job_or_404(jobs, job_id)


@router.get(
    "/{job_id}/events",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "progress events"},
        **error_responses(404, 422),
    },
    response_class=StreamingResponse,
    summary="Per-phase progress as Server-Sent Events",
)
async def events(
    job_id: JobId,
    request: Request,
    state: Annotated[ServiceState, Depends(get_state)],
    last_event_id: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """Events ``progress`` (one per phase step, ``id`` = its sequence number), then one
    ``done`` with the final status. Reconnect with ``Last-Event-ID`` to resume."""
    await run_in_threadpool(_job_or_404, state.jobs, job_id)
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else 0
    stream = job_event_stream(
        state.jobs, job_id, after=after, poll=state.sse_poll_seconds, request=request
    )
    return StreamingResponse(
        stream,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
