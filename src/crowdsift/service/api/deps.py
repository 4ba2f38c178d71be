"""What routes depend on, as FastAPI dependencies, so tests override any one of them.

The long-lived pieces (job service, feed retriever) live on ``app.state.crowdsift`` and are
built by the app's lifespan; the functions here hand them to routes.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from crowdsift.core.config import Settings
from crowdsift.core.models import FetchResult, SearchPlan
from crowdsift.service.api.models import ErrorBody
from crowdsift.service.facade import FeedService
from crowdsift.service.jobs.service import JobService
from crowdsift.service.metrics import MetricsStore
from crowdsift.sources.experts.models import ExpertSummary

FetchFn = Callable[[SearchPlan], FetchResult]
ExpertsFn = Callable[[], list[ExpertSummary]]


@dataclass
class ServiceState:
    """Everything the routes share, built once per app."""

    settings: Settings
    jobs: JobService
    feed: FeedService
    fetch: FetchFn
    experts: ExpertsFn
    sse_poll_seconds: float = 0.25
    metrics: MetricsStore | None = None
    extra: dict[str, object] = field(default_factory=dict)


def get_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.crowdsift
    return state


State = Annotated[ServiceState, Depends(get_state)]


def get_settings(state: State) -> Settings:
    return state.settings


def get_jobs(state: State) -> JobService:
    return state.jobs


def get_feed(state: State) -> FeedService:
    return state.feed


def get_fetch(state: State) -> FetchFn:
    return state.fetch


def get_experts(state: State) -> ExpertsFn:
    return state.experts


def get_metrics(state: State) -> MetricsStore:
    """The counters, in the job store's database (opened on first use when not given)."""
    if state.metrics is None:
        state.metrics = MetricsStore(state.jobs.store.engine)
    return state.metrics


_bearer = HTTPBearer(auto_error=False, description="CROWDSIFT_API_KEY, when the server sets one")

#: Documented on every route ``require_api_key`` guards, so clients (and schema checkers)
#: know a 401 is part of the contract.
UNAUTHORIZED: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or wrong API key (CROWDSIFT_API_KEY)"}
}
MISSING_KEY = "missing or wrong API key: send 'Authorization: Bearer <CROWDSIFT_API_KEY>'"


def require_api_key(
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """With ``CROWDSIFT_API_KEY`` set, the bearer token must match (constant-time compare)."""
    if not key_matches(settings, credentials.credentials if credentials is not None else None):
        raise HTTPException(401, MISSING_KEY)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, as ``HTTPBearer`` reads it."""
    scheme, token = get_authorization_scheme_param(authorization)
    return token if scheme.lower() == "bearer" and token else None


def key_matches(settings: Settings, token: str | None) -> bool:
    """True without ``CROWDSIFT_API_KEY``; else whether ``token`` is it (constant-time)."""
    if settings.api_key is None:
        return True
    expected = settings.api_key.get_secret_value().encode()
    return hmac.compare_digest((token or "").encode(), expected)
