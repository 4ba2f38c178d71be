"""When to try an HTTP request again, how long to wait, and how many retries a fetch may spend.

The policy is declarative (tenacity strategies, composed): retry on HTTP 429 and 5xx, on
timeouts and broken connections, and on a 2xx whose JSON is cut off, but never on a host name
that does not resolve (the resolver gives the same answer a second later); wait exponentially
with jitter, but never less than the server's ``Retry-After`` and never more than
``max_retry_wait``; stop after ``max_retries`` retries. A server that asks for a longer wait
than ``max_retry_wait`` allows is not asked again at all: retrying sooner than it said would
ignore its ``Retry-After`` (and earn another 429), and sleeping an hour inside a fetch would
hang the job, so the request fails at once with an error that says when to try again.
Sleep is injected so tests run in milliseconds and can assert on the waits.

``RetryBudget`` is the fetch-wide brake: per-request retries are cheap, but forty threads each
retrying four times against a struggling server is not, so one counter is shared by every
request of a fetch.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from crowdsift.core.errors import RetryBudgetExceededError


class RetryableResponse(Exception):  # noqa: N818 - an outcome, not a user-facing error
    """An answer worth asking for again: 429, 5xx, or a 2xx whose JSON is invalid.

    Internal to the transport: it never leaves ``HttpTransport.get_json`` (which turns the last
    one into a ``TransportError``).
    """

    def __init__(self, reason: str, *, status: int | None, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


_PERMANENT_HTTPX = (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.ProxyError)
"""httpx transport errors that are our own mistake; retrying cannot fix them."""


ConnectCause = Literal["dns", "refused", "tls", "timeout", "connect"]


@dataclass(frozen=True)
class ConnectFailure:
    """Why no connection to a host could be made: ``cause`` and the OS's words for it."""

    cause: ConnectCause
    detail: str


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it: httpx wraps httpcore, which wraps the socket error."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def connect_failure(exc: BaseException) -> ConnectFailure | None:
    """What kept a request from reaching its host, or None when it reached it (or is no
    connection problem at all: a read timeout, a reset, a protocol error)."""
    if not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return None
    chain = _chain(exc)
    for error in chain:
        if isinstance(error, socket.gaierror):
            return ConnectFailure("dns", error.strerror or str(error))
        if isinstance(error, ssl.SSLError):
            return ConnectFailure("tls", getattr(error, "reason", None) or str(error))
        if isinstance(error, ConnectionRefusedError):
            return ConnectFailure("refused", error.strerror or str(error))
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectFailure("timeout", str(exc) or "timed out")
    return ConnectFailure("connect", str(exc) or type(exc).__name__)


def is_retryable(exc: BaseException) -> bool:
    """Timeouts, connection errors/resets, remote protocol errors and retryable responses; not
    a host name that does not resolve."""
    if isinstance(exc, RetryableResponse):
        return True
    if not isinstance(exc, httpx.TransportError) or isinstance(exc, _PERMANENT_HTTPX):
        return False
    failure = connect_failure(exc)
    return failure is None or failure.cause != "dns"


def is_retryable_status(status: int) -> bool:
    """429 (throttled) and every 5xx (the server's trouble, usually passing)."""
    return status == 429 or 500 <= status <= 599


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """``Retry-After`` in seconds: an integer, or an HTTP-date relative to ``now``.

    Garbage gives None (fall back to backoff); a date in the past gives 0.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else datetime.now(UTC)
    return max((when - current).total_seconds(), 0.0)


class wait_retry_after(wait_base):  # noqa: N801 - tenacity's naming for wait strategies
    """max(Retry-After from the last response, ``backoff``), capped at ``cap`` seconds."""

    def __init__(self, backoff: wait_base, cap: float) -> None:
        self.backoff = backoff
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> float:
        wait = self.backoff(retry_state)
        outcome = retry_state.outcome
        if outcome is not None and outcome.failed:
            exc = outcome.exception()
            if isinstance(exc, RetryableResponse) and exc.retry_after is not None:
                wait = max(wait, exc.retry_after)
        return max(min(wait, self.cap), 0.0)


def asks_too_long(exc: BaseException | None, cap: float) -> bool:
    """True for a retryable answer whose ``Retry-After`` is longer than we may wait."""
    return (
        isinstance(exc, RetryableResponse) and exc.retry_after is not None and exc.retry_after > cap
    )


class stop_when_asked_to_wait_too_long(stop_base):  # noqa: N801 - tenacity's naming
    """Stop retrying when the server's ``Retry-After`` exceeds ``cap`` (see the module doc)."""

    def __init__(self, cap: float) -> None:
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> bool:
        outcome = retry_state.outcome
        return (
            outcome is not None and outcome.failed and asks_too_long(outcome.exception(), self.cap)
        )


@dataclass(frozen=True)
class RetryPolicy:
    """Everything about retrying one request; ``retrying()`` builds a fresh tenacity runner.

    A fresh ``Retrying`` per request keeps threads from sharing tenacity's per-call state.
    """

    max_retries: int = 4
    max_retry_wait: float = 60.0
    initial_backoff: float = 0.5
    max_backoff: float = 30.0
    jitter: float = 0.5

    def wait_strategy(self) -> wait_base:
        backoff = wait_exponential(multiplier=self.initial_backoff, max=self.max_backoff)
        return wait_retry_after(backoff + wait_random(0, self.jitter), cap=self.max_retry_wait)

    def retrying(
        self,
        *,
        sleep: Callable[[float], None],
        before_sleep: Callable[[RetryCallState], None] | None = None,
    ) -> Retrying:
        return Retrying(
            retry=retry_if_exception(is_retryable),
            stop=stop_after_attempt(self.max_retries + 1)
            | stop_when_asked_to_wait_too_long(self.max_retry_wait),
            wait=self.wait_strategy(),
            sleep=sleep,
            before_sleep=before_sleep,
            reraise=True,
        )


class RetryBudget:
    """Retries left for one whole fetch, shared by every request and thread of it."""

    def __init__(self, total: int) -> None:
        if total < 0:
            raise ValueError("a retry budget cannot be negative")
        self.total = total
        self._spent = 0
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        with self._lock:
            return self._spent

    @property
    def remaining(self) -> int:
        with self._lock:
            return self.total - self._spent

    def spend(self, *, url: str = "", status: int | None = None, reason: str = "") -> None:
        """Take one retry, or raise ``RetryBudgetExceededError`` when none is left."""
        with self._lock:
            if self._spent < self.total:
                self._spent += 1
                return
            spent = self._spent
        where = f" (last failure: {reason} on {url})" if url else ""
        raise RetryBudgetExceededError(
            f"The retry budget of this fetch is used up: {spent} retries spent across all "
            f"requests{where}. The server seems to be struggling; try again later, or raise "
            f"CROWDSIFT_RETRY_BUDGET (now {self.total}).",
            url=url,
            status=status,
        )
