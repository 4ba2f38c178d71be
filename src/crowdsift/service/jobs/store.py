"""Job records and their progress events, in the same database as everything else.

SQLite under the data directory by default, PostgreSQL with ``CROWDSIFT_DATABASE_URL``: the API
process and any number of workers share it. Every state change is one conditional ``UPDATE``
(``… WHERE status = 'queued'``, ``… AND worker = :me``), so two workers can never both run a job
and a worker that lost its job (reaped as stale) cannot overwrite what its successor wrote.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Integer, String, Text, and_, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Mapped, mapped_column

from crowdsift.core.store import Base, create_tables, guarded, open_engine
from crowdsift.core.text import utc_now
from crowdsift.pipeline.result import ResearchResult
from crowdsift.service.jobs.changes import ChangeSignal
from crowdsift.service.jobs.models import Job, JobEvent, ResearchRequest, utc

Clock = Callable[[], datetime]


class JobRow(Base):
    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    request: Mapped[str] = mapped_column(Text)
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class JobEventRow(Base):
    __tablename__ = "job_events"

    job_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    phase: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class Reaped:
    """What ``reap`` did: jobs put back in the queue, and jobs given up on."""

    requeued: list[str]
    failed: list[str]


class JobStore:
    """Create, claim, heartbeat, finish and reap research jobs over an injected engine."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        self._engine = engine
        self._clock = clock
        self.changes = ChangeSignal()
        """Announces this process's writes, so streams following a job here need not poll."""
        with self._guard("creating the job tables"):
            create_tables(engine, [JobRow.__table__, JobEventRow.__table__])

    @classmethod
    def from_url(cls, url: str, *, clock: Clock = utc_now) -> JobStore:
        return cls(open_engine(url), clock=clock)

    @property
    def engine(self) -> Engine:
        """The database the jobs live in (the service's metrics share it)."""
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def _guard(self, doing: str) -> AbstractContextManager[None]:
        return guarded(self._engine, doing)

    # --- writes -----------------------------------------------------------------------------

    def create(self, request: ResearchRequest) -> Job:
        """A new queued job (the id is random, so it can be handed out as a capability)."""
        job_id = uuid.uuid4().hex
        row = {
            "id": job_id,
            "status": "queued",
            "request": request.model_dump_json(),
            "attempts": 0,
            "created_at": self._clock(),
        }
        with self._guard("creating a job"), self._engine.begin() as conn:
            conn.execute(insert(JobRow).values(**row))
        job = self.get(job_id)
        assert job is not None
        return job

    def claim(self, job_id: str, worker: str) -> Job | None:
        """Mark a queued job running for ``worker``; None when it is not queued (any more)."""
        now = self._clock()
        values = {
            "status": "running",
            "worker": worker,
            "attempts": JobRow.attempts + 1,
            "started_at": now,
            "heartbeat_at": now,
        }
        changed = self._update(job_id, values, status="queued", doing="claiming a job")
        return self.get(job_id) if changed else None

    def heartbeat(self, job_id: str, worker: str) -> bool:
        """Say ``worker`` is still on the job; False when it no longer owns it."""
        values = {"heartbeat_at": self._clock()}
        return self._update(job_id, values, status="running", worker=worker, doing="heartbeat")

    def finish(self, job_id: str, worker: str, result: ResearchResult) -> bool:
        values = {
            "status": "done",
            "result": result.model_dump_json(),
            "error": None,
            "finished_at": self._clock(),
        }
        return self._update(job_id, values, status="running", worker=worker, doing="finishing")

    def fail(self, job_id: str, worker: str, error: str) -> bool:
        values = {"status": "failed", "error": error, "finished_at": self._clock()}
        return self._update(job_id, values, status="running", worker=worker, doing="failing")

    def abandon(self, job_id: str, error: str) -> bool:
        """Fail a job that is still queued (it could not be handed to any worker)."""
        values = {"status": "failed", "error": error, "finished_at": self._clock()}
        return self._update(job_id, values, status="queued", doing="abandoning a job")

    def _update(
        self,
        job_id: str,
        values: dict[str, Any],
        *,
        status: str,
        worker: str | None = None,
        doing: str,
    ) -> bool:
        condition = and_(JobRow.id == job_id, JobRow.status == status)
        if worker is not None:
            condition = and_(condition, JobRow.worker == worker)
        with self._guard(doing), self._engine.begin() as conn:
            outcome = conn.execute(update(JobRow).where(condition).values(**values))
        if outcome.rowcount:
            self.changes.notify()
        return bool(outcome.rowcount)

    def add_event(self, job_id: str, phase: str, message: str) -> int:
        """Append a progress event; returns its sequence number (1, 2, …).

        One job has one running worker, and its events are written under that worker's lock
        (see ``execute.py``), so ``max(seq) + 1`` cannot race.
        """
        with self._guard("recording progress"), self._engine.begin() as conn:
            last = conn.execute(
                select(func.max(JobEventRow.seq)).where(JobEventRow.job_id == job_id)
            ).scalar()
            seq = int(last or 0) + 1
            conn.execute(
                insert(JobEventRow).values(
                    job_id=job_id,
                    seq=seq,
                    phase=phase[:64],
                    message=message[:2000],
                    at=self._clock(),
                )
            )
        self.changes.notify()
        return seq

    def reap(self, *, stale_after: float, max_attempts: int) -> Reaped:
        """Jobs whose worker went silent: back to the queue, or failed after ``max_attempts``.

        A job is never left "running" forever: its heartbeat stops when its worker dies, and
        whoever reaps next (the API's reaper thread, a worker starting) moves it on.
        """
        cutoff = self._clock() - timedelta(seconds=stale_after)
        stale = and_(JobRow.status == "running", JobRow.heartbeat_at < cutoff)
        with self._guard("reaping stale jobs"), self._engine.begin() as conn:
            rows = conn.execute(select(JobRow.id, JobRow.attempts).where(stale)).all()
            requeued: list[str] = []
            failed: list[str] = []
            for job_id, attempts in rows:
                again = attempts < max_attempts
                values: dict[str, Any] = (
                    {"status": "queued", "worker": None}
                    if again
                    else {
                        "status": "failed",
                        "finished_at": self._clock(),
                        "error": (
                            f"the worker running this job stopped (no heartbeat for "
                            f"{stale_after:g} s) on each of {attempts} attempt(s); submit it "
                            "again, and check the worker logs"
                        ),
                    }
                )
                where = and_(JobRow.id == job_id, stale)
                if conn.execute(update(JobRow).where(where).values(**values)).rowcount:
                    (requeued if again else failed).append(job_id)
        return Reaped(requeued, failed)

    # --- reads ------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        with self._guard("reading a job"), self._engine.connect() as conn:
            row = conn.execute(select(JobRow).where(JobRow.id == job_id)).first()
        return _to_job(row) if row is not None else None

    def events(self, job_id: str, *, after: int = 0) -> list[JobEvent]:
        query = (
            select(JobEventRow)
            .where(JobEventRow.job_id == job_id, JobEventRow.seq > after)
            .order_by(JobEventRow.seq)
        )
        with self._guard("reading progress"), self._engine.connect() as conn:
            rows = conn.execute(query).all()
        return [JobEvent(seq=r.seq, phase=r.phase, message=r.message, at=utc(r.at)) for r in rows]

    def counts_by_status(self) -> dict[str, int]:
        """How many jobs are in each state (states with none are absent)."""
        query = select(JobRow.status, func.count()).group_by(JobRow.status)
        with self._guard("counting jobs"), self._engine.connect() as conn:
            return {status: int(count) for status, count in conn.execute(query).all()}

    def queued(self) -> list[str]:
        """Ids of queued jobs, oldest first (an embedded pool resumes them on start)."""
        query = select(JobRow.id).where(JobRow.status == "queued").order_by(JobRow.created_at)
        with self._guard("listing queued jobs"), self._engine.connect() as conn:
            return [row[0] for row in conn.execute(query).all()]


def _to_job(row: Any) -> Job:
    return Job(
        id=row.id,
        status=row.status,
        request=ResearchRequest.model_validate_json(row.request),
        result=ResearchResult.model_validate_json(row.result) if row.result else None,
        error=row.error,
        attempts=row.attempts,
        worker=row.worker,
        created_at=utc(row.created_at),
        started_at=utc(row.started_at) if row.started_at else None,
        finished_at=utc(row.finished_at) if row.finished_at else None,
        heartbeat_at=utc(row.heartbeat_at) if row.heartbeat_at else None,
    )
