"""``GET /healthz``: liveness and the job store's reachability; never needs the API key."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from crowdsift import __version__
from crowdsift.core.errors import StoreError
from crowdsift.service.api.deps import ServiceState, get_state

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    version: str
    jobs: Literal["embedded", "celery"]
    database: Literal["ok", "unreachable"]


@router.get("/healthz", response_model=Health, responses={503: {"model": Health}})
def healthz(state: Annotated[ServiceState, Depends(get_state)]) -> JSONResponse:
    try:
        state.jobs.get("0" * 32)
        database: Literal["ok", "unreachable"] = "ok"
    except StoreError:
        database = "unreachable"
    health = Health(
        status="ok" if database == "ok" else "degraded",
        version=__version__,
        jobs="celery" if state.settings.broker_url else "embedded",
        database=database,
    )
    return JSONResponse(health.model_dump(), status_code=200 if database == "ok" else 503)
