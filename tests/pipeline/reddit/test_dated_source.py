"""A question over a source that lists by date (Arctic Shift), end to end against the real local
server: what the communities' recent threads say sets the window and the words, what the source
found is ranked by the question's words, and the whole question keeps to its request budget."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.models import Candidate
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.fetch.bm25 import bm25_scores, rank_candidates, terms, thread_text
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.reddit.branch import RedditDeps, run_reddit
from crowdsift.pipeline.reddit.topicality import SubredditProfile
from crowdsift.testing.factories import make_post
from tests.sources.reddit.test_arctic_shift import Harness, make_comment
from tests.sources.reddit.test_arctic_shift import make_post as as_post

SUB = "BuyItForLife"
DATA_END = datetime(2024, 6, 1, tzinfo=UTC)
"""The newest post the server holds; the client's clock is a year and a half later."""
NOW = DATA_END + timedelta(days=540)
QUESTION = "Which cast iron skillet lasts for decades without warping?"


def _corpus() -> list[dict[str, Any]]:
    end = int(DATA_END.timestamp())
    filler = [
        as_post(f"f{n}", end - n * 3600, f"Wool socks report {n}", "Socks that last, daily wear.")
        for n in range(130)
    ]
    care = [
        as_post(f"c{n}", end - n * 3600 - 1800, f"Cast iron skillet care {n}", "Season the pan.")
        for n in range(20)
    ]
    answer = as_post(
        "skil1",
        end - 20 * 86_400,
        "Warped pan after two years",
        "My cast iron skillet warped on the stove. Which brand lasts for decades?",
    )
    other = as_post("pan2", end - 3 * 86_400, "Skillet handle loose", "The skillet handle wobbles.")
    return [*filler, *care, answer, other]


@pytest.fixture
def arctic() -> Iterator[Harness]:
    harness = Harness(now=NOW)
    with harness.server:
        harness.server.add_posts(SUB, _corpus())
        for post_id in ("skil1", "pan2"):
            start = int(DATA_END.timestamp()) - 86_400
            harness.server.add_comments(
                post_id, [make_comment(f"{post_id}c{n}", post_id, start + n) for n in range(3)]
            )
        try:
            yield harness
        finally:
            harness.close()


def _run(arctic: Harness, **config: Any) -> Any:
    source = arctic.source()
    deps = RedditDeps(
        source=source, engine=LocalEngine(embedder=HashingEmbedder()),
        config=RedditConfig(**config), candidates=(SubredditProfile(name=SUB.lower()),),
        candidates_closed=False, clock=arctic.clock, search=SearchOptions(page_size=25),
    )  # fmt: skip
    run = asyncio.run(run_reddit(QUESTION, deps, subreddits=[SUB]))
    return run, source


def test_a_question_keeps_to_its_request_budget() -> None:
    """Thirty relevant threads would cost a request each to drill: a budget of 8 drills what
    is left after the profile and the two searches, and skips the refetch."""
    end = int(DATA_END.timestamp())
    relevant = [
        as_post(f"r{n}", end - n * 600, f"Cast iron skillet {n} lasts decades", "No warping.")
        for n in range(30)
    ]

    def run_with(budget: int) -> tuple[Any, int]:
        harness = Harness(now=NOW)
        with harness.server:
            harness.server.add_posts(SUB, relevant)
            try:
                run, source = _run(harness, dated_requests=budget)
            finally:
                harness.close()
            assert len(harness.server.requests) == source.stats.requests
            return run, source.stats.requests

    run, requests = run_with(8)
    assert requests == 8
    assert len(run.threads) == 8 - 3  # one profile, two searches, then the drill
    unbounded, requests = run_with(200)
    assert requests > 8 and len(unbounded.threads) > len(run.threads)


def test_the_window_counts_back_from_the_communitys_newest_post(arctic: Harness) -> None:
    """The recent threads show the data ends in 2024: "any time" here means from then."""
    run, _ = _run(arctic)
    assert run.newest == DATA_END
    [profile] = run.profiles
    assert profile.posts == 100  # one request of the largest page
    recent = [r for r in arctic.server.requests if "query" not in r.params]
    assert recent[0].params["limit"] == "100"


def test_the_plan_asks_for_whole_pages_of_a_broad_and_a_narrow_search(arctic: Harness) -> None:
    run, _ = _run(arctic)
    assert run.plan is not None
    assert [q.limit for q in run.plan.queries] == [100, 100]
    searches = [r.params for r in arctic.server.requests if "query" in r.params]
    assert searches[0]["limit"] == "100"  # one request, not four pages of 25
    broad, narrow = (q.term for q in run.plan.queries)
    assert " OR " in broad and " OR " not in narrow


def test_what_a_source_listing_by_date_found_is_ranked_by_the_questions_words(
    arctic: Harness,
) -> None:
    """The answering thread is older than the newest matches; the ranking puts it first."""
    run, _ = _run(arctic)
    assert run.ranked and run.ranked[0].post_id == "skil1"


def test_bm25_prefers_rarer_words_and_shorter_matches() -> None:
    docs = [terms("skillet skillet socks"), terms("socks socks socks socks"), terms("pan")]
    scores = bm25_scores(terms("skillet socks"), docs)
    assert scores[0] > scores[1] > scores[2] == 0.0
    assert bm25_scores(["x"], []) == []
    assert thread_text("Cast iron", "pan") == ["cast", "iron", "cast", "iron", "pan"]


def test_rank_candidates_scales_the_best_to_one_and_leaves_no_match_alone() -> None:
    def candidate(post_id: str, title: str) -> Candidate:
        return Candidate(post=make_post(post_id, title, "body text here"))

    ranked = rank_candidates([candidate("a", "socks"), candidate("b", "skillet")], ["skillet"])
    assert [c.retrieval for c in ranked] == [0.0, 1.0]
    unchanged = [candidate("a", "socks")]
    assert rank_candidates(unchanged, ["skillet"]) == unchanged


def test_each_question_gets_the_whole_budget_on_a_source_that_serves_many() -> None:
    """``crowdsift eval`` and long-lived callers ask many questions of one source: the budget
    counts from each question's start, not from the source's first request."""
    end = int(DATA_END.timestamp())
    relevant = [
        as_post(f"r{n}", end - n * 600, f"Cast iron skillet {n} lasts decades", "No warping.")
        for n in range(30)
    ]
    harness = Harness(now=NOW)
    with harness.server:
        harness.server.add_posts(SUB, relevant)
        try:
            source = harness.source()
            deps = RedditDeps(
                source=source, engine=LocalEngine(embedder=HashingEmbedder()),
                config=RedditConfig(dated_requests=8),
                candidates=(SubredditProfile(name=SUB.lower()),), candidates_closed=False,
                clock=harness.clock, search=SearchOptions(page_size=25),
            )  # fmt: skip
            first = asyncio.run(run_reddit(QUESTION, deps, subreddits=[SUB]))
            after_first = source.stats.requests
            second = asyncio.run(run_reddit(QUESTION, deps, subreddits=[SUB]))
        finally:
            harness.close()
    assert after_first <= 8
    assert len(second.threads) == len(first.threads) == 8 - 3  # not the drill's minimum


def test_a_window_too_thin_to_widen_within_the_budget_says_so() -> None:
    """A fast-moving topic's month holds two threads; widening to all time would find six
    more. Within a budget that affords it the run widens; within one that does not, the run
    says the answer rests on few threads instead of reading as the community's silence."""
    newest = int(DATA_END.timestamp())
    posts = [
        as_post(f"s{n}", newest - age * 86_400, f"{'Ollama or vLLM' if age < 30 else 'vLLM'} "
                f"as a server for developers {n}", "Sharing one local LLM box: what holds up?")
        for n, age in enumerate([0, 3, 60, 90, 120, 150, 200, 300])
    ]  # fmt: skip
    question = "Which inference server holds up when developers share one local LLM box?"

    def run_with(budget: int) -> Any:
        harness = Harness(now=DATA_END + timedelta(days=1))
        with harness.server:
            harness.server.add_posts("LocalLLaMA", posts)
            try:
                deps = RedditDeps(
                    source=harness.source(), engine=LocalEngine(embedder=HashingEmbedder()),
                    config=RedditConfig(dated_requests=budget),
                    candidates=(SubredditProfile(name="localllama"),), candidates_closed=False,
                    clock=harness.clock, search=SearchOptions(page_size=25),
                )  # fmt: skip
                return asyncio.run(run_reddit(question, deps, subreddits=["LocalLLaMA"]))
            finally:
                harness.close()

    roomy = run_with(200)
    assert roomy.widened_from is not None and roomy.widened_from < 5
    assert not any("searching all time too" in error for error in roomy.errors)
    tight = run_with(3)
    assert tight.widened_from is None
    assert any("searching all time too would pass" in error for error in tight.errors)
