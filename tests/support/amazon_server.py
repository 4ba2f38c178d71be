"""A real HTTP server on 127.0.0.1 speaking the Creators API subset crowdsift uses, for tests.

It implements, as Amazon does:

* the token endpoints: ``POST /oauth2/token`` (Cognito, 2.x credentials: form-encoded, scope
  ``creatorsapi/default``; wrong credentials → 400 ``{"error": "invalid_client"}``) and
  ``POST /auth/o2/token`` (Login with Amazon, 3.x: JSON or form, scope ``creatorsapi::default``;
  wrong credentials → 401 ``invalid_client``). Tokens are random and live ``token_ttl`` s.
* ``POST /catalog/v1/searchItems``: a valid bearer token (for 2.x servers the header must also
  say ``, Version <version>``), ``x-marketplace`` of the server's marketplace, a JSON body with
  the server's ``partnerTag`` (else 400 ``InvalidPartnerTag``), ``keywords``, ``itemCount`` 1-10
  and known ``resources`` (else 400 ``InvalidParameterValue``). Products added with
  ``add_products`` match when a query word occurs in one of their string values; only the
  requested resources are returned, each with a ``detailPageURL`` carrying the partner tag.
  No match → 404 ``NoResults``, as the Creators API answers.
* faults (``add_fault``) go first, as an edge proxy would: a fixed status, 429 throttling with
  an optional ``Retry-After``, truncated JSON, an expired token, or a connection closed
  without an answer.

The request log never holds secrets: no credential secret and no token.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.local_http import LocalHTTPServer, ProtocolServer, Reply

COGNITO_TOKEN_PATH = "/oauth2/token"
LWA_TOKEN_PATH = "/auth/o2/token"
SEARCH_PATH = "/catalog/v1/searchItems"
FAULT_KINDS = ("status", "throttled", "truncated", "expire_token", "reset")
_PROJECTED = (  # resources that control a part of an item ("group.key")
    "itemInfo.title",
    "itemInfo.features",
    "customerReviews.count",
    "customerReviews.starRating",
)
KNOWN_RESOURCES = frozenset(
    (*_PROJECTED, "itemInfo.byLineInfo", "images.primary.medium", "offersV2.listings.price")
)
_HIDDEN = ("secret", "token", "password")
_WORD = re.compile(r"[a-z0-9]{2,}")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, secrets removed."""

    method: str
    path: str
    fields: dict[str, Any]  # form or JSON body, without secret-looking fields
    bearer: bool
    version: str | None  # the ", Version x" of the Authorization header
    marketplace: str | None
    content_type: str | None
    status: int | None = None  # None: the connection was closed without an answer


@dataclass
class _Fault:
    pattern: str
    kind: str
    times: int
    options: dict[str, Any]


def product(
    asin: str,
    title: str,
    *,
    features: list[str] | None = None,
    rating: float | None = None,
    reviews: int | None = None,
) -> dict[str, Any]:
    """A searchItems item in the API's shape; review fields only when given."""
    item: dict[str, Any] = {"asin": asin, "itemInfo": {"title": {"displayValue": title}}}
    if features is not None:
        item["itemInfo"]["features"] = {"displayValues": list(features)}
    customer: dict[str, Any] = {}
    if reviews is not None:
        customer["count"] = reviews
    if rating is not None:
        customer["starRating"] = {"value": rating}
    if customer:
        item["customerReviews"] = customer
    return item


def _json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    merged = {"Content-Type": "application/json", **(headers or {})}
    return Reply(status, json.dumps(payload).encode(), merged)


def _api_error(status: int, kind: str, reason: str, message: str, **headers: str) -> Reply:
    return _json_reply(status, {"type": kind, "reason": reason, "message": message}, headers)


class AmazonCreatorsServer(ProtocolServer):
    """The Creators API's token endpoints and searchItems on a free local port."""

    def __init__(
        self,
        *,
        credential_id: str = "test-credential-id",
        credential_secret: str = "test-credential-secret",
        partner_tag: str = "crowdsift-20",
        version: str = "2.1",
        marketplace: str = "www.amazon.com",
        token_ttl: int = 3600,
    ) -> None:
        self.credential_id = credential_id
        self._secret = credential_secret
        self.partner_tag = partner_tag
        self.version = version
        self.marketplace = marketplace
        self.token_ttl = token_ttl
        self._lock = threading.RLock()
        self._products: list[Any] = []
        self._faults: list[_Fault] = []
        self._tokens: dict[str, float] = {}
        self._log: list[RecordedRequest] = []
        self._http = LocalHTTPServer(self, name="amazon-creators-server")

    # --- lifecycle ----------------------------------------------------------------------

    @property
    def auth_url(self) -> str:
        """The token endpoint of the server's credential version."""
        path = LWA_TOKEN_PATH if self.version.startswith("3.") else COGNITO_TOKEN_PATH
        return self.base_url + path

    # --- content and behaviour ----------------------------------------------------------

    def add_products(self, items: list[Any]) -> None:
        """Items in the API's shape (see ``product``), in relevance order; anything goes."""
        with self._lock:
            self._products.extend(copy.deepcopy(items))

    def add_fault(self, path_pattern: str, kind: str, *, times: int = 1, **options: Any) -> None:
        """Misbehave ``times`` times on paths matching the glob ``path_pattern``.

        kinds: ``status`` (code=500, body=None → a Creators-style JSON error, headers={}),
        ``throttled`` (429 TooManyRequests, retry_after=None), ``truncated`` (the normal answer
        cut in half), ``expire_token`` (the presented token dies → 401), ``reset`` (the
        connection closes without an answer).
        """
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        with self._lock:
            self._faults.append(_Fault(path_pattern, kind, times, dict(options)))

    def expire_tokens(self) -> None:
        """Every token issued so far dies now (the next API call gets a 401)."""
        with self._lock:
            self._tokens = dict.fromkeys(self._tokens, 0.0)

    @property
    def issued_tokens(self) -> list[str]:
        """Every access token handed out, so tests can prove none of them leaks."""
        with self._lock:
            return list(self._tokens)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def reset_log(self) -> None:
        with self._lock:
            self._log.clear()

    # --- protocol (called from handler threads) ------------------------------------------

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> Reply | None:
        path = urlsplit(target).path
        fields = _fields(headers.get("content-type", ""), body)
        token, version = _bearer(headers.get("authorization", ""))
        reply = self._dispatch(method, path, headers, fields, token, version)
        safe = (
            {k: v for k, v in fields.items() if not any(w in k.lower() for w in _HIDDEN)}
            if isinstance(fields, dict)
            else {}
        )
        record = RecordedRequest(
            method=method,
            path=path,
            fields=safe,
            bearer=token is not None,
            version=version,
            marketplace=headers.get("x-marketplace"),
            content_type=headers.get("content-type"),
            status=reply.status if reply is not None else None,
        )
        with self._lock:
            self._log.append(record)
        return reply

    def _dispatch(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        fields: Any,
        token: str | None,
        version: str | None,
    ) -> Reply | None:
        fault = self._take_fault(path)
        if fault is not None:
            if fault.kind == "reset":
                return None
            if fault.kind == "status":
                return _status_fault(fault.options)
            if fault.kind == "throttled":
                retry_after = fault.options.get("retry_after")
                extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
                return _api_error(
                    429, "ThrottlingException", "TooManyRequests", "Rate exceeded", **extra
                )
            if fault.kind == "expire_token" and token is not None:
                with self._lock:
                    self._tokens[token] = 0.0
        reply = self._route(method, path, headers, fields, token, version)
        if fault is not None and fault.kind == "truncated":
            reply.body = reply.body[: max(len(reply.body) // 2, 1)]
        return reply

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fnmatch.fnmatchcase(path, fault.pattern):
                    fault.times -= 1
                    return fault
        return None

    def _route(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        fields: Any,
        token: str | None,
        version: str | None,
    ) -> Reply:
        if method != "POST":
            return _json_reply(405, {"message": "Method Not Allowed"})
        if path in (COGNITO_TOKEN_PATH, LWA_TOKEN_PATH):
            return self._issue_token(path, headers.get("content-type", ""), fields)
        if path != SEARCH_PATH:
            return _api_error(404, "ResourceNotFoundException", "UnknownOperation", "Not Found")
        if not self._token_valid(token):
            return _api_error(401, "UnauthorizedException", "InvalidToken", "Unauthorized")
        if not self.version.startswith("3.") and version != self.version:
            message = f"The Authorization header must say ', Version {self.version}'"
            return _api_error(401, "UnauthorizedException", "InvalidVersion", message)
        return self._search(headers, fields)

    # --- auth ---------------------------------------------------------------------------

    def _token_valid(self, token: str | None) -> bool:
        with self._lock:
            return token is not None and self._tokens.get(token, 0.0) > time.monotonic()

    def _issue_token(self, path: str, content_type: str, fields: Any) -> Reply:
        lwa = path == LWA_TOKEN_PATH
        form = content_type.startswith("application/x-www-form-urlencoded")
        if not isinstance(fields, dict) or not (form or (lwa and "json" in content_type)):
            return _json_reply(400, {"error": "invalid_request"})
        credentials = (fields.get("client_id"), fields.get("client_secret"))
        if credentials != (self.credential_id, self._secret):
            return _json_reply(401 if lwa else 400, {"error": "invalid_client"})
        if fields.get("grant_type") != "client_credentials":
            return _json_reply(400, {"error": "unsupported_grant_type"})
        if fields.get("scope") != ("creatorsapi::default" if lwa else "creatorsapi/default"):
            return _json_reply(400, {"error": "invalid_scope"})
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = time.monotonic() + self.token_ttl
        payload = {"access_token": token, "expires_in": self.token_ttl, "token_type": "Bearer"}
        return _json_reply(200, payload)

    # --- searchItems --------------------------------------------------------------------

    def _search(self, headers: dict[str, str], fields: Any) -> Reply:
        def invalid(message: str) -> Reply:
            return _api_error(400, "ValidationException", "InvalidParameterValue", message)

        if not headers.get("content-type", "").startswith("application/json"):
            return invalid("Content-Type must be application/json")
        if headers.get("x-marketplace") != self.marketplace:
            return invalid(f"x-marketplace must be {self.marketplace}")
        if not isinstance(fields, dict):
            return invalid("The request body is not a JSON object")
        if fields.get("partnerTag") != self.partner_tag:
            message = "The partner tag is invalid or not present"
            return _api_error(400, "ValidationException", "InvalidPartnerTag", message)
        keywords, count = fields.get("keywords"), fields.get("itemCount", 10)
        resources = fields.get("resources", [])
        if not isinstance(keywords, str) or not keywords.strip():
            return invalid("keywords must be a non-empty string")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10:
            return invalid("itemCount must be an integer from 1 to 10")
        if not isinstance(resources, list) or not set(resources) <= KNOWN_RESOURCES:
            return invalid("resources holds an unknown resource")
        words = set(_WORD.findall(keywords.lower()))
        with self._lock:
            matches = [p for p in self._products if words & set(_WORD.findall(_strings(p)))]
        if not matches:
            message = "No results found for the request"
            return _api_error(404, "ResourceNotFoundException", "NoResults", message)
        items = [self._project(item, set(resources)) for item in matches[:count]]
        return _json_reply(
            200, {"searchResult": {"items": items, "totalResultCount": len(matches)}}
        )

    def _project(self, item: Any, resources: set[str]) -> Any:
        """Only the requested resources, plus the tagged detail page URL Amazon adds."""
        if not isinstance(item, dict):
            return copy.deepcopy(item)
        item = copy.deepcopy(item)
        for resource in _PROJECTED:
            group, key = resource.split(".")
            section = item.get(group)
            if resource not in resources and isinstance(section, dict):
                section.pop(key, None)
        if isinstance(item.get("asin"), str) and "detailPageURL" not in item:
            item["detailPageURL"] = (
                f"https://{self.marketplace}/dp/{item['asin']}?tag={self.partner_tag}"
                "&linkCode=ogi&th=1&psc=1"
            )
        return item


def _status_fault(options: dict[str, Any]) -> Reply:
    code = int(options.get("code", 500))
    headers = {str(k): str(v) for k, v in (options.get("headers") or {}).items()}
    body = options.get("body")
    if body is None:
        return _api_error(code, "InternalFailure", "InternalFailure", "Server error", **headers)
    if isinstance(body, bytes | str):
        raw = body.encode() if isinstance(body, str) else body
        return Reply(code, raw, {"Content-Type": "text/html", **headers})
    return _json_reply(code, body, headers)


def _fields(content_type: str, body: bytes) -> Any:
    """The form or JSON body (whatever JSON it is), or {} when there is none."""
    text = body.decode("utf-8", "replace")
    if "json" in content_type:
        try:
            return json.loads(text) if text else {}
        except json.JSONDecodeError:
            return None
    return dict(parse_qsl(text, keep_blank_values=True))


def _bearer(header: str) -> tuple[str | None, str | None]:
    """(token, version) from ``Bearer TOKEN`` or ``Bearer TOKEN, Version 2.1``."""
    scheme, _, rest = header.partition(" ")
    if scheme.lower() != "bearer":
        return None, None
    token, _, extra = rest.partition(",")
    version = extra.strip()
    if version.lower().startswith("version "):
        version = version[len("version ") :].strip()
    return token.strip() or None, version or None


def _strings(value: Any) -> str:
    """Every string value inside ``value`` (not the keys), lower-cased, for matching."""
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, dict):
        return " ".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_strings(v) for v in value)
    return ""
