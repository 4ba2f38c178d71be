"""The summarizer's entry point (seed 004): selector → task → engine → grounding → result.

``run_summarizer`` never raises for an engine failure: a failed or unparsable engine reply is a
``status="error"`` result with a ``reason``, so callers (CLI, API, sidecars) always get a
``SummarizeResult`` to show. Honesty rules live here too: no evidence means no engine call and a
plain "nothing found"; too little evidence is summarised but flagged ``partial`` with a caution.
One structured log line per call carries what is needed to correlate it with saved previews.
"""

from __future__ import annotations

from collections.abc import Sequence

from crowdsift.engines.base import Engine, Stopwatch
from crowdsift.errors import EngineError
from crowdsift.log import get_logger
from crowdsift.models import FetchResult
from crowdsift.sources.models import EvidenceItem
from crowdsift.summarizer.config import SelectorConfig, SummarizerConfig
from crowdsift.summarizer.grounding import ground
from crowdsift.summarizer.models import SummarizeRequest, SummarizeResult
from crowdsift.summarizer.prompt import get_template
from crowdsift.summarizer.selector import select_evidence
from crowdsift.summarizer.task import SummarizeTask

log = get_logger(__name__)

NO_EVIDENCE_SUMMARY = (
    "No matching Reddit discussion was found for this question, so there is nothing to "
    "summarise. Try broader search terms or other subreddits."
)
NO_EVIDENCE_CAUTION = (
    "No evidence was found: this is not an answer. Research the question elsewhere before deciding."
)


def thin_evidence_caution(count: int) -> str:
    """The caution added when fewer posts than ``min_evidence_posts`` back the summary."""
    posts = "post" if count == 1 else "posts"
    return (
        f"Evidence is thin: only {count} matching Reddit {posts}. Treat this as anecdotal and "
        "research further before relying on it."
    )


async def run_summarizer(
    fetch_result: FetchResult,
    *,
    engine: Engine,
    selector_config: SelectorConfig | None = None,
    summarizer_config: SummarizerConfig | None = None,
    prompt_version: str = "v1",
    extra: Sequence[EvidenceItem] = (),
) -> SummarizeResult:
    """Summarise ``fetch_result`` with ``engine``; grounded, and never raises on engine errors.

    Raises ``ConfigError`` only for an unknown ``prompt_version`` (a caller's mistake, found
    before any work is done).
    """
    selector_config = selector_config or SelectorConfig()
    summarizer_config = summarizer_config or SummarizerConfig()
    get_template(prompt_version)
    stopwatch = Stopwatch()
    request = select_evidence(
        fetch_result, selector_config, prompt_version=prompt_version, extra=extra
    )
    count = len(request.post_payloads)
    if count == 0:
        result = SummarizeResult(
            status="partial",
            summary=NO_EVIDENCE_SUMMARY,
            cautions=[NO_EVIDENCE_CAUTION][: summarizer_config.max_cautions],
            prompt_version=prompt_version,
            engine=engine.name,
            reason="no posts matched the question; the engine was not called",
        )
        _log(request, result, stopwatch, tokens=(0, 0))
        return result
    task = SummarizeTask(request, summarizer_config)
    try:
        reply = await engine.run(task)
    except EngineError as exc:
        result = SummarizeResult(
            status="error",
            summary="",
            prompt_version=prompt_version,
            engine=engine.name,
            reason=f"{type(exc).__name__}: {exc}",
        )
        log.warning("summarize_failed", plan_id=str(request.plan_id), error=result.reason)
        _log(request, result, stopwatch, tokens=(0, 0))
        return result
    result, _problems = ground(reply.output, request, summarizer_config, engine=reply.engine)
    if count < summarizer_config.min_evidence_posts:
        result = _flag_thin(result, count, summarizer_config)
    _log(
        request,
        result,
        stopwatch,
        tokens=(reply.usage.prompt_tokens, reply.usage.completion_tokens),
        model=reply.model,
    )
    return result


def _flag_thin(result: SummarizeResult, count: int, config: SummarizerConfig) -> SummarizeResult:
    """Partial, with the thin-evidence caution first (within ``max_cautions``)."""
    cautions = [thin_evidence_caution(count), *result.cautions][: config.max_cautions]
    reason = f"thin evidence: {count} post(s), fewer than {config.min_evidence_posts}"
    return result.model_copy(
        update={
            "status": "partial",
            "cautions": cautions,
            "reason": f"{result.reason}; {reason}" if result.reason else reason,
        }
    )


def _log(
    request: SummarizeRequest,
    result: SummarizeResult,
    stopwatch: Stopwatch,
    *,
    tokens: tuple[int, int],
    model: str | None = None,
) -> None:
    log.info(
        "summarize_done",
        query=request.query,
        plan_id=str(request.plan_id),
        posts=len(request.post_payloads),
        prompt_version=request.prompt_version,
        engine=result.engine,
        model=model,
        tok_in=tokens[0],  # not "*_tokens": log.py redacts fields named like "token"
        tok_out=tokens[1],
        latency_ms=stopwatch.ms(),
        status=result.status,
        sources=len(result.sources),
        reason=result.reason,
    )
