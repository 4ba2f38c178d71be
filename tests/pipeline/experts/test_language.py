"""Phase 5: language detection and translation on mismatch (scripted and local engines)."""

from __future__ import annotations

import asyncio

import pytest

from crowdsift.core import language as detection
from crowdsift.core.errors import EngineTransportError
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.scripted import ScriptedEngine
from crowdsift.pipeline.experts import language
from crowdsift.pipeline.experts.language import (
    TranslateTask,
    Translation,
    detect_language,
    prose_of,
    validate_language,
)

QUESTION_EN = "How should I back up a home server with ZFS snapshots?"
ANSWER_RU = (
    "Делайте снапшоты ZFS каждый час и отправляйте их на второй сервер [post:12]. "
    "Раз в месяц проверяйте, что восстановление действительно работает [post:40]."
)
ANSWER_EN = (
    "Take hourly ZFS snapshots and send them to a second machine [post:12]. "
    "Once a month, check that a restore actually works [post:40]."
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (QUESTION_EN, "en"),
        ("Как лучше делать резервные копии домашнего сервера?", "ru"),
        (ANSWER_RU, "ru"),
        ("Wie sichere ich meinen Heimserver am besten?", "de"),
        ("", "und"),
        ("ok", "und"),
        ("Proxmox", "und"),  # one product name carries no language
        ("[post:12] [post:40] https://t.me/homelab/12", "und"),
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_markers_urls_and_code_are_not_prose() -> None:
    text = (
        "Смотрите пост [post:7] и https://example.com/how-to-back-up-your-server-in-english "
        "```zfs send tank@daily | ssh backup zfs receive``` там всё `zfs list -t snapshot` "
        "описано подробно"
    )
    assert prose_of(text) == "Смотрите пост и там всё описано подробно"
    assert detect_language(text) == "ru"


def test_mismatch_asks_for_exactly_one_translation() -> None:
    engine = ScriptedEngine([Translation(text=ANSWER_EN)])
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert (outcome.query_language, outcome.answer_language) == ("en", "ru")
    assert outcome.translated and outcome.answer == ANSWER_EN and outcome.note is None
    assert outcome.usage.by_phase == {"analysis": 1}
    [task] = engine.requests
    assert isinstance(task, TranslateTask) and task.phase == "analysis"
    system, user = (m.content for m in task.messages())
    assert "into English" in system and "[post:123]" in system and "Markdown" in system
    assert '<evidence id="answer">' in user and ANSWER_RU in user


def test_matching_languages_need_no_call() -> None:
    engine = ScriptedEngine()
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_EN, engine))
    assert engine.requests == []
    assert outcome.answer == ANSWER_EN and not outcome.translated and outcome.note is None


def test_undetermined_question_needs_no_call() -> None:
    engine = ScriptedEngine()
    outcome = asyncio.run(validate_language("ZFS?", ANSWER_RU, engine))
    assert engine.requests == [] and outcome.query_language == "und"
    assert outcome.answer == ANSWER_RU


def test_translation_that_loses_a_marker_keeps_the_original() -> None:
    lossy = "Take hourly ZFS snapshots and send them to a second machine [post:12]."
    engine = ScriptedEngine([Translation(text=lossy)])
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert outcome.answer == ANSWER_RU and not outcome.translated
    assert outcome.note is not None and "[post:40]" in outcome.note and "discarded" in outcome.note


def test_translation_that_adds_a_marker_keeps_the_original() -> None:
    engine = ScriptedEngine([Translation(text=ANSWER_EN + " Also see [post:99].")])
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert outcome.answer == ANSWER_RU and not outcome.translated
    assert outcome.note is not None and "[post:99]" in outcome.note


def test_bare_string_reply_is_accepted() -> None:
    engine = ScriptedEngine([f'"{ANSWER_EN}"'])
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert outcome.translated and outcome.answer == ANSWER_EN


def test_engine_failure_keeps_the_original_with_a_note() -> None:
    engine = ScriptedEngine([EngineTransportError("503 from the endpoint")])
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert outcome.answer == ANSWER_RU and not outcome.translated
    assert outcome.note is not None and "503" in outcome.note


def test_local_engine_reports_the_mismatch_instead_of_translating() -> None:
    engine = LocalEngine(embedder=HashingEmbedder())
    outcome = asyncio.run(validate_language(QUESTION_EN, ANSWER_RU, engine))
    assert outcome.answer == ANSWER_RU and not outcome.translated
    assert outcome.note == (
        "the answer is in Russian while the question is in English; "
        "the local engine cannot translate"
    )
    assert outcome.usage.calls == 1


def test_warm_up_builds_the_detector_once() -> None:
    detection._detector.cache_clear()
    assert language.warm_up() >= 0.0  # the experts module re-exports the core one
    assert detection._detector.cache_info().currsize == 1
    assert language.warm_up() >= 0.0  # again: the same detector, nothing rebuilt
    assert detection._detector.cache_info().misses == 1
