"""Abstaining honestly: evidence that never mentions the question's subject gets a one-sentence
"nothing discusses it", no sources, status partial everywhere and no synthesis call; and the
statuses of ``summary``, ``reddit_response`` and the overall result agree."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.config import Settings
from crowdsift.engines.base import Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import CountingEngine, ScriptedEngine
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, ResearchResult
from crowdsift.pipeline.status import Judged, RedditFacts, Verdict, decide, overall_status
from crowdsift.pipeline.synthesis.answer import synthesize_answer
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from tests.pipeline.synthesis.test_subject import _analysis, _thread

SONY = "Is the Sony WH-1000XM6 worth it?"
PLAUD = "Is the Plaud Note worth it compared to a phone recording app?"


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def _no_synthesis(task: Task[Any]) -> Any:
    raise AssertionError(f"the engine was asked to {task.phase}")


def test_synthesis_abstains_without_calling_the_engine() -> None:
    engine = ScriptedEngine(function=_no_synthesis)
    threads = [
        _thread("Cheap Sony voice recorder + Whisper", "", "A basic Sony recorder is enough."),
        _thread("Plaud Note review", "", "Battery lasts 30 hours.", sub="productivity"),
    ]
    answer = asyncio.run(synthesize_answer(SONY, threads, analysis=_analysis(SONY), engine=engine))

    summary = answer.summary
    assert engine.requests == []
    assert summary.abstained and summary.status == "partial"
    assert (
        summary.summary.marked()
        == "Nothing in r/gadgets, r/productivity discusses the Sony WH-1000XM6."
    )
    assert summary.reason is not None and summary.reason.startswith("abstained:")
    assert summary.sources == [] and summary.highlights == [] and summary.cautions == []
    assert answer.synthesis is None


def test_synthesis_on_the_subject_calls_the_engine_once() -> None:
    engine = ScriptedEngine(function=_no_synthesis)
    threads = [_thread("WH-1000XM6 after a month", "", "Noise cancelling is superb.")]
    with pytest.raises(AssertionError, match="synthesis"):
        asyncio.run(synthesize_answer(SONY, threads, analysis=_analysis(SONY), engine=engine))
    assert len(engine.requests) == 1


def test_a_search_that_found_nothing_abstains_naming_where_it_looked() -> None:
    engine = ScriptedEngine()
    answer = asyncio.run(synthesize_answer(SONY, [], analysis=_analysis(SONY), engine=engine))
    summary = answer.summary
    assert summary.abstained and summary.status == "partial" and not summary.sources
    # not "nothing discusses it": the search may have missed what the forum holds
    assert summary.summary.marked().startswith("The search of r/")
    assert summary.summary.marked().endswith(" found no thread for this question.")
    assert (summary.reason or "").startswith("abstained: the search found no post")
    assert engine.requests == []


def test_without_a_search_no_evidence_keeps_its_own_answer() -> None:
    answer = asyncio.run(synthesize_answer(SONY, [], analysis=None, engine=ScriptedEngine()))
    assert not answer.summary.abstained
    assert answer.summary.reason == "no posts matched the question; the engine was not called"


# --- On the demo archive ----------------------------------------------------------------------


def _scripted(keywords: list[str], answer: bool) -> ScriptedEngine:
    """An 'LLM' that formulates, finds every candidate relevant (as a careless gate would), and
    answers citing the first post — or fails the test if asked to answer."""
    from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
    from crowdsift.pipeline.reddit.formulate import FormulateTask
    from crowdsift.pipeline.reddit.models import FormulationDraft
    from crowdsift.pipeline.synthesis.models import AnswerDraft, SourceRef
    from crowdsift.pipeline.synthesis.task import AnswerTask

    def reply(task: Task[Any]) -> Any:
        if isinstance(task, FormulateTask):
            return FormulationDraft(english_question=task.question, keywords=keywords,
                                    subreddits=["gadgets", "productivity"])  # fmt: skip
        if isinstance(task, RelevanceTask):
            n = len(task.items)
            return RelevanceVerdicts(relevant=[True] * n, scores=[0.7] * n)
        assert isinstance(task, AnswerTask) and answer, "the synthesis must not be called"
        first = task.request.post_payloads[0]
        ref = SourceRef(post_id=first.post_id, url=str(first.url))
        return AnswerDraft(summary=f"Owners like it. [post:{first.post_id}]", sources=[ref])

    return ScriptedEngine(function=reply)


def _ask(archive: Path, question: str, engine: Any) -> ResearchResult:
    source = ArchiveSource(archive)
    deps = AskDeps(
        settings=Settings(), engine=engine, source=source, candidates=subreddit_profiles(archive)
    )
    try:
        return asyncio.run(run_research(question, deps)).result
    finally:
        source.close()


def test_an_llm_is_not_asked_to_summarise_posts_that_never_mention_the_product(
    demo_archive: Path,
) -> None:
    engine = _scripted(["sony wh-1000xm6", "sony"], answer=False)
    result = _ask(demo_archive, SONY, engine)

    assert [type(t).__name__ for t in engine.requests] == ["FormulateTask", "RelevanceTask"]
    assert result.reddit_response is not None and result.reddit_response.threads_drilled > 0
    summary = result.summary
    assert summary is not None and summary.abstained and summary.sources == []
    analysis = result.reddit_response.analysis
    assert analysis is not None
    searched = ", ".join(f"r/{sub}" for sub in analysis.subreddits)
    assert summary.summary.marked().startswith(f"Nothing in {searched}")
    assert summary.summary.marked().endswith(" discusses the Sony WH-1000XM6.")
    assert (result.status, summary.status, result.reddit_response.status) == ("partial",) * 3
    assert "[" not in summary.summary.marked()  # cites nothing


def test_the_local_engine_is_not_run_either() -> None:
    engine = CountingEngine(LocalEngine(embedder=HashingEmbedder()))
    threads = [_thread("Cheap Sony voice recorder + Whisper", "", "A basic Sony recorder.")]
    answer = asyncio.run(synthesize_answer(SONY, threads, analysis=_analysis(SONY), engine=engine))
    assert answer.summary.abstained and answer.summary.engine == "local"
    assert engine.usage.calls == 0


def test_a_question_about_the_archive_s_product_is_answered(demo_archive: Path) -> None:
    engine = _scripted(["plaud note", "plaud"], answer=True)
    result = _ask(demo_archive, PLAUD, engine)

    assert result.summary is not None and not result.summary.abstained
    assert result.summary.sources and result.summary.status == "ok"
    assert type(engine.requests[-1]).__name__ == "AnswerTask"
    assert result.status == "ok" and result.reddit_response is not None
    assert result.reddit_response.status == "ok"


# --- Statuses agree ----------------------------------------------------------------------------


def _summary(status: Any = "ok") -> SummarizeResult:
    return SummarizeResult(status=status, summary="An answer.", prompt_version="v1")


def _reddit(status: Any, errors: list[str] | None = None) -> RedditResponse:
    return RedditResponse(status=status, engine="local", source="archive", errors=errors or [])


FOUND = RedditFacts(searches=2, candidates=3, sections=True)


def _facts(**changes: Any) -> RedditFacts:
    return dataclasses.replace(FOUND, **changes)


def test_a_partial_reddit_answer_makes_its_summary_partial() -> None:
    searched = decide(Verdict(), _facts(errors=("r/gadgets: 503",)))
    assert searched.reddit == "partial" and searched.summary.status == "partial"
    assert searched.summary.reason == "the Reddit answer is partial: r/gadgets: 503"

    sections = decide(Verdict(), _facts(sections_cut=True))
    assert sections.reddit == "partial" and sections.summary.status == "partial"
    assert sections.summary.reason

    failed = decide(Verdict(), RedditFacts(failure="bad credentials", errors=("bad credentials",)))
    assert failed.reddit == "failed" and failed.summary.status == "partial"


def test_agreeing_statuses_are_left_alone() -> None:
    ok = decide(Verdict(), FOUND)
    assert ok.reddit == "ok" and ok.summary == Judged("ok")
    alone = decide(Verdict())
    assert alone.reddit is None and alone.summary == Judged("ok")
    error = decide(Verdict(failure="EngineOutputError: bad json"), _facts(errors=("x",)))
    assert error.reddit == "partial" and error.summary == Judged(
        "error", "EngineOutputError: bad json"
    )


def test_the_overall_status_is_never_ok_beside_a_partial_part() -> None:
    assert overall_status([], _reddit("ok"), _summary()) == "ok"
    assert overall_status([], _reddit("partial"), _summary("partial")) == "partial"
    assert overall_status([], _reddit("ok"), _summary("partial")) == "partial"
    assert overall_status([], _reddit("no_results"), _summary("partial")) == "partial"
    assert overall_status([], _reddit("failed"), None) == "error"


# --- word salad: no question, no answer ---------------------------------------------------------

_KEYWORDS = [
    "battery", "recorder", "drill", "concrete", "airflow", "dagster", "plaud", "note",
    "meeting", "scheduler", "anchors", "drywall", "headphones", "cursor", "copilot", "python",
    "vector", "embeddings", "transcript", "price",
]  # fmt: skip
PASTED_POST = (
    "We are a small team of three and we have been running our nightly jobs with cron on one "
    "box for years. It works, but when a job fails at night nobody notices until the morning, "
    "and re-running the right steps by hand is error prone. We looked at Airflow and at "
    "Dagster. Airflow is what everyone seems to use, but it looks heavy for the number of jobs "
    "we have. Dagster looks nicer to develop with, but we are not sure how it behaves when the "
    "team is this small and nobody is on call. Which of the two would you pick in our place, "
    "and what would you watch out for in the first months?"
)


def test_a_heap_of_keywords_abstains_without_calling_the_engine() -> None:
    salad = " ".join(_KEYWORDS[i % len(_KEYWORDS)] for i in range(0, 700, 3))
    engine = ScriptedEngine(function=_no_synthesis)
    threads = [_thread("Plaud Note review", "", "Battery lasts 30 hours on the Plaud Note.")]
    answer = asyncio.run(
        synthesize_answer(salad, threads, analysis=_analysis(salad), engine=engine)
    )
    assert engine.requests == []
    assert answer.summary.abstained and answer.summary.status == "partial"
    assert "rather than a question" in answer.summary.summary.text
    assert answer.summary.reason is not None and "word salad" in answer.summary.reason
    assert answer.summary.sources == [] and answer.synthesis is None


@pytest.mark.parametrize(
    ("text", "language", "salad"),
    [
        (" ".join(_KEYWORDS), "en", True),  # 20 keywords, no sentence
        (" ".join(["the", "drill", "of", "concrete"] * 30), "en", True),  # 4 words, over and over
        (PASTED_POST, "en", False),  # a long question pasted whole is a question
        ("rtx 3090 vs 4090 llama 70b q4 tokens per second", "en", False),  # a keyword query
        (" ".join(_KEYWORDS), "de", False),  # another language: not judged by English words
    ],
)
def test_word_salad_is_told_from_questions(text: str, language: str, salad: bool) -> None:
    from crowdsift.pipeline.synthesis.subject import reads_as_word_salad

    assert (reads_as_word_salad(text, language) is not None) is salad
