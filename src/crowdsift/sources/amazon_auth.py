"""Creators API OAuth as an ``httpx.Auth``: a client-credentials token, cached, refreshed on 401.

The Creators API (the successor of Product Advertising API 5, which Amazon retired) gives each
Associates account a credential id/secret pair of a *version*: 2.x credentials get their token
from a regional Amazon Cognito endpoint (form-encoded body, scope ``creatorsapi/default``), 3.x
credentials from Login with Amazon (JSON body, scope ``creatorsapi::default``). The API then
wants ``Authorization: Bearer TOKEN, Version 2.1`` for 2.x and plain ``Bearer TOKEN`` for 3.x.

The token flow is ``crowdsift.http.bearer.BearerAuth``, the one Reddit's OAuth uses: the
token request runs through the injected client (testable against a local server), the token is
cached until 30 s before ``expires_in``, an API 401 (token expired or revoked early) triggers
exactly one refresh and one resend, and a 429/5xx from the token endpoint is handed back as the
answer, so the caller's retry policy treats it like any other server hiccup. Any other refusal
raises ``AuthError``
naming AMAZON_CREDENTIAL_ID / AMAZON_CREDENTIAL_SECRET; the secret and tokens never enter a
message or a log line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from crowdsift.core.errors import AuthError, ConfigError
from crowdsift.core.log import register_secrets
from crowdsift.http.bearer import BearerAuth

EXPIRY_MARGIN = 30.0
"""Refresh this many seconds before the token endpoint says the token expires."""

COGNITO_SCOPE = "creatorsapi/default"
LWA_SCOPE = "creatorsapi::default"
AUTH_URLS = {
    "2.1": "https://creatorsapi.auth.us-east-1.amazoncognito.com/oauth2/token",
    "2.2": "https://creatorsapi.auth.eu-south-2.amazoncognito.com/oauth2/token",
    "2.3": "https://creatorsapi.auth.us-west-2.amazoncognito.com/oauth2/token",
    "3.1": "https://api.amazon.com/auth/o2/token",
    "3.2": "https://api.amazon.co.uk/auth/o2/token",
    "3.3": "https://api.amazon.co.jp/auth/o2/token",
}
CREDENTIAL_SETTINGS = "AMAZON_CREDENTIAL_ID and AMAZON_CREDENTIAL_SECRET"
_WHERE_TO_GET = "(Associates Central → Tools → Creators API)"


def is_lwa(version: str) -> bool:
    """3.x credentials authenticate with Login with Amazon; 2.x with Amazon Cognito."""
    return version.strip().partition(".")[0] == "3"


def scope_for(version: str) -> str:
    return LWA_SCOPE if is_lwa(version) else COGNITO_SCOPE


def auth_url_for(version: str, override: str | None = None) -> str:
    """AMAZON_AUTH_URL when set, else the token endpoint of the credential version."""
    if override:
        return override
    url = AUTH_URLS.get(version.strip())
    if url is None:
        known = ", ".join(AUTH_URLS)
        raise ConfigError(
            f"AMAZON_CREDENTIAL_VERSION={version!r} is not a Creators API credential version "
            f"crowdsift knows ({known}). Set it to the version Associates Central shows next to "
            "your credential, or set AMAZON_AUTH_URL to its token endpoint."
        )
    return url


def authorization_value(token: str, version: str) -> str:
    """``Bearer T, Version 2.1`` for Cognito credentials; ``Bearer T`` for Login with Amazon."""
    return f"Bearer {token}" if is_lwa(version) else f"Bearer {token}, Version {version.strip()}"


class CreatorsOAuth(BearerAuth):
    """Bearer-token auth for the Creators API (client-credentials grant). Thread-safe."""

    expiry_margin = EXPIRY_MARGIN
    event_prefix = "amazon"

    def __init__(
        self,
        *,
        auth_url: str,
        credential_id: str,
        credential_secret: str,
        version: str = "2.1",
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(auth_url=auth_url, clock=clock)
        self.credential_id = credential_id
        self.version = version.strip()
        self._secret = credential_secret
        register_secrets([credential_secret])

    def __repr__(self) -> str:  # never show the secret, even in a debugger or a traceback
        return f"CreatorsOAuth(credential_id={self.credential_id!r}, version={self.version!r})"

    def token_request(self) -> httpx.Request:
        fields = {
            "grant_type": "client_credentials",
            "client_id": self.credential_id,
            "client_secret": self._secret,
            "scope": scope_for(self.version),
        }
        if is_lwa(self.version):
            return httpx.Request("POST", self.auth_url, json=fields)
        return httpx.Request("POST", self.auth_url, data=fields)

    def authorization(self, token: str) -> str:
        return authorization_value(token, self.version)

    def acquired_fields(self) -> dict[str, str]:
        return {"version": self.version}

    def checked_token(self, status: int, body: Any) -> str:
        where = f"The Creators API token endpoint {self.auth_url} answered HTTP {status}"
        if status != 200 or not isinstance(body, dict) or "error" in body:
            raise AuthError(_refusal(where, body))
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise AuthError(
                f"{where} without an access_token. Check AMAZON_AUTH_URL (unset = the endpoint "
                f"of AMAZON_CREDENTIAL_VERSION) and {CREDENTIAL_SETTINGS}."
            )
        return token


def _refusal(where: str, body: object) -> str:
    """What the endpoint refused and which settings fix it (never the secret itself)."""
    if not isinstance(body, dict):
        return (
            f"{where} without a JSON object: is AMAZON_AUTH_URL a Creators API token endpoint? "
            f"Otherwise check {CREDENTIAL_SETTINGS} {_WHERE_TO_GET}."
        )
    error = body.get("error")
    if error in ("invalid_scope", "unsupported_grant_type"):
        return (
            f"{where} ({error}): these credentials belong to another credential version. Set "
            "AMAZON_CREDENTIAL_VERSION to the version Associates Central shows for them."
        )
    return (
        f"{where} ({error or 'no error code'}): it does not accept this credential id/secret "
        f"pair. Check {CREDENTIAL_SETTINGS} {_WHERE_TO_GET}, and AMAZON_CREDENTIAL_VERSION "
        "(each version has its own token endpoint)."
    )
