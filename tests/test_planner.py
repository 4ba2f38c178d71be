"""The planner helpers: key phrases and product variants, subreddit choice, default list."""

from __future__ import annotations

import pytest

from crowdsift.core.models import normalise_subreddit
from crowdsift.engines.base import LocalKit
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.pipeline.reddit.planner import (
    DEFAULT_SUBREDDITS,
    SubredditProfile,
    closest_subreddits,
    key_phrases,
)

PROFILES = (
    SubredditProfile(name="tools", description="impact driver; drill torque; battery platform"),
    SubredditProfile(name="gadgets", description="voice recorder; plaud note; transcription"),
    SubredditProfile(name="dataengineering", description="airflow dagster orchestration dags"),
)


@pytest.mark.parametrize(
    ("question", "expected_first"),
    [
        ("Is the Plaud Note worth it compared to a phone app?", ["plaud note", "plaud"]),
        ("plaud.ai vs otter for meetings", ["plaud.ai", "plaud ai", "plaud"]),
        ("Best impact driver for deck screws", ["impact driver", "deck screws"]),
        ("DeWalt or Milwaukee battery platform?", ["dewalt", "milwaukee", "battery platform"]),
    ],
)
def test_key_phrases(question: str, expected_first: list[str]) -> None:
    terms = key_phrases(question)
    assert terms[: len(expected_first)] == expected_first
    assert len(terms) <= 5
    assert not any(term.isdigit() for term in key_phrases("Airflow vs Dagster in 2026"))


def test_closest_subreddits_by_embedding_similarity() -> None:
    kit = LocalKit(embedder=HashingEmbedder())
    question = "which voice recorder transcription is best"
    assert closest_subreddits(kit, question, PROFILES, 1) == ["gadgets"]
    assert closest_subreddits(kit, question, (), 3) == []
    assert len(closest_subreddits(kit, question, PROFILES, 5)) == 3


def test_default_subreddits_are_valid_names() -> None:
    assert all(normalise_subreddit(p.name) == p.name for p in DEFAULT_SUBREDDITS)
    assert len({p.name for p in DEFAULT_SUBREDDITS}) == len(DEFAULT_SUBREDDITS)
