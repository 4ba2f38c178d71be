"""``/api/research/{id}/report.md|.html`` (also ``/api/jobs/{id}/…``): a finished job's
answer, kept as a file.

The same reports as ``crowdsift ask --format md|html`` (``crowdsift.pipeline.report``), under
the job they belong to. A job that does not exist is a 404; one that has not finished, or
failed without an answer, a 409 that says what to do; both in the API's error shape. The HTML
is sent with a Content-Security-Policy as strict as the one it carries inside.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import Response

from crowdsift.pipeline.report import MEDIA_TYPES, ReportFormat, render_report
from crowdsift.pipeline.report.html import CSP
from crowdsift.pipeline.result import ResearchResult
from crowdsift.service.api.deps import get_jobs
from crowdsift.service.api.models import error_responses
from crowdsift.service.api.routes.research import JobId, _job_or_404
from crowdsift.service.jobs.service import JobService

router = APIRouter(prefix="/api/research", tags=["research"])
Jobs = Annotated[JobService, Depends(get_jobs)]


def _finished_result(jobs: JobService, job_id: str) -> ResearchResult:
    job = _job_or_404(jobs, job_id)
    if job.status == "failed" or (job.status == "done" and job.result is None):
        raise HTTPException(
            409, f"job {job_id!r} failed, so it has no report; GET /api/research/{job_id} says why"
        )
    if job.result is None:
        raise HTTPException(
            409,
            f"job {job_id!r} is {job.status}: its report exists once it is done "
            f"(poll GET /api/research/{job_id} or stream its events)",
        )
    return job.result


def _report(jobs: JobService, job_id: str, fmt: ReportFormat) -> Response:
    result = _finished_result(jobs, job_id)
    headers = {
        "Content-Disposition": f'inline; filename="crowdsift-{job_id}.{fmt}"',
        "Cache-Control": "no-store",
    }
    if fmt == "html":
        headers["Content-Security-Policy"] = f"{CSP}; base-uri 'none'; frame-ancestors 'none'"
        headers["Referrer-Policy"] = "no-referrer"
    return Response(render_report(result, fmt), media_type=MEDIA_TYPES[fmt], headers=headers)


def _documented(media_type: str, what: str) -> dict[int | str, dict[str, object]]:
    return {
        200: {"content": {media_type.split(";")[0]: {}}, "description": what},
        **error_responses(404, 409, 422),
    }


@router.get(
    "/{job_id}/report.md",
    response_class=Response,
    responses=_documented(MEDIA_TYPES["md"], "the answer as Markdown"),
    summary="A finished job's answer as a Markdown report",
)
def report_markdown(job_id: JobId, jobs: Jobs) -> Response:
    """The whole answer, ``[n]`` citations linked to a numbered source list, strangers' text
    escaped (``crowdsift ask --format md`` prints the same)."""
    return _report(jobs, job_id, "md")


@router.get(
    "/{job_id}/report.html",
    response_class=Response,
    responses=_documented(MEDIA_TYPES["html"], "the answer as one self-contained HTML page"),
    summary="A finished job's answer as a self-contained HTML report",
)
def report_html(job_id: JobId, jobs: Jobs) -> Response:
    """One HTML file: inline CSS, no script, no outside request; a stance chart for "X vs Y"
    questions (``crowdsift ask --format html`` writes the same)."""
    return _report(jobs, job_id, "html")


jobs_router = APIRouter(prefix="/api/jobs", tags=["research"])
"""The same reports as ``/api/jobs/{id}/report.md|.html``: the names the jobs are known by in
the issue that asked for them, kept as aliases."""
jobs_router.add_api_route(
    "/{job_id}/report.md", report_markdown, methods=["GET"], response_class=Response,
    responses=_documented(MEDIA_TYPES["md"], "the answer as Markdown"),
    summary="A finished job's answer as a Markdown report (alias)",
)  # fmt: skip
jobs_router.add_api_route(
    "/{job_id}/report.html", report_html, methods=["GET"], response_class=Response,
    responses=_documented(MEDIA_TYPES["html"], "the answer as one self-contained HTML page"),
    summary="A finished job's answer as a self-contained HTML report (alias)",
)  # fmt: skip
