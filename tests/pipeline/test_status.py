"""Every status decided once, from the facts: the synthesis' verdict and the Reddit run's."""

from __future__ import annotations

import dataclasses
from typing import Any

from crowdsift.pipeline.status import Judged, RedditFacts, Verdict, decide

FOUND = RedditFacts(searches=2, candidates=3, sections=True)


def _facts(**changes: Any) -> RedditFacts:
    return dataclasses.replace(FOUND, **changes)


def test_the_synthesis_reasons_are_the_summarys_in_the_order_found() -> None:
    decided = decide(Verdict(reasons=("dropped a highlight that cites no evidence", "thin")))
    assert decided.summary == Judged("partial", "dropped a highlight that cites no evidence; thin")


def test_the_synthesis_own_reason_wins_and_makes_the_reddit_answer_partial() -> None:
    decided = decide(Verdict(reasons=("thin evidence",)), _facts(errors=("r/gadgets: 503",)))
    assert decided.summary == Judged("partial", "thin evidence")
    assert decide(Verdict(reasons=("thin evidence",)), FOUND).reddit == "partial"


def test_nothing_found_and_every_search_failed() -> None:
    nothing = decide(Verdict(), RedditFacts(searches=2))
    assert nothing.reddit == "no_results"
    assert nothing.summary == Judged(
        "partial", "the Reddit answer is no_results: Reddit found no matching discussion"
    )
    failed = decide(Verdict(), RedditFacts(searches=2, failed_searches=2, errors=("r/a: 503",)))
    assert failed.reddit == "failed"
    assert failed.summary.reason == "the Reddit answer is failed: r/a: 503"


def test_a_bound_that_cut_the_run_is_partial_even_without_candidates() -> None:
    cut = RedditFacts(searches=2, timed_out=True, errors=("hit its bound",))
    assert decide(Verdict(), cut).reddit == "partial"


def test_missing_or_cut_sections_make_the_reddit_answer_partial() -> None:
    assert decide(Verdict(), _facts(sections=False)).reddit == "partial"
    cut = decide(Verdict(), _facts(sections_cut=True))
    assert cut.summary.reason == (
        "the Reddit answer is partial: its sections cited evidence that does not exist"
    )
