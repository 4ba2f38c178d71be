"""``--since`` through the whole research run (bundled sample archive, offline engine).

Older threads never reach the answer (ranked, drilled, cited), the plan carries the bound, and
every front end's answer states the window it used; without ``--since`` the automatic window
stays the default and is stated too.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from crowdsift.cli.render import render_research
from crowdsift.core.config import Settings
from crowdsift.core.since import describe_window
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, AskRun
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
SINCE = datetime(2025, 6, 1, tzinfo=UTC)  # the sample archive has Plaud threads on both sides


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def _research(archive: Path, **deps: Any) -> AskRun:
    source = ArchiveSource(archive)
    try:
        ask = AskDeps(
            settings=Settings(),
            engine=LocalEngine(embedder=HashingEmbedder()),
            source=source,
            candidates=subreddit_profiles(archive),
            **deps,
        )
        return asyncio.run(run_research(QUESTION, ask))
    finally:
        source.close()


def test_since_keeps_older_threads_out_of_the_answer_and_says_so(demo_archive: Path) -> None:
    run = _research(demo_archive, since=SINCE)
    result = run.result
    assert result.plan is not None and result.plan.since == SINCE
    assert result.window == "threads since 2025-06-01"
    reddit = result.reddit_response
    assert reddit is not None and reddit.ranked, "the sample has Plaud threads after the bound"
    assert all(r.created_at is not None and r.created_at >= SINCE for r in reddit.ranked)
    assert run.evidence.posts and all(
        p.created_at is not None and p.created_at >= SINCE for p in run.evidence.posts
    )
    cited = {str(s.url) for s in result.summary.sources} if result.summary else set()
    assert cited <= {p.url for p in run.evidence.posts}
    assert "window: threads since 2025-06-01" in render_research(result).splitlines()
    assert '"window":"threads since 2025-06-01"' in result.model_dump_json()


def test_without_since_the_automatic_window_is_kept_and_stated(demo_archive: Path) -> None:
    run = _research(demo_archive)
    result = run.result
    assert result.plan is not None and result.plan.since is None
    reddit = result.reddit_response
    assert reddit is not None and reddit.analysis is not None
    chosen = reddit.analysis.time_filter
    assert result.window == describe_window(None, chosen)
    non_timeless = [q.time_filter for q in result.plan.queries if q.strategy != "timeless"]
    assert non_timeless and set(non_timeless) == {chosen}  # the topic's window, as before
    assert any(r.created_at is not None and r.created_at < SINCE for r in reddit.ranked), (
        "without a bound, older threads are still found"
    )
    assert f"window: {result.window}" in render_research(result, full=True)


def test_since_reaches_the_experts_panel(tmp_path: Path, demo_archive: Path) -> None:
    from crowdsift.sources.experts.db import SqlExpertStore
    from crowdsift.sources.experts.demo import ensure_demo_experts

    store = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.db'}")
    ensure_demo_experts(store)
    try:
        total = len(store.posts("desk_gear_weekly"))
        bound = datetime(2026, 2, 20, tzinfo=UTC)
        newer = len(store.posts("desk_gear_weekly", since=bound))
        assert 0 < newer < total
        deps = AskDeps(
            settings=Settings(),
            engine=LocalEngine(embedder=HashingEmbedder()),
            source=None,
            expert_store=store,
            since=bound,
        )
        run = asyncio.run(
            run_research(QUESTION, deps, experts=["desk_gear_weekly"], search_reddit=False)
        )
    finally:
        store.close()
    (response,) = run.result.expert_responses
    assert response.counts["posts"] == newer
    assert all(s.date >= bound for s in response.main_sources)
    assert run.result.window == "threads since 2026-02-20"
