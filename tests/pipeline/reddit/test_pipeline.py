"""The Reddit branch on the demo archive: formulate → plan → fetch → gate → rerank → drill."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.errors import EngineTransportError, PlanError
from crowdsift.core.models import RejectReason
from crowdsift.core.source import RawThing
from crowdsift.engines.base import EngineReply, OutT, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.fetch.fetcher import SearchOptions
from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
from crowdsift.pipeline.reddit.branch import RedditDeps, RedditRun, run_reddit
from crowdsift.pipeline.reddit.formulate import FormulateTask
from crowdsift.pipeline.reddit.models import FormulationDraft
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def _run(
    archive: Path,
    engine: Any = None,
    *,
    source: Any = None,
    question: str = QUESTION,
    page_size: int = 25,
    **config: Any,
) -> RedditRun:
    own = source is None
    source = source or ArchiveSource(archive)
    deps = RedditDeps(
        source=source,
        engine=engine or LocalEngine(embedder=HashingEmbedder()),
        config=RedditConfig(**config),
        candidates=subreddit_profiles(archive),
        search=SearchOptions(page_size=page_size),
    )
    try:
        return asyncio.run(run_reddit(question, deps))
    finally:
        if own:
            source.close()


def test_the_branch_searches_gates_ranks_and_drills(demo_archive: Path) -> None:
    run = _run(demo_archive, drill_top=6, drill_comments=8, rerank_top=20)

    assert run.plan is not None and run.analysis is not None
    assert {q.strategy for q in run.plan.queries} == {"targeted", "ai_intent", "sniper", "timeless"}
    assert run.plan.subreddits == run.analysis.subreddits
    report = run.report
    assert report is not None and report.posts_seen > 0
    assert report.posts_accepted == len(run.candidates)
    rejected = sum(report.post_rejections.values())
    assert report.posts_seen == report.posts_accepted + rejected  # every post counted once
    judged_first = min(len(run.candidates), 40)  # the heuristic top 2 × rerank_top
    assert judged_first <= run.gate.judged <= len(run.candidates) and not run.gate.failed_open
    assert run.gate.refetched or run.gate.judged == judged_first
    assert 0 < len(run.ranked) <= min(20, run.gate.relevant)
    finals = [r.final_score for r in run.ranked]
    assert finals == sorted(finals, reverse=True)
    for r in run.ranked:
        assert r.final_score == pytest.approx(0.8 * r.relevance + 0.2 * r.engagement, abs=1e-6)
    assert not run.rerank_fell_back  # the local gate scores every item
    assert len(run.threads) == 6
    assert run.evidence is not None
    assert [p.id for p in run.evidence.posts] == [r.post_id for r in run.ranked[:6]]
    assert all(len(p.comments) <= 8 for p in run.evidence.posts)


def test_drill_depth_bounds_the_comment_tree(demo_archive: Path) -> None:
    deep = _run(demo_archive, drill_top=15, drill_depth=5)
    shallow = _run(demo_archive, drill_top=15, drill_depth=1)

    deep_depths = [c.depth for t in deep.threads for c in t.comments]
    assert max(deep_depths) >= 1 and max(deep_depths) <= 4  # the demo nests; depth 5 = 0..4
    count = sum(len(t.comments) for t in shallow.threads)
    assert count < sum(len(t.comments) for t in deep.threads)
    for thread in shallow.threads:  # depth 1 = top-level comments only
        assert all(c.depth == 0 and c.parent_id == f"t3_{thread.post.id}" for c in thread.comments)
        assert [c.comment_id for c in thread.post.comments] == [
            c.comment_id for c in thread.comments
        ]


class _Hybrid:
    """Local strategies for every task except the ones ``replies`` script (an 'LLM')."""

    name = "scripted"

    def __init__(self, replies: dict[type, Any]) -> None:
        self._local = LocalEngine(embedder=HashingEmbedder())
        self.scripted = ScriptedEngine(function=self._reply, tokens_per_call=(50, 10))
        self._replies = replies
        self.tasks: list[str] = []

    def _reply(self, task: Task[Any]) -> Any:
        reply = self._replies[type(task)]
        return reply(task) if callable(reply) else reply

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        self.tasks.append(type(task).__name__)
        if type(task) in self._replies:
            return await self.scripted.run(task)
        return await self._local.run(task)

    async def aclose(self) -> None:
        """Nothing to release."""


def _formulate(task: Any) -> FormulationDraft:
    return FormulationDraft(
        english_question=task.question, intent="comparison", keywords=["plaud note", "plaud"],
        ai_queries=["plaud note vs phone"], subreddits=["gadgets", "productivity"],
        compared=["plaud note", "phone"],
    )  # fmt: skip


def _judge(share: float) -> Any:
    def verdicts(task: Any) -> RelevanceVerdicts:
        keep = round(len(task.items) * share)
        n = len(task.items)
        return RelevanceVerdicts(
            relevant=[i < keep for i in range(n)], scores=[1.0 - i / n for i in range(n)]
        )

    return verdicts


def test_an_llm_branch_makes_two_calls_and_ranks_by_the_gates_scores(demo_archive: Path) -> None:
    engine = _Hybrid({FormulateTask: _formulate, RelevanceTask: _judge(0.9)})
    run = _run(demo_archive, engine)

    assert engine.tasks == ["FormulateTask", "RelevanceTask"]  # no second judging call
    assert run.analysis is not None and run.analysis.intent == "comparison"
    assert not run.gate.refetched and not run.rerank_fell_back
    assert all(0.0 < r.relevance <= 1.0 for r in run.ranked)


def test_a_low_yield_refetches_once_and_judges_only_new_candidates(demo_archive: Path) -> None:
    engine = _Hybrid({FormulateTask: _formulate, RelevanceTask: _judge(0.1)})
    run = _run(demo_archive, engine, page_size=2)

    assert engine.tasks == ["FormulateTask", "RelevanceTask", "RelevanceTask"]
    assert run.gate.refetched
    first, second = (r for r in engine.scripted.requests if isinstance(r, RelevanceTask))
    assert not {i.title for i in first.items} & {i.title for i in second.items}
    assert run.gate.judged == len(first.items) + len(second.items)


def test_a_failing_gate_fails_open_and_ranks_by_lexical_relevance(demo_archive: Path) -> None:
    engine = _Hybrid(
        {FormulateTask: _formulate, RelevanceTask: EngineTransportError("timeout", status=503)}
    )
    run = _run(demo_archive, engine, drill_top=2)

    assert run.gate.failed_open and run.gate.yield_ratio == 1.0 and not run.gate.refetched
    assert run.gate.relevant == run.gate.judged and run.rerank_fell_back
    assert run.ranked and all(r.relevance > 0 for r in run.ranked)


def test_fetcher_rejections_are_counted_in_the_branch(demo_archive: Path) -> None:
    run = _run(demo_archive)
    report = run.report
    assert report is not None
    assert report.post_rejections.get(RejectReason.DUPLICATE, 0) > 0  # strategies overlap
    assert run.duplicates_removed >= 0
    assert report.requests >= run.searches > 0  # every search is a request to the source


class _SlowTrees(ArchiveSource):
    """Comment trees take far longer than the branch's bound."""

    def fetch_comment_tree(
        self, post_id: str, *, limit: int = 100, depth: int = 5
    ) -> list[RawThing]:
        time.sleep(3.0)
        return super().fetch_comment_tree(post_id, limit=limit, depth=depth)


def test_a_slow_source_gives_partial_results_within_the_bound(demo_archive: Path) -> None:
    source = _SlowTrees(demo_archive)
    try:
        started = time.perf_counter()
        run = _run(demo_archive, source=source, timeout_s=1.0)
        elapsed = time.perf_counter() - started
    finally:
        source.close()

    assert elapsed < 2.5  # the bound plus slack, far below the 3 s each tree takes
    assert run.timed_out and run.ranked and run.threads == []
    assert "1 s bound during drill" in run.errors[-1]
    assert "CROWDSIFT_REDDIT_TIMEOUT" in run.errors[-1]


def test_an_empty_question_is_a_plan_error(demo_archive: Path) -> None:
    with pytest.raises(PlanError):
        _run(demo_archive, question="   ")


def test_no_matching_posts_ranks_and_drills_nothing(demo_archive: Path) -> None:
    run = _run(demo_archive, question="Which zyxwvut qwertyuiop flange is best?")

    assert run.candidates == [] and run.ranked == [] and run.threads == []
    assert run.evidence is not None and run.evidence.posts == []
    assert run.failed_searches == 0  # found nothing is not a failure
