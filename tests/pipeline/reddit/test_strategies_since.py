"""``--since`` in the plan: every strategy's query gets the window covering the bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.since import WINDOW_SECONDS
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.strategies import build_plan

CONFIG = RedditConfig(max_ai_queries=2)
NOW = datetime(2026, 11, 25, 19, 30, tzinfo=UTC)
ANALYSIS = QueryAnalysis(
    question="How do I set up Home Assistant on a Raspberry Pi?",
    language="en",
    english_question="How do I set up Home Assistant on a Raspberry Pi?",
    intent="how_to",
    ai_mode="none",
    temporal="fast_moving",
    time_filter="month",
    keywords=["home assistant", "raspberry pi"],
    ai_queries=["how to install home assistant"],
    subreddits=["homeassistant"],
)


def test_since_sets_every_querys_window_timeless_included() -> None:
    since = NOW - timedelta(hours=12)
    plan = build_plan(ANALYSIS, CONFIG, page_size=25, since=since, now=NOW)
    assert plan.since == since
    assert {q.strategy for q in plan.queries} == {"targeted", "ai_intent", "sniper", "timeless"}
    assert {q.time_filter for q in plan.queries} == {"day"}
    assert "time=day" in (plan.notes or "")


def test_without_since_the_topics_window_and_the_all_time_classic_stay() -> None:
    plan = build_plan(ANALYSIS, CONFIG, page_size=25)
    assert plan.since is None
    windows = {q.strategy: q.time_filter for q in plan.queries}
    assert windows["targeted"] == windows["sniper"] == "month"
    assert windows["timeless"] == "all"


def test_since_without_now_is_refused() -> None:
    with pytest.raises(ValueError, match="now="):
        build_plan(ANALYSIS, CONFIG, page_size=25, since=NOW)


@given(seconds=st.integers(60, 3 * 365 * 86_400))
def test_every_window_covers_the_bound(seconds: int) -> None:
    since = NOW - timedelta(seconds=seconds)
    plan = build_plan(ANALYSIS, CONFIG, page_size=10, since=since, now=NOW)
    for query in plan.queries:
        assert query.time_filter == "all" or WINDOW_SECONDS[query.time_filter] >= seconds
        assert query.limit == 10
