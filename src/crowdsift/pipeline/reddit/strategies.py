"""Phase 1, search strategies: one ``QueryAnalysis`` becomes the SearchPlan of AI Scout v3.

Four strategies, each a pure function (seed 001, phase 1):

- ``targeted``: one combined search, the keywords OR-ed (``"home assistant" OR proxmox``);
- ``ai_intent``: the intent-shaped queries the formulation wrote;
- ``sniper``: the core phrase with "guide", "tutorial" and "benchmark", which pull the
  threads people bookmark;
- ``timeless``: the core phrase over all time, sorted by top, for the "bible" threads of a
  topic, whatever its temporal class.

The first three use the analysis' time filter (last month for fast-moving topics). With
``--since`` every strategy, ``timeless`` included, uses the smallest window covering it
(``crowdsift.core.since.covering_window``) and the plan carries the bound itself, which the
fetcher applies exactly. Terms use the syntax every source understands: quoted phrases and a
literal upper-case ``OR``.

Two strategies can ask for exactly the same search (an AI query "proxmox guide" equals the
sniper's). It runs once: ``plan_queries`` keeps the first (in ``STRATEGIES`` order) and records
the strategies folded into it in ``QueryPlan.also_by``; ``build_queries`` also logs each fold.
``build_plan`` wraps the queries in the seed-000 ``SearchPlan`` the fetcher executes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.config.sidecar import SidecarConfig
from crowdsift.core.log import get_logger
from crowdsift.core.models import PlanQuery, SearchPlan, Strategy
from crowdsift.core.since import covering_window
from crowdsift.core.text import STOPWORDS
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.planner import GENERIC_WORDS, WORD, is_product_word

log = get_logger(__name__)

MAX_TARGETED_KEYWORDS = 4
SNIPER_MARKERS: tuple[str, ...] = ("guide", "tutorial", "benchmark")


def quote_phrase(phrase: str) -> str:
    """A multi-word phrase in double quotes (inner quotes removed); one word as it is."""
    words = phrase.replace('"', " ").split()
    text = " ".join(words)
    return f'"{text}"' if len(words) > 1 else text


def or_term(keywords: list[str]) -> str:
    """``"a b" OR c``: the first ``MAX_TARGETED_KEYWORDS`` keywords, phrases quoted."""
    parts = [quote_phrase(k) for k in keywords[:MAX_TARGETED_KEYWORDS]]
    return " OR ".join(dict.fromkeys(p for p in parts if p))


MAX_HEAD_WORDS = 2
"""Single words the targeted search adds beside its phrases (see ``head_words``)."""


def head_words(keywords: list[str]) -> list[str]:
    """The first word of each of the first keyword phrases, when it is a plain word of 5+
    letters: a thread titled "Tapcons keep spinning" never says "tapcon screws", and the
    relevance gate, not the search, is what keeps a broad search on topic."""
    heads: list[str] = []
    for keyword in keywords[:MAX_TARGETED_KEYWORDS]:
        words = keyword.replace('"', " ").split()
        if len(words) > 1 and words[0].isalpha() and len(words[0]) >= 5:
            heads.append(words[0].lower())
    return list(dict.fromkeys(heads))[:MAX_HEAD_WORDS]


def targeted(analysis: QueryAnalysis, config: SidecarConfig) -> list[PlanQuery]:
    """One search: any of the keywords, or the head word of the first ones, in all chosen
    subreddits."""
    term = or_term(analysis.keywords)
    extra = [
        w
        for w in head_words(analysis.keywords)
        if w not in analysis.keywords[:MAX_TARGETED_KEYWORDS]
    ]
    if term and extra:
        term = " OR ".join([term, *extra])
    return [_query("targeted", term, analysis, config)] if term else []


def ai_intent(analysis: QueryAnalysis, config: SidecarConfig) -> list[PlanQuery]:
    """One search per formulated query (at most ``config.max_ai_queries``)."""
    queries = [q.strip() for q in analysis.ai_queries if q.strip()]
    return [_query("ai_intent", q, analysis, config) for q in queries[: config.max_ai_queries]]


def sniper(analysis: QueryAnalysis, config: SidecarConfig) -> list[PlanQuery]:
    """The core phrase (first keyword) with each marker: "guide", "tutorial", "benchmark"."""
    core = quote_phrase(analysis.keywords[0])
    if not core:
        return []
    return [_query("sniper", f"{core} {marker}", analysis, config) for marker in SNIPER_MARKERS]


def timeless(analysis: QueryAnalysis, config: SidecarConfig) -> list[PlanQuery]:
    """The core phrase, top of all time (never narrowed by the topic's temporal class)."""
    core = quote_phrase(analysis.keywords[0])
    if not core:
        return []
    return [_query("timeless", core, analysis, config, sort="top", time_filter="all")]


MAX_WIDER_WORDS = 10
"""Words the wider search ORs together (Reddit caps a query at 512 characters)."""


def wider_words(question: str) -> list[str]:
    """The question's own words that can name its topic, each once: names first ("Ollama",
    "vLLM": the most specific), then the others in order; no stop words, no words every
    question uses ("fix", "keep", "work"), no bare numbers, 3+ letters."""
    found = list(enumerate(WORD.findall(question)))
    found.sort(key=lambda pair: not is_product_word(pair[1], pair[0]))
    kept = [
        lowered
        for _, word in found
        if len(lowered := word.lower()) > 2
        and not lowered.isdigit()
        and lowered not in STOPWORDS
        and lowered not in GENERIC_WORDS
        and lowered.removesuffix("s") not in GENERIC_WORDS
        and "'" not in lowered
    ]
    return list(dict.fromkeys(kept))[:MAX_WIDER_WORDS]


def widen(plan: SearchPlan, analysis: QueryAnalysis) -> SearchPlan | None:
    """The plan plus one wider targeted search, or None when it has nothing to add.

    When the plan's own searches find too little (``branch``: fewer than
    ``MIN_CANDIDATES``), the question's words were not the threads' words — a thread says
    "hallucinates" where the asker says "makes up answers", or a fast-moving topic's last
    month is empty. The wider search ORs every content word of the question (``wider_words``)
    as far back as the timeless search looks, ranked by relevance; the relevance gate, not the
    search, keeps it on topic; the words join the plan's ``search_terms`` so the lexical
    screen lets what they found through."""
    words = wider_words(analysis.english_question)
    if not words or any(q.strategy == "targeted" and q.sort == "relevance" and
                        q.term == " OR ".join(words) for q in plan.queries):  # fmt: skip
        return None
    reach = next((q.time_filter for q in plan.queries if q.strategy == "timeless"), "all")
    first = plan.queries[0] if plan.queries else None
    query = PlanQuery(
        strategy="targeted",
        term=" OR ".join(words),
        subreddits=list(first.subreddits if first else plan.subreddits),
        sort="relevance",
        time_filter=reach,
        limit=first.limit if first else 25,
    )
    terms = list(dict.fromkeys([*plan.search_terms, *words]))[:50]
    return plan.model_copy(update={"queries": [*plan.queries, query][:50], "search_terms": terms})


@dataclass
class QueryPlan:
    """The searches to run, and for each index the other strategies that asked for it too."""

    queries: list[PlanQuery]
    also_by: dict[int, list[Strategy]] = field(default_factory=dict)


def plan_queries(analysis: QueryAnalysis, config: SidecarConfig) -> QueryPlan:
    """Every strategy's searches in ``STRATEGIES`` order, exact duplicates folded.

    Two searches are the same when term (ignoring case and spacing), sort and time filter are.
    """
    plan = QueryPlan(queries=[])
    index_of: dict[tuple[str, str, str], int] = {}
    for build in (targeted, ai_intent, sniper, timeless):
        for query in build(analysis, config):
            key = (" ".join(query.term.lower().split()), query.sort, query.time_filter)
            if key in index_of:
                kept = index_of[key]
                folded = plan.also_by.setdefault(kept, [])
                if query.strategy != plan.queries[kept].strategy and query.strategy not in folded:
                    folded.append(query.strategy)
                log.debug(
                    "scout_query_folded", term=query.term, strategy=query.strategy,
                    into=plan.queries[kept].strategy,
                )  # fmt: skip
                continue
            index_of[key] = len(plan.queries)
            plan.queries.append(query)
    return plan


def build_queries(analysis: QueryAnalysis, config: SidecarConfig) -> list[PlanQuery]:
    """The searches of all four strategies, each exact duplicate once (see ``plan_queries``)."""
    return plan_queries(analysis, config).queries


def build_plan(
    analysis: QueryAnalysis,
    config: SidecarConfig,
    *,
    page_size: int,
    since: datetime | None = None,
    now: datetime | None = None,
) -> SearchPlan:
    """The plan the fetcher runs: the strategies' queries, each asking for a first page of
    ``page_size`` (``CROWDSIFT_PAGE_SIZE``), and as ``search_terms`` the phrases the filtering
    layer scores lexical relevance against (keywords and formulated queries).

    ``since`` (``--since``, with the ``now`` it was measured from) replaces every query's time
    filter by the smallest window covering it and rides along as ``SearchPlan.since``."""
    update: dict[str, object] = {"limit": page_size}
    time = analysis.time_filter
    if since is not None:
        if now is None:
            raise ValueError("build_plan needs now= to choose the window covering since=")
        update["time_filter"] = time = covering_window(since, now)
    queries = [q.model_copy(update=update) for q in build_queries(analysis, config)]
    strategies = ",".join(dict.fromkeys(q.strategy for q in queries))
    return SearchPlan(
        search_terms=[*analysis.keywords, *analysis.ai_queries][:50],
        subreddits=analysis.subreddits[:50],
        queries=queries[:50],
        notes=(
            f"intent={analysis.intent}, ai={analysis.ai_mode}, time={time}, strategies={strategies}"
        ),
        since=since,
    )


def _query(
    strategy: Strategy,
    term: str,
    analysis: QueryAnalysis,
    config: SidecarConfig,
    *,
    sort: SearchSort = "relevance",
    time_filter: TimeFilter | None = None,
) -> PlanQuery:
    return PlanQuery(
        strategy=strategy,
        term=term,
        subreddits=list(analysis.subreddits),
        sort=sort,
        time_filter=time_filter or analysis.time_filter,
    )
