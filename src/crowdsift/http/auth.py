"""Reddit OAuth as an ``httpx.Auth``: fetch a token, cache it, refresh it once on a 401.

``auth_flow`` yields the token request itself (HTTP Basic ``client_id:client_secret`` and a
``client_credentials`` or ``password`` grant), so the whole dance runs through the injected
client and is testable against a local server with no network. The token is cached until 60 s
before ``expires_in``; an API 401 (token revoked or expired early) triggers exactly one refresh
and one resend.

The refresh happens under a lock held across the token request: when several fetcher threads
find the token stale at once, one fetches and the others reuse its token. (Holding a lock across
``yield`` is safe for the sync client: httpx drives the generator on the calling thread and
closes it on every exit path.)

A 5xx/429 from the token endpoint is not an auth failure: the flow hands that response back
as the answer, so the transport retries it like any other server hiccup. Every other token
failure raises ``AuthError`` naming the settings to fix. The secret never enters a message.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import httpx

from crowdsift.core.errors import AuthError
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.http.json_body import json_or_none, positive_seconds

log = get_logger(__name__)

EXPIRY_MARGIN = 60.0
"""Refresh this many seconds before Reddit says the token expires."""

_CLIENT_SETTINGS = "REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET"
_USER_SETTINGS = "REDDIT_USERNAME and REDDIT_PASSWORD"
_ALTERNATIVE = "or use --source archive / --source arctic-shift, which need no Reddit key"


class RedditOAuth(httpx.Auth):
    """Bearer-token auth for oauth.reddit.com (app-only, or password grant for script apps)."""

    requires_response_body = True  # the token response is read inside the flow

    def __init__(
        self,
        *,
        auth_url: str,
        client_id: str,
        client_secret: str,
        user_agent: str,
        username: str | None = None,
        password: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.auth_url = auth_url
        self.client_id = client_id
        self.user_agent = user_agent
        self.username = username
        self._secret = client_secret
        self._password = password
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0
        self.token_requests = 0
        register_secrets([client_secret, password or ""])

    @property
    def grant_type(self) -> str:
        return "password" if self.username and self._password else "client_credentials"

    def __repr__(self) -> str:  # never show the secret, even in a debugger or a traceback
        return f"RedditOAuth(client_id={self.client_id!r}, grant_type={self.grant_type!r})"

    # --- the flow -----------------------------------------------------------------------

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = yield from self._token_for(stale=None)
        if token is None:  # the token endpoint had a transient failure: that is the answer
            return
        request.headers["Authorization"] = f"bearer {token}"
        response = yield request
        if response.status_code != 401:
            return
        log.info("oauth_token_rejected", url=str(request.url.copy_with(query=None)))
        token = yield from self._token_for(stale=token)
        if token is None:
            return
        request.headers["Authorization"] = f"bearer {token}"
        yield request

    def _token_for(
        self, *, stale: str | None
    ) -> Generator[httpx.Request, httpx.Response, str | None]:
        """A valid token, fetching one unless another thread already replaced ``stale``."""
        with self._lock:
            if self._token is not None and self._token != stale and self._valid():
                return self._token
            self.token_requests += 1
            response = yield self._token_request()
            return self._accept(response)

    def _valid(self) -> bool:
        return self._clock() < self._expires_at

    def _token_request(self) -> httpx.Request:
        basic = base64.b64encode(f"{self.client_id}:{self._secret}".encode()).decode("ascii")
        form = {"grant_type": self.grant_type}
        if self.grant_type == "password":
            form.update(username=self.username or "", password=self._password or "")
        return httpx.Request(
            "POST",
            self.auth_url,
            data=form,
            headers={"Authorization": f"Basic {basic}", "User-Agent": self.user_agent},
        )

    # --- reading the token endpoint's answer ----------------------------------------------

    def _accept(self, response: httpx.Response) -> str | None:
        """Cache the token from a good answer; None for a transient failure; else AuthError."""
        status = response.status_code
        if status == 429 or status >= 500:
            log.warning("oauth_token_unavailable", url=self.auth_url, status=status)
            return None
        body = json_or_none(response)
        if status == 401:
            raise AuthError(
                f"Reddit's token endpoint {self.auth_url} answered HTTP 401: it does not know "
                f"this client id/secret pair. Check {_CLIENT_SETTINGS} ({_ALTERNATIVE})."
            )
        if not isinstance(body, dict):
            raise AuthError(
                f"Reddit's token endpoint {self.auth_url} answered HTTP {status} without a JSON "
                f"object. Check REDDIT_AUTH_URL and {_CLIENT_SETTINGS} ({_ALTERNATIVE})."
            )
        if "error" in body or status != 200:
            raise AuthError(self._error_message(status, body))
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise AuthError(
                f"Reddit's token endpoint {self.auth_url} answered without an access_token. "
                f"Check {_CLIENT_SETTINGS} ({_ALTERNATIVE})."
            )
        register_secrets([token])
        lifetime = positive_seconds(body.get("expires_in"), default=3600.0)
        self._token = token
        self._expires_at = self._clock() + max(lifetime - EXPIRY_MARGIN, lifetime / 2)
        log.info("oauth_token_acquired", grant_type=self.grant_type, expires_in=lifetime)
        return token

    def _error_message(self, status: int, body: dict[str, Any]) -> str:
        error = body.get("error")
        where = f"Reddit's token endpoint {self.auth_url} refused the {self.grant_type} grant"
        if error == "invalid_grant":
            return (
                f"{where} (invalid_grant): the username or password is wrong, or the account "
                f"uses two-factor auth. Check {_USER_SETTINGS}."
            )
        if error == "unauthorized_client":
            fix = (
                f"the app must be a 'script' app owned by that user; check {_CLIENT_SETTINGS} "
                f"and {_USER_SETTINGS}"
                if self.grant_type == "password"
                else f"check {_CLIENT_SETTINGS}, or set {_USER_SETTINGS} for a script app"
            )
            return f"{where} (unauthorized_client): this app may not use that grant; {fix}."
        detail = body.get("message") or error or f"HTTP {status}"
        settings = _CLIENT_SETTINGS
        if self.grant_type == "password":
            settings += f" and {_USER_SETTINGS}"
        return f"{where} ({detail}, error {error!s}). Check {settings} ({_ALTERNATIVE})."
