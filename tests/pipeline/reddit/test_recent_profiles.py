"""A live community's recent threads: how far its posts reach, which words it uses all the time,
and the plan a source that lists by date gets from them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.recent import newest_of, recent_profile, word_shares
from crowdsift.pipeline.reddit.strategies import (
    build_plan,
    dated_queries,
    search_names,
    search_words,
)

NOW = datetime(2026, 11, 27, tzinfo=UTC)
QUESTION = "Is there a tiny model that just fixes English spelling?"


def _post(title: str, created: float, body: str = "") -> dict[str, Any]:
    return {"title": title, "selftext": body, "created_utc": created}


def _analysis(question: str = QUESTION) -> QueryAnalysis:
    return QueryAnalysis(
        question=question, language="en", english_question=question, intent="general",
        ai_mode="none", temporal="fast_moving", time_filter="month", keywords=["tiny model"],
        ai_queries=["tiny model experience"], subreddits=["localllama"],
    )  # fmt: skip


def test_a_profile_counts_each_word_once_a_post_and_knows_the_newest_post() -> None:
    posts = [
        _post("Best model for code", 1_750_000_000, "model model model"),
        _post("Model on a tiny box", 1_760_000_000.5),
        _post("Undated", "yesterday"),  # type: ignore[arg-type]
    ]
    profile = recent_profile("localllama", posts)
    assert profile.posts == 3
    assert profile.doc_freq["model"] == 2  # posts using it, not occurrences
    assert profile.doc_freq["tiny"] == 1
    assert profile.newest == datetime.fromtimestamp(1_760_000_000.5, UTC)
    assert recent_profile("empty", []).newest is None
    assert newest_of([profile, recent_profile("empty", [])]) == profile.newest
    assert newest_of([]) is None


def test_a_words_share_comes_from_the_communities_own_posts() -> None:
    """A word the community uses in every other thread narrows nothing."""
    posts = [_post(f"model question {n}", 1.0, "english") for n in range(19)]
    posts.append(_post("spelling checker", 1.0))
    profile = recent_profile("localllama", posts)
    shares = word_shares(["model", "spelling", "tiny"], [profile])
    assert shares == {"model": 0.95, "spelling": 0.05, "tiny": 0.0}
    # a share of a handful of posts says nothing about how common a word is
    assert word_shares(["model"], [recent_profile("tiny", posts[:5])]) == {}
    assert word_shares(["model"], []) == {}


def test_a_source_listing_by_date_gets_a_broad_and_a_narrow_search() -> None:
    """Newest-first sources can't rank: the uncommon words ORed, and the two rarest ANDed,
    which match few threads and so reach back in time."""
    shares = {"model": 0.6, "english": 0.3, "tiny": 0.02, "spelling": 0.0, "fixes": 0.05}
    queries = dated_queries(_analysis(), RedditConfig(), shares=shares)
    # "English" is a name (capitalised mid-sentence): kept, however common
    assert [q.term for q in queries] == ["english OR tiny OR fixes OR spelling", "spelling tiny"]
    assert {q.strategy for q in queries} == {"targeted"}
    # without shares, every word and the question's own order (names first)
    plain = dated_queries(_analysis(), RedditConfig())
    assert [q.term for q in plain] == [
        "english OR tiny OR model OR fixes OR spelling",
        "english tiny",
    ]
    # one usable word: nothing narrower to ask
    assert [q.term for q in dated_queries(_analysis("Spelling?"), RedditConfig())] == ["spelling"]


def test_a_name_is_never_left_out_however_common_and_two_words_always_stay() -> None:
    """r/plaud says "plaud" in every thread, and it is still what the question is about."""
    question = "Is the Plaud Note worth it compared to a phone app?"
    assert search_names(question) == ["plaud", "note"]
    shares = {"plaud": 0.9, "note": 0.8, "worth": 0.5, "compared": 0.3, "phone": 0.4, "app": 0.1}
    [broad, _] = dated_queries(_analysis(question), RedditConfig(), shares=shares)
    assert broad.term == "plaud OR note OR app"
    everyday = {word: 0.9 for word in search_words(QUESTION)}
    [all_words, _] = dated_queries(_analysis(), RedditConfig(), shares=everyday)
    assert all_words.term == " OR ".join(search_words(QUESTION))  # not down to nothing


def test_the_plan_for_a_source_listing_by_date_has_no_search_it_cannot_honour() -> None:
    plan = build_plan(_analysis(), RedditConfig(), page_size=100, by_date=True, now=NOW)
    assert {q.sort for q in plan.queries} == {"relevance"}  # no "top": it lists by date only
    assert len(plan.queries) == 2
    ranked = build_plan(_analysis(), RedditConfig(), page_size=100, now=NOW)
    assert {q.strategy for q in ranked.queries} == {"targeted", "ai_intent", "sniper", "timeless"}
