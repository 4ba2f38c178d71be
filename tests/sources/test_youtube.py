"""The YouTube source through its real client against a local YouTube Data API v3 server."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from crowdsift.core.config import Settings
from crowdsift.core.errors import AuthError, HttpStatusError, TransportError
from crowdsift.core.log import configure_logging
from crowdsift.engines.base import Task
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
from crowdsift.pipeline.gate.sources import fetch_youtube_tool
from crowdsift.sources.youtube import (
    SKIP_NOTICE,
    YouTubeQuotaError,
    YouTubeSource,
    build_youtube_source,
)
from crowdsift.sources.youtube_api import api_error, error_reason, quota_reset
from tests.support.youtube_server import YouTubeProtocolServer, error_body

KEY = "AIzaSy-test-key-0123456789abcdef"
NOW = datetime(2025, 1, 15, 20, 0, tzinfo=UTC)  # 12:00 in Los Angeles (PST, UTC-8)


@pytest.fixture
def server() -> Iterator[YouTubeProtocolServer]:
    with YouTubeProtocolServer(api_key=KEY) as running:
        yield running


@pytest.fixture
def logs() -> io.StringIO:
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    return stream


def _settings(server: YouTubeProtocolServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"youtube_api_key": KEY, "youtube_api_base_url": server.base_url}
    return Settings(**(values | overrides))


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _source(
    server: YouTubeProtocolServer, sleeps: Sleeps | None = None, **kw: Any
) -> YouTubeSource:
    return YouTubeSource.from_settings(
        _settings(server, **kw), sleep=sleeps if sleeps is not None else Sleeps(), now=lambda: NOW
    )


def _add_videos(server: YouTubeProtocolServer, count: int, *, prefix: str = "vid") -> None:
    for n in range(count):
        server.add_video(f"{prefix}{n:08d}", f"video {n}", views=100 + n)


def _statuses(server: YouTubeProtocolServer, endpoint: str) -> list[int | None]:
    return [r.status for r in server.requests_to(endpoint)]


# --- search, counts, comments ------------------------------------------------------------


def test_search_gives_videos_with_counts_comments_and_canonical_urls(
    server: YouTubeProtocolServer,
) -> None:
    long_description = "How I set up my standing desk. " * 10  # > 160: search cuts it
    server.add_video(
        "dQw4w9WgXcQ",
        "Standing desk after one year",
        description=long_description,
        channel="Desk Reviews",
        published_at="2024-03-02T10:30:00Z",
        views=15230,
        likes=812,
        comments=[
            {"text": "Mine wobbles at full height", "likes": 4, "author": "@alice"},
            {"text": "Best purchase this year", "likes": 97, "author": "@bob"},
            {"text": "Which model is it?", "likes": 12, "author": "@carol"},
        ],
    )
    server.add_video("a-b_C123456", "Cheap desk frames compared", views=77, likes=None)

    with _source(server) as source:
        items = source.search("standing desk", 5, comments_per_video=2)

    first, second = items
    assert [item.id for item in items] == ["dQw4w9WgXcQ", "a-b_C123456"]
    assert str(first.url) == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    assert str(second.url) == "https://www.youtube.com/watch?v=a-b_C123456"
    assert all(item.kind == "youtube" for item in items)
    assert first.title == "Standing desk after one year"
    assert first.text == long_description  # the whole description, from videos.list
    assert first.where == "Desk Reviews"
    assert first.published_at == datetime(2024, 3, 2, 10, 30, tzinfo=UTC)
    assert first.metrics == {"views": 15230, "likes": 812, "comments": 3}
    assert second.metrics == {"views": 77, "comments": 0}  # the owner hides likes
    assert [(c.text, c.likes) for c in first.comments] == [
        ("Best purchase this year", 97),
        ("Which model is it?", 12),
    ]
    assert "@bob" not in first.model_dump_json()  # no author names kept
    search = server.requests_to("search")
    assert [r.params for r in search] == [
        {
            "part": "snippet",
            "type": "video",
            "q": "standing desk",
            "order": "relevance",
            "maxResults": "5",
        }
    ]
    videos = server.requests_to("videos")
    assert [r.params["id"] for r in videos] == ["dQw4w9WgXcQ,a-b_C123456"]  # one batched call
    assert "statistics" in videos[0].params["part"]
    threads = server.requests_to("commentThreads")
    assert [r.params["videoId"] for r in threads] == ["dQw4w9WgXcQ", "a-b_C123456"]
    assert {r.params["maxResults"] for r in threads} == {"2"}
    assert {r.params["textFormat"] for r in threads} == {"plainText"}
    assert server.quota_used == 100 + 1 + 2


def test_html_escaped_titles_and_descriptions_are_unescaped(
    server: YouTubeProtocolServer,
) -> None:
    server.add_video(
        "esc00000001",
        'Tom & Jerry\'s "desk" <setup>',
        description="Fish & chips",
        channel="Rock & Roll's",
    )
    server.add_video("esc00000002", "Q&A: isn't it <great>?", description="It's fine & dandy")
    raw = httpx.get(f"{server.base_url}/search", params={"part": "snippet", "key": KEY}).text
    assert "Tom &amp; Jerry&#39;s &quot;desk&quot; &lt;setup&gt;" in raw  # what YouTube sends

    with _source(server) as source:
        items = source.search("desk", 5, comments_per_video=0)

    assert [item.title for item in items] == [
        'Tom & Jerry\'s "desk" <setup>',
        "Q&A: isn't it <great>?",
    ]
    assert items[0].where == "Rock & Roll's"
    assert [item.text for item in items] == ["Fish & chips", "It's fine & dandy"]


def test_search_description_is_used_when_videos_list_lacks_the_video(
    server: YouTubeProtocolServer,
) -> None:
    server.add_raw_search_item(
        {
            "id": {"kind": "youtube#video", "videoId": "gone0000001"},
            "snippet": {"title": "Deleted since", "description": "Short &amp; sweet"},
        }
    )

    with _source(server) as source:
        (item,) = source.search("desk", 5)

    assert item.text == "Short & sweet"
    assert item.metrics == {} and item.comments == [] and item.published_at is None


def test_malformed_items_are_skipped_and_counted(
    server: YouTubeProtocolServer, logs: io.StringIO
) -> None:
    server.add_video("good0000001", "first good")
    for bad in (
        {"snippet": {"title": "no id at all"}},
        {"id": {"kind": "youtube#video", "videoId": 12345}, "snippet": {"title": "int id"}},
        {"id": {"kind": "youtube#video", "videoId": "notitle0001"}, "snippet": {}},
        {"id": {"kind": "youtube#video", "videoId": "badsnip0001"}, "snippet": "oops"},
        {"id": {"kind": "youtube#channel", "channelId": "UC123"}, "snippet": {"title": "a"}},
        {"id": {"kind": "youtube#video", "videoId": "has space"}, "snippet": {"title": "x"}},
        "not even an object",
    ):
        server.add_raw_search_item(bad)
    duplicate = {
        "id": {"kind": "youtube#video", "videoId": "good0000001"},
        "snippet": {"title": "again"},
    }
    server.add_raw_search_item(duplicate)  # YouTube repeats a video now and then: kept once
    server.add_video(
        "good0000002",
        "second good",
        statistics={"viewCount": "lots", "likeCount": "-3", "commentCount": "4"},
        comments=[{"text": "kept", "likes": 2}],
    )
    server.add_raw_comment_thread("good0000002", {"id": "t1", "snippet": {"videoId": "x"}})
    server.add_raw_comment_thread("good0000002", {"snippet": {"topLevelComment": "nope"}})

    with _source(server) as source:
        items = source.search("desk", 13)
        skipped = source.skipped_items

    assert [item.id for item in items] == ["good0000001", "good0000002"]
    assert skipped == 7
    assert items[1].metrics == {"comments": 4}  # unparsable counts dropped, the video kept
    assert [c.text for c in items[1].comments] == ["kept"]
    text = logs.getvalue()
    assert text.count("event='youtube_item_skipped'") == 7
    assert "youtube#channel" in text and "has no title" in text


def test_comments_disabled_keeps_the_video(
    server: YouTubeProtocolServer, logs: io.StringIO
) -> None:
    server.add_video("quiet000001", "comments off", comments_disabled=True, views=5)
    server.add_video("loud0000001", "comments on", comments=[{"text": "hello", "likes": 1}])

    with _source(server) as source:
        quiet, loud = source.search("desk", 5)

    assert quiet.id == "quiet000001" and quiet.comments == []
    assert quiet.metrics == {"views": 5, "likes": 0}
    assert [c.text for c in loud.comments] == ["hello"]
    assert _statuses(server, "commentThreads") == [403, 200]  # asked once, not retried
    assert "youtube_comments_unavailable" in logs.getvalue()  # expected, not a failure
    assert "youtube_comments_failed" not in logs.getvalue()


def test_a_repeated_search_spends_no_quota(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 2)
    with _source(server) as source:
        first = source.search("desk", 5)
        used, sent = server.quota_used, len(server.requests)
        second = source.search("desk", 5)
        hits = source.stats.cache_hits

    assert second == first
    assert (server.quota_used, len(server.requests)) == (used, sent)
    assert hits == 4  # search, videos, two comment threads


# --- retries and quota -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("error", {"code": 503, "reason": "backendError"}),
        ("error", {"code": 500, "reason": "backendError"}),
        ("truncated", {}),
        ("reset", {}),
    ],
)
def test_a_failed_search_is_retried(
    server: YouTubeProtocolServer, kind: str, options: dict[str, Any]
) -> None:
    _add_videos(server, 3)
    server.add_fault("*/search", kind, **options)
    sleeps = Sleeps()

    with _source(server, sleeps) as source:
        items = source.search("desk", 5)
        retries = source.stats.retries

    assert len(items) == 3
    assert len(server.requests_to("search")) == 2
    assert len(sleeps) == 1 and retries == 1


@pytest.mark.parametrize("reason", ["rateLimitExceeded", "userRateLimitExceeded"])
def test_short_term_rate_limits_are_retried(server: YouTubeProtocolServer, reason: str) -> None:
    _add_videos(server, 2)
    server.add_fault("*/search", "error", code=403, reason=reason, times=2)
    server.add_fault(
        "*/commentThreads", "error", code=403, reason=reason, headers={"Retry-After": 3}
    )
    sleeps = Sleeps()

    with _source(server, sleeps) as source:
        items = source.search("desk", 5)

    assert [item.id for item in items] == ["vid00000000", "vid00000001"]
    assert _statuses(server, "search") == [403, 403, 200]
    assert _statuses(server, "commentThreads") == [403, 200, 200]
    assert len(sleeps) == 3
    assert sleeps[2] >= 3  # Retry-After honoured


def test_rate_limits_that_do_not_pass_end_in_a_transport_error(
    server: YouTubeProtocolServer,
) -> None:
    _add_videos(server, 1)
    server.add_fault("*/search", "error", code=403, reason="rateLimitExceeded", times=10)

    with _source(server, max_retries=2) as source, pytest.raises(TransportError) as caught:
        source.search("desk", 5)

    assert caught.value.status == 403
    assert "rateLimitExceeded" in str(caught.value)
    assert f"{server.base_url}/search" in str(caught.value)
    assert KEY not in str(caught.value)
    assert len(server.requests_to("search")) == 3


@pytest.mark.parametrize("reason", ["quotaExceeded", "dailyLimitExceeded"])
def test_spent_daily_quota_is_a_clear_error_and_not_retried(
    server: YouTubeProtocolServer, reason: str
) -> None:
    _add_videos(server, 1)
    server.add_fault("*/search", "error", code=403, reason=reason)
    sleeps = Sleeps()

    with _source(server, sleeps) as source, pytest.raises(YouTubeQuotaError) as caught:
        source.search("desk", 5)

    message = str(caught.value)
    assert "daily quota" in message and "midnight Pacific" in message
    assert "2025-01-16 08:00 UTC" in message and "about 12 h" in message
    assert KEY not in message
    assert len(server.requests_to("search")) == 1 and sleeps == []


def test_quota_running_out_during_comments_keeps_the_videos(
    server: YouTubeProtocolServer, logs: io.StringIO
) -> None:
    server.daily_quota = 101  # the search and the statistics, nothing more
    for n in range(3):
        server.add_video(f"vid{n:08d}", f"video {n}", views=n, comments=[{"text": "hi"}])

    with _source(server) as source:
        items = source.search("desk", 5)

    assert [item.metrics["views"] for item in items] == [0, 1, 2]
    assert all(item.comments == [] for item in items)
    assert _statuses(server, "commentThreads") == [403]  # the others would fail the same
    assert "youtube_comments_failed" in logs.getvalue()


def test_statistics_failing_for_good_keeps_the_videos(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 2)
    server.add_fault("*/videos", "error", code=503, times=10)

    with _source(server, max_retries=1) as source:
        items = source.search("desk", 5, comments_per_video=0)

    assert [item.metrics for item in items] == [{}, {}]
    assert _statuses(server, "videos") == [503, 503]


def test_a_bad_key_is_an_auth_error_naming_the_variable(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 1)
    wrong = "AIzaSy-wrong-key-9876543210"

    with (
        _source(server, youtube_api_key=wrong) as source,
        pytest.raises(AuthError) as caught,
    ):
        source.search("desk", 5)

    assert "YOUTUBE_API_KEY" in str(caught.value) and "keyInvalid" in str(caught.value)
    assert wrong not in str(caught.value)
    assert _statuses(server, "search") == [400]


def test_the_key_never_appears_in_logs_errors_or_the_request_log(
    server: YouTubeProtocolServer, logs: io.StringIO
) -> None:
    server.add_video("vid00000000", "video", comments=[{"text": "hi"}])
    server.add_fault("*/search", "error", code=500)
    server.add_fault("*/videos", "reset")
    server.add_fault("*/commentThreads", "error", code=403, reason="rateLimitExceeded")
    errors: list[str] = []

    with _source(server) as source:
        source.search("desk", 5)
        server.exhaust_quota()
        with pytest.raises(YouTubeQuotaError) as caught:
            source.search("other", 5)
        errors.append(str(caught.value))
    fetched = asyncio.run(
        fetch_youtube_tool("third", engine=ScriptedEngine(), settings=_settings(server))
    )
    errors.extend(fetched.errors)

    assert len(errors) == 2 and all(KEY not in e for e in errors)
    assert "http_retry" in logs.getvalue() and KEY not in logs.getvalue()
    recorded = server.requests
    assert len(recorded) >= 7
    assert all(r.key_sent and "key" not in r.params for r in recorded)
    assert KEY not in repr(recorded)


# --- the tool: skipping, errors, the adaptive pattern -------------------------------------


def test_missing_key_skips_the_source_with_a_one_line_notice(logs: io.StringIO) -> None:
    engine = ScriptedEngine()

    result = asyncio.run(fetch_youtube_tool("standing desk", engine=engine, settings=Settings()))
    from_env = asyncio.run(fetch_youtube_tool("standing desk", engine=engine))

    for fetched in (result, from_env):
        assert fetched.skipped == SKIP_NOTICE
        assert fetched.items == [] and fetched.errors == []
    assert "YOUTUBE_API_KEY" in SKIP_NOTICE and "\n" not in SKIP_NOTICE
    assert engine.requests == []
    assert build_youtube_source(Settings()) is None
    assert "source_skipped" in logs.getvalue()


def test_the_tool_reports_a_spent_quota_instead_of_raising(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 5)
    server.exhaust_quota()
    engine = ScriptedEngine()

    result = asyncio.run(fetch_youtube_tool("desk", engine=engine, settings=_settings(server)))

    assert result.kind == "youtube" and result.items == [] and result.skipped is None
    (error,) = result.errors
    assert "daily quota" in error and "midnight Pacific" in error
    assert engine.requests == []


def _relevant_when_marked(task: Task[Any]) -> RelevanceVerdicts:
    assert isinstance(task, RelevanceTask)
    return RelevanceVerdicts(relevant=["desk" in item.title for item in task.items])


def test_low_yield_triggers_one_second_search_with_ten(server: YouTubeProtocolServer) -> None:
    for n in range(12):
        title = f"standing desk review {n}" if n in (3, 7) else f"unrelated clip {n}"
        server.add_video(f"vid{n:08d}", title, comments=[{"text": f"comment {n}"}])
    engine = ScriptedEngine(function=_relevant_when_marked)

    result = asyncio.run(
        fetch_youtube_tool(
            "standing desk", engine=engine, settings=_settings(server), comments_per_video=1
        )
    )

    assert [r.params["maxResults"] for r in server.requests_to("search")] == ["5", "10"]
    assert result.refetched and result.fetched == 10 and result.yield_ratio == 0.2
    assert [item.id for item in result.items] == ["vid00000003", "vid00000007"]
    assert [c.text for c in result.items[1].comments] == ["comment 7"]
    assert [len(t.items) for t in engine.requests if isinstance(t, RelevanceTask)] == [5, 10]
    assert not result.failed_open and result.errors == []


def test_high_yield_searches_once(server: YouTubeProtocolServer) -> None:
    for n in range(8):
        server.add_video(f"vid{n:08d}", f"standing desk tip {n}")
    source = _source(server)

    result = asyncio.run(
        fetch_youtube_tool(
            "standing desk", engine=ScriptedEngine(function=_relevant_when_marked), source=source
        )
    )

    assert [r.params["maxResults"] for r in server.requests_to("search")] == ["5"]
    assert len(result.items) == 5 and result.yield_ratio == 1.0 and not result.refetched
    assert source.search("standing desk", 1)  # an injected source stays open for its owner
    source.close()


def test_a_broken_gate_fails_open_with_every_video(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 5)
    engine = ScriptedEngine(function=lambda _task: {"verdicts": "not the schema"})

    result = asyncio.run(fetch_youtube_tool("desk", engine=engine, settings=_settings(server)))

    assert result.failed_open and len(result.items) == 5 and not result.refetched


# --- settings and clients ------------------------------------------------------------------


def test_an_injected_client_is_used_and_left_open(server: YouTubeProtocolServer) -> None:
    _add_videos(server, 1)
    with httpx.Client() as client:  # no base URL: YOUTUBE_API_BASE_URL prefixes the paths
        source = YouTubeSource.from_settings(_settings(server), http_client=client)
        assert [item.id for item in source.search("desk", 5)] == ["vid00000000"]
        source.close()
        assert not client.is_closed
    assert server.requests_to("search")[0].path == "/youtube/v3/search"


def test_quota_resets_at_midnight_pacific() -> None:
    assert quota_reset(datetime(2025, 1, 15, 20, 0, tzinfo=UTC)) == datetime(
        2025, 1, 16, 8, 0, tzinfo=UTC
    )  # PST
    assert quota_reset(datetime(2025, 7, 15, 6, 59, tzinfo=UTC)) == datetime(
        2025, 7, 15, 7, 0, tzinfo=UTC
    )  # PDT, a minute before midnight
    assert quota_reset(datetime(2025, 7, 15, 7, 0, tzinfo=UTC)) == datetime(
        2025, 7, 16, 7, 0, tzinfo=UTC
    )


def test_api_errors_say_what_to_do() -> None:
    url = "https://www.googleapis.com/youtube/v3/search"

    def mapped(status: int, body: Any, now: datetime = NOW) -> Exception:
        return api_error(HttpStatusError("raw", url=url, status=status, body=body), now=now)

    late = mapped(403, error_body(403, "quotaExceeded"), datetime(2025, 1, 16, 7, 30, tzinfo=UTC))
    assert isinstance(late, YouTubeQuotaError) and "in about 30 min" in str(late)
    disabled = mapped(403, error_body(403, "accessNotConfigured"))
    assert isinstance(disabled, AuthError) and "Enable 'YouTube Data API v3'" in str(disabled)
    newer = {
        "error": {
            "code": 400,
            "message": "API key not valid.",
            "status": "INVALID_ARGUMENT",
            "details": [{"@type": "ErrorInfo", "reason": "API_KEY_INVALID"}],
        }
    }
    assert error_reason(newer) == ("API_KEY_INVALID", "API key not valid.")
    assert isinstance(mapped(400, newer), AuthError)
    other = mapped(400, error_body(400, "invalidSearchFilter", "Bad filter"))
    assert type(other) is HttpStatusError and other.status == 400
    assert "invalidSearchFilter" in str(other) and "Bad filter" in str(other)
    assert error_reason("<html>502</html>") == ("", "")
