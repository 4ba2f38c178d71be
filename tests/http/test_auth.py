"""RedditOAuth against the real local token endpoint: grants, caching, refresh, failures."""

from __future__ import annotations

import threading

import httpx
import pytest

from crowdsift.core.errors import AuthError
from crowdsift.http.transport import HttpTransport
from tests.support.reddit_server import RedditProtocolServer

SEARCH = "/r/python/search"
TOKEN_PATH = "/api/v1/access_token"


def token_requests(server):
    return [r for r in server.requests if r.path == TOKEN_PATH]


def get(client: httpx.Client) -> httpx.Response:
    return client.get(SEARCH, params={"q": "ducks"})


def client_for(server, auth) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, auth=auth, timeout=5, follow_redirects=False)


def test_client_credentials_grant_and_bearer_header(reddit_client, reddit_server):
    response = get(reddit_client)
    assert response.status_code == 200
    assert response.request.headers["Authorization"].startswith("bearer ")
    grants = token_requests(reddit_server)
    assert [r.params for r in grants] == [{"grant_type": "client_credentials"}]
    assert reddit_server.requests[-1].bearer is True


def test_password_grant_for_a_script_app(make_oauth, fake_time):
    with RedditProtocolServer(
        client_id="script-app", client_secret="script-secret", username="alice", password="pw-1234"
    ) as server:
        server.add_posts("python", [])
        auth = make_oauth(
            client_id="script-app",
            client_secret="script-secret",
            username="alice",
            password="pw-1234",
        )
        auth.auth_url = server.auth_url
        with client_for(server, auth) as client:
            assert get(client).status_code == 200
        grants = token_requests(server)
        assert [r.params for r in grants] == [{"grant_type": "password", "username": "alice"}]
        assert all("pw-1234" not in str(r) for r in server.requests)


def test_token_is_cached_until_shortly_before_expiry(reddit_client, reddit_server, fake_time):
    for _ in range(3):
        assert get(reddit_client).status_code == 200
    assert len(token_requests(reddit_server)) == 1
    fake_time.now += 3600 - 61  # still more than 60 s left
    get(reddit_client)
    assert len(token_requests(reddit_server)) == 1
    fake_time.now += 2  # now inside the 60 s margin
    get(reddit_client)
    assert len(token_requests(reddit_server)) == 2


def test_401_after_expiry_refreshes_once_and_retries_once(reddit_client, reddit_server):
    get(reddit_client)
    reddit_server.reset_log()
    reddit_server.add_fault(SEARCH, "expire_token")
    response = get(reddit_client)
    assert response.status_code == 200
    assert [(r.path, r.status) for r in reddit_server.requests] == [
        (SEARCH, 401),
        (TOKEN_PATH, 200),
        (SEARCH, 200),
    ]


def test_a_second_401_is_returned_not_looped(reddit_client, reddit_server):
    reddit_server.add_fault(SEARCH, "expire_token", times=5)
    response = get(reddit_client)
    assert response.status_code == 401
    assert len(token_requests(reddit_server)) == 2
    assert len([r for r in reddit_server.requests if r.path == SEARCH]) == 2


def test_concurrent_requests_share_one_token_request(reddit_client, reddit_server):
    statuses: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        status = get(reddit_client).status_code
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 8
    assert len(token_requests(reddit_server)) == 1


def auth_error(server, auth) -> AuthError:
    with client_for(server, auth) as client, pytest.raises(AuthError) as info:
        get(client)
    return info.value


def test_wrong_client_secret_names_the_client_settings(reddit_server, make_oauth):
    error = auth_error(reddit_server, make_oauth(client_secret="wrong-secret-value"))
    message = str(error)
    assert "401" in message
    assert "REDDIT_CLIENT_ID" in message and "REDDIT_CLIENT_SECRET" in message
    assert "wrong-secret-value" not in message
    assert reddit_server.auth_url in message


def test_password_grant_on_a_non_script_app_is_unauthorized_client(reddit_server, make_oauth):
    error = auth_error(reddit_server, make_oauth(username="bob", password="bob-password"))
    message = str(error)
    assert "unauthorized_client" in message
    assert "REDDIT_USERNAME" in message and "REDDIT_CLIENT_ID" in message
    assert "bob-password" not in message


def test_wrong_password_is_invalid_grant(make_oauth):
    with RedditProtocolServer(
        client_id="transport-client",
        client_secret="s3cr3t-transport-value",
        username="alice",
        password="right-password",
    ) as server:
        auth = make_oauth(username="alice", password="wrong-password")
        auth.auth_url = server.auth_url
        message = str(auth_error(server, auth))
    assert "invalid_grant" in message
    assert "REDDIT_USERNAME" in message and "REDDIT_PASSWORD" in message
    assert "wrong-password" not in message


@pytest.mark.parametrize(
    "body", [{"error": 400}, {"message": "Bad Request", "error": 400}, {"error": "unsupported"}]
)
def test_other_token_errors_name_the_client_settings(reddit_server, reddit_oauth, body):
    reddit_server.add_fault(TOKEN_PATH, "status", code=200, body=body)
    message = str(auth_error(reddit_server, reddit_oauth))
    assert "REDDIT_CLIENT_ID" in message and "REDDIT_CLIENT_SECRET" in message
    assert "--source archive" in message


def test_token_endpoint_answering_html_is_an_auth_error(reddit_server, reddit_oauth):
    reddit_server.add_fault(TOKEN_PATH, "status", code=200, body="<html>login</html>")
    assert "REDDIT_AUTH_URL" in str(auth_error(reddit_server, reddit_oauth))


def test_token_endpoint_outage_is_retried_by_the_transport(reddit_client, reddit_server, fake_time):
    reddit_server.add_fault(TOKEN_PATH, "status", times=2, code=503)
    transport = HttpTransport(reddit_client, source="reddit-api", sleep=fake_time.sleep)
    body = transport.get_json(SEARCH, {"q": "ducks"})
    assert body["kind"] == "Listing"
    assert [r.status for r in token_requests(reddit_server)] == [503, 503, 200]
    assert transport.stats.retries == 2


def test_repr_hides_the_secret(reddit_oauth, reddit_client_secret):
    assert reddit_client_secret not in repr(reddit_oauth)
    assert "transport-client" in repr(reddit_oauth)


def test_token_request_dropped_mid_way_releases_the_refresh_lock(
    reddit_client, reddit_server, fake_time
):
    reddit_server.add_fault(TOKEN_PATH, "reset")
    transport = HttpTransport(reddit_client, source="reddit-api", sleep=fake_time.sleep)
    done = threading.Event()

    def call() -> None:
        transport.get_json(SEARCH, {"q": "ducks"})
        done.set()

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done.is_set(), "the retry after a dropped token request deadlocked"
    assert [r.status for r in token_requests(reddit_server)] == [None, 200]
