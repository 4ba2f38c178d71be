"""Offline drift analysis: local clustering, reply validation, storage and idempotence."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import CrowdsiftError, EngineTransportError
from crowdsift.engines.base import EngineReply, OutT, Task, Usage
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts.drift import (
    DriftDraft,
    DriftGroupDraft,
    DriftTask,
    analyse_drift,
    greedy_clusters,
    group_keywords,
)
from crowdsift.sources.experts.models import DriftGroup, Expert, ExpertComment, ExpertPost
from crowdsift.testing.expert_store import MemoryExpertStore

T0 = datetime(2025, 3, 1, tzinfo=UTC)
BACKUP_POST = (
    "Weekly backup routine: I snapshot my ZFS pool every night and replicate the snapshots "
    "to an offsite backup server with syncoid."
)
BACKUP_THREAD = [
    "Do you replicate ZFS snapshots to the offsite backup server with syncoid too?",
    "How long do you keep the nightly ZFS snapshots on the offsite backup server?",
    "ECC memory matters more than any backup, bad RAM silently corrupts data.",
    "Thanks, great post!",
    "Without ECC memory bad RAM can silently corrupt data before ZFS sees it.",
    "Which football team do you support this season?",
    "ECC memory costs more, but bad RAM silently corrupts data anyway.",
    "The football team I support lost again this season sadly.",
]
# thresholds for the hashing fake, whose cosines run lower than MiniLM's
DRIFT_SETTINGS: dict[str, Any] = {"drift_post_similarity": 0.25, "drift_cluster_similarity": 0.25}


def _dr_post(post_id: int, text: str) -> ExpertPost:
    return ExpertPost(
        expert_id="alpha", post_id=post_id, text=text, date=T0 + timedelta(days=post_id),
        url=f"https://t.me/alpha_ch/{post_id}",
    )  # fmt: skip


def _dr_thread(post_id: int, texts: list[str], expert_id: str = "alpha") -> list[ExpertComment]:
    return [
        ExpertComment(
            expert_id=expert_id,
            comment_id=post_id * 100 + n,
            post_id=post_id,
            author=f"user{n}",
            text=text,
            date=T0 + timedelta(days=post_id, hours=n),
        )
        for n, text in enumerate(texts, start=1)
    ]


@pytest.fixture
def drift_store() -> MemoryExpertStore:
    store = MemoryExpertStore()
    store.add_expert(Expert(expert_id="alpha", name="Alpha", channel="alpha_ch"))
    store.add_expert(Expert(expert_id="beta", name="Beta", channel="beta_ch"))
    store.add_posts([_dr_post(10, BACKUP_POST), _dr_post(20, "Short post about UPS units.")])
    store.add_comments(_dr_thread(10, BACKUP_THREAD))
    store.add_comments(_dr_thread(20, ["One comment.", "Two comments, not enough for drift."]))
    store.add_comments(_dr_thread(10, ["beta's reader " * 5] * 6, expert_id="beta"))
    return store


def _dr_run(store: MemoryExpertStore, engine: Any, **settings: Any) -> list[DriftGroup]:
    config = ExpertsConfig(**{**DRIFT_SETTINGS, **settings})
    return asyncio.run(analyse_drift("alpha", store, engine, config))


def test_local_strategy_finds_the_drifted_groups(drift_store: MemoryExpertStore) -> None:
    groups = _dr_run(drift_store, LocalEngine(embedder=HashingEmbedder()))
    assert [(g.group_id, g.comment_ids) for g in groups] == [
        ("10-1", [1003, 1005, 1007]),  # ECC memory: the biggest group first
        ("10-2", [1006, 1008]),  # football
    ]
    ecc, football = groups
    assert ecc.topic == "ecc, memory, bad" and {"ram", "silently"} <= set(ecc.keywords)
    assert "football" in football.keywords and "support" in football.keywords
    assert ecc.date == T0 + timedelta(days=10, hours=7)  # newest comment of the group
    assert all(g.expert_id == "alpha" and g.post_id == 10 for g in groups)
    assert drift_store.drift_groups("alpha") == groups
    assert drift_store.drift_groups("beta") == []


def test_rerunning_replaces_instead_of_duplicating(drift_store: MemoryExpertStore) -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    first = _dr_run(drift_store, engine)
    second = _dr_run(drift_store, engine)
    assert first == second and drift_store.drift_groups("alpha") == second


def test_only_posts_with_enough_comments_are_analysed(drift_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine(function=lambda _task: DriftDraft())
    _dr_run(drift_store, engine, drift_min_comments=2)
    assert sorted(t.post.post_id for t in engine.requests) == [10, 20]
    engine = ScriptedEngine(function=lambda _task: DriftDraft())
    _dr_run(drift_store, engine, drift_min_comments=3)
    [task] = engine.requests
    assert isinstance(task, DriftTask) and task.phase == "drift_analysis"
    assert [c.comment_id for c in task.comments] == list(range(1001, 1009))
    system, user = (m.content for m in task.messages())
    assert "at least 2" in system and "<evidence" in system
    assert '<evidence id="post">' in user and '<evidence id="comment:1003">' in user


def test_only_the_newest_comments_are_sent(drift_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine(function=lambda _task: DriftDraft())
    _dr_run(drift_store, engine, drift_max_comments=3)
    assert [c.comment_id for c in engine.requests[0].comments] == [1006, 1007, 1008]


def test_engine_reply_is_validated(drift_store: MemoryExpertStore) -> None:
    reply = DriftDraft(
        groups=[
            DriftGroupDraft(
                topic="  ECC   memory ", keywords=["ecc", " "], comment_ids=[1003, 1005, 1003, 4242]
            ),
            DriftGroupDraft(topic="", keywords=["football", "team"], comment_ids=[1006, 1008]),
            DriftGroupDraft(topic="reuses a taken id", comment_ids=[1005, 1007]),  # 1005 taken
            DriftGroupDraft(topic="beta's comment", comment_ids=[1001, 5]),
        ]
    )  # fmt: skip
    groups = _dr_run(drift_store, ScriptedEngine([reply]))
    assert [(g.group_id, g.topic, g.keywords, g.comment_ids) for g in groups] == [
        ("10-1", "ECC memory", ["ecc"], [1003, 1005]),
        ("10-2", "football, team", ["football", "team"], [1006, 1008]),
    ]


def test_bare_list_reply_and_group_cap(drift_store: MemoryExpertStore) -> None:
    reply = (
        '[{"topic": "a", "comment_ids": [1001, 1002]}, {"topic": "b", "comment_ids": [1003, 1004]}]'
    )
    groups = _dr_run(drift_store, ScriptedEngine([reply]), drift_max_groups_per_post=1)
    assert [g.topic for g in groups] == ["a"]


def test_failed_post_keeps_its_earlier_groups(drift_store: MemoryExpertStore) -> None:
    _dr_run(drift_store, LocalEngine(embedder=HashingEmbedder()))
    before = drift_store.drift_groups("alpha")
    engine = ScriptedEngine([EngineTransportError("503 from the endpoint")])
    assert _dr_run(drift_store, engine) == before
    assert drift_store.drift_groups("alpha") == before


def test_unknown_expert_is_a_clear_error(drift_store: MemoryExpertStore) -> None:
    with pytest.raises(CrowdsiftError, match="crowdsift experts list"):
        asyncio.run(analyse_drift("nobody", drift_store, ScriptedEngine(), ExpertsConfig()))


class _DriftSlowEngine:
    """Answers every task after a short sleep and records the most tasks in flight at once."""

    name = "scripted"

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.calls = 0

    async def run(self, _task: Task[OutT]) -> EngineReply[OutT]:
        self.in_flight += 1
        self.calls += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.005)
        self.in_flight -= 1
        return EngineReply(output=DriftDraft(), usage=Usage(calls=1), engine="scripted")  # type:
        # ignore[arg-type]

    async def aclose(self) -> None:
        """Nothing to release."""


def test_concurrency_never_exceeds_the_limit() -> None:
    store = MemoryExpertStore()
    store.add_expert(Expert(expert_id="alpha", name="Alpha", channel="alpha_ch"))
    store.add_posts(_dr_post(pid, f"post {pid}") for pid in range(1, 13))
    for pid in range(1, 13):
        store.add_comments(_dr_thread(pid, [f"comment {n} on post {pid}" for n in range(4)]))
    engine = _DriftSlowEngine()
    _dr_run(store, engine, drift_max_parallel=3)
    assert engine.calls == 12 and engine.peak == 3


def test_greedy_clusters_is_deterministic_and_thresholded() -> None:
    vectors = np.array(
        [[1.0, 0.0, 0.0], [0.96, 0.28, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.96, 0.28]],
        dtype=np.float32,
    )
    assert greedy_clusters(vectors, [0, 1, 2, 3, 4], 0.9) == [[0, 1], [2, 4], [3]]
    assert greedy_clusters(vectors, [3, 2], 0.9) == [[3], [2]]
    assert greedy_clusters(vectors, [0, 1, 2], 0.99) == [[0], [1], [2]]


def test_group_keywords_prefer_words_rare_in_the_thread() -> None:
    thread = [
        "zfs backup snapshots nightly",
        "zfs backup offsite",
        "ecc memory zfs errors",
        "ecc memory dimm",
    ]
    keywords = group_keywords(thread[2:], thread)
    assert keywords[:2] == ["ecc", "memory"]
    assert keywords.index("zfs") > keywords.index("errors")  # zfs is everywhere in the thread
