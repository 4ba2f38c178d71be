"""Builders for synthesis tests: Posts, Comments and FetchResults stating only what matters."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest

from crowdsift.core.models import Comment, FetchResult, Post
from crowdsift.pipeline.synthesis.config import SelectorConfig
from crowdsift.pipeline.synthesis.models import SummarizeRequest
from tests.support.answers import select_evidence

NOW = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
PLAN_ID = UUID("12345678-1234-5678-1234-567812345678")


def _make_post(
    post_id: str,
    *,
    title: str = "Plaud Note after three months of meetings",
    body: str = "I record meetings every day with it and the transcripts are good enough.",
    karma: int = 10,
    relevance: float = 0.5,
    comments: list[tuple[str, int]] | None = None,
    subreddit: str = "gadgets",
    url: str | None = None,
) -> Post:
    """A Post; ``comments`` are (body, karma) pairs, ids ``<post_id>c<n>``."""
    return Post(
        id=post_id,
        title=title,
        selftext=body,
        post_karma=karma,
        relevance_score=relevance,
        url=url or f"https://www.reddit.com/r/{subreddit}/comments/{post_id}/some_title/",
        comments=[
            Comment(
                comment_id=f"{post_id}c{n}",
                post_id=post_id,
                body=text,
                comment_karma=score,
                source="archive",
                fetched_at=NOW,
            )
            for n, (text, score) in enumerate(comments or [])
        ],
        fetched_at=NOW,
        source="archive",
        subreddit=subreddit,
    )


def _make_fetch(posts: list[Post], query: str = "Is the Plaud Note worth it?") -> FetchResult:
    return FetchResult(
        query=query,
        plan_id=PLAN_ID,
        search_terms=["plaud"],
        subreddits=["gadgets"],
        fetched_at=NOW,
        posts=posts,
    )


@pytest.fixture
def make_post() -> Callable[..., Post]:
    return _make_post


@pytest.fixture
def make_fetch() -> Callable[..., FetchResult]:
    return _make_fetch


RECORDER_POSTS: list[dict[str, Any]] = [
    {
        "post_id": "bat1",
        "title": "Plaud Note battery report after two months",
        "body": (
            "The battery lasts about thirty hours of recording on a single charge. "
            "I charge it once a week and it has never died during a meeting. "
            "The magnetic case attaches firmly to the back of my phone."
        ),
        "karma": 120,
        "relevance": 0.9,
        "comments": [
            ("Same here, the battery easily covers a full work week of meetings.", 40),
            ("The app requires a subscription for more than 300 minutes of transcription.", 25),
        ],
    },
    {
        "post_id": "app2",
        "title": "Switched back to my phone's recorder app",
        "body": (
            "The transcription quality of the Plaud app is good but the subscription price is "
            "hard to justify. My phone records meetings just as clearly for free. "
            "I returned the device after three weeks and got a full refund."
        ),
        "karma": 60,
        "relevance": 0.8,
        "comments": [
            ("Privacy is my concern, recordings are uploaded to their cloud servers.", 30),
        ],
    },
    {
        "post_id": "aud3",
        "title": "Audio quality in large conference rooms",
        "body": (
            "In a big room the microphones pick up voices across the table surprisingly well. "
            "Speaker labels get mixed up when people talk over each other."
        ),
        "karma": 35,
        "relevance": 0.7,
        "comments": [],
    },
]


@pytest.fixture
def recorder_fetch() -> FetchResult:
    """Three posts about a voice recorder: battery, app/subscription, audio quality."""
    posts = [
        _make_post(
            p["post_id"],
            title=p["title"],
            body=p["body"],
            karma=p["karma"],
            relevance=p["relevance"],
            comments=p["comments"],
        )
        for p in RECORDER_POSTS
    ]
    return _make_fetch(posts, query="How long does the Plaud Note battery last?")


@pytest.fixture
def recorder_request(recorder_fetch: FetchResult) -> SummarizeRequest:
    return select_evidence(recorder_fetch, SelectorConfig(), prompt_version="v1")
