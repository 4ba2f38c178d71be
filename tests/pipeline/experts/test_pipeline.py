"""The Experts Panel end to end: phases 1-7 per expert, experts in parallel, kept apart.

The scripted engine here (``_PlBrain``) answers every task type the way a well-behaved LLM
would (keyword marks, honest citations, faithful translations), with knobs to make it
misbehave (plant citations, fail a phase). Every assertion is about what reaches the user's
``ExpertResponse`` or what the engine was asked, never about one phase's internals.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import CrowdsiftError, EngineTransportError
from crowdsift.engines.base import EngineName, EngineReply, OutT, Task
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts.comments import CommentGroupsTask
from crowdsift.pipeline.experts.language import TranslateTask
from crowdsift.pipeline.experts.map import MapTask
from crowdsift.pipeline.experts.medium import MediumScoringTask
from crowdsift.pipeline.experts.pipeline import run_expert, run_panel
from crowdsift.pipeline.experts.reduce import ReduceTask
from crowdsift.pipeline.experts.synthesis import CommentSynthesisTask
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import ensure_demo_experts
from crowdsift.sources.experts.models import (
    DriftGroup,
    Expert,
    ExpertComment,
    ExpertPost,
    ExpertResponse,
    ExpertStore,
    PostLink,
    Relevance,
)
from crowdsift.testing.expert_store import MemoryExpertStore

NOW = datetime(2030, 1, 15, 12, tzinfo=UTC)
"""The injected clock. Years ahead of the real one, so a phase reading ``datetime.now()``
instead of the clock would see a different recent-only window and fail the tests."""
QUESTION = "Which vector database should I use for RAG?"
QUESTION_RU = "Какую векторную базу данных выбрать для RAG?"
ALPHA = Expert(expert_id="alpha", name="Alpha Notes", channel="alpha_ch", language="en")
BETA = Expert(expert_id="beta", name="Beta Notes", channel="beta_ch", language="en")
PHASES = {"map", "medium_scoring", "resolve", "reduce", "language", "comment_groups",
          "comment_synthesis"}  # fmt: skip
_MARKER = re.compile(r"\[post:(\d+)\]")
_TRANSLATED = "Автор объясняет, почему выбрал именно это решение и как оно работает на практике."


def _pl_clock() -> datetime:
    return NOW


def _pl_config(**overrides: Any) -> ExpertsConfig:
    return ExpertsConfig(**{"recent_days": 30, **overrides})


# --- building archives -------------------------------------------------------------------


def _pl_post(expert: Expert, post_id: int, text: str, days_ago: float) -> ExpertPost:
    return ExpertPost(
        expert_id=expert.expert_id, post_id=post_id, text=text,
        date=NOW - timedelta(days=days_ago), url=f"https://t.me/{expert.channel}/{post_id}",
    )  # fmt: skip


def _pl_comment(
    expert: Expert, comment_id: int, post_id: int, text: str, *, by_expert: bool = False,
    days_ago: float = 1.0,
) -> ExpertComment:  # fmt: skip
    return ExpertComment(
        expert_id=expert.expert_id, comment_id=comment_id, post_id=post_id,
        author=expert.name if by_expert else f"reader{comment_id}", author_is_expert=by_expert,
        text=text, date=NOW - timedelta(days=days_ago),
    )  # fmt: skip


def _pl_link(expert: Expert, source: int, target: int, kind: str = "reply") -> PostLink:
    return PostLink.model_validate(
        {"expert_id": expert.expert_id, "source_id": source, "target_id": target, "kind": kind}
    )


@dataclass
class _PlArchive:
    """One expert's rows, loadable into either store."""

    expert: Expert
    posts: list[ExpertPost]
    links: list[PostLink] = field(default_factory=list)
    comments: list[ExpertComment] = field(default_factory=list)
    drift: list[DriftGroup] = field(default_factory=list)


def _pl_load(store: MemoryExpertStore | SqlExpertStore, archives: Iterable[_PlArchive]) -> None:
    for a in archives:
        if isinstance(store, SqlExpertStore):
            store.write_import(a.expert, a.posts, a.links, a.comments)
        else:
            store.add_expert(a.expert)
            store.add_posts(a.posts)
            store.add_links(a.links)
            store.add_comments(a.comments)
        store.replace_drift_groups(a.expert.expert_id, a.drift)


_HAPPY_POSTS = {  # post id: (text, days before NOW)
    9: ("Why I stopped running a separate search cluster next to the main database.", 40),
    10: ("For RAG I use pgvector: one database less to run, and recall is fine for two "
         "million vectors.", 10),
    11: ("Postgres tuning notes: shared_buffers at a quarter of RAM and work_mem sized per "
         "query.", 20),
    12: ("My sourdough starter doubled overnight and the bread came out great.", 5),
    13: ("Weekend trip photos from the mountains are up on the blog.", 2),
}  # fmt: skip
_HAPPY_COMMENTS = [  # (comment id, post id, text, by the expert, days before NOW)
    (1001, 10, "Clarification: use an HNSW index, not IVFFlat, below a million vectors.",
     True, 9),
    (1002, 10, "We run pgvector with two million rows on a small VM and it holds up fine.",
     False, 8),
    (1003, 10, "+1", False, 8),
    (1005, 12, "Has anyone compared Qdrant with pgvector for hybrid search?", False, 4),
    (1006, 12, "Qdrant was faster for filtering in my test, but it is another service to run.",
     True, 4),
]  # fmt: skip


def _pl_happy_archive() -> _PlArchive:
    """alpha: 10 (HIGH) replies to 9 (LOW, older); 11 MEDIUM; 12, 13 LOW. Comments under 10:
    the expert's clarification, a reader's note, a '+1'; a drift group under 12."""
    a = ALPHA
    return _PlArchive(
        expert=a,
        posts=[_pl_post(a, pid, text, days) for pid, (text, days) in _HAPPY_POSTS.items()],
        links=[_pl_link(a, 10, 9, "reply")],
        comments=[
            _pl_comment(a, cid, pid, text, by_expert=mine, days_ago=days)
            for cid, pid, text, mine, days in _HAPPY_COMMENTS
        ],
        drift=[
            DriftGroup(
                expert_id="alpha",
                group_id="12-1",
                post_id=12,
                topic="vector databases compared",
                keywords=["qdrant", "pgvector"],
                comment_ids=[1005, 1006],
                date=NOW - timedelta(days=4),
            ),
        ],
    )


# --- the scripted engine -----------------------------------------------------------------


class _PlBrain:
    """Answers each task type as a well-behaved LLM would; ``planted`` makes reduce cite ids
    that are not in its context (per expert); ``fail_reduce_for`` makes reduce fail."""

    def __init__(
        self,
        *,
        high: Sequence[str] = ("pgvector",),
        medium: Sequence[str] = ("postgres",),
        medium_score: float = 0.9,
        planted: dict[str, list[int]] | None = None,
        fail_reduce_for: Iterable[str] = (),
    ) -> None:
        self.high, self.medium, self.medium_score = high, medium, medium_score
        self.planted = planted or {}
        self.fail_reduce_for = set(fail_reduce_for)

    def mark(self, text: str) -> str:
        lowered = text.lower()
        if any(word in lowered for word in self.high):
            return "HIGH"
        return "MEDIUM" if any(word in lowered for word in self.medium) else "LOW"

    def __call__(self, task: Task[Any]) -> Any:
        if isinstance(task, MapTask):
            return {"posts": [{"post_id": p.post_id, "relevance": self.mark(p.text),
                               "reason": "keyword"} for p in task.posts]}  # fmt: skip
        if isinstance(task, MediumScoringTask):
            return {"scores": [{"post_id": p.post_id, "score": self.medium_score}
                               for p in task.posts]}  # fmt: skip
        if isinstance(task, ReduceTask):
            if task.expert.expert_id in self.fail_reduce_for:
                return EngineTransportError("503 Service Unavailable from the endpoint")
            lines = [
                f"- The author explains the {p.relevance.value.lower()} point of this topic "
                f"in some detail [post:{p.post.post_id}]."
                for p in task.posts
            ]
            lines += [
                f"- The author also wrote about this elsewhere [post:{post_id}]."
                for post_id in self.planted.get(task.expert.expert_id, [])
            ]
            return {"answer": "\n".join(lines)}
        if isinstance(task, TranslateTask):
            markers = " ".join(dict.fromkeys(re.findall(r"\[post:\d+\]", task.answer)))
            return {"text": f"{_TRANSLATED} {markers}"}
        if isinstance(task, CommentGroupsTask):
            return {"group_ids": [g.group_id for g in task.groups]}
        if isinstance(task, CommentSynthesisTask):
            return {
                kind: f"The discussion adds a useful point [comment:{comments[0].comment_id}]."
                for kind, comments in task.sections
            }
        raise AssertionError(f"unexpected task {type(task).__name__}")


def _pl_scripted(**brain: Any) -> ScriptedEngine:
    return ScriptedEngine(function=_PlBrain(**brain))


def _pl_of(engine: ScriptedEngine, kind: type[Any]) -> list[Any]:
    return [t for t in engine.requests if isinstance(t, kind)]


def _pl_owners(task: Task[Any]) -> set[str]:
    """Whose rows a task carries (empty for tasks that carry no expert data)."""
    if isinstance(task, MapTask | MediumScoringTask):
        return {p.expert_id for p in task.posts}
    if isinstance(task, ReduceTask):
        return {task.expert.expert_id} | {p.post.expert_id for p in task.posts}
    if isinstance(task, CommentSynthesisTask):
        return {c.expert_id for _, comments in task.sections for c in comments}
    return set()


def _pl_cited(answer: str) -> list[int]:
    return [int(m) for m in _MARKER.findall(answer)]


def _pl_run(
    store: ExpertStore, engine: Any, question: str = QUESTION, expert_id: str = "alpha",
    **kwargs: Any,
) -> ExpertResponse:  # fmt: skip
    config = kwargs.pop("config", _pl_config())
    return asyncio.run(
        run_expert(question, expert_id, store=store, engine=engine, config=config,
                   clock=_pl_clock, **kwargs)
    )  # fmt: skip


@pytest.fixture
def happy_store() -> MemoryExpertStore:
    store = MemoryExpertStore()
    _pl_load(store, [_pl_happy_archive()])
    return store


# --- 1. the happy path -------------------------------------------------------------------


def test_happy_path_runs_every_phase_and_cites_only_context(
    happy_store: MemoryExpertStore,
) -> None:
    engine = _pl_scripted()
    response = _pl_run(happy_store, engine)

    assert response.status == "ok" and response.engine == "scripted"
    assert response.expert_id == "alpha" and response.language == "en"
    assert response.removed_citations == [] and response.notes == []
    # the engine was asked once per phase, in pipeline order; no translation (same language)
    assert [type(t).__name__ for t in engine.requests] == [
        "MapTask", "MediumScoringTask", "ReduceTask", "CommentGroupsTask",
        "CommentSynthesisTask",
    ]  # fmt: skip
    (map_task,) = _pl_of(engine, MapTask)
    assert sorted(p.post_id for p in map_task.posts) == [9, 10, 11, 12, 13]
    # reduce context: HIGH, selected MEDIUM, then the post 10 replies to (CONTEXT)
    (reduce_task,) = _pl_of(engine, ReduceTask)
    context = [(p.post.post_id, p.relevance) for p in reduce_task.posts]
    assert context == [(10, Relevance.HIGH), (11, Relevance.MEDIUM), (9, Relevance.CONTEXT)]
    assert reduce_task.expert == ALPHA
    # the answer cites only context posts; main sources are those, in citation order
    assert _pl_cited(response.answer) == [10, 11, 9]
    assert [s.url for s in response.main_sources] == [
        "https://t.me/alpha_ch/10", "https://t.me/alpha_ch/11", "https://t.me/alpha_ch/9",
    ]  # fmt: skip
    assert [s.relevance for s in response.main_sources] == [
        Relevance.HIGH, Relevance.MEDIUM, Relevance.CONTEXT,
    ]  # fmt: skip
    assert response.main_sources[0].excerpt.startswith("For RAG I use pgvector")
    expected_counts = {
        "posts": 5, "high": 1, "medium": 1, "low": 3, "map_failed": 0, "medium_selected": 1,
        "context": 1, "reduce_context": 3, "author_clarifications": 1,
        "community_comments": 1, "drift_groups": 1, "llm_calls": 5,
    }  # fmt: skip
    assert {key: response.counts.get(key) for key in expected_counts} == expected_counts
    assert set(response.timings_ms) == PHASES
    assert all(ms >= 0 for ms in response.timings_ms.values())
    # phase 6 offered the drift group of a non-source post; phase 7 wrote four sections
    (groups_task,) = _pl_of(engine, CommentGroupsTask)
    assert [g.group_id for g in groups_task.groups] == ["12-1"]
    sections = [(s.kind, s.title, s.comment_ids) for s in response.comment_sections]
    assert sections == [
        ("expert_notes", "Notes from the expert", [1001]),
        ("community_notes", "Notes from the community", [1002]),  # "+1" is not a note
        ("expert_drift", "Additional comments from the expert", [1006]),
        ("community_opinions", "Community opinions", [1005]),
    ]


def test_happy_path_with_the_local_engine_quotes_the_relevant_post(
    happy_store: MemoryExpertStore,
) -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    config = _pl_config(map_local_high=0.3, map_local_medium=0.15)
    response = _pl_run(happy_store, engine, config=config)
    assert response.status == "ok" and response.engine == "local"
    assert response.answer.startswith("Extractive summary by the local engine (not an LLM)")
    cited = _pl_cited(response.answer)
    assert 10 in cited and set(cited) <= {9, 10, 11}  # only context posts, never 12 or 13
    assert [s.post_id for s in response.main_sources] == list(dict.fromkeys(cited))
    assert all(s.url.startswith("https://t.me/alpha_ch/") for s in response.main_sources)
    assert response.comment_sections[0].kind == "expert_notes"
    assert response.comment_sections[0].comment_ids == [1001]
    assert set(response.timings_ms) == PHASES


# --- 2. expert isolation -----------------------------------------------------------------


_TWIN_POSTS = {  # post id: (text after the signature, days before NOW)
    1: ("for RAG I use pgvector in production, one database less to run.", 3),
    2: ("older note on the search cluster we retired.", 30),
    3: ("notes from the meetup about backups and restores.", 20),
    4: ("Postgres tuning, shared_buffers at a quarter of RAM.", 10),
    5: ("my sourdough starter doubled overnight.", 8),
}
_TWIN_COMMENTS = [  # (comment id, post id, text after the signature, by the expert)
    (500, 1, "clarification: HNSW index below a million rows.", True),
    (501, 1, "reader: we run pgvector on a small VM too.", False),
    (600, 5, "reader: anyone tried Qdrant for hybrid search?", False),
    (601, 5, "clarification: Qdrant filters faster, one more service.", True),
]


def _pl_twin(expert: Expert, sig: str) -> _PlArchive:
    """Near-identical archives with the same message ids and comment ids; only the
    signature differs. Posts: 1 HIGH replies to 2; 3, 5 LOW; 4 MEDIUM; drift group on 5."""
    e = expert
    return _PlArchive(
        expert=e,
        posts=[
            _pl_post(e, pid, f"{sig}: {text}", days) for pid, (text, days) in _TWIN_POSTS.items()
        ],
        links=[_pl_link(e, 1, 2, "reply")],
        comments=[
            _pl_comment(e, cid, pid, f"{sig} {text}", by_expert=mine)
            for cid, pid, text, mine in _TWIN_COMMENTS
        ],
        drift=[
            DriftGroup(
                expert_id=e.expert_id,
                group_id="5-1",
                post_id=5,
                topic=f"{sig}: pgvector or Qdrant",
                comment_ids=[600, 601],
                date=NOW - timedelta(days=1),
            ),
        ],
    )


def _pl_twins() -> list[_PlArchive]:
    alpha, beta = _pl_twin(ALPHA, "Alpha"), _pl_twin(BETA, "Beta")
    # beta only: post 77 (HIGH), which mentions beta's post 3 (so 3 is CONTEXT for beta only)
    beta.posts.append(_pl_post(BETA, 77, "Beta: pgvector HNSW benchmarks on two million "
                               "vectors.", 1))  # fmt: skip
    beta.links.append(_pl_link(BETA, 77, 3, "mention"))
    return [alpha, beta]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def twin_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[MemoryExpertStore | SqlExpertStore]:
    """alpha and beta, overlapping ids and near-identical texts, in one store."""
    store: MemoryExpertStore | SqlExpertStore
    if request.param == "memory":
        store = MemoryExpertStore()
    elif request.param == "sqlite":
        store = SqlExpertStore(f"sqlite:///{tmp_path / 'experts.sqlite'}")
    else:
        store = SqlExpertStore(request.getfixturevalue("postgres_url"))
    _pl_load(store, _pl_twins())
    yield store
    if isinstance(store, SqlExpertStore):
        store.close()


def _pl_panel(store: ExpertStore, engine: Any, ids: Sequence[str] = ("alpha", "beta"),
              question: str = QUESTION) -> dict[str, ExpertResponse]:  # fmt: skip
    responses = asyncio.run(
        run_panel(question, list(ids), store=store, engine=engine, config=_pl_config(),
                  clock=_pl_clock)
    )  # fmt: skip
    assert [r.expert_id for r in responses] == list(ids)  # one each, in the order asked
    return {r.expert_id: r for r in responses}


def _pl_assert_own(response: ExpertResponse, expert: Expert, sig: str) -> None:
    """Every source of the response is one of this expert's posts."""
    assert response.main_sources
    for source in response.main_sources:
        assert source.url == f"https://t.me/{expert.channel}/{source.post_id}"
        assert source.excerpt.startswith(f"{sig}:")


def test_no_post_of_one_expert_appears_in_anothers_answer(
    twin_store: MemoryExpertStore | SqlExpertStore,
) -> None:
    engine = _pl_scripted()
    by_id = _pl_panel(twin_store, engine)
    alpha, beta = by_id["alpha"], by_id["beta"]

    assert alpha.status == beta.status == "ok"
    _pl_assert_own(alpha, ALPHA, "Alpha")
    _pl_assert_own(beta, BETA, "Beta")
    assert [s.post_id for s in alpha.main_sources] == [1, 4, 2]  # never beta's 77 or its 3
    assert _pl_cited(alpha.answer) == [1, 4, 2]
    assert sorted(s.post_id for s in beta.main_sources) == [1, 2, 3, 4, 77]
    assert alpha.counts["posts"] == 5 and beta.counts["posts"] == 6
    # no task the engine saw mixed the two experts' rows
    for task in engine.requests:
        assert len(_pl_owners(task)) <= 1, type(task).__name__
        if isinstance(task, CommentGroupsTask):
            owners = {g.topic.split(":")[0] for g in task.groups}
            owners |= {e.split(" ")[0] for g in task.groups for e in g.excerpts}
            assert len(owners) == 1
    reduce_owners = sorted(_pl_owners(t).pop() for t in _pl_of(engine, ReduceTask))
    assert reduce_owners == ["alpha", "beta"]
    synthesis = {_pl_owners(t).pop(): t for t in _pl_of(engine, CommentSynthesisTask)}
    assert set(synthesis) == {"alpha", "beta"}
    for owner, task in synthesis.items():
        sig = owner.capitalize()
        assert all(c.text.startswith(sig) for _, cs in task.sections for c in cs)
    for response in (alpha, beta):
        assert [s.kind for s in response.comment_sections] == [
            "expert_notes",
            "community_notes",
            "expert_drift",
            "community_opinions",
        ]


def test_a_citation_of_the_other_experts_post_is_removed(
    twin_store: MemoryExpertStore | SqlExpertStore,
) -> None:
    # 77 exists only in beta's archive; 3 is beta's context but only a LOW post of alpha's
    engine = _pl_scripted(planted={"alpha": [77, 3]})
    by_id = _pl_panel(twin_store, engine)
    alpha, beta = by_id["alpha"], by_id["beta"]

    assert alpha.status == "partial"
    assert alpha.removed_citations == ["[post:77]", "[post:3]"]
    assert "[post:77]" not in alpha.answer and "[post:3]" not in alpha.answer
    assert _pl_cited(alpha.answer) == [1, 4, 2]
    assert [s.post_id for s in alpha.main_sources] == [1, 4, 2]
    _pl_assert_own(alpha, ALPHA, "Alpha")
    assert beta.status == "ok" and beta.removed_citations == []
    _pl_assert_own(beta, BETA, "Beta")


# --- 3. nothing relevant -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("brain", "scoring_calls"),
    [
        ({"high": (), "medium": ()}, 0),  # everything LOW: medium scoring is not even asked
        ({"high": (), "medium": ("postgres",), "medium_score": 0.5}, 1),  # below 0.7
    ],
)
def test_no_relevant_posts_means_no_results_and_no_reduce(
    happy_store: MemoryExpertStore, brain: dict[str, Any], scoring_calls: int
) -> None:
    engine = _pl_scripted(**brain)
    response = _pl_run(happy_store, engine)
    assert response.status == "no_results"
    assert response.answer == "" and response.main_sources == []
    assert response.comment_sections == [] and response.removed_citations == []
    assert response.notes == ["no post of this expert is relevant to the question"]
    assert response.counts["posts"] == 5 and response.counts["high"] == 0
    assert response.counts["medium_selected"] == 0
    assert len(_pl_of(engine, MediumScoringTask)) == scoring_calls
    assert [
        type(t) for t in engine.requests if not isinstance(t, MapTask | MediumScoringTask)
    ] == []
    assert set(response.timings_ms) == {"map", "medium_scoring", "resolve"}
    assert response.engine == "scripted"


# --- map failures --------------------------------------------------------------------------


class _PlSleeps:
    """The injected sleep: records what it was asked to wait, waits nothing."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _pl_map_failing(post_ids: set[int]) -> ScriptedEngine:
    """The brain, except map chunks holding any of ``post_ids`` always hit a quota error."""
    brain = _PlBrain()

    def respond(task: Task[Any]) -> Any:
        if isinstance(task, MapTask) and any(p.post_id in post_ids for p in task.posts):
            return EngineTransportError("429: rate limit exceeded", status=429)
        return brain(task)

    return ScriptedEngine(function=respond)


def test_a_map_chunk_that_keeps_failing_makes_the_answer_partial(
    happy_store: MemoryExpertStore,
) -> None:
    engine, sleeps = _pl_map_failing({12}), _PlSleeps()
    config = _pl_config(map_chunk_size=2, map_max_retries=0, map_rate_limit_sleep_s=0.5)
    response = _pl_run(happy_store, engine, config=config, sleep=sleeps)
    # chunks newest first: (13, 12) fails (quota pause + retry, then once more on requeue)
    assert sleeps.waits == [0.5, 0.5]  # the pipeline passed its injected sleep to map
    assert response.status == "partial"
    assert response.counts["map_failed"] == 2 and response.counts["high"] == 1
    assert "2 posts could not be scored (map chunks failed twice)" in response.notes
    assert _pl_cited(response.answer) == [10, 11, 9]  # the rest still answered


def test_when_no_post_could_be_scored_the_expert_failed_not_no_results(
    happy_store: MemoryExpertStore,
) -> None:
    engine, sleeps = _pl_map_failing({9, 10, 11, 12, 13}), _PlSleeps()
    config = _pl_config(map_chunk_size=2, map_max_retries=0, map_rate_limit_sleep_s=0.5)
    response = _pl_run(happy_store, engine, config=config, sleep=sleeps)
    assert response.counts["map_failed"] == 5
    assert "no post of this expert is relevant to the question" not in response.notes
    assert response.status == "failed"


# --- 4. recent-only ----------------------------------------------------------------------


@pytest.fixture
def dated_store() -> MemoryExpertStore:
    """alpha: 2 (HIGH, 5 days old) replies to 1 (LOW, 100 days); 3 (LOW, 10 days) mentions
    2; 4 (HIGH, 200 days); 5 (LOW, 120 days) with a drift group 100 days old."""
    a = ALPHA
    store = MemoryExpertStore()
    _pl_load(store, [_PlArchive(
        expert=a,
        posts=[
            _pl_post(a, 1, "Why I retired the search cluster last winter.", 100),
            _pl_post(a, 2, "Follow-up: pgvector with an HNSW index is fast enough for RAG.", 5),
            _pl_post(a, 3, "Meetup notes: people asked me about the new setup.", 10),
            _pl_post(a, 4, "First look at pgvector for RAG, an early experiment.", 200),
            _pl_post(a, 5, "My sourdough starter doubled overnight.", 120),
        ],
        links=[_pl_link(a, 2, 1, "reply"), _pl_link(a, 3, 2, "mention")],
        comments=[
            _pl_comment(a, 700, 5, "Which vector database do you use for bread recipes?",
                        days_ago=101),
            _pl_comment(a, 701, 5, "pgvector, naturally, for every recipe search.",
                        by_expert=True, days_ago=100),
        ],
        drift=[DriftGroup(expert_id="alpha", group_id="5-1", post_id=5, topic="recipes",
                          comment_ids=[700, 701], date=NOW - timedelta(days=100))],
    )])  # fmt: skip
    return store


def _pl_reduce_context(engine: ScriptedEngine) -> list[tuple[int, Relevance]]:
    (task,) = _pl_of(engine, ReduceTask)
    return [(p.post.post_id, p.relevance) for p in task.posts]


def _pl_mapped_ids(engine: ScriptedEngine) -> set[int]:
    return {p.post_id for t in _pl_of(engine, MapTask) for p in t.posts}


def test_recent_only_uses_the_injected_clock_for_every_phase(
    dated_store: MemoryExpertStore,
) -> None:
    engine = _pl_scripted()
    response = _pl_run(dated_store, engine, use_recent_only=True)  # 30 days before NOW
    assert response.status == "ok"
    assert _pl_mapped_ids(engine) == {2, 3}  # map never saw 1, 4 or 5
    # resolve: 3 (recent) is pulled in, 1 (the older post 2 replies to) is not
    assert _pl_reduce_context(engine) == [(2, Relevance.HIGH), (3, Relevance.CONTEXT)]
    assert response.counts["posts"] == 2 and response.counts["context"] == 1
    assert [s.post_id for s in response.main_sources] == [2, 3]
    assert _pl_of(engine, CommentGroupsTask) == []  # the only drift group is 100 days old
    assert response.counts["drift_groups"] == 0


def test_without_recent_only_the_old_posts_take_part(dated_store: MemoryExpertStore) -> None:
    """The counterpart of the test above: the same archive, every post."""
    engine = _pl_scripted()
    response = _pl_run(dated_store, engine)
    assert _pl_mapped_ids(engine) == {1, 2, 3, 4, 5}
    assert _pl_reduce_context(engine) == [
        (2, Relevance.HIGH), (4, Relevance.HIGH), (3, Relevance.CONTEXT), (1, Relevance.CONTEXT),
    ]  # fmt: skip
    (groups_task,) = _pl_of(engine, CommentGroupsTask)
    assert [g.group_id for g in groups_task.groups] == ["5-1"]
    assert response.counts["posts"] == 5 and response.counts["drift_groups"] == 1


# --- 5. language -------------------------------------------------------------------------


def test_an_english_answer_to_a_russian_question_is_translated(
    happy_store: MemoryExpertStore,
) -> None:
    engine = _pl_scripted()
    response = _pl_run(happy_store, engine, question=QUESTION_RU)
    (translate,) = _pl_of(engine, TranslateTask)
    assert (translate.source_language, translate.target_language) == ("en", "ru")
    (reduce_task,) = _pl_of(engine, ReduceTask)
    assert translate.answer.startswith("- The author explains the high point")
    assert response.status == "ok" and response.language == "ru"
    assert response.answer == f"{_TRANSLATED} [post:10] [post:11] [post:9]"
    assert [s.post_id for s in response.main_sources] == [10, 11, 9]
    assert response.notes == []
    # the comment sections' titles follow the question's language
    assert [s.title for s in response.comment_sections] == [
        "Заметки эксперта", "Заметки сообщества", "Дополнительные комментарии эксперта",
        "Мнения сообщества",
    ]  # fmt: skip
    assert response.counts["llm_calls"] == 6
    assert len(reduce_task.posts) == 3


def test_the_local_engine_reports_a_language_mismatch(happy_store: MemoryExpertStore) -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    config = _pl_config(map_local_high=0.3, map_local_medium=0.15)
    response = _pl_run(happy_store, engine, question="Что автор думает про pgvector для RAG?",
                       config=config)  # fmt: skip
    assert response.status == "ok"
    assert "For RAG I use pgvector" in response.answer  # quoted, untranslated
    assert response.language == "en"  # what the answer really is
    assert response.notes == [
        "the answer is in English while the question is in Russian; "
        "the local engine cannot translate"
    ]


# --- 6. the panel ------------------------------------------------------------------------


class _PlOverlapEngine:
    """Wraps a scripted engine; every call takes 50 ms, and it records how many calls, and
    calls of how many different experts, were in flight at once."""

    name: EngineName = "scripted"

    def __init__(self, inner: ScriptedEngine) -> None:
        self.inner = inner
        self.in_flight: list[set[str]] = []
        self.max_in_flight = 0
        self.max_experts_in_flight = 0

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        owners = _pl_owners(task)
        self.in_flight.append(owners)
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        experts = set().union(*self.in_flight)
        self.max_experts_in_flight = max(self.max_experts_in_flight, len(experts))
        try:
            await asyncio.sleep(0.05)
            return await self.inner.run(task)
        finally:
            self.in_flight.remove(owners)

    async def aclose(self) -> None:
        """Nothing to release."""


def test_panel_runs_experts_concurrently_and_reports_an_unknown_one(
    twin_store: MemoryExpertStore | SqlExpertStore,
) -> None:
    engine = _PlOverlapEngine(_pl_scripted())
    by_id = _pl_panel(twin_store, engine, ids=("alpha", "ghost", "beta"))
    ghost = by_id["ghost"]
    assert ghost.status == "failed" and ghost.engine == "scripted"
    assert ghost.answer == "" and ghost.main_sources == []
    assert len(ghost.notes) == 1 and "'ghost'" in ghost.notes[0]
    assert "crowdsift experts list" in ghost.notes[0]
    assert by_id["alpha"].status == by_id["beta"].status == "ok"
    _pl_assert_own(by_id["alpha"], ALPHA, "Alpha")
    _pl_assert_own(by_id["beta"], BETA, "Beta")
    assert engine.max_in_flight > 1
    assert engine.max_experts_in_flight == 2  # alpha's and beta's calls overlapped


def test_one_experts_engine_failure_keeps_the_others_answer(
    twin_store: MemoryExpertStore | SqlExpertStore,
) -> None:
    engine = _pl_scripted(fail_reduce_for={"beta"})
    by_id = _pl_panel(twin_store, engine)
    assert by_id["beta"].status == "failed"
    assert any("503" in note for note in by_id["beta"].notes)
    assert by_id["alpha"].status == "ok" and _pl_cited(by_id["alpha"].answer) == [1, 4, 2]


def test_run_expert_raises_a_clear_error_for_an_unknown_expert(
    happy_store: MemoryExpertStore,
) -> None:
    engine = _pl_scripted()
    with pytest.raises(CrowdsiftError, match="no expert 'ghost'"):
        _pl_run(happy_store, engine, expert_id="ghost")
    assert engine.requests == []


# --- 7. the bundled demo experts ---------------------------------------------------------


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlExpertStore]:
    store = SqlExpertStore(f"sqlite:///{tmp_path_factory.mktemp('demo') / 'experts.sqlite'}")
    ensure_demo_experts(store)
    yield store
    store.close()


DEMO_CONFIG = {"map_local_high": 0.3, "map_local_medium": 0.15}


def test_a_demo_expert_answers_a_demo_topic_from_its_own_posts(
    demo_store: SqlExpertStore,
) -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    response = asyncio.run(
        run_expert("Airflow or Dagster for a small team?", "homelab_field_notes",
                   store=demo_store, engine=engine, config=ExpertsConfig(**DEMO_CONFIG))
    )  # fmt: skip
    assert response.status == "ok"
    own = {p.post_id: p for p in demo_store.posts("homelab_field_notes")}
    assert response.counts["posts"] == len(own)
    assert response.main_sources
    for source in response.main_sources:
        assert source.url == f"https://t.me/homelab_field_notes/{source.post_id}"
        assert source.post_id in own
    cited = _pl_cited(response.answer)
    assert cited and set(cited) <= {s.post_id for s in response.main_sources}
    assert "dagster" in response.answer.lower()


def test_the_demo_panel_keeps_each_channel_to_its_own_posts(
    demo_store: SqlExpertStore,
) -> None:
    ids = [e.expert_id for e in demo_store.experts()]
    channels = {e.expert_id: e.channel for e in demo_store.experts()}
    engine = LocalEngine(embedder=HashingEmbedder())
    responses = asyncio.run(
        run_panel("Стоит ли переходить с Airflow на Dagster?", ids, store=demo_store,
                  engine=engine, config=ExpertsConfig(**DEMO_CONFIG))
    )  # fmt: skip
    by_id = {r.expert_id: r for r in responses}
    assert by_id["homelab_field_notes"].status == "ok"  # English posts, mismatch noted
    assert by_id["homelab_field_notes"].language == "en" and by_id["homelab_field_notes"].notes
    assert by_id["dannye_bez_boli"].status == "ok" and by_id["dannye_bez_boli"].language == "ru"
    for response in responses:
        assert response.status in ("ok", "no_results")
        own = {p.post_id for p in demo_store.posts(response.expert_id)}
        for source in response.main_sources:
            assert source.url == f"https://t.me/{channels[response.expert_id]}/{source.post_id}"
            assert source.post_id in own
        assert set(_pl_cited(response.answer)) <= {s.post_id for s in response.main_sources}


# --- --since: the panel's recent window set by the user ---------------------------------------


def test_since_bounds_every_phase_like_recent_only(dated_store: MemoryExpertStore) -> None:
    engine = _pl_scripted()
    response = _pl_run(dated_store, engine, since=NOW - timedelta(days=30))
    assert _pl_mapped_ids(engine) == {2, 3}  # map never saw 1, 4 or 5
    assert _pl_reduce_context(engine) == [(2, Relevance.HIGH), (3, Relevance.CONTEXT)]
    assert response.counts["drift_groups"] == 0


def test_since_and_recent_only_keep_the_later_bound(dated_store: MemoryExpertStore) -> None:
    engine = _pl_scripted()
    # --since 7 days is narrower than recent-only's 30: post 3 (10 days old) falls out too
    _pl_run(dated_store, engine, use_recent_only=True, since=NOW - timedelta(days=7))
    assert _pl_mapped_ids(engine) == {2}
    wider = _pl_scripted()
    # --since 150 days is wider: recent-only's 30 days still applies
    _pl_run(dated_store, wider, use_recent_only=True, since=NOW - timedelta(days=150))
    assert _pl_mapped_ids(wider) == {2, 3}


def test_run_panel_passes_since_to_every_expert(dated_store: MemoryExpertStore) -> None:
    engine = _pl_scripted()
    asyncio.run(
        run_panel(QUESTION, ["alpha"], store=dated_store, engine=engine, config=_pl_config(),
                  clock=_pl_clock, since=NOW - timedelta(days=30))
    )  # fmt: skip
    assert _pl_mapped_ids(engine) == {2, 3}
