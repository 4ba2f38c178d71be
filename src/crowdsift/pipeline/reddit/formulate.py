"""Phase 1, query formulation: a question becomes a ``QueryAnalysis`` the scout can search with.

An engine (``FormulateTask``) translates the question into English search language, reads its
intent (how-to, comparison, troubleshooting), whether it is about building or using AI, and how
fast its topic moves, writes a few Reddit search queries for that intent and picks subreddits.
Nothing it says is trusted: ``formulate`` re-checks it in code —

- fields the reply left out come from the rules of ``crowdsift.pipeline.reddit.intent``;
- a question about *using* AI never gets architecture terms it did not contain (vector DB, RAG,
  embeddings), in keywords or queries, whichever ``ai_mode`` the engine claimed;
- any AI topic is fast-moving; the time filter follows from the temporal class, never from
  the engine;
- queries are deduplicated and capped; subreddits are validated names; the user's wins.

If the engine fails, the rules alone produce the analysis (and the error is reported), so the
sidecar still searches — in the candidate subreddits whose names and descriptions share the
most words with the question (``rule_subreddits``), not merely the first ones listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crowdsift.core.config.sidecar import SidecarConfig
from crowdsift.core.errors import EngineError, PlanError
from crowdsift.core.language import detect_language
from crowdsift.core.log import get_logger
from crowdsift.core.models import normalise_subreddit
from crowdsift.core.text import content_words
from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence
from crowdsift.pipeline.reddit.intent import (
    MAX_OPTIONS,
    classify_ai_mode,
    classify_intent,
    classify_temporal,
    compared_options,
    strip_architecture_terms,
    time_filter_for,
)
from crowdsift.pipeline.reddit.models import FormulationDraft, Intent, QueryAnalysis
from crowdsift.pipeline.reddit.planner import SubredditProfile, closest_subreddits, key_phrases

log = get_logger(__name__)

MAX_KEYWORDS = 8
_EXAMPLE = "'Airflow or Dagster for a small data team?'"


@dataclass(frozen=True)
class FormulateTask(Task[FormulationDraft]):
    """Read a question and write Reddit searches for it."""

    question: str
    candidates: tuple[SubredditProfile, ...] = ()
    max_subreddits: int = 3
    max_ai_queries: int = 3

    phase = "analysis"
    output_model = FormulationDraft

    def messages(self) -> list[ChatMessage]:
        system = (
            "You prepare Reddit searches that find first-hand community experience for a "
            "question. Return JSON with:\n"
            "- `english_question`: the question in English search language (translate it if "
            "it is written in another language; keep product names as written);\n"
            "- `intent`: `how_to`, `comparison`, `troubleshooting` or `general`;\n"
            "- `ai_mode`: `building_ai` when the question is about building an AI system "
            "(RAG, retrieval, vector databases, embeddings, fine-tuning, agents, inference "
            "servers), `using_ai` when it is about using AI tools in a workflow (Copilot, "
            "ChatGPT, Cursor, Claude, prompts, AI for coding), else `none`;\n"
            "- `temporal`: `fast_moving` for AI, news, new releases and version churn, "
            "`evergreen` for theory and best practice;\n"
            "- `keywords`: core search phrases in English, most specific first;\n"
            f"- `ai_queries`: at most {self.max_ai_queries} Reddit search queries written for "
            "the intent (how-to: guides and setups; comparison: 'X vs Y' threads; "
            "troubleshooting: the symptom and its fix);\n"
            f"- `subreddits`: at most {self.max_subreddits} names without r/, preferably from "
            "the list given;\n"
            "- `compared`: the options of an 'X vs Y' question, else an empty list.\n"
            "For questions about USING AI tools never add architecture terms (vector DB, "
            "vector database, RAG, embeddings, retrieval) to keywords or queries unless the "
            "question itself uses them: such a user wants workflow threads, not system "
            "design. " + FENCE_NOTE
        )
        user = f"Question:\n{fence('question', self.question)}"
        hints = "\n".join(f"- r/{c.name}: {c.description[:200]}" for c in self.candidates[:40])
        if hints:
            # Descriptions are archive titles, written by strangers: fenced like posts.
            user += f"\n\nSubreddits available:\n{fence('subreddits', hints)}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def run_local(self, kit: LocalKit) -> FormulationDraft:
        """The rules of ``intent.py`` plus embedding-picked subreddits.

        The local engine cannot translate: ``english_question`` is the question as asked, and
        keywords are its own key phrases (``key_phrases``), so a question in another language
        searches with its own words.
        """
        draft = rule_draft(self.question, max_ai_queries=self.max_ai_queries)
        subreddits = closest_subreddits(kit, self.question, self.candidates, self.max_subreddits)
        return draft.model_copy(update={"subreddits": subreddits})


def rule_draft(question: str, *, max_ai_queries: int) -> FormulationDraft:
    """A formulation from rules alone (no engine, no embedder, no subreddits)."""
    english = question.strip()
    keywords = key_phrases(english)
    intent = classify_intent(english)
    ai_mode = classify_ai_mode(english)
    compared = compared_options(english) if intent == "comparison" else []
    return FormulationDraft(
        english_question=english,
        intent=intent,
        ai_mode=ai_mode,
        temporal=classify_temporal(english, ai_mode),
        keywords=keywords,
        ai_queries=intent_queries(intent, keywords, compared)[:max_ai_queries],
        compared=compared,
    )


def intent_queries(intent: Intent, keywords: Sequence[str], compared: Sequence[str]) -> list[str]:
    """Search queries shaped by the intent, around the question's core topic.

    how_to → "how to <core>", "<core> setup"; comparison → "<a> vs <b>", "<a> or <b>" (without
    two options: "<core> comparison", "<core> alternatives"); troubleshooting → "<core> fix",
    "<core> not working"; general → "<core> experience", "<core> recommendations".
    """
    if intent == "comparison" and len(compared) >= 2:
        return [" vs ".join(compared), f"{compared[0]} or {compared[1]}"]
    core = core_topic(keywords)
    if not core:
        return []
    patterns = {
        "how_to": ("how to {}", "{} setup"),
        "comparison": ("{} comparison", "{} alternatives"),
        "troubleshooting": ("{} fix", "{} not working"),
        "general": ("{} experience", "{} recommendations"),
    }[intent]
    return [pattern.format(core) for pattern in patterns]


def core_topic(keywords: Sequence[str]) -> str:
    """The first keyword; a single word gets the next keyword sharing none of its words
    ("copilot" + "internal docs"), because one bare product name says little about the need."""
    if not keywords:
        return ""
    first = keywords[0]
    if " " in first:
        return first
    for other in keywords[1:]:
        if first not in other.split():
            return f"{first} {other}"
    return first


@dataclass
class FormulationOutcome:
    """The checked analysis, what the engine call cost, and what went wrong on the way."""

    analysis: QueryAnalysis
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)


async def formulate(
    question: str,
    *,
    engine: Engine,
    candidates: Sequence[SubredditProfile] = (),
    subreddits: Sequence[str] = (),
    config: SidecarConfig,
) -> FormulationOutcome:
    """Formulate ``question`` with ``engine`` and check the result (see the module docstring).

    ``subreddits`` (the user's list) overrides whatever the engine picked. Raises ``PlanError``
    for an empty question, an invalid user subreddit, or when no subreddit is known at all.
    """
    if not question.strip():
        raise PlanError(f"the question is empty; ask something like {_EXAMPLE}")
    chosen_by_user = _user_subreddits(subreddits)
    errors: list[str] = []
    usage = Usage()
    task = FormulateTask(
        question,
        tuple(candidates),
        max_subreddits=config.max_subreddits,
        max_ai_queries=config.max_ai_queries,
    )
    try:
        reply = await engine.run(task)
        draft, usage = reply.output, reply.usage
    except EngineError as exc:
        draft = rule_draft(question, max_ai_queries=config.max_ai_queries)
        errors.append(f"query formulation by the engine failed, used keyword rules instead: {exc}")
        log.warning("sidecar_formulate_fallback", error=str(exc))
    analysis = check_draft(
        question,
        draft,
        candidates=candidates,
        user_subreddits=chosen_by_user,
        config=config,
    )
    log.info(
        "sidecar_formulated", intent=analysis.intent, ai_mode=analysis.ai_mode,
        temporal=analysis.temporal, keywords=analysis.keywords, queries=analysis.ai_queries,
        subreddits=analysis.subreddits, language=analysis.language,
    )  # fmt: skip
    return FormulationOutcome(analysis, usage, errors)


def check_draft(
    question: str,
    draft: FormulationDraft,
    *,
    candidates: Sequence[SubredditProfile],
    user_subreddits: Sequence[str],
    config: SidecarConfig,
) -> QueryAnalysis:
    """A draft made safe: rules fill omitted fields, architecture terms stripped for using-AI
    questions, queries deduplicated and capped, subreddits validated (the user's win)."""
    english = draft.english_question.strip() or question.strip()
    given = draft.model_fields_set
    intent = draft.intent if "intent" in given else classify_intent(english)
    rule_modes = {classify_ai_mode(english), classify_ai_mode(question)}
    ai_mode = draft.ai_mode if "ai_mode" in given else classify_ai_mode(english)
    temporal = draft.temporal if "temporal" in given else classify_temporal(english, ai_mode)
    if ai_mode != "none":
        temporal = "fast_moving"
    keywords = _clean(draft.keywords)
    queries = _clean(draft.ai_queries)
    if ai_mode == "using_ai" or "using_ai" in rule_modes:
        # Whatever mode the engine claims, the rules reading "Copilot" in the question or its
        # translation are enough. Terms are checked against the question as asked: an engine
        # that put "RAG" into its own translation must not thereby license RAG queries.
        keywords = strip_architecture_terms(keywords, question)
        queries = strip_architecture_terms(queries, question)
    keywords = keywords[:MAX_KEYWORDS] or key_phrases(english)
    compared = _clean(o.lower() for o in draft.compared)[:MAX_OPTIONS]
    if not compared and intent == "comparison":
        compared = compared_options(english) or compared_options(question)
    return QueryAnalysis(
        question=question,
        language=detect_language(question),
        english_question=english,
        intent=intent,
        ai_mode=ai_mode,
        temporal=temporal,
        time_filter=time_filter_for(temporal),
        keywords=keywords,
        ai_queries=queries[: config.max_ai_queries],
        subreddits=_subreddits(question, user_subreddits, draft.subreddits, candidates, config),
        compared=compared,
    )


def _clean(items: Iterable[str]) -> list[str]:
    """Trimmed, whitespace-collapsed, non-empty, each once ignoring case (first spelling kept)."""
    seen: set[str] = set()
    cleaned: list[str] = []
    for item in items:
        text = " ".join(item.split())
        if text and text.lower() not in seen:
            seen.add(text.lower())
            cleaned.append(text)
    return cleaned


def _user_subreddits(names: Sequence[str]) -> list[str]:
    chosen: list[str] = []
    for name in names:
        try:
            chosen.append(normalise_subreddit(name))
        except ValueError as exc:
            raise PlanError(f"{exc}; pass --subreddit NAME, e.g. --subreddit homelab") from exc
    return list(dict.fromkeys(chosen))


def rule_subreddits(question: str, candidates: Sequence[SubredditProfile], limit: int) -> list[str]:
    """Candidates sharing the most content words with the question, best first (ties keep the
    candidates' order); those sharing none are left out.

    The choice of the rules when the engine picked nothing usable (it failed, or named no valid
    subreddit): without it the sidecar would search whichever candidates happen to come first,
    e.g. an archive's alphabetically first communities, and find nothing.
    """
    wanted = set(content_words(question))
    overlap = [
        (len(wanted & set(content_words(f"{c.name} {c.description}"))), n, c.name)
        for n, c in enumerate(candidates)
    ]
    ranked = sorted((item for item in overlap if item[0] > 0), key=lambda item: (-item[0], item[1]))
    return [name for _, _, name in ranked][:limit]


def _subreddits(
    question: str,
    user: Sequence[str],
    proposed: Sequence[str],
    candidates: Sequence[SubredditProfile],
    config: SidecarConfig,
) -> list[str]:
    if user:
        return list(user)
    valid: list[str] = []
    for name in proposed:
        try:
            valid.append(normalise_subreddit(name))
        except ValueError:
            log.debug("sidecar_subreddit_rejected", name=name)
    chosen = list(dict.fromkeys(valid))[: config.max_subreddits]
    if not chosen:
        chosen = rule_subreddits(question, candidates, config.max_subreddits)
    if not chosen:
        chosen = [c.name for c in candidates[: config.max_subreddits]]
    if not chosen:
        raise PlanError("no subreddit to search: pass --subreddit NAME (repeatable)")
    return chosen
