"""The request budget of a source that lists by date (pure: it reads the source's counters).

Arctic Shift sustains about 0.8 requests a second, so one question keeps to
``RedditConfig.dated_requests`` (15): profiles, searches and comment trees together, counted
from the question's start (``spent_before``: a source that serves many questions, as in
``crowdsift eval``, counts every request it ever sent). The
refetch and the widened window are run only when they leave ``MIN_DRILL`` requests for the
drill, and the drill reads as many threads as the budget leaves, never fewer than
``MIN_DRILL``. Any other source has no budget.
"""

from __future__ import annotations

from crowdsift.core.models import SearchPlan
from crowdsift.core.source import LISTS_BY_DATE, RedditSource

MIN_DRILL = 3
"""Threads drilled even when a request budget is spent: an answer needs replies to quote."""


def by_date(source: RedditSource) -> bool:
    """The source lists by date and cannot rank (``LISTS_BY_DATE``)."""
    return source.name in LISTS_BY_DATE


def requests_left(source: RedditSource, budget: int, spent_before: int = 0) -> int | None:
    """What is left of ``budget`` for a source that lists by date, counting the requests sent
    since ``spent_before`` (the source's count when the question started); None: no budget."""
    if not by_date(source):
        return None
    return budget - (source.stats.requests - spent_before)


def drill_count(source: RedditSource, budget: int, wanted: int, spent_before: int = 0) -> int:
    """How many threads to drill: ``wanted``, or what the budget leaves (one request a thread),
    but never fewer than ``MIN_DRILL`` while threads are wanted."""
    left = requests_left(source, budget, spent_before)
    if left is None or wanted == 0:
        return wanted
    return max(min(wanted, left), min(wanted, MIN_DRILL))


def can_afford_searches(
    source: RedditSource, budget: int, plan: SearchPlan, spent_before: int = 0
) -> bool:
    """Whether running ``plan``'s searches once more (a refetch's next page each, or a widened
    window) leaves ``MIN_DRILL`` requests of the budget for the drill; always, for a source
    without one."""
    left = requests_left(source, budget, spent_before)
    searches = len(plan.queries) * max(len(plan.subreddits), 1)
    return left is None or left - searches >= MIN_DRILL
