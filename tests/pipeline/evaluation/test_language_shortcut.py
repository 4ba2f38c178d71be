"""Plainly English text is told without lingua, and only where lingua would say "en" too."""

from __future__ import annotations

import pytest

from crowdsift.core import language
from crowdsift.pipeline.evaluation import load_cases
from tests.support.paths import REPO

EVAL_CASES = REPO / "data" / "eval" / "cases.json"
ENGLISH = [
    "How do I stop Tapcon screws from spinning in concrete?",
    "Is the Plaud Note worth it compared to a phone recording app?",
    "What safeguards do you set up before letting an AI agent edit a codebase on its own?",
    "Drill 1/4 inch deeper than the screw goes and pull the bit out to clear the dust [post:a1].",
    "I'm dropping my Plaud plan. How do I keep all my transcripts and audio?",
]
NOT_PLAIN = [
    "Wie kann ich das am besten machen, wenn der Akku leer ist?",  # German, ASCII only
    "Je ne sais pas pour le moment, mais le foret est trop petit.",  # French without accents
    "Como hago para que el tornillo no gire en el concreto?",  # Spanish without accents
    "Какой диктофон дольше держит заряд?",
    "Can I mount a TV on metal studs?",  # short: lingua's "und" is kept
    "Cursor or Copilot for Python data work in 2025?",  # no function words to go by
]


def _lingua(text: str) -> str:
    found = language._detector().detect_language_of(language.prose_of(text))
    return found.iso_code_639_1.name.lower() if found else language.UNDETERMINED


def _corpus() -> list[str]:
    questions = [case.question for case in load_cases(EVAL_CASES)]
    return [*questions, *ENGLISH, *NOT_PLAIN]


@pytest.mark.parametrize("text", ENGLISH)
def test_plain_english_is_english_without_building_lingua(text: str) -> None:
    language._detector.cache_clear()
    assert language.detect_language(text) == "en"
    assert language._detector.cache_info().currsize == 0


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_anything_less_certain_still_goes_to_lingua(text: str) -> None:
    assert not language.plainly_english(language.prose_of(text))
    assert language.detect_language(text) == _lingua(text)


def test_the_shortcut_never_disagrees_with_lingua_on_the_evaluation_questions() -> None:
    """Where the shortcut answers, lingua answers the same; and it answers for most questions."""
    corpus = _corpus()
    shortcut = [text for text in corpus if language.plainly_english(language.prose_of(text))]
    assert [(text, _lingua(text)) for text in shortcut if _lingua(text) != "en"] == []
    assert len(shortcut) >= 0.8 * len(corpus) - len(NOT_PLAIN)


def test_warm_up_runs_lingua_on_every_sample_english_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service warms lingua at startup so no job pays for it: the shortcut must not let the
    English sample skip lingua's English models."""
    seen: list[str] = []

    class Recorder:
        def detect_language_of(self, text: str) -> None:
            seen.append(text)

    monkeypatch.setattr(language, "_detector", Recorder)
    monkeypatch.setattr(language, "plainly_english", lambda _prose: True)
    language.warm_up()
    assert seen == list(language._WARM_UP_SAMPLES)
