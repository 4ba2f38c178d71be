"""The planner: key phrases and product variants, subreddit choice, engine output validated."""

from __future__ import annotations

import asyncio

import pytest

from crowdsift.engines.base import LocalKit
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.errors import PlanError
from crowdsift.planner import PlanDraft, PlanTask, SubredditProfile, key_phrases, plan

PROFILES = (
    SubredditProfile(name="tools", description="impact driver; drill torque; battery platform"),
    SubredditProfile(name="gadgets", description="voice recorder; plaud note; transcription"),
    SubredditProfile(name="dataengineering", description="airflow dagster orchestration dags"),
)


@pytest.mark.parametrize(
    ("question", "expected_first"),
    [
        ("Is the Plaud Note worth it compared to a phone app?", ["plaud note", "plaud"]),
        ("plaud.ai vs otter for meetings", ["plaud.ai", "plaud ai", "plaud"]),
        ("Best impact driver for deck screws", ["impact driver", "deck screws"]),
        ("DeWalt or Milwaukee battery platform?", ["dewalt", "milwaukee", "battery platform"]),
    ],
)
def test_key_phrases(question: str, expected_first: list[str]) -> None:
    terms = key_phrases(question)
    assert terms[: len(expected_first)] == expected_first
    assert len(terms) <= 5
    assert not any(term.isdigit() for term in key_phrases("Airflow vs Dagster in 2026"))


def test_local_plan_picks_the_closest_subreddits() -> None:
    kit = LocalKit(embedder=HashingEmbedder())
    task = PlanTask("which voice recorder transcription is best", PROFILES, max_subreddits=1)
    draft = task.run_local(kit)
    assert draft.subreddits == ["gadgets"]
    assert "voice recorder" in draft.search_terms


def test_plan_with_an_llm_reply_validates_subreddits_and_caps_terms() -> None:
    engine = ScriptedEngine(
        [
            PlanDraft(
                search_terms=["a", "b", "c", "d", "e", "f", " "],
                subreddits=["r/Gadgets", "bad name!", "/r/tools/"],
            )
        ]
    )
    outcome = asyncio.run(plan("question?", engine=engine, candidates=PROFILES))
    assert outcome.plan.subreddits == ["gadgets", "tools"]
    assert outcome.plan.search_terms == ["a", "b", "c", "d", "e"]
    assert outcome.usage.calls == 1
    prompt = engine.requests[0].messages()[1].content
    assert "r/dataengineering" in prompt and '<evidence id="question">' in prompt


def test_user_subreddits_win_and_empty_replies_fall_back() -> None:
    engine = ScriptedEngine([PlanDraft(search_terms=[], subreddits=[])])
    outcome = asyncio.run(
        plan("Plaud Note battery?", engine=engine, candidates=PROFILES, subreddits=["r/Plaud"])
    )
    assert outcome.plan.subreddits == ["plaud"]
    assert outcome.plan.search_terms[0] == "plaud note"  # local key phrases as fallback
    engine.enqueue(PlanDraft(search_terms=["x"], subreddits=[]))
    fallback = asyncio.run(plan("q", engine=engine, candidates=PROFILES))
    assert fallback.plan.subreddits == ["tools", "gadgets", "dataengineering"]


def test_plan_errors_say_what_to_do() -> None:
    with pytest.raises(PlanError, match="question is empty"):
        asyncio.run(plan("  ", engine=ScriptedEngine()))
    engine = ScriptedEngine([PlanDraft(search_terms=["x"], subreddits=[])])
    with pytest.raises(PlanError, match="--subreddit"):
        asyncio.run(plan("q", engine=engine))


def test_local_engine_runs_the_plan_task() -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    outcome = asyncio.run(plan("is a voice recorder worth it", engine=engine, candidates=PROFILES))
    assert outcome.engine == "local"
    assert outcome.plan.subreddits[0] == "gadgets"
