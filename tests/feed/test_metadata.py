"""Post.to_metadata / Post.from_metadata: lossless, scalar-only, and through real Chroma."""

from __future__ import annotations

import string
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsift.core.models import Comment, Post
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.testing.factories import make_post

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
IDS = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=10)
ZONES = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
DATES = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=ZONES
)
SOURCES = st.sampled_from(["reddit-api", "arctic-shift", "archive"])


@st.composite
def comments(draw: st.DrawFn, post_id: str) -> Comment:
    return Comment(
        comment_id=draw(IDS),
        post_id=post_id,
        body=draw(TEXT),
        comment_karma=draw(INT64),
        source=draw(SOURCES),
        fetched_at=draw(DATES),
    )


@st.composite
def posts(draw: st.DrawFn) -> Post:
    post_id = draw(IDS)
    subreddit = draw(st.from_regex(r"[a-z0-9][a-z0-9_]{1,20}", fullmatch=True))
    return Post(
        id=post_id,
        title=draw(TEXT),
        selftext=draw(TEXT),
        post_karma=draw(INT64),
        relevance_score=draw(st.floats(0.0, 1.0)),
        matched_keywords=draw(st.lists(TEXT, max_size=4)),
        url=f"https://www.reddit.com/r/{subreddit}/comments/{post_id}/{draw(IDS)}/",
        comments=draw(st.lists(comments(post_id), max_size=3)),
        fetched_at=draw(DATES),
        source=draw(SOURCES),
        subreddit=subreddit,
        created_at=draw(st.none() | DATES),
        num_comments=draw(st.integers(0, 2**63 - 1)),
        author_hash=draw(st.none() | TEXT),
    )


@given(posts())
def test_any_valid_post_survives_metadata_and_back(post: Post) -> None:
    metadata = post.to_metadata()

    assert all(isinstance(value, str | int | float | bool) for value in metadata.values())
    assert Post.from_metadata(metadata) == post


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(post=posts())
def test_any_valid_post_survives_a_real_chroma_round_trip(post: Post) -> None:
    client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
    collection = client.get_or_create_collection(
        "roundtrip",
        embedding_function=CrowdsiftEmbeddingFunction("hashing"),  # type: ignore[arg-type]
    )
    collection.upsert(ids=[post.id], documents=[post.text], metadatas=[post.to_metadata()])
    stored = collection.get(ids=[post.id], include=["metadatas"])
    collection.delete(ids=[post.id])

    assert Post.from_metadata(stored["metadatas"][0]) == post


def test_text_is_title_then_body() -> None:
    assert make_post("t1", "Title", "Body").text == "Title\n\nBody"
    assert make_post("t2", "Only title").text == "Only title"


def test_absent_optionals_are_omitted_not_null() -> None:
    post = make_post("o1", "x").model_copy(update={"created_at": None, "author_hash": None})
    metadata = post.to_metadata()
    assert "created_at" not in metadata and "author_hash" not in metadata
    assert "created_utc" not in metadata
    assert Post.from_metadata(metadata) == post


def test_created_utc_is_epoch_seconds_for_filters() -> None:
    assert make_post("e1", "x").to_metadata()["created_utc"] == 1790856000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": 99}, "schema"),
        ({"relevance_score": 3.0, "relevance_score_exact": "3.0"}, "relevance_score"),
        ({"relevance_score_exact": "high"}, "could not convert"),
        ({"comments": "not json ["}, "Expecting value"),
    ],
)
def test_foreign_or_corrupt_metadata_is_a_value_error(change: dict[str, Any], message: str) -> None:
    metadata = {**make_post("c1", "x").to_metadata(), **change}
    with pytest.raises(ValueError, match=message):
        Post.from_metadata(metadata)
