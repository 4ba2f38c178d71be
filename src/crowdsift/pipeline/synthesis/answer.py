"""The one synthesis (seed 004 + seed 001's staff-engineer sections): selector → prompt →
engine → grounding.

``synthesize_answer`` makes exactly one engine call when there is evidence on the question's
subject and none when there is not, and returns one checked ``Answer``: what the seed-004
``SummarizeResult`` says (summary, highlights, cautions, sources) and the staff-engineer
``RedditSynthesis`` (hidden gems, minority report, pivot alerts, comparison table), which holds
the answer's one summary rather than a copy of it.

It never raises for an engine failure: a failed or unparsable reply is an answer whose verdict
says so (``status="error"`` with a ``reason``) and no synthesis, so callers (CLI, API, MCP)
always have something to show. Honesty rules live here too: no evidence means no engine call
and a plain "nothing found"; evidence that never mentions the question's subject
(``subject.judge_subject``) means no engine call and a one-sentence abstention (``partial``,
``abstained``, no sources); too little evidence is answered but flagged ``partial`` with a
caution. The answer states these as its ``Verdict``; the statuses are decided from it, once, by
``crowdsift.pipeline.status``. One structured log line per call carries what is needed to
correlate it with saved previews.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pydantic import BaseModel, Field

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.errors import EngineError
from crowdsift.core.log import get_logger
from crowdsift.engines.base import Engine, EngineReply, Stopwatch
from crowdsift.pipeline.reddit.intent import asks_for_pick
from crowdsift.pipeline.reddit.models import DrilledThread, QueryAnalysis
from crowdsift.pipeline.status import Verdict, decide, judged_summary
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.synthesis.grounding import Grounded, ground
from crowdsift.pipeline.synthesis.models import (
    AnswerDraft,
    RedditSynthesis,
    SummarizeRequest,
    SummarizeResult,
    SummaryContent,
)
from crowdsift.pipeline.synthesis.prompt import PromptContext, get_template
from crowdsift.pipeline.synthesis.selector import select_threads
from crowdsift.pipeline.synthesis.subject import (
    NOT_A_QUESTION,
    Subject,
    abstention_sentence,
    judge_subject,
    looked_in,
    question_subject,
    reads_as_word_salad,
)
from crowdsift.pipeline.synthesis.task import AnswerTask
from crowdsift.sources.models import EvidenceItem

log = get_logger(__name__)

NO_EVIDENCE_SUMMARY = (
    "No matching Reddit discussion was found for this question, so there is nothing to "
    "summarise. Try broader search terms or other subreddits."
)
NO_EVIDENCE_CAUTION = (
    "No evidence was found: this is not an answer. Research the question elsewhere before deciding."
)
DEFAULT_GEMS, DEFAULT_DISSENT = 5, 3


class Answer(BaseModel):
    """The one checked answer to a question: what it says, and what the synthesis found wrong
    with it. Its status is decided from that verdict (in a research run, with the Reddit run's
    facts) by ``crowdsift.pipeline.status.decide``, not by the stage that found the problem."""

    content: SummaryContent = Field(description="summary, highlights, cautions, sources")
    verdict: Verdict = Field(default_factory=Verdict)
    synthesis: RedditSynthesis | None = Field(
        None, description="the staff-engineer sections; None without evidence or on failure"
    )
    errors: list[str] = Field(default_factory=list)

    @property
    def summary(self) -> SummarizeResult:
        """The seed-004 result as the synthesis alone judges it (no other part of the run)."""
        return judged_summary(self.content, decide(self.verdict).summary)


def needs_table(analysis: QueryAnalysis | None) -> bool:
    """A comparison question ("X vs Y") must get a table, one row per option."""
    return analysis is not None and (analysis.intent == "comparison" or bool(analysis.compared))


def thin_evidence_caution(count: int) -> str:
    """The caution added when fewer posts than ``min_evidence_posts`` back the answer."""
    posts = "post" if count == 1 else "posts"
    return (
        f"Evidence is thin: only {count} matching Reddit {posts}. Treat this as anecdotal and "
        "research further before relying on it."
    )


def prompt_context(analysis: QueryAnalysis | None, reddit: RedditConfig | None) -> PromptContext:
    """What the prompt and the local strategy need from the analysis and the section caps."""
    gems = reddit.max_gems if reddit else DEFAULT_GEMS
    dissent = reddit.max_dissent if reddit else DEFAULT_DISSENT
    if analysis is None:
        return PromptContext(max_gems=gems, max_dissent=dissent)
    return PromptContext(
        english_question=analysis.english_question,
        intent=analysis.intent,
        compared=tuple(analysis.compared),
        language=analysis.language,
        table_required=needs_table(analysis),
        pick=asks_for_pick(analysis.english_question),
        max_gems=gems,
        max_dissent=dissent,
    )


async def synthesize_answer(
    question: str,
    threads: Sequence[DrilledThread],
    *,
    analysis: QueryAnalysis | None,
    engine: Engine,
    extra: Sequence[EvidenceItem] = (),
    selector_config: SelectorConfig | None = None,
    synthesis_config: SynthesisConfig | None = None,
    reddit_config: RedditConfig | None = None,
    prompt_version: str = "v1",
    fallback: Engine | None = None,
    skipped: Mapping[str, str] | None = None,
) -> Answer:
    """Answer ``question`` from ``threads`` (and ``extra`` videos/products) with one call.

    ``skipped``: the subreddits the search could not search, with why (an answer that found
    nothing says so, never only "no thread").

    ``selector_config`` defaults to ``SelectorConfig.for_drilled_threads``; the summary's
    budget and caps come from ``synthesis_config``, the sections' caps from
    ``reddit_config``; ``fallback`` answers when an LLM cites nothing in the evidence
    (``answer_request``). Raises ``ConfigError`` only for an unknown ``prompt_version`` (a
    caller's mistake, found before any work is done).
    """
    get_template(prompt_version)
    if selector_config is None:  # every thread, and room for every video and product
        selector_config = SelectorConfig.for_drilled_threads(len(threads) + len(extra))
    request = select_threads(
        question, threads, selector_config, prompt_version=prompt_version, extra=extra
    )
    salad = reads_as_word_salad(question, analysis.language) if analysis is not None else None
    if salad is not None:
        return _not_a_question(request, salad, engine_name=engine.name)
    if not request.post_payloads and analysis is not None:
        # A search ran and found nothing on the subject: that is an abstention, said plainly.
        subject = question_subject(question, analysis) or Subject(name="this question", terms=())
        places = looked_in(analysis, threads, extra)
        return _abstain(
            request, subject, places, engine_name=engine.name, found=False, skipped=skipped
        )
    if request.post_payloads:  # no search at all (no analysis) keeps its own answer
        verdict = judge_subject(question, analysis, threads, extra)
        if not verdict.discussed and verdict.subject is not None:
            places = looked_in(analysis, threads, extra)
            return _abstain(request, verdict.subject, places, engine_name=engine.name)
    return await answer_request(
        request,
        analysis=analysis,
        engine=engine,
        synthesis_config=synthesis_config,
        reddit_config=reddit_config,
        judged={thread.post.id: thread.rank.relevance for thread in threads},
        fallback=fallback,
    )


def _no_evidence(prompt_version: str, engine: str, config: SynthesisConfig) -> Answer:
    """The answer when nothing matched: said plainly, the engine not called."""
    return Answer(
        content=SummaryContent(
            summary=NO_EVIDENCE_SUMMARY,
            cautions=[NO_EVIDENCE_CAUTION][: config.max_cautions],
            prompt_version=prompt_version,
            engine=engine,
        ),
        verdict=Verdict(reasons=("no posts matched the question; the engine was not called",)),
    )


def _engine_failed(exc: EngineError, prompt_version: str, engine: str) -> Answer:
    """The answer when the engine failed: empty, its failure the verdict and an error."""
    return Answer(
        content=SummaryContent(summary="", prompt_version=prompt_version, engine=engine),
        verdict=Verdict(failure=f"{type(exc).__name__}: {exc}"),
        errors=[f"synthesis failed ({type(exc).__name__}): {exc}"],
    )


async def answer_request(
    request: SummarizeRequest,
    *,
    analysis: QueryAnalysis | None,
    engine: Engine,
    synthesis_config: SynthesisConfig | None = None,
    reddit_config: RedditConfig | None = None,
    judged: Mapping[str, float] | None = None,
    fallback: Engine | None = None,
) -> Answer:
    """``synthesize_answer`` after the selector: one engine call over ``request``'s evidence.

    ``judged``: the relevance gate's score of each thread (post id → 0–1), which the grounding
    check holds the cited threads to (``grounding.ON_SUBJECT``). ``fallback``: the local
    engine, which answers over the same evidence when an LLM's answer keeps no citation of it
    (a model that invents its sources leaves the user real ones, and a ``partial`` saying so)."""
    config = synthesis_config or SynthesisConfig()
    prompt_version = request.prompt_version
    stopwatch = Stopwatch()
    count = len(request.post_payloads)
    if count == 0:
        answer = _no_evidence(prompt_version, engine.name, config)
        _log(request, answer, stopwatch, tokens=(0, 0))
        return answer
    context = prompt_context(analysis, reddit_config)
    try:
        reply = await engine.run(AnswerTask(request, config, context))
    except EngineError as exc:
        answer = _engine_failed(exc, prompt_version, engine.name)
        log.warning("summarize_failed", plan_id=str(request.plan_id), error=answer.verdict.failure)
        _log(request, answer, stopwatch, tokens=(0, 0))
        return answer
    grounded = ground(
        reply.output, request, config, engine=reply.engine,
        max_gems=context.max_gems, max_dissent=context.max_dissent, judged=judged or {},
    )  # fmt: skip
    if fallback is not None and reply.engine != "local" and not cites_evidence(grounded.content):
        log.warning("summarize_fell_back", problems=grounded.problems)
        reply, grounded = await _local_instead(
            fallback, grounded, request, config, context, judged or {}
        )
    content, reasons = grounded.content, list(grounded.problems)
    if count < config.min_evidence_posts:
        content = _with_thin_caution(content, count, config)
        reasons.append(f"thin evidence: {count} post(s), fewer than {config.min_evidence_posts}")
    if grounded.problems:
        log.warning("answer_partial", why=grounded.problems)
    answer = Answer(
        content=content, verdict=Verdict(reasons=tuple(reasons)), synthesis=grounded.synthesis
    )
    usage = reply.usage
    tokens = (usage.prompt_tokens, usage.completion_tokens)
    _log(request, answer, stopwatch, tokens=tokens, model=reply.model)
    return answer


FELL_BACK = (
    "the model's answer cited nothing in the evidence, so this is the local engine's extractive "
    "answer over the same evidence"
)


def cites_evidence(content: SummaryContent) -> bool:
    """Whether a grounded answer still cites any evidence item (grounding removed the rest)."""
    texts = [content.summary, *content.highlights, *content.cautions]
    return bool(content.sources) or any(text.citations() for text in texts)


async def _local_instead(
    fallback: Engine,
    lying: Grounded,
    request: SummarizeRequest,
    config: SynthesisConfig,
    context: PromptContext,
    judged: Mapping[str, float],
) -> tuple[EngineReply[AnswerDraft], Grounded]:
    """The local engine's answer over the same evidence, reported ``partial`` with why, and
    still counting what the model invented (its removed citations and dropped claims)."""
    reply = await fallback.run(AnswerTask(request, config, context))
    grounded = ground(
        reply.output, request, config, engine=reply.engine,
        max_gems=context.max_gems, max_dissent=context.max_dissent, judged=judged,
    )  # fmt: skip
    synthesis = grounded.synthesis
    if synthesis is not None and lying.synthesis is not None:
        synthesis = synthesis.model_copy(
            update={
                "removed_citations": lying.synthesis.removed_citations,
                "dropped_claims": lying.synthesis.dropped_claims,
            }
        )
    problems = [FELL_BACK, *lying.problems, *grounded.problems]
    return reply, replace(grounded, synthesis=synthesis, problems=problems)


def _abstain(
    request: SummarizeRequest,
    subject: Subject,
    places: Sequence[str],
    *,
    engine_name: str,
    found: bool = True,
    skipped: Mapping[str, str] | None = None,
) -> Answer:
    """The evidence never mentions the question's subject (or the search found no post at
    all, ``found=False``): say so, cite nothing, and do not ask the engine to summarise."""
    terms = ", ".join(" ".join(term) for term in subject.terms[:5])
    why = (
        f"no fetched post or comment mentions {subject.name} (looked for: {terms})"
        if found
        else "the search found no post that passed the filters and the relevance check"
    )
    summary = abstention_sentence(subject, places, found=found, skipped=skipped or {})
    return _abstained(request, summary, why, engine_name=engine_name)


def _not_a_question(request: SummarizeRequest, why: str, *, engine_name: str) -> Answer:
    """The question is a heap of words (``reads_as_word_salad``): whatever the search matched
    answers nothing it asks, so abstain and say how to ask."""
    why = f"the question reads as word salad ({why})"
    return _abstained(request, NOT_A_QUESTION, why, engine_name=engine_name)


def _abstained(request: SummarizeRequest, summary: str, why: str, *, engine_name: str) -> Answer:
    """An abstention: ``summary`` says it, ``why`` is the reason, nothing is cited."""
    answer = Answer(
        content=SummaryContent(
            summary=summary,
            prompt_version=request.prompt_version,
            engine=engine_name,
            abstained=True,
        ),
        verdict=Verdict(reasons=(f"abstained: {why}; the engine was not called",)),
    )
    _log(request, answer, Stopwatch(), tokens=(0, 0))
    return answer


def _with_thin_caution(
    content: SummaryContent, count: int, config: SynthesisConfig
) -> SummaryContent:
    """The thin-evidence caution first (within ``max_cautions``): the answer is partial, and
    says why to its reader, not only in its reason."""
    caution = CitedText.decode(thin_evidence_caution(count))
    cautions = [caution, *content.cautions][: config.max_cautions]
    return content.model_copy(update={"cautions": cautions})


def _log(
    request: SummarizeRequest,
    answer: Answer,
    stopwatch: Stopwatch,
    *,
    tokens: tuple[int, int],
    model: str | None = None,
) -> None:
    result, synthesis = answer.summary, answer.synthesis
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
        gems=len(synthesis.hidden_gems) if synthesis else 0,
        dissent=len(synthesis.minority_report) if synthesis else 0,
        pivots=len(synthesis.pivot_alerts) if synthesis else 0,
        rows=len(synthesis.comparison_table) if synthesis else 0,
        reason=result.reason,
    )
