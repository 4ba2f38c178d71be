"""The one research pipeline on the bundled demo archive: formulate → plan → fetch → gate →
rerank → drill → one synthesis, counted call by call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.cli.render import number_citations, render_answer
from crowdsift.core.config import Settings
from crowdsift.core.models import RejectReason
from crowdsift.engines.base import Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
from crowdsift.pipeline.reddit.formulate import FormulateTask
from crowdsift.pipeline.reddit.models import FormulationDraft
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, AskRun, ResearchResult
from crowdsift.pipeline.synthesis.models import AnswerDraft, SourceRef
from crowdsift.pipeline.synthesis.task import AnswerTask
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def run(archive: Path, engine: object, **settings: Any) -> AskRun:
    source = ArchiveSource(archive)
    deps = AskDeps(
        settings=Settings(**settings),
        engine=engine,  # type: ignore[arg-type]
        source=source,
        candidates=subreddit_profiles(archive),
    )
    try:
        return asyncio.run(run_research(QUESTION, deps))
    finally:
        source.close()


def test_local_ask_runs_every_stage_once_and_is_grounded(demo_archive: Path) -> None:
    outcome = run(demo_archive, LocalEngine(embedder=HashingEmbedder()))
    result = outcome.result
    assert result.engine == "local" and result.summary is not None
    assert result.summary.engine == "local"
    assert result.status in {"ok", "partial"} and result.summary.summary
    evidence = {post.id: post.url for post in outcome.evidence.posts}
    assert result.summary.sources
    assert all(evidence[s.post_id] == str(s.url) for s in result.summary.sources)
    fetch = result.fetch
    assert fetch is not None
    filters = 2 if fetch.refetched else 1  # the gate refetches at most once
    assert result.usage.by_phase == {"analysis": 1, "filter": filters, "synthesis": 1}
    assert {"formulate", "search", "drill"} <= set(result.reddit_response.timings_ms)  # type:
    # ignore[union-attr]
    assert {"reddit", "synthesize", "total"} <= set(result.timings_ms)
    # the plan and fetch are the real ones: the executed queries and the fetcher's counts
    assert result.plan is not None and result.plan.queries
    assert fetch.posts_seen >= fetch.posts_accepted >= fetch.posts_relevant > 0
    assert fetch.posts_seen == fetch.posts_accepted + sum(fetch.post_rejections.values())
    assert fetch.post_rejections.get(RejectReason.DUPLICATE, 0) > 0
    # one synthesis: the staff-engineer sections hold the answer's one summary, not a copy
    response = result.reddit_response
    assert response is not None and response.synthesis is not None
    assert response.synthesis.summary is result.summary.summary
    assert ResearchResult.model_validate_json(result.model_dump_json()) == result


def llm_like(yields: list[float]) -> ScriptedEngine:
    """A scripted 'LLM': formulates, judges with the given yields, cites the first thread."""
    remaining = list(yields)

    def respond(task: Task[Any]) -> object:
        if isinstance(task, FormulateTask):
            return FormulationDraft(
                english_question=task.question, intent="comparison",
                keywords=["plaud note", "plaud"], ai_queries=["plaud note vs phone app"],
                subreddits=["gadgets", "productivity"], compared=["plaud note", "phone app"],
            )  # fmt: skip
        if isinstance(task, RelevanceTask):
            share = remaining.pop(0)
            keep = round(len(task.items) * share)
            return RelevanceVerdicts(relevant=[i < keep for i in range(len(task.items))])
        assert isinstance(task, AnswerTask)
        first = task.request.post_payloads[0]
        return AnswerDraft(
            summary=f"People like it. [post:{first.post_id}]",
            sources=[SourceRef(post_id=first.post_id, url=str(first.url))],
        )

    return ScriptedEngine(function=respond, tokens_per_call=(100, 20))


def test_llm_ask_with_good_yield_makes_three_calls(demo_archive: Path) -> None:
    engine = llm_like([0.9])
    result = run(demo_archive, engine).result
    assert [type(t).__name__ for t in engine.requests] == [
        "FormulateTask", "RelevanceTask", "AnswerTask",
    ]  # fmt: skip
    assert result.usage.calls == 3 and result.fetch is not None and not result.fetch.refetched
    assert result.summary is not None and len(result.summary.sources) == 1
    assert result.usage.prompt_tokens == 300 and result.usage.completion_tokens == 60


def test_llm_ask_with_a_low_yield_makes_four_calls_with_one_refetch(demo_archive: Path) -> None:
    engine = llm_like([0.1, 0.1])
    result = run(demo_archive, engine, page_size=3).result
    names = [type(t).__name__ for t in engine.requests]
    assert names == ["FormulateTask", "RelevanceTask", "RelevanceTask", "AnswerTask"]
    assert result.fetch is not None and result.fetch.refetched and result.usage.calls == 4
    first, second = engine.requests[1], engine.requests[2]
    seen = {item.title for item in first.items}  # type: ignore[attr-defined]
    assert not seen & {item.title for item in second.items}  # type: ignore[attr-defined]


def test_render_numbers_citations_and_labels_the_local_engine(demo_archive: Path) -> None:
    result = run(demo_archive, LocalEngine(embedder=HashingEmbedder())).result
    text = render_answer(result)
    assert "[post:" not in text and "[1]" in text
    assert "Sources:\n  [1] r/" in text or "Sources:\n  r/" in text  # a thread, or its title
    assert "engine: local (extractive" in text and "not an LLM" in text
    assert number_citations("A [post:x]. B [post:zz]", {"x": 1}) == "A [1]. B"


def test_cli_ask_end_to_end_with_the_real_local_model() -> None:
    runner = CliRunner()
    outcome = runner.invoke(app, ["ask", QUESTION, "--json"], catch_exceptions=False)
    assert outcome.exit_code == 0, outcome.stderr
    data = json.loads(outcome.stdout)
    assert data["engine"] == "local" and data["summary"]["engine"] == "local"
    assert data["summary"]["sources"]
    assert all(s["url"].startswith("https://www.reddit.com/r/") for s in data["summary"]["sources"])
    assert "SAMPLE DATA" in outcome.stderr
    human = runner.invoke(app, ["ask", QUESTION, "--no-store"], catch_exceptions=False)
    assert "Sources:" in human.stdout and "not an LLM" in human.stdout


def test_cli_ask_rejects_an_unknown_engine() -> None:
    outcome = CliRunner().invoke(app, ["ask", "q", "--engine", "gpt"], catch_exceptions=False)
    assert outcome.exit_code == 2 and "unknown --engine 'gpt'" in outcome.stderr


def test_cli_ask_with_openai_but_no_key_says_what_to_do() -> None:
    outcome = CliRunner().invoke(
        app, ["ask", "is it worth it?", "--engine", "openai"], catch_exceptions=False
    )
    assert outcome.exit_code == 2  # a usage error, as the README says
    assert "CROWDSIFT_LLM_API_KEY" in outcome.stderr and "--engine local" in outcome.stderr
