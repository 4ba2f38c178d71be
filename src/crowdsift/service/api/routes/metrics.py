"""``GET /metrics``: rejection, gate, LLM and job counters in Prometheus' text format.

Guarded by ``CROWDSIFT_API_KEY`` like ``/api`` (source names and expert ids are data); scrape it
with ``authorization: {credentials: <key>}`` in the Prometheus job. Counters are read from the
database, so they include what Celery workers on other machines counted.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

from crowdsift.service.api.deps import State, get_metrics
from crowdsift.service.metrics import CONTENT_TYPE, MetricsStore, render_prometheus

router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
def metrics(state: State, store: Annotated[MetricsStore, Depends(get_metrics)]) -> Response:
    """Synchronous (FastAPI runs it on a thread): two small queries on the service database."""
    body = render_prometheus(store, state.jobs.store.counts_by_status())
    return Response(content=body, media_type=CONTENT_TYPE)
