"""The run's parts become the result's: nothing is written into a part after it returned,
and each is built once, with its final status."""

from __future__ import annotations

import copy

from crowdsift.core.models import Candidate
from crowdsift.engines.base import Usage
from crowdsift.pipeline.outcome import Synthesized, answer_parts
from crowdsift.pipeline.reddit.branch import RedditRun
from crowdsift.pipeline.synthesis.answer import Answer
from crowdsift.pipeline.synthesis.models import RedditSynthesis, SummaryContent
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
    response = answer_parts(
        "archive", "local", Usage(), run, Synthesized(timed_out=True, errors=(BOUND,))
    ).reddit
    assert response is not None
    assert response.timed_out and response.status == "partial" and response.synthesis is None
    assert response.errors == ["r/gadgets: 503", BOUND]  # the run's, then the step's
    assert run == before


def test_a_run_that_found_nothing_is_no_results_unless_the_bound_cut_it() -> None:
    empty = RedditRun(searches=2)
    found_nothing = answer_parts("archive", "local", Usage(), empty, Synthesized()).reddit
    assert found_nothing is not None and found_nothing.status == "no_results"
    cut = answer_parts("archive", "local", Usage(), empty, Synthesized(timed_out=True)).reddit
    assert cut is not None and cut.status == "partial" and cut.timed_out


def test_the_summary_is_built_once_with_the_status_the_reddit_answer_gives_it() -> None:
    answer = Answer(
        content=SummaryContent(summary="Get the Plaud.", prompt_version="v1"),
        synthesis=RedditSynthesis(summary="Get the Plaud."),
    )
    parts = answer_parts("archive", "local", Usage(), _run(), Synthesized(answer=answer))
    assert answer.summary.status == "ok"  # the synthesis alone finds nothing wrong
    assert parts.summary is not None and parts.reddit is not None
    assert parts.reddit.status == "partial" and parts.summary.status == "partial"
    assert parts.summary.reason == "the Reddit answer is partial: r/gadgets: 503"


def test_a_failed_branch_leaves_the_other_sources_answer_partial() -> None:
    answer = Answer(content=SummaryContent(summary="From videos.", prompt_version="v1"))
    parts = answer_parts(
        "archive", "local", Usage(), None, Synthesized(answer=answer), failure="bad credentials"
    )
    assert parts.reddit is not None and parts.reddit.status == "failed"
    assert parts.reddit.errors == ["bad credentials"]
    assert parts.summary is not None
    assert parts.summary.reason == "the Reddit answer is failed: bad credentials"
    assert answer_parts("archive", "local", Usage(), None, Synthesized()).reddit is None
