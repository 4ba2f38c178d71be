"""Model validation: plans normalise names, posts refuse anything but a full permalink."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from crowdsift.core.models import SCHEMA_MODELS, Post, SearchPlan, normalise_subreddit


def test_plan_normalises_subreddits_and_terms() -> None:
    plan = SearchPlan(
        search_terms=[" plaud ", "plaud", "voice recorder"],
        subreddits=["r/Gadgets", "/r/productivity/", "gadgets"],
    )
    assert plan.search_terms == ["plaud", "voice recorder"]
    assert plan.subreddits == ["gadgets", "productivity"]
    assert plan.notes is None and plan.plan_id.version == 4


@pytest.mark.parametrize(
    "fields",
    [
        {"search_terms": [], "subreddits": ["gadgets"]},
        {"search_terms": ["  "], "subreddits": ["gadgets"]},
        {"search_terms": ["x"], "subreddits": []},
        {"search_terms": ["x"], "subreddits": ["not a sub!"]},
        {"search_terms": ["x"], "subreddits": ["gadgets"], "unknown": 1},
    ],
)
def test_invalid_plans_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SearchPlan.model_validate(fields)


def test_normalise_subreddit() -> None:
    assert normalise_subreddit(" R/DataEngineering ") == "dataengineering"
    with pytest.raises(ValueError, match="not a subreddit name"):
        normalise_subreddit("r/")


def _post(url: str) -> Post:
    return Post(
        id="a",
        title="t",
        selftext="b",
        post_karma=1,
        relevance_score=0.5,
        url=url,
        fetched_at=datetime(2026, 1, 1),
        source="archive",
        subreddit="gadgets",
    )


def test_post_url_must_be_a_full_permalink_and_naive_times_become_utc() -> None:
    post = _post("https://www.reddit.com/r/gadgets/comments/a/slug/")
    assert post.fetched_at.tzinfo is UTC
    for bad in ("", "/r/gadgets/comments/a/slug/", "https://example.com/r/x/comments/a/s/"):
        with pytest.raises(ValidationError, match="permalink"):
            _post(bad)


def test_fetch_result_schema_has_no_notes_and_post_has_the_allowed_fields() -> None:
    fetch_schema = SCHEMA_MODELS["FetchResult"].model_json_schema()
    assert set(fetch_schema["properties"]) == {
        "query",
        "plan_id",
        "search_terms",
        "subreddits",
        "fetched_at",
        "posts",
        "sample_data",  # issue 18: true when the bundled demo archive answered
        "source_status",  # issue 20: what each source of the chain did
        "since",  # issue 20: the --since bound no post here is older than
    }
    post_fields = set(SCHEMA_MODELS["Post"].model_json_schema()["properties"])
    assert post_fields == {
        "id",
        "title",
        "selftext",
        "post_karma",
        "relevance_score",
        "matched_keywords",
        "url",
        "comments",
        "fetched_at",
        "source",
        "subreddit",
        "created_at",
        "num_comments",
        "author_hash",
    }
