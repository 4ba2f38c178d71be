"""The Amazon source through the real client against a local server speaking the Creators API.

Time is injected: the token clock and every retry sleep are a fake that tests move and read.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import structlog

from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    AuthError,
    ConfigError,
    HttpStatusError,
    ResponseError,
    RetryBudgetExceededError,
    TransportError,
)
from crowdsift.core.log import configure_logging
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import RelevanceVerdicts
from crowdsift.pipeline.gate.sources import fetch_amazon_tool
from crowdsift.sources.amazon import (
    RESOURCES,
    AmazonSource,
)
from crowdsift.sources.amazon_auth import AUTH_URLS, auth_url_for, authorization_value
from crowdsift.sources.amazon_items import marketplace_host
from tests.support.amazon_server import (
    COGNITO_TOKEN_PATH,
    LWA_TOKEN_PATH,
    SEARCH_PATH,
    AmazonCreatorsServer,
    product,
)

CRED_ID = "amzn-credential-id-1"
SECRET = "amz-secret-value-9f3c2e"
TAG = "crowdsift-20"
QUERY = "espresso grinder"

GRINDERS = [
    product(
        f"B0GRIND{n:03d}",
        f"Espresso grinder model {n}",
        features=[f"{40 + n} conical burrs", "stepless adjustment"],
        rating=4.0 + n / 10 if n % 2 == 0 else None,
        reviews=100 * n if n % 2 == 0 else None,
    )
    for n in range(10)
]


class FakeTime:
    """Wall-clock seconds that move only when a test or a retry sleep moves them."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def server() -> Iterator[AmazonCreatorsServer]:
    with AmazonCreatorsServer(
        credential_id=CRED_ID, credential_secret=SECRET, partner_tag=TAG
    ) as running:
        running.add_products(GRINDERS)
        yield running


def settings_for(server: AmazonCreatorsServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "amazon_credential_id": CRED_ID,
        "amazon_credential_secret": SECRET,
        "amazon_partner_tag": TAG,
        "amazon_api_base_url": server.base_url,
        "amazon_auth_url": server.auth_url,
        "max_retries": 3,
        "max_retry_wait": 60.0,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def make_source(
    server: AmazonCreatorsServer, fake_time: FakeTime
) -> Iterator[Callable[..., AmazonSource]]:
    built: list[AmazonSource] = []

    def make(**overrides: Any) -> AmazonSource:
        source = AmazonSource.from_settings(
            settings_for(server, **overrides), clock=fake_time.time, sleep=fake_time.sleep
        )
        built.append(source)
        return source

    yield make
    for source in built:
        source.close()


@pytest.fixture
def captured_log() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    yield stream
    structlog.reset_defaults()


def token_requests(server: AmazonCreatorsServer) -> list[Any]:
    return [r for r in server.requests if r.path in (COGNITO_TOKEN_PATH, LWA_TOKEN_PATH)]


def searches(server: AmazonCreatorsServer) -> list[Any]:
    return [r for r in server.requests if r.path == SEARCH_PATH]


def trace(server: AmazonCreatorsServer) -> list[tuple[str, int | None]]:
    return [(r.path, r.status) for r in server.requests]


# --- tokens -------------------------------------------------------------------------------


def test_token_grant_and_search_request_speak_the_protocol(server, make_source):
    items = make_source().search(QUERY, 5)
    assert [item.id for item in items] == [f"B0GRIND{n:03d}" for n in range(5)]
    [grant] = token_requests(server)
    assert grant.content_type == "application/x-www-form-urlencoded"
    assert grant.fields == {
        "grant_type": "client_credentials",
        "client_id": CRED_ID,
        "scope": "creatorsapi/default",
    }  # the secret was sent (the grant succeeded) but is never recorded
    [search] = searches(server)
    assert search.bearer and search.version == "2.1"
    assert search.marketplace == "www.amazon.com"
    assert search.content_type == "application/json; charset=utf-8"
    assert search.fields == {
        "partnerTag": TAG,
        "keywords": QUERY,
        "itemCount": 5,
        "resources": list(RESOURCES),
    }


def test_login_with_amazon_credentials_use_json_and_their_scope(fake_time):
    with AmazonCreatorsServer(
        credential_id=CRED_ID, credential_secret=SECRET, partner_tag=TAG, version="3.1"
    ) as lwa:
        lwa.add_products(GRINDERS)
        settings = settings_for(lwa, amazon_credential_version="3.1")
        source = AmazonSource.from_settings(settings, clock=fake_time.time, sleep=fake_time.sleep)
        try:
            assert len(source.search(QUERY, 3)) == 3
        finally:
            source.close()
        [grant] = token_requests(lwa)
        assert grant.path == LWA_TOKEN_PATH
        assert grant.content_type == "application/json"
        assert grant.fields["scope"] == "creatorsapi::default"
        [search] = searches(lwa)
        assert search.bearer and search.version is None  # 3.x: just "Bearer TOKEN"


def test_token_is_reused_across_searches(server, make_source):
    source = make_source()
    for _ in range(3):
        source.search(QUERY, 2)
    assert len(token_requests(server)) == 1
    assert len(searches(server)) == 3
    assert source.auth.token_requests == 1


def test_token_is_refreshed_30_seconds_before_it_expires(server, make_source, fake_time):
    source = make_source()
    source.search(QUERY, 1)
    fake_time.now += 3600 - 31  # 31 s left: still good
    source.search(QUERY, 1)
    assert len(token_requests(server)) == 1
    fake_time.now += 2  # 29 s left: inside the margin
    source.search(QUERY, 1)
    assert len(token_requests(server)) == 2
    assert [r.status for r in searches(server)] == [200, 200, 200]


def test_401_mid_session_refreshes_once_then_succeeds(server, make_source):
    source = make_source()
    source.search(QUERY, 1)
    server.reset_log()
    server.add_fault(SEARCH_PATH, "expire_token")
    assert len(source.search(QUERY, 2)) == 2
    assert trace(server) == [(SEARCH_PATH, 401), (COGNITO_TOKEN_PATH, 200), (SEARCH_PATH, 200)]


def test_401_after_a_fresh_token_is_an_auth_error_not_a_loop(server, make_source, fake_time):
    server.add_fault(SEARCH_PATH, "expire_token", times=5)
    with pytest.raises(AuthError) as info:
        make_source().search(QUERY, 2)
    assert "AMAZON_CREDENTIAL_ID" in str(info.value)
    assert "AMAZON_CREDENTIAL_SECRET" in str(info.value)
    assert len(token_requests(server)) == 2
    assert len(searches(server)) == 2
    assert fake_time.sleeps == []


def test_tokens_expired_on_the_server_are_replaced(server, make_source):
    source = make_source()
    source.search(QUERY, 1)
    server.expire_tokens()
    assert len(source.search(QUERY, 1)) == 1
    assert len(token_requests(server)) == 2


def test_concurrent_searches_share_one_token_request(server, make_source):
    source = make_source()
    counts: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        found = len(source.search(QUERY, 2))
        with lock:
            counts.append(found)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert counts == [2] * 6
    assert len(token_requests(server)) == 1


def test_bad_credentials_name_the_variables_without_the_secret(server, make_source, fake_time):
    with pytest.raises(AuthError) as info:
        make_source(amazon_credential_secret="wrong-secret-4242").search(QUERY, 2)
    message = str(info.value)
    assert "invalid_client" in message
    assert "AMAZON_CREDENTIAL_ID" in message and "AMAZON_CREDENTIAL_SECRET" in message
    assert "wrong-secret-4242" not in message
    assert [r.status for r in token_requests(server)] == [400]  # refused: not retried
    assert searches(server) == []
    assert fake_time.sleeps == []


def test_credentials_of_another_version_point_at_the_version_setting(fake_time):
    with AmazonCreatorsServer(
        credential_id=CRED_ID, credential_secret=SECRET, partner_tag=TAG, version="3.1"
    ) as lwa:
        source = AmazonSource.from_settings(
            settings_for(lwa, amazon_credential_version="2.1"), clock=fake_time.time
        )
        try:
            with pytest.raises(AuthError, match="AMAZON_CREDENTIAL_VERSION"):
                source.search(QUERY, 1)
        finally:
            source.close()
        assert token_requests(lwa)[0].fields["scope"] == "creatorsapi/default"


def test_token_endpoint_hiccup_is_retried(server, make_source, fake_time):
    server.add_fault(COGNITO_TOKEN_PATH, "status", code=503)
    assert len(make_source().search(QUERY, 1)) == 1
    assert trace(server) == [
        (COGNITO_TOKEN_PATH, 503),
        (COGNITO_TOKEN_PATH, 200),
        (SEARCH_PATH, 200),
    ]
    assert len(fake_time.sleeps) == 1


def test_auth_urls_follow_the_credential_version():
    assert auth_url_for("2.1") == AUTH_URLS["2.1"]
    assert "eu-south-2" in auth_url_for("2.2")
    assert auth_url_for("3.3") == "https://api.amazon.co.jp/auth/o2/token"
    assert auth_url_for("2.1", "http://127.0.0.1:9/token") == "http://127.0.0.1:9/token"
    with pytest.raises(ConfigError, match="AMAZON_CREDENTIAL_VERSION"):
        auth_url_for("9.9")
    assert authorization_value("tok", "2.3") == "Bearer tok, Version 2.3"
    assert authorization_value("tok", "3.2") == "Bearer tok"


# --- quota, retries and API errors --------------------------------------------------------


def test_429_honours_retry_after(server, make_source, fake_time):
    server.add_fault(SEARCH_PATH, "throttled", retry_after=7)
    source = make_source()
    assert len(source.search(QUERY, 2)) == 2
    assert fake_time.sleeps[0] >= 7.0
    assert fake_time.sleeps[0] < 7.0 + 1.0  # Retry-After, not a long backoff
    assert [r.status for r in searches(server)] == [429, 200]
    assert source.stats.retries == 1


def test_429_until_retries_run_out_says_amazon_is_throttling(server, make_source, fake_time):
    server.add_fault(SEARCH_PATH, "throttled", times=10)
    with pytest.raises(TransportError) as info:
        make_source(max_retries=2).search(QUERY, 2)
    assert info.value.status == 429
    assert "throttling" in str(info.value) and "TooManyRequests" in str(info.value)
    assert len(searches(server)) == 3
    assert len(fake_time.sleeps) == 2


@pytest.mark.parametrize(
    ("kind", "options"),
    [("status", {"code": 503}), ("status", {"code": 500, "body": "<html>oops</html>"}),
     ("truncated", {}), ("reset", {})],
)  # fmt: skip
def test_passing_server_trouble_is_retried(server, make_source, kind, options):
    server.add_fault(SEARCH_PATH, kind, **options)
    assert len(make_source().search(QUERY, 3)) == 3
    assert len(searches(server)) == 2


def test_the_retry_budget_caps_retries_across_requests(server, make_source):
    server.add_fault(SEARCH_PATH, "status", times=5, code=503)
    with pytest.raises(RetryBudgetExceededError):
        make_source(retry_budget=1).search(QUERY, 1)
    assert len(searches(server)) == 2


def test_invalid_partner_tag_is_a_clear_error_at_once(server, make_source, fake_time):
    with pytest.raises(HttpStatusError) as info:
        make_source(amazon_partner_tag="someone-else-21").search(QUERY, 2)
    assert info.value.status == 400
    assert "InvalidPartnerTag" in str(info.value) and "AMAZON_PARTNER_TAG" in str(info.value)
    assert len(searches(server)) == 1
    assert fake_time.sleeps == []


def test_errors_listed_in_an_errors_array_are_understood(server, make_source):
    body = {"errors": [{"code": "InvalidPartnerTag", "message": "tag not found"}]}
    server.add_fault(SEARCH_PATH, "status", code=400, body=body)
    with pytest.raises(HttpStatusError, match="AMAZON_PARTNER_TAG") as info:
        make_source().search(QUERY, 2)
    assert "tag not found" in str(info.value)


def test_a_wrong_marketplace_names_the_setting(server, make_source):
    with pytest.raises(HttpStatusError, match="AMAZON_MARKETPLACE") as info:
        make_source(amazon_marketplace="www.amazon.de").search(QUERY, 2)
    assert "InvalidParameterValue" in str(info.value)


def test_no_results_is_an_empty_list(server, make_source):
    source = make_source()
    assert source.search("zeppelin", 5) == []
    assert searches(server)[0].status == 404
    server.add_fault(SEARCH_PATH, "status", code=200, body={})
    assert source.search(QUERY, 5) == []
    assert source.stats.pages == 2
    assert source.search("   ", 5) == []
    assert len(searches(server)) == 2  # a blank query costs no request


@pytest.mark.parametrize("body", [[1, 2], {"searchResult": {"items": "nope"}}])
def test_a_body_of_the_wrong_shape_is_a_response_error(server, make_source, body):
    server.add_fault(SEARCH_PATH, "status", code=200, body=body)
    with pytest.raises(ResponseError, match="AMAZON_API_BASE_URL"):
        make_source().search(QUERY, 2)


# --- items as evidence --------------------------------------------------------------------


def test_items_become_evidence_with_canonical_urls(server, make_source):
    items = make_source().search(QUERY, 3)
    first = items[0]
    assert first.kind == "amazon"
    assert first.title == "Espresso grinder model 0"
    assert first.text == "40 conical burrs; stepless adjustment"
    assert first.where == "www.amazon.com"
    assert first.comments == []
    for item in items:
        assert str(item.url) == f"https://www.amazon.com/dp/{item.id}"
        assert TAG not in str(item.url) and "?" not in str(item.url)


def test_metrics_only_when_offered(server, make_source):
    server.add_products([product("B0KETTLE01", "Gooseneck kettle", reviews=12)])
    source = make_source()
    items = {item.id: item for item in source.search(QUERY, 3)}
    assert items["B0GRIND000"].metrics == {"rating": 4.0, "reviews": 0.0}
    assert items["B0GRIND002"].metrics == {"rating": 4.2, "reviews": 200.0}
    assert items["B0GRIND001"].metrics == {}
    [kettle] = source.search("kettle", 3)
    assert kettle.metrics == {"reviews": 12.0}


def test_malformed_items_are_skipped_counted_and_logged(server, make_source, captured_log):
    good = product("B0KETTLE01", "Gooseneck kettle", features=["1 litre"], rating=4.5)
    bad: list[Any] = [
        {"itemInfo": {"title": {"displayValue": "Kettle without asin"}}},
        {"asin": 12345, "itemInfo": {"title": {"displayValue": "Kettle numeric asin"}}},
        {"asin": "B0KETTLE02", "itemInfo": {"features": {"displayValues": ["kettle"]}}},
        {"asin": "B0KETTLE03", "itemInfo": "kettle"},
        product("B0KETTLE04", "Kettle", features=["ok"]) | {"customerReviews": {"count": "many"}},
        product("B0KETTLE05", "Kettle", rating=9.5),
        {"asin": "B0KETTLE06", "itemInfo": {"title": {"displayValue": "Kettle"},
                                            "features": {"displayValues": [1, 2]}}},
        "kettle",
    ]  # fmt: skip
    server.add_products([good, *bad, product("B0KETTLE07", "Electric kettle")])
    source = make_source()
    items = source.search("kettle", 10)
    assert [item.id for item in items] == ["B0KETTLE01", "B0KETTLE07"]
    assert source.stats.extra["skipped_items"] == len(bad)
    lines = [line for line in captured_log.getvalue().splitlines() if "amazon_item_skipped" in line]
    assert len(lines) == len(bad)
    assert any("no valid asin" in line for line in lines)
    assert any("no itemInfo.title.displayValue" in line for line in lines)
    assert any("starRating" in line for line in lines)


def test_marketplace_setting_is_normalised_or_refused():
    assert marketplace_host("https://www.amazon.de/") == "www.amazon.de"
    assert marketplace_host(" WWW.AMAZON.CO.UK ") == "www.amazon.co.uk"
    with pytest.raises(ConfigError, match="AMAZON_MARKETPLACE"):
        marketplace_host("amazon germany")


# --- credentials missing ------------------------------------------------------------------


def test_missing_credentials_skip_the_source_with_a_one_line_notice():
    engine = ScriptedEngine()
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=engine, settings=Settings()))
    assert result.skipped is not None and "\n" not in result.skipped
    for name in ("AMAZON_CREDENTIAL_ID", "AMAZON_CREDENTIAL_SECRET", "AMAZON_PARTNER_TAG"):
        assert name in result.skipped
    assert result.items == [] and result.errors == []
    assert engine.requests == []
    partial = Settings(amazon_credential_id="x", amazon_credential_secret="y-secret")
    skipped = asyncio.run(fetch_amazon_tool(QUERY, engine=engine, settings=partial)).skipped
    assert skipped is not None and "AMAZON_PARTNER_TAG" in skipped
    assert "AMAZON_CREDENTIAL_ID" not in skipped
    with pytest.raises(ConfigError) as info:
        AmazonSource.from_settings(partial)
    assert "AMAZON_PARTNER_TAG" in str(info.value)
    assert "AMAZON_CREDENTIAL_ID" not in str(info.value)


# --- the gated tool -----------------------------------------------------------------------


def judge_by_count(five: list[bool], ten: list[bool] | None = None) -> ScriptedEngine:
    def reply(task: Any) -> RelevanceVerdicts:
        n = len(task.items)
        return RelevanceVerdicts(relevant=five if n == 5 else (ten or [True] * n))

    return ScriptedEngine(function=reply)


def item_counts(server: AmazonCreatorsServer) -> list[int]:
    return [r.fields["itemCount"] for r in searches(server)]


def test_low_yield_on_a_full_page_refetches_ten_once(server, make_source):
    engine = judge_by_count([True, False, False, False, False], [True] * 6 + [False] * 4)
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=engine, source=make_source()))
    assert item_counts(server) == [5, 10]
    assert result.refetched and result.fetched == 10
    assert [item.id for item in result.items] == [f"B0GRIND{n:03d}" for n in range(6)]
    assert result.yield_ratio == pytest.approx(0.6)
    assert len(engine.requests) == 2


def test_good_yield_does_not_refetch(server, make_source):
    engine = judge_by_count([True, True, True, False, False])
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=engine, source=make_source()))
    assert item_counts(server) == [5]
    assert not result.refetched and len(result.items) == 3


def test_a_short_page_does_not_refetch(server, make_source):
    server.add_products([product("B0KETTLE01", "Gooseneck kettle")])
    engine = ScriptedEngine(function=lambda _task: RelevanceVerdicts(relevant=[False]))
    result = asyncio.run(fetch_amazon_tool("kettle", engine=engine, source=make_source()))
    assert item_counts(server) == [5]
    assert result.items == [] and result.fetched == 1 and not result.refetched


def test_a_failing_gate_fails_open(server, make_source):
    engine = ScriptedEngine()  # no reply queued: every judgement fails
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=engine, source=make_source()))
    assert result.failed_open and len(result.items) == 5
    assert item_counts(server) == [5]


def test_a_source_error_becomes_an_error_entry_not_an_exception(server, make_source):
    source = make_source(amazon_partner_tag="someone-else-21")
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=ScriptedEngine(), source=source))
    assert result.items == [] and result.skipped is None
    [error] = result.errors
    assert "AMAZON_PARTNER_TAG" in error and SECRET not in error


def test_a_failed_refetch_keeps_the_first_page(server, make_source):
    five = [True, True, False, False, False]

    def reply(_task: Any) -> RelevanceVerdicts:
        server.add_fault(SEARCH_PATH, "throttled", times=5)  # the refetch will be throttled
        return RelevanceVerdicts(relevant=five)

    source = make_source(max_retries=0)
    result = asyncio.run(
        fetch_amazon_tool(QUERY, engine=ScriptedEngine(function=reply), source=source)
    )
    assert item_counts(server) == [5, 10]
    assert [item.id for item in result.items] == ["B0GRIND000", "B0GRIND001"]
    [error] = result.errors
    assert "429" in error


def test_unknown_credential_version_is_reported_not_raised(server):
    settings = settings_for(server, amazon_credential_version="9.9", amazon_auth_url=None)
    result = asyncio.run(fetch_amazon_tool(QUERY, engine=ScriptedEngine(), settings=settings))
    [error] = result.errors
    assert "AMAZON_CREDENTIAL_VERSION" in error


def test_tool_builds_from_the_environment_with_the_local_engine(server, monkeypatch):
    for name, value in {
        "AMAZON_CREDENTIAL_ID": CRED_ID,
        "AMAZON_CREDENTIAL_SECRET": SECRET,
        "AMAZON_PARTNER_TAG": TAG,
        "AMAZON_API_BASE_URL": server.base_url,
        "AMAZON_AUTH_URL": server.auth_url,
    }.items():
        monkeypatch.setenv(name, value)
    engine = LocalEngine(HashingEmbedder())
    result = asyncio.run(fetch_amazon_tool("espresso grinder burrs", engine=engine))
    assert result.errors == [] and result.skipped is None
    assert result.items and all(item.kind == "amazon" for item in result.items)
    assert item_counts(server)[0] == 5


# --- secrets ------------------------------------------------------------------------------


def test_secrets_never_reach_logs_errors_or_the_server_log(server, make_source, captured_log):
    errors: list[str] = []
    with pytest.raises(AuthError) as refused:
        make_source(amazon_credential_secret="wrong-" + SECRET).search(QUERY, 1)
    errors.append(str(refused.value))
    source = make_source()
    source.search(QUERY, 2)
    server.add_fault(SEARCH_PATH, "expire_token")
    source.search(QUERY, 2)
    server.add_fault(SEARCH_PATH, "expire_token", times=4)
    with pytest.raises(AuthError) as rejected:
        source.search(QUERY, 2)
    errors.append(str(rejected.value))
    errors.append(repr(source.auth))
    tokens = server.issued_tokens
    assert len(tokens) == 3  # the refused grant issued none
    recorded = repr(server.requests)
    logged = captured_log.getvalue()
    assert "amazon_token_acquired" in logged  # the log was really captured
    for secret in [SECRET, *tokens]:
        assert secret not in logged
        assert secret not in recorded
        assert all(secret not in error for error in errors)


def test_fake_server_insists_on_the_version_in_the_authorization_header(server, make_source):
    make_source().search(QUERY, 1)
    [token] = server.issued_tokens
    with httpx.Client(base_url=server.base_url, timeout=5) as client:
        headers = {"Authorization": f"Bearer {token}", "x-marketplace": "www.amazon.com"}
        response = client.post(SEARCH_PATH, json={"partnerTag": TAG}, headers=headers)
    assert response.status_code == 401
    assert response.json()["reason"] == "InvalidVersion"
