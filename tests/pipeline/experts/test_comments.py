"""Phase 6: comment-group priorities, the drift-group filter, and its failure modes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from structlog.testing import capture_logs

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineTransportError
from crowdsift.engines.base import Engine
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts.comments import (
    CommentGroups,
    CommentGroupsTask,
    RelevantGroups,
    prefer_substantive,
    select_comment_groups,
)
from crowdsift.sources.experts.models import DriftGroup, Expert, ExpertComment, ExpertPost
from crowdsift.testing.expert_store import MemoryExpertStore

T0 = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "Is ECC memory worth it for a ZFS home server?"


def _cg_post(post_id: int, text: str, expert_id: str = "alpha") -> ExpertPost:
    return ExpertPost(
        expert_id=expert_id, post_id=post_id, text=text, date=T0 + timedelta(days=post_id),
        url=f"https://t.me/{expert_id}_ch/{post_id}",
    )  # fmt: skip


def _cg_comment(
    comment_id: int, post_id: int, text: str, *, expert: bool = False, day: int = 0,
    expert_id: str = "alpha",
) -> ExpertComment:  # fmt: skip
    return ExpertComment(
        expert_id=expert_id, comment_id=comment_id, post_id=post_id,
        author="Alpha" if expert else f"user{comment_id}", author_is_expert=expert, text=text,
        date=T0 + timedelta(days=post_id + day, minutes=comment_id),
    )  # fmt: skip


def _cg_group(group_id: str, post_id: int, topic: str, ids: list[int], day: int) -> DriftGroup:
    return DriftGroup(
        expert_id="alpha", group_id=group_id, post_id=post_id, topic=topic,
        keywords=topic.split(), comment_ids=ids, date=T0 + timedelta(days=day),
    )  # fmt: skip


@pytest.fixture
def cg_store() -> MemoryExpertStore:
    store = MemoryExpertStore()
    for expert_id in ("alpha", "beta"):
        store.add_expert(Expert(expert_id=expert_id, name=expert_id, channel=f"{expert_id}_ch"))
    store.add_posts(
        _cg_post(pid, f"post {pid} about ZFS pools and backups") for pid in (1, 2, 3, 4, 5)
    )
    store.add_posts([_cg_post(1, "beta's post about cameras", expert_id="beta")])
    store.add_comments([
        # post 1 (main source): the expert's clarification and community comments
        _cg_comment(101, 1, "To be clear: I run ECC on the backup box only.", expert=True),
        _cg_comment(102, 1, "+1"),
        _cg_comment(103, 1, "ECC saved my pool once when a DIMM started flipping bits under load."),
        _cg_comment(104, 1, "Thanks for the write-up, very useful."),
        # post 2 (main source)
        _cg_comment(201, 2, "How big is the pool now and how long does a scrub take?"),
        # post 3 (not main): an expert comment there is no clarification of the answer
        _cg_comment(301, 3, "I also tried btrfs, but it was slower.", expert=True),
        _cg_comment(302, 3, "ECC memory errors show up in dmesg as EDAC lines on most boards."),
        _cg_comment(303, 3, "Registered ECC DIMMs are cheap on the used server market."),
        # post 4 (not main): an off-topic side discussion
        _cg_comment(401, 4, "Did anyone watch the football match last night? Great goal."),
        _cg_comment(402, 4, "The football match was boring until the second half goal."),
        # post 5 (not main): a group that is too old for the recent-only filter
        _cg_comment(501, 5, "ECC memory on old Xeon boards was cheap too."),
        _cg_comment(502, 5, "Old Xeon boards with ECC memory eat power though."),
    ])  # fmt: skip
    # beta's comment on beta's post 1: the same ids as alpha's, never alpha's comment
    store.add_comments([_cg_comment(999, 1, "beta's reader on cameras", expert_id="beta")])
    store.replace_drift_groups(
        "alpha",
        [
            _cg_group("1-1", 1, "ecc dimm", [103], day=30),  # main source: excluded
            _cg_group("3-1", 3, "ecc memory errors", [302, 303], day=20),
            _cg_group("4-1", 4, "football match", [401, 402], day=25),
            _cg_group("5-1", 5, "xeon ecc", [501, 502], day=2),
        ],
    )
    return store


def _cg_run(
    store: MemoryExpertStore,
    engine: Engine,
    *,
    since: datetime | None = None,
    **settings: Any,
) -> CommentGroups:
    config = ExpertsConfig(**settings)
    return asyncio.run(
        select_comment_groups(QUESTION, "alpha", [1, 2], store, engine, config, since=since)
    )


def test_priorities_author_then_community_then_drift(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine([RelevantGroups(group_ids=["3-1"])])
    groups = _cg_run(cg_store, engine)
    assert [c.comment_id for c in groups.author_clarifications] == [101]  # not 301 (post 3)
    # "+1" is too short to be a note; order is by date
    assert [c.comment_id for c in groups.community] == [103, 104, 201]
    assert [g.group.group_id for g in groups.drift] == ["3-1"]
    assert [c.comment_id for c in groups.drift[0].comments] == [302, 303]
    assert groups.usage.by_phase == {"comment_groups": 1}
    [task] = engine.requests
    assert isinstance(task, CommentGroupsTask) and task.phase == "comment_groups"
    # the main source's own group is never offered; the newest group comes first
    assert [g.group_id for g in task.groups] == ["4-1", "3-1", "5-1"]
    system, user = (m.content for m in task.messages())
    assert "Never invent an id" in system and "<evidence" in system
    assert '<evidence id="group:3-1">' in user and "EDAC lines" in user


def test_community_cap_prefers_longer_comments(cg_store: MemoryExpertStore) -> None:
    groups = _cg_run(cg_store, ScriptedEngine([RelevantGroups()]), max_comments_per_section=2)
    # 103 (14 words) and 201 (15 words) beat 104 (6 words); still read in date order
    assert [c.comment_id for c in groups.community] == [103, 201]


def test_prefer_substantive_is_pure_and_ordered() -> None:
    short = _cg_comment(1, 1, "ok then", day=3)
    long_old = _cg_comment(2, 1, "a much longer comment with real content in it", day=1)
    long_new = _cg_comment(3, 1, "another long comment that says a lot too", day=2)
    assert prefer_substantive([short, long_new, long_old], 5, min_words=3) == [long_old, long_new]
    assert prefer_substantive([short, long_new, long_old], 1) == [long_old]


def test_recent_only_filters_drift_groups(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine([RelevantGroups()])
    _cg_run(cg_store, engine, since=T0 + timedelta(days=10))
    assert [g.group_id for g in engine.requests[0].groups] == ["4-1", "3-1"]


def test_unknown_group_id_drops_only_the_drift_source(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine([RelevantGroups(group_ids=["3-1", "9-9"])])
    with capture_logs() as logs:
        groups = _cg_run(cg_store, engine)
    assert groups.drift == []
    assert [c.comment_id for c in groups.author_clarifications] == [101]
    assert len(groups.community) == 3
    assert any("9-9" in note for note in groups.notes)
    assert any(e["event"] == "comment_groups_failed" and e["log_level"] == "warning" for e in logs)


def test_engine_failure_drops_only_the_drift_source(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine([EngineTransportError("429 from the endpoint")])
    groups = _cg_run(cg_store, engine)
    assert groups.drift == [] and len(groups.author_clarifications) == 1
    assert len(groups.community) == 3 and groups.notes


def test_bare_list_and_prefixed_ids_are_accepted(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine(['["group:4-1", "3-1", "4-1"]'])
    groups = _cg_run(cg_store, engine, max_drift_groups=5)
    assert [g.group.group_id for g in groups.drift] == ["4-1", "3-1"]


def test_max_drift_groups_caps_the_selection(cg_store: MemoryExpertStore) -> None:
    engine = ScriptedEngine([RelevantGroups(group_ids=["4-1", "3-1"])])
    groups = _cg_run(cg_store, engine, max_drift_groups=1)
    assert [g.group.group_id for g in groups.drift] == ["4-1"]


def test_no_candidates_no_call(cg_store: MemoryExpertStore) -> None:
    cg_store.replace_drift_groups("alpha", [])
    engine = ScriptedEngine()
    groups = _cg_run(cg_store, engine)
    assert engine.requests == [] and groups.drift == [] and len(groups.community) == 3


def test_local_engine_keeps_groups_similar_to_the_question(cg_store: MemoryExpertStore) -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    # the hashing fake gives lower cosines than MiniLM (0.27 vs 0.40 for the ECC group)
    groups = _cg_run(cg_store, engine, comment_groups_threshold=0.15)
    assert [g.group.group_id for g in groups.drift] == ["3-1", "5-1"]  # best first; no football
    # "worth" is question filler (one stop-word list): only the ECC and ZFS words count
    strict = _cg_run(cg_store, engine, comment_groups_threshold=0.28)
    assert [g.group.group_id for g in strict.drift] == ["3-1"]


def test_other_experts_comments_never_appear(cg_store: MemoryExpertStore) -> None:
    groups = _cg_run(cg_store, ScriptedEngine([RelevantGroups()]))
    everything = groups.author_clarifications + groups.community
    assert all(c.expert_id == "alpha" for c in everything)
    assert 999 not in {c.comment_id for c in everything}
