"""The Amazon source: keyword product search through the Creators API, as evidence.

The Creators API replaced Product Advertising API 5 (retired 2026-05-15); nothing here speaks
PA-API. One search is ``POST {base}/catalog/v1/searchItems`` with the partner tag, the keywords,
an ``itemCount`` of 1-10 and the resources we read (title, features, review count and star
rating). Each product becomes an ``EvidenceItem`` whose URL is the canonical
``https://<marketplace>/dp/<ASIN>``: the API's ``detailPageURL`` carries our partner tag, and
evidence is for checking a claim, not for earning a referral fee.

HTTP follows the Reddit transport's rules (``retry.py``'s policy and retry budget): 429 and 5xx
are retried honouring ``Retry-After``, a 401 is refreshed once by ``CreatorsOAuth``
(``amazon_auth``), other 4xx fail at once with a message naming the setting to fix. Reading
answers is ``amazon_items``: a malformed product is skipped, logged and counted, never fatal.
``fetch_amazon_tool`` runs seed 002's gated fetch and never raises: no credentials → a
one-line ``skipped`` notice; a failure → ``errors``; a failed refetch keeps the first page.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from tenacity import RetryCallState

from crowdsift import __version__
from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    AuthError,
    ConfigError,
    HttpStatusError,
    TransportError,
)
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.core.source import SourceStats
from crowdsift.http.json_body import json_or_none
from crowdsift.http.retry import (
    RetryableResponse,
    RetryBudget,
    RetryPolicy,
    is_retryable,
    is_retryable_status,
    parse_retry_after,
)
from crowdsift.sources.amazon_auth import CREDENTIAL_SETTINGS, CreatorsOAuth, auth_url_for
from crowdsift.sources.amazon_items import (
    ERROR_HINTS,
    error_code,
    marketplace_host,
    parse_search_result,
)
from crowdsift.sources.models import EvidenceItem

log = get_logger(__name__)

SEARCH_PATH = "/catalog/v1/searchItems"
RESOURCES = (
    "itemInfo.title",
    "itemInfo.features",
    "customerReviews.count",
    "customerReviews.starRating",
)
MAX_ITEM_COUNT = 10
REQUIRED_SETTINGS = ("AMAZON_CREDENTIAL_ID", "AMAZON_CREDENTIAL_SECRET", "AMAZON_PARTNER_TAG")


# --- settings --------------------------------------------------------------------------------


def missing_amazon_settings(settings: Settings) -> list[str]:
    """The variables still unset among the three the Amazon source needs."""
    values = (
        settings.amazon_credential_id,
        settings.amazon_credential_secret,
        settings.amazon_partner_tag,
    )
    return [name for name, value in zip(REQUIRED_SETTINGS, values, strict=True) if not value]


def skip_notice(missing: list[str]) -> str:
    return (
        f"Amazon skipped: set {', '.join(missing)} (Creators API credentials and your "
        "Associates tracking id, from Associates Central) to search products."
    )


# --- the source ------------------------------------------------------------------------------


class AmazonSource:
    """Creators API keyword search over an injected httpx client. Safe to share between threads.

    The retry budget spans the source's life, like a Reddit transport's spans one fetch: build
    one source per research run (``fetch_amazon_tool`` does), not one per process.
    """

    kind = "amazon"

    def __init__(
        self,
        client: httpx.Client,
        auth: CreatorsOAuth,
        *,
        base_url: str,
        partner_tag: str,
        marketplace: str = "www.amazon.com",
        max_retries: int = 4,
        max_retry_wait: float = 60.0,
        budget: RetryBudget | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.auth = auth
        self.base_url = base_url.rstrip("/")
        self.partner_tag = partner_tag
        self.marketplace = marketplace_host(marketplace)
        self.policy = RetryPolicy(max_retries=max_retries, max_retry_wait=max_retry_wait)
        self.budget = budget
        self.stats = SourceStats(extra={"skipped_items": 0})
        self._sleep = sleep
        self._lock = threading.Lock()
        self._owned_client: httpx.Client | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.Client | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> AmazonSource:
        """The source from settings; an injected client is used as is (and not closed)."""
        missing = missing_amazon_settings(settings)
        secret = settings.amazon_credential_secret
        if missing or secret is None:
            raise ConfigError(skip_notice(missing or ["AMAZON_CREDENTIAL_SECRET"]))
        register_secrets(settings.secret_values())
        marketplace = marketplace_host(settings.amazon_marketplace)  # fail before any client
        auth = CreatorsOAuth(
            auth_url=auth_url_for(settings.amazon_credential_version, settings.amazon_auth_url),
            credential_id=settings.amazon_credential_id or "",
            credential_secret=secret.get_secret_value(),
            version=settings.amazon_credential_version,
            clock=clock,
        )
        client = http_client or httpx.Client(
            timeout=settings.http_timeout,
            follow_redirects=False,
            headers={"User-Agent": f"crowdsift/{__version__}"},
        )
        source = cls(
            client,
            auth,
            base_url=settings.amazon_api_base_url,
            partner_tag=settings.amazon_partner_tag or "",
            marketplace=marketplace,
            max_retries=settings.max_retries,
            max_retry_wait=settings.max_retry_wait,
            budget=RetryBudget(settings.retry_budget),
            sleep=sleep,
        )
        source._owned_client = None if http_client is not None else client
        return source

    def close(self) -> None:
        """Close the HTTP client only if ``from_settings`` built it."""
        if self._owned_client is not None:
            self._owned_client.close()
            self._owned_client = None

    def search(self, query: str, limit: int = 5) -> list[EvidenceItem]:
        """Up to ``limit`` (1-10) products for ``query``, in Amazon's relevance order."""
        if not query.strip():
            return []
        payload = {
            "partnerTag": self.partner_tag,
            "keywords": query.strip(),
            "itemCount": min(max(limit, 1), MAX_ITEM_COUNT),
            "resources": list(RESOURCES),
        }
        url = self.base_url + SEARCH_PATH
        body = self._post(url, payload)
        items, skipped = parse_search_result(body, self.marketplace, url=self._display(url))
        with self._lock:
            self.stats.pages += 1
            self.stats.extra["skipped_items"] += skipped
        return items

    # --- one retrying POST ----------------------------------------------------------------

    def _post(self, url: str, payload: dict[str, Any]) -> Any:
        """The JSON answer (None for a 404 "no results"); raises a ``SourceError`` otherwise."""
        display = self._display(url)
        content = json.dumps(payload).encode()
        attempt = 0

        def once() -> Any:
            nonlocal attempt
            attempt += 1
            return self._attempt(url, display, content, attempt)

        retrying = self.policy.retrying(sleep=self._sleep, before_sleep=self._before_retry(display))
        try:
            return retrying(once)
        except RetryableResponse as exc:
            why = (
                "Amazon is throttling this account (the Creators API allows about one request "
                "per second, more with referral sales): wait a minute"
                if exc.status == 429
                else "the Creators API is struggling: try again later"
            )
            raise TransportError(
                f"POST {display} failed after {attempt} attempts; last answer: HTTP "
                f"{exc.status} ({exc.reason}). {why}, or raise CROWDSIFT_MAX_RETRIES / "
                "CROWDSIFT_MAX_RETRY_WAIT.",
                url=display,
                status=exc.status,
            ) from exc
        except httpx.HTTPError as exc:
            raise TransportError(
                f"POST {display} failed after {attempt} attempts: {type(exc).__name__}. Check "
                "the network, AMAZON_API_BASE_URL and AMAZON_AUTH_URL, or try again later.",
                url=display,
            ) from exc

    def _attempt(self, url: str, display: str, content: bytes, attempt: int) -> Any:
        with self._lock:
            self.stats.requests += 1
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "x-marketplace": self.marketplace,
        }
        started = time.perf_counter()
        try:
            response = self.client.post(url, content=content, headers=headers, auth=self.auth)
        except httpx.HTTPError as exc:
            self._log(display, None, started, attempt, error=type(exc).__name__)
            if is_retryable(exc):
                raise
            raise TransportError(
                f"POST {display} could not be sent: {type(exc).__name__}. Check "
                "AMAZON_API_BASE_URL and AMAZON_AUTH_URL.",
                url=display,
            ) from exc
        self._log(display, response.status_code, started, attempt)
        return self._interpret(response, display)

    def _interpret(self, response: httpx.Response, display: str) -> Any:
        status = response.status_code
        if 200 <= status < 300:
            try:
                return json.loads(response.content)
            except (ValueError, RecursionError) as exc:  # also too deep, or a number too long
                raise RetryableResponse("invalid or truncated JSON", status=status) from exc
        if status == 404:
            return None  # the Creators API's way of saying "no results"
        body = json_or_none(response)
        code, message = error_code(body)
        if is_retryable_status(status):
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            reason = code or response.reason_phrase or "error"
            raise RetryableResponse(reason, status=status, retry_after=retry_after)
        what = f"POST {display} answered HTTP {status} {code or response.reason_phrase}".rstrip()
        detail = f" ({message})" if message else ""
        if status == 401:
            raise AuthError(
                f"{what}{detail} even with a fresh token: the Creators API does not accept these "
                f"credentials. Check {CREDENTIAL_SETTINGS}, and AMAZON_CREDENTIAL_VERSION."
            )
        hint = ERROR_HINTS.get(code or "", "retrying will not help; check the Amazon settings")
        raise HttpStatusError(f"{what}{detail}: {hint}.", url=display, status=status, body=body)

    def _before_retry(self, display: str) -> Callable[[RetryCallState], None]:
        """After a failed attempt, before the wait: spend the budget, count, log."""

        def hook(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            status = exc.status if isinstance(exc, RetryableResponse) else None
            reason = exc.reason if isinstance(exc, RetryableResponse) else type(exc).__name__
            if self.budget is not None:
                self.budget.spend(url=display, status=status, reason=reason)
            with self._lock:
                self.stats.retries += 1
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            log.warning(
                "http_retry", source="amazon", url=display, attempt=state.attempt_number,
                status=status, reason=reason, wait_s=round(wait, 3),
            )  # fmt: skip

        return hook

    def _log(
        self, display: str, status: int | None, started: float, attempt: int, *, error: str = ""
    ) -> None:
        fields: dict[str, Any] = {
            "source": "amazon",
            "method": "POST",
            "path": httpx.URL(display).path,
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "attempt": attempt,
        }
        if error:
            fields["error"] = error
        level = log.info if status is not None and status < 400 else log.warning
        level("http_request", **fields)

    @staticmethod
    def _display(url: str) -> str:
        return str(httpx.URL(url).copy_with(query=None, fragment=None))


# --- building and the gated tool ---------------------------------------------------------------
