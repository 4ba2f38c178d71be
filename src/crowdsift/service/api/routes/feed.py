"""``GET /api/feed``: one feed from the index (``crowdsift feed``)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query

from crowdsift.core.models import Post
from crowdsift.service.api.deps import get_feed
from crowdsift.service.api.models import error_responses
from crowdsift.service.facade import FeedService

router = APIRouter(prefix="/api", tags=["feed"])
MAX_INTERESTS = 20


@router.get(
    "/feed",
    response_model=list[Post],
    responses=error_responses(400, 409, 422),
    summary="Posts closest to your interests, or a random sample",
)
def feed(
    service: Annotated[FeedService, Depends(get_feed)],
    interests: Annotated[
        str | None,
        Query(max_length=500, description='Comma-separated, e.g. "crypto,technology".'),
    ] = None,
    mode: Annotated[Literal["preference", "random"], Query()] = "preference",
    size: Annotated[int | None, Query(ge=1, le=20, description="Posts in the feed.")] = None,
) -> list[Post]:
    wanted = [part.strip() for part in (interests or "").split(",") if part.strip()]
    if len(wanted) > MAX_INTERESTS:
        raise HTTPException(400, f"at most {MAX_INTERESTS} interests, got {len(wanted)}")
    if mode == "preference" and not wanted:
        raise HTTPException(
            400,
            "preference mode needs interests, e.g. ?interests=crypto,technology "
            "(or use ?mode=random)",
        )
    return service.feed(wanted or None, mode, size)
