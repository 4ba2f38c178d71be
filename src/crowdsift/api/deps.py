"""What routes depend on, as FastAPI dependencies, so tests override any one of them.

The long-lived pieces (job service, feed retriever) live on ``app.state.crowdsift`` and are
built by the app's lifespan; the functions here hand them to routes.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from crowdsift.config import Settings
from crowdsift.experts.models import ExpertSummary
from crowdsift.jobs.service import JobService
from crowdsift.models import FetchResult, SearchPlan
from crowdsift.service import FeedService

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


_bearer = HTTPBearer(auto_error=False, description="CROWDSIFT_API_KEY, when the server sets one")


def require_api_key(
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """With ``CROWDSIFT_API_KEY`` set, the bearer token must match (constant-time compare)."""
    if settings.api_key is None:
        return
    expected = settings.api_key.get_secret_value().encode()
    given = credentials.credentials.encode() if credentials is not None else b""
    if not hmac.compare_digest(given, expected):
        raise HTTPException(
            401, "missing or wrong API key: send 'Authorization: Bearer <CROWDSIFT_API_KEY>'"
        )
