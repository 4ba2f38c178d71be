"""Phase 5, language validation: the answer must be in the language the question was asked in.

The reduce phase writes in the expert's voice, and experts write in their own language, so a
question in English about a Russian channel easily gets a Russian answer. ``validate_language``
detects both languages and, on a mismatch, asks the engine to translate the answer while keeping
its Markdown, links and every ``[post:ID]`` marker. Nothing the engine returns is trusted: a
translation that loses or invents a marker, or adds a link, is thrown away and the original
kept, with a note.

The local engine cannot translate. Its strategy says so honestly: it hands the original answer
back with a note naming both languages, and the response carries that note.

Detection uses lingua restricted to a few languages (the full model set costs ~1.5 s on first
use; restricted, a detection is tens of microseconds once loaded). Citation markers, URLs and
code are removed first: they are not prose and would pull every text towards English.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from lingua import Language, LanguageDetector, LanguageDetectorBuilder
from pydantic import BaseModel, Field

from crowdsift.engines.base import (
    FENCE_NOTE,
    ChatMessage,
    Engine,
    LocalKit,
    Phase,
    Task,
    Usage,
    fence,
)
from crowdsift.errors import EngineError
from crowdsift.log import get_logger
from crowdsift.summarizer.grounding import url_key
from crowdsift.text import tokenize

log = get_logger(__name__)

UNDETERMINED = "und"
LANGUAGES: tuple[Language, ...] = (
    Language.ENGLISH,
    Language.RUSSIAN,
    Language.GERMAN,
    Language.FRENCH,
    Language.SPANISH,
    Language.UKRAINIAN,
)
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "ru": "Russian",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "uk": "Ukrainian",
}
MIN_LETTERS = 4
"""Fewer letters than this (after markers, URLs and code are removed) is ``und``."""
MIN_RELATIVE_DISTANCE = 0.1
"""lingua answers None (→ ``und``) when the two best languages are closer than this."""
DETECT_CHARS = 2000
"""Only the start of a long answer is read: its language does not change halfway."""

_MARKER = re.compile(r"\[post:([^\]\s]+)\]", re.IGNORECASE)
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"https?://\S+|www\.\S+|t\.me/\S+", re.IGNORECASE)
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WARM_UP_SAMPLES = (
    "which recorder keeps its battery longest",
    "какой диктофон дольше держит заряд",
)


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    """Built once, on first use (never at import); language models load lazily inside."""
    return (
        LanguageDetectorBuilder.from_languages(*LANGUAGES)
        .with_minimum_relative_distance(MIN_RELATIVE_DISTANCE)
        .build()
    )


def warm_up() -> float:
    """Build the detector and load every language model now; the seconds it took.

    The first detections load lingua's models (about 190 MB, 1–3 s holding the GIL). In the
    service that happened inside the first research job and stalled every request in flight,
    so ``crowdsift serve`` calls this at startup, before it accepts connections.
    """
    started = time.perf_counter()
    for sample in _WARM_UP_SAMPLES:  # one per script: each loads that script's models
        detect_language(sample)
    return time.perf_counter() - started


def prose_of(text: str) -> str:
    """``text`` without ``[post:ID]`` markers, URLs and code: what a reader reads as language."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _MARKER.sub(" ", text)
    return " ".join(text.split())


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text`` ("en", "ru", ...), or "und" when there is too little to tell.

    A single Latin-script word ("Proxmox") is ``und``: product names carry no language, and
    lingua would guess one. Cyrillic words are told apart by script, so one is enough.
    """
    prose = prose_of(text[: DETECT_CHARS * 2])[:DETECT_CHARS]
    letters = sum(ch.isalpha() for ch in prose)
    if letters < MIN_LETTERS:
        return UNDETERMINED
    if not _CYRILLIC.search(prose) and len(_LATIN_WORD.findall(prose)) < 2:
        return UNDETERMINED
    language = _detector().detect_language_of(prose)
    if language is None:
        return UNDETERMINED
    return language.iso_code_639_1.name.lower()


_STOPWORD_TEXT = """
    a about after all also an and any are as at be because been but by can could did do does
    for from get got had has have how i if in into is it its just like me more most my no not
    now of on one only or other our out so some than that the their them then there these they
    this to too up us very was we were what when where which who why will with would you your
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
    мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был
    него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней
    для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того
    потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем
    всех никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего
    них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя
    такой им более всегда конечно всю между это как-то
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""English and Russian function words: never keywords, never lexical evidence."""


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` that carry meaning: 3+ characters, not stopwords."""
    return [w for w in tokenize(text) if len(w) > 2 and w not in STOPWORDS and not w.isdigit()]


def language_name(code: str) -> str:
    """A language's English name for prompts; the code itself when we have no name."""
    return LANGUAGE_NAMES.get(code, code)


def markers_of(text: str) -> set[str]:
    """The post ids cited as ``[post:ID]`` in ``text``."""
    return set(_MARKER.findall(text))


class Translation(BaseModel):
    """The engine's translation; the local strategy returns the original with a note."""

    text: str = Field(description="the translated answer")
    translated: bool = Field(True, description="false when the text is the untranslated original")
    note: str | None = None


class LanguageOutcome(BaseModel):
    """What phase 5 decided: both languages, the answer to show, and any degradation."""

    query_language: str
    answer_language: str
    answer: str
    translated: bool = False
    note: str | None = None
    usage: Usage = Field(default_factory=Usage)


def mismatch_note(answer_language: str, query_language: str) -> str:
    return (
        f"the answer is in {language_name(answer_language)} while the question is in "
        f"{language_name(query_language)}; the local engine cannot translate"
    )


@dataclass(frozen=True)
class TranslateTask(Task[Translation]):
    """Translate an answer into the question's language, keeping its form and citations."""

    answer: str
    source_language: str
    target_language: str

    phase: ClassVar[Phase] = "analysis"
    output_model: ClassVar[type[BaseModel]] = Translation

    def messages(self) -> list[ChatMessage]:
        target = language_name(self.target_language)
        system = (
            f"You translate an answer from {language_name(self.source_language)} into "
            f"{target}. Keep the Markdown formatting (headings, lists, bold, tables) exactly, "
            "keep every link unchanged, and keep every citation marker such as [post:123] "
            "exactly as written and next to the statement it supports. Translate only; add, "
            f'drop or explain nothing. Return JSON {{"text": "<the answer in {target}>"}}. '
            + FENCE_NOTE
        )
        user = f"Answer to translate into {target}:\n{fence('answer', self.answer)}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def parse(self, data: Any) -> Translation:
        """Models sometimes return the bare translated string; accept it."""
        if isinstance(data, str):
            data = {"text": data}
        return super().parse(data)

    def run_local(self, kit: LocalKit) -> Translation:
        """No local translation: the original, not pretending otherwise."""
        return Translation(
            text=self.answer,
            translated=False,
            note=mismatch_note(self.source_language, self.target_language),
        )


async def validate_language(question: str, answer: str, engine: Engine) -> LanguageOutcome:
    """Phase 5: the answer in the question's language when possible, else the original + note.

    No call is made when the languages match or either one cannot be determined. A failed or
    unfaithful translation (engine error, empty text, a ``[post:ID]`` marker lost or added)
    keeps the original answer: a correct answer in the wrong language beats a broken one.
    """
    query_language = detect_language(question)
    answer_language = detect_language(answer)
    outcome = LanguageOutcome(
        query_language=query_language, answer_language=answer_language, answer=answer
    )
    if UNDETERMINED in (query_language, answer_language) or query_language == answer_language:
        return outcome
    task = TranslateTask(answer, answer_language, query_language)
    try:
        reply = await engine.run(task)
    except EngineError as exc:
        log.warning("language_translation_failed", error=str(exc), target=query_language)
        outcome.note = (
            f"the answer is in {language_name(answer_language)} while the question is in "
            f"{language_name(query_language)}; translation failed ({exc})"
        )
        return outcome
    outcome.usage = reply.usage
    translation = reply.output
    if not translation.translated:
        outcome.note = translation.note or mismatch_note(answer_language, query_language)
        return outcome
    problem = _unfaithful(answer, translation.text)
    if problem is not None:
        log.warning("language_translation_rejected", problem=problem, target=query_language)
        outcome.note = (
            f"the answer is in {language_name(answer_language)} while the question is in "
            f"{language_name(query_language)}; the translation was discarded because {problem}"
        )
        return outcome
    log.info("language_translated", source=answer_language, target=query_language)
    outcome.answer = translation.text
    outcome.translated = True
    return outcome


def _unfaithful(original: str, translated: str) -> str | None:
    """Why a translation cannot replace the original, or None when it can."""
    if not translated.strip():
        return "it was empty"
    before, after = markers_of(original), markers_of(translated)
    lost, added = sorted(before - after), sorted(after - before)
    if lost:
        return "it lost the citation(s) " + ", ".join(f"[post:{m}]" for m in lost)
    if added:
        return "it added the citation(s) " + ", ".join(f"[post:{m}]" for m in added)
    extra = sorted(references_of(translated) - references_of(original))
    if extra:  # a translation adds nothing: no link, no footnote, no comment marker
        return "it added " + ", ".join(extra)
    return None


_REFERENCE = re.compile(r"\[\s*(?:comment\s*:|t[13]_)[^\]\n]*\]|\[\d{1,3}\]", re.IGNORECASE)


def references_of(text: str) -> set[str]:
    """What a reader could follow out of ``text`` besides ``[post:ID]``: links (compared
    loosely), ``[comment:ID]`` and numbered ``[n]`` markers."""
    links = {url_key(u.rstrip(".,;:!?)'\"…")) for u in _URL.findall(text)}
    return links | {m.lower() for m in _REFERENCE.findall(text)}
