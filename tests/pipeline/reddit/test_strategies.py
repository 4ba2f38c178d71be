"""Scout strategies: targeted OR term, AI intent queries, sniper markers, timeless top/all."""

from __future__ import annotations

from typing import Any

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.strategies import (
    ai_intent,
    build_plan,
    or_term,
    plan_queries,
    quote_phrase,
    search_words,
    sniper,
    targeted,
    timeless,
)

CONFIG = RedditConfig(max_ai_queries=2)


def _analysis(**overrides: Any) -> QueryAnalysis:
    fields: dict[str, Any] = {
        "question": "How do I set up Home Assistant on a Raspberry Pi?",
        "language": "en",
        "english_question": "How do I set up Home Assistant on a Raspberry Pi?",
        "intent": "how_to",
        "ai_mode": "none",
        "temporal": "fast_moving",
        "time_filter": "month",
        "keywords": ["home assistant", "raspberry pi", "zigbee", "hass", "docker"],
        "ai_queries": ["how to install home assistant", "home assistant pi setup", "third"],
        "subreddits": ["homeassistant", "raspberry_pi"],
    }
    return QueryAnalysis(**{**fields, **overrides})


def test_quote_phrase() -> None:
    assert quote_phrase("home assistant") == '"home assistant"'
    assert quote_phrase("proxmox") == "proxmox"
    assert quote_phrase('say "hi"  there') == '"say hi there"'


def test_or_term_quotes_phrases_and_takes_four_keywords() -> None:
    assert or_term(["home assistant", "raspberry pi", "zigbee", "hass", "docker"]) == (
        '"home assistant" OR "raspberry pi" OR zigbee OR hass'
    )
    assert or_term(["proxmox"]) == "proxmox"


def test_targeted_is_one_query_of_the_questions_own_words() -> None:
    [query] = targeted(_analysis(), CONFIG)
    assert query.strategy == "targeted"
    assert query.term == "home OR assistant OR raspberry OR set"
    assert query.subreddits == ["homeassistant", "raspberry_pi"]
    assert (query.sort, query.time_filter) == ("relevance", "month")
    # a question with no usable word searches its keywords instead
    [fallback] = targeted(_analysis(english_question="How do I?"), CONFIG)
    assert fallback.term == '"home assistant" OR "raspberry pi" OR zigbee OR hass'


def test_search_words_are_single_words_names_first() -> None:
    """Not pairs of neighbours ("prompt sometimes"): BM25 ranks a thread with more of the words
    first anyway. Names lead; a model number is a name, a quantity or a year is not."""
    words = search_words("Why does the same prompt sometimes give much worse output on vLLM?")
    assert words[0] == "vllm"
    assert "prompt" in words and "output" in words
    assert not [w for w in words if " " in w]
    assert not {"why", "does", "the", "same"} & set(words)
    assert search_words("Is a 4090 with 16 GB enough in 2025?") == ["4090", "enough", "2025"]


def test_a_hyphenated_compound_is_searched_as_written_and_joined() -> None:
    """People write "wi-fi" and "wifi", "e-mail" and "email"; a model number only one way."""
    assert search_words("Wi-Fi drops after an e-mail?")[:4] == ["wi-fi", "wifi", "e-mail", "email"]
    assert search_words("Is the WH-1000XM5 comfy?")[0] == "wh-1000xm5"
    assert "wh1000xm5" not in search_words("Is the WH-1000XM5 comfy?")


def test_ai_intent_one_query_each_capped() -> None:
    queries = ai_intent(_analysis(), CONFIG)
    assert [q.term for q in queries] == [
        "how to install home assistant",
        "home assistant pi setup",
    ]
    assert {(q.strategy, q.sort, q.time_filter) for q in queries} == {
        ("ai_intent", "relevance", "month")
    }
    assert ai_intent(_analysis(ai_queries=[]), CONFIG) == []
    assert ai_intent(_analysis(), RedditConfig(max_ai_queries=0)) == []


def test_sniper_adds_each_marker_to_the_core_phrase() -> None:
    queries = sniper(_analysis(time_filter="all", temporal="evergreen"), CONFIG)
    assert [q.term for q in queries] == [
        '"home assistant" guide',
        '"home assistant" tutorial',
        '"home assistant" benchmark',
    ]
    assert {(q.strategy, q.sort, q.time_filter) for q in queries} == {
        ("sniper", "relevance", "all")
    }


def test_timeless_is_top_of_all_time_even_for_fast_moving_topics() -> None:
    [query] = timeless(_analysis(), CONFIG)
    assert (query.strategy, query.term) == ("timeless", '"home assistant"')
    assert (query.sort, query.time_filter) == ("top", "all")


def test_plan_queries_in_strategy_order() -> None:
    queries = plan_queries(_analysis(), CONFIG).queries
    assert [q.strategy for q in queries] == [
        "targeted",
        "ai_intent",
        "ai_intent",
        "sniper",
        "sniper",
        "sniper",
        "timeless",
    ]
    assert all(q.subreddits == ["homeassistant", "raspberry_pi"] for q in queries)


def test_the_plan_carries_every_query_with_the_page_size_and_the_lexical_terms() -> None:
    analysis = _analysis()
    plan = build_plan(analysis, CONFIG, page_size=30)
    assert plan.queries == [
        q.model_copy(update={"limit": 30}) for q in plan_queries(analysis, CONFIG).queries
    ]
    # the lexical screen scores the keywords, the queries and the targeted search's words
    words = search_words(analysis.english_question)
    assert plan.search_terms == [*analysis.keywords, *analysis.ai_queries, *words]
    assert plan.subreddits == analysis.subreddits
    assert "strategies=targeted,ai_intent,sniper,timeless" in (plan.notes or "")


def test_exact_duplicates_run_once_and_keep_who_asked() -> None:
    analysis = _analysis(
        english_question="Proxmox?",
        keywords=["proxmox"],
        ai_queries=["Proxmox  Guide", "proxmox"],
        time_filter="all",
        temporal="evergreen",
    )
    plan = plan_queries(analysis, CONFIG)
    keys = [(q.strategy, q.term, q.sort) for q in plan.queries]
    assert keys == [
        ("targeted", "proxmox", "relevance"),
        ("ai_intent", "Proxmox  Guide", "relevance"),
        ("sniper", "proxmox tutorial", "relevance"),
        ("sniper", "proxmox benchmark", "relevance"),
        ("timeless", "proxmox", "top"),  # same term, other sort: not a duplicate
    ]
    # the AI query "proxmox" folded into targeted; the sniper's "proxmox guide" into ai_intent
    assert plan.also_by == {0: ["ai_intent"], 1: ["sniper"]}


def test_a_source_that_ranks_by_meaning_gets_the_question_searched_that_way() -> None:
    plain = build_plan(_analysis(), CONFIG, page_size=25)
    assert "meaning" not in [q.strategy for q in plain.queries]
    plan = build_plan(_analysis(), CONFIG, page_size=25, by_meaning=True)
    meaning = [q for q in plan.queries if q.strategy == "meaning"]
    assert [q.term for q in meaning] == ["How do I set up Home Assistant on a Raspberry Pi?"]
    assert meaning[0].sort == "relevance" and meaning[0].limit == 25
