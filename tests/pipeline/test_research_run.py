"""The research run: experts and the Reddit branch in parallel; Reddit-only, experts-only."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.config import Settings
from crowdsift.core.errors import AuthError, PlanError
from crowdsift.core.source import SearchPage
from crowdsift.core.store import CommentStore
from crowdsift.engines.base import EngineReply, OutT, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.pipeline.experts.map import MapTask
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, AskRun, ResearchResult
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import ensure_demo_experts

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
EXPERTS = ["desk_gear_weekly", "homelab_field_notes"]


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def expert_store(tmp_path: Path) -> Iterator[SqlExpertStore]:
    store = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.db'}")
    ensure_demo_experts(store)
    yield store
    store.close()


def _research(
    archive: Path,
    *,
    source: Any = None,
    engine: Any = None,
    store: SqlExpertStore | None = None,
    comments: CommentStore | None = None,
    **options: Any,
) -> AskRun:
    own = source is None and options.get("search_reddit", True)
    source = source or (ArchiveSource(archive) if own else None)
    deps = AskDeps(
        settings=Settings(),
        engine=engine or LocalEngine(embedder=HashingEmbedder()),
        source=source,
        candidates=subreddit_profiles(archive),
        expert_store=store,
        store=comments,
    )
    try:
        return asyncio.run(run_research(QUESTION, deps, **options))
    finally:
        if own and source is not None:
            source.close()


def test_reddit_only_mode_skips_the_panel_and_fills_the_reddit_answer(demo_archive: Path) -> None:
    run = _research(demo_archive)
    data = json.loads(run.result.model_dump_json())

    assert data["expert_responses"] == []
    reddit = data["reddit_response"]
    assert reddit["status"] in ("ok", "partial") and reddit["ranked"] and reddit["synthesis"]
    assert data["plan"]["subreddits"] == reddit["analysis"]["subreddits"]
    assert data["summary"]["sources"] and data["fetch"]["source"] == "archive"
    evidence = {p.url for p in run.evidence.posts}
    assert {s["url"] for s in data["summary"]["sources"]} <= evidence
    assert "map" not in data["usage"]["by_phase"]  # phases 1-7 never ran
    assert ResearchResult.model_validate(data) == run.result


def test_experts_only_mode_leaves_reddit_out(
    demo_archive: Path, expert_store: SqlExpertStore
) -> None:
    run = _research(demo_archive, store=expert_store, experts=EXPERTS, search_reddit=False)
    result = run.result

    assert [r.expert_id for r in result.expert_responses] == EXPERTS
    assert result.reddit_response is None and result.plan is None and result.summary is None
    assert result.status in ("ok", "partial")
    assert "reddit" not in result.timings_ms


def test_nothing_to_research_is_a_plan_error(demo_archive: Path) -> None:
    with pytest.raises(PlanError, match="--experts"):
        _research(demo_archive, search_reddit=False)


class _WaitsForExperts(ArchiveSource):
    """Searches block until the experts' map phase has started, or give up after 10 s."""

    def __init__(self, path: Path, experts_started: threading.Event) -> None:
        super().__init__(path)
        self.experts_started = experts_started
        self.saw_experts_running = False

    def search_subreddit(self, subreddit: str, term: str, **kwargs: Any) -> SearchPage:
        if self.experts_started.wait(timeout=10):
            self.saw_experts_running = True
        return super().search_subreddit(subreddit, term, **kwargs)


class _SignalsMap:
    """The local engine, setting an event when the first map task arrives."""

    name = "local"

    def __init__(self, started: threading.Event) -> None:
        self._inner = LocalEngine(embedder=HashingEmbedder())
        self._started = started

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        if isinstance(task, MapTask):
            self._started.set()
        return await self._inner.run(task)

    async def aclose(self) -> None:
        """Nothing to release."""


def test_experts_and_the_reddit_branch_run_at_the_same_time(
    demo_archive: Path, expert_store: SqlExpertStore
) -> None:
    started = threading.Event()
    source = _WaitsForExperts(demo_archive, started)
    try:
        run = _research(
            demo_archive, source=source, engine=_SignalsMap(started), store=expert_store,
            experts=EXPERTS,
        )  # fmt: skip
    finally:
        source.close()

    # The Reddit branch's searches were in flight while the panel's map phase began: had the two
    # pipelines run one after the other, each search would have waited out its 10 s.
    assert source.saw_experts_running
    result = run.result
    assert len(result.expert_responses) == 2 and result.reddit_response is not None
    assert result.usage.by_phase.get("map", 0) >= 2
    assert {"experts", "reddit", "total"} <= set(result.timings_ms)


class _BadCredentials(ArchiveSource):
    def search_subreddit(self, _subreddit: str, _term: str, **_kwargs: Any) -> SearchPage:
        raise AuthError("Reddit rejects our token: check REDDIT_CLIENT_ID")


def test_a_reddit_failure_does_not_sink_the_experts(
    demo_archive: Path, expert_store: SqlExpertStore
) -> None:
    source = _BadCredentials(demo_archive)
    try:
        run = _research(demo_archive, source=source, store=expert_store, experts=EXPERTS)
        with pytest.raises(AuthError):  # alone, Reddit's failure is the answer
            _research(demo_archive, source=source)
    finally:
        source.close()
    result = run.result

    assert result.reddit_response is not None and result.reddit_response.status == "failed"
    assert "REDDIT_CLIENT_ID" in result.reddit_response.errors[0]
    assert all(r.status in ("ok", "partial") for r in result.expert_responses)
    assert result.status == "partial"


runner = CliRunner()


def test_cli_ask_no_reddit_needs_experts() -> None:
    outcome = runner.invoke(app, ["ask", QUESTION, "--no-reddit"], catch_exceptions=False)

    assert outcome.exit_code == 2
    assert "--experts" in outcome.stderr


def test_cli_schema_publishes_the_research_result() -> None:
    outcome = runner.invoke(app, ["schema", "ResearchResult"], catch_exceptions=False)

    schema = json.loads(outcome.stdout)
    assert {"expert_responses", "reddit_response", "summary", "plan"} <= set(schema["properties"])
    assert "RedditResponse" in schema["$defs"] and "ExpertResponse" in schema["$defs"]


def _llm(task: Task[Any]) -> Any:
    """A well-behaved scripted 'LLM' for every task of a Reddit-only run."""
    from crowdsift.pipeline.gate.judge import RelevanceTask, RelevanceVerdicts
    from crowdsift.pipeline.reddit.formulate import FormulateTask
    from crowdsift.pipeline.reddit.models import FormulationDraft
    from crowdsift.pipeline.synthesis.models import AnswerDraft, SourceRef
    from crowdsift.pipeline.synthesis.task import AnswerTask

    if isinstance(task, FormulateTask):
        return FormulationDraft(english_question=task.question, keywords=["plaud note", "plaud"],
                                subreddits=["gadgets", "productivity"])  # fmt: skip
    if isinstance(task, RelevanceTask):
        n = len(task.items)
        return RelevanceVerdicts(relevant=[True] * n, scores=[0.7] * n)
    assert isinstance(task, AnswerTask)
    first = task.request.post_payloads[0]
    return AnswerDraft(summary=f"People like it. [post:{first.post_id}]",
                       sources=[SourceRef(post_id=first.post_id, url=str(first.url))])  # fmt: skip


def test_reddit_only_with_an_llm_makes_three_calls(demo_archive: Path) -> None:
    from crowdsift.engines.scripted import ScriptedEngine

    engine = ScriptedEngine(function=_llm, tokens_per_call=(100, 20))
    result = _research(demo_archive, engine=engine).result

    assert [type(t).__name__ for t in engine.requests] == [
        "FormulateTask", "RelevanceTask", "AnswerTask",
    ]  # fmt: skip
    assert result.usage.calls == 3 and result.usage.prompt_tokens == 300
    assert result.reddit_response is not None and result.reddit_response.usage.calls == 3
    assert result.status == "ok" and result.engine == "scripted"


def test_drilled_comments_are_persisted_to_the_comment_store(
    demo_archive: Path, tmp_path: Path
) -> None:
    store = CommentStore.from_url(f"sqlite:///{tmp_path / 'comments.db'}")
    try:
        run = _research(demo_archive, comments=store)
        response = run.result.reddit_response
        assert response is not None and response.comments_drilled > 0
        assert store.count() == response.comments_drilled
        first = run.evidence.posts[0]
        assert {c.comment_id for c in store.for_post(first.id)} == {
            c.comment_id for c in first.comments
        }
    finally:
        store.close()
