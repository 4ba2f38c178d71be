"""Deep drill: limits passed to the source, tree data kept, screening, failures, order."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from crowdsift.core.models import Candidate
from crowdsift.pipeline.fetch.filtering import FilterConfig
from crowdsift.pipeline.reddit.drill import drill
from crowdsift.pipeline.reddit.models import DrilledThread, RankedPost
from crowdsift.pipeline.reddit.runner import SourceRunner
from crowdsift.testing.factories import make_post, raw_comment
from crowdsift.testing.memory_source import MemorySource

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _candidate(post_id: str) -> Candidate:
    return Candidate(
        post=make_post(post_id, f"Impact driver thread {post_id}", "Body.", subreddit="tools"),
        strategies=["targeted"],
    )


def _rank(candidate: Candidate, final: float = 0.5) -> RankedPost:
    post = candidate.post
    return RankedPost(
        post_id=post.id, url=post.url, title=post.title, subreddit=post.subreddit,
        post_karma=post.post_karma, num_comments=post.num_comments, created_at=post.created_at,
        strategies=candidate.strategies, relevance=final, engagement=final, final_score=final,
    )  # fmt: skip


def _chain(post_id: str, length: int) -> list[dict[str, Any]]:
    """One reply chain ``length`` deep, every comment long enough to pass the filters."""
    comments = []
    parent = f"t3_{post_id}"
    for level in range(length):
        cid = f"{post_id}x{level}"
        comments.append(
            raw_comment(
                cid,
                post_id,
                parent_id=parent,
                subreddit="tools",
                score=50 - level,
                body=f"Depth {level}: set the clutch to 4 and use T25 bits.",
                created_utc=1_714_000_100 + level,
            )
        )
        parent = f"t1_{cid}"
    return comments


def _drill(source: MemorySource, candidates: list[Candidate], **limits: int) -> Any:
    runner = SourceRunner(4)
    sink: dict[str, DrilledThread] = {}
    try:
        threads = asyncio.run(
            drill(
                [_rank(c) for c in candidates],
                {c.post.id: c for c in candidates},
                source=source,
                runner=runner,
                filters=FilterConfig(),
                limit=limits.get("limit", 100),
                depth=limits.get("depth", 5),
                clock=lambda: NOW,
                sink=sink,
            )
        )
    finally:
        runner.close()
    return threads, sink


def test_drill_obeys_depth_and_keeps_tree_data_and_permalinks() -> None:
    candidate = _candidate("p1")
    source = MemorySource(comments={"p1": _chain("p1", 8)})

    threads, _ = _drill(source, [candidate], depth=5)

    (thread,) = threads
    assert [c.depth for c in thread.comments] == [0, 1, 2, 3, 4]
    assert thread.comments[1].parent_id == "t1_p1x0"
    assert thread.comments[0].parent_id == "t3_p1"
    assert thread.comments[2].permalink == f"{candidate.post.url}p1x2/"
    assert thread.comments[0].created_at == datetime.fromtimestamp(1_714_000_100, UTC)
    assert [c.comment_id for c in thread.post.comments] == [c.comment_id for c in thread.comments]
    assert ("tree", "p1") in source.calls


def test_drill_obeys_the_comment_limit() -> None:
    source = MemorySource(comments={"p1": _chain("p1", 5)})

    threads, _ = _drill(source, [_candidate("p1")], limit=3)

    assert len(threads[0].comments) == 3


def test_removed_comments_are_screened_out_but_their_replies_stay() -> None:
    chain = _chain("p1", 3)
    chain[1]["body"] = "[removed]"
    source = MemorySource(comments={"p1": chain})

    threads, _ = _drill(source, [_candidate("p1")])

    assert [c.comment_id for c in threads[0].comments] == ["p1x0", "p1x2"]
    assert threads[0].comments[1].depth == 2


def test_a_failed_thread_keeps_its_post_and_says_why_and_others_continue() -> None:
    source = MemorySource(
        comments={"p2": _chain("p2", 2)}, failing_comments={"p1": "HTTP 503 from /comments/p1"}
    )

    threads, sink = _drill(source, [_candidate("p1"), _candidate("p2")])

    assert [t.post.id for t in threads] == ["p1", "p2"]
    assert threads[0].comments == [] and "HTTP 503" in (threads[0].error or "")
    assert threads[1].error is None and len(threads[1].comments) == 2
    assert set(sink) == {"p1", "p2"}
