"""Tracing: ``@observe`` and ``stage_span``, a research run's span tree, OTLP export end to end.

The global tracer provider can be set once per process, so one in-memory provider serves the
session; a sampler switch keeps it from recording outside the tests that ask for ``spans``.
Export itself is checked in subprocesses against a local OTLP/HTTP collector.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import StatusCode

from crowdsift.core.config import Settings
from crowdsift.core.log import register_secrets
from crowdsift.core.tracing import (
    COST_USD,
    ENGINE,
    INPUT_TOKENS,
    ITEMS_IN,
    ITEMS_OUT,
    LATENCY_MS,
    MODEL,
    OUTPUT_TOKENS,
    PHASE,
    SOURCE,
    STAGE,
    STATUS,
    YIELD,
    _GuardedExporter,
    configure_tracing,
    observe,
    record_span,
    stage_span,
    traces_endpoint,
)
from crowdsift.engines.base import LocalKit
from crowdsift.engines.embedding import CachedEmbedder, HashingEmbedder
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.sources import gated_source_fetch
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import ensure_demo_experts
from crowdsift.sources.models import EvidenceItem, SourceFetch
from tests.support.local_http import LocalHTTPServer, Reply
from tests.support.net import free_port

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
EXPERTS = ["desk_gear_weekly", "homelab_field_notes"]
REDDIT_STAGES = {"formulate", "search", "drill"}
EXPERT_PHASES = {"map", "medium_scoring", "resolve", "reduce", "language"}


# --- The session's collector ------------------------------------------------------------------


class _Switch(Sampler):
    """Records only while a test holds the ``spans`` fixture; other tests get no-op spans."""

    on = False

    def should_sample(self, *_args: Any, **_kwargs: Any) -> SamplingResult:
        return SamplingResult(Decision.RECORD_AND_SAMPLE if self.on else Decision.DROP)

    def get_description(self) -> str:
        return "test switch"


_SWITCH = _Switch()


@pytest.fixture(scope="session")
def _collector() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=_SWITCH, shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    assert trace.get_tracer_provider() is provider, "another provider was installed first"
    yield exporter
    provider.shutdown()


@pytest.fixture
def spans(_collector: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    _collector.clear()
    _SWITCH.on = True
    try:
        yield _collector
    finally:
        _SWITCH.on = False
        _collector.clear()


def named(finished: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def ancestors(span: ReadableSpan, finished: Sequence[ReadableSpan]) -> list[str]:
    """Names from the span's parent up to the root."""
    by_id = {s.context.span_id: s for s in finished}
    names, parent = [], span.parent
    while parent is not None and parent.span_id in by_id:
        above = by_id[parent.span_id]
        names.append(above.name)
        parent = above.parent
    return names


# --- @observe, stage_span, record_span ---------------------------------------------------------


def test_observe_wraps_a_sync_function_with_attributes_from_args_and_result(
    spans: InMemorySpanExporter,
) -> None:
    @observe(
        attributes=lambda items, source: {ITEMS_IN: len(items), SOURCE: source, "x.none": None},
        result_attributes=lambda kept: {ITEMS_OUT: len(kept)},
    )
    def keep_even(items: list[int], _source: str) -> list[int]:
        return [i for i in items if i % 2 == 0]

    assert keep_even([1, 2, 3, 4, 6], "reddit") == [2, 4, 6]
    (span,) = spans.get_finished_spans()
    assert span.name.endswith("keep_even")  # the qualname by default
    attrs = dict(span.attributes or {})
    assert attrs[ITEMS_IN] == 5 and attrs[ITEMS_OUT] == 3 and attrs[SOURCE] == "reddit"
    assert "x.none" not in attrs and attrs[LATENCY_MS] >= 0
    assert span.status.status_code is StatusCode.UNSET


def test_observe_names_async_spans_from_the_call_and_nests_them(
    spans: InMemorySpanExporter,
) -> None:
    @observe(lambda phase: f"engine.{phase}", attributes=lambda phase: {PHASE: phase})
    async def call(phase: str) -> str:
        await asyncio.sleep(0)
        return phase.upper()

    @observe("outer")
    async def outer() -> list[str]:
        return list(await asyncio.gather(call("map"), call("reduce")))

    assert asyncio.run(outer()) == ["MAP", "REDUCE"]
    finished = spans.get_finished_spans()
    (root,) = named(finished, "outer")
    children = [s for s in finished if s.name.startswith("engine.")]
    assert sorted(s.name for s in children) == ["engine.map", "engine.reduce"]
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in children)
    assert {dict(s.attributes or {})[PHASE] for s in children} == {"map", "reduce"}


def test_an_exception_sets_error_status_is_recorded_redacted_and_propagates(
    spans: InMemorySpanExporter,
) -> None:
    register_secrets(["sk-trace-secret-1234"])

    class BoomError(RuntimeError):
        pass

    @observe("failing")
    async def failing() -> None:
        raise BoomError("upstream said no to key sk-trace-secret-1234")

    with pytest.raises(BoomError, match="sk-trace-secret-1234"):  # the caller's error is untouched
        asyncio.run(failing())
    (span,) = spans.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert "BoomError" in (span.status.description or "")
    assert dict(span.attributes or {})[STATUS] == "error"
    (event,) = span.events
    recorded = dict(event.attributes or {})
    assert event.name == "exception" and "upstream said no" in str(recorded["exception.message"])
    assert "sk-trace-secret-1234" not in json.dumps(recorded)
    assert "sk-trace-secret-1234" not in (span.status.description or "")


def test_cancellation_is_not_an_error_and_a_broken_callback_costs_only_its_attributes(
    spans: InMemorySpanExporter,
) -> None:
    def broken(*_args: Any) -> dict[str, int]:
        raise KeyError("no such field")

    @observe("slow", attributes=broken)
    async def slow() -> None:
        await asyncio.sleep(10)

    @observe("fine", result_attributes=broken)
    def fine() -> int:
        return 7

    async def cancel_it() -> None:
        task = asyncio.ensure_future(slow())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())
    assert fine() == 7
    (slow_span,) = named(spans.get_finished_spans(), "slow")
    assert slow_span.status.status_code is StatusCode.UNSET
    assert dict(slow_span.attributes or {})[STATUS] == "cancelled"
    (fine_span,) = named(spans.get_finished_spans(), "fine")
    assert set(dict(fine_span.attributes or {})) == {LATENCY_MS}


def test_stage_span_prefixes_keys_and_record_span_keeps_the_given_bounds(
    spans: InMemorySpanExporter,
) -> None:
    with stage_span("reddit.scout", items_out=4, source="archive", **{"gen_ai.x": 1}) as outer:
        record_span("expert.map", 1_000_000_000, 1_250_000_000, expert_id="e1")
        outer.set_attribute("crowdsift.extra", True)
    finished = spans.get_finished_spans()
    (scout,) = named(finished, "reddit.scout")
    (lap,) = named(finished, "expert.map")
    attrs = dict(scout.attributes or {})
    assert attrs[STAGE] == "scout" and attrs[ITEMS_OUT] == 4 and attrs[SOURCE] == "archive"
    assert attrs["gen_ai.x"] == 1 and attrs["crowdsift.extra"] is True
    assert (lap.start_time, lap.end_time) == (1_000_000_000, 1_250_000_000)
    assert lap.parent is not None and lap.parent.span_id == scout.context.span_id
    lap_attrs = dict(lap.attributes or {})
    assert lap_attrs[LATENCY_MS] == 250.0 and lap_attrs["crowdsift.expert_id"] == "e1"


def test_endpoint_resolution_mirrors_the_otlp_http_exporter() -> None:
    assert traces_endpoint({}) is None
    assert traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == (
        "http://c:4318/v1/traces"
    )
    assert traces_endpoint(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "x"}
    ) == "x"  # fmt: skip
    assert traces_endpoint(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}
    ) is None  # fmt: skip


def test_configure_tracing_leaves_a_host_provider_alone(
    _collector: InMemorySpanExporter,
) -> None:
    host = trace.get_tracer_provider()
    assert configure_tracing({}) is False
    assert configure_tracing({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}) is False
    assert trace.get_tracer_provider() is host


# --- The research run's span tree ---------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def expert_store(tmp_path: Path) -> Iterator[SqlExpertStore]:
    store = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.db'}")
    ensure_demo_experts(store)
    yield store
    store.close()


def local_answers(tokens: tuple[int, int] = (120, 30)) -> ScriptedEngine:
    """A scripted engine answering every task with its local strategy, counting tokens."""
    kit = LocalKit(embedder=CachedEmbedder(HashingEmbedder()))
    return ScriptedEngine(function=lambda task: task.run_local(kit), tokens_per_call=tokens)


def video(n: int, title: str) -> EvidenceItem:
    return EvidenceItem(
        kind="youtube", id=f"vid{n:08d}", title=title, text=f"{title}: a long review.",
        url=f"https://www.youtube.com/watch?v=vid{n:08d}", where="Gadget Reviews",
    )  # fmt: skip


async def youtube_tool(query: str, engine: Any) -> SourceFetch:
    """The real gate over four fixed videos: fewer than a page, so it never refetches."""
    videos = [video(1, "Plaud Note review: worth it vs a phone recording app?")]
    videos += [video(2, "Plaud Note after six months of meeting recordings")]
    videos += [video(3, "Phone recording app vs Plaud Note transcripts")]
    videos += [video(4, "Sourdough starter in ten minutes")]
    return await gated_source_fetch(
        query, kind="youtube", fetch=lambda _q, limit: videos[:limit], engine=engine
    )


def test_a_research_run_is_one_tree_with_stage_engine_and_gate_spans(
    spans: InMemorySpanExporter, demo_archive: Path, expert_store: SqlExpertStore
) -> None:
    engine = local_answers()
    source = ArchiveSource(demo_archive)
    deps = AskDeps(
        settings=Settings(),
        engine=engine,
        source=source,
        candidates=subreddit_profiles(demo_archive),
        expert_store=expert_store,
        source_tools={"youtube": youtube_tool},
    )
    try:
        run = asyncio.run(run_research(QUESTION, deps, experts=EXPERTS, sources=["youtube"]))
    finally:
        source.close()
    finished = spans.get_finished_spans()

    (root,) = named(finished, "research")
    assert root.parent is None
    root_attrs = dict(root.attributes or {})
    assert root_attrs["crowdsift.question"] == QUESTION
    assert root_attrs[STATUS] == run.result.status and root_attrs[ENGINE] == "scripted"
    assert root_attrs["crowdsift.calls"] == run.result.usage.calls
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}
    assert all(ancestors(s, finished)[-1:] == ["research"] for s in finished if s is not root)

    stages = {s.name.removeprefix("reddit.") for s in finished if s.name.startswith("reddit.")}
    assert stages == REDDIT_STAGES
    (search,) = named(finished, "reddit.search")
    search_attrs = dict(search.attributes or {})
    assert search_attrs[ITEMS_IN] == run.result.fetch.posts_seen  # type: ignore[union-attr]
    assert search_attrs[ITEMS_OUT] == len(run.result.reddit_response.ranked)  # type:
    # ignore[union-attr]
    assert "research.reddit" in ancestors(search, finished)

    engine_spans = _assert_engine_spans(finished, engine, run.result.usage.calls)
    _assert_expert_spans(finished, engine_spans)

    gates = named(finished, "relevance_filter")
    (gate,) = [g for g in gates if dict(g.attributes or {})[SOURCE] == "youtube"]
    gate_attrs = dict(gate.attributes or {})
    (fetched,) = run.result.source_fetches
    assert gate_attrs[SOURCE] == "youtube" and gate_attrs[ITEMS_IN] == 4
    assert gate_attrs[ITEMS_OUT] == len(fetched.items) and gate_attrs[YIELD] == fetched.yield_ratio
    assert ancestors(gate, finished)[:2] == ["source.youtube", "research.sources"]
    (youtube,) = named(finished, "source.youtube")
    assert dict(youtube.attributes or {})[ITEMS_OUT] == len(fetched.items)
    gate_calls = [s for s in engine_spans if ancestors(s, finished)[0] == "relevance_filter"]
    assert {s.name for s in gate_calls} == {"engine.filter"}
    assert len(gate_calls) == len(gates)  # one batched call per judgement, Reddit's included
    assert named(finished, "research.synthesize") and named(finished, "research.experts")
    reddit_gates = [g for g in gates if g is not gate]
    assert reddit_gates and all(
        ancestors(g, finished)[:2] == ["reddit.search", "research.reddit"] for g in reddit_gates
    )


def _assert_engine_spans(
    finished: Sequence[ReadableSpan], engine: ScriptedEngine, calls: int
) -> list[ReadableSpan]:
    """One ``engine.<phase>`` span per call, each with its model, tokens, cost and latency."""
    engine_spans = [s for s in finished if s.name.startswith("engine.")]
    assert len(engine_spans) == len(engine.requests) == calls
    phases = [dict(s.attributes or {})[PHASE] for s in engine_spans]
    assert sorted(phases) == sorted(task.phase for task in engine.requests)
    assert all(s.name == f"engine.{p}" for s, p in zip(engine_spans, phases, strict=True))
    for span in engine_spans:
        attrs = dict(span.attributes or {})
        assert attrs[MODEL] == "scripted" and attrs[ENGINE] == "scripted"
        assert (attrs[INPUT_TOKENS], attrs[OUTPUT_TOKENS]) == (120, 30)
        assert attrs[COST_USD] == 0.0 and LATENCY_MS in attrs
    return engine_spans


def _assert_expert_spans(
    finished: Sequence[ReadableSpan], engine_spans: Sequence[ReadableSpan]
) -> None:
    """An ``expert`` span per expert, a lap span per phase under it, its map calls inside."""
    experts = named(finished, "expert")
    assert sorted(dict(s.attributes or {})["crowdsift.expert_id"] for s in experts) == EXPERTS
    for expert in experts:
        laps = [s for s in finished if s.parent and s.parent.span_id == expert.context.span_id]
        assert {s.name for s in laps} >= {f"expert.{p}" for p in EXPERT_PHASES}
    map_calls = [s for s in engine_spans if s.name == "engine.map"]
    assert map_calls and all(ancestors(s, finished)[0] == "expert" for s in map_calls)


def test_the_reddit_gate_is_traced_inside_the_research_run(
    spans: InMemorySpanExporter, demo_archive: Path
) -> None:
    source = ArchiveSource(demo_archive)
    deps = AskDeps(
        settings=Settings(),
        engine=local_answers(),
        source=source,
        candidates=subreddit_profiles(demo_archive),
    )
    try:
        run = asyncio.run(run_research(QUESTION, deps))
    finally:
        source.close()
    finished = spans.get_finished_spans()
    fetch = run.result.fetch
    assert fetch is not None
    gates = named(finished, "relevance_filter")
    assert len(gates) == (2 if fetch.refetched else 1)
    last = dict(gates[-1].attributes or {})
    assert last[SOURCE] == "archive"
    assert all(ancestors(g, finished)[0] == "reddit.search" for g in gates)
    judged = sum(dict(g.attributes or {})[ITEMS_IN] for g in gates)
    kept = sum(dict(g.attributes or {})[ITEMS_OUT] for g in gates)
    assert (judged, kept) == (fetch.posts_judged, fetch.posts_relevant)
    (gate_call,) = [
        s for s in finished if s.parent and s.parent.span_id == gates[0].context.span_id
    ]
    assert gate_call.name == "engine.filter"


# --- OTLP export --------------------------------------------------------------------------------


class _Collector:
    """An OTLP/HTTP collector: stores every /v1/traces request; ``status`` is what it answers."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], ExportTraceServiceRequest]] = []
        self.status = 200
        self._lock = threading.Lock()

    def respond(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        if method != "POST" or target != "/v1/traces":
            return Reply(404)
        if self.status != 200:
            return Reply(self.status, b"bad request")
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self._lock:
            self.requests.append((headers, request))
        body = ExportTraceServiceResponse().SerializeToString()
        return Reply(200, body, {"Content-Type": "application/x-protobuf"})

    def spans(self) -> dict[str, list[dict[str, Any]]]:
        """Span name → the attribute dicts of every exported span of that name."""
        found: dict[str, list[dict[str, Any]]] = {}
        for _, request in self.requests:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        attrs = {a.key: _value(a.value) for a in span.attributes}
                        found.setdefault(span.name, []).append(attrs)
        return found


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@pytest.fixture
def collector() -> Iterator[tuple[_Collector, str]]:
    responder = _Collector()
    server = LocalHTTPServer(responder, name="otlp-collector")
    server.start()
    try:
        yield responder, server.base_url
    finally:
        server.stop()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return {**env, **extra}


def test_cli_ask_exports_its_spans_over_otlp_http(
    collector: tuple[_Collector, str], tmp_path: Path
) -> None:
    server, url = collector
    secret = "dGVzdDpzdXBlci1zZWNyZXQtdmFsdWU="
    env = _env(
        OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_EXPORTER_OTLP_HEADERS=f"Authorization=Basic {secret}"
    )
    done = subprocess.run(
        [sys.executable, "-m", "crowdsift", "-v", "ask", QUESTION, "--engine", "local", "--json"],
        env=env, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert server.requests, "nothing reached the collector"
    headers, first = server.requests[0]
    assert headers["authorization"] == f"Basic {secret}"
    resource = {a.key: _value(a.value) for a in first.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "crowdsift"

    exported = server.spans()
    (root,) = exported["research"]
    assert root["crowdsift.question"] == QUESTION and root[STATUS] == result["status"]
    assert {f"reddit.{s}" for s in REDDIT_STAGES} <= set(exported)
    engine_calls = [
        a for name, all_ in exported.items() if name.startswith("engine.") for a in all_
    ]
    assert len(engine_calls) == result["usage"]["calls"]
    assert all(a[ENGINE] == "local" and MODEL in a and a[INPUT_TOKENS] == 0 for a in engine_calls)
    assert "tracing_on" in done.stderr and secret not in done.stderr


SCRIPTED_RUN = textwrap.dedent(
    """
    import asyncio, sys
    from crowdsift.engines.scripted import ScriptedEngine
    from crowdsift.pipeline.gate.judge import relevance_filter
    from crowdsift.core.tracing import configure_tracing, stage_span

    question, expected = sys.argv[1], sys.argv[2] == "on"
    assert configure_tracing({}) is False
    assert configure_tracing() is expected
    engine = ScriptedEngine([{"relevant": [True, False]}], tokens_per_call=(50, 5))

    async def main():
        with stage_span("research"):
            return await relevance_filter(question, ["a", "b"], "reddit", engine=engine,
                                          text_of=lambda item: (item, item))

    kept, ratio = asyncio.run(main())
    assert kept == ["a"] and ratio == 0.5
    loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk"))
    assert bool(loaded) is expected, loaded
    print("calls", len(engine.requests))
    """
)


def _scripted_run(tmp_path: Path, expected: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPTED_RUN, QUESTION, expected],
        env=_env(CROWDSIFT_HOME=str(tmp_path / "home"), **env),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("calls ") and done.stdout.strip() != "calls 0"
    return done


def test_switched_off_nothing_is_installed_imported_or_sent(
    collector: tuple[_Collector, str], tmp_path: Path
) -> None:
    server, url = collector
    done = _scripted_run(tmp_path, "off", OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_SDK_DISABLED="true")
    assert server.requests == [] and "tracing" not in done.stderr


def test_an_unreachable_collector_costs_the_run_one_warning(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    done = _scripted_run(tmp_path, "on", OTEL_EXPORTER_OTLP_ENDPOINT=closed)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "tracing_export_failed" in lines[0], done.stderr[-2000:]


def test_a_failing_collector_costs_one_warning_then_batches_are_dropped(
    spans: InMemorySpanExporter,
    collector: tuple[_Collector, str],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    server, url = collector
    with stage_span("one"):
        pass
    (span,) = spans.get_finished_spans()
    now = [0.0]
    guard = _GuardedExporter(
        OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=2),
        url,
        cooldown_s=60,
        clock=lambda: now[0],
    )
    try:
        server.status = 400  # not retryable: the exporter gives up at once
        assert guard.export([span]) is SpanExportResult.FAILURE
        assert guard.export([span]) is SpanExportResult.FAILURE  # dropped, not sent
        server.status = 200
        assert guard.export([span]) is SpanExportResult.FAILURE  # still cooling down
        assert server.requests == [] and guard.dropped == 3
        now[0] = 61.0
        assert guard.export([span]) is SpanExportResult.SUCCESS
        assert [r.resource_spans[0].scope_spans[0].spans[0].name for _, r in server.requests] == [
            "one"
        ]
    finally:
        guard.shutdown()
    (warning,) = capsys.readouterr().err.splitlines()
    assert "tracing_export_failed" in warning and "127.0.0.1" in warning
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]
