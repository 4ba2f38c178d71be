"""A bearer token as an ``httpx.Auth``: fetched, cached, refreshed once on a 401.

One mechanism for every source that logs in with a token (Reddit's OAuth, Amazon's Creators
API): a subclass says how to ask for a token (``token_request``), how to read the answer
(``checked_token``: the token, or ``AuthError`` naming the settings to fix) and how to send it
(``authorization``); this class does the rest.

``auth_flow`` yields the token request itself, so the whole dance runs through the injected
client and is testable against a local server with no network. The token is cached until
``expiry_margin`` seconds before ``expires_in`` (at the latest, half its lifetime); an API 401
(token revoked or expired early) triggers exactly one refresh and one resend.

The refresh happens under a lock held across the token request: when several threads find the
token stale at once, one fetches and the others reuse its token. (Holding a lock across
``yield`` is safe for the sync client: httpx drives the generator on the calling thread and
closes it on every exit path.)

A 5xx/429 from the token endpoint is not an auth failure: the flow hands that response back
as the answer, so the caller's retry policy treats it like any other server hiccup. Secrets
and tokens are registered for redaction and never enter a message.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from typing import Any

import httpx

from crowdsift.core.log import get_logger, register_secrets
from crowdsift.http.json_body import json_or_none, positive_seconds

log = get_logger(__name__)


class BearerAuth(httpx.Auth, ABC):
    """The token flow; subclasses name their log events with ``event_prefix``."""

    requires_response_body = True  # the token response is read inside the flow
    expiry_margin = 60.0
    """Refresh this many seconds before the token endpoint says the token expires."""
    event_prefix = "oauth"

    def __init__(self, *, auth_url: str, clock: Callable[[], float]) -> None:
        self.auth_url = auth_url
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0
        self.token_requests = 0

    # --- what a subclass says ---------------------------------------------------------------

    @abstractmethod
    def token_request(self) -> httpx.Request:
        """The request that asks the token endpoint for a token."""

    @abstractmethod
    def checked_token(self, status: int, body: Any) -> str:
        """The access token of a non-transient answer, or ``AuthError`` saying what to fix."""

    def authorization(self, token: str) -> str:
        return f"bearer {token}"

    def acquired_fields(self) -> dict[str, str]:
        """What the ``<prefix>_token_acquired`` log line says besides the lifetime."""
        return {}

    # --- the flow -------------------------------------------------------------------------

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = yield from self._token_for(stale=None)
        if token is None:  # the token endpoint had a transient failure: that is the answer
            return
        request.headers["Authorization"] = self.authorization(token)
        response = yield request
        if response.status_code != 401:
            return
        log.info(f"{self.event_prefix}_token_rejected", url=str(request.url.copy_with(query=None)))
        token = yield from self._token_for(stale=token)
        if token is None:
            return
        request.headers["Authorization"] = self.authorization(token)
        yield request

    def _token_for(
        self, *, stale: str | None
    ) -> Generator[httpx.Request, httpx.Response, str | None]:
        """A valid token, fetching one unless another thread already replaced ``stale``."""
        with self._lock:
            if self._token is not None and self._token != stale and self._valid():
                return self._token
            self.token_requests += 1
            response = yield self.token_request()
            return self._accept(response)

    def _valid(self) -> bool:
        return self._clock() < self._expires_at

    def _accept(self, response: httpx.Response) -> str | None:
        """Cache the token from a good answer; None for a transient failure; else AuthError."""
        status = response.status_code
        if status == 429 or status >= 500:
            log.warning(f"{self.event_prefix}_token_unavailable", url=self.auth_url, status=status)
            return None
        body = json_or_none(response)
        token = self.checked_token(status, body)
        register_secrets([token])
        lifetime = positive_seconds(body.get("expires_in"), default=3600.0)
        self._token = token
        self._expires_at = self._clock() + max(lifetime - self.expiry_margin, lifetime / 2)
        log.info(
            f"{self.event_prefix}_token_acquired", **self.acquired_fields(), expires_in=lifetime
        )
        return token
