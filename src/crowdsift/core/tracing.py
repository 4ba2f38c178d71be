"""OpenTelemetry spans for every stage and engine call, exported over OTLP only when asked.

A research run fans out into dozens of engine calls over two parallel branches; a trace shows
which stage took the time, which model spent the tokens and where the gate threw items away.
Code marks its work with ``@observe`` (functions and methods, sync or async) and
``stage_span`` (a block inside a function); both go through the OpenTelemetry *API*.

Off by default: until ``configure_tracing`` installs a provider, the API's proxy tracer hands
out non-recording spans, attribute callbacks are never called, and no SDK module is imported.
With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) set, spans are batched to that
OTLP/HTTP endpoint (Langfuse, Jaeger, any collector) and flushed when the process exits.
Tracing must never fail or slow a run: attribute callbacks that raise are ignored, and an
unreachable collector costs one warning, a short export timeout and then dropped batches.

Spans carry counts, names and timings, never secrets or prompts; the question itself goes on
the root span only. Exception messages are redacted like log lines.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from crowdsift import __version__
from crowdsift.core.extras import has_module, pip_line
from crowdsift.core.log import get_logger, redact_text, register_secrets

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from crowdsift.core.config import Settings

log = get_logger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
AttrValue = AttributeValue
Attributes = Mapping[str, AttrValue | None]

# Attribute names (OpenTelemetry's gen_ai.* semantic conventions where one exists).
PHASE = "crowdsift.phase"
ENGINE = "crowdsift.engine"
MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
LATENCY_MS = "crowdsift.latency_ms"
COST_USD = "crowdsift.cost_usd"
SOURCE = "crowdsift.source"
ITEMS_IN = "crowdsift.items_in"
ITEMS_OUT = "crowdsift.items_out"
YIELD = "crowdsift.yield"
STAGE = "crowdsift.stage"
STATUS = "crowdsift.status"

ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
_HEADERS_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
_TIMEOUT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
EXPORT_TIMEOUT_S = 2.0
"""Per export, unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise: a dead collector at exit
then costs about a second (the exporter's retries included), not the SDK's default ten."""
FAILURE_COOLDOWN_S = 60.0
"""After a failed export, batches are dropped (not retried) for this long."""

_tracer = trace.get_tracer("crowdsift", __version__)
_install_lock = threading.Lock()
_installed: TracerProvider | None = None


# --- Marking work ---------------------------------------------------------------------------------


def observe(
    name: str | Callable[..., str] | None = None,
    *,
    attributes: Callable[..., Attributes] | None = None,
    result_attributes: Callable[[Any], Attributes] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the decorated function (sync or async) inside a span.

    ``name`` defaults to the function's qualname; a callable gets the call's arguments (so a
    method's span can be ``engine.<phase>``). ``attributes(*args, **kwargs)`` is set at the
    start and ``result_attributes(result)`` at the end, both only when the span records. An
    exception is recorded, sets the ERROR status and propagates unchanged.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        def span_name(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
            if name is None:
                return fn.__qualname__
            return name if isinstance(name, str) else name(*args, **kwargs)

        def start(span: Span, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if attributes is not None and span.is_recording():
                _set(span, _safely(attributes, *args, **kwargs))

        def finish(span: Span, result: Any) -> None:
            if result_attributes is not None and span.is_recording():
                _set(span, _safely(result_attributes, result))

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with _span(span_name(args, kwargs)) as span:
                    start(span, args, kwargs)
                    result = await fn(*args, **kwargs)
                    finish(span, result)
                    return result

            return cast(Callable[P, R], async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with _span(span_name(args, kwargs)) as span:
                start(span, args, kwargs)
                result = fn(*args, **kwargs)
                finish(span, result)
                return result

        return wrapper

    return decorate


@contextmanager
def stage_span(name: str, **attributes: AttrValue | None) -> Iterator[Span]:
    """A span around a block: ``with stage_span("research.reddit", source="archive"):``.

    Keys without a dot get the ``crowdsift.`` prefix (``items_in`` → ``crowdsift.items_in``);
    ``crowdsift.stage`` is the name's last part. Add results later with ``annotate(span, ...)``.
    """
    with _span(name) as span:
        annotate(span, stage=name.rsplit(".", 1)[-1], **attributes)
        yield span


def annotate(span: Span, **attributes: AttrValue | None) -> None:
    """Set attributes on a recording span; ``None`` values are skipped, bare keys prefixed."""
    if span.is_recording():
        _set(span, {_key(key): value for key, value in attributes.items()})


def record_span(name: str, start_ns: int, end_ns: int, **attributes: AttrValue | None) -> None:
    """A span that already happened (``time.time_ns()`` bounds), a child of the current one.

    For phases timed by laps rather than wrapped in a block.
    """
    span = _tracer.start_span(name, start_time=start_ns)
    annotate(span, stage=name.rsplit(".", 1)[-1], **attributes)
    if span.is_recording():
        span.set_attribute(LATENCY_MS, round((end_ns - start_ns) / 1e6, 1))
    span.end(end_time=end_ns)


# --- Engine calls ---------------------------------------------------------------------------------


def engine_span_name(engine: Any, task: Any) -> str:  # noqa: ARG001  # observe's call
    """``engine.<phase>`` for ``Engine.run(self, task)``."""
    return f"engine.{task.phase}"


def engine_attributes(engine: Any, task: Any) -> Attributes:
    """What is known before the call: the phase, the engine and the task type (no prompt)."""
    return {PHASE: task.phase, ENGINE: engine.name, "crowdsift.task": type(task).__name__}


def reply_attributes(reply: Any) -> Attributes:
    """What the call cost: the model, tokens in and out, and USD when the model is priced."""
    usage = reply.usage
    return {
        MODEL: reply.model,
        INPUT_TOKENS: usage.prompt_tokens,
        OUTPUT_TOKENS: usage.completion_tokens,
        COST_USD: usage.cost_usd,
        "crowdsift.calls": usage.calls,
    }


# --- Export ---------------------------------------------------------------------------------------


def traces_endpoint(env: Mapping[str, str]) -> str | None:
    """Where spans go, resolved as the OTLP/HTTP exporter does; None when tracing is off."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if traces := env.get(TRACES_ENDPOINT_VARIABLE, "").strip():
        return traces
    if base := env.get(ENDPOINT_VARIABLE, "").strip():
        return f"{base.removesuffix('/')}/v1/traces"
    return None


def configure_tracing(settings_or_env: Settings | Mapping[str, str] | None = None) -> bool:
    """Install the OTLP exporter when an endpoint is set; True when spans are being exported.

    Reads ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT``, ``..._HEADERS`` (``key=value,...``, e.g.
    Langfuse's ``Authorization=Basic ...``) and ``..._TIMEOUT`` from the given mapping, else
    from the process environment (``Settings`` carries no OTEL variables: they are the standard
    ones). Idempotent. Without an endpoint nothing is installed and no SDK module is imported.
    A provider the host application installed itself is left alone (returns False).
    """
    global _installed
    env = settings_or_env if isinstance(settings_or_env, Mapping) else os.environ
    with _install_lock:
        if _installed is not None:
            return True
        endpoint = traces_endpoint(env)
        if endpoint is None:
            return False
        if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            log.info("tracing_left_to_host", reason="a tracer provider is already installed")
            return False
        if not has_module("opentelemetry.sdk") or not has_module("opentelemetry.exporter"):
            log.warning(
                "tracing_off",
                endpoint=_safe_url(endpoint),
                error="the OpenTelemetry SDK and OTLP exporter are not installed",
                hint=pip_line("otel"),
            )
            return False
        try:
            _installed = _install(endpoint, env)
        except Exception as exc:  # a bad OTEL_* value must not stop the command
            log.warning("tracing_off", endpoint=_safe_url(endpoint), error=redact_text(str(exc)))
            return False
    log.info("tracing_on", endpoint=_safe_url(endpoint))
    return True


def _install(endpoint: str, env: Mapping[str, str]) -> TracerProvider:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.util.re import parse_env_headers

    raw_headers = next((env[v] for v in _HEADERS_VARIABLES if env.get(v)), "")
    headers = parse_env_headers(raw_headers, liberal=True)
    register_secrets(headers.values())
    timeout = _seconds(next((env[v] for v in _TIMEOUT_VARIABLES if env.get(v)), ""))
    exporter = _GuardedExporter(
        OTLPSpanExporter(endpoint=endpoint, headers=headers, timeout=timeout),
        _safe_url(endpoint),
    )
    resource = Resource.create({"service.name": "crowdsift", "service.version": __version__})
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(cast("SpanExporter", exporter)))
    trace.set_tracer_provider(provider)
    atexit.register(_flush_at_exit, provider)
    return provider


def _flush_at_exit(provider: TracerProvider) -> None:
    """Send what is queued before the process ends (a CLI run's spans end just before exit)."""
    try:
        provider.shutdown()
    except Exception as exc:  # tracing never fails a run, not even at exit
        log.warning("tracing_flush_failed", error=redact_text(str(exc))[:200])


class _GuardedExporter:
    """The OTLP exporter behind a breaker: one warning per outage, then dropped batches.

    Without it a dead collector would log every retry and make each later batch (the last one
    at exit included) wait out the full timeout again.
    """

    def __init__(
        self,
        inner: SpanExporter,
        endpoint: str,
        *,
        cooldown_s: float = FAILURE_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self._inner = inner
        self._endpoint = endpoint
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._result = SpanExportResult
        self._failed_at: float | None = None
        self.dropped = 0
        # The exporter logs every retry and failure itself; this class says it once instead.
        logging.getLogger("opentelemetry.exporter.otlp.proto.http").setLevel(logging.CRITICAL)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._failed_at is not None and self._clock() - self._failed_at < self._cooldown_s:
            self.dropped += len(spans)
            return self._result.FAILURE
        try:
            result = self._inner.export(spans)
        except Exception:  # an exporter bug must not reach the SDK's worker thread
            result = self._result.FAILURE
        if result is self._result.SUCCESS:
            self._failed_at = None
            return result
        if self._failed_at is None:
            log.warning(
                "tracing_export_failed", endpoint=self._endpoint, spans=len(spans),
                hint=f"spans are dropped for {self._cooldown_s:g} s; check {ENDPOINT_VARIABLE} "
                "and the collector, or unset it to turn tracing off",
            )  # fmt: skip
        self._failed_at = self._clock()
        self.dropped += len(spans)
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


# --- Helpers --------------------------------------------------------------------------------------


@contextmanager
def _span(name: str) -> Iterator[Span]:
    """The current span for a block, with latency, error status and redacted exceptions."""
    started = time.perf_counter()
    with _tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except Exception as exc:
            if span.is_recording():
                _record_error(span, exc)
            raise
        except BaseException:  # cancelled (a timeout elsewhere), not failed
            if span.is_recording():
                span.set_attribute(STATUS, "cancelled")
            raise
        finally:
            if span.is_recording():
                span.set_attribute(LATENCY_MS, round((time.perf_counter() - started) * 1000, 1))


def _record_error(span: Span, exc: Exception) -> None:
    message = redact_text(str(exc))[:1000]
    stack = redact_text("".join(traceback.format_exception(exc)))[-8000:]
    span.record_exception(
        exc, attributes={"exception.message": message, "exception.stacktrace": stack}
    )
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {message[:200]}"))
    span.set_attribute(STATUS, "error")


def _safely(compute: Callable[..., Attributes], *args: Any, **kwargs: Any) -> Attributes:
    """Attributes from a callback; a callback that raises costs its attributes, not the run."""
    try:
        return compute(*args, **kwargs)
    except Exception as exc:
        log.debug("tracing_attributes_failed", callback=repr(compute), error=str(exc)[:200])
        return {}


def _set(span: Span, attributes: Attributes) -> None:
    for key, value in attributes.items():
        if value is not None:
            span.set_attribute(key, value)


def _seconds(value: str) -> float:
    """OTEL_EXPORTER_OTLP_TIMEOUT as this exporter reads it (seconds); else our default."""
    try:
        seconds = float(value)
    except ValueError:
        return EXPORT_TIMEOUT_S
    return seconds if seconds > 0 else EXPORT_TIMEOUT_S


def _key(key: str) -> str:
    return key if "." in key else f"crowdsift.{key}"


def _safe_url(url: str) -> str:
    """``url`` without user info or query string, for logs."""
    try:
        parts = urlsplit(url)
        netloc = f"{parts.hostname or ''}:{parts.port}" if parts.port else parts.hostname or ""
    except ValueError:
        return "(an unparsable URL)"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
