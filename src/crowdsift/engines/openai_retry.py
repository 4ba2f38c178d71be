"""When to retry a chat-completions call, how long to wait, and what to tell the user after.

The SDK's own retries are off so that one policy, with an injected sleep, covers every
endpoint: 429, 5xx (and 408/409, which OpenAI documents as transient), timeouts, dropped
connections and cut-off bodies are retried with exponential backoff plus jitter, waiting at
least what ``Retry-After`` / ``retry-after-ms`` ask, never longer than ``max_wait``. A server
that asks for more than ``max_wait`` is not asked again sooner than it said: the call fails at
once (and its phase degrades as on any outage). Other 4xx answers are final: retrying a wrong
key or model name only burns time.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit, urlunsplit

import openai

from crowdsift.core.errors import EngineConfigError, EngineError, EngineTransportError
from crowdsift.core.log import redact_text

RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
KEY_VARIABLE = "CROWDSIFT_LLM_API_KEY"
URL_VARIABLE = "CROWDSIFT_LLM_BASE_URL"
_SDK_PREFIX = re.compile(r"^Error code: \d+ - ")  # the SDK's prefix; we state the status ourselves


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, floored by the server's Retry-After, capped."""

    max_retries: int = 3
    max_wait: float = 60.0
    base: float = 1.0
    rng: Callable[[], float] = random.random
    clock: Callable[[], float] = time.time  # only to read Retry-After given as an HTTP date

    def wait(self, retry: int, headers: Mapping[str, str] | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        backoff = self.base * 2.0 ** (retry - 1) * (0.5 + self.rng())
        asked = retry_after_seconds(headers, self.clock) if headers is not None else None
        return round(min(max(backoff, asked or 0.0), self.max_wait), 3)

    def asks_too_long(self, headers: Mapping[str, str] | None) -> float | None:
        """The server's asked wait when it is longer than ``max_wait`` (so no retry); else None."""
        asked = retry_after_seconds(headers, self.clock) if headers is not None else None
        return asked if asked is not None and asked > self.max_wait else None


def retry_after_seconds(headers: Mapping[str, str], clock: Callable[[], float]) -> float | None:
    """What ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date) asks for, if sane."""
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        seconds: float | None
        try:
            seconds = float(value) / divisor
        except ValueError:
            seconds = _http_date_delta(value, clock)
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _http_date_delta(value: str, clock: Callable[[], float]) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - clock())


@dataclass(frozen=True)
class Failure:
    """One failed request, classified: can it be retried, its status, headers and a summary."""

    retryable: bool
    outcome: str  # short label for logs: "http_429", "timeout", "connection_error", ...
    status: int | None
    headers: Mapping[str, str] | None
    detail: str


def classify(exc: Exception) -> Failure:
    """Sort an exception from ``chat.completions.create`` into retryable or final."""
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        headers = dict(exc.response.headers.items())
        detail = _SDK_PREFIX.sub("", exc.message)
        return Failure(code in RETRYABLE_STATUSES, f"http_{code}", code, headers, detail)
    if isinstance(exc, openai.APITimeoutError):
        return Failure(True, "timeout", None, None, "the request timed out")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        return Failure(True, "connection_error", None, None, f"connection failed ({why})")
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return Failure(True, "bad_body", None, None, f"the response body was not valid ({exc})")
    return Failure(False, "api_error", None, None, f"{type(exc).__name__}: {exc}")


def is_json_schema_rejection(exc: Exception) -> bool:
    """A 400 that says the endpoint does not take ``response_format: json_schema``."""
    if not isinstance(exc, openai.BadRequestError):
        return False
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in ("response_format", "json_schema", "response format"))


def safe_url(url: str) -> str:
    """``url`` without user info or query string, where a key could hide (Gemini's ``?key=``)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def final_error(
    failure: Failure, *, url: str, attempts: int, asked_wait: float | None = None
) -> EngineError:
    """The error for a request that will not be retried again, saying what to do next.

    ``asked_wait``: the server's Retry-After, when it was longer than we may wait.
    """
    where = f"the chat endpoint {url}"
    detail = redact_text(failure.detail)
    if failure.status in (401, 403):
        return EngineConfigError(
            f"{where} refused the API key (HTTP {failure.status}: {detail}). Check "
            f"{KEY_VARIABLE} (and {URL_VARIABLE}: the key must belong to that provider), or use "
            "--engine local to run without a key."
        )
    if failure.status == 404:
        return EngineTransportError(
            f"{where} answered HTTP 404 ({detail}): the model name (MODEL_* variables) or "
            f"{URL_VARIABLE} is wrong; OpenAI-compatible servers usually end in /v1.",
            url=url,
            status=404,
        )
    if not failure.retryable:
        return EngineTransportError(
            f"{where} rejected the request with HTTP {failure.status} ({detail}). The model "
            "(MODEL_* variables) may not support this request; try another model or "
            "--engine local.",
            url=url,
            status=failure.status,
        )
    what = f"HTTP {failure.status}" if failure.status is not None else failure.outcome
    if asked_wait is not None:
        return EngineTransportError(
            f"{where} answered {what} ({detail}) and asked us to wait {asked_wait:.0f} s "
            "(Retry-After), longer than CROWDSIFT_MAX_RETRY_WAIT allows; not asking again "
            "sooner than it said. Try again later, raise CROWDSIFT_MAX_RETRY_WAIT, or use "
            "--engine local.",
            url=url,
            status=failure.status,
        )
    tries = "attempt" if attempts == 1 else "attempts"
    return EngineTransportError(
        f"{where} failed after {attempts} {tries}: {what} ({detail}). Check that it is up and "
        f"that {URL_VARIABLE} is right, raise CROWDSIFT_LLM_TIMEOUT or "
        "CROWDSIFT_LLM_MAX_RETRIES, try again later, or use --engine local.",
        url=url,
        status=failure.status,
    )
