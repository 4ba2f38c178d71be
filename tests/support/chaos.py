"""Chaos mode for the local protocol servers: random but reproducible faults at set rates.

``add_fault`` scripts one failure at a time; chaos answers the question the scripted faults
cannot: does a whole fetch survive a server that fails a fifth of the time? A ``ChaosMonkey``
sits in front of a server's normal answer and, per request, either lets it through or injects
one fault: a 5xx (one of 500/502/503/504), a 429 with or without ``Retry-After``, a stall
longer than the client's read timeout, a connection closed without an answer, a 200 whose JSON
is cut in half, or a 200 HTML error page.

Decisions are deterministic per request, not per arrival: the n-th request for the same
method and target (path and query) draws from an RNG seeded with ``(seed, method, target,
n)``. A concurrent fetch therefore meets the same faults on every run, whatever order its
threads happen to reach the server in, and a failing seed can be replayed.

``ChaosLog`` records every decision with the time it was made (from an injected clock, so a
test whose client sleeps on a fake clock reads the same time line) and any ``Retry-After``
promised; ``retry_after_checks`` pairs each such promise with the next request for that
target, so a test can check the client waited.
"""

from __future__ import annotations

import fnmatch
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tests.support.local_http import Reply

FaultKind = Literal[
    "server_error",
    "rate_limited",
    "rate_limited_bare",
    "timeout",
    "reset",
    "truncated",
    "non_json",
]
FAULT_ORDER: tuple[FaultKind, ...] = (
    "server_error",
    "rate_limited",
    "rate_limited_bare",
    "timeout",
    "reset",
    "truncated",
    "non_json",
)
SERVER_ERROR_CODES = (500, 502, 503, 504)
_CLOCK_SLACK = 1e-6

_EDGE_PAGE = (
    "<!doctype html><html><head><title>{status} {phrase}</title></head><body>"
    "<h1>{phrase}</h1><p>The upstream server had a problem. Please try again later.</p>"
    "</body></html>"
)
_PHRASES = {
    200: "OK",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class ChaosConfig(BaseModel):
    """The share of requests that meet each fault (0 ≤ rate, all rates together ≤ 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server_error: float = Field(0.0, ge=0.0, le=1.0, description="5xx: one of 500/502/503/504")
    rate_limited: float = Field(0.0, ge=0.0, le=1.0, description="429 with Retry-After")
    rate_limited_bare: float = Field(0.0, ge=0.0, le=1.0, description="429 without Retry-After")
    timeout: float = Field(0.0, ge=0.0, le=1.0, description="stall, then close unanswered")
    reset: float = Field(0.0, ge=0.0, le=1.0, description="close the connection unanswered")
    truncated: float = Field(0.0, ge=0.0, le=1.0, description="the normal answer cut in half")
    non_json: float = Field(0.0, ge=0.0, le=1.0, description="200 with an HTML error page")
    seed: int = 0
    retry_after: tuple[int, int] = Field(
        (1, 30), description="inclusive range of whole seconds a 429 asks the client to wait"
    )
    stall_seconds: float = Field(
        2.0, gt=0.0, description="how long a timeout holds the request: beyond the client's"
    )
    paths: tuple[str, ...] = Field(
        ("*",), description="globs of the request paths chaos applies to"
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.total_rate > 1.0 + 1e-9:
            raise ValueError(
                f"chaos rates add up to {self.total_rate:.3f}; they must sum to at most 1"
            )
        low, high = self.retry_after
        if low < 0 or high < low:
            raise ValueError(f"retry_after must be a range 0 ≤ low ≤ high, got {self.retry_after}")
        return self

    def rate(self, kind: FaultKind) -> float:
        value: float = getattr(self, kind)
        return value

    @property
    def total_rate(self) -> float:
        return sum(self.rate(kind) for kind in FAULT_ORDER)


@dataclass(frozen=True)
class ChaosEvent:
    """One request chaos saw: when, which, its attempt number, and the fault (None = passed)."""

    time: float
    method: str
    path: str
    target: str  # path and query, as sent
    attempt: int  # 1 for the first request for (method, target), 2 for the next, ...
    fault: FaultKind | None
    status: int | None = None  # the status chaos answered with (None: none, or the normal one)
    retry_after: int | None = None  # seconds promised in Retry-After


@dataclass(frozen=True)
class RetryAfterCheck:
    """A promised ``Retry-After`` and the next request for the same target (None: none came)."""

    promised: ChaosEvent
    next_request: ChaosEvent | None

    @property
    def waited(self) -> float | None:
        if self.next_request is None:
            return None
        return self.next_request.time - self.promised.time

    @property
    def respected(self) -> bool:
        """True when no request came back, or it came no sooner than promised.

        A microsecond of slack: a fake clock summing float waits drifts by rounding.
        """
        waited = self.waited
        return waited is None or waited >= (self.promised.retry_after or 0) - _CLOCK_SLACK


class ChaosLog:
    """Every chaos decision in arrival order; safe to append to from handler threads."""

    def __init__(self) -> None:
        self._events: list[ChaosEvent] = []
        self._lock = threading.Lock()

    def record(self, event: ChaosEvent) -> None:
        with self._lock:
            self._events.append(event)

    @property
    def events(self) -> list[ChaosEvent]:
        with self._lock:
            return list(self._events)

    def faults(self) -> list[ChaosEvent]:
        return [event for event in self.events if event.fault is not None]

    def counts(self) -> dict[FaultKind, int]:
        """Injected faults per kind (kinds never injected are absent)."""
        counts: dict[FaultKind, int] = {}
        for event in self.events:
            if event.fault is not None:
                counts[event.fault] = counts.get(event.fault, 0) + 1
        return counts

    def retry_after_checks(self) -> list[RetryAfterCheck]:
        """Each ``Retry-After`` promised, paired with the next request for that target."""
        events = self.events
        following: dict[tuple[str, str, int], ChaosEvent] = {
            (e.method, e.target, e.attempt): e for e in events
        }
        return [
            RetryAfterCheck(e, following.get((e.method, e.target, e.attempt + 1)))
            for e in events
            if e.retry_after is not None
        ]

    def retry_after_violations(self) -> list[RetryAfterCheck]:
        return [check for check in self.retry_after_checks() if not check.respected]


@dataclass(frozen=True)
class _Decision:
    fault: FaultKind | None
    status: int | None
    retry_after: int | None


class ChaosMonkey:
    """Decides, per request, whether to inject a fault, and builds the faulty answer.

    ``protected`` paths (a server's token endpoint) pass untouched unless ``config.paths``
    names one of them exactly: a fetch under chaos should fail on its API calls, not at login,
    unless the test asks for that.
    """

    def __init__(
        self,
        config: ChaosConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        protected: tuple[str, ...] = (),
    ) -> None:
        self.config = config
        self.log = ChaosLog()
        self._clock = clock
        self._protected = protected
        self._attempts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._released = threading.Event()

    def applies_to(self, path: str) -> bool:
        if path in self._protected and path not in self.config.paths:
            return False
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.config.paths)

    def serve(
        self, method: str, path: str, target: str, answer: Callable[[], Reply | None]
    ) -> Reply | None:
        """The reply to one request: ``answer()`` as is, or with a fault injected.

        None means: close the connection without an answer (a reset, or a timeout after the
        stall).
        """
        if not self.applies_to(path):
            return answer()
        with self._lock:
            key = (method, target)
            attempt = self._attempts.get(key, 0) + 1
            self._attempts[key] = attempt
            now = self._clock()
        decision = self._decide(method, target, attempt)
        # Logged before the fault plays out: a stalled request is in the log while it stalls.
        self.log.record(
            ChaosEvent(
                time=now,
                method=method,
                path=path,
                target=target,
                attempt=attempt,
                fault=decision.fault,
                status=decision.status,
                retry_after=decision.retry_after,
            )
        )
        return self._inject(decision, answer)

    def release(self) -> None:
        """End every stall now (servers call this when they stop, so threads can be joined)."""
        self._released.set()

    # --- internals ----------------------------------------------------------------------

    def _decide(self, method: str, target: str, attempt: int) -> _Decision:
        rng = random.Random(f"{self.config.seed}|{method}|{target}|{attempt}")
        draw = rng.random()
        cumulative = 0.0
        for kind in FAULT_ORDER:
            cumulative += self.config.rate(kind)
            if draw < cumulative:
                return self._details(kind, rng)
        return _Decision(None, None, None)

    def _details(self, kind: FaultKind, rng: random.Random) -> _Decision:
        if kind == "server_error":
            return _Decision(kind, rng.choice(SERVER_ERROR_CODES), None)
        if kind == "rate_limited":
            low, high = self.config.retry_after
            return _Decision(kind, 429, rng.randint(low, high))
        if kind == "rate_limited_bare":
            return _Decision(kind, 429, None)
        if kind == "non_json":
            return _Decision(kind, 200, None)
        return _Decision(kind, None, None)  # timeout, reset, truncated: no status of their own

    def _inject(self, decision: _Decision, answer: Callable[[], Reply | None]) -> Reply | None:
        kind = decision.fault
        if kind is None:
            return answer()
        if kind == "timeout":
            self._released.wait(self.config.stall_seconds)
            return None
        if kind == "reset":
            return None
        if kind == "truncated":
            reply = answer()
            if reply is not None:
                reply.body = reply.body[: len(reply.body) // 2]
            return reply
        status = decision.status or 500
        if status == 500:  # the API's own error envelope; the edge answers the rest in HTML
            body = json.dumps({"message": _PHRASES[500], "error": 500}).encode()
            return Reply(status, body, {"Content-Type": "application/json; charset=UTF-8"})
        page = _EDGE_PAGE.format(status=status, phrase=_PHRASES.get(status, "Error"))
        headers = {"Content-Type": "text/html; charset=UTF-8"}
        if decision.retry_after is not None:
            headers["Retry-After"] = str(decision.retry_after)
        return Reply(status, page.encode(), headers)


class ChaosHost:
    """``set_chaos`` / ``chaos_monkey`` / ``chaos_log`` for a protocol server.

    The server provides ``_lock`` and ``_chaos``; ``chaos_protected`` names paths chaos spares
    unless its ``paths`` name them exactly (the Reddit token route).
    """

    _lock: threading.Lock | threading.RLock
    _chaos: ChaosMonkey | None
    chaos_protected: tuple[str, ...] = ()

    def set_chaos(
        self, config: ChaosConfig | None, *, clock: Callable[[], float] = time.monotonic
    ) -> ChaosMonkey | None:
        """Inject faults at ``config``'s rates from now on (None: chaos off); a fresh log.

        ``clock`` stamps the chaos log: pass the fake clock the client sleeps on, and the gap
        between a 429 and the retry is the wait the client chose.
        """
        monkey = (
            None
            if config is None
            else ChaosMonkey(config, clock=clock, protected=self.chaos_protected)
        )
        with self._lock:
            previous, self._chaos = self._chaos, monkey
        if previous is not None:
            previous.release()
        return monkey

    @property
    def chaos_monkey(self) -> ChaosMonkey | None:
        with self._lock:
            return self._chaos

    @property
    def chaos_log(self) -> ChaosLog:
        """The current chaos log; raises when chaos is off (a test asked for the wrong thing)."""
        monkey = self.chaos_monkey
        if monkey is None:
            raise RuntimeError("chaos is off: pass chaos=ChaosConfig(...) or call set_chaos()")
        return monkey.log
