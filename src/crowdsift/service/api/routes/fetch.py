"""``POST /api/fetch``: run a SearchPlan through the configured source (``crowdsift fetch``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends

from crowdsift.core.config import Settings
from crowdsift.core.models import FetchResult, SearchPlan
from crowdsift.service.api.deps import FetchFn, get_fetch
from crowdsift.service.api.models import JSON_BODY_ERRORS, error_responses
from crowdsift.service.metrics import MetricsStore, best_effort, record_fetch

router = APIRouter(prefix="/api", tags=["fetch"])

_EXAMPLE_PLAN = {"search_terms": ["plaud note", "voice recorder"], "subreddits": ["gadgets"]}


@router.post(
    "/fetch",
    response_model=FetchResult,
    responses={**JSON_BODY_ERRORS, **error_responses(502)},
    summary="Fetch, filter and score posts for a SearchPlan",
)
def fetch(
    plan: Annotated[SearchPlan, Body(examples=[_EXAMPLE_PLAN])],
    run: Annotated[FetchFn, Depends(get_fetch)],
) -> FetchResult:
    """Synchronous: returns when the plan's searches are done (seconds on a live source)."""
    return run(plan)


def recording_fetch(settings: Settings, metrics: MetricsStore) -> FetchFn:
    """The service's fetch, counted into ``/metrics`` (best-effort: a failed count is a logged
    warning, never a failed request)."""
    from crowdsift.service import facade as service

    def run(plan: SearchPlan) -> FetchResult:
        result, report = service.fetch(settings, plan)
        best_effort(lambda: record_fetch(metrics, result, report), "fetch")
        return result

    return run
