"""Reddit OAuth: HTTP Basic ``client_id:client_secret`` and a ``client_credentials`` or
``password`` grant, the token cached and refreshed by ``bearer.BearerAuth`` (one refresh and one
resend on an API 401; a 5xx/429 from the token endpoint handed back for the transport to
retry). The token is refreshed 60 s before ``expires_in``. Every other token failure raises
``AuthError`` naming the settings to fix. The secret never enters a message.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import httpx

from crowdsift.core.errors import AuthError
from crowdsift.core.log import register_secrets
from crowdsift.http.bearer import BearerAuth

EXPIRY_MARGIN = 60.0
"""Refresh this many seconds before Reddit says the token expires."""

_CLIENT_SETTINGS = "REDDIT_CLIENT_ID and REDDIT_CLIENT_SECRET"
_USER_SETTINGS = "REDDIT_USERNAME and REDDIT_PASSWORD"
_ALTERNATIVE = "or use --source archive / --source arctic-shift, which need no Reddit key"


class RedditOAuth(BearerAuth):
    """Bearer-token auth for oauth.reddit.com (app-only, or password grant for script apps)."""

    expiry_margin = EXPIRY_MARGIN
    event_prefix = "oauth"

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
        super().__init__(auth_url=auth_url, clock=clock)
        self.client_id = client_id
        self.user_agent = user_agent
        self.username = username
        self._secret = client_secret
        self._password = password
        register_secrets([client_secret, password or ""])

    @property
    def grant_type(self) -> str:
        return "password" if self.username and self._password else "client_credentials"

    def __repr__(self) -> str:  # never show the secret, even in a debugger or a traceback
        return f"RedditOAuth(client_id={self.client_id!r}, grant_type={self.grant_type!r})"

    def token_request(self) -> httpx.Request:
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

    def acquired_fields(self) -> dict[str, str]:
        return {"grant_type": self.grant_type}

    def checked_token(self, status: int, body: Any) -> str:
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
