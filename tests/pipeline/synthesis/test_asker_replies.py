"""What the asker writes in their own thread ("I have a 3060", "I'll try that") is the
question's context, as their post is: never the lead, a claim, a dissent or a recommendation,
unless it reports what solved the problem. Authors are compared by pseudonym only."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.pipeline.reddit.models import DrilledThread, RankedPost, ThreadComment
from crowdsift.pipeline.synthesis.candidates import items_of
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import local_answer
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.pipeline.synthesis.prompt import render_post
from crowdsift.pipeline.synthesis.recommended import recommended_rows
from crowdsift.pipeline.synthesis.sections import AnswerScope
from crowdsift.pipeline.synthesis.selector import select_threads
from crowdsift.testing.factories import make_post

T0 = datetime(2025, 3, 1, tzinfo=UTC)
ASKER, HELPER = "a5ker0000000000", "he1per000000000"
QUESTION = "How do I stop my NAS drives from clicking every few seconds?"
ASKER_REPLY = "I have four Seagate IronWolf drives in a Synology DS920 and the noise drives me mad."
ANSWER = "Disable the drive head parking with the APM setting and the clicking stops."
SOLVED = "EDIT: solved, turning off hibernation in the Synology settings stopped the clicking."


def comment(cid: str, body: str, score: int, author: str | None) -> ThreadComment:
    return ThreadComment(
        comment_id=cid, post_id="nas1", parent_id="t3_nas1", depth=0, body=body, score=score,
        created_at=T0, author_hash=author,
        permalink=f"https://www.reddit.com/r/homelab/comments/nas1/t/{cid}/",
    )  # fmt: skip


def drilled(comments: list[ThreadComment], *, post_author: str | None = ASKER) -> DrilledThread:
    post = make_post(
        "nas1", "NAS drives clicking every few seconds", "They click all day. Any idea?",
        subreddit="homelab", karma=40,
    ).model_copy(update={"created_at": T0, "author_hash": post_author})  # fmt: skip
    rank = RankedPost(
        post_id="nas1", url=post.url, title=post.title, subreddit="homelab", post_karma=40,
        num_comments=len(comments), created_at=T0, strategies=["targeted"], relevance=0.9,
        engagement=0.4, final_score=0.8,
    )  # fmt: skip
    return DrilledThread(post=post, rank=rank, comments=comments)


def evidence(thread: DrilledThread) -> SummarizeRequest:
    return select_threads(
        QUESTION, [thread], SelectorConfig.for_drilled_threads(), prompt_version="t"
    )


def by_asker(request: SummarizeRequest) -> dict[str, bool]:
    return {c.comment_id: c.by_asker for p in request.post_payloads for c in p.comments}


def test_a_comment_is_the_askers_when_its_pseudonym_is_the_posts() -> None:
    thread = drilled([
        comment("mine", ASKER_REPLY, 90, ASKER),
        comment("theirs", ANSWER, 12, HELPER),
        comment("anon", "Same here, following.", 3, None),
    ])  # fmt: skip
    assert by_asker(evidence(thread)) == {"mine": True, "theirs": False, "anon": False}
    # a post whose author is unknown has no asker to match, even for anonymous comments
    unknown = drilled([comment("anon", ASKER_REPLY, 3, None)], post_author=None)
    assert by_asker(evidence(unknown)) == {"anon": False}


def test_the_askers_replies_are_context_and_their_solution_is_an_answer() -> None:
    thread = drilled([
        comment("mine", ASKER_REPLY, 90, ASKER),
        comment("fixed", SOLVED, 60, ASKER),
        comment("theirs", ANSWER, 12, HELPER),
    ])  # fmt: skip
    request = evidence(thread)
    draft = local_answer(
        request, SynthesisConfig(), HashingEmbedder(), scope=AnswerScope(intent="troubleshooting")
    )
    shown = " ".join([draft.summary, *draft.highlights, *draft.cautions])
    assert "Disable the drive head parking" in shown  # the community's answer leads
    assert "drives me mad" not in shown and "[comment:mine]" not in shown  # the asker's setup
    assert "turning off hibernation" in shown  # what solved it, in the asker's words
    assert "“EDIT" not in draft.summary  # not quoted as a voted reply: a claim it is


def test_the_askers_words_name_no_recommendation_and_the_prompt_says_whose_they_are() -> None:
    def payload(cid: str, text: str, asker: bool) -> CommentPayload:
        return CommentPayload(comment_id=cid, excerpt=text, score=5, by_asker=asker)

    post = PostPayload(
        post_id="nas1", subreddit="homelab", title="NAS drives clicking",
        url="https://www.reddit.com/r/homelab/comments/nas1/t/", body_excerpt="Any idea?",
        comments=[
            payload("a", "My IronWolf drives click, and so does the other IronWolf.", True),
            payload("b", "I had IronWolf drives click too; Exos drives were quieter.", True),
            payload("c", "Exos drives were quieter for me than anything else.", False),
            payload("d", "Go with Exos, mine never click.", False),
        ],
        post_karma=40, num_comments=4, relevance_score=1.0,
    )  # fmt: skip
    request = SummarizeRequest(
        query=QUESTION, plan_id=uuid4(), post_payloads=[post], prompt_version="t",
        max_posts=12, max_comments_per_post=40, max_post_chars=1500, max_comment_chars=600,
    )  # fmt: skip
    rows = {row.option for row in recommended_rows(items_of(request), QUESTION)}
    assert "Exos" in rows and "IronWolf" not in rows  # two replies, but both the asker's
    lines = render_post(post)
    assert "[comment:a] depth 0 · score 5 · date unknown · by the asker" in lines
    assert "[comment:c] depth 0 · score 5 · date unknown\n" in lines
