"""Phase 2, medium scoring: threshold, cap, top-N, graceful failure, the local calibration."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from structlog.testing import capture_logs

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineOutputError, EngineTransportError
from crowdsift.engines.base import FENCE_NOTE, Task, Usage
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts.medium import MediumScoringTask, calibrate, run_medium_scoring
from crowdsift.sources.experts.models import ExpertPost, Relevance, ScoredPost

T0 = datetime(2025, 3, 1, tzinfo=UTC)
QUESTION = "How do I back up a ZFS pool offsite?"


def _md_medium(post_id: int, text: str | None = None) -> ScoredPost:
    post = ExpertPost(
        expert_id="alpha", post_id=post_id, text=text or f"medium post {post_id}",
        date=T0 - timedelta(days=post_id), url=f"https://t.me/alpha_ch/{post_id}",
    )  # fmt: skip
    return ScoredPost(post=post, relevance=Relevance.MEDIUM, reason="map said so")


def _md_scorer(scores: dict[int, float]) -> ScriptedEngine:
    """Scores posts from ``scores`` (0.0 for the others) and records the tasks it saw."""

    def respond(task: Task[Any]) -> Any:
        assert isinstance(task, MediumScoringTask)
        return {"scores": [{"post_id": p.post_id, "score": scores.get(p.post_id, 0.0)}
                           for p in task.posts]}  # fmt: skip

    return ScriptedEngine(function=respond)


def _md_run(medium: list[ScoredPost], engine: Any, **config: Any) -> list[ScoredPost]:
    return asyncio.run(run_medium_scoring(QUESTION, medium, engine, ExpertsConfig(**config)))


def test_the_threshold_is_inclusive() -> None:
    medium = [_md_medium(pid) for pid in (1, 2, 3)]
    selected = _md_run(medium, _md_scorer({1: 0.69, 2: 0.7, 3: 0.71}))
    assert [(p.post.post_id, p.score) for p in selected] == [(3, 0.71), (2, 0.7)]
    assert all(p.relevance is Relevance.MEDIUM and p.reason == "map said so" for p in selected)
    selected = _md_run(medium, _md_scorer({1: 0.69, 2: 0.7, 3: 0.71}), medium_score_threshold=0.71)
    assert [p.post.post_id for p in selected] == [3]


def test_at_most_fifty_posts_are_scored_the_first_in_map_order() -> None:
    medium = [_md_medium(pid) for pid in range(1, 61)]
    engine = _md_scorer({51: 1.0, 52: 1.0, 50: 0.8})
    selected = _md_run(medium, engine)
    (task,) = engine.requests
    assert isinstance(task, MediumScoringTask)
    assert [p.post_id for p in task.posts] == list(range(1, 51))
    assert [p.post.post_id for p in selected] == [50]  # 51 and 52 were never scored


def test_the_cap_is_a_setting() -> None:
    engine = _md_scorer({})
    _md_run([_md_medium(pid) for pid in range(1, 11)], engine, medium_max_posts=4)
    (task,) = engine.requests
    assert isinstance(task, MediumScoringTask)
    assert [p.post_id for p in task.posts] == [1, 2, 3, 4]


def test_top_five_by_score_with_stable_ties() -> None:
    scores = {1: 0.8, 2: 0.95, 3: 0.8, 4: 0.75, 5: 0.99, 6: 0.8, 7: 0.72, 8: 0.3}
    selected = _md_run([_md_medium(pid) for pid in range(1, 9)], _md_scorer(scores))
    assert [p.post.post_id for p in selected] == [5, 2, 1, 3, 6]
    assert [p.score for p in selected] == [0.99, 0.95, 0.8, 0.8, 0.8]
    two = _md_run([_md_medium(pid) for pid in range(1, 9)], _md_scorer(scores),
                  medium_max_selected=2)  # fmt: skip
    assert [p.post.post_id for p in two] == [5, 2]


def test_scores_for_unknown_ids_are_ignored_and_out_of_range_scores_clipped() -> None:
    engine = ScriptedEngine([[{"post_id": 1, "score": 1.7}, {"post_id": 99, "score": 1.0},
                              {"post_id": 1, "score": 0.1}]])  # fmt: skip
    selected = _md_run([_md_medium(1), _md_medium(2)], engine)
    assert [(p.post.post_id, p.score) for p in selected] == [(1, 1.0)]


@pytest.mark.parametrize(
    "failure",
    [
        EngineTransportError("HTTP 503 from the endpoint", status=503),
        EngineOutputError("not JSON"),
        '{"scores": "high"}',  # valid JSON, wrong shape: the task's parse rejects it
    ],
)
def test_any_failure_gives_no_posts_and_a_warning(failure: Any) -> None:
    with capture_logs() as logs:
        selected = _md_run([_md_medium(1)], ScriptedEngine([failure]))
    assert selected == []
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["medium_scoring_failed"]


def test_nothing_to_score_means_no_call() -> None:
    engine = ScriptedEngine()
    assert _md_run([], engine) == []
    assert _md_run([_md_medium(1)], engine, medium_max_selected=0) == []
    assert engine.requests == []


def test_usage_is_added_when_asked_for() -> None:
    usage = Usage(calls=2)
    asyncio.run(
        run_medium_scoring(QUESTION, [_md_medium(1)], _md_scorer({}), ExpertsConfig(), usage=usage)
    )
    assert usage.calls == 3 and usage.by_phase == {"medium_scoring": 1}


def test_the_prompt_fences_posts_and_states_the_scale() -> None:
    task = MediumScoringTask(QUESTION, (_md_medium(4, "zfs send to a remote box").post,))
    system, user = task.messages()
    assert FENCE_NOTE in system.content and "0.0 to 1.0" in system.content
    assert '<evidence id="post:4">' in user.content and "zfs send to a remote box" in user.content


def test_calibration_maps_the_medium_band_onto_half_to_one() -> None:
    assert calibrate(0.22, 0.22, 0.40) == 0.5
    assert calibrate(0.40, 0.22, 0.40) == 1.0
    assert calibrate(0.22 + 0.6 * 0.18, 0.22, 0.40) == pytest.approx(0.8)
    assert calibrate(0.9, 0.22, 0.40) == 1.0 and calibrate(-0.5, 0.22, 0.40) == 0.0


def test_local_scores_select_the_post_closest_to_the_question() -> None:
    medium = [
        _md_medium(1, "My sourdough starter doubled overnight."),
        _md_medium(2, "How do I back up a ZFS pool offsite? zfs send over ssh to a friend."),
    ]
    engine = LocalEngine(embedder=HashingEmbedder())
    selected = _md_run(medium, engine)
    assert [p.post.post_id for p in selected] == [2]
    assert selected[0].score is not None and selected[0].score >= 0.7
