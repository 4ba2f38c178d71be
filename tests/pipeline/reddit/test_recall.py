"""Planning recall: names in a list are separate search terms, a field's acronym comes after
the products the question names, a comparison's options survive a trailing clause, a topic's
window counts back from the newest post the source holds, and a window that finds too little is
widened once to all time."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.reddit.branch import MIN_CANDIDATES, RedditDeps, run_reddit
from crowdsift.pipeline.reddit.formulate import rule_draft
from crowdsift.pipeline.reddit.intent import compared_options
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.reddit.strategies import anchored, build_plan, search_words, widen
from crowdsift.pipeline.reddit.topicality import key_phrases
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.source import ArchiveSource
from tests.sources.archive.conftest import post

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


NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)


def test_the_targeted_search_ors_the_questions_words_names_first() -> None:
    words = search_words(LLM_BOX)
    assert words[:4] == ["llm", "ollama", "llama.cpp", "vllm"]
    assert not {"best", "one", "up"} & set(words)  # stop words never search
    plan = build_plan(_analysis(LLM_BOX), RedditConfig(), page_size=25)
    assert plan.queries[0].term == " OR ".join(words)
    assert set(words) <= set(plan.search_terms)  # the lexical screen lets its finds through


def test_widen_searches_every_query_over_all_time_once() -> None:
    plan = build_plan(_analysis(LLM_BOX), RedditConfig(), page_size=25)
    assert {q.time_filter for q in plan.queries} == {"month", "all"}  # timeless is all-time
    wider = widen(plan)
    assert wider is not None
    assert [q.term for q in wider.queries] == [q.term for q in plan.queries]
    assert {(q.time_filter, q.since) for q in wider.queries} == {("all", None)}
    assert widen(wider) is None  # once


def test_a_window_the_user_set_is_never_widened() -> None:
    since = NOW - timedelta(days=7)
    plan = build_plan(_analysis(LLM_BOX), RedditConfig(), page_size=25, since=since, now=NOW)
    assert widen(plan) is None


def test_a_window_counts_back_from_the_newest_post_an_archive_holds() -> None:
    """An archive of last year's threads has a "last month" of its own, not an empty one."""
    newest = datetime(2025, 8, 8, tzinfo=UTC)
    plan = build_plan(_analysis(LLM_BOX), RedditConfig(), page_size=25, now=NOW, newest=newest)
    month = [q for q in plan.queries if q.strategy != "timeless"]
    assert {q.since for q in month} == {newest - timedelta(days=30)}
    assert {q.time_filter for q in month} == {"all"}  # the filter reaching that far back
    [timeless] = [q for q in plan.queries if q.strategy == "timeless"]
    assert (timeless.time_filter, timeless.since) == ("all", None)


def test_a_live_sources_window_counts_back_from_now() -> None:
    query = build_plan(_analysis(LLM_BOX), RedditConfig(), page_size=25).queries[0]
    assert anchored(query, NOW - timedelta(hours=3), NOW) == query
    bound = NOW - timedelta(days=60)
    assert anchored(query, bound, NOW).since == bound - timedelta(days=30)


def _archive(tmp_path: Path) -> Path:
    """r/localllama: two inference-server threads in the month before its newest post, six
    older ones that the all-time search of the core phrase ("ollama") does not find."""
    newest = int(datetime(2025, 8, 8, tzinfo=UTC).timestamp())
    day = 86_400
    ages = [0, 3, 60, 90, 120, 150, 200, 300]
    posts = [
        post(
            f"s{n}", subreddit="LocalLLaMA", created=newest - age * day, score=10,
            title=f"{'Ollama or vLLM' if age < 30 else 'vLLM'} as a server for developers {n}",
            selftext="Sharing one local LLM box between several developers: what holds up?",
        )
        for n, age in enumerate(ages)
    ]  # fmt: skip
    dump = tmp_path / "RS.ndjson"
    dump.write_text("".join(json.dumps(p) + "\n" for p in posts))
    target = tmp_path / "a.sqlite"
    assert import_files([dump], target).ok
    return target


def test_a_window_that_finds_too_little_is_widened_once(tmp_path: Path) -> None:
    """A fast-moving topic's month, counted back from the archive's newest post, holds two
    threads: the plan widens once to all time and finds the older six."""
    archive = _archive(tmp_path)
    source = ArchiveSource(archive)
    deps = RedditDeps(
        source=source, engine=LocalEngine(embedder=HashingEmbedder()), config=RedditConfig(),
        candidates=subreddit_profiles(archive), search=SearchOptions(page_size=25),
    )  # fmt: skip
    try:
        run = asyncio.run(run_reddit(LLM_BOX, deps))
    finally:
        source.close()
    assert run.plan is not None and run.newest == datetime(2025, 8, 8, tzinfo=UTC)
    assert run.widened_from == 2 < MIN_CANDIDATES
    assert {(q.time_filter, q.since) for q in run.plan.queries} == {("all", None)}
    assert {c.post.id for c in run.candidates} == {f"s{n}" for n in range(8)}
