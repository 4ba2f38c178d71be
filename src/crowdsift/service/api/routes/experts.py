"""``GET /api/experts``: the experts a research job can ask (``crowdsift experts list``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from crowdsift.service.api.deps import ExpertsFn, get_experts
from crowdsift.sources.experts.models import ExpertSummary

router = APIRouter(prefix="/api", tags=["experts"])


@router.get("/experts", response_model=list[ExpertSummary], summary="Experts you can ask")
def experts(listing: Annotated[ExpertsFn, Depends(get_experts)]) -> list[ExpertSummary]:
    return listing()
