"""The Celery wiring without a worker process: configuration, URL redaction, the task body,
and what submitting does when the broker is down or silent (bounded, redacted errors)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from crowdsift.core.config import Settings
from crowdsift.core.errors import ConfigError, CrowdsiftError
from crowdsift.core.log import redact_text
from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.jobs.celery_app import (
    TASK_NAME,
    BrokerError,
    BrokerLimits,
    CeleryDispatcher,
    WorkerRuntime,
    celery_config,
    make_celery,
    redact_url,
    run_worker,
    url_secrets,
)
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.jobs.store import JobStore

REQUEST = ResearchRequest(question="Which label printer survives a warehouse?")
FAST = BrokerLimits(connect_timeout=0.5, socket_timeout=0.5, publish_retries=1, retry_interval=0.1)


def answer(request: ResearchRequest, progress: Progress) -> ResearchResult:
    progress("scout", "searching")
    return ResearchResult(
        question=request.question, status="ok", engine="local", timings_ms={}, usage=Usage()
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:hunter22@cache.internal:6379/1", "redis://:***@cache.internal:6379/1"),
        ("rediss://app:p%40ss:hunter22@h:6380/0", "rediss://app:***@h:6380/0"),
        (
            "redis://h:6379/0?password=hunter22&ssl_cert_reqs=none",
            "redis://h:6379/0?password=***&ssl_cert_reqs=none",
        ),
        ("redis://user@h/0", "redis://user@h/0"),
    ],
)
def test_redact_url_hides_passwords_and_keeps_the_rest(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_url_never_echoes_an_unparsable_url() -> None:
    assert redact_url("redis://[::1:6379/0") == "<unparsable broker URL>"


def test_url_secrets_lists_what_the_log_redactor_must_mask() -> None:
    assert url_secrets("redis://:hunter22@h:6379/0?token=abcd1234&db=2") == [
        "hunter22",
        "abcd1234",
    ]
    assert url_secrets("redis://127.0.0.1:6379/0") == []


def test_celery_config_keeps_messages_until_their_job_ran() -> None:
    config = celery_config(Settings(worker_queue="research-eu"), BrokerLimits(socket_timeout=7))
    assert config["task_default_queue"] == "research-eu"
    assert config["task_acks_late"] is True
    assert config["task_reject_on_worker_lost"] is True
    assert config["worker_prefetch_multiplier"] == 1
    assert config["accept_content"] == ["json"] and config["task_serializer"] == "json"
    assert config["broker_connection_retry_on_startup"] is True
    assert config["broker_transport_options"]["socket_timeout"] == 7
    assert config["broker_transport_options"]["visibility_timeout"] >= 300


def test_make_celery_has_no_result_backend_and_registers_the_task() -> None:
    app = make_celery(Settings(broker_url="redis://:hunter22@127.0.0.1:6379/0"))
    try:
        assert app.conf.broker_url == "redis://:hunter22@127.0.0.1:6379/0"
        assert app.conf.result_backend is None
        assert app.conf.task_acks_late is True
        assert TASK_NAME in app.tasks
        assert redact_text("auth hunter22 failed") == "auth *** failed"
    finally:
        app.close()


def test_everything_without_a_broker_url_says_which_variable_to_set() -> None:
    settings = Settings()
    for attempt in (
        lambda: make_celery(settings),
        lambda: CeleryDispatcher(settings),
        lambda: run_worker(settings),
    ):
        with pytest.raises(ConfigError, match="CROWDSIFT_BROKER_URL"):
            attempt()


def test_the_task_runs_the_job_once_and_stores_the_result(tmp_path: Path) -> None:
    store = JobStore.from_url(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    calls: list[str] = []

    def research(request: ResearchRequest, progress: Progress) -> ResearchResult:
        calls.append(request.question)
        return answer(request, progress)

    runtime = WorkerRuntime(Settings(), research=research, store=store)
    app = make_celery(Settings(broker_url="redis://127.0.0.1:6379/0"), runtime=runtime)
    try:
        job_id = store.create(REQUEST).id
        app.tasks[TASK_NAME].apply(args=[job_id])
        app.tasks[TASK_NAME].apply(args=[job_id])  # a redelivered message
        job = store.get(job_id)
    finally:
        app.close()
        runtime.close()
    assert calls == [REQUEST.question]
    assert job is not None and job.status == "done" and job.attempts == 1
    assert job.result is not None and job.result.question == REQUEST.question
    assert job.worker is not None and job.worker.startswith("celery@")


def test_the_runtime_opens_the_configured_store_once_and_creates_result_tables(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    runtime = WorkerRuntime(Settings(database_url=url), research=answer)
    try:
        runtime.prepare()
        assert runtime.store() is runtime.store()
        finished = runtime.run(runtime.store().create(REQUEST).id)
    finally:
        runtime.close()
    assert finished is not None and finished.status == "done"
    engine = sqlalchemy.create_engine(url)
    try:
        tables = set(sqlalchemy.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert {"jobs", "job_events", "comments"} <= tables


def test_submitting_to_a_broker_that_is_down_fails_fast_and_redacted() -> None:
    url = f"redis://:hunter22@127.0.0.1:{free_port()}/0"
    dispatcher = CeleryDispatcher(Settings(broker_url=url, worker_queue="q-down"), limits=FAST)
    started = time.monotonic()
    try:
        with pytest.raises(BrokerError) as caught:
            dispatcher.submit("job123")
    finally:
        dispatcher.close()
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert isinstance(caught.value, CrowdsiftError)
    assert "hunter22" not in message
    assert f"redis://:***@127.0.0.1:{url.rsplit(':', 1)[1]}" in message
    assert "job123" in message and "CROWDSIFT_BROKER_URL" in message


class SilentBroker:
    """Accepts TCP connections and never answers: a hung Redis."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.1)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        port: int = self._server.getsockname()[1]
        return port

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            self._held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._server.close()


@pytest.fixture
def silent_broker() -> Iterator[SilentBroker]:
    broker = SilentBroker()
    yield broker
    broker.close()


def test_submitting_to_a_silent_broker_gives_up_within_the_limits(
    silent_broker: SilentBroker,
) -> None:
    settings = Settings(broker_url=f"redis://127.0.0.1:{silent_broker.port}/0")
    dispatcher = CeleryDispatcher(settings, limits=FAST)
    started = time.monotonic()
    try:
        with pytest.raises(BrokerError, match="Check that Redis is running"):
            dispatcher.submit("job-silent")
    finally:
        dispatcher.close()
    assert time.monotonic() - started < 30
