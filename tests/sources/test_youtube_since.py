"""``--since`` on YouTube: ``publishedAfter`` in RFC 3339, and no older video comes back.

The local server ignores ``publishedAfter`` (as a misbehaving proxy or cache could), so the
second half of each test shows the source's own check on ``publishedAt`` holding the line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from crowdsift.core.config import Settings
from crowdsift.core.since import parse_since
from crowdsift.engines.base import Task
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
from crowdsift.pipeline.gate.run_sources import tools_from_settings
from crowdsift.sources.youtube import YouTubeSource
from tests.support.youtube_server import YouTubeProtocolServer

KEY = "AIzaSy-since-key-0123456789abcdef"
NOW = datetime(2026, 11, 25, 19, 30, tzinfo=UTC)
SINCE = parse_since("2026-10-26", NOW)


@pytest.fixture
def server() -> Iterator[YouTubeProtocolServer]:
    with YouTubeProtocolServer(api_key=KEY) as running:
        running.add_video("fresh000001", "standing desk fresh", published_at="2026-11-01T09:00:00Z")
        running.add_video("edge0000001", "standing desk edge", published_at="2026-10-26T00:00:00Z")
        running.add_video("stale000001", "standing desk stale", published_at="2026-10-25T23:59:59Z")
        yield running


def _settings(server: YouTubeProtocolServer) -> Settings:
    return Settings(youtube_api_key=KEY, youtube_api_base_url=server.base_url)


def _all_relevant(task: Task[Any]) -> RelevanceVerdicts:
    assert isinstance(task, RelevanceTask)
    return RelevanceVerdicts(relevant=[True for _ in task.items])


def test_search_sends_published_after_and_drops_older_videos(
    server: YouTubeProtocolServer,
) -> None:
    with YouTubeSource.from_settings(_settings(server), now=lambda: NOW) as source:
        items = source.search("standing desk", 5, published_after=SINCE)
        assert source.stats.extra.get("older_than_since") == 1
    (sent,) = [r.params for r in server.requests_to("search")]
    assert sent["publishedAfter"] == "2026-10-26T00:00:00Z"
    assert sorted(item.title for item in items) == ["standing desk edge", "standing desk fresh"]


def test_without_since_nothing_is_bounded(server: YouTubeProtocolServer) -> None:
    with YouTubeSource.from_settings(_settings(server), now=lambda: NOW) as source:
        items = source.search("standing desk", 5)
    (sent,) = [r.params for r in server.requests_to("search")]
    assert "publishedAfter" not in sent
    assert len(items) == 3


def test_research_tools_pass_since_to_youtube(server: YouTubeProtocolServer) -> None:
    tools = tools_from_settings(_settings(server), since=SINCE)
    fetched = asyncio.run(tools["youtube"]("standing desk", ScriptedEngine(function=_all_relevant)))
    assert not fetched.errors
    assert {r.params["publishedAfter"] for r in server.requests_to("search")} == {
        "2026-10-26T00:00:00Z"
    }
    assert "standing desk stale" not in [item.title for item in fetched.items]
