"""A job run in this process is streamed as it happens: the event stream is woken by the
store's writes, not by its next poll. A writer elsewhere (a Celery worker) is still polled."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crowdsift.engines.base import Usage
from crowdsift.pipeline.result import Progress, ResearchResult
from crowdsift.service.api.sse import job_event_stream
from crowdsift.service.jobs.changes import ChangeSignal
from crowdsift.service.jobs.models import ResearchRequest
from crowdsift.service.jobs.service import JobService
from crowdsift.service.jobs.store import JobStore
from tests.service.jobs.test_embedded_jobs import REQUEST, make_service

NEVER = 60.0
"""A poll interval no test lives to see: whatever arrives, arrived through the signal."""
PROMPT = 10.0
"""How long a test waits for what the signal should bring at once (a generous bound)."""


def test_a_waiter_is_woken_by_a_write_from_another_thread() -> None:
    signal = ChangeSignal()

    async def scenario() -> bool:
        seen = signal.version
        threading.Timer(0.01, signal.notify).start()
        return await asyncio.wait_for(signal.wait(seen, NEVER), PROMPT)

    assert asyncio.run(scenario()) is True


def test_a_write_between_reading_and_waiting_is_not_slept_through() -> None:
    signal = ChangeSignal()

    async def scenario() -> bool:
        seen = signal.version
        signal.notify()  # the job changed after the stream read it, before it waits
        return await asyncio.wait_for(signal.wait(seen, NEVER), PROMPT)

    assert asyncio.run(scenario()) is True


def test_without_a_write_the_wait_ends_at_the_poll_interval() -> None:
    signal = ChangeSignal()
    assert asyncio.run(signal.wait(signal.version, 0.01)) is False


def _finish_when_told(
    go: threading.Event,
) -> Callable[[ResearchRequest, Progress], ResearchResult]:
    def research(request: ResearchRequest, progress: Progress) -> ResearchResult:
        progress("scout", "searching")
        go.wait(PROMPT)
        return ResearchResult(
            question=request.question, status="ok", engine="local", timings_ms={}, usage=Usage()
        )

    return research


def _stream_until_done(service: JobService, job_id: str, go: threading.Event) -> list[str]:
    """The stream's messages, read with a poll interval no test waits out; ``go`` lets the
    job finish once the stream has seen it running."""

    async def scenario() -> list[str]:
        seen: list[str] = []
        stream = job_event_stream(service, job_id, poll=NEVER)
        async with asyncio.timeout(PROMPT):
            async for message in stream:
                seen.append(message)
                if "searching" in message:
                    go.set()
                if message.startswith("event: done"):
                    return seen
        return seen

    return asyncio.run(scenario())


def test_a_job_run_here_streams_its_progress_and_end_without_waiting_for_a_poll(
    tmp_path: Path,
) -> None:
    go = threading.Event()
    service = make_service(f"sqlite:///{tmp_path / 'j.sqlite'}", _finish_when_told(go))
    service.start()
    try:
        job = service.submit(REQUEST)
        messages = _stream_until_done(service, job.id, go)
    finally:
        service.close()
    assert messages[-1].startswith("event: done") and '"status": "done"' in messages[-1]
    assert any("searching" in m for m in messages)


def test_a_write_from_another_process_is_still_found_by_polling(tmp_path: Path) -> None:
    """Another store on the same database (a Celery worker's) raises no signal here: the
    stream finds its writes on the next poll."""
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    here = JobStore.from_url(url)
    elsewhere = JobStore.from_url(url)
    service = JobService(here, _NoDispatch())
    job = here.create(REQUEST)

    async def scenario() -> list[str]:
        seen: list[str] = []
        async for message in job_event_stream(service, job.id, poll=0.02):
            seen.append(message)
            if message.startswith("event: status"):
                await asyncio.to_thread(elsewhere.abandon, job.id, "stopped elsewhere")
            if message.startswith("event: done"):
                return seen
        return seen

    try:
        messages = asyncio.run(asyncio.wait_for(scenario(), PROMPT))
    finally:
        here.close()
        elsewhere.close()
    assert messages[-1].startswith("event: done") and "stopped elsewhere" in messages[-1]


class _NoDispatch:
    resumes_queued = False

    def submit(self, _job_id: str) -> None:
        raise AssertionError("nothing is dispatched in this test")

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _no_stray_threads() -> Iterator[None]:
    """Timers and pools end with their tests."""
    before = set(threading.enumerate())
    yield
    for thread in set(threading.enumerate()) - before:
        thread.join(PROMPT)
