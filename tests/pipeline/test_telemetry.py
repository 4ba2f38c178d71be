"""Telemetry is derived, purely, from what a ResearchResult (or a fetch) already reports: each
source's funnel, its rejections by reason, the gate's behaviour, and the LLM usage."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from uuid import uuid4

from crowdsift.core.models import FetchReport, FetchResult, RejectReason
from crowdsift.engines.base import Usage
from crowdsift.pipeline.reddit.models import RankedPost, RedditResponse
from crowdsift.pipeline.result import FetchSummary, ResearchResult
from crowdsift.pipeline.telemetry import (
    RunTelemetry,
    fetch_telemetry,
    run_telemetry,
    telemetry_lines,
)
from crowdsift.sources.experts.models import ExpertResponse
from crowdsift.sources.models import EvidenceItem, SourceFetch


def ranked(n: int) -> list[RankedPost]:
    return [
        RankedPost(
            post_id=f"p{i}", url=f"https://www.reddit.com/r/tools/comments/p{i}/x/",
            title=f"post {i}", subreddit="tools", post_karma=10, num_comments=3,
            strategies=["targeted"], relevance=0.9 if i % 2 else 0.2, engagement=0.5,
            final_score=0.5,
        )
        for i in range(n)
    ]  # fmt: skip


def video(i: int) -> EvidenceItem:
    return EvidenceItem.model_validate(
        {
            "kind": "youtube",
            "id": f"v{i}",
            "title": f"video {i}",
            "text": "a review",
            "url": f"https://www.youtube.com/watch?v=v{i}",
            "where": "a channel",
        }
    )


def result(**parts: object) -> ResearchResult:
    fields: dict[str, object] = {
        "question": "which drill?",
        "status": "ok",
        "engine": "local",
        "timings_ms": {"total": 1.0},
        "usage": Usage(),
    }
    return ResearchResult.model_validate({**fields, **parts})


def reddit_fetch(**overrides: object) -> FetchSummary:
    values: dict[str, object] = {
        "source": "arctic-shift",
        "posts_seen": 60,
        "posts_accepted": 30,
        "posts_judged": 25,
        "posts_relevant": 15,
        "yield_ratio": 0.6,
        "refetched": False,
        "gate_failed_open": True,
        "comments_accepted": 90,
        "post_rejections": {
            RejectReason.BELOW_THRESHOLD: 14,
            RejectReason.TOO_SHORT: 6,
            RejectReason.DUPLICATE: 10,  # 7 repeat sightings + 3 near-duplicates folded
        },
        "errors": ["one thread failed"],
    }
    return FetchSummary.model_validate({**values, **overrides})


def test_reddit_rejections_by_reason_account_for_every_post_seen() -> None:
    response = RedditResponse(
        status="ok", engine="local", source="arctic-shift", candidates_found=33,
        duplicates_removed=3, ranked=ranked(14), rerank_fell_back=True, comments_drilled=90,
        threads_drilled=12,
    )  # fmt: skip
    t = run_telemetry(result(fetch=reddit_fetch(), reddit_response=response))

    reddit = t.sources["arctic-shift"]
    assert (reddit.seen, reddit.accepted, reddit.relevant) == (60, 30, 12)
    assert reddit.rejections == {
        "below_threshold": 14,
        "too_short": 6,
        "duplicate": 7,  # sightings of posts another search had already returned
        "near_duplicate": 3,  # folded by the title dedupe
        "not_judged": 30 - 25,  # past the heuristic cut the gate judges
        "irrelevant": 25 - 15,  # the gate said no
        "not_reranked": 15 - 14,  # past the rerank's top N
        "not_drilled": 14 - 12,
    }
    assert reddit.seen - reddit.relevant == sum(reddit.rejections.values())
    assert reddit.gate_failed_open and not reddit.refetched and reddit.yield_ratio == 0.6
    assert reddit.comments_accepted == 90 and reddit.errors == 1


def test_a_failed_reddit_branch_without_a_fetch_summary_still_counts_what_it_had() -> None:
    response = RedditResponse(
        status="failed", engine="local", source="reddit-api", errors=["401 from Reddit"]
    )
    t = run_telemetry(result(reddit_response=response))
    assert t.sources["reddit-api"].errors == 1
    assert t.sources["reddit-api"].seen == 0 and t.sources["reddit-api"].rejections == {}
    assert run_telemetry(result()).sources == {}


def test_youtube_gate_rejections_skipped_amazon_and_experts() -> None:
    youtube = SourceFetch(
        kind="youtube", query="drill", items=[video(i) for i in range(4)], fetched=10,
        yield_ratio=0.4, refetched=True,
    )  # fmt: skip
    amazon = SourceFetch(kind="amazon", query="drill", skipped="no AMAZON_CREDENTIAL_ID set")
    expert = ExpertResponse(
        expert_id="desk_gear_weekly",
        counts={"posts": 40, "high": 5, "medium": 7, "low": 25, "map_failed": 3,
                "medium_selected": 4},
    )  # fmt: skip
    t = run_telemetry(result(source_fetches=[youtube, amazon], expert_responses=[expert]))

    assert list(t.sources) == ["youtube", "amazon", "expert:desk_gear_weekly"]
    yt = t.sources["youtube"]
    assert (yt.seen, yt.accepted, yt.relevant, yt.rejections) == (10, 10, 4, {"irrelevant": 6})
    assert yt.refetched and yt.yield_ratio == 0.4 and not yt.gate_failed_open

    skipped = t.sources["amazon"]
    assert skipped.skipped == "no AMAZON_CREDENTIAL_ID set"
    assert (skipped.seen, skipped.rejections, skipped.yield_ratio) == (0, {}, None)

    panel = t.sources["expert:desk_gear_weekly"]
    assert (panel.seen, panel.accepted, panel.relevant) == (40, 40, 5 + 4)
    assert panel.rejections == {"low": 25, "medium_not_selected": 7 - 4, "map_failed": 3}
    assert panel.seen - panel.relevant == sum(panel.rejections.values())
    assert panel.yield_ratio == round(9 / 40, 4)


def test_a_gate_that_failed_open_rejects_nothing() -> None:
    opened = SourceFetch(
        kind="youtube", query="q", items=[video(i) for i in range(5)], fetched=5, failed_open=True
    )
    yt = run_telemetry(result(source_fetches=[opened])).sources["youtube"]
    assert yt.gate_failed_open and yt.rejections == {} and yt.relevant == 5


def test_usage_gives_calls_per_phase_tokens_and_cost() -> None:
    usage = Usage(
        calls=5, prompt_tokens=1200, completion_tokens=300, cost_usd=0.0123,
        by_phase={"analysis": 1, "map": 3, "synthesis": 1},
    )  # fmt: skip
    t = run_telemetry(result(usage=usage))
    assert t.llm_calls_by_phase == {"analysis": 1, "map": 3, "synthesis": 1}
    assert (t.prompt_tokens, t.completion_tokens, t.cost_usd) == (1200, 300, 0.0123)


def test_a_plain_fetch_has_filters_and_no_gate() -> None:
    report = FetchReport(
        source="archive", posts_seen=20, posts_accepted=7, comments_accepted=11,
        post_rejections={RejectReason.NSFW_OR_AD: 2, RejectReason.DUPLICATE: 11},
        comment_rejections={RejectReason.TOO_SHORT: 4}, errors=["r/x failed"],
    )  # fmt: skip
    fetched = FetchResult(
        query="q", plan_id=uuid4(), search_terms=["q"], subreddits=["tools"],
        fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    source = fetch_telemetry(fetched, report).sources["archive"]
    assert (source.seen, source.accepted, source.relevant) == (20, 7, 0)
    assert source.rejections == {"nsfw_or_ad": 2, "duplicate": 11}
    assert source.comment_rejections == {"too_short": 4} and source.errors == 1
    assert source.yield_ratio is None


def pairs(line: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", line))


def test_terminal_lines_carry_every_number_as_key_value_pairs() -> None:
    youtube = SourceFetch(
        kind="youtube", query="drill", items=[video(0)], fetched=3, yield_ratio=1 / 3
    )
    amazon = SourceFetch(kind="amazon", query="drill", skipped="no credentials")
    usage = Usage(calls=2, prompt_tokens=10, completion_tokens=5, by_phase={"filter": 2})
    t = run_telemetry(result(source_fetches=[youtube, amazon], usage=usage))
    lines = telemetry_lines(t)

    assert lines[0] == "telemetry:"
    yt_line = next(line for line in lines if line.strip().startswith("youtube:"))
    assert pairs(yt_line) == {"seen": "3", "accepted": "3", "relevant": "1", "yield": "0.33"}
    rejected = lines[lines.index(yt_line) + 1]
    assert rejected.strip().startswith("rejected:") and pairs(rejected) == {"irrelevant": "2"}
    assert "  amazon: skipped (no credentials)" in lines
    assert pairs(lines[-2]) == {
        "calls": "2", "prompt_tokens": "10", "completion_tokens": "5", "cost_usd": "0.0000"
    }  # fmt: skip
    assert lines[-1] == "    calls by phase: filter=2"
    assert telemetry_lines(RunTelemetry())[-1].strip().startswith("llm: calls=0")
