"""HttpTransport against a real local server speaking Reddit's protocol; sleeps are recorded."""

from __future__ import annotations

import pytest

from crowdsift.core.errors import HttpStatusError, RetryBudgetExceededError, TransportError
from crowdsift.http.json_body import safe_params
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.retry import RetryBudget
from crowdsift.http.transport import HttpTransport

SEARCH = "/r/python/search"
QUERY = {"q": "ducks", "limit": 2}


@pytest.fixture
def transport(reddit_client, fake_time):
    return HttpTransport(reddit_client, source="reddit-api", max_retries=3, sleep=fake_time.sleep)


def api_requests(server):
    return [r for r in server.requests if r.path != "/api/v1/access_token"]


def test_returns_parsed_json_and_counts_requests(transport, reddit_server):
    body = transport.get_json(SEARCH, QUERY)
    assert body["kind"] == "Listing"
    assert [c["data"]["id"] for c in body["data"]["children"]] == ["p0", "p1"]
    assert transport.stats.requests == 1
    assert transport.stats.retries == 0
    assert api_requests(reddit_server)[0].params == {"q": "ducks", "limit": "2"}


def test_absolute_urls_work_too(transport, reddit_server):
    body = transport.get_json(reddit_server.base_url + SEARCH, QUERY)
    assert body["data"]["after"] == "t3_p1"


def test_rate_limited_with_retry_after_and_an_html_body(transport, reddit_server, fake_time):
    reddit_server.add_fault(SEARCH, "rate_limited", retry_after=7)
    body = transport.get_json(SEARCH, QUERY)
    assert body["kind"] == "Listing"
    assert 7.0 in fake_time.sleeps
    assert [r.status for r in api_requests(reddit_server)] == [429, 200]
    assert transport.stats.retries == 1


def test_a_burst_of_server_errors_then_success(transport, reddit_server, fake_time):
    reddit_server.add_fault(SEARCH, "status", times=3, code=503)
    body = transport.get_json(SEARCH, QUERY)
    assert body["kind"] == "Listing"
    assert [r.status for r in api_requests(reddit_server)] == [503, 503, 503, 200]
    assert len(fake_time.sleeps) == 3
    assert fake_time.sleeps[0] < fake_time.sleeps[2]  # backoff grows


def test_truncated_json_then_success(transport, reddit_server):
    reddit_server.add_fault(SEARCH, "truncated")
    body = transport.get_json(SEARCH, QUERY)
    assert len(body["data"]["children"]) == 2
    assert [r.status for r in api_requests(reddit_server)] == [200, 200]
    assert transport.stats.retries == 1


def test_a_connection_closed_without_answer_is_retried(transport, reddit_server):
    reddit_server.add_fault(SEARCH, "reset", times=2)
    body = transport.get_json(SEARCH, QUERY)
    assert body["kind"] == "Listing"
    assert transport.stats.retries == 2


def test_retries_exhausted_names_url_and_status(transport, reddit_server, fake_time):
    reddit_server.add_fault(SEARCH, "status", times=10, code=502)
    with pytest.raises(TransportError) as info:
        transport.get_json(SEARCH, {"q": "ducks", "access_token": "never-shown"})
    error = info.value
    assert type(error) is TransportError
    assert error.status == 502
    assert error.url == reddit_server.base_url + SEARCH
    assert "502" in str(error) and SEARCH in str(error)
    assert "never-shown" not in str(error)
    assert "4 attempts" in str(error)
    assert len(fake_time.sleeps) == 3  # max_retries=3


def test_retries_exhausted_on_connection_resets(transport, reddit_server):
    reddit_server.add_fault(SEARCH, "reset", times=10)
    with pytest.raises(TransportError) as info:
        transport.get_json(SEARCH, QUERY)
    assert info.value.status is None
    assert "RemoteProtocolError" in str(info.value)


def test_budget_shared_across_requests_runs_out(reddit_client, reddit_server, fake_time):
    budget = RetryBudget(3)
    first = HttpTransport(reddit_client, source="reddit-api", budget=budget, sleep=fake_time.sleep)
    second = HttpTransport(reddit_client, source="reddit-api", budget=budget, sleep=fake_time.sleep)
    reddit_server.add_fault(SEARCH, "status", times=2, code=500)
    first.get_json(SEARCH, QUERY)  # two retries spent
    reddit_server.add_fault(SEARCH, "status", times=5, code=500)
    with pytest.raises(RetryBudgetExceededError) as info:
        second.get_json(SEARCH, QUERY)
    assert budget.spent == 3
    assert info.value.status == 500
    assert "CROWDSIFT_RETRY_BUDGET" in str(info.value)
    assert len(api_requests(reddit_server)) == 3 + 2  # 3 from first, 2 from second


@pytest.mark.parametrize("status", [400, 403, 404])
def test_non_retryable_statuses_raise_at_once_with_the_body(transport, reddit_server, status):
    body = {"reason": "private", "message": "Forbidden", "error": status}
    reddit_server.add_fault(SEARCH, "status", code=status, body=body)
    with pytest.raises(HttpStatusError) as info:
        transport.get_json(SEARCH, QUERY)
    assert info.value.status == status
    assert info.value.body == body
    assert SEARCH in str(info.value)
    assert len(api_requests(reddit_server)) == 1


def test_redirects_are_not_followed(transport, reddit_server):
    with pytest.raises(HttpStatusError) as info:
        transport.get_json("/r/nosuchsub/search", QUERY)
    assert info.value.status == 302
    assert "/subreddits/search" in str(info.value)
    assert [r.path for r in api_requests(reddit_server)] == ["/r/nosuchsub/search"]


def test_html_error_body_does_not_crash(transport, reddit_server):
    reddit_server.add_fault(SEARCH, "status", code=403, body="<html>blocked</html>")
    with pytest.raises(HttpStatusError) as info:
        transport.get_json(SEARCH, QUERY)
    assert info.value.body is None


def test_rate_limit_headers_drive_waits(reddit_client, reddit_server, fake_time):
    limiter = RateLimiter(clock=fake_time.monotonic, sleep=fake_time.sleep)
    transport = HttpTransport(
        reddit_client, source="reddit-api", rate_limiter=limiter, sleep=fake_time.sleep
    )
    reddit_server.set_ratelimit(remaining=1, reset=30)
    transport.get_json(SEARCH, QUERY)  # answers remaining 0.0, reset ~30
    assert fake_time.sleeps == []
    reddit_server.set_ratelimit(remaining=600, reset=600)
    transport.get_json(SEARCH, QUERY)
    assert len(fake_time.sleeps) == 1
    assert 28 <= fake_time.sleeps[0] <= 30


def test_fresh_rate_limit_headers_add_no_wait(reddit_client, fake_time):
    limiter = RateLimiter(clock=fake_time.monotonic, sleep=fake_time.sleep)
    transport = HttpTransport(
        reddit_client, source="reddit-api", rate_limiter=limiter, sleep=fake_time.sleep
    )
    for _ in range(5):
        transport.get_json(SEARCH, QUERY)
    assert fake_time.sleeps == []
    assert limiter.remaining == pytest.approx(595.0)


def test_one_http_request_event_per_attempt(transport, reddit_server, captured_log):
    reddit_server.add_fault(SEARCH, "status", code=500)
    transport.get_json(SEARCH, {"q": "ducks", "limit": 2, "api_key": "abcdef"})
    lines = [
        line for line in captured_log.getvalue().splitlines() if "event='http_request'" in line
    ]
    assert len(lines) == 2
    assert "status=500" in lines[0] and "attempt=1" in lines[0]
    assert "status=200" in lines[1] and "attempt=2" in lines[1]
    for line in lines:
        assert "source='reddit-api'" in line
        assert "method='GET'" in line
        assert f"path='{SEARCH}'" in line
        assert "duration_ms=" in line
        assert "'q': 'ducks'" in line
        assert "abcdef" not in line and "api_key" not in line


def test_secret_and_token_never_reach_the_log(
    reddit_client, reddit_server, reddit_oauth, reddit_client_secret, fake_time, captured_log
):
    transport = HttpTransport(reddit_client, source="reddit-api", sleep=fake_time.sleep)
    reddit_server.add_fault(SEARCH, "expire_token")
    reddit_server.add_fault(SEARCH, "status", code=503)
    transport.get_json(SEARCH, QUERY)
    token = reddit_oauth._token
    assert token
    output = captured_log.getvalue()
    assert "oauth_token_acquired" in output and "http_request" in output
    assert reddit_client_secret not in output
    assert token not in output
    assert "bearer " + token not in output.lower()


def test_safe_params_drops_secret_names_and_clips_long_values():
    params = {"q": "x" * 500, "access_token": "t", "client_secret": "s", "limit": 5}
    safe = safe_params(params)
    assert set(safe) == {"q", "limit"}
    assert len(str(safe["q"])) < 130


def test_a_retry_after_beyond_the_wait_cap_fails_at_once_and_says_when(
    reddit_client, reddit_server, fake_time
):
    """Retrying before the server's Retry-After would ignore it; sleeping an hour would hang
    the fetch: one request, no sleep, no retry spent, and an error that says what to do."""
    budget = RetryBudget(5)
    transport = HttpTransport(
        reddit_client,
        source="reddit-api",
        max_retries=3,
        max_retry_wait=60,
        budget=budget,
        sleep=fake_time.sleep,
    )
    reddit_server.add_fault(SEARCH, "rate_limited", retry_after=3600)
    with pytest.raises(TransportError) as info:
        transport.get_json(SEARCH, QUERY)
    assert [r.status for r in api_requests(reddit_server)] == [429]
    assert fake_time.sleeps == []
    assert budget.spent == 0
    message = str(info.value)
    assert info.value.status == 429
    assert "3600 s" in message and "CROWDSIFT_MAX_RETRY_WAIT" in message and "UTC" in message


def test_a_retry_after_within_the_cap_is_waited_in_full(reddit_client, reddit_server, fake_time):
    transport = HttpTransport(
        reddit_client, source="reddit-api", max_retry_wait=60, sleep=fake_time.sleep
    )
    reddit_server.add_fault(SEARCH, "rate_limited", retry_after=60)
    assert transport.get_json(SEARCH, QUERY)["kind"] == "Listing"
    assert fake_time.sleeps == [60.0]
