"""Candidates are ordered by where the searches ranked them, fused by reciprocal rank."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crowdsift.core.config import SearchSort
from crowdsift.core.models import Candidate, FetchReport
from crowdsift.pipeline.fetch.filtering import FilterConfig
from crowdsift.pipeline.fetch.queries import RRF_K, SearchCall, SearchReply, screen_replies
from crowdsift.pipeline.reddit.rerank import heuristic_order
from crowdsift.testing.factories import raw_post


def _reply(ids: list[str], *, sort: SearchSort = "relevance", term: str = "plaud") -> SearchReply:
    call = SearchCall("gadgets", term, sort, "all", 25, "targeted")
    return SearchReply(call, posts=[raw_post(post_id, num_comments=0) for post_id in ids])


def _screen(*replies: SearchReply) -> list[Candidate]:
    return screen_replies(
        list(replies),
        search_terms=["plaud"],
        filters=FilterConfig(),
        source="archive",
        fetched_at=datetime(2024, 6, 1, tzinfo=UTC),
        report=FetchReport(source="archive"),
    ).candidates


def test_a_thread_two_searches_rank_second_beats_one_a_single_search_ranks_first() -> None:
    found = _screen(
        _reply(["solo", "both"], term="plaud"), _reply(["other", "both"], term="plaud note")
    )
    retrieval = {c.post.id: c.retrieval for c in found}
    assert retrieval["both"] == 1.0  # the best fused rank of the set
    expected_solo = (1 / (RRF_K + 1)) / (2 / (RRF_K + 2))
    assert retrieval["solo"] == pytest.approx(expected_solo, abs=1e-6)
    assert retrieval["other"] == retrieval["solo"]
    assert heuristic_order(found)[0].post.id == "both"


def test_a_search_sorted_by_date_or_votes_adds_candidates_but_no_rank() -> None:
    found = _screen(_reply(["ranked"]), _reply(["newest", "ranked"], sort="new"))
    retrieval = {c.post.id: c.retrieval for c in found}
    assert retrieval == {"ranked": 1.0, "newest": 0.0}


def test_the_search_rank_orders_the_gate_not_the_titles_words() -> None:
    """Two posts whose titles score the same lexically: the one the search ranked first leads,
    whatever their ids or votes."""
    found = _screen(_reply(["zzz", "aaa"]))
    assert [c.post.id for c in heuristic_order(found)] == ["zzz", "aaa"]


def test_without_any_ranked_search_the_lexical_score_orders() -> None:
    found = _screen(_reply(["zzz", "aaa"], sort="new"))
    assert all(c.retrieval == 0.0 for c in found)
    assert [c.post.id for c in heuristic_order(found)] == ["aaa", "zzz"]  # ties by id
