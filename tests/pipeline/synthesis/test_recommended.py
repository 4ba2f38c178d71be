"""A "which should I buy" answer names what the replies recommend, counted per reply."""

from __future__ import annotations

from uuid import UUID

import pytest

from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.pipeline.reddit.intent import asks_for_pick, compared_options
from crowdsift.pipeline.synthesis.candidates import Item
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import local_answer
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.pipeline.synthesis.prompt import PromptContext, build_messages
from crowdsift.pipeline.synthesis.recommended import recommended_rows
from crowdsift.pipeline.synthesis.sections import AnswerScope
from crowdsift.pipeline.synthesis.stance import stance

QUESTION = "Which mesh router should I buy for a big house, Google Wifi or something else?"


def reply(n: int, text: str, score: int = 5) -> Item:
    return Item(f"comment:c{n}", text, score, 0, 0, True)


REPLIES = [
    reply(1, "I second Unifi. It's affordable and rock solid.", 30),
    reply(2, "Unifi is great, I run it at home. Unifi again for the win.", 12),
    reply(3, "Got an eero kit last year and it covers everything.", 9),
    reply(4, "My Eero has been flawless, highly recommend it.", 7),
    reply(5, "The Netgear Orbi was terrible and dropped constantly.", 4),
    reply(6, "My camera covers the yard. The camera app is fine.", 3),
    reply(7, "Honestly Unifi is overkill but it works.", 2),
    reply(8, "I tried Google Wifi and a Camera once, it was ok.", 2),
    reply(9, "Ubiquiti stuff is solid, I have one in the garage.", 2),
]


def rows_by_option() -> dict[str, str]:
    return {row.option: row.verdict for row in recommended_rows(REPLIES, QUESTION)}


def test_each_reply_counts_once_and_a_name_one_reply_gives_is_not_a_row() -> None:
    rows = rows_by_option()
    assert rows["Unifi"].startswith("3 replies")  # reply 2 names it twice: one vote
    assert "Ubiquiti" not in rows and "Netgear Orbi" not in rows  # one reply each


def test_a_name_counts_in_any_case_once_it_is_spelled_as_one() -> None:
    assert rows_by_option()["Eero"].startswith("2 replies")  # "eero" and "Eero"


def test_the_questions_words_and_ordinary_words_are_not_recommendations() -> None:
    rows = rows_by_option()
    assert not any("google" in option.lower() for option in rows)  # the question's own
    assert not any("camera" in option.lower() for option in rows)  # written lower case elsewhere


def test_rows_lead_with_the_most_recommended_and_count_the_lean() -> None:
    rows = recommended_rows(REPLIES, QUESTION)
    assert [row.option for row in rows] == ["Unifi", "Eero"]
    assert rows[0].verdict == "3 replies: mostly positive (2+ / 0−)"
    assert rows[0].cites[0] == "comment:c1"  # the best-voted reply for it first
    assert rows[0].pros and all("Unifi" in pro for pro in rows[0].pros)


def test_flags_paths_and_links_are_not_names_and_variants_join_their_family() -> None:
    replies = [
        reply(1, "Run it with --jinja and Devstral-Small-2507 from /models/x.gguf, works well."),
        reply(2, "Devstral is the one for Python, try https://example.com/Devstral too."),
        reply(3, "I also pass --jinja to llama-server and it is fine."),
    ]
    rows = recommended_rows(replies, "Best model for writing Python on a 16 GB card?")
    assert [row.option for row in rows] == ["Devstral"]
    assert rows[0].verdict.startswith("2 replies")


@pytest.mark.parametrize(
    ("question", "pick"),
    [
        ("Which cordless impact driver should I buy?", True),
        ("Best model for writing Python on a 16 GB card?", True),
        ("Is there a tiny model that just fixes spelling?", True),
        ("Google Wifi, Orbi or something else for mesh?", True),
        ("How do I stop the model from thinking so long?", False),
        ("My laptop screen turned green. Is the panel dead?", False),
    ],
)
def test_a_question_asking_what_to_get_is_a_pick(question: str, pick: bool) -> None:
    assert asks_for_pick(question) is pick


def test_something_else_is_not_an_option() -> None:
    assert compared_options("Google Wifi, Orbi or something else for mesh?") == [
        "google wifi",
        "orbi",
    ]


def test_stance_reads_typographic_negations_and_what_a_sentence_sets_against() -> None:
    assert stance("Can’t go wrong with UniFi.").polarity == "positive"
    assert stance("Can't go wrong with UniFi.").polarity == "positive"
    sentence = "My eero covers the whole house at full speed, unlike the shitty ISP routers."
    assert stance(sentence).polarity != "negative"  # the insult is of the other routers


def request_of_replies() -> SummarizeRequest:
    comments = [
        CommentPayload(comment_id=f"c{n}", excerpt=item.text, score=item.score)
        for n, item in enumerate(REPLIES, 1)
    ]
    post = PostPayload(
        post_id="p1", subreddit="homenetworking", title="Best mesh router for a big house?",
        url="https://www.reddit.com/r/homenetworking/comments/p1/best_mesh/",
        body_excerpt="Two floors and a garage, what do you all use?", comments=comments,
        post_karma=40, num_comments=len(comments), relevance_score=0.9,
    )  # fmt: skip
    return SummarizeRequest(
        query=QUESTION, plan_id=UUID(int=1), post_payloads=[post], prompt_version="v1",
        max_posts=5, max_comments_per_post=20, max_post_chars=2000, max_comment_chars=600,
    )  # fmt: skip


def test_the_local_answer_tables_the_recommendations_only_for_a_pick() -> None:
    request = request_of_replies()
    embedder = HashingEmbedder()
    picked = local_answer(request, SynthesisConfig(), embedder, scope=AnswerScope(pick=True))
    plain = local_answer(request, SynthesisConfig(), embedder, scope=AnswerScope(pick=False))
    assert [row.option for row in picked.comparison_table][:2] == ["Unifi", "Eero"]
    assert plain.comparison_table == []


def test_the_prompt_asks_an_llm_for_the_counted_recommendations_only_for_a_pick() -> None:
    request = request_of_replies()
    pick, _ = build_messages(request, SynthesisConfig(), PromptContext(pick=True))
    plain, _ = build_messages(request, SynthesisConfig(), PromptContext())
    assert "two or more replies name" in pick.content
    assert "two or more replies name" not in plain.content


def test_a_plural_acronym_is_a_kind_of_thing_not_a_name() -> None:
    replies = [
        reply(1, "Honestly LLMs run fine on the Arc card, get the Arc."),
        reply(2, "Most LLMs want VRAM, and the Arc has plenty."),
    ]
    rows = recommended_rows(replies, "Which GPU should I buy for local models?")
    assert [row.option for row in rows] == ["Arc"]


def test_a_setting_or_identifier_is_not_a_recommendation() -> None:
    replies = [
        reply(1, "Run it with Q4_K_M and raise num_ctx, vLLM handles the rest.", 9),
        reply(2, "Q4_K_M is fine; vLLM with continuous batching is what teams use.", 7),
        reply(3, "I set num_ctx to 8192 on Q4_K_M and it works.", 3),
    ]
    rows = {row.option for row in recommended_rows(replies, "Which inference server for a team?")}
    assert "vLLM" in rows
    assert not any("_" in option for option in rows)  # Q4_K_M, num_ctx: settings, not picks


def test_a_model_suffix_is_not_a_name_of_its_own() -> None:
    replies = [
        reply(1, "Get the 5060 Ti, or a used Radeon if you can find one.", 9),
        reply(2, "A 4070 Ti is plenty; Radeon cards are cheaper per GB.", 7),
        reply(3, "The 3090 Ti is overkill. HP and LG make fine monitors too.", 3),
    ]
    rows = {row.option for row in recommended_rows(replies, "Which GPU should I buy?")}
    assert "Radeon" in rows
    assert "Ti" not in rows  # the end of "5060 Ti", not a brand


def test_a_model_number_is_a_name_and_a_year_an_amount_or_a_lone_pro_is_not() -> None:
    replies = [
        reply(1, "Get a used 3090, it is still the best value in 2024.", 9),
        reply(2, "Two 3090s run 70B fine on a 1200 W supply, I did it in 2024.", 7),
        reply(3, "My MacBook Pro runs small models; the Pro chips are fine for 1500 dollars.", 5),
        reply(4, "I got a Mac Mini Pro and it is quiet. Pro models cost 1200 more.", 4),
    ]
    rows = {row.option for row in recommended_rows(replies, "Which GPU should I buy?")}
    assert "3090" in rows  # two replies name the card by its model number ("3090s" too)
    assert not rows & {"2024", "1200", "1500", "Pro"}  # a year, amounts, a word of any product
