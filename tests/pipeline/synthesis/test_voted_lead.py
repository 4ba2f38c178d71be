"""The local engine's lead: the best-voted replies that respond, from the best-ranked threads."""

from __future__ import annotations

from uuid import uuid4

from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import local_answer
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.pipeline.synthesis.sections import AnswerScope
from crowdsift.pipeline.synthesis.voted import (
    QUOTE_CHARS,
    Quote,
    Thread,
    choose,
    opening,
    voted_lead,
)


def reply(cid: str, text: str, score: int, *, depth: int = 0) -> CommentPayload:
    return CommentPayload(comment_id=cid, excerpt=text, score=score, depth=depth)


def thread(pid: str, title: str, body: str, replies: list[CommentPayload]) -> PostPayload:
    return PostPayload(
        post_id=pid,
        subreddit="homelab",
        title=title,
        url=f"https://www.reddit.com/r/homelab/comments/{pid}/t/",
        body_excerpt=body,
        comments=replies,
        post_karma=10,
        num_comments=len(replies),
        relevance_score=1.0,
    )


def request(question: str, posts: list[PostPayload]) -> SummarizeRequest:
    return SummarizeRequest(
        query=question, plan_id=uuid4(), post_payloads=posts, prompt_version="t",
        max_posts=12, max_comments_per_post=40, max_post_chars=1500, max_comment_chars=600,
    )  # fmt: skip


NAS = thread(
    "nas1",
    "Which drives for a quiet home NAS?",
    "I need four drives for a NAS in my bedroom. Which drives are quiet?",
    [
        reply("low", "WD Red Plus drives are quiet enough for a bedroom NAS, I run four.", 3),
        reply("top", "Get WD Red Plus or Seagate IronWolf drives; both are quiet NAS drives.", 120),
        reply("joke", "Put the NAS in the garage lol, then any drives are quiet.", 80),
        reply("deep", "Seagate Exos drives are loud, avoid them in a bedroom NAS.", 400, depth=1),
        reply("asks", "How big is the NAS? Which case do you have?", 300),
    ],
)


def test_the_lead_quotes_the_best_voted_reply_that_responds_first() -> None:
    quotes = voted_lead(request("Which quiet drives for a home NAS?", [NAS]), HashingEmbedder())
    ids = [q.comment_id for q in quotes]
    assert ids[0] == "top"  # 120 votes, about the question
    assert "deep" not in ids  # a reply to a reply answers someone else
    assert "asks" not in ids  # only asks back
    assert quotes[0].cited().endswith("(120 points) [comment:top]")


def test_the_runner_up_joins_when_voted_nearly_as_high() -> None:
    joke = Thread(
        NAS, 0.9, [(NAS.comments[1], 0.6), (NAS.comments[2], 0.4), (NAS.comments[0], 0.7)]
    )
    assert [q.comment_id for q in choose([joke])] == ["top", "joke"]  # 80 >= half of 120
    low = Thread(NAS, 0.9, [(NAS.comments[1], 0.6), (NAS.comments[0], 0.7)])
    assert [q.comment_id for q in choose([low])] == ["top"]  # 3 votes: not the community's


def test_a_reply_about_neither_question_nor_thread_is_not_quoted() -> None:
    only = Thread(NAS, 0.9, [(NAS.comments[2], 0.1), (NAS.comments[0], 0.5)])
    assert [q.comment_id for q in choose([only])] == ["low"]


def test_a_later_thread_about_something_else_is_skipped() -> None:
    other = thread(
        "gpu1", "GPU prices", "", [reply("g", "GPU prices are falling this month.", 900)]
    )
    peer = thread("nas2", "Quiet NAS drives", "", [reply("n", "IronWolf drives are quiet.", 5)])
    first = Thread(NAS, 0.8, [(NAS.comments[1], 0.6)])
    threads = [first, Thread(other, 0.2, [(other.comments[0], 0.5)])]
    assert [q.post_id for q in choose(threads)] == ["nas1"]
    threads.append(Thread(peer, 0.7, [(peer.comments[0], 0.5)]))
    assert [q.post_id for q in choose(threads)] == ["nas1", "nas2"]


def test_an_unanswered_thread_that_asks_the_question_sets_the_bar() -> None:
    # The best-ranked thread asks the question but nobody replied; a popular thread about
    # something else must not lead just because it is the first with replies.
    story = thread(
        "mobo", "I bought broken motherboards on eBay", "",
        [reply("s", "I bought a cracked board for 40 and it has been golden since.", 308)],
    )  # fmt: skip
    about = Thread(story, 0.3, [(story.comments[0], 0.5)])
    assert choose([about], bar=0.64) == []  # 0.3 is far below the unanswered thread's 0.64
    assert [q.comment_id for q in choose([about])] == ["s"]  # without it, the story would lead
    unanswered = thread("ask", "PC restarts when gaming", "It restarts mid-game, any ideas?", [])
    question = "My PC restarts while gaming, what should I check?"
    quotes = voted_lead(request(question, [unanswered, story]), HashingEmbedder())
    assert all(q.post_id != "mobo" for q in quotes)


def test_the_same_words_twice_are_quoted_once() -> None:
    same = "IronWolf drives are quiet."
    twice = thread("d", "NAS drives", "", [reply("a", same, 9), reply("b", same, 8)])
    found = choose([Thread(twice, 0.9, [(c, 0.8) for c in twice.comments])])
    assert [q.comment_id for q in found] == ["a"]


def test_the_askers_post_is_never_quoted() -> None:
    quotes = voted_lead(request("Which quiet drives for a home NAS?", [NAS]), HashingEmbedder())
    assert all(q.comment_id for q in quotes)
    assert not any("bedroom. Which drives are quiet" in q.text for q in quotes)


def test_a_short_reply_is_whole_and_a_long_one_its_opening_sentences() -> None:
    assert opening("Short and whole.") == "Short and whole."
    long = "First point is this. " * 30
    cut = opening(long)
    assert cut.endswith("…") and len(cut) <= QUOTE_CHARS + 2
    assert cut.startswith("First point is this. First point")
    one = "word " * 200
    assert len(opening(one)) <= QUOTE_CHARS


def test_the_local_answer_leads_with_the_quotes_and_cites_their_thread_first() -> None:
    scope = AnswerScope(intent="general")
    req = request("Which quiet drives for a home NAS?", [NAS])
    draft = local_answer(req, SynthesisConfig(), HashingEmbedder(), scope=scope)
    assert draft.summary.startswith("“Get WD Red Plus")
    assert draft.sources[0].post_id == "nas1"
    assert not any("comment:top" in item for item in [*draft.highlights, *draft.cautions])


def test_shortening_keeps_a_quote_whole_with_its_citation() -> None:
    text = (
        f"{Quote('a', 'p', 'One. Two. Three.', 5).cited()} "
        "A claim. [post:x] Another claim [comment:y]. Uncited one. Uncited two."
    )
    opening, count = CitedText.decode(text).opening(1)
    first = opening.marked()
    assert first == "“One. Two. Three.” (5 points) [comment:a]"
    assert count == 5
    two = CitedText.decode(text).opening(3)[0].marked()
    assert two.endswith("Another claim [comment:y].")


def test_only_the_first_threads_runner_up_is_quoted() -> None:
    def with_two(pid: str, closeness: float) -> Thread:
        replies = [
            reply(f"{pid}a", f"IronWolf drives ({pid}).", 10),
            reply(f"{pid}b", "WD Red.", 9),
        ]
        post = thread(pid, "Quiet NAS drives", "", replies)
        return Thread(post, closeness, [(c, 0.6) for c in post.comments])

    found = choose([with_two("one", 0.9), with_two("two", 0.9)])
    assert [q.comment_id for q in found] == ["onea", "oneb", "twoa"]


def test_a_quote_starts_at_its_words() -> None:
    assert opening(". It seems to work for me on mlx") == "It seems to work for me on mlx"


def test_the_askers_situation_is_context_never_a_claim() -> None:
    asking = thread(
        "ask1",
        "Which drives for a quiet home NAS?",
        "My old NAS was loud every night and woke everyone up. It sits in the bedroom.",
        [reply("r1", "WD Red Plus drives are quiet; I run four in a bedroom NAS.", 30)],
    )
    req = request("Which quiet drives for a home NAS?", [asking])
    draft = local_answer(req, SynthesisConfig(), HashingEmbedder(), scope=AnswerScope())
    said = " ".join([draft.summary, *draft.highlights, *draft.cautions])
    assert "woke everyone up" not in said and "sits in the bedroom" not in said
    assert "WD Red Plus" in draft.summary


CAMERAS = thread(
    "cam1",
    "Doorbell cameras that record to a local disk",
    "Looking for a doorbell camera without a subscription.",
    [
        reply(
            "cam_a", "The Reolink doorbell records to an SD card and needs no subscription.", 900
        ),
        reply(
            "cam_b", "Never trust the cloud; make sure the camera keeps a local copy of clips.", 500
        ),
        reply("cam_c", "Avoid doorbells that stop recording when the subscription lapses.", 400),
    ],
)


def test_every_part_of_the_answer_comes_from_the_threads_about_the_question() -> None:
    """A popular thread on something else, ranked beside the one that answers, gives the
    answer nothing: not its lead, highlights or cautions, however voted up its replies are."""
    answer = local_answer(
        request("Which quiet drives for a home NAS?", [NAS, CAMERAS]),
        SynthesisConfig(), HashingEmbedder(), scope=AnswerScope(),
    )  # fmt: skip
    said = " ".join([answer.summary, *answer.highlights, *answer.cautions])
    assert "comment:top" in said  # the NAS thread answers
    assert "cam_" not in said and "post:cam1" not in said


def test_a_question_asking_what_to_do_is_led_by_a_reply_that_says_what_to_do() -> None:
    question = "My NAS restarts by itself every night, what should I check?"
    stories = thread(
        "nas3", "My NAS restarts by itself every night", "It reboots at 2am. What should I check?",
        [
            reply("story", "My NAS restarted every night for a year and I lived with it.", 500),
            reply("joke", "Your NAS restarts every night because it is haunted, obviously.", 300),
        ],
    )  # fmt: skip
    fixes = thread(
        "nas4", "NAS reboots every night at the same time", "Same nightly NAS reboot here.",
        [reply("fix", "Check what restarts your NAS every night: a scheduled task.", 20)],
    )  # fmt: skip
    asked = request(question, [stories, fixes])
    quotes = voted_lead(asked, HashingEmbedder(), intent="troubleshooting")
    assert [q.comment_id for q in quotes] == ["fix"]  # stories and jokes, however voted, don't
    general = voted_lead(asked, HashingEmbedder(), intent="general")
    assert general[0].comment_id == "story"  # the votes lead where nothing is asked to be done
