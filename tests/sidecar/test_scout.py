"""Scout: how queries become requests per source, screening, strategy merging, failures."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from crowdsift.config import SearchSort, TimeFilter
from crowdsift.errors import AuthError, SourceError
from crowdsift.models import RejectReason
from crowdsift.reddit.filtering import FilterConfig
from crowdsift.reddit.sources.base import SearchPage
from crowdsift.sidecar.models import ScoutQuery
from crowdsift.sidecar.runner import SourceRunner
from crowdsift.sidecar.scout import or_alternatives, scout, search_calls
from crowdsift.testing.factories import raw_post
from crowdsift.testing.memory_source import MemorySource

NOW = datetime(2026, 6, 1, tzinfo=UTC)
BODY = "Long enough body about impact drivers and deck screws, torque and bits, for the filter."


def _query(strategy: Any, term: str, subs: list[str]) -> ScoutQuery:
    return ScoutQuery(strategy=strategy, term=term, subreddits=subs)


def _post(post_id: str, title: str = "impact driver for deck screws", **extra: Any) -> Any:
    return raw_post(post_id, subreddit=extra.pop("subreddit", "tools"), title=title,
                    selftext=extra.pop("selftext", BODY), **extra)  # fmt: skip


def _run(queries: list[ScoutQuery], source: Any, concurrency: int = 4) -> Any:
    runner = SourceRunner(concurrency)
    try:
        return asyncio.run(
            scout(
                queries,
                source=source,
                runner=runner,
                filters=FilterConfig(),
                search_terms=["impact driver", "deck screws"],
                clock=lambda: NOW,
            )
        )
    finally:
        runner.close()


def test_or_alternatives_split_quoted_phrases() -> None:
    assert or_alternatives('"impact driver" OR drill OR "impact driver"') == [
        "impact driver",
        "drill",
    ]
    assert or_alternatives("impact driver") == ["impact driver"]


def test_search_calls_follow_what_each_source_can_do() -> None:
    queries = [_query("targeted", '"impact driver" OR drill', ["tools", "diy"])]

    assert [(c.subreddit, c.term) for c in search_calls(queries, "reddit-api")] == [
        ("tools+diy", '"impact driver" OR drill')
    ]
    assert [(c.subreddit, c.term) for c in search_calls(queries, "archive")] == [
        ("tools", '"impact driver" OR drill'),
        ("diy", '"impact driver" OR drill'),
    ]
    assert [(c.subreddit, c.term) for c in search_calls(queries, "arctic-shift")] == [
        ("tools", "impact driver"),
        ("tools", "drill"),
        ("diy", "impact driver"),
        ("diy", "drill"),
    ]


def test_a_post_found_by_two_strategies_is_one_candidate_crediting_both() -> None:
    shared = _post("p1")
    source = MemorySource(
        posts={
            ("tools", "impact driver"): [shared, _post("p2", "impact driver bits that last")],
            ("tools", "impact driver guide"): [_post("p3", "impact driver guide"), shared],
        }
    )
    queries = [
        _query("targeted", "impact driver", ["tools"]),
        _query("sniper", "impact driver guide", ["tools"]),
    ]

    outcome = _run(queries, source)

    by_id = {c.post.id: c for c in outcome.candidates}
    assert [c.post.id for c in outcome.candidates] == ["p1", "p2", "p3"]
    assert by_id["p1"].strategies == ["targeted", "sniper"]
    assert by_id["p3"].strategies == ["sniper"]
    assert outcome.posts_seen == 4
    assert all(c.post.comments == [] for c in outcome.candidates)


def test_screening_applies_the_fetch_filters_once_per_post() -> None:
    source = MemorySource(
        posts={
            ("tools", "impact driver"): [
                _post("nsfw", over_18=True),
                _post("short", selftext="too short"),
                _post("good"),
                _post("short", selftext="too short"),
            ]
        }
    )

    outcome = _run([_query("targeted", "impact driver", ["tools"])], source)

    assert [c.post.id for c in outcome.candidates] == ["good"]
    assert outcome.rejections == {RejectReason.NSFW_OR_AD: 1, RejectReason.TOO_SHORT: 1}


def test_link_posts_are_vetoed_as_in_fetch_and_self_posts_have_no_link_url() -> None:
    link = _post("link", is_self=False, url="https://example.com/review?utm_source=x")
    source = MemorySource(posts={("tools", "impact driver"): [link, _post("self")]})

    outcome = _run([_query("targeted", "impact driver", ["tools"])], source)

    assert {c.post.id: c.link_url for c in outcome.candidates} == {"self": None}
    assert outcome.rejections == {RejectReason.METADATA_VETO: 1}


class _JitterSource(MemorySource):
    """Answers after a random delay, so completion order differs from query order."""

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",
        time_filter: TimeFilter = "all",
        limit: int = 25,
        after: str | None = None,
    ) -> SearchPage:
        time.sleep(random.uniform(0, 0.02))
        return super().search_subreddit(
            subreddit, term, sort=sort, time_filter=time_filter, limit=limit, after=after
        )


def test_candidates_do_not_depend_on_which_request_finished_first() -> None:
    posts = {
        ("tools", f"term {n}"): [
            _post(f"p{n}{k}", f"impact driver story {n} {k}") for k in range(3)
        ]
        for n in range(8)
    }
    queries = [_query("ai_intent", f"term {n}", ["tools"]) for n in range(8)]

    first = _run(queries, _JitterSource(posts=posts), concurrency=8)
    second = _run(queries, _JitterSource(posts=posts), concurrency=8)
    sequential = _run(queries, MemorySource(posts=posts), concurrency=1)

    ids = [c.post.id for c in sequential.candidates]
    assert ids == [f"p{n}{k}" for n in range(8) for k in range(3)]
    assert [c.post.id for c in first.candidates] == ids
    assert [c.post.id for c in second.candidates] == ids


def test_a_private_member_of_a_multireddit_is_skipped_and_the_others_searched() -> None:
    source = MemorySource(  # reddit-api searches multireddits; one member here is private
        name="reddit-api",
        posts={("tools", "impact driver"): [_post("p1")], ("diy", "impact driver"): [_post("p2")]},
        unavailable={"tools+diy+secret": "private", "secret": "private"},
    )

    outcome = _run([_query("targeted", "impact driver", ["tools", "diy", "secret"])], source)

    assert [c.post.id for c in outcome.candidates] == ["p1", "p2"]
    assert outcome.skipped_subreddits == {"secret": "private"}
    searched = [call[1] for call in source.calls if call[0] == "search"]
    assert searched[0] == "tools+diy+secret"
    assert sorted(searched[1:]) == ["diy", "secret", "tools"]


class _FailingSource(MemorySource):
    def __init__(self, failure: Exception, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.failure = failure

    def search_subreddit(self, subreddit: str, term: str, **kwargs: Any) -> SearchPage:
        if term == "broken":
            raise self.failure
        return super().search_subreddit(subreddit, term, **kwargs)


def test_a_failed_search_is_reported_and_the_rest_continue() -> None:
    source = _FailingSource(
        SourceError("HTTP 500 from /r/tools/search"),
        posts={("tools", "impact driver"): [_post("p1")]},
    )

    outcome = _run(
        [_query("targeted", "broken", ["tools"]), _query("sniper", "impact driver", ["tools"])],
        source,
    )

    assert [c.post.id for c in outcome.candidates] == ["p1"]
    assert outcome.failed_requests == 1 and outcome.requests == 2
    assert "HTTP 500" in outcome.errors[0] and "'broken'" in outcome.errors[0]


def test_bad_credentials_stop_the_scout() -> None:
    source = _FailingSource(AuthError("Reddit rejects our token"))

    with pytest.raises(AuthError):
        _run([_query("targeted", "broken", ["tools"])], source)
