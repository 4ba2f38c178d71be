"""Durable counters for ``/metrics``, shared by the API process and every worker.

Counters live in the service database (one ``metric_counters`` table beside ``jobs``), not in
process memory: research jobs run on Celery workers on other machines, and a counter that reset
whenever a worker restarted, or that only the API process saw, would lie. Each increment is one
atomic upsert (``INSERT … ON CONFLICT (name, labels) DO UPDATE SET value = value +
excluded.value``) on SQLite and PostgreSQL alike, so concurrent writers never lose a count.

``render_prometheus`` reads the totals and writes them in Prometheus' text format through
``prometheus_client`` (a private registry and a custom collector), which gets names, escaping and
``# TYPE`` lines right. What is counted comes from ``crowdsift.pipeline.telemetry``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Column, Float, String, Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from crowdsift.core.errors import StoreError
from crowdsift.core.log import get_logger
from crowdsift.core.models import FetchReport, FetchResult
from crowdsift.core.store import Base, create_tables, guarded, open_engine
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.telemetry import RunTelemetry, fetch_telemetry, run_telemetry

log = get_logger(__name__)

#: The content type of Prometheus' text format 0.0.4 (what every scraper understands).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Job states the ``crowdsift_jobs`` gauge always reports, 0 when none is in that state.
JOB_STATUSES = ("queued", "running", "done", "failed")
_MAX_LABEL = 200

metric_counters = Table(
    "metric_counters",
    Base.metadata,
    Column("name", String(128), primary_key=True),
    Column("labels", String(1024), primary_key=True, doc="canonical JSON object of labels"),
    Column("value", Float, nullable=False),
)


@dataclass(frozen=True)
class CounterDef:
    """A counter ``/metrics`` always shows (with its help text), even before its first count."""

    name: str
    help: str
    labels: tuple[str, ...] = ()


COUNTERS: tuple[CounterDef, ...] = (
    CounterDef(
        "crowdsift_items_total",
        "Posts/items per source and funnel stage (seen, accepted by the filters, relevant).",
        ("source", "stage"),
    ),
    CounterDef(
        "crowdsift_rejections_total",
        "Posts/items dropped per source and reason (filters, gate, rerank/drill cuts).",
        ("source", "reason"),
    ),
    CounterDef(
        "crowdsift_comment_rejections_total",
        "Comments dropped by the filters per source and reason (plain fetches).",
        ("source", "reason"),
    ),
    CounterDef(
        "crowdsift_gate_failed_open_total",
        "Runs whose relevance gate (or rerank) failed and let everything through.",
        ("source",),
    ),
    CounterDef(
        "crowdsift_gate_refetch_total",
        "Runs whose gate fetched again at twice the size (yield below 50 %).",
        ("source",),
    ),
    CounterDef(
        "crowdsift_source_skipped_total", "Runs a source sat out (no credentials…).", ("source",)
    ),
    CounterDef("crowdsift_llm_calls_total", "Engine calls per phase.", ("phase",)),
    CounterDef("crowdsift_llm_tokens_total", "LLM tokens by kind (prompt, completion).", ("kind",)),
    CounterDef("crowdsift_llm_cost_usd_total", "LLM spend in USD, from the price table."),
    CounterDef(
        "crowdsift_research_runs_total",
        "Research runs by outcome (ok, partial, error; failed when the job itself failed).",
        ("status",),
    ),
    CounterDef("crowdsift_fetch_runs_total", "Plain fetches (POST /api/fetch)."),
)


class MetricSample(BaseModel):
    """One increment (or, read back, one total) of a counter."""

    model_config = ConfigDict(frozen=True)

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    value: float

    def labels_key(self) -> str:
        """The stored form of the labels: sorted, compact JSON (one row per label set)."""
        return json.dumps(self.labels, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class MetricsStore:
    """Counters over an injected SQLAlchemy engine (the job store's, in the service)."""

    def __init__(self, engine: Engine, *, owns_engine: bool = False) -> None:
        self._engine = engine
        self._owns_engine = owns_engine
        with guarded(engine, "creating the metrics table"):
            create_tables(engine, [metric_counters])

    @classmethod
    def from_url(cls, url: str) -> MetricsStore:
        return cls(open_engine(url), owns_engine=True)

    def close(self) -> None:
        """Dispose of the engine if this store opened it (a shared one is its owner's)."""
        if self._owns_engine:
            self._engine.dispose()

    def add(self, samples: Iterable[MetricSample]) -> None:
        """Add every sample to its counter in one transaction (atomic per counter).

        Samples of the same counter are summed first (one statement may not touch a row twice
        on PostgreSQL), and rows are written in key order so concurrent writers lock in the same
        order and cannot deadlock.
        """
        totals: dict[tuple[str, str], float] = defaultdict(float)
        for sample in samples:
            totals[(sample.name, sample.labels_key())] += sample.value
        if not totals:
            return
        rows = [
            {"name": name, "labels": labels, "value": value}
            for (name, labels), value in sorted(totals.items())
        ]
        with guarded(self._engine, "adding to the metrics"), self._engine.begin() as conn:
            conn.execute(self._upsert(), rows)

    def _upsert(self) -> Any:
        dialect = self._engine.dialect.name
        insert: Any
        if dialect == "postgresql":
            insert = postgresql.insert(metric_counters)
        elif dialect == "sqlite":
            insert = sqlite.insert(metric_counters)
        else:
            raise StoreError(f"metrics support SQLite and PostgreSQL, not {dialect}")
        return insert.on_conflict_do_update(
            index_elements=["name", "labels"],
            set_={"value": metric_counters.c.value + insert.excluded.value},
        )

    def totals(self) -> list[MetricSample]:
        """Every counter's current value, by name then labels."""
        query = select(metric_counters).order_by(metric_counters.c.name, metric_counters.c.labels)
        with guarded(self._engine, "reading the metrics"), self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            MetricSample(name=row.name, labels=json.loads(row.labels), value=row.value)
            for row in rows
        ]


# --- what a run adds --------------------------------------------------------------------------


def telemetry_samples(t: RunTelemetry) -> list[MetricSample]:
    """Pure: the counter increments one run's telemetry stands for (zeros are left out)."""
    samples: list[MetricSample] = []

    def count(name: str, value: float, **labels: str) -> None:
        if value > 0:
            clipped = {key: text[:_MAX_LABEL] for key, text in labels.items()}
            samples.append(MetricSample(name=name, labels=clipped, value=value))

    for source, s in t.sources.items():
        if s.skipped is not None:
            count("crowdsift_source_skipped_total", 1, source=source)
            continue
        for stage, value in (("seen", s.seen), ("accepted", s.accepted), ("relevant", s.relevant)):
            count("crowdsift_items_total", value, source=source, stage=stage)
        for reason, value in s.rejections.items():
            count("crowdsift_rejections_total", value, source=source, reason=reason)
        for reason, value in s.comment_rejections.items():
            count("crowdsift_comment_rejections_total", value, source=source, reason=reason)
        count("crowdsift_gate_failed_open_total", int(s.gate_failed_open), source=source)
        count("crowdsift_gate_refetch_total", int(s.refetched), source=source)
    for phase, calls in t.llm_calls_by_phase.items():
        count("crowdsift_llm_calls_total", calls, phase=phase)
    count("crowdsift_llm_tokens_total", t.prompt_tokens, kind="prompt")
    count("crowdsift_llm_tokens_total", t.completion_tokens, kind="completion")
    count("crowdsift_llm_cost_usd_total", t.cost_usd)
    return samples


def research_samples(result: ResearchResult) -> list[MetricSample]:
    """Pure: a finished research run's increments, its outcome included."""
    run = MetricSample(
        name="crowdsift_research_runs_total", labels={"status": result.status}, value=1
    )
    return [*telemetry_samples(run_telemetry(result)), run]


def record_research(store: MetricsStore, result: ResearchResult) -> None:
    """Count a finished research run (raises ``StoreError``; see ``best_effort``)."""
    store.add(research_samples(result))


def record_failed_run(store: MetricsStore) -> None:
    """Count a research job that failed without a result."""
    store.add(
        [MetricSample(name="crowdsift_research_runs_total", labels={"status": "failed"}, value=1)]
    )


def record_fetch(store: MetricsStore, result: FetchResult, report: FetchReport) -> None:
    """Count a plain fetch (``POST /api/fetch``)."""
    samples = telemetry_samples(fetch_telemetry(result, report))
    store.add([*samples, MetricSample(name="crowdsift_fetch_runs_total", value=1)])


def best_effort(action: Callable[[], None], what: str) -> None:
    """Run a metrics write; any failure is a logged warning, never the caller's failure.

    Deliberately broad: a counter that could not be written must not fail the job or request
    it describes.
    """
    try:
        action()
    except Exception as exc:  # deliberately broad: see the docstring
        log.warning("metrics_not_recorded", what=what, error=f"{type(exc).__name__}: {exc}")


# --- exposition -------------------------------------------------------------------------------


class _Snapshot(Collector):
    """The totals read once, handed to ``generate_latest`` as metric families."""

    def __init__(self, totals: Sequence[MetricSample], jobs: Mapping[str, int]) -> None:
        self._totals = totals
        self._jobs = jobs

    def collect(self) -> Iterator[Metric]:
        by_name: dict[str, list[MetricSample]] = defaultdict(list)
        for sample in self._totals:
            by_name[sample.name].append(sample)
        known = {d.name: d for d in COUNTERS}
        for name in [*known, *sorted(set(by_name) - set(known))]:
            definition = known.get(name) or CounterDef(
                name, "crowdsift counter", _keys(by_name[name])
            )
            family = CounterMetricFamily(name, definition.help, labels=definition.labels)
            samples = by_name.get(name, [])
            if not definition.labels and not samples:
                samples = [MetricSample(name=name, value=0)]
            for sample in samples:
                family.add_metric(
                    [sample.labels.get(k, "") for k in definition.labels], sample.value
                )
            yield family
        gauge = GaugeMetricFamily("crowdsift_jobs", "Research jobs by state.", labels=["status"])
        for status in [*JOB_STATUSES, *sorted(set(self._jobs) - set(JOB_STATUSES))]:
            gauge.add_metric([status], self._jobs.get(status, 0))
        yield gauge


def _keys(samples: Sequence[MetricSample]) -> tuple[str, ...]:
    """The label names of a counter this version does not define (written by a newer one)."""
    return tuple(sorted({key for sample in samples for key in sample.labels}))


def render_prometheus(store: MetricsStore, jobs_by_status: Mapping[str, int]) -> bytes:
    """The ``/metrics`` body: every counter from the store and the ``crowdsift_jobs`` gauge."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(store.totals(), jobs_by_status))
    return generate_latest(registry)
