"""Comment synthesis (seed 001, phase 7): the comment groups' comments become four short
sections under the answer.

The sections, always in this order and each omitted when it has nothing to say:

- ``expert_notes`` — what the expert added in comments under the main-source posts;
- ``community_notes`` — what others said under those posts;
- ``expert_drift`` — the expert's own comments inside relevant drift groups;
- ``community_opinions`` — everyone else's comments inside those groups.

Titles are fixed strings in the question's language (English when we have no translation), so
a model can never rename a section. One ``CommentSynthesisTask`` writes all four texts, citing
comments as ``[comment:ID]``. Citations are then checked in code, per section: a section may
cite only the comments it was given. That is stricter than "any comment shown" on purpose —
a community comment cited under "Notes from the expert" would put words in the expert's mouth.

The local engine writes nothing: it quotes each section's most relevant comments (similarity to
the question), trimmed, with author and reference, under a line saying it is extractive. If an
LLM engine fails, the comments are listed the same way, unranked, rather than lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from crowdsift.core.citations import remove_foreign, strip_quoted_citations
from crowdsift.core.config.experts import ExpertsConfig
from crowdsift.core.errors import EngineError
from crowdsift.core.log import get_logger
from crowdsift.core.sentences import truncate_words
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
from crowdsift.pipeline.experts.comments import CommentGroups, relevance_scores
from crowdsift.sources.experts.models import CommentSection, ExpertComment

log = get_logger(__name__)

SectionKind = Literal["expert_notes", "community_notes", "expert_drift", "community_opinions"]
SECTION_ORDER: tuple[SectionKind, ...] = (
    "expert_notes",
    "community_notes",
    "expert_drift",
    "community_opinions",
)
TITLES: dict[str, dict[SectionKind, str]] = {
    "en": {
        "expert_notes": "Notes from the expert",
        "community_notes": "Notes from the community",
        "expert_drift": "Additional comments from the expert",
        "community_opinions": "Community opinions",
    },
    "ru": {
        "expert_notes": "Заметки эксперта",
        "community_notes": "Заметки сообщества",
        "expert_drift": "Дополнительные комментарии эксперта",
        "community_opinions": "Мнения сообщества",
    },
}
_LEADS: dict[str, dict[str, str]] = {
    "en": {
        "ranked": "Extractive (local engine): the most relevant comments, quoted as written.",
        "listed": "Extractive (the synthesis failed): comments quoted as written.",
    },
    "ru": {
        "ranked": "Выдержки (локальный движок): самые релевантные комментарии без изменений.",
        "listed": "Выдержки (синтез не удался): комментарии без изменений.",
    },
}
_INSTRUCTIONS: dict[SectionKind, str] = {
    "expert_notes": "the expert's own comments under the posts the answer cites",
    "community_notes": "other people's comments under the posts the answer cites",
    "expert_drift": "the expert's comments in related side discussions",
    "community_opinions": "other people's comments in related side discussions",
}
PROMPT_COMMENT_CHARS = 1000
_CITATION = re.compile(r"\s*\[comment:([^\]]*)\]", re.IGNORECASE)
_NOT_A_COMMENT = r"(?:post\s*:|t[13]_)[^\]\n]*"
"""Markers a section cannot resolve: it cites its own comments, ``[comment:ID]``, only."""

SectionInput = tuple[SectionKind, tuple[ExpertComment, ...]]


def section_titles(language: str) -> dict[SectionKind, str]:
    """The four titles in ``language``; English for languages we have no titles for."""
    return TITLES.get(language, TITLES["en"])


class SectionTexts(BaseModel):
    """One text per section ("" when there is nothing to say), citing ``[comment:ID]``."""

    expert_notes: str = ""
    community_notes: str = ""
    expert_drift: str = ""
    community_opinions: str = ""


class CommentSynthesisOutcome(BaseModel):
    """The comment synthesis' sections (in order, empty ones omitted), cost, and what grounding
    removed."""

    sections: list[CommentSection] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    removed_citations: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def section_inputs(groups: CommentGroups, limit: int) -> list[SectionInput]:
    """Each section's comments (at most ``limit``), sections in order, empty ones left out."""
    drift = [c for g in groups.drift for c in g.comments]
    by_kind: dict[SectionKind, list[ExpertComment]] = {
        "expert_notes": groups.author_clarifications,
        "community_notes": groups.community,
        "expert_drift": [c for c in drift if c.author_is_expert],
        "community_opinions": [c for c in drift if not c.author_is_expert],
    }
    return [(kind, tuple(by_kind[kind][:limit])) for kind in SECTION_ORDER if by_kind[kind]]


@dataclass(frozen=True)
class CommentSynthesisTask(Task[SectionTexts]):
    """Write the comment sections in the question's language, citing comments by id."""

    question: str
    language: str
    sections: tuple[SectionInput, ...]
    local_items: int = 5
    excerpt_chars: int = 280

    phase: ClassVar[Phase] = "synthesis"
    output_model: ClassVar[type[BaseModel]] = SectionTexts

    def messages(self) -> list[ChatMessage]:
        language = language_name(self.language)
        blocks = []
        for kind, comments in self.sections:
            fenced = "\n".join(fence(f"comment:{c.comment_id}", _prompt_line(c)) for c in comments)
            blocks.append(f"Section {kind} ({_INSTRUCTIONS[kind]}):\n{fenced}")
        system = (
            "You condense Telegram comments into short notes that complement an expert's "
            "answer to a question. Write in " + language + ". For each section below, write a "
            "few sentences or bullet points with the insights that matter for the question: "
            "clarifications, corrections, experience, disagreement; skip thanks and chatter. "
            "End every statement with the [comment:ID] of the comment it comes from, citing "
            "only comments listed in that same section. Return JSON with the keys "
            '"expert_notes", "community_notes", "expert_drift", "community_opinions"; use "" '
            "for a section that was not given or has nothing relevant. " + FENCE_NOTE
        )
        user = f"Question:\n{fence('question', self.question)}\n\n" + "\n\n".join(blocks)
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def run_local(self, kit: LocalKit) -> SectionTexts:
        """Extractive: each section's comments ranked by relevance to the question, quoted."""
        comments = [c for _, section in self.sections for c in section]
        scores = relevance_scores(self.question, [c.text for c in comments], kit.embedder)
        by_id = {c.comment_id: s for c, s in zip(comments, scores, strict=True)}
        return extract_sections(
            self.sections, by_id, self.language, self.local_items, self.excerpt_chars, "ranked"
        )


def _prompt_line(comment: ExpertComment) -> str:
    who = "the expert" if comment.author_is_expert else "community"
    text = truncate_words(" ".join(comment.text.split()), PROMPT_COMMENT_CHARS)
    return f"{comment.author} ({who}, {comment.date:%Y-%m-%d}): {text}"


def extract_sections(
    sections: Sequence[SectionInput],
    scores: dict[int, float],
    language: str,
    items: int,
    excerpt_chars: int,
    lead: Literal["ranked", "listed"],
) -> SectionTexts:
    """Quote the ``items`` best-scoring comments per section (ties: given order), trimmed."""
    leads = _LEADS.get(language, _LEADS["en"])
    texts: dict[str, str] = {}
    for kind, comments in sections:
        order = sorted(
            range(len(comments)), key=lambda i: (-scores.get(comments[i].comment_id, 0.0), i)
        )
        lines = [leads[lead]]
        for i in order[:items]:
            comment = comments[i]
            quote = strip_quoted_citations(comment.text)  # the citation is ours, added below
            excerpt = truncate_words(" ".join(quote.split()), excerpt_chars)
            author = strip_quoted_citations(comment.author)  # a display name is anyone's to choose
            lines.append(f"- {author}: “{excerpt}” [comment:{comment.comment_id}]")
        texts[kind] = "\n".join(lines)
    return SectionTexts.model_validate(texts)


def ground_sections(
    texts: SectionTexts, sections: Sequence[SectionInput], language: str
) -> tuple[list[CommentSection], list[str], list[str]]:
    """Sections in order, each citing only its own comments; removed citations; dropped sections.

    A section left citing none of its comments is dropped whole: its text could not be traced
    to anything anyone said. So is text for a section that was given no comments.
    """
    titles = section_titles(language)
    given = {kind: {c.comment_id for c in comments} for kind, comments in sections}
    said = {kind: "\n".join(c.text for c in comments) for kind, comments in sections}
    removed: list[str] = []
    dropped: list[str] = []
    result = []
    for kind in SECTION_ORDER:
        raw = getattr(texts, kind).strip()
        if not raw:
            continue
        text, cited, unknown = keep_known_citations(raw, given.get(kind, set()))
        removed.extend(f"{kind}: comment:{ref}" for ref in unknown)
        # Sections cite comments, which have no URL of their own: no link is a citation here,
        # and a bare one stays only when it is quoted from one of the section's comments.
        text, foreign = remove_foreign(
            text, allowed=_nowhere, quoted=_quoted_in(said.get(kind, "")), markers=_NOT_A_COMMENT
        )
        removed.extend(f"{kind}: {what}" for what in foreign)
        if not cited:
            dropped.append(f"dropped the {kind} section: it cited none of its comments")
            continue
        result.append(CommentSection(kind=kind, title=titles[kind], text=text, comment_ids=cited))
    return result, removed, dropped


def _nowhere(_url: str) -> bool:
    return False


def _quoted_in(said: str) -> Callable[[str], bool]:
    """Is a link quoted (perhaps cut with "…") from ``said``?"""
    return lambda url: url.rstrip("…") in said


def keep_known_citations(text: str, allowed: set[int]) -> tuple[str, list[int], list[str]]:
    """``text`` with only ``allowed`` ``[comment:ID]`` citations; cited ids; removed refs."""
    cited: list[int] = []
    unknown: list[str] = []

    def replace(match: re.Match[str]) -> str:
        known = []
        for part in re.split(r"[,;\s]+", match.group(1)):
            ref = part.strip().lower().removeprefix("comment:")
            if ref.isdigit() and int(ref) in allowed:
                known.append(int(ref))
            elif ref:
                unknown.append(ref)
        cited.extend(known)
        return "".join(f" [comment:{i}]" for i in dict.fromkeys(known))

    cleaned = _CITATION.sub(replace, text).strip()
    return cleaned, list(dict.fromkeys(cited)), unknown


async def synthesize_comments(
    question: str,
    groups: CommentGroups,
    engine: Engine,
    config: ExpertsConfig,
    *,
    language: str,
) -> CommentSynthesisOutcome:
    """One engine call over every section's comments, grounded afterwards.

    No call when there are no comments. When the engine fails, each section lists its first
    comments as written (and a note says so): the comments are real, only the synthesis is
    missing.
    """
    sections = section_inputs(groups, config.max_comments_per_section)
    outcome = CommentSynthesisOutcome()
    if not sections:
        return outcome
    task = CommentSynthesisTask(
        question,
        language,
        tuple(sections),
        config.synthesis_local_items,
        config.synthesis_excerpt_chars,
    )
    try:
        reply = await engine.run(task)
        texts = reply.output
        outcome.usage = reply.usage
    except EngineError as exc:
        log.warning("comment_synthesis_failed", error=str(exc))
        outcome.notes.append(f"comment synthesis failed ({exc}); comments are quoted instead")
        texts = extract_sections(
            sections, {}, language, config.synthesis_local_items,
            config.synthesis_excerpt_chars, "listed",
        )  # fmt: skip
    outcome.sections, outcome.removed_citations, dropped = ground_sections(
        texts, sections, language
    )
    outcome.notes.extend(dropped)
    if outcome.removed_citations:
        log.warning("comment_citations_removed", removed=outcome.removed_citations[:10])
    log.info("comment_synthesis", sections=[s.kind for s in outcome.sections], language=language)
    return outcome
