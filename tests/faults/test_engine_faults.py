"""Engine faults, phase by phase: every phase degrades as its seed says, and results stay valid.

The real phases run on the real ``openai`` engine against a real local chat-completions server
(``ChatCompletionsServer``). Its responder (``TaskResponder``) answers each task with valid JSON
built from the prompt, except the faulted one, which gets a 429, a 500, a stall past the client
timeout, invalid JSON, a wrong-length array, a refusal, a cut-off reply, a broken body or a
dropped connection. Retry waits go through a recording sleep, so they cost nothing.

Seeds: 002 (the relevance gate fails open), 001 (map re-queues a failed chunk once, medium
scoring returns nothing, the Reddit branch falls back stage by stage and returns what it has at its
bound), 004 (the synthesis reports an error instead of raising).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.engines.openai_compat import OpenAICompatEngine
from crowdsift.pipeline.experts.language import detect_language
from crowdsift.pipeline.experts.map import chunk_posts, run_map
from crowdsift.pipeline.experts.pipeline import run_expert, run_panel
from crowdsift.pipeline.gate.judge import judge
from crowdsift.pipeline.reddit.models import RedditResponse
from crowdsift.pipeline.reddit.profiles import subreddit_profiles
from crowdsift.pipeline.reddit.topicality import SubredditProfile, topical_subreddits
from crowdsift.pipeline.research import run_research
from crowdsift.pipeline.result import AskDeps, AskRun, ResearchResult
from crowdsift.sources.archive.demo import ensure_demo_archive
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import ensure_demo_experts
from crowdsift.sources.experts.models import ExpertResponse, Relevance
from crowdsift.testing.factories import make_post
from tests.faults.engine_faults_support import (
    API_KEY,
    COMMENT_MARKER,
    NUMBER_MARKER,
    FaultKind,
    FaultPolicy,
    FaultWhere,
    Formulation,
    RandomFaults,
    SleepRecorder,
    TaskResponder,
    engine_settings,
    expert_store,
    map_chunk_ids,
    post_markers,
    with_engine,
)
from tests.support.openai_server import ChatCompletionsServer

QUESTION = "Is the Plaud Note worth it compared to a phone recording app?"
QUESTION_RU = "Стоит ли покупать Plaud Note вместо приложения для записи на телефоне?"
TIMEOUT_S = 0.5
"""The client timeout of the cases that stall a call (the others keep 10 s)."""
TRANSPORT: frozenset[FaultKind] = frozenset({"429", "500", "timeout", "truncated", "disconnect"})


@pytest.fixture
def serve() -> Iterator[Callable[[TaskResponder], ChatCompletionsServer]]:
    """Start chat servers with a responder; every one is stopped after the test."""
    servers: list[ChatCompletionsServer] = []

    def start(responder: TaskResponder) -> ChatCompletionsServer:
        server = ChatCompletionsServer(api_key=API_KEY, responder=responder)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def demo_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    detect_language("warm the language detector up")  # its first load is not the stall tested
    return ensure_demo_archive(tmp_path_factory.mktemp("demo"))


def client_timeout(kind: FaultKind | None) -> float:
    return TIMEOUT_S if kind == "timeout" else 10.0


def warnings_named(logs: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [entry for entry in logs if entry["event"] == event and entry["log_level"] == "warning"]


# --- 1. the relevance gate fails open (seed 002) ---------------------------------------------

GATE_ITEMS = [
    make_post(f"g{n}", f"Plaud Note review {n}", "I used it for a month of meetings.")
    for n in range(4)
]
GATE_CALLS: dict[FaultKind, int] = {
    "429": 2, "500": 2, "timeout": 2, "truncated": 2, "disconnect": 2,  # one retry each
    "invalid_json": 2,  # the reply and its one repair
    "wrong_length": 1, "refusal": 1, "length": 1,  # valid JSON of the wrong size; no content
}  # fmt: skip


def _judge(server: ChatCompletionsServer, sleeps: SleepRecorder, kind: FaultKind | None) -> Any:
    async def work(engine: OpenAICompatEngine) -> Any:
        return await judge("plaud note", GATE_ITEMS, "reddit", engine=engine)

    return asyncio.run(with_engine(server, work, sleep=sleeps, timeout=client_timeout(kind)))


def test_a_healthy_gate_filters(serve: Callable[[TaskResponder], ChatCompletionsServer]) -> None:
    responder = TaskResponder()
    result = _judge(serve(responder), SleepRecorder(), None)

    assert not result.failed_open and result.yield_ratio == 0.5  # the responder keeps every other
    assert [p.id for p in result.relevant] == ["g0", "g2"]


@pytest.mark.parametrize("kind", list(GATE_CALLS))
def test_the_gate_fails_open_on_every_engine_fault(
    kind: FaultKind, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    responder = TaskResponder(FaultWhere("RelevanceVerdicts", kind))
    sleeps = SleepRecorder()
    with capture_logs() as logs:
        result = _judge(serve(responder), sleeps, kind)

    assert result.failed_open and result.yield_ratio == 1.0
    assert result.relevant == GATE_ITEMS  # all items pass, in order
    assert responder.count("RelevanceVerdicts") == GATE_CALLS[kind]
    assert len(sleeps.waits) == (1 if kind in TRANSPORT else 0)
    (warning,) = warnings_named(logs, "relevance_filter_failed_open")
    assert warning["items"] == len(GATE_ITEMS) and warning["error"]


def test_a_failing_gate_inside_ask_keeps_every_post_and_the_run_valid(
    demo_archive: Path, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    responder = TaskResponder(FaultWhere("RelevanceVerdicts", "500"))
    server = serve(responder)
    source = ArchiveSource(demo_archive)

    async def work(engine: OpenAICompatEngine) -> AskRun:
        deps = AskDeps(
            settings=engine_settings(server, timeout=10.0, retries=1), engine=engine,
            source=source, candidates=subreddit_profiles(demo_archive),
        )  # fmt: skip
        return await run_research(QUESTION, deps)

    try:
        run = asyncio.run(with_engine(server, work))
    finally:
        source.close()
    result = ResearchResult.model_validate_json(run.result.model_dump_json())

    assert result == run.result
    fetch = result.fetch
    assert fetch is not None and fetch.gate_failed_open and not fetch.refetched
    assert fetch.yield_ratio == 1.0 and fetch.posts_relevant == fetch.posts_judged > 0
    assert len(run.evidence.posts) > 0
    assert responder.count("RelevanceVerdicts") == 2  # one judgement, one retry: no refetch
    assert result.summary is not None and result.summary.status in ("ok", "partial")
    evidence = {p.url for p in run.evidence.posts}
    assert {str(s.url) for s in result.summary.sources} <= evidence


# --- 2. map: a failed chunk is re-queued once (seed 001, phase 1) ---------------------------


def map_config() -> ExpertsConfig:
    """Three chunks of four posts; one tenacity retry; engine retries are off in these cases."""
    return ExpertsConfig(map_chunk_size=4, map_max_retries=1, map_backoff_s=0.0)


MAP_PASS_CALLS: dict[FaultKind, int] = {
    "500": 2,  # two tenacity attempts, one request each (engine retries off)
    "refusal": 2,
    "timeout": 2,
    "invalid_json": 4,  # each attempt is a reply and its repair
    "429": 4,  # each attempt: the request, the 65 s quota pause, the request again
}


def _map_fault(kind: FaultKind, chunk: Sequence[int], times: int | None) -> FaultWhere:
    return FaultWhere(
        "MapVerdicts", kind, times=times, where=lambda body: map_chunk_ids(body) == list(chunk)
    )


@pytest.mark.parametrize("kind", list(MAP_PASS_CALLS))
def test_a_failed_map_chunk_is_requeued_once_and_then_scores_its_posts(
    kind: FaultKind, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    posts = store.posts("alpha")
    chunk = [p.post_id for p in chunk_posts(posts, map_config().map_chunk_size)[1]]
    fault = _map_fault(kind, chunk, times=MAP_PASS_CALLS[kind])  # the whole first pass fails
    sleeps = SleepRecorder()
    server = serve(TaskResponder(fault))

    async def work(engine: OpenAICompatEngine) -> Any:
        return await run_map(QUESTION, posts, engine, map_config(), sleep=sleeps)

    with capture_logs() as logs:
        outcome = asyncio.run(
            with_engine(server, work, sleep=sleeps, timeout=client_timeout(kind), retries=0)
        )

    assert fault.matched == MAP_PASS_CALLS[kind] + 1  # one pass failed, the requeue succeeded
    assert (outcome.chunks, outcome.requeued_chunks, outcome.failed_chunks) == (3, 1, 0)
    assert [s.post.post_id for s in outcome.scored] == [p.post_id for p in posts]
    assert outcome.failed_post_ids == []
    assert warnings_named(logs, "map_requeue")[0]["chunks"] == [1]
    assert (map_config().map_rate_limit_sleep_s in sleeps.waits) == (kind == "429")


@pytest.mark.parametrize("kind", ["500", "invalid_json", "429", "refusal"])
def test_a_chunk_failing_twice_is_counted_and_the_expert_is_partial(
    kind: FaultKind, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    chunk = [p.post_id for p in chunk_posts(store.posts("alpha"), 4)[1]]
    fault = _map_fault(kind, chunk, times=None)
    responder = TaskResponder(fault)
    response = _expert(serve(responder), store, map_config(), retries=0)

    assert fault.matched == 2 * MAP_PASS_CALLS[kind]  # the main pass and one requeue, no more
    assert response.status == "partial" and response.counts["map_failed"] == len(chunk)
    assert response.counts["high"] + response.counts["medium"] + response.counts["low"] == 8
    assert f"{len(chunk)} posts could not be scored" in response.notes[0]
    assert response.answer and post_markers(response.answer)  # the rest still answers
    _assert_valid_expert(response, store)


def test_every_chunk_failing_twice_fails_the_expert_without_asking_further(
    serve: Callable[[TaskResponder], ChatCompletionsServer],
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("MapVerdicts", "500"))
    response = _expert(serve(responder), store, map_config(), retries=0)

    assert response.status == "failed" and response.counts["map_failed"] == 12
    assert response.answer == "" and responder.count("ReduceDraft") == 0
    _assert_valid_expert(response, store)


def test_a_map_reply_missing_a_post_marks_it_low_without_a_retry(
    serve: Callable[[TaskResponder], ChatCompletionsServer],
) -> None:
    store = expert_store()
    posts = store.posts("alpha")
    chunk = [p.post_id for p in chunk_posts(posts, 4)[0]]
    fault = _map_fault("wrong_length", chunk, times=None)
    server = serve(TaskResponder(fault))

    async def work(engine: OpenAICompatEngine) -> Any:
        return await run_map(QUESTION, posts, engine, map_config(), sleep=SleepRecorder())

    with capture_logs() as logs:
        outcome = asyncio.run(with_engine(server, work, retries=0))

    assert fault.matched == 1 and outcome.requeued_chunks == 0 and outcome.failed_chunks == 0
    forgotten = next(s for s in outcome.scored if s.post.post_id == chunk[-1])
    assert forgotten.relevance is Relevance.LOW and forgotten.reason == "not marked by the engine"
    assert warnings_named(logs, "map_missing_post_ids")[0]["ids"] == [chunk[-1]]


# --- 3. medium scoring returns nothing on failure (seed 001, phase 2) --------------------------


@pytest.mark.parametrize("kind", [None, "429", "timeout", "invalid_json", "refusal"])
def test_medium_scoring_failures_select_nothing_and_the_answer_goes_on(
    kind: FaultKind | None, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("MediumScores", kind) if kind else None)
    with capture_logs() as logs:
        response = _expert(serve(responder), store, ExpertsConfig(), timeout=client_timeout(kind))

    assert response.counts["medium"] == 4
    assert response.counts["medium_selected"] == (2 if kind is None else 0)
    assert len(warnings_named(logs, "medium_scoring_failed")) == (0 if kind is None else 1)
    assert response.status == "ok" and post_markers(response.answer)
    assert responder.count("ReduceDraft") == 1
    _assert_valid_expert(response, store)


# --- 4. reduce, language, comment groups, comment synthesis ------------------------------------


def _alpha_only(body: dict[str, Any]) -> bool:
    return "t.me/alpha_ch" in str(body["messages"][0]["content"])


@pytest.mark.parametrize("kind", ["500", "invalid_json", "refusal", "wrong_length"])
def test_a_failed_reduce_fails_that_expert_alone(
    kind: FaultKind, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("ReduceDraft", kind, where=_alpha_only))
    server = serve(responder)

    async def work(engine: OpenAICompatEngine) -> list[ExpertResponse]:
        return await run_panel(
            QUESTION, ["alpha", "beta"], store=store, engine=engine, config=ExpertsConfig(),
            sleep=SleepRecorder(),
        )  # fmt: skip

    alpha, beta = asyncio.run(with_engine(server, work))

    # reduce.py: "Engine errors propagate: without an answer there is nothing to degrade to";
    # run_panel turns them into this expert's failed response, with the reason.
    assert alpha.status == "failed" and alpha.answer == "" and alpha.engine == "openai"
    assert "chat endpoint" in alpha.notes[0] or "ReduceTask" in alpha.notes[0]
    assert beta.status == "ok" and post_markers(beta.answer) and beta.comment_sections
    for response in (alpha, beta):
        _assert_valid_expert(response, store)


@pytest.mark.parametrize("kind", [None, "500", "timeout", "wrong_length", "refusal"])
def test_a_failed_translation_keeps_the_original_answer_with_a_note(
    kind: FaultKind | None, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("Translation", kind) if kind else None)
    response = _expert(
        serve(responder), store, ExpertsConfig(), question=QUESTION_RU, timeout=client_timeout(kind)
    )

    assert responder.count("Translation") >= 1  # English answer, Russian question
    if kind is None:
        assert response.language == "ru" and response.answer.startswith("Автор рекомендует")
    else:
        assert response.language == "en" and response.answer.startswith("I use it every day")
        assert any("translation failed" in note for note in response.notes)
    assert response.status == "ok" and post_markers(response.answer)
    _assert_valid_expert(response, store)


@pytest.mark.parametrize("kind", [None, "500", "wrong_length", "invalid_json"])
def test_a_failed_comment_group_filter_costs_only_the_drift_groups(
    kind: FaultKind | None, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("RelevantGroups", kind) if kind else None)
    response = _expert(serve(responder), store, ExpertsConfig())

    kinds = [s.kind for s in response.comment_sections]
    assert response.counts["author_clarifications"] == response.counts["community_comments"] == 2
    if kind is None:
        assert response.counts["drift_groups"] == 2
        assert kinds == ["expert_notes", "community_notes", "expert_drift", "community_opinions"]
    else:
        assert response.counts["drift_groups"] == 0 and kinds == ["expert_notes", "community_notes"]
        assert any("drift comment groups left out" in note for note in response.notes)
    assert response.status == "ok"
    _assert_valid_expert(response, store)


@pytest.mark.parametrize("kind", ["500", "refusal", "length", "invalid_json"])
def test_a_failed_comment_synthesis_quotes_the_comments_instead(
    kind: FaultKind, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    store = expert_store()
    responder = TaskResponder(FaultWhere("SectionTexts", kind))
    response = _expert(serve(responder), store, ExpertsConfig())

    sections = response.comment_sections
    assert [s.kind for s in sections] == [
        "expert_notes", "community_notes", "expert_drift", "community_opinions",
    ]  # fmt: skip
    assert all(s.text.startswith("Extractive (the synthesis failed)") for s in sections)
    assert any("comment synthesis failed" in note for note in response.notes)
    assert response.status == "ok" and not response.removed_citations
    _assert_valid_expert(response, store)


def _expert(
    server: ChatCompletionsServer,
    store: Any,
    config: ExpertsConfig,
    *,
    question: str = QUESTION,
    timeout: float = 10.0,
    retries: int = 1,
) -> ExpertResponse:
    async def work(engine: OpenAICompatEngine) -> ExpertResponse:
        return await run_expert(
            question, "alpha", store=store, engine=engine, config=config, sleep=SleepRecorder()
        )

    return asyncio.run(with_engine(server, work, timeout=timeout, retries=retries))


def _assert_valid_expert(response: ExpertResponse, store: Any) -> None:
    """Valid JSON, and every citation names this expert's own post or the section's comment."""
    assert ExpertResponse.model_validate_json(response.model_dump_json()) == response
    own_posts = {str(p.post_id) for p in store.posts(response.expert_id)}
    sources = {str(s.post_id) for s in response.main_sources}
    assert post_markers(response.answer) <= sources <= own_posts
    own_comments = {c.comment_id for c in store.all_comments(response.expert_id)}
    for section in response.comment_sections:
        assert set(section.comment_ids) <= own_comments
        assert {int(c) for c in COMMENT_MARKER.findall(section.text)} <= set(section.comment_ids)


# --- 5. the Reddit branch falls back stage by stage, and returns what it has at its bound ----

REDDIT_FORMULATION = Formulation(["plaud note", "phone recording app"], ["gadgets", "productivity"])


def _reddit_branch(
    server: ChatCompletionsServer,
    archive: Path,
    *,
    timeout: float = 10.0,
    **config: Any,
) -> AskRun:
    """A Reddit-only research run (the one pipeline) against the local chat server."""
    source = ArchiveSource(archive)

    async def work(engine: OpenAICompatEngine) -> AskRun:
        deps = AskDeps(
            settings=engine_settings(server, timeout=timeout, retries=1), engine=engine,
            source=source, candidates=subreddit_profiles(archive),
            reddit_config=RedditConfig(**config),
        )  # fmt: skip
        return await run_research(QUESTION, deps)

    try:
        return asyncio.run(with_engine(server, work, timeout=timeout))
    finally:
        source.close()


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        (None, None),
        ("FormulationDraft", "500"),
        ("FormulationDraft", "refusal"),
        ("RelevanceVerdicts", "wrong_length"),
        ("RelevanceVerdicts", "429"),
        ("AnswerDraft", "invalid_json"),
        ("AnswerDraft", "disconnect"),
    ],
)
def test_each_reddit_branch_stage_falls_back_when_its_call_fails(
    schema: str | None,
    kind: FaultKind | None,
    demo_archive: Path,
    serve: Callable[[TaskResponder], ChatCompletionsServer],
) -> None:
    responder = TaskResponder(
        FaultWhere(schema, kind) if schema and kind else None, formulation=REDDIT_FORMULATION
    )
    run = _reddit_branch(serve(responder), demo_archive, drill_top=4, drill_comments=10)
    assert run.result.reddit_response is not None
    response = RedditResponse.model_validate_json(run.result.reddit_response.model_dump_json())

    assert response == run.result.reddit_response
    assert response.ranked and response.threads_drilled == 4  # every case still searched
    analysis = response.analysis
    assert analysis is not None
    if schema is None:
        assert response.status == "ok" and not response.errors
    else:
        assert response.status == "partial" and len(response.errors) == 1
    if schema == "FormulationDraft":
        assert "used keyword rules instead" in response.errors[0]
        assert "plaud note review" not in analysis.ai_queries  # the rules wrote the queries
    # an archive is searched across every subreddit it holds, whoever formulated the question
    assert analysis.subreddits == [p.name for p in subreddit_profiles(demo_archive)]
    assert response.rerank_fell_back == (schema == "RelevanceVerdicts")
    if schema == "RelevanceVerdicts":
        assert "ranked by lexical relevance instead" in response.errors[0]
    if schema == "AnswerDraft":
        assert response.synthesis is None and "synthesis failed" in response.errors[0]
    else:
        assert response.synthesis is not None and response.synthesis.sources
    _assert_grounded_reddit(run)


def test_the_rules_pick_the_communities_sharing_the_questions_words() -> None:
    profiles = [
        SubredditProfile(name="apacheairflow", description="Airflow vs Dagster for DAGs"),
        SubredditProfile(name="productivity", description="Plaud Note export to Notion"),
        SubredditProfile(name="gadgets", description="Plaud Note vs phone voice recorder"),
    ]

    assert topical_subreddits(QUESTION, profiles, 3) == ["gadgets", "productivity"]
    assert topical_subreddits(QUESTION, profiles, 1) == ["gadgets"]
    assert topical_subreddits("Which zyxwvut flange fits?", profiles, 3) == []


def test_a_stalled_engine_returns_what_the_reddit_branch_had_at_its_bound(
    demo_archive: Path, serve: Callable[[TaskResponder], ChatCompletionsServer]
) -> None:
    responder = TaskResponder(FaultWhere("AnswerDraft", "timeout"), formulation=REDDIT_FORMULATION)
    run = _reddit_branch(serve(responder), demo_archive, timeout=60.0, timeout_s=3.0, drill_top=3)
    response = run.result.reddit_response
    assert response is not None

    assert responder.count("AnswerDraft") == 1  # the stalled call was cut, never retried
    assert response.timed_out and response.status == "partial" and response.synthesis is None
    assert "3 s bound during synthesize" in response.errors[-1]
    assert response.ranked and response.threads_drilled == 3  # what existed is returned
    assert run.evidence is not None and len(run.evidence.posts) == 3
    assert RedditResponse.model_validate_json(response.model_dump_json()) == response


def _assert_grounded_reddit(run: AskRun) -> None:
    """Every source of the synthesis is a drilled thread or comment; [n] numbers a source."""
    assert run.result.reddit_response is not None
    synthesis = run.result.reddit_response.synthesis
    if synthesis is None:
        return
    drilled = {p.url for p in run.evidence.posts}
    comments = {f"{p.url}{c.comment_id}/" for p in run.evidence.posts for c in p.comments}
    assert {s.url for s in synthesis.sources} <= drilled | comments
    numbers = {int(n) for n in NUMBER_MARKER.findall(synthesis.summary.marked())}
    assert numbers <= set(range(1, len(synthesis.sources) + 1))
    for claim in [*synthesis.hidden_gems, *synthesis.minority_report]:
        assert claim.sources and set(claim.sources) <= drilled | comments


# --- 6. a whole research run where any call may fail -------------------------------------------


@pytest.mark.parametrize("seed", [7, 2026])
def test_a_research_run_with_random_faults_still_returns_grounded_json(
    seed: int,
    demo_archive: Path,
    tmp_path: Path,
    serve: Callable[[TaskResponder], ChatCompletionsServer],
) -> None:
    policy: FaultPolicy = RandomFaults(seed, rate=0.3)
    responder = TaskResponder(policy, formulation=REDDIT_FORMULATION)
    server = serve(responder)
    experts = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.db'}")
    expert_ids = ensure_demo_experts(experts)
    source = ArchiveSource(demo_archive)

    async def work(engine: OpenAICompatEngine) -> AskRun:
        deps = AskDeps(
            settings=engine_settings(server, timeout=TIMEOUT_S, retries=1), engine=engine,
            source=source, candidates=subreddit_profiles(demo_archive), expert_store=experts,
            experts_config=ExpertsConfig(map_rate_limit_sleep_s=0.0, map_backoff_s=0.0),
            reddit_config=RedditConfig(drill_top=5, drill_comments=20),
        )  # fmt: skip
        return await run_research(QUESTION, deps, experts=expert_ids)

    try:
        run = asyncio.run(with_engine(server, work, timeout=TIMEOUT_S))
    finally:
        source.close()
    result = run.result
    data = json.loads(result.model_dump_json())

    assert responder.faults and responder.unknown == []  # faults were served, every task known
    assert ResearchResult.model_validate(data) == result
    assert result.status in ("ok", "partial", "error")
    assert [r.expert_id for r in result.expert_responses] == expert_ids
    for response in result.expert_responses:
        assert response.status in ("ok", "partial", "no_results", "failed")
        assert response.status != "failed" or response.notes  # a failure says why
        _assert_valid_expert(response, experts)
    assert result.reddit_response is not None
    _assert_grounded_reddit_response(result.reddit_response, run)
    summary = result.summary
    if summary is not None:
        evidence = {p.id: p.url for p in run.evidence.posts}
        assert {str(s.url) for s in summary.sources} <= set(evidence.values())
        texts = [t.marked() for t in [summary.summary, *summary.highlights, *summary.cautions]]
        assert post_markers(*texts) <= set(evidence)
    experts.close()


def _assert_grounded_reddit_response(response: RedditResponse, run: AskRun) -> None:
    synthesis = response.synthesis
    if synthesis is None:
        return
    drilled = {p.url: {c.comment_id for c in p.comments} for p in run.evidence.posts}
    numbers = {int(n) for n in NUMBER_MARKER.findall(synthesis.summary.marked())}
    assert numbers <= set(range(1, len(synthesis.sources) + 1))
    for source in synthesis.sources:
        if source.kind == "thread":
            assert source.url in drilled
        else:  # <thread permalink><comment id>/
            thread, comment_id = source.url.rsplit("/", 2)[0] + "/", source.id
            assert source.url == f"{thread}{comment_id}/" and comment_id in drilled[thread]
