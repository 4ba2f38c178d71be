"""Shapes the API adds around crowdsift's own models: job receipts and errors."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, Field

from crowdsift.jobs.models import JobStatus


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
