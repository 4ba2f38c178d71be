"""Rule-based reading of a question: intent, building-vs-using AI, how fast its topic moves.

These rules are the Reddit branch's floor. The local engine uses them as its whole analysis; with an
LLM they fill what the reply left out, and one of them is enforced whatever the engine says:
for questions about *using* AI tools, search queries never gain architecture terms (vector DB,
RAG, embeddings) the question did not contain (seed 001, phase 1, "anti-hallucination").
Someone asking how to give Copilot their docs wants workflow threads, not RAG tutorials.

The rules read English (the engine translates first; the local engine cannot, so a question
in another language mostly lands on ``general`` / ``none`` / ``evergreen``, which is the safe
default: broader queries, no time limit).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from crowdsift.core.config import TimeFilter
from crowdsift.core.words import STOPWORDS
from crowdsift.pipeline.reddit.models import AIMode, Intent, Temporal
from crowdsift.pipeline.synthesis import lexicon

# --- intent --------------------------------------------------------------------------------------

_STRONG_COMPARISON = re.compile(
    r"\b(?:vs\.?|versus|compar(?:e|ed|es|ing|ison)|better than|worse than"
    r"|differences? between|differ from)(?!\w)",
    re.IGNORECASE,
)
_TROUBLESHOOTING = re.compile(
    rf"(?<!\w){lexicon.alternation(lexicon.SYMPTOMS)}(?!\w)"
    r"|\b(?:fix|fixing|does not work|won'?t (?:work|start|boot|load|connect|open|turn on)"
    r"|issues? with|problems? with|why (?:does|doesn'?t|won'?t|is|isn'?t|do|don'?t|did|can'?t)"
    r"|(?:restarts?|reboots?|disconnects?|drops?) (?:by itself|randomly|on its own|every)"
    r"|keeps? \w+ing|not (?:showing|detected|recogni[sz]ed)|(?:much |way |really )?slower than"
    r"|only (?:gives|gets|getting) (?:me )?(?:about |around )?\d+"
    # a request for a diagnosis
    r"|what (?:should|can|could) i (?:check|try|look at)|what am i doing wrong"
    r"|what (?:could|would|might) cause)\b",
    re.IGNORECASE,
)
"""A problem to fix: a symptom (``lexicon.SYMPTOMS``), a thing that will not work, something
that keeps happening, a request for a diagnosis."""
_HOW_TO = re.compile(
    r"\b(?:how (?:to|do i|do you|can i|should i|would i)|guide|tutorial|walkthrough"
    r"|set ?up|setting up|install(?:ing|ation)?|configur(?:e|ing|ation)|best way to"
    r"|step by step)\b",
    re.IGNORECASE,
)


def classify_intent(text: str) -> Intent:
    """What kind of answer the question wants, by keyword rules in this order of precedence:

    1. ``comparison`` on an explicit marker: "vs", "versus", "compare", "better than",
       "difference between";
    2. ``troubleshooting``: "error", "fix", "not working", "fails", "crash", "broken",
       "issue with", "why does/won't ...", a symptom ("freezes", "keeps unloading", "restarts
       by itself", "slower than", "only gets 14 tokens/s") or a request for a diagnosis ("what
       should I check?") — a problem report that mentions two products ("crashes on Postgres
       or MySQL") is still a problem to fix;
    3. ``comparison`` on a choice between options: "X or Y?", "between X and Y" (see
       ``compared_options``; "install or configure" is not a choice of options);
    4. ``how_to``: "how to", "how do I", "guide", "set up", "install", "configure",
       "best way to" — a how-to question naming two options ("best way to host: VPS or
       PaaS?") really asks which one, so rule 3 comes first;
    5. ``general`` otherwise.
    """
    if _STRONG_COMPARISON.search(text):
        return "comparison"
    if _TROUBLESHOOTING.search(text):
        return "troubleshooting"
    if compared_options(text):
        return "comparison"
    if _HOW_TO.search(text):
        return "how_to"
    return "general"


_PICK = re.compile(
    r"\b(?:which|best|recommend\w*|suggest\w*|alternatives?|something else"
    r"|(?:should|would|do) (?:i|you|we) (?:buy|get|choose|pick|go with)"
    r"|is there (?:a|an|any)|are there any|looking for (?:a|an)"
    r"|what \w+(?: \w+){0,3} (?:should|to|would you) (?:i |we )?(?:buy|get|use|choose|pick))\b",
    re.IGNORECASE,
)


def asks_for_pick(text: str) -> bool:
    """Whether the question asks what to get or use ("which … should I buy?", "best X for Y?",
    "is there a tool that …?", "X, Y or something else?"): its answer is what the replies
    recommend, named and counted."""
    return bool(_PICK.search(text))


# --- compared options ----------------------------------------------------------------------------

MAX_OPTIONS = 4
MAX_OPTION_WORDS = 4
_LEAD_WORDS = lexicon.LEAD_VERBS
_CLAUSE_END = re.compile(r"[?!;:]|\.(?=\s|$)")
_SEPARATOR = re.compile(
    r"\s+(?:vs\.?|versus|or|better than|worse than|compar(?:e|es|ed) (?:to|with))\s+"
)
_COMPARE_FORM = re.compile(r"\b(?:between|compar(?:e|ing)|comparison of)\s+(?!to\b|with\b)(.+)")
_COMPARE_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|with|to|vs\.?|versus|or)\s+")
_EDGE_PUNCTUATION = "\"'()[]{}<>,*`"


def compared_options(text: str) -> list[str]:
    """The options of an "X vs Y" / "X or Y" / "X versus Y" / "compare X and Y" / "between X and
    Y" / "X better than Y" question: lower-case, trimmed, each once, at most four.

    The left-hand option is the run of words before the separator after the last stop word or
    lead verb ("should I use **Home Assistant** or ..."; "learn" and "install" are lead verbs),
    the right-hand one the run after it up to the next stop word ("... or **Dagster** in 2026").
    Comma lists count ("Airflow, Dagster or Prefect") when each item is a bare name. Fewer than
    two options (e.g. "is it worth it or not?") means the question compares nothing: ``[]``.
    """
    for clause in _CLAUSE_END.split(text.lower()):
        options = _options_in(clause)
        if len(options) >= 2:
            return options[:MAX_OPTIONS]
    return []


def _options_in(clause: str) -> list[str]:
    form = _COMPARE_FORM.search(clause)
    if form:
        parts = [p for p in _COMPARE_SPLIT.split(form.group(1)) if p.strip()]
        if len(parts) >= 2:
            heads = [_head(p) for p in parts]
            return _unique(h for h in heads if h)
    pieces = _SEPARATOR.split(clause)
    if len(pieces) < 2:
        return []
    *lefts, last = pieces
    first_items = lefts[0].split(",")
    options = _left_list(first_items)
    options += [_head(p) if "," in p else _words(p) for p in lefts[1:]]
    if _tokens(last)[:1] not in (["something"], ["anything"], ["another"], ["other"]):
        options.append(_head(last.split(",")[0]))  # "… or something else" names no option
    if len(options) > 2 and not options[-1]:
        options.pop()  # "X better than Y, or are they the same?": a clause, not an option
    if not all(options) or len(options) < 2:
        return []
    return _unique(options)


def _left_list(items: list[str]) -> list[str]:
    """The last comma item's tail, preceded by earlier items that are bare names."""
    options = [_tail(items[-1])]
    for item in reversed(items[:-1]):
        words = _tokens(item)
        if not words or len(words) > MAX_OPTION_WORDS or any(w in STOPWORDS for w in words):
            break
        options.insert(0, " ".join(words))
    return options


def _tokens(text: str) -> list[str]:
    return [w.strip(_EDGE_PUNCTUATION) for w in text.split() if w.strip(_EDGE_PUNCTUATION)]


def _words(text: str) -> str:
    words = _tokens(text)
    while words and (words[0] in STOPWORDS or words[0] in _LEAD_WORDS):
        words.pop(0)
    while words and words[-1] in STOPWORDS:
        words.pop()
    return " ".join(words[:MAX_OPTION_WORDS])


def _tail(text: str) -> str:
    """Words after the last stop word or lead verb (at most ``MAX_OPTION_WORDS``), trailing
    stop words dropped first ("is the Plaud Note **worth it** compared to ..." → "plaud note")."""
    words = _tokens(text)
    while words and words[-1] in STOPWORDS:
        words.pop()
    start = max(
        (i + 1 for i, w in enumerate(words) if w in STOPWORDS or w in _LEAD_WORDS), default=0
    )
    return " ".join(words[start:][-MAX_OPTION_WORDS:])


def _head(text: str) -> str:
    """Words up to the first stop word, after leading stop words and lead verbs."""
    words = _tokens(text)
    while words and (words[0] in STOPWORDS or words[0] in _LEAD_WORDS):
        words.pop(0)
    end = next((i for i, w in enumerate(words) if w in STOPWORDS), len(words))
    return " ".join(words[:end][:MAX_OPTION_WORDS])


def _unique(options: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(o for o in options if o))


# --- building vs using AI ------------------------------------------------------------------------

_BUILDING = re.compile(
    r"\b(?:fine[\s-]?tun(?:e|es|ed|ing)|train(?:ing)?\s+(?:a|an|my|our|your|the)?\s*"
    r"(?:own\s+)?(?:model|llm|network|classifier)s?"
    r"|build(?:ing)?\s+(?:(?:a|an|my|our|your|the)\s+)?(?:own\s+)?(?:(?:ai|llm|gpt|rag)[\s-]+"
    r"(?:agent|chatbot|bot|app|application|assistant|pipeline|system|tool)s?"
    r"|(?:ai\s+)?(?:agent|chatbot)s?)|ai\s+agents?|agentic|llm\s+apps?"
    r"|(?:ai|llm|rag)\s+(?:system\s+)?architecture|inference\s+server|model\s+serving"
    r"|serv(?:e|ing)\s+(?:a|an|the)?\s*(?:model|llm)s?|vllm|llama\.cpp)\b",
    re.IGNORECASE,
)
"""Building an AI system beyond its retrieval parts (those are ``ARCHITECTURE_TERMS``, which
count too): fine-tuning, training, agents, serving a model."""
_USING = re.compile(
    r"\b(?:copilot|chat\s?gpt|(?<!mouse )cursor|claude|gemini|perplexity|windsurf|codex"
    r"|ai\s+(?:tools?|assistants?|coding|helpers?)|(?<!command )prompts?|prompting|for\s+coding"
    r"|use\s+ai\s+(?:to|for)|using\s+ai|ai\s+to\s+write)\b",
    re.IGNORECASE,
)
_BUILD_VERB = re.compile(
    r"\b(?:build|building|develop|developing|implement|implementing|architect|architecture"
    r"|design|designing|train|training|fine[\s-]?tun\w*|deploy|deploying|serve|serving)\b",
    re.IGNORECASE,
)


def classify_ai_mode(text: str) -> AIMode:
    """``building_ai`` (RAG, vector DBs, embeddings, fine-tuning, agents, inference servers),
    ``using_ai`` (Copilot, ChatGPT, Cursor, Claude, "AI tools", prompts, "for coding"), or
    ``none``.

    When a question mentions both ("use ChatGPT with a vector database"), building wins only
    if the question is about building — it has a build verb (build, implement, train,
    fine-tune, deploy, serve, architecture ...); otherwise it is a workflow question.
    """
    building = _BUILDING.search(text) is not None or any(
        pattern.search(text) for pattern in _TERM_PATTERNS
    )
    using = _USING.search(text) is not None
    if building and (not using or _BUILD_VERB.search(text)):
        return "building_ai"
    if using:
        return "using_ai"
    return "none"


# --- temporal ------------------------------------------------------------------------------------

_FAST_MOVING = re.compile(
    r"\b(?:ai|a\.i|llms?|gpt[\w.-]*|models?|machine learning|ml|news|latest|newest|new"
    r"|recent|recently|currently|right now|this year|202[4-9]|20[3-9]\d|versions?|releases?"
    r"|released|updates?|updated|changelog|beta|deprecated|v\d+(?:\.\d+)*)\b",
    re.IGNORECASE,
)
_TIME_FILTERS: dict[Temporal, TimeFilter] = {"fast_moving": "month", "evergreen": "all"}


def classify_temporal(text: str, ai_mode: AIMode) -> Temporal:
    """``fast_moving`` for AI/LLM/model topics (any question with ``ai_mode != "none"``), news,
    "latest"/"new", years from 2024 on, and version churn (versions, releases, updates);
    ``evergreen`` otherwise (theory, tools, best practice)."""
    if ai_mode != "none" or _FAST_MOVING.search(text):
        return "fast_moving"
    return "evergreen"


def time_filter_for(temporal: Temporal) -> TimeFilter:
    """Reddit's ``t`` for a topic: last month for fast-moving ones, all time for evergreen."""
    return _TIME_FILTERS[temporal]


# --- architecture terms --------------------------------------------------------------------------

ARCHITECTURE_TERMS: tuple[str, ...] = (
    "vector db",
    "vector database",
    "vector store",
    "vector search",
    "vector index",
    "rag",
    "retrieval augmented generation",
    "retrieval augmented",
    "embedding",
    "embedding model",
    "semantic search",
    "chunking",
    "pinecone",
    "faiss",
    "chroma",
    "chromadb",
    "weaviate",
    "qdrant",
    "milvus",
    "pgvector",
    "langchain",
    "llamaindex",
    "llama index",
    "reranker",
    "re-ranker",
)
"""Retrieval-architecture vocabulary: a question with any is about building AI, and none may
leak into queries about using AI tools. Each term is read with a space or hyphen between its
words and an optional plural s (``_term_pattern``)."""

_CONNECTORS = lexicon.QUERY_CONNECTORS


def _term_pattern(term: str) -> re.Pattern[str]:
    """A term as whole words, hyphen and space interchangeable, optional plural 's'."""
    words = [re.escape(w) for w in re.split(r"[\s-]+", term)]
    return re.compile(r"(?<![\w-])" + r"[\s-]+".join(words) + r"s?(?![\w-])", re.IGNORECASE)


def _term_patterns() -> list[re.Pattern[str]]:
    """One pattern per distinct term, longest first; plurals of listed singulars fold in."""
    patterns: dict[str, re.Pattern[str]] = {}
    for term in sorted(ARCHITECTURE_TERMS, key=len, reverse=True):
        if term.endswith("s") and term[:-1] in ARCHITECTURE_TERMS:
            continue
        pattern = _term_pattern(term)
        patterns.setdefault(pattern.pattern, pattern)
    return list(patterns.values())


_TERM_PATTERNS = _term_patterns()


def strip_architecture_terms(queries: Sequence[str], question: str) -> list[str]:
    """``queries`` without every architecture term the question itself does not contain.

    Call it for questions about *using* AI. Longer terms go first ("vector database" before a
    bare "vector" could ever matter); what a removal leaves dangling at either end ("copilot
    docs with") and empty quotes/parentheses are tidied away; a query left empty is dropped,
    and queries that became equal (ignoring case) are kept once.
    """
    forbidden = [pattern for pattern in _TERM_PATTERNS if not pattern.search(question)]
    cleaned: list[str] = []
    for query in queries:
        text = query
        for pattern in forbidden:
            text = pattern.sub(" ", text)
        text = _tidy(text)
        if text and text.lower() not in {c.lower() for c in cleaned}:
            cleaned.append(text)
    return cleaned


def _tidy(text: str) -> str:
    text = re.sub(r"\"\s*\"|\(\s*\)|\[\s*\]", " ", text)
    words: list[str] = []
    for word in text.split():
        if word.upper() == "OR" and words and words[-1].upper() == "OR":
            continue  # "a OR <removed> OR b"
        words.append(word)
    while words and words[0].lower() in _CONNECTORS:
        words.pop(0)
    while words and words[-1].lower() in _CONNECTORS:
        words.pop()
    return " ".join(words)
