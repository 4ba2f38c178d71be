"""Topicality: key phrases and product variants, subreddit choice by topic (on the
demo archive's real profiles and the built-in list), default list."""

from __future__ import annotations

import asyncio

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.engines.base import LocalKit
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.reddit.formulate import formulate
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.reddit.topicality import (
    TOPIC_SHARE,
    SubredditProfile,
    closest_subreddits,
    key_phrases,
    topic_scores,
    topical_subreddits,
)
from crowdsift.sources.archive.demo import ensure_demo_archive

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
        # a capitalised stop word opening the question is no part of the name after it
        ("Is Prefect worth it over Airflow?", ["prefect", "airflow"]),
        ("My Plaud NotePin stopped syncing", ["plaud notepin", "plaud"]),
    ],
)
def test_key_phrases(question: str, expected_first: list[str]) -> None:
    terms = key_phrases(question)
    assert terms[: len(expected_first)] == expected_first
    assert len(terms) <= 5
    assert not any(term.isdigit() for term in key_phrases("Airflow vs Dagster in 2026"))


def test_closest_subreddits_are_the_topical_ones() -> None:
    kit = LocalKit(embedder=HashingEmbedder())
    question = "which voice recorder transcription is best"
    assert closest_subreddits(kit, question, PROFILES, 1) == ["gadgets"]
    assert closest_subreddits(kit, question, (), 3) == []
    # r/tools and r/dataengineering have nothing on voice recorders: never chosen
    assert closest_subreddits(kit, question, PROFILES, 5) == ["gadgets"]
    # with no candidate sharing a word (another language), the closest one by embedding
    assert len(closest_subreddits(kit, "Какой диктофон выбрать?", PROFILES, 3)) == 1


# --- subreddits for the question's topic, on the demo archive's real profiles --------------------


@pytest.fixture(scope="module")
def demo_profiles(tmp_path_factory: pytest.TempPathFactory) -> list[SubredditProfile]:
    return subreddit_profiles(ensure_demo_archive(tmp_path_factory.mktemp("demo")))


GADGETS = {"gadgets", "productivity"}
ORCHESTRATION = {"apacheairflow", "dataengineering"}
TOOLS = {"tools", "diy", "homeimprovement"}
TOPICS = [
    ("My Plaud NotePin stopped syncing, how do I fix it?", GADGETS, "gadgets"),
    ("Is the Plaud Note worth it for recording meetings?", GADGETS, "gadgets"),
    ("Which AI voice recorder has the best battery life?", GADGETS, "gadgets"),
    ("How do I get Plaud transcripts into Obsidian?", GADGETS, "productivity"),
    ("Best way to take notes in lectures?", GADGETS, "productivity"),
    ("Airflow vs Dagster for a small data team?", ORCHESTRATION, "dataengineering"),
    ("Which orchestrator should a 3-person data team pick?", ORCHESTRATION, "dataengineering"),
    ("Is Prefect worth it over Airflow for ML pipelines?", ORCHESTRATION, "dataengineering"),
    (
        "How do I stop catchup from launching hundreds of DAG runs?",
        ORCHESTRATION,
        "dataengineering",
    ),
    ("Has the community moved from Airflow to Dagster?", ORCHESTRATION, "dataengineering"),
    ("Airflow или Dagster для небольшой команды?", ORCHESTRATION, "dataengineering"),
    ("DeWalt or Milwaukee for a first cordless kit?", TOOLS, "tools"),
    ("How do I mount a TV on plaster walls?", TOOLS, "diy"),
    ("Cursor or Copilot for Python?", {"chatgptcoding"}, "chatgptcoding"),
]


@pytest.mark.parametrize(("question", "allowed", "expected"), TOPICS)
def test_the_rules_and_the_local_engine_choose_the_questions_communities(
    demo_profiles: list[SubredditProfile], question: str, allowed: set[str], expected: str
) -> None:
    kit = LocalKit(embedder=HashingEmbedder())
    for chosen in (
        topical_subreddits(question, demo_profiles, 3),
        closest_subreddits(kit, question, demo_profiles, 3),
    ):
        # never a community with nothing on it: no r/chatgptcoding unless it is about AI coding
        assert chosen and set(chosen) <= allowed, chosen
        assert expected in chosen


def test_ai_coding_questions_do_get_the_ai_coding_community(
    demo_profiles: list[SubredditProfile],
) -> None:
    chosen = topical_subreddits(
        "Is an AI coding assistant worth it for a data engineer?", demo_profiles, 3
    )
    assert chosen[0] == "chatgptcoding"


def test_a_profile_sharing_nothing_scores_zero_and_nothing_shared_chooses_none(
    demo_profiles: list[SubredditProfile],
) -> None:
    scores = dict(
        zip(
            [p.name for p in demo_profiles],
            topic_scores("Plaud NotePin", demo_profiles),
            strict=True,
        )
    )
    assert scores["gadgets"] > 0 and scores["dataengineering"] == scores["tools"] == 0
    assert topical_subreddits("Zyxwvut qwertz?", demo_profiles, 3) == []
    kit = LocalKit(embedder=HashingEmbedder())  # the closest one still, never none
    assert len(closest_subreddits(kit, "Zyxwvut qwertz?", demo_profiles, 3)) == 1


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Airflow vs Dagster for a small data team?", "dataengineering"),
        ("Which orchestrator should a 3-person data team pick?", "dataengineering"),
        ("How do I stop catchup from launching hundreds of DAG runs?", "dataengineering"),
        ("Is the Plaud Note worth it for recording meetings?", "productivity"),
        ("DeWalt or Milwaukee for a first cordless kit?", "tools"),
        ("Cursor or Copilot for Python?", "chatgptcoding"),
    ],
)
def test_the_closest_communities_are_on_the_topic(
    question: str, expected: str, demo_profiles: list[SubredditProfile]
) -> None:
    kit = LocalKit(embedder=HashingEmbedder())
    chosen = closest_subreddits(kit, question, demo_profiles, 3)
    assert expected in chosen
    if expected != "chatgptcoding":
        assert "chatgptcoding" not in chosen


def test_an_engines_pick_with_nothing_on_the_topic_is_dropped(
    demo_profiles: list[SubredditProfile],
) -> None:
    draft = {"english_question": "", "keywords": ["airflow", "dagster"]}
    engine = ScriptedEngine([{**draft, "subreddits": ["chatgptcoding", "dataengineering"]}])
    question = "Airflow vs Dagster for a small data team?"
    outcome = asyncio.run(
        formulate(
            question, engine=engine, candidates=demo_profiles, config=RedditConfig(), closed=False
        )
    )
    assert outcome.analysis.subreddits == ["dataengineering"]
    assert outcome.replaced == []  # a choice the rules refine, not a lie
    # when every pick is off the topic, the rules choose
    engine = ScriptedEngine([{**draft, "subreddits": ["chatgptcoding", "localllama"]}])
    outcome = asyncio.run(
        formulate(
            question, engine=engine, candidates=demo_profiles, config=RedditConfig(), closed=False
        )
    )
    assert outcome.analysis.subreddits == ["apacheairflow", "dataengineering"]


def test_a_community_naming_the_questions_subject_is_on_topic_however_rarely() -> None:
    profiles = [
        SubredditProfile(name="gadgets", description="Plaud Note vs phone voice recorder"),
        SubredditProfile(name="productivity", description="Plaud Note export to Notion"),
        SubredditProfile(name="chatgptcoding", description="Cursor as a coding app"),
    ]
    question = "Is the Plaud Note worth it compared to a phone recording app?"
    scores = topic_scores(question, profiles)
    # r/productivity scores far below r/gadgets, and r/chatgptcoding about as low …
    assert scores[1] < TOPIC_SHARE * scores[0] and scores[2] < TOPIC_SHARE * scores[0]
    # … but only r/productivity names "Plaud Note", the question's subject
    assert topical_subreddits(question, profiles, 3) == ["gadgets", "productivity"]


def test_contractions_are_stop_words_and_possessives_are_their_names() -> None:
    terms = key_phrases("Tapcon screws spin in my block wall. What's going wrong?")
    assert "what's" not in terms and terms[0] == "tapcon screws"
    assert key_phrases("I'm stuck: Dagster's assets or Airflow DAGs?")[0] == "dagster"
    assert not any("'" in term for term in key_phrases("Don't know: it's the NotePin, isn't it?"))
    assert "o'neill" in " ".join(key_phrases("Is the O'Neill wetsuit warm enough for winter?"))
