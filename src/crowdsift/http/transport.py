"""One retrying, rate-limited JSON GET: the only way crowdsift's HTTP sources talk to a server.

Each attempt: wait for the rate limiter, send, feed the response headers back to the limiter,
log one ``http_request`` event, then decide:

* 2xx with valid JSON → the parsed body;
* 429, 5xx, a timeout, a dropped connection, or a 2xx with broken JSON → retry (tenacity
  policy from ``retry.py``; every retry spends one from the fetch's ``RetryBudget``); a 429
  without ``Retry-After`` waits for the rate limiter's window reset when the headers gave one;
* a host name that does not resolve → ``SourceUnreachableError`` at once, and so do refused
  connections and failed TLS handshakes once their retries are spent. The source is then
  unreachable for the rest of this transport's life (one run): later requests, and retries
  other threads still had planned, fail at once with the same error instead of asking again;
* any other 3xx/4xx → ``HttpStatusError`` at once (redirects are never followed: Reddit
  redirects a missing subreddit to its search page, which is an answer, not a detour).

When retries run out the last failure becomes a ``TransportError`` naming the URL (never its
query string, which may hold secrets) and the last status.

With a response cache (``cache.py``) a GET is looked up first: a hit returns the stored body
without touching the rate limiter, the retry budget or the network (so a repeated question
spends no quota). Only a 2xx answer whose JSON parsed is stored, and never a 2xx that is an
API error envelope (``{"error": ...}``, as Arctic Shift sends for a query timeout): caching a
transient failure would repeat it for the whole TTL.

With an ``author_policy`` (``from_settings`` always gives one) every 2xx body is passed through
``crowdsift.core.pseudonymize.scrub_names`` before it is parsed or cached: usernames leave at the
edge, as salted ``author_hash`` values, unless ``CROWDSIFT_KEEP_USERNAMES`` is set. Scrubbing
the text before both uses means a cache hit and a live answer are the same bytes, and the
policy (salt fingerprint, kept or hashed) is part of the cache key, so a changed salt never
reads pseudonyms made under the old one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from tenacity import RetryCallState

from crowdsift.core.config import Settings
from crowdsift.core.errors import HttpStatusError, SourceUnreachableError, TransportError
from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy, privacy_state
from crowdsift.core.pseudonymize import scrub_names
from crowdsift.core.source import SourceStats
from crowdsift.http.auth import RedditOAuth
from crowdsift.http.cache import (
    FROM_SETTINGS,
    FailSafeCache,
    FromSettings,
    ResponseCache,
    cache_key,
    fail_safe,
    is_cacheable,
    open_response_cache,
)
from crowdsift.http.json_body import Params, json_or_none, parse_json, safe_params
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.retry import (
    ConnectFailure,
    RetryableResponse,
    RetryBudget,
    RetryPolicy,
    asks_too_long,
    connect_failure,
    is_retryable,
    is_retryable_status,
    parse_retry_after,
)

log = get_logger(__name__)


_REDDIT_SOURCES = ("reddit-api", "arctic-shift")


def _cache_identity(client: httpx.Client) -> str | None:
    """Whose eyes a request reads through: a password grant sees what that user may see."""
    auth = client.auth if isinstance(client.auth, RedditOAuth) else None
    if auth is not None and auth.grant_type == "password":
        return f"{auth.client_id}:{auth.username}"
    return None


class HttpTransport:
    """One retrying, rate-limited JSON GET over an injected httpx.Client."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        source: str,
        max_retries: int = 4,
        max_retry_wait: float = 60.0,
        budget: RetryBudget | None = None,
        rate_limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        cache: ResponseCache | None = None,
        cache_ttl: float = 3600.0,
        author_policy: AuthorPolicy | None = None,
    ) -> None:
        """``cache`` belongs to the caller (closed by whoever opened it); ``cache_ttl`` 0 = off.

        ``author_policy`` None returns bodies as sent, names and all: only for tools and tests
        that need them; every source built ``from_settings`` scrubs.
        """
        self.client = client
        self.source = source
        self.policy = RetryPolicy(max_retries=max_retries, max_retry_wait=max_retry_wait)
        self.budget = budget
        self.rate_limiter = rate_limiter
        self.stats = SourceStats()
        self._sleep = sleep
        self._stats_lock = threading.Lock()
        self.cache: FailSafeCache | None = (
            fail_safe(cache) if cache is not None and cache_ttl > 0 else None
        )
        self.cache_ttl = cache_ttl
        self.author_policy = author_policy
        self._cache_identity = _cache_identity(client)
        self._owned_cache: ResponseCache | None = None
        self._unreachable: SourceUnreachableError | None = None

    @classmethod
    def from_settings(
        cls,
        client: httpx.Client,
        settings: Settings,
        *,
        source: str,
        rate_limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        cache: ResponseCache | FromSettings | None = FROM_SETTINGS,
    ) -> HttpTransport:
        """The transport every API source uses: retries, wait cap, budget and cache from settings.

        By default the response cache is opened from settings (and closed by ``close``); pass
        a cache to share one (the caller closes it), or None to run uncached.
        """
        opened = open_response_cache(settings) if cache is FROM_SETTINGS else None
        transport = cls(
            client,
            source=source,
            max_retries=settings.max_retries,
            max_retry_wait=settings.max_retry_wait,
            budget=RetryBudget(settings.retry_budget),
            rate_limiter=rate_limiter,
            sleep=sleep,
            cache=opened if cache is FROM_SETTINGS else cache,
            cache_ttl=settings.cache_ttl,
            author_policy=AuthorPolicy.from_settings(settings),
        )
        transport._owned_cache = opened
        return transport

    # --- public -------------------------------------------------------------------------

    def get_json(self, url: str, params: Params | None = None) -> Any:
        """GET ``url`` (relative to the client's base_url, or absolute) and return its JSON.

        Raises HttpStatusError (non-retryable 3xx/4xx), SourceUnreachableError (no connection:
        DNS at once, refused or TLS after the retries), TransportError (retries spent),
        RetryBudgetExceededError (the fetch's budget spent), or whatever the client's auth
        raises (AuthError).
        """
        display = self.display_url(url)
        key = self._cache_key(url, params)
        if key is not None and self.cache is not None:
            hit, body = self._cached(self.cache, key, display, params)
            if hit:
                return body
        self._raise_if_unreachable(display)
        attempt = 0

        def once() -> Any:
            nonlocal attempt
            attempt += 1
            return self._attempt(url, display, params, attempt, key)

        retrying = self.policy.retrying(sleep=self._sleep, before_sleep=self._before_retry(display))
        try:
            return retrying(once)
        except RetryableResponse as exc:
            if asks_too_long(exc, self.policy.max_retry_wait):
                raise self._asked_to_wait(exc, display) from exc
            raise TransportError(
                f"GET {display} failed after {attempt} attempts; last answer: HTTP "
                f"{exc.status} ({exc.reason}). The server is struggling or throttling us: try "
                "again later, or raise CROWDSIFT_MAX_RETRIES / CROWDSIFT_MAX_RETRY_WAIT.",
                url=display,
                status=exc.status,
            ) from exc
        except httpx.HTTPError as exc:
            failure = connect_failure(exc)
            if failure is not None:
                raise self._mark_unreachable(display, failure, attempt) from exc
            raise TransportError(
                f"GET {display} failed after {attempt} attempts: {type(exc).__name__}: {exc}. "
                "Check the network and the base URL setting of this source, or try again later.",
                url=display,
                status=None,
            ) from exc

    # --- an unreachable source ----------------------------------------------------------

    def _raise_if_unreachable(self, display: str) -> None:
        known = self._unreachable
        if known is not None:
            raise SourceUnreachableError(
                str(known), source=known.source, host=known.host, cause=known.cause, url=display
            )

    def _mark_unreachable(
        self, display: str, failure: ConnectFailure, attempts: int
    ) -> SourceUnreachableError:
        """The error for a source whose host cannot be reached, remembered for later calls."""
        target = httpx.URL(display)
        host = target.host if target.port is None else f"{target.host}:{target.port}"
        what = {
            "dns": f"{host} does not resolve (DNS)",
            "refused": f"{host} refused the connection",
            "tls": f"the TLS handshake with {host} failed ({failure.detail})",
            "timeout": f"{host} did not accept a connection in time",
            "connect": f"could not connect to {host} ({failure.detail})",
        }[failure.cause]
        tried = f" ({attempts} attempts)" if attempts > 1 else ""
        hint = (
            "check the network or use --source archive"
            if self.source in _REDDIT_SOURCES
            else "check the network and this source's base URL setting"
        )
        error = SourceUnreachableError(
            f"{self.source} unreachable: {what}{tried}; {hint}",
            source=self.source,
            host=host,
            cause=failure.cause,
            url=display,
        )
        with self._stats_lock:
            first, self._unreachable = self._unreachable is None, self._unreachable or error
        if first:
            log.info(  # the raised error is what the user reads; this is for -v and the service
                "source_unreachable", source=self.source, host=host, cause=failure.cause,
                detail=failure.detail, attempts=attempts,
            )  # fmt: skip
        return error

    def _asked_to_wait(self, exc: RetryableResponse, display: str) -> TransportError:
        wait = exc.retry_after or 0.0
        until = datetime.now(UTC) + timedelta(seconds=wait)
        return TransportError(
            f"GET {display} answered HTTP {exc.status} ({exc.reason}) and asked us to wait "
            f"{wait:.0f} s (Retry-After or its rate-limit reset), longer than "
            f"CROWDSIFT_MAX_RETRY_WAIT ({self.policy.max_retry_wait:g} s) allows; not asking "
            "again sooner than the "
            f"server said. Try again after {until:%Y-%m-%d %H:%M} UTC, or raise "
            "CROWDSIFT_MAX_RETRY_WAIT.",
            url=display,
            status=exc.status,
        )

    @property
    def sleep(self) -> Callable[[float], None]:
        """The injected sleep: a source that paces itself waits through the same one."""
        return self._sleep

    def count_page(self) -> None:
        """Sources call this once per search page they return (thread-safe)."""
        with self._stats_lock:
            self.stats.pages += 1

    def close(self) -> None:
        """Close the response cache if ``from_settings`` opened it (an injected one stays open)."""
        if self._owned_cache is not None:
            self._owned_cache.close()
            self._owned_cache = None

    def display_url(self, url: str) -> str:
        """The absolute URL without its query string: safe for messages and logs."""
        target = httpx.URL(url)
        if not target.is_absolute_url:
            base = str(self.client.base_url).rstrip("/")
            target = httpx.URL(base + "/" + url.lstrip("/"))
        return str(target.copy_with(query=None, fragment=None))

    # --- the response cache -------------------------------------------------------------

    def _cache_key(self, url: str, params: Params | None) -> str | None:
        if self.cache is None:
            return None
        base = str(self.client.base_url)
        return cache_key(
            self.source,
            base,
            url,
            params,
            identity=self._cache_identity,
            privacy=None if self.author_policy is None else privacy_state(self.author_policy),
        )

    def _cached(
        self, cache: ResponseCache, key: str, display: str, params: Params | None
    ) -> tuple[bool, Any]:
        """(True, body) for a usable cached body; (False, None) for a miss or a damaged entry."""
        raw = cache.get(key)
        if raw is None:
            return False, None
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # a damaged entry (only parsed bodies are stored)
            log.debug("http_cache_damaged", source=self.source, url=display)
            return False, None
        with self._stats_lock:
            self.stats.cache_hits += 1
        path = httpx.URL(display).path
        log.info("http_cache_hit", source=self.source, path=path, params=safe_params(params))
        return True, body

    # --- one attempt --------------------------------------------------------------------

    def _attempt(
        self, url: str, display: str, params: Params | None, attempt: int, key: str | None
    ) -> Any:
        if self.rate_limiter is not None:
            self.rate_limiter.delay()
        with self._stats_lock:
            self.stats.requests += 1
        started = time.perf_counter()
        try:
            response = self.client.get(url, params=dict(params) if params else None)
        except httpx.HTTPError as exc:
            failure = connect_failure(exc)
            self._log(
                display, params, None, started, attempt, error=type(exc).__name__,
                quiet=failure is not None,
            )  # fmt: skip
            if is_retryable(exc):
                raise
            if failure is not None:
                raise self._mark_unreachable(display, failure, attempt) from exc
            raise TransportError(
                f"GET {display} could not be sent: {type(exc).__name__}: {exc}. "
                "Check the base URL setting of this source.",
                url=display,
            ) from exc
        if self.rate_limiter is not None:
            self.rate_limiter.update(response.headers)
        self._log(display, params, response.status_code, started, attempt)
        content, body = self._interpret(response, display)
        if key is not None and self.cache is not None and is_cacheable(body):
            self.cache.set(key, content, self.cache_ttl)
        return body

    def _scrubbed(self, content: bytes) -> bytes:
        """``content`` with usernames pseudonymised; ValueError when it is not UTF-8 text."""
        policy = self.author_policy
        if policy is None or policy.keep_usernames:
            return content
        # surrogatepass: what json.loads does with bytes, so a body parses as it did unscrubbed
        text = content.decode("utf-8", "surrogatepass")
        scrubbed = scrub_names(text, policy)
        return content if scrubbed is text else scrubbed.encode("utf-8", "surrogatepass")

    def _interpret(self, response: httpx.Response, display: str) -> tuple[bytes, Any]:
        """(the body as it may be kept, its JSON) for a 2xx; raises for anything else."""
        status = response.status_code
        if 200 <= status < 300:
            try:
                content = self._scrubbed(response.content)
                return content, parse_json(content)
            except ValueError as exc:
                raise RetryableResponse(f"invalid or truncated JSON: {exc}", status=status) from exc
        if is_retryable_status(status):
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            if retry_after is None and status == 429 and self.rate_limiter is not None:
                retry_after = self.rate_limiter.seconds_to_reset(response.headers)  # window end
            raise RetryableResponse(
                response.reason_phrase or "error", status=status, retry_after=retry_after
            )
        raise HttpStatusError(
            self._status_message(response, display),
            url=display,
            status=status,
            body=json_or_none(response),
        )

    def _status_message(self, response: httpx.Response, display: str) -> str:
        status = response.status_code
        what = f"GET {display} answered HTTP {status} {response.reason_phrase}".rstrip()
        if 300 <= status < 400:
            location = httpx.URL(response.headers.get("location", "")).copy_with(query=None)
            return f"{what}, redirecting to {location or '?'}; redirects are not followed."
        if status == 401:
            return (
                f"{what}: the server still refused us after a fresh token. Check this source's "
                "credentials and what the app is allowed to do."
            )
        if status == 403:
            return f"{what}: access is forbidden (private, banned or quarantined content)."
        if status == 404:
            return f"{what}: nothing exists at this address."
        return f"{what}; retrying will not help. Check the request parameters."

    # --- retries and logging ------------------------------------------------------------

    def _before_retry(self, display: str) -> Callable[[RetryCallState], None]:
        """Runs after a failed attempt, before the wait: stop if another request found the
        source unreachable meanwhile, else spend the budget, count, log."""

        def hook(state: RetryCallState) -> None:
            self._raise_if_unreachable(display)
            exc = state.outcome.exception() if state.outcome is not None else None
            status = exc.status if isinstance(exc, RetryableResponse) else None
            reason = exc.reason if isinstance(exc, RetryableResponse) else type(exc).__name__
            if self.budget is not None:
                self.budget.spend(url=display, status=status, reason=reason)
            with self._stats_lock:
                self.stats.retries += 1
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            quiet = exc is not None and connect_failure(exc) is not None  # see ``_log``
            (log.info if quiet else log.warning)(
                "http_retry",
                source=self.source,
                url=display,
                attempt=state.attempt_number,
                status=status,
                reason=reason,
                wait_s=round(wait, 3),
            )

        return hook

    def _log(
        self,
        display: str,
        params: Params | None,
        status: int | None,
        started: float,
        attempt: int,
        *,
        error: str | None = None,
        quiet: bool = False,
    ) -> None:
        """One ``http_request`` event: INFO for an answer below 400, else WARNING; ``quiet``
        (no connection at all) is INFO too, since it ends in a retry or in the
        ``SourceUnreachableError`` the caller reports, one line instead of one per attempt."""
        fields: dict[str, Any] = {
            "source": self.source,
            "method": "GET",
            "path": httpx.URL(display).path,
            "params": safe_params(params),
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "attempt": attempt,
        }
        if error is not None:
            fields["error"] = error
        if quiet or (status is not None and status < 400):
            log.info("http_request", **fields)
        else:
            log.warning("http_request", **fields)


class OwnsClient:
    """Mixin for API sources: close the HTTP client only if the source built it itself.

    An injected client belongs to the caller (tests, shared pools) and is left open. The
    transport's own resources (a response cache it opened from settings) are always released.
    """

    transport: HttpTransport
    _owned_client: httpx.Client | None = None

    def _own(self, client: httpx.Client, *, built_here: bool) -> None:
        self._owned_client = client if built_here else None

    def close(self) -> None:
        """Close the transport's cache, and the HTTP client only if ``from_settings`` built it."""
        self.transport.close()
        if self._owned_client is not None:
            self._owned_client.close()
            self._owned_client = None
