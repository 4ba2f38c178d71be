"""Search strategies: one ``QueryAnalysis`` becomes the SearchPlan of AI Scout v3.

Four strategies, each a pure function (seed 001, phase 1):

- ``targeted``: one combined search, the keywords OR-ed (``"home assistant" OR proxmox``);
- ``ai_intent``: the intent-shaped queries the formulation wrote;
- ``sniper``: the core phrase with "guide", "tutorial" and "benchmark", which pull the
  threads people bookmark;
- ``timeless``: the core phrase over all time, sorted by top, for the "bible" threads of a
  topic, whatever its temporal class.

A fifth, ``meaning``, searches the question itself by meaning, on a source that can (an
archive with stored vectors, ``crowdsift.sources.archive.vectors``).

The first three use the analysis' time filter (last month for fast-moving topics). With
``--since`` every strategy, ``timeless`` included, uses the smallest window covering it
(``crowdsift.core.since.covering_window``) and the plan carries the bound itself, which the
fetcher applies exactly. Terms use the syntax every source understands: quoted phrases and a
literal upper-case ``OR``.

Two strategies can ask for exactly the same search (an AI query "proxmox guide" equals the
sniper's). It runs once: ``plan_queries`` keeps the first (in ``STRATEGIES`` order) and records
the strategies folded into it in ``QueryPlan.also_by``, and logs each fold.
``build_plan`` wraps the queries in the seed-000 ``SearchPlan`` the fetcher executes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from crowdsift.core.config import SearchSort, TimeFilter
from crowdsift.core.config.reddit import RedditConfig
from crowdsift.core.log import get_logger
from crowdsift.core.models import PlanQuery, SearchPlan, Strategy
from crowdsift.core.since import WINDOW_SECONDS, covering_window
from crowdsift.core.words import STOPWORDS
from crowdsift.pipeline.reddit.models import QueryAnalysis
from crowdsift.pipeline.reddit.topicality import GENERIC_WORDS, WORD, is_product_word

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


def targeted(analysis: QueryAnalysis, _config: RedditConfig) -> list[PlanQuery]:
    """One search, ranked by relevance: any of the question's own words (``search_words``), in
    all chosen subreddits. BM25 ranks a thread holding more and rarer of them first, in its
    title, body or replies; a question without a usable word searches its keywords."""
    words = search_words(analysis.english_question)
    term = " OR ".join(words) if words else or_term(analysis.keywords)
    return [_query("targeted", term, analysis)] if term else []


def ai_intent(analysis: QueryAnalysis, config: RedditConfig) -> list[PlanQuery]:
    """One search per formulated query (at most ``config.max_ai_queries``)."""
    queries = [q.strip() for q in analysis.ai_queries if q.strip()]
    return [_query("ai_intent", q, analysis) for q in queries[: config.max_ai_queries]]


def sniper(analysis: QueryAnalysis, _config: RedditConfig) -> list[PlanQuery]:
    """The core phrase (first keyword) with each marker: "guide", "tutorial", "benchmark"."""
    core = quote_phrase(analysis.keywords[0])
    if not core:
        return []
    return [_query("sniper", f"{core} {marker}", analysis) for marker in SNIPER_MARKERS]


def meaning(analysis: QueryAnalysis, _config: RedditConfig) -> list[PlanQuery]:
    """The question itself, searched by meaning (a source that holds vectors ranks its threads
    by closeness to it): finds the thread phrased unlike the question."""
    question = " ".join(analysis.english_question.split())
    return [_query("meaning", question, analysis)] if question else []


def timeless(analysis: QueryAnalysis, _config: RedditConfig) -> list[PlanQuery]:
    """The core phrase, top of all time (never narrowed by the topic's temporal class)."""
    core = quote_phrase(analysis.keywords[0])
    if not core:
        return []
    return [_query("timeless", core, analysis, sort="top", time_filter="all")]


MAX_SEARCH_WORDS = 10
"""Words the targeted search ORs together (Reddit caps a query at 512 characters)."""
MIN_MODEL_DIGITS = 3
"""A number of this many digits or more is a name ("4090", "5070"), not a quantity ("16")."""


def search_words(question: str) -> list[str]:
    """The question's own words that can name its topic, each once: names first ("Ollama",
    "vLLM", "4090": the most specific), then the others in order; no stop words, no words
    every question uses ("fix", "keep", "work"), no quantities, 3+ characters. Single words, not
    pairs of neighbours: "prompt sometimes" names nothing, and ranking by BM25 already puts a
    thread holding several of the words first."""
    found = list(enumerate(WORD.findall(question)))
    found.sort(key=lambda pair: not _names_something(pair[1], pair[0]))
    kept = [
        lowered
        for _, word in found
        if len(lowered := word.lower()) > 2
        and (not lowered.isdigit() or len(lowered) >= MIN_MODEL_DIGITS)
        and lowered not in STOPWORDS
        and lowered not in GENERIC_WORDS
        and lowered.removesuffix("s") not in GENERIC_WORDS
        and "'" not in lowered
    ]
    return list(dict.fromkeys(form for word in kept for form in _spellings(word)))[
        :MAX_SEARCH_WORDS
    ]


def _spellings(word: str) -> list[str]:
    """A hyphenated compound as written and joined: people write "wi-fi" and "wifi", "e-mail"
    and "email", "set-up" and "setup"; a model number ("wh-1000xm5") only as written."""
    parts = word.split("-")
    if len(parts) > 1 and all(part.isalpha() for part in parts):
        return [word, "".join(parts)]
    return [word]


def search_names(question: str) -> list[str]:
    """The names among ``search_words`` ("vLLM", "4090", "Plaud"): what a question is about,
    however often a community says them."""
    found = [
        word.lower() for index, word in enumerate(WORD.findall(question))
        if _names_something(word, index)
    ]  # fmt: skip
    words = search_words(question)
    return [w for w in words if w in found or any(w == f.replace("-", "") for f in found)]


def _names_something(word: str, index: int) -> bool:
    """A product-like word, or a model number that is not a year ("4090", not "2025")."""
    if word.isdigit():
        return len(word) >= MIN_MODEL_DIGITS and not _YEAR.fullmatch(word)
    return is_product_word(word, index)


_YEAR = re.compile(r"(19|20)[0-9]{2}")


def widen(plan: SearchPlan) -> SearchPlan | None:
    """The plan over all time, or None when it already searches all time.

    When the plan's own searches find too little (``branch``: fewer than ``MIN_CANDIDATES``
    threads), the topic's window held too little: a fast-moving topic's last month of an
    archive, or of a quiet community. The plan widens once, every query to all time; a window
    the user set (``--since``) is never widened."""
    if plan.since is not None:
        return None
    if all(q.time_filter == "all" and q.since is None for q in plan.queries):
        return None
    queries = [q.model_copy(update={"time_filter": "all", "since": None}) for q in plan.queries]
    return plan.model_copy(update={"queries": queries})


@dataclass
class QueryPlan:
    """The searches to run, and for each index the other strategies that asked for it too."""

    queries: list[PlanQuery]
    also_by: dict[int, list[Strategy]] = field(default_factory=dict)


def plan_queries(analysis: QueryAnalysis, config: RedditConfig) -> QueryPlan:
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


DATED_PAGE = 100
"""The page a source that lists by date is asked for: the largest Arctic Shift serves. A request
costs the same for 25 results or 100, and on such a source a page's size is how far back in
time a search reaches."""
NARROW_WORDS = 2
"""Words the narrow search of a source that lists by date ANDs together."""
COMMON_SHARE = 0.2
"""A word used in this share of a community's recent posts or more matches nearly every thread:
on a source that lists by date, ORing it in fills the page with the newest posts, whatever
they are about."""


def dated_queries(
    analysis: QueryAnalysis, config: RedditConfig, *, shares: Mapping[str, float] | None = None
) -> list[PlanQuery]:
    """The searches for a source that lists by date and cannot rank (Arctic Shift).

    Such a source answers a search with its newest matches, so the strategies built for a
    ranked search add requests without reach: the timeless search's "top" cannot be honoured,
    and a marker word ("guide", "experience") only narrows to the newest posts that use it.
    Two searches do the work: the question's words ORed (``targeted``: the newest threads
    mentioning any of them), leaving out words the communities use all the time
    (``COMMON_SHARE``) but never a name (r/plaud uses "plaud" everywhere, and it is still the
    subject) and never down to fewer than two, and its ``NARROW_WORDS`` most
    specific words ANDed, which match few threads and so reach back in time where the broad
    search ends at its newest page.
    ``shares`` is each word's share of the communities' recent posts
    (``recent.word_shares``); without it every word counts and the question's own order
    (names first) decides which are the most specific."""
    shares = shares or {}
    words = search_words(analysis.english_question)
    if not words:
        return targeted(analysis, config)
    names = set(search_names(analysis.english_question))
    uncommon = [w for w in words if w in names or shares.get(w, 0.0) < COMMON_SHARE]
    if len(uncommon) < NARROW_WORDS:  # a community about just this: its words are all common
        uncommon = words
    broad = _query("targeted", " OR ".join(uncommon), analysis)
    specific = sorted(words, key=lambda w: shares.get(w, 0.0))[:NARROW_WORDS]
    if len(specific) < NARROW_WORDS:
        return [broad]
    narrow = _query("targeted", " ".join(quote_phrase(w) for w in specific), analysis)
    return [broad, narrow]


def build_plan(
    analysis: QueryAnalysis,
    config: RedditConfig,
    *,
    page_size: int,
    since: datetime | None = None,
    now: datetime | None = None,
    newest: datetime | None = None,
    by_date: bool = False,
    by_meaning: bool = False,
    shares: Mapping[str, float] | None = None,
) -> SearchPlan:
    """The plan the fetcher runs: the strategies' queries, each asking for a first page of
    ``page_size`` (``CROWDSIFT_PAGE_SIZE``), and as ``search_terms`` the phrases the filtering
    layer scores lexical relevance against (keywords and formulated queries).

    ``since`` (``--since``, with the ``now`` it was measured from) replaces every query's time
    filter by the smallest window covering it and rides along as ``SearchPlan.since``.

    ``newest`` is the newest post the source holds for the subreddits searched (an archive's;
    None for a live source): without ``since``, a topic window counts back from it, not from
    ``now``, so an archive of last year's threads has a "last month" of its own
    (``anchored``). ``by_date``: the source lists by date and cannot rank (``dated_queries``,
    with the words' ``shares`` of the communities' recent posts). ``by_meaning``: the source
    can also rank by meaning, and the question is searched that way too (``meaning``)."""
    update: dict[str, object] = {"limit": DATED_PAGE if by_date else page_size}
    time = analysis.time_filter
    if since is not None:
        if now is None:
            raise ValueError("build_plan needs now= to choose the window covering since=")
        update["time_filter"] = time = covering_window(since, now)
    planned = (
        dated_queries(analysis, config, shares=shares)
        if by_date
        else plan_queries(analysis, config).queries
    )
    if by_meaning:
        planned += meaning(analysis, config)
    queries = [q.model_copy(update=update) for q in planned]
    if since is None and newest is not None:
        if now is None:
            raise ValueError("build_plan needs now= to anchor a window at newest=")
        queries = [anchored(q, newest, now) for q in queries]
    strategies = ",".join(dict.fromkeys(q.strategy for q in queries))
    words = search_words(analysis.english_question)
    return SearchPlan(
        search_terms=list(dict.fromkeys([*analysis.keywords, *analysis.ai_queries, *words]))[:50],
        subreddits=analysis.subreddits[:50],
        queries=queries[:50],
        notes=(
            f"intent={analysis.intent}, ai={analysis.ai_mode}, time={time}, strategies={strategies}"
        ),
        since=since,
    )


ANCHOR_SLACK = timedelta(days=1)
"""A source whose newest post is this recent is live: its windows count back from now."""


def anchored(query: PlanQuery, newest: datetime, now: datetime) -> PlanQuery:
    """``query`` with its time window counted back from ``newest`` instead of ``now``.

    The window becomes the query's own ``since`` (``newest`` minus the window), and its time
    filter the smallest one still covering that bound from ``now``; an all-time query, or a
    source whose newest post is recent, is left as it is."""
    window = WINDOW_SECONDS.get(query.time_filter)
    if window is None or now - newest <= ANCHOR_SLACK:
        return query
    bound = newest - timedelta(seconds=window)
    return query.model_copy(update={"since": bound, "time_filter": covering_window(bound, now)})


def _query(
    strategy: Strategy,
    term: str,
    analysis: QueryAnalysis,
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
