"""Phase 7: section order and omission, localised titles, citation grounding, local output."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineTransportError
from crowdsift.engines.base import Engine
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts.comments import CommentGroups, DriftGroupWithComments
from crowdsift.pipeline.experts.synthesis import (
    CommentSynthesisOutcome,
    CommentSynthesisTask,
    SectionTexts,
    section_titles,
    synthesize_comments,
)
from crowdsift.sources.experts.models import DriftGroup, ExpertComment

T0 = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "Is ECC memory worth it for a ZFS home server?"


def _syn_comment(comment_id: int, text: str, *, expert: bool = False) -> ExpertComment:
    return ExpertComment(
        expert_id="alpha", comment_id=comment_id, post_id=comment_id // 100,
        author="Alpha" if expert else f"user{comment_id}", author_is_expert=expert, text=text,
        date=T0 + timedelta(minutes=comment_id),
    )  # fmt: skip


def _syn_groups(*, with_community: bool = True, with_expert_drift: bool = True) -> CommentGroups:
    drift = [
        _syn_comment(301, "ECC memory errors show up in dmesg as EDAC lines.", expert=True),
        _syn_comment(302, "Registered ECC DIMMs are cheap on the used server market."),
        _syn_comment(303, "I never had a memory error on my ZFS box without ECC."),
    ]
    if not with_expert_drift:
        drift = drift[1:]
    group = DriftGroup(
        expert_id="alpha", group_id="3-1", post_id=3, topic="ecc memory", keywords=["ecc"],
        comment_ids=[c.comment_id for c in drift], date=T0,
    )  # fmt: skip
    return CommentGroups(
        author_clarifications=[_syn_comment(101, "I run ECC on the backup box only.", expert=True)],
        community=[_syn_comment(102, "ECC saved my pool once when a DIMM failed.")]
        if with_community
        else [],
        drift=[DriftGroupWithComments(group=group, comments=drift)],
    )


def _syn_run(
    groups: CommentGroups, engine: Engine, *, language: str = "en", **settings: Any
) -> CommentSynthesisOutcome:
    config = ExpertsConfig(**settings)
    return asyncio.run(synthesize_comments(QUESTION, groups, engine, config, language=language))


FULL_REPLY = SectionTexts(
    expert_notes="The expert runs ECC only on the backup machine [comment:101].",
    community_notes="One reader says ECC saved a pool [comment:102].",
    expert_drift="Memory errors are visible in dmesg [comment:301].",
    community_opinions="Used ECC DIMMs are cheap [comment:302]; others never needed it "
    "[comment:303].",
)


def test_four_sections_in_order_with_english_titles() -> None:
    engine = ScriptedEngine([FULL_REPLY])
    outcome = _syn_run(_syn_groups(), engine)
    assert [(s.kind, s.title) for s in outcome.sections] == [
        ("expert_notes", "Notes from the expert"),
        ("community_notes", "Notes from the community"),
        ("expert_drift", "Additional comments from the expert"),
        ("community_opinions", "Community opinions"),
    ]
    assert outcome.sections[3].comment_ids == [302, 303]
    assert outcome.removed_citations == [] and outcome.usage.by_phase == {"synthesis": 1}
    [task] = engine.requests
    assert isinstance(task, CommentSynthesisTask) and task.phase == "synthesis"
    system, user = (m.content for m in task.messages())
    assert "Write in English" in system and "<evidence" in system
    assert '<evidence id="comment:302">' in user and "Section community_opinions" in user


def test_sections_without_comments_are_omitted_even_if_the_model_writes_them() -> None:
    engine = ScriptedEngine([FULL_REPLY])
    outcome = _syn_run(_syn_groups(with_community=False, with_expert_drift=False), engine)
    assert [s.kind for s in outcome.sections] == ["expert_notes", "community_opinions"]
    [task] = engine.requests
    assert [kind for kind, _ in task.sections] == ["expert_notes", "community_opinions"]
    # the text written for sections that had no input could cite nothing of theirs
    assert "community_notes: comment:102" in outcome.removed_citations


def test_empty_section_text_is_omitted() -> None:
    engine = ScriptedEngine([FULL_REPLY.model_copy(update={"community_notes": "  "})])
    outcome = _syn_run(_syn_groups(), engine)
    assert "community_notes" not in [s.kind for s in outcome.sections]
    assert len(outcome.sections) == 3


def test_russian_question_gets_russian_titles_and_unknown_languages_english() -> None:
    outcome = _syn_run(_syn_groups(), ScriptedEngine([FULL_REPLY]), language="ru")
    assert [s.title for s in outcome.sections] == [
        "Заметки эксперта",
        "Заметки сообщества",
        "Дополнительные комментарии эксперта",
        "Мнения сообщества",
    ]
    assert section_titles("ja") == section_titles("en")
    engine = ScriptedEngine([FULL_REPLY])
    _syn_run(_syn_groups(), engine, language="ru")
    assert "Write in Russian" in engine.requests[0].messages()[0].content


def test_unknown_and_foreign_citations_are_removed() -> None:
    reply = FULL_REPLY.model_copy(
        update={
            # 999 was never given; 102 is a community comment, not the expert's
            "expert_notes": "ECC on the backup box [comment:101, comment:999]. "
            "A DIMM failed [comment:102].",
            "expert_drift": "Invented claim [comment:555].",
        }
    )
    outcome = _syn_run(_syn_groups(), ScriptedEngine([reply]))
    notes = outcome.sections[0]
    assert notes.kind == "expert_notes" and notes.comment_ids == [101]
    assert notes.text == "ECC on the backup box [comment:101]. A DIMM failed."
    assert set(outcome.removed_citations) >= {
        "expert_notes: comment:999",
        "expert_notes: comment:102",
        "expert_drift: comment:555",
    }
    # a section left citing none of its comments is dropped, with a note
    assert "expert_drift" not in [s.kind for s in outcome.sections]
    assert any("expert_drift" in note for note in outcome.notes)


def test_local_engine_quotes_the_most_relevant_comments() -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    outcome = _syn_run(_syn_groups(), engine, synthesis_local_items=1)
    assert [s.kind for s in outcome.sections] == [
        "expert_notes",
        "community_notes",
        "expert_drift",
        "community_opinions",
    ]
    opinions = outcome.sections[3]
    assert opinions.text.startswith("Extractive (local engine)")
    # one item per section: 303 shares ecc, memory and zfs with the question; 302 ecc, server
    assert opinions.comment_ids == [303]
    assert "- user303: “I never had a memory error" in opinions.text
    assert opinions.text.endswith("[comment:303]")


def test_local_engine_trims_long_comments_and_localises_the_lead() -> None:
    groups = _syn_groups()
    groups.author_clarifications = [_syn_comment(101, "ECC memory " * 100, expert=True)]
    engine = LocalEngine(embedder=HashingEmbedder())
    outcome = _syn_run(groups, engine, language="ru", synthesis_excerpt_chars=60)
    first = outcome.sections[0]
    assert first.title == "Заметки эксперта" and first.text.startswith("Выдержки")
    quoted = first.text.split("“", 1)[1].split("”", 1)[0]
    assert len(quoted) <= 60 and quoted.endswith("…")


def test_engine_failure_lists_the_comments_instead() -> None:
    engine = ScriptedEngine([EngineTransportError("500 from the endpoint")])
    outcome = _syn_run(_syn_groups(), engine)
    assert len(outcome.sections) == 4
    assert outcome.sections[0].text.startswith("Extractive (the synthesis failed)")
    assert outcome.sections[0].comment_ids == [101]
    assert any("500" in note for note in outcome.notes)


def test_no_comments_no_call() -> None:
    engine = ScriptedEngine()
    outcome = _syn_run(CommentGroups(), engine)
    assert engine.requests == [] and outcome.sections == []
