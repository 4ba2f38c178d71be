"""Query formulation (seed 001, phase 1): a question becomes a ``QueryAnalysis`` to search with.

An engine (``FormulateTask``) translates the question into English search language, reads its
intent (how-to, comparison, troubleshooting), whether it is about building or using AI, and how
fast its topic moves, writes a few Reddit search queries for that intent and picks subreddits.
Nothing it says is trusted: ``formulate`` re-checks it in code —

- fields the reply left out come from the rules of ``crowdsift.pipeline.reddit.intent``;
- a question about *using* AI never gets architecture terms it did not contain (vector DB, RAG,
  embeddings), in keywords or queries, whichever ``ai_mode`` the engine claimed;
- any AI topic is fast-moving; the time filter follows from the temporal class, never from
  the engine;
- queries are deduplicated and capped; subreddits are validated names; the user's wins;
- a lying or hijacked engine cannot steer the searches (``crowdsift.pipeline.reddit.guard``): a
  translation, keyword, query or compared option carrying a link or a citation is replaced or
  dropped, and so is a subreddit the source does not have; a keyword or query sharing no
  content word with the question is left out, and when none of a part is left the rules write
  it; when none of the engine's keywords and queries is usable, the rules write all of it.
  Each replacement (not a related term left out beside the question's own) is logged
  (``formulation_replaced``), listed in ``FormulationOutcome.replaced`` and reported as one of
  the run's errors (prefix ``REPLACED``), so the Reddit answer says ``partial``;
- subreddits are chosen for the question's topic (``topicality.topical_subreddits``): a candidate
  whose profile shares nothing with the question is dropped while another one has something;
- the question's subject (the products it names, the options it compares, else its content
  terms: ``crowdsift.pipeline.synthesis.subject``) is read here, once, from the checked fields,
  and travels in ``QueryAnalysis.subject`` to the synthesis that holds the evidence to it.

If the engine fails, the rules alone produce the analysis (and the error is reported), so the
Reddit branch still searches — in the candidate subreddits whose names and descriptions share the
most words with the question (``topicality.topical_subreddits``), not merely the first ones listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.errors import EngineError, PlanError
from crowdsift.core.language import detect_language
from crowdsift.core.log import get_logger
from crowdsift.core.models import normalise_subreddit
from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence
from crowdsift.pipeline.reddit.guard import (
    Anchor,
    Screened,
    carries_reference,
    screen_subreddits,
    screen_terms,
    shown,
)
from crowdsift.pipeline.reddit.intent import (
    MAX_OPTIONS,
    classify_ai_mode,
    classify_intent,
    classify_temporal,
    compared_options,
    strip_architecture_terms,
    time_filter_for,
)
from crowdsift.pipeline.reddit.models import (
    AIMode,
    FormulationDraft,
    Intent,
    QueryAnalysis,
    Temporal,
)
from crowdsift.pipeline.reddit.topicality import (
    SubredditProfile,
    closest_subreddits,
    key_phrases,
    topical_subreddits,
)
from crowdsift.pipeline.synthesis.subject import derive_subject

log = get_logger(__name__)

MAX_KEYWORDS = 8
REPLACED = "the engine's query formulation was corrected by the rules"
"""How every error of a replaced part begins, so the replacements can be counted."""
_EXAMPLE = "'Airflow or Dagster for a small data team?'"


@dataclass(frozen=True)
class FormulateTask(Task[FormulationDraft]):
    """Read a question and write Reddit searches for it."""

    question: str
    candidates: tuple[SubredditProfile, ...] = ()
    max_subreddits: int = 3
    max_ai_queries: int = 3
    ranked: bool = False
    """The candidates come best first (the directory's match for this question)."""

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
            "- `keywords`: core search phrases in English, most specific first, made of the "
            "question's own words or their translation (a term sharing none is dropped);\n"
            f"- `ai_queries`: at most {self.max_ai_queries} Reddit search queries written for "
            "the intent (how-to: guides and setups; comparison: 'X vs Y' threads; "
            "troubleshooting: the symptom and its fix);\n"
            f"- `subreddits`: at most {self.max_subreddits} names without r/, from the list "
            "given (others are not searched), only those about the question's topic;\n"
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
        if self.ranked:  # already ordered for this question, names and meaning together
            subreddits = [c.name for c in self.candidates[: self.max_subreddits]]
        else:
            subreddits = closest_subreddits(
                kit, self.question, self.candidates, self.max_subreddits
            )
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
    """The checked analysis, what the engine call cost, and what went wrong on the way.

    ``replaced`` gives the reason for each part of the engine's formulation the rules replaced
    (also in ``errors``, each as ``"{REPLACED}: {reason}"``)."""

    analysis: QueryAnalysis
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)


async def formulate(
    question: str,
    *,
    engine: Engine,
    candidates: Sequence[SubredditProfile] = (),
    subreddits: Sequence[str] = (),
    config: RedditConfig,
    closed: bool = True,
    ranked: bool = False,
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
        ranked=ranked,
    )
    try:
        reply = await engine.run(task)
        draft, usage = reply.output, reply.usage
    except EngineError as exc:
        draft = rule_draft(question, max_ai_queries=config.max_ai_queries)
        errors.append(f"query formulation by the engine failed, used keyword rules instead: {exc}")
        log.warning("reddit_formulate_fallback", error=str(exc))
    analysis, replaced = check_draft(
        question,
        draft,
        candidates=candidates,
        user_subreddits=chosen_by_user,
        closed=closed,
        config=config,
        ranked=ranked,
    )
    for reason in replaced:
        log.warning("formulation_replaced", reason=reason, engine=engine.name)
    errors += [f"{REPLACED}: {reason}" for reason in replaced]
    log.info(
        "reddit_formulated", intent=analysis.intent, ai_mode=analysis.ai_mode,
        temporal=analysis.temporal, keywords=analysis.keywords, queries=analysis.ai_queries,
        subreddits=analysis.subreddits, language=analysis.language,
    )  # fmt: skip
    return FormulationOutcome(analysis, usage, errors, replaced)


def check_draft(
    question: str,
    draft: FormulationDraft,
    *,
    candidates: Sequence[SubredditProfile],
    user_subreddits: Sequence[str],
    config: RedditConfig,
    closed: bool = True,
    ranked: bool = False,
) -> tuple[QueryAnalysis, list[str]]:
    """A draft made safe, and the reasons for each part of it the rules replaced.

    Rules fill omitted fields; what a lying or hijacked engine wrote is screened (module
    docstring); architecture terms are stripped for using-AI questions; queries are
    deduplicated and capped; subreddits validated against the candidates (the user's win) and
    kept to the question's topic.
    """
    replaced: list[str] = []
    language = detect_language(question)
    english = _english(question, draft.english_question, language == "en", replaced)
    anchor = Anchor.of(question) if language == "en" else Anchor.of(question, english)
    keywords = screen_terms(_clean(draft.keywords), anchor, "keyword")
    queries = screen_terms(_clean(draft.ai_queries), anchor, "search query")
    replaced += keywords.dropped + queries.dropped
    _report_unanchored(keywords, queries, replaced)
    proposed: Sequence[str] = draft.subreddits
    if _turned_away(keywords) + _turned_away(queries) and not (keywords.kept or queries.kept):
        # Nothing the engine wrote to search with is usable: nothing it read into the question
        # (intent, mode, options, communities) is trusted either.
        replaced.append("none of its keywords or queries was usable: the rules wrote all of it")
        draft = rule_draft(question, max_ai_queries=config.max_ai_queries)
        english, proposed = draft.english_question, ()
        keywords, queries = Screened(list(draft.keywords)), Screened(list(draft.ai_queries))
    intent, ai_mode, temporal = _reading(draft, english)
    using_ai = "using_ai" in {ai_mode, classify_ai_mode(english), classify_ai_mode(question)}
    compared = _compared(draft, question, english, intent, anchor, replaced)
    kept_keywords, kept_queries = _search_terms(
        question, english, keywords, queries, using_ai=using_ai, intent=intent, compared=compared
    )
    topic = question if english == question else f"{question}\n{english}"
    subject = derive_subject(
        question, english=english, language=language, keywords=kept_keywords, compared=compared
    )
    subreddits = _subreddits(
        topic, user_subreddits, proposed, candidates, config, replaced, closed=closed, ranked=ranked
    )
    return QueryAnalysis(
        question=question,
        language=language,
        english_question=english,
        intent=intent,
        ai_mode=ai_mode,
        temporal=temporal,
        time_filter=time_filter_for(temporal),
        keywords=kept_keywords,
        ai_queries=kept_queries[: config.max_ai_queries],
        subreddits=subreddits,
        compared=compared,
        subject=subject,
    ), replaced


def _search_terms(
    question: str,
    english: str,
    keywords: Screened,
    queries: Screened,
    *,
    using_ai: bool,
    intent: Intent,
    compared: list[str],
) -> tuple[list[str], list[str]]:
    """The keywords and queries kept: for a question about using AI, without architecture
    terms; keywords capped (else the question's key phrases); queries by intent when the
    engine's were all turned away."""
    kept_keywords, kept_queries = keywords.kept, queries.kept
    if using_ai:
        # Whatever mode the engine claims, the rules reading "Copilot" in the question or its
        # translation are enough. Terms are checked against the question as asked: an engine
        # that put "RAG" into its own translation must not thereby license RAG queries.
        kept_keywords = strip_architecture_terms(kept_keywords, question)
        kept_queries = strip_architecture_terms(kept_queries, question)
    kept_keywords = kept_keywords[:MAX_KEYWORDS] or key_phrases(english)
    if _turned_away(queries) and not kept_queries:
        kept_queries = intent_queries(intent, kept_keywords, compared)
    return kept_keywords, kept_queries


def _report_unanchored(keywords: Screened, queries: Screened, replaced: list[str]) -> None:
    """Terms sharing no word with the question: a reason when none of a part was left, else
    a log line."""
    for part, screened in (("keywords", keywords), ("search queries", queries)):
        if screened.unanchored and not screened.kept:
            gave = ", ".join(map(shown, screened.unanchored))
            replaced.append(f"none of its {part} ({gave}) shares a word with the question")
        elif screened.unanchored:
            log.info("formulation_term_dropped", part=part, unanchored=screened.unanchored)


def _reading(draft: FormulationDraft, english: str) -> tuple[Intent, AIMode, Temporal]:
    """The draft's intent, AI mode and temporal class; the rules' for what it left out (any
    question about AI is fast-moving)."""
    given = draft.model_fields_set
    intent = draft.intent if "intent" in given else classify_intent(english)
    ai_mode = draft.ai_mode if "ai_mode" in given else classify_ai_mode(english)
    temporal = draft.temporal if "temporal" in given else classify_temporal(english, ai_mode)
    if ai_mode != "none":
        temporal = "fast_moving"
    return intent, ai_mode, temporal


def _compared(
    draft: FormulationDraft,
    question: str,
    english: str,
    intent: str,
    anchor: Anchor,
    replaced: list[str],
) -> list[str]:
    """The options the question compares: the draft's that share a word with it (the others
    only left out), else for a comparison the ones the rules read."""
    options = screen_terms(_clean(o.lower() for o in draft.compared), anchor, "compared option")
    replaced += options.dropped  # an option sharing no word is only left out
    compared = options.kept[:MAX_OPTIONS]
    if not compared and intent == "comparison":
        compared = compared_options(english) or compared_options(question)
    return compared


def _turned_away(screened: Screened) -> int:
    """How many items the engine gave that the screen turned away."""
    return len(screened.dropped) + len(screened.unanchored)


def _english(question: str, proposed: str, in_english: bool, replaced: list[str]) -> str:
    """The engine's English version of the question, unless it carries a reference or (for an
    English question) shares no word with it: then the question as asked."""
    english = proposed.strip()
    if not english:
        return question.strip()
    if carries_reference(english, question):
        why = "carries a link or a citation"
    elif in_english and not Anchor.of(question).holds(english):
        why = "shares no word with the question"
    else:
        return english
    replaced.append(f"english_question {shown(english)} {why}; searched with the question as asked")
    return question.strip()


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


def _subreddits(
    topic: str,
    user: Sequence[str],
    proposed: Sequence[str],
    candidates: Sequence[SubredditProfile],
    config: RedditConfig,
    replaced: list[str],
    *,
    closed: bool = True,
    ranked: bool = False,
) -> list[str]:
    """The user's subreddits; else the engine's that the source has and that are on ``topic``
    (with no candidate sharing a word with it, the engine's first); else the rules' choice;
    else the first candidate.

    ``closed``: the candidates are every subreddit the source has (an archive's profiles), so a
    name outside them is a lie to replace. A live source (Reddit's API, Arctic Shift) has every
    subreddit: the built-in candidates are only suggestions, and any valid name the engine picks
    is kept (the topic check applies to the candidates it knows). ``ranked``: the candidates
    are the directory's closest communities to this question, best first: the engine's picks
    among them (a name it was not shown is replaced, as an archive's would be), else the first
    ones, are searched without a second topic check."""
    if user:
        return list(user)
    known = [c.name for c in candidates]
    screened = screen_subreddits(proposed, known if closed or ranked else [])
    replaced += screened.dropped
    if closed and known:  # an archive: every subreddit it holds is searched, the ranking decides
        return known
    chosen = screened.kept
    if ranked:  # the directory's closest communities: the engine's picks, else the best first
        return (chosen or known)[: config.max_subreddits]
    if candidates and chosen:
        topical = topical_subreddits(topic, candidates, len(candidates))
        if topical:  # a pick with nothing on the question is a choice to refine, not a lie
            off_topic = [name for name in chosen if name in known and name not in topical]
            if off_topic:
                log.info("reddit_subreddits_off_topic", subreddits=off_topic)
            chosen = [name for name in chosen if name in topical or name not in known]
        elif closed:  # no candidate shares a word with the question: the engine's first pick
            chosen = chosen[:1]
    chosen = chosen[: config.max_subreddits]
    if not chosen:
        # The engine picked nothing usable (it failed, or named no valid subreddit): the rules
        # choose the candidates on the question's topic, most about it first. Without them the
        # branch would search whichever candidates come first (an archive's alphabetically
        # first communities) and find nothing.
        chosen = topical_subreddits(topic, candidates, config.max_subreddits)
    if not chosen:
        chosen = [c.name for c in candidates[:1]]
    if not chosen:
        raise PlanError("no subreddit to search: pass --subreddit NAME (repeatable)")
    return chosen
