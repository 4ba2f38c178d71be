"""Builders of Reddit-shaped raw dicts and of ``Post`` models for tests, benchmarks and users.

The raw builders produce what Reddit's API returns inside a t3/t1 ``data`` object, with
realistic defaults that pass every veto, so a test states only the field it is about.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from crowdsift.core.models import Comment, Post
from crowdsift.core.source import RawThing
from crowdsift.sources.reddit.permalink import slugify_title


def raw_post(post_id: str = "abc123", **overrides: Any) -> RawThing:
    """A self post in r/gadgets that passes every veto."""
    subreddit = str(overrides.get("subreddit", "gadgets"))
    title = str(overrides.get("title", "Plaud Note after three months of meetings"))
    post: RawThing = {
        "id": post_id,
        "name": f"t3_{post_id}",
        "subreddit": subreddit,
        "subreddit_name_prefixed": f"r/{subreddit}",
        "title": title,
        "selftext": (
            "I record two or three meetings a day with the Plaud Note. Battery lasts about "
            "30 hours of recording and the transcripts are good enough to search later."
        ),
        "author": "field_tester",
        "score": 42,
        "ups": 42,
        "upvote_ratio": 0.93,
        "num_comments": 3,
        "created_utc": 1_714_000_000,
        "permalink": f"/r/{subreddit}/comments/{post_id}/{slugify_title(title)}/",
        "url": f"https://www.reddit.com/r/{subreddit}/comments/{post_id}/{slugify_title(title)}/",
        "domain": f"self.{subreddit}",
        "is_self": True,
        "over_18": False,
        "stickied": False,
        "promoted": None,
        "is_created_from_ads_ui": False,
        "removed_by_category": None,
        "distinguished": None,
        "link_flair_text": "Review",
    }
    post.update(overrides)
    return post


def raw_comment(
    comment_id: str = "c1", post_id: str = "abc123", parent_id: str | None = None, **overrides: Any
) -> RawThing:
    """A top-level comment (parent is the post) that passes every veto."""
    comment: RawThing = {
        "id": comment_id,
        "name": f"t1_{comment_id}",
        "link_id": f"t3_{post_id}",
        "parent_id": parent_id or f"t3_{post_id}",
        "subreddit": "gadgets",
        "body": "Mine lasts about 28 hours; turn off the LED to squeeze out a few more.",
        "author": "commenter",
        "score": 12,
        "created_utc": 1_714_003_600,
        "distinguished": None,
        "stickied": False,
    }
    comment.update(overrides)
    return comment


BASE_TIME = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)


def make_post(
    post_id: str,
    title: str,
    body: str = "",
    *,
    subreddit: str = "gadgets",
    karma: int = 10,
    comments: int = 0,
) -> Post:
    """A valid ``Post`` (canonical permalink, fixed times) with ``comments`` nested comments."""
    fetched = BASE_TIME + timedelta(minutes=1)
    return Post(
        id=post_id,
        title=title,
        selftext=body,
        post_karma=karma,
        relevance_score=0.5,
        matched_keywords=["kw"],
        url=f"https://www.reddit.com/r/{subreddit}/comments/{post_id}/some_title/",
        comments=[
            Comment(
                comment_id=f"{post_id}c{n}",
                post_id=post_id,
                body=f"comment {n} on {title}",
                comment_karma=n,
                source="archive",
                fetched_at=fetched,
            )
            for n in range(comments)
        ],
        fetched_at=fetched,
        source="archive",
        subreddit=subreddit,
        created_at=BASE_TIME,
        num_comments=comments,
        author_hash="abc123",
    )
