"""The research run (plan → fetch → gate → summarize) on the bundled demo archive."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crowdsift.archive.demo import ensure_demo_archive
from crowdsift.archive.profiles import subreddit_profiles
from crowdsift.cli import app
from crowdsift.config import Settings
from crowdsift.engines.base import Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.gate import RelevanceTask, RelevanceVerdicts
from crowdsift.planner import PlanDraft, PlanTask
from crowdsift.quick_ask import ask
from crowdsift.reddit.sources.archive import ArchiveSource
from crowdsift.render import number_citations, render_answer
from crowdsift.research import AskDeps, AskRun, ResearchResult
from crowdsift.summarizer.models import SourceRef, SummaryDraft
from crowdsift.summarizer.task import SummarizeTask

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def run(archive: Path, engine: object, **settings: object) -> AskRun:
    source = ArchiveSource(archive)
    deps = AskDeps(
        settings=Settings(**settings),  # type: ignore[arg-type]
        engine=engine,  # type: ignore[arg-type]
        source=source,
        candidates=subreddit_profiles(archive),
    )
    try:
        return asyncio.run(ask(QUESTION, deps))
    finally:
        source.close()


def test_local_ask_is_grounded_in_the_demo_archive(demo_archive: Path) -> None:
    outcome = run(demo_archive, LocalEngine(embedder=HashingEmbedder()))
    result = outcome.result
    assert result.engine == "local" and result.summary.engine == "local"
    assert result.status in {"ok", "partial"} and result.summary.summary
    evidence = {post.id: post.url for post in outcome.evidence.posts}
    assert result.summary.sources
    assert all(evidence[s.post_id] == str(s.url) for s in result.summary.sources)
    filters = 2 if result.fetch.refetched else 1  # the gate refetches at most once
    assert result.usage.by_phase == {"plan": 1, "filter": filters, "synthesis": 1}
    assert result.usage.calls == 2 + filters
    assert set(result.timings_ms) == {"plan", "fetch_and_gate", "summarize", "total"}
    assert result.fetch.posts_relevant == len(outcome.evidence.posts)
    assert ResearchResult.model_validate_json(result.model_dump_json()) == result


def llm_like(yields: list[float]) -> ScriptedEngine:
    """A scripted 'LLM' that plans, judges with the given yields, and cites the first post."""
    remaining = list(yields)

    def respond(task: Task[object]) -> object:
        if isinstance(task, PlanTask):
            return PlanDraft(search_terms=["plaud"], subreddits=["gadgets", "productivity"])
        if isinstance(task, RelevanceTask):
            share = remaining.pop(0)
            keep = round(len(task.items) * share)
            return RelevanceVerdicts(relevant=[i < keep for i in range(len(task.items))])
        assert isinstance(task, SummarizeTask)
        first = task.request.post_payloads[0]
        return SummaryDraft(
            summary=f"People like it. [post:{first.post_id}]",
            sources=[SourceRef(post_id=first.post_id, url=str(first.url))],
        )

    return ScriptedEngine(function=respond, tokens_per_call=(100, 20))


def test_llm_ask_makes_at_most_four_calls_with_one_refetch(demo_archive: Path) -> None:
    engine = llm_like([0.2, 0.2])
    result = run(demo_archive, engine).result
    assert [type(t).__name__ for t in engine.requests] == [
        "PlanTask", "RelevanceTask", "RelevanceTask", "SummarizeTask",
    ]  # fmt: skip
    assert result.fetch.refetched and result.usage.calls == 4
    assert result.usage.prompt_tokens == 400 and result.usage.completion_tokens == 80
    first_gate, second_gate = engine.requests[1], engine.requests[2]
    assert len(second_gate.items) > len(first_gate.items)  # type: ignore[attr-defined]


def test_llm_ask_with_good_yield_makes_three_calls(demo_archive: Path) -> None:
    engine = llm_like([0.9])
    result = run(demo_archive, engine).result
    assert result.usage.calls == 3 and not result.fetch.refetched
    assert result.status == "ok" and len(result.summary.sources) == 1


def test_render_numbers_citations_and_labels_the_local_engine(demo_archive: Path) -> None:
    result = run(demo_archive, LocalEngine(embedder=HashingEmbedder())).result
    text = render_answer(result)
    assert "[post:" not in text and "[1]" in text
    assert "Sources:\n  [1] r/" in text
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
    outcome = CliRunner().invoke(app, ["ask", "q", "--engine", "openai"], catch_exceptions=False)
    assert outcome.exit_code == 1
    assert "CROWDSIFT_LLM_API_KEY" in outcome.stderr and "--engine local" in outcome.stderr
