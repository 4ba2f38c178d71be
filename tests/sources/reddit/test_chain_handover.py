"""The chain's handover rules on in-memory sources (HTTP is covered by test_source_chain), and
the Arctic Shift probe against the real local server: each answer it can get, and a dead port.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import httpx
import pytest

from crowdsift.core.config import SearchSort, Settings, TimeFilter
from crowdsift.core.errors import HttpStatusError, TransportError
from crowdsift.core.source import RedditSource, SearchPage
from crowdsift.sources.reddit.chain import Link, SourceChain
from crowdsift.sources.reddit.pagination import paginate_search
from crowdsift.sources.reddit.probe import probe_arctic_shift
from crowdsift.testing.factories import raw_post
from crowdsift.testing.memory_source import MemorySource
from tests.support.arctic_shift_server import ArcticShiftServer

POSTS = [raw_post(f"p{n}") for n in range(6)]


@dataclass
class Failing(MemorySource):
    """A MemorySource whose search raises ``error`` from call number ``after + 1`` on."""

    error: Exception | None = None
    after: int = 0

    def search_subreddit(
        self,
        subreddit: str,
        term: str,
        *,
        sort: SearchSort = "relevance",
        time_filter: TimeFilter = "all",
        limit: int = 25,
        after: str | None = None,
        since: datetime | None = None,
    ) -> SearchPage:
        with self._lock:
            calls = sum(1 for c in self.calls if c[0] == "search")
        if self.error is not None and calls >= self.after:
            raise self.error
        return super().search_subreddit(
            subreddit,
            term,
            sort=sort,
            time_filter=time_filter,
            limit=limit,
            after=after,
            since=since,
        )


def _link(source: RedditSource, name: str = "archive") -> Link:
    return Link(name, f"the {name} fake", lambda: source)  # type: ignore[arg-type]


def test_a_query_that_began_on_a_failed_source_starts_over_on_the_next() -> None:
    throttled = TransportError("429 and a long Retry-After", status=429)
    first = Failing(posts={("gadgets", "plaud"): POSTS}, error=throttled, after=1)
    second = MemorySource(posts={("gadgets", "plaud"): POSTS})
    chain = SourceChain([_link(first, "arctic-shift"), _link(second)])

    ids = [p["id"] for p in paginate_search(chain, "gadgets", "plaud", page_size=2, cap=6)]

    assert ids[:2] == ["p0", "p1"]  # page 1 from the first source, then it failed...
    assert ids[2:] == [f"p{n}" for n in range(6)][:4]  # ...and the query began again there
    assert second.calls[0] == ("search", "gadgets", "plaud", "")  # never given a foreign cursor
    assert [s.status for s in chain.statuses()] == ["rate_limited", "ok"]


def test_a_query_failure_of_its_own_is_raised_and_does_not_hand_over() -> None:
    bad_request = HttpStatusError("400: limit out of range", status=400)
    first = Failing(error=bad_request)
    second = MemorySource(posts={("gadgets", "plaud"): POSTS})
    chain = SourceChain([_link(first, "arctic-shift"), _link(second)])

    with pytest.raises(HttpStatusError):
        chain.search_subreddit("gadgets", "plaud")
    assert chain.name == "arctic-shift" and second.calls == []


def test_concurrent_failures_are_recorded_once_and_every_call_is_answered() -> None:
    refused = TransportError("503 after the retries", status=503)
    first = Failing(error=refused)
    second = MemorySource(posts={("gadgets", f"t{n}"): POSTS[:1] for n in range(16)})
    chain = SourceChain([_link(first, "reddit-api"), _link(second)])

    with ThreadPoolExecutor(max_workers=8) as pool:
        pages = list(pool.map(lambda n: chain.search_subreddit("gadgets", f"t{n}"), range(16)))

    assert all(len(page.posts) == 1 for page in pages)
    statuses = chain.statuses()
    assert [s.status for s in statuses] == ["unreachable", "ok"]
    assert statuses[1].requests == 16 and chain.stats.requests == first.stats.requests + 16


def test_stats_add_up_every_source_for_the_fetch_report() -> None:
    first = Failing(error=TransportError("429", status=429), after=1, posts={("s", "t"): POSTS})
    second = MemorySource(posts={("s", "t"): POSTS})
    chain = SourceChain([_link(first, "arctic-shift"), _link(second)])
    list(paginate_search(chain, "s", "t", page_size=3, cap=6))
    assert chain.stats.requests == first.stats.requests + second.stats.requests == 1 + 1


# --- the probe ------------------------------------------------------------------------------------


def _probe(base_url: str) -> tuple[str, str, int]:
    with httpx.Client(base_url=base_url, timeout=5) as client:
        status = probe_arctic_shift(Settings(), http_client=client)
    return status.status, status.detail, status.requests


def test_the_probe_says_ok_when_arctic_shift_answers() -> None:
    with ArcticShiftServer() as server:
        assert _probe(server.base_url)[0] == "ok"
        assert [(r.path, r.params) for r in server.requests] == [
            ("/api/posts/ids", {"ids": "t3_1"})
        ]


@pytest.mark.parametrize(
    ("fault", "options", "expected"),
    [
        ("status", {"status": 403}, "auth_failed"),
        ("rate_limited", {}, "rate_limited"),
        ("status", {"status": 503}, "unreachable"),
    ],
)
def test_the_probe_names_each_way_of_not_answering(
    fault: str, options: dict[str, int], expected: str
) -> None:
    with ArcticShiftServer() as server:
        server.add_fault("/api/posts/ids", fault, **options)
        state, detail, requests = _probe(server.base_url)
    assert (state, requests) == (expected, 1)  # one attempt, never the retry policy
    assert "/api/posts/ids" in detail


def test_the_probe_of_a_dead_address_is_one_refused_connection(dead_port: int) -> None:
    settings = Settings(arctic_shift_base_url=f"http://127.0.0.1:{dead_port}")
    status = probe_arctic_shift(settings)
    assert (status.status, status.requests) == ("unreachable", 1)
    assert status.detail.startswith(f"127.0.0.1:{dead_port} refused the connection")
