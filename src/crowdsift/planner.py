"""The planner: a question becomes a SearchPlan (search terms and subreddits).

With an LLM the plan comes from ``PlanTask.messages()``; the local strategy extracts key
phrases and spelling variants of product names ("plaud.ai", "plaud ai", "plaud") from the
question and picks subreddits by embedding similarity of the question to each subreddit's
profile (its top titles in the archive). A user's ``--subreddit`` list always wins.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, Field

from crowdsift.engines.base import FENCE_NOTE, ChatMessage, Engine, LocalKit, Task, Usage, fence
from crowdsift.errors import PlanError
from crowdsift.log import get_logger
from crowdsift.models import SUBREDDIT_RE, SearchPlan, normalise_subreddit

log = get_logger(__name__)

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers how i if in into is it its itself just me more most my
    no nor not now of off on once only or other our out over own same she should so some such
    than that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    best better good worth really actually anyone someone something thing things people use
    using used get got buy buying vs versus compared compare recommend recommendations
    recommendation opinion opinions experience experiences think should would anybody question
    worth it its isn't don't does doesn't
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+#'-]*[A-Za-z0-9+#]|[A-Za-z0-9]")


class SubredditProfile(BaseModel):
    """A subreddit the planner may choose, described by what is posted there."""

    name: str
    description: str = ""


class PlanDraft(BaseModel):
    """What an engine proposes; validated into a SearchPlan by ``plan``."""

    search_terms: list[str] = Field(default_factory=list)
    subreddits: list[str] = Field(default_factory=list)
    notes: str | None = None


@dataclass(frozen=True)
class PlanTask(Task[PlanDraft]):
    """Plan Reddit searches for a question."""

    question: str
    candidates: tuple[SubredditProfile, ...] = ()
    max_terms: int = 5
    max_subreddits: int = 3

    phase = "plan"
    output_model = PlanDraft

    def messages(self) -> list[ChatMessage]:
        hints = "\n".join(f"- r/{c.name}: {c.description[:200]}" for c in self.candidates[:40])
        system = (
            "You plan Reddit searches that find first-hand community experience for a "
            "question. Return JSON with `search_terms` (at most "
            f"{self.max_terms}: short keyword queries as a Reddit search box takes them; "
            "include spelling variants of product names, e.g. 'plaud.ai', 'plaud ai', 'plaud'), "
            f"`subreddits` (at most {self.max_subreddits} names without r/, communities "
            "where such threads live) and `notes` (one sentence on the intent). " + FENCE_NOTE
        )
        user = f"Question:\n{fence('question', self.question)}"
        if hints:
            # Descriptions are archive titles, written by strangers: fenced like posts.
            user += f"\n\nSubreddits available in the archive:\n{fence('subreddits', hints)}"
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]

    def run_local(self, kit: LocalKit) -> PlanDraft:
        terms = key_phrases(self.question, limit=self.max_terms)
        subreddits = closest_subreddits(kit, self.question, self.candidates, self.max_subreddits)
        return PlanDraft(
            search_terms=terms,
            subreddits=subreddits,
            notes="Local plan: key phrases of the question; subreddits by profile similarity.",
        )


def product_variants(token: str) -> list[str]:
    """'plaud.ai' → ['plaud.ai', 'plaud ai', 'plaud']; 'NotePin' stays as written."""
    lowered = token.lower()
    parts = [p for p in re.split(r"[.\-_]", lowered) if p]
    variants = [lowered]
    if len(parts) > 1:
        variants += [" ".join(parts), parts[0]]
    return list(dict.fromkeys(v for v in variants if len(v) > 1))


def key_phrases(question: str, *, limit: int = 5) -> list[str]:
    """Search terms from a question: product-like names with variants, then content phrases.

    A product-like word is capitalised mid-sentence, camel-cased, or mixes letters with a digit,
    dot or hyphen ("Plaud", "NotePin", "plaud.ai", "H1n"); adjacent ones form one name
    ("Plaud Note" → "plaud note", "plaud"). Content phrases are runs of other non-stopwords
    ("voice recorder"). Bare numbers (years, prices) are never terms.
    """
    words = _WORD.findall(question)
    products: list[str] = []
    name: list[str] = []
    for index, word in enumerate([*words, "."]):
        starts_name = index == 0 and len(words) > 1 and _is_product_word(words[1], 1)
        if _is_product_word(word, index) or (starts_name and word[:1].isupper()):
            name.append(word)
            continue
        if name:
            products += _name_variants(name)
            name = []
    taken = {part for product in products for part in product.split()}
    phrases: list[str] = []
    singles: list[str] = []
    run: list[str] = []
    for word in [*words, "."]:
        lowered = word.lower()
        if lowered in STOPWORDS or lowered in taken or lowered.isdigit() or lowered == ".":
            phrases += [f"{a} {b}" for a, b in itertools.pairwise(run)]
            singles += [w for w in run if len(w) > 3]
            run = []
        else:
            run.append(lowered)
    ordered = list(dict.fromkeys([*products, *phrases, *singles]))
    return ordered[:limit] or [question.strip()[:60]]


def _is_product_word(word: str, index: int) -> bool:
    lowered = word.lower()
    if lowered in STOPWORDS or lowered.isdigit() or not any(ch.isalpha() for ch in word):
        return False
    distinctive = any(ch.isdigit() or ch in ".-+" for ch in word)
    camel = word[1:] != word[1:].lower()
    return distinctive or camel or (index > 0 and word[:1].isupper())


def _name_variants(name: list[str]) -> list[str]:
    """A product name and its variants: the whole name, then each word's spelling variants."""
    whole = " ".join(w.lower() for w in name)
    variants = [whole] if len(name) > 1 else []
    for word in name[:1] if len(name) > 1 else name:
        variants += product_variants(word)
    return list(dict.fromkeys(variants))


def closest_subreddits(
    kit: LocalKit, question: str, candidates: Sequence[SubredditProfile], k: int
) -> list[str]:
    if not candidates:
        return []
    texts = [question] + [f"r/{c.name}: {c.description}" for c in candidates]
    vectors = kit.embedder.embed(texts)
    scores = vectors[1:] @ vectors[0]
    order = np.argsort(-scores, kind="stable")[:k]
    return [candidates[int(i)].name for i in order]


@dataclass
class PlanOutcome:
    plan: SearchPlan
    usage: Usage = field(default_factory=Usage)
    engine: str = ""


async def plan(
    question: str,
    *,
    engine: Engine,
    candidates: Sequence[SubredditProfile] = (),
    subreddits: Sequence[str] = (),
    max_terms: int = 5,
    max_subreddits: int = 3,
) -> PlanOutcome:
    """Plan searches for ``question``. ``subreddits`` (the user's list) overrides the engine's."""
    if not question.strip():
        raise PlanError("the question is empty; ask something like 'is the Plaud Note worth it?'")
    reply = await engine.run(
        PlanTask(question, tuple(candidates), max_terms=max_terms, max_subreddits=max_subreddits)
    )
    draft = reply.output
    chosen = [normalise_subreddit(s) for s in subreddits] or _valid_subreddits(draft.subreddits)
    if not chosen:
        chosen = [c.name for c in candidates[:max_subreddits]]
    if not chosen:
        raise PlanError("no subreddit to search: pass --subreddit NAME (repeatable)")
    terms = [t.strip() for t in draft.search_terms if t.strip()][:max_terms] or key_phrases(
        question
    )
    search_plan = SearchPlan(
        search_terms=terms,
        subreddits=chosen[:max_subreddits] if not subreddits else chosen,
        notes=draft.notes,
    )
    log.info(
        "plan_ready", engine=reply.engine, terms=search_plan.search_terms,
        subreddits=search_plan.subreddits,
    )  # fmt: skip
    return PlanOutcome(search_plan, reply.usage, reply.engine)


def _valid_subreddits(names: Sequence[str]) -> list[str]:
    valid = []
    for name in names:
        cleaned = re.sub(r"^/?r/", "", name.strip(), flags=re.IGNORECASE).strip("/").lower()
        if SUBREDDIT_RE.fullmatch(cleaned):
            valid.append(cleaned)
    return list(dict.fromkeys(valid))
