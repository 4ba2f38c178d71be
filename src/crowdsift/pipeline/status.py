"""Every status a research result reports, decided in one place from the facts (pure).

Stages state facts, never statuses: the synthesis says what it found wrong with its own answer
(a ``Verdict``: the engine failed, or why the answer is partial: grounding problems, thin
evidence, an abstention, no evidence), and the Reddit branch with the synthesis step say what
happened to the run (``RedditFacts``: searches that failed, candidates, the time bound, errors,
sections that cited what does not exist). ``decide`` turns them into the summary's status and
reason and the Reddit answer's status together, so ``summary`` and ``reddit_response`` never
disagree and no result is downgraded after it was built; ``overall_status`` folds every part of
the result into one.

- summary: ``error`` when the engine failed; ``partial`` with the synthesis' reasons when it has
  any; else ``partial`` when the Reddit answer it draws on is not ok (a search failed, the
  sections cited what does not exist, Reddit failed or found nothing while videos or products
  answered), the reason naming why; else ``ok``.
- Reddit answer: ``failed`` when the branch failed or every search did; ``no_results`` when
  nothing was found in time; ``partial`` when the bound cut it, anything went wrong, the
  sections are missing or cited what does not exist, or the summary is not ok; else ``ok``.
- overall: ``error`` when every part failed; ``partial`` when any part is not ok (or the
  budget cut calls); else ``ok``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.models import RedditResponse, RedditStatus
from crowdsift.pipeline.result import ResearchStatus
from crowdsift.pipeline.synthesis.models import SummarizeResult, SummaryContent
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import SourceFetch

SummaryStatus = Literal["ok", "partial", "error"]


class Verdict(BaseModel):
    """What the synthesis found wrong with its own answer, before any other part is known.

    ``failure``: why the engine failed (there is no answer to show); ``reasons``: why the answer
    is partial, in the order found (each becomes part of the summary's ``reason``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    failure: str | None = None
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class RedditFacts:
    """What happened to the Reddit answer: the branch's run and the synthesis step's outcome.

    ``errors`` are ``reddit_response.errors``: the branch's, the synthesis step's (the bound),
    the answer's, in that order; a failed branch has its failure as its one error."""

    failure: str | None = None
    searches: int = 0
    failed_searches: int = 0
    candidates: int = 0
    timed_out: bool = False
    errors: tuple[str, ...] = ()
    sections: bool = False
    """The staff-engineer sections exist (the synthesis ran and the engine answered)."""
    sections_cut: bool = False
    """The sections cited ids that are not in the evidence, or lost claims that cited nothing."""


@dataclass(frozen=True)
class Judged:
    """A summary's status, with why when it is not ``ok``."""

    status: SummaryStatus
    reason: str | None = None


@dataclass(frozen=True)
class Statuses:
    """What ``decide`` decided: the summary's (for the verdict given) and the Reddit answer's
    (None without a Reddit answer)."""

    summary: Judged
    reddit: RedditStatus | None = None


def decide(verdict: Verdict, reddit: RedditFacts | None = None) -> Statuses:
    """The summary's and the Reddit answer's statuses from the facts (module docstring).

    Without ``reddit`` (no Reddit answer, or the synthesis judged alone) the summary's status is
    its verdict's. A run without an answer passes an empty ``Verdict`` and shows no summary."""
    status = None if reddit is None else _reddit_status(verdict, reddit)
    if verdict.failure is not None:
        return Statuses(Judged("error", verdict.failure), status)
    if verdict.reasons:
        return Statuses(Judged("partial", "; ".join(verdict.reasons)), status)
    if reddit is None or status is None or status == "ok":
        return Statuses(Judged("ok"), status)
    why = f"the Reddit answer is {status}: {_why_not_ok(reddit, status)}"
    return Statuses(Judged("partial", why), status)


def judged_summary(content: SummaryContent, judged: Judged) -> SummarizeResult:
    """Seed 004's result: what the answer says, with the status decided for it."""
    return SummarizeResult(status=judged.status, reason=judged.reason, **dict(content))


def _reddit_status(verdict: Verdict, reddit: RedditFacts) -> RedditStatus:
    if reddit.failure is not None:
        return "failed"
    if reddit.searches and reddit.failed_searches == reddit.searches:
        return "failed"
    if not reddit.candidates and not reddit.timed_out:
        return "no_results"
    degraded = (
        reddit.timed_out
        or bool(reddit.errors)
        or not reddit.sections
        or reddit.sections_cut
        or verdict.failure is not None
        or bool(verdict.reasons)
    )
    return "partial" if degraded else "ok"


def _why_not_ok(reddit: RedditFacts, status: RedditStatus) -> str:
    if reddit.errors:
        return reddit.errors[0]
    if status == "no_results":
        return "Reddit found no matching discussion"
    return "its sections cited evidence that does not exist"


def overall_status(
    experts: Sequence[ExpertResponse],
    reddit: RedditResponse | None,
    summary: SummarizeResult | None,
    fetches: Sequence[SourceFetch] = (),
    usage: Usage | None = None,
) -> ResearchStatus:
    """``error`` when every part failed; ``partial`` when any did or the budget cut calls."""
    parts: list[str] = [e.status for e in experts]
    if usage is not None and usage.budget_exhausted:
        parts.append("partial")
    parts += ["failed" if f.errors else "ok" for f in fetches if not f.skipped]
    if reddit is not None:
        parts.append(reddit.status)
    if summary is not None:
        parts.append(summary.status)
    failed = {"failed", "error"}
    if parts and all(p in failed for p in parts):
        return "error"
    return "ok" if all(p == "ok" for p in parts) else "partial"
