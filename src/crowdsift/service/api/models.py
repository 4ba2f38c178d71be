"""Shapes the API adds around crowdsift's own models: job receipts and errors."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, Field

from crowdsift.service.jobs.models import JobStatus


class JobLinks(BaseModel):
    self: str = Field(description="GET: the job, with its result once done")
    events: str = Field(description="GET: Server-Sent Events with per-phase progress")


class JobAccepted(BaseModel):
    """``POST /api/research``'s receipt: the job is queued; poll or stream its progress."""

    id: str
    status: JobStatus
    created_at: AwareDatetime
    links: JobLinks


class ErrorDetail(BaseModel):
    code: str = Field(description="machine-readable: validation_error, not_found, unauthorized …")
    message: str = Field(description="what happened and what to do about it")
    details: list[dict[str, Any]] | None = None


class ErrorBody(BaseModel):
    """Every error the API returns has this shape."""

    error: ErrorDetail


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for error statuses, each with the ``ErrorBody`` shape."""
    return {status: {"model": ErrorBody} for status in statuses}


#: What a route reading a JSON body can answer besides its own statuses: unreadable body (400),
#: over the size limit (413), not sent as JSON (415), invalid fields (422).
JSON_BODY_ERRORS = error_responses(400, 413, 415, 422)
