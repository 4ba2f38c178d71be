"""Planning recall: names in a list are separate search terms, a field's acronym comes after
the products the question names, a comparison's options survive a trailing clause, and a plan
that finds too little is widened once with every word of the question."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from crowdsift.core.config.sidecar import SidecarConfig
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.reddit.branch import MIN_CANDIDATES, SidecarDeps, run_reddit
from crowdsift.pipeline.reddit.formulate import rule_draft
from crowdsift.pipeline.reddit.intent import compared_options
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.planner import key_phrases
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.reddit.strategies import build_plan, widen, wider_words
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource

LLM_BOX = (
    "Which inference server holds up best when several developers share one local LLM box: "
    "Ollama, llama.cpp or vLLM?"
)


def test_names_in_a_list_are_separate_and_products_come_before_the_fields_acronym() -> None:
    phrases = key_phrases(LLM_BOX)
    assert phrases[:2] == ["ollama", "llama.cpp"] and "vllm" in phrases
    assert "ollama llama.cpp" not in phrases  # a comma ends a name
    assert "llm" not in phrases[:4]  # "LLM" names the field; the products are the search
    assert key_phrases("Is the Plaud Note worth it?")[0] == "plaud note"  # a name stays whole


@pytest.mark.parametrize(
    ("question", "options"),
    [
        (
            "Is Cursor really better than GitHub Copilot for everyday coding, or are they the "
            "same by now?",
            ["cursor", "github copilot"],
        ),
        (
            "Should I add Qdrant or Chroma to my stack, or just keep the embeddings in Postgres?",
            ["qdrant", "chroma", "embeddings"],
        ),
        ("Is it worth it or not?", []),
    ],
)
def test_a_trailing_clause_is_not_an_option(question: str, options: list[str]) -> None:
    assert compared_options(question) == options


def _analysis(question: str) -> QueryAnalysis:
    draft = rule_draft(question, max_ai_queries=3)
    return QueryAnalysis(
        **draft.model_dump(exclude={"subreddits"}), question=question, subreddits=["localllama"],
        time_filter="month", language="en",
    )  # fmt: skip


def test_widen_adds_one_all_time_search_of_the_questions_words_names_first() -> None:
    words = wider_words(LLM_BOX)
    assert words[:4] == ["llm", "ollama", "llama.cpp", "vllm"]
    assert not {"best", "one", "up"} & set(words)  # stop words never search
    analysis = _analysis(LLM_BOX)
    plan = build_plan(analysis, SidecarConfig(), page_size=25)
    wider = widen(plan, analysis)
    assert wider is not None and wider.queries[:-1] == plan.queries
    extra = wider.queries[-1]
    assert extra.term == " OR ".join(words) and extra.sort == "relevance"
    assert extra.time_filter == "all"  # as far back as the timeless search, not last month
    assert set(words) <= set(wider.search_terms)  # the lexical screen lets its finds through
    assert widen(wider, analysis) is None  # once


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def test_a_plan_that_finds_too_little_is_widened_once(demo_archive: Path) -> None:
    """Last month of r/localllama is empty in the demo archive: the plan's own searches find
    almost nothing, the widened one finds the "Ollama vs llama.cpp server vs vLLM" thread."""
    source = ArchiveSource(demo_archive)
    deps = SidecarDeps(
        source=source, engine=LocalEngine(embedder=HashingEmbedder()), config=SidecarConfig(),
        candidates=subreddit_profiles(demo_archive), search=SearchOptions(page_size=25),
    )  # fmt: skip
    try:
        run = asyncio.run(run_reddit(LLM_BOX, deps, subreddits=["localllama"]))
    finally:
        source.close()
    assert run.plan is not None
    widened = [q for q in run.plan.queries if q.term == " OR ".join(wider_words(LLM_BOX))]
    assert len(widened) == 1
    assert len(run.candidates) >= MIN_CANDIDATES
    assert "15lwf33" in {c.post.id for c in run.candidates}
