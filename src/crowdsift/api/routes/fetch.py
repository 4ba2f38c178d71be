"""``POST /api/fetch``: run a SearchPlan through the configured source (``crowdsift fetch``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from crowdsift.api.deps import FetchFn, get_fetch
from crowdsift.api.models import ErrorBody
from crowdsift.models import FetchResult, SearchPlan

router = APIRouter(prefix="/api", tags=["fetch"])


@router.post(
    "/fetch",
    response_model=FetchResult,
    responses={422: {"model": ErrorBody}, 502: {"model": ErrorBody}},
    summary="Fetch, filter and score posts for a SearchPlan",
)
def fetch(plan: SearchPlan, run: Annotated[FetchFn, Depends(get_fetch)]) -> FetchResult:
    """Synchronous: returns when the plan's searches are done (seconds on a live source)."""
    return run(plan)
