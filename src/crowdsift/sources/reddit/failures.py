"""Which errors mean "this source is failing" rather than "this one query failed" (pure).

The ``auto`` chain hands the rest of a run to the next source only when the source itself is
failing: it cannot be reached (DNS, refused, TLS, no answer in time, 5xx after the retries),
it refuses us (a 401/403 that is not about one subreddit, bad credentials), or it throttles us
beyond ``CROWDSIFT_MAX_RETRY_WAIT`` (a 429 whose wait is too long, or the fetch's retry budget
spent). Everything else — a 400 on one query, Arctic Shift's per-query timeout, a private
subreddit, a malformed answer — stays a failure of that query, reported as today; and a
source that answers with nothing is not failing at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from crowdsift.core.errors import (
    ArchiveError,
    AuthError,
    ConfigError,
    CrowdsiftError,
    HttpStatusError,
    RetryBudgetExceededError,
    SourceUnreachableError,
    SubredditUnavailableError,
    TransportError,
)
from crowdsift.core.models import SourceState

_REFUSED = (401, 403)


@dataclass(frozen=True)
class SourceFailure:
    """How a source failed (a ``SourceStatus`` state) and the message that says so."""

    state: SourceState
    detail: str


def source_failure(exc: BaseException) -> SourceFailure | None:
    """The failure of the whole source that ``exc`` shows, or None for a one-query failure."""
    if not isinstance(exc, CrowdsiftError):
        return None
    state = _state(exc)
    return SourceFailure(state, _detail(exc)) if state is not None else None


def _state(exc: CrowdsiftError) -> SourceState | None:
    if isinstance(exc, SourceUnreachableError):
        return "unreachable"
    if isinstance(exc, AuthError):
        return "auth_failed"
    if isinstance(exc, ConfigError):
        return "not_configured"
    if isinstance(exc, ArchiveError):
        return "unreachable"
    if isinstance(exc, SubredditUnavailableError):
        return "auth_failed" if _blocked(exc) else None
    if isinstance(exc, RetryBudgetExceededError):
        return "rate_limited"
    if isinstance(exc, HttpStatusError):
        return "auth_failed" if exc.status in _REFUSED else None
    if isinstance(exc, TransportError):
        if exc.status == 429:
            return "rate_limited"
        if exc.status is None or exc.status >= 500:
            return "unreachable"
    return None


def _blocked(exc: SubredditUnavailableError) -> bool:
    """A 403 without Reddit's ``reason`` body: not a private subreddit but a refusal of us
    (Reddit answers blocked clients, e.g. datacenter addresses, with a bare 403 page)."""
    cause = exc.__cause__
    if exc.status != 403 or not isinstance(cause, HttpStatusError):
        return False
    body = cause.body
    return not (isinstance(body, dict) and isinstance(body.get("reason"), str))


def _detail(exc: CrowdsiftError) -> str:
    """The error's own message, without a leading ``<source> unreachable:`` (the status line
    says that already)."""
    text = str(exc)
    if isinstance(exc, SourceUnreachableError):
        text = text.removeprefix(f"{exc.source} unreachable: ")
    return text
