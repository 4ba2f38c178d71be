"""Subreddit discovery: the emulator's ``/api/subreddits/search`` and ``search_subreddits``.

The endpoint's documentation is thin; the semantics checked here are the ones the emulator's
module notes state (exact ``subreddit``, ``subreddit_prefix``, ``limit`` 1-1000, most
subscribers first, unknown parameters a 400). The client runs over HTTP against the local
server with sleeps recorded, never waited for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from crowdsift.core.errors import ResponseError, SourceError
from crowdsift.http.transport import HttpTransport
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.arctic_shift_params import SUBREDDITS_PATH, check
from tests.sources.reddit.test_arctic_shift import NOW_TS, Harness, make_post

SLOW_DOWN = "Timeout. Maybe slow down a bit"


def about(name: str, subscribers: int, **extra: Any) -> dict[str, Any]:
    item = {
        "display_name": name,
        "title": f"The {name} community",
        "public_description": f"Everything about {name}.",
        "subscribers": subscribers,
        "over18": False,
        "created_utc": 1_300_000_000,
    }
    item.update(extra)
    return item


DIRECTORY = [
    about("LocalLLaMA", 500_000, lang="en"),
    about("localization", 4_000),
    about("LocalGoverning", 4_000),
    about("Locksmith", 90_000),
    about("buildapc", 7_000_000),
    about("homeautomation", 2_000_000),
]


@pytest.fixture
def arctic() -> Iterator[Harness]:
    harness = Harness()
    harness.server.add_subreddits(DIRECTORY)
    with harness.server:
        try:
            yield harness
        finally:
            harness.close()


def get(harness: Harness, params: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=harness.server.base_url) as client:
        return client.get(SUBREDDITS_PATH, params=params)


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["display_name"] for item in response.json()["data"]]


def subreddit_requests(harness: Harness) -> list[dict[str, str]]:
    return [r.params for r in harness.server.requests if r.path == SUBREDDITS_PATH]


# --- the emulated endpoint ------------------------------------------------------------------


def test_prefix_matches_case_insensitively_most_subscribers_first(arctic: Harness) -> None:
    response = get(arctic, {"subreddit_prefix": "LOCAL"})
    # ties (4000) by name, case-insensitively: "LocalGoverning" < "localization"
    assert names(response) == ["LocalLLaMA", "LocalGoverning", "localization"]


def test_prefix_answers_the_stored_about_dicts_whole(arctic: Harness) -> None:
    response = get(arctic, {"subreddit_prefix": "localll"})
    assert response.json() == {"data": [DIRECTORY[0]]}


@pytest.mark.parametrize("name", ["LocalLLaMA", "localllama", "r/LocalLLaMA", "/r/localllama"])
def test_subreddit_is_an_exact_case_insensitive_match(arctic: Harness, name: str) -> None:
    assert names(get(arctic, {"subreddit": name})) == ["LocalLLaMA"]


def test_subreddit_is_not_a_prefix_and_unknown_names_are_empty(arctic: Harness) -> None:
    assert names(get(arctic, {"subreddit": "local"})) == []
    assert names(get(arctic, {"subreddit": "nosuchplace"})) == []
    assert names(get(arctic, {"subreddit_prefix": "zzz"})) == []


def test_subreddit_and_prefix_together_must_both_hold(arctic: Harness) -> None:
    assert names(get(arctic, {"subreddit": "Locksmith", "subreddit_prefix": "lock"})) == [
        "Locksmith"
    ]
    assert names(get(arctic, {"subreddit": "Locksmith", "subreddit_prefix": "local"})) == []


def test_limit_defaults_to_25_and_reaches_1000(arctic: Harness) -> None:
    arctic.server.add_subreddits(about(f"bulk{i:04d}", 10_000 - i) for i in range(1100))
    assert len(names(get(arctic, {"subreddit_prefix": "bulk"}))) == 25
    top = names(get(arctic, {"subreddit_prefix": "bulk", "limit": "1000"}))
    assert len(top) == 1000
    assert top[:2] == ["bulk0000", "bulk0001"]
    assert names(get(arctic, {"subreddit_prefix": "bulk", "limit": "1"})) == ["bulk0000"]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"subreddit_prefix": "loc", "limit": "0"}, "Invalid limit"),
        ({"subreddit_prefix": "loc", "limit": "1001"}, "Invalid limit"),
        ({"subreddit_prefix": "loc", "limit": "auto"}, "Invalid limit"),
        ({"subreddit_prefix": "loc", "fields": "display_name"}, "Unknown parameter: fields"),
        ({"subreddit_prefix": "loc", "query": "llama"}, "Unknown parameter: query"),
        ({}, "subreddit or subreddit_prefix is required"),
        ({"subreddit_prefix": ""}, "subreddit or subreddit_prefix is required"),
        ({"subreddit": " r/"}, "subreddit or subreddit_prefix is required"),
        ({"limit": "5"}, "subreddit or subreddit_prefix is required"),
    ],
)
def test_endpoint_refuses_bad_requests_with_the_error_envelope(
    arctic: Harness, params: dict[str, str], error: str
) -> None:
    response = get(arctic, params)
    assert response.status_code == 400
    assert response.json()["data"] is None
    assert error in response.json()["error"]


def test_add_subreddits_replaces_by_name_and_needs_one(arctic: Harness) -> None:
    arctic.server.add_subreddits([about("LOCALLLAMA", 1, title="renamed")])
    data = get(arctic, {"subreddit": "localllama"}).json()["data"]
    assert [(d["display_name"], d["title"]) for d in data] == [("LOCALLLAMA", "renamed")]
    with pytest.raises(ValueError, match="display_name"):
        arctic.server.add_subreddits([{"title": "nameless"}])


def test_a_post_moved_to_another_subreddit_leaves_the_old_ones_index(arctic: Harness) -> None:
    arctic.server.add_posts("Old", [make_post("p1", NOW_TS - 5, "Cast iron", subreddit="Old")])
    arctic.server.add_posts("New", [make_post("p1", NOW_TS - 5, "Cast iron", subreddit="New")])
    with httpx.Client(base_url=arctic.server.base_url) as client:
        old = client.get("/api/posts/search", params={"subreddit": "old", "query": "iron"})
        new = client.get("/api/posts/search", params={"subreddit": "r/NEW", "query": "iron"})
        every = client.get("/api/posts/search", params={"author": "user_p1"})
    assert old.json()["data"] == []
    assert [p["subreddit"] for p in new.json()["data"]] == ["New"]
    assert [p["id"] for p in every.json()["data"]] == ["p1"]


# --- the client ------------------------------------------------------------------------------


def test_client_prefix_search_end_to_end(arctic: Harness) -> None:
    found = arctic.source().search_subreddits(prefix="Local")

    assert [s["display_name"] for s in found] == ["LocalLLaMA", "LocalGoverning", "localization"]
    assert found[0] == DIRECTORY[0]  # the raw about-dict, every field kept
    assert subreddit_requests(arctic) == [{"subreddit_prefix": "Local", "limit": "1000"}]


def test_client_name_search_drops_r_slash_and_sends_no_fields(arctic: Harness) -> None:
    found = arctic.source().search_subreddits(name=" r/localllama ", limit=3)

    assert [s["display_name"] for s in found] == ["LocalLLaMA"]
    assert subreddit_requests(arctic) == [{"subreddit": "localllama", "limit": "3"}]


@pytest.mark.parametrize(("limit", "sent"), [(0, "1"), (-5, "1"), (1000, "1000"), (5000, "1000")])
def test_client_clamps_limit(arctic: Harness, limit: int, sent: str) -> None:
    arctic.source().search_subreddits(prefix="lo", limit=limit)
    assert subreddit_requests(arctic)[-1]["limit"] == sent


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"prefix": "lo", "name": "LocalLLaMA"}, {"prefix": ""}, {"name": "  "}, {"name": "r/"}],
)
def test_client_refuses_bad_arguments_without_a_request(
    arctic: Harness, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match="exactly one non-empty prefix= or name="):
        arctic.source().search_subreddits(**kwargs)
    assert arctic.server.requests == []


def test_client_turns_an_error_envelope_into_a_response_error(arctic: Harness) -> None:
    arctic.server.add_fault(SUBREDDITS_PATH, "api_error", status=400, message="Bad param x")
    with pytest.raises(ResponseError, match=r"/api/subreddits/search.*Bad param x"):
        arctic.source().search_subreddits(prefix="loc")
    assert len(subreddit_requests(arctic)) == 1


@pytest.mark.parametrize("status", [200, 422])
def test_client_query_timeout_backs_off_and_halves_the_limit(arctic: Harness, status: int) -> None:
    arctic.server.add_fault(SUBREDDITS_PATH, "api_error", status=status, message=SLOW_DOWN)
    source = arctic.source(budget=5)

    found = source.search_subreddits(prefix="loc")

    assert len(found) == 4
    assert [r["limit"] for r in subreddit_requests(arctic)] == ["1000", "500"]
    assert arctic.sleeps == [0.5]
    assert source.stats.extra["timeout_retries"] == 1


def test_client_waits_out_a_429_and_retries(arctic: Harness) -> None:
    arctic.server.add_fault(SUBREDDITS_PATH, "rate_limited", retry_after=7)

    found = arctic.source().search_subreddits(name="buildapc")

    assert [s["display_name"] for s in found] == ["buildapc"]
    assert len(subreddit_requests(arctic)) == 2
    assert arctic.sleeps and arctic.sleeps[0] >= 7


def test_client_keeps_dicts_and_unwraps_t5_wrappers_only() -> None:
    data = [
        {"kind": "t5", "data": {"display_name": "a"}},
        {"kind": "t3", "data": {"display_name": "post"}},
        "junk",
        {"display_name": "b"},
    ]

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": data})

    with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://as") as client:
        source = ArcticShiftSource(HttpTransport(client, source="arctic-shift"))
        found = source.search_subreddits(prefix="x")
    assert found == [{"display_name": "a"}, {"display_name": "b"}]


@pytest.mark.parametrize(
    ("params", "what"),
    [
        ({"subreddit_prefix": "lo", "fields": "display_name"}, "fields is not a parameter"),
        ({"subreddit_prefix": "lo", "subreddit": "LocalLLaMA"}, "exactly one"),
        ({"subreddit_prefix": " "}, "exactly one"),
        ({"limit": 5}, "exactly one"),
        ({"subreddit": "x", "limit": 1001}, "limit must be 1-1000"),
        ({"subreddit": "x", "limit": 0}, "limit must be 1-1000"),
    ],
)
def test_check_refuses_what_the_endpoint_refuses(params: dict[str, str | int], what: str) -> None:
    with pytest.raises(SourceError, match=what):
        check(SUBREDDITS_PATH, params)


def test_check_passes_what_the_client_sends() -> None:
    check(SUBREDDITS_PATH, {"subreddit_prefix": "lo", "limit": 1000})
    check(SUBREDDITS_PATH, {"subreddit": "LocalLLaMA", "limit": 1})
