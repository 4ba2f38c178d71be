"""The run's parts become the result's: nothing is written into a part after it returned."""

from __future__ import annotations

import copy

from crowdsift.core.models import Candidate
from crowdsift.engines.base import Usage
from crowdsift.pipeline.outcome import Synthesized, reddit_response
from crowdsift.pipeline.reddit.branch import RedditRun
from crowdsift.testing.factories import make_post

BOUND = "the Reddit answer hit its 3 s bound during synthesize"


def _run() -> RedditRun:
    return RedditRun(
        candidates=[Candidate(post=make_post("p1", "Plaud Note review"))],
        searches=2,
        errors=["r/gadgets: 503"],
    )


def test_a_synthesis_cut_by_the_bound_is_said_in_the_response_not_written_into_the_run() -> None:
    run = _run()
    before = copy.deepcopy(run)
    response = reddit_response(
        "archive", "local", Usage(), run, Synthesized(timed_out=True, errors=(BOUND,))
    )
    assert response is not None
    assert response.timed_out and response.status == "partial" and response.synthesis is None
    assert response.errors == ["r/gadgets: 503", BOUND]  # the run's, then the step's
    assert run == before


def test_a_run_that_found_nothing_is_no_results_unless_the_bound_cut_it() -> None:
    empty = RedditRun(searches=2)
    found_nothing = reddit_response("archive", "local", Usage(), empty, Synthesized())
    assert found_nothing is not None and found_nothing.status == "no_results"
    cut = reddit_response("archive", "local", Usage(), empty, Synthesized(timed_out=True))
    assert cut is not None and cut.status == "partial" and cut.timed_out
