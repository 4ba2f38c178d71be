"""Language validation (seed 001, phase 5): the answer is in the language of the question.

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
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from crowdsift.core.citations import cited_ids
from crowdsift.core.errors import EngineError
from crowdsift.core.language import UNDETERMINED as UNDETERMINED
from crowdsift.core.language import URL_IN_PROSE
from crowdsift.core.language import detect_language as detect_language
from crowdsift.core.language import prose_of as prose_of
from crowdsift.core.language import warm_up as warm_up
from crowdsift.core.log import get_logger
from crowdsift.core.text import url_key
from crowdsift.core.words import language_name
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

log = get_logger(__name__)


def markers_of(text: str) -> set[str]:
    """The post ids cited as ``[post:ID]`` in ``text``."""
    return set(cited_ids(text))


class Translation(BaseModel):
    """The engine's translation; the local strategy returns the original with a note."""

    text: str = Field(description="the translated answer")
    translated: bool = Field(True, description="false when the text is the untranslated original")
    note: str | None = None


class LanguageOutcome(BaseModel):
    """What the language check decided: both languages, the answer to show, and any degradation."""

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

    def run_local(self, _kit: LocalKit) -> Translation:
        """No local translation: the original, not pretending otherwise."""
        return Translation(
            text=self.answer,
            translated=False,
            note=mismatch_note(self.source_language, self.target_language),
        )


async def validate_language(question: str, answer: str, engine: Engine) -> LanguageOutcome:
    """The answer in the question's language when possible, else the original + note.

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
    links = {url_key(u.rstrip(".,;:!?)'\"…")) for u in URL_IN_PROSE.findall(text)}
    return links | {m.lower() for m in _REFERENCE.findall(text)}
