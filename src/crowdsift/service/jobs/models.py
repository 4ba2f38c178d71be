"""The research job's records: what was asked, where it is, what came out.

``ResearchRequest`` is the one input shape for a research run from outside the CLI (HTTP API,
MCP, queued jobs); its limits are the service's input validation, so they live here once.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from crowdsift.core.question import MAX_QUESTION_CHARS, MIN_QUESTION_CHARS
from crowdsift.core.since import Since
from crowdsift.pipeline.result import ResearchResult

JobStatus = Literal["queued", "running", "done", "failed"]
FINISHED: frozenset[str] = frozenset({"done", "failed"})

MAX_EXPERTS = 10
MAX_SUBREDDITS = 10
_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class ResearchRequest(BaseModel):
    """One research run: the question, which experts, whether to search Reddit."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    question: str = Field(
        min_length=MIN_QUESTION_CHARS,
        max_length=MAX_QUESTION_CHARS,
        description="What you want to know, in any language.",
        examples=["Is the Plaud Note worth it compared to a phone recording app?"],
    )
    experts: list[str] = Field(
        default_factory=list,
        max_length=MAX_EXPERTS,
        description="Expert ids to ask (see GET /api/experts); empty = Reddit only.",
        examples=[["desk_gear_weekly"]],
    )
    search_reddit: bool = Field(True, description="Run the Reddit branch beside the experts.")
    use_recent_only: bool = Field(False, description="Experts: only their last 3 months.")
    engine: Literal["local", "openai"] | None = Field(
        None, description="local (extractive, no key) or openai; default from the settings."
    )
    subreddits: list[str] = Field(
        default_factory=list,
        max_length=MAX_SUBREDDITS,
        description="Subreddits to search instead of the planner's choice.",
    )
    sources: list[Literal["youtube", "amazon"]] = Field(
        default_factory=list,
        max_length=2,
        description="Also search YouTube and/or Amazon (each needs its API credentials).",
    )
    budget_usd: float | None = Field(
        None,
        gt=0,
        le=1000,
        description="Stop LLM calls once the run has cost this much (USD); the result is "
        "partial. Default: CROWDSIFT_BUDGET_USD, else no limit.",
    )
    since: Since = Field(
        None,
        description="Only what was posted since then, on every source: 12h, 30d, 2w, 6m, 1y, a "
        "date (2026-01-01), all (any time) or an ISO datetime; resolved when the request "
        "arrives. Default: the last month for fast-moving topics, else any time (the result's "
        "`window` says which).",
        examples=["30d"],
    )

    @field_validator("experts", "subreddits")
    @classmethod
    def _ids(cls, values: list[str]) -> list[str]:
        cleaned = list(dict.fromkeys(v.strip().removeprefix("r/") for v in values if v.strip()))
        bad = [v for v in cleaned if not _ID.match(v)]
        if bad:
            raise ValueError(
                f"not an id: {', '.join(repr(b[:70]) for b in bad)}; ids are letters, digits, "
                "'_', '-' and '.', at most 64 characters"
            )
        return cleaned

    @model_validator(mode="after")
    def _something_to_search(self) -> ResearchRequest:
        if not self.search_reddit and not self.experts and not self.sources:
            raise ValueError(
                "nothing to search: name at least one expert, set search_reddit, or add sources"
            )
        return self


class JobEvent(BaseModel):
    """One progress line of a job, numbered so a client can resume after ``seq``."""

    seq: int
    phase: str
    message: str
    at: AwareDatetime


class Job(BaseModel):
    """A research job as stored; ``result`` is set once ``status`` is ``done``."""

    id: str
    status: JobStatus
    request: ResearchRequest
    result: ResearchResult | None = None
    error: str | None = None
    attempts: int = 0
    worker: str | None = None
    created_at: AwareDatetime
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    heartbeat_at: AwareDatetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def utc(moment: datetime) -> datetime:
    """Databases without time zones hand datetimes back naive; they were stored as UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
