"""The grounding check of the staff-engineer sections: ids and URLs against the evidence."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsift.pipeline.reddit.models import DrilledThread, RankedPost, ThreadComment
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.synthesis.evidence import EvidenceIndex
from crowdsift.pipeline.synthesis.grounding import ground
from crowdsift.pipeline.synthesis.models import (
    AnswerDraft,
    DraftClaim,
    DraftPivot,
    DraftRow,
    RedditSynthesis,
)
from crowdsift.pipeline.synthesis.selector import select_threads
from crowdsift.testing.factories import make_post

T0 = datetime(2025, 3, 1, tzinfo=UTC)
SUB = "dataengineering"


def _ct_comment(
    comment_id: str, post_id: str, *, score: int = 5, day: int = 0, depth: int = 0
) -> ThreadComment:
    return ThreadComment(
        comment_id=comment_id, post_id=post_id, parent_id=f"t3_{post_id}", depth=depth,
        body=f"comment {comment_id}", score=score, created_at=T0 + timedelta(days=day),
        permalink=f"https://www.reddit.com/r/{SUB}/comments/{post_id}/some_title/{comment_id}/",
    )  # fmt: skip


def _ct_thread(
    post_id: str, title: str, comments: list[ThreadComment], *, karma: int = 10, day: int = 0
) -> DrilledThread:
    post = make_post(post_id, title, "body", subreddit=SUB, karma=karma).model_copy(
        update={"created_at": T0 + timedelta(days=day)}
    )
    rank = RankedPost(
        post_id=post_id, url=post.url, title=title, subreddit=SUB, post_karma=karma,
        num_comments=len(comments), created_at=post.created_at, strategies=["targeted"],
        relevance=0.9, engagement=0.5, final_score=0.82,
    )  # fmt: skip
    return DrilledThread(post=post, rank=rank, comments=comments)


THREADS = [
    _ct_thread(
        "p1aa",
        "Airflow or Dagster in 2025?",
        [
            _ct_comment("c1aa", "p1aa", score=120, day=2),
            _ct_comment("c2bb", "p1aa", score=7, day=40),
        ],
        karma=300,
    ),
    _ct_thread("p2bb", "Dagster after a year", [_ct_comment("c3cc", "p2bb", score=15, day=90)]),
]
REQUEST = select_threads(
    "Airflow or Dagster?", THREADS, SelectorConfig.for_drilled_threads(), prompt_version="v1"
)
INDEX = EvidenceIndex.from_payloads(REQUEST.post_payloads)
P1 = THREADS[0].post.url
C1 = THREADS[0].comments[0].permalink
C2 = THREADS[0].comments[1].permalink
C3 = THREADS[1].comments[0].permalink
P2 = THREADS[1].post.url


def _run(
    draft: AnswerDraft, *, gems: int = 5, dissent: int = 3, budget: int = 1800
) -> RedditSynthesis:
    config = SynthesisConfig(summary_char_budget=budget)
    return ground(draft, REQUEST, config, max_gems=gems, max_dissent=dissent).synthesis


def _run_over(threads: list[DrilledThread], draft: AnswerDraft, *, budget: int) -> RedditSynthesis:
    request = select_threads(
        "q", threads, SelectorConfig.for_drilled_threads(), prompt_version="v1"
    )
    config = SynthesisConfig(summary_char_budget=budget)
    return ground(draft, request, config, max_gems=1, max_dissent=1).synthesis


# --- resolve_cite ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cite", "expected"),
    [
        ("post:p1aa", ("thread", "p1aa")),
        ("comment:c1aa", ("comment", "c1aa")),
        ("[post:p2bb]", ("thread", "p2bb")),
        ("[comment:c3cc]", ("comment", "c3cc")),
        ("t3_p1aa", ("thread", "p1aa")),
        ("t1_c2bb", ("comment", "c2bb")),
        ("c2bb", ("comment", "c2bb")),
        ("P1AA", ("thread", "p1aa")),
        (" post: p1aa ", ("thread", "p1aa")),
        ("post:c1aa", ("comment", "c1aa")),  # a mixed-up prefix still names real evidence
        (C1, ("comment", "c1aa")),
        (P2, ("thread", "p2bb")),
        ("http://reddit.com/r/dataengineering/comments/p1aa/some_title", ("thread", "p1aa")),
        ("https://old.reddit.com/r/dataengineering/comments/p1aa/other_slug/c2bb/",
         ("comment", "c2bb")),
    ],
)  # fmt: skip
def test_resolve_cite_accepts_every_form_of_an_evidence_id(
    cite: str, expected: tuple[str, str]
) -> None:
    entry = INDEX.resolve_cite(cite)
    assert entry is not None
    assert (entry.kind, entry.id) == expected


@pytest.mark.parametrize(
    "cite",
    [
        "post:zzz999",
        "comment:nope",
        "t1_zzz",
        "zzz999",
        "",
        "see the thread",
        "https://evil.example/post:p1aa",
        "https://www.reddit.com/r/dataengineering/comments/zzz999/x/",
        # a real comment id under the wrong thread is not that comment's permalink
        "https://www.reddit.com/r/dataengineering/comments/p2bb/x/c1aa/",
        "user:p1aa",
    ],
)
def test_resolve_cite_rejects_anything_else(cite: str) -> None:
    assert INDEX.resolve_cite(cite) is None


def test_index_entries_carry_evidence_metadata() -> None:
    entry = INDEX.resolve_cite("comment:c3cc")
    assert entry is not None
    assert (entry.url, entry.title, entry.score) == (C3, "Dagster after a year", 15)
    assert entry.created_at == T0 + timedelta(days=90)
    thread = INDEX.resolve_cite("post:p1aa")
    assert thread is not None
    assert (thread.url, thread.score, thread.created_at) == (P1, 300, T0)
    assert len(INDEX) == 5


# --- check_synthesis: citations ----------------------------------------------------------


def test_invented_ids_and_urls_are_removed_and_reported_once_in_order() -> None:
    draft = AnswerDraft(
        summary=(
            "Dagster wins [post:p2bb][post:zzz999]. See https://evil.example/x for more. "
            "Also [comment:fake1, comment:c1aa] and again [post:zzz999]."
        ),
        hidden_gems=[DraftClaim(text="Use --max-batch 64", cites=["comment:c1aa", "t1_ghost"])],
    )
    result = _run(draft)
    assert result.removed_citations == [
        "post:zzz999",
        "https://evil.example/x",
        "comment:fake1",
        "t1_ghost",
    ]
    assert "zzz999" not in result.summary
    assert "evil.example" not in result.summary
    # "See … for more" pointed only at the removed link: it goes with it, never "See for more".
    assert result.summary.marked() == "Dagster wins [post:p2bb]. Also [comment:c1aa] and again."
    assert result.dropped_claims == 0


def test_claims_without_a_valid_citation_are_dropped_and_counted() -> None:
    draft = AnswerDraft(
        summary="Summary [post:p1aa].",
        hidden_gems=[
            DraftClaim(text="kept gem", cites=["comment:c1aa"]),
            DraftClaim(text="invented gem", cites=["comment:zzz"]),
            DraftClaim(text="uncited gem", cites=[]),
        ],
        minority_report=[DraftClaim(text="fake dissent", cites=["https://evil.example/d"])],
        pivot_alerts=[
            DraftPivot(from_option="A", to_option="B", text="fake pivot", cites=["post:nope"])
        ],
        comparison_table=[
            DraftRow(option="Airflow", verdict="ok", cites=["comment:c2bb"]),
            DraftRow(option="Prefect", verdict="great", cites=["post:nope2"]),
        ],
    )
    result = _run(draft)
    assert [g.text for g in result.hidden_gems] == ["kept gem"]
    assert result.minority_report == []
    assert result.pivot_alerts == []
    assert [r.option for r in result.comparison_table] == ["Airflow"]
    assert result.dropped_claims == 5
    assert result.removed_citations == [
        "comment:zzz",
        "https://evil.example/d",
        "post:nope",
        "post:nope2",
    ]


def test_summary_markers_are_stored_and_sources_in_first_citation_order() -> None:
    draft = AnswerDraft(
        summary=(
            "First [comment:c3cc]. Second [t3_p1aa] and [c3cc]. "
            "Third [post:p2bb, comment:c1aa]. A link [here](" + C2 + ")."
        ),
        hidden_gems=[DraftClaim(text="gem", cites=["comment:c1aa", "comment:c2bb"])],
        minority_report=[DraftClaim(text="dissent", cites=[P2])],
    )
    result = _run(draft)
    assert result.summary.marked() == (
        "First [comment:c3cc]. Second [post:p1aa] and [comment:c3cc]. "
        "Third [post:p2bb][comment:c1aa]. A link here [comment:c2bb]."
    )
    assert [(s.kind, s.id) for s in result.sources] == [
        ("comment", "c3cc"),
        ("thread", "p1aa"),
        ("thread", "p2bb"),
        ("comment", "c1aa"),
        ("comment", "c2bb"),
    ]
    cited = re.findall(r"\[(post|comment):([^\]]+)\]", result.summary.marked())
    kinds = {"post": "thread", "comment": "comment"}
    assert {(kinds[k], i) for k, i in cited} == {(s.kind, s.id) for s in result.sources}
    assert result.sources[0].url == C3
    assert result.sources[0].title == "Dagster after a year"


def test_sources_follow_summary_then_gems_dissent_pivots_table() -> None:
    draft = AnswerDraft(
        summary="Only one [post:p2bb].",
        hidden_gems=[DraftClaim(text="g", cites=["c2bb"])],
        minority_report=[DraftClaim(text="d", cites=["c3cc"])],
        pivot_alerts=[DraftPivot(from_option="A", to_option="B", text="p", cites=["c1aa"])],
        comparison_table=[DraftRow(option="X", verdict="v", cites=["p1aa", "c2bb"])],
    )
    result = _run(draft)
    assert [s.id for s in result.sources] == ["p2bb", "c2bb", "c3cc", "c1aa", "p1aa"]


def test_brackets_that_are_not_citations_stay_text() -> None:
    draft = AnswerDraft(summary="[Edit] the docs [sic] say so [post:p1aa].")
    result = _run(draft)
    assert result.summary.marked() == "[Edit] the docs [sic] say so [post:p1aa]."
    assert result.removed_citations == []


def test_engine_written_numbers_are_not_trusted() -> None:
    result = _run(AnswerDraft(summary="Claim [1]. Other [7, 8] [post:p1aa]."))
    assert (
        result.summary.marked() == "Other [post:p1aa]."
    )  # "Claim" rested on a footnote to nowhere
    assert result.removed_citations == ["[1]", "[7]", "[8]"]


def test_stray_json_escapes_are_decoded() -> None:
    result = _run(AnswerDraft(summary="Line one\\n- it\\u2019s fine \\[post:p1aa\\]"))
    assert result.summary.marked() == "Line one\n- it’s fine [post:p1aa]"


def test_inline_markers_in_claims_become_citations() -> None:
    draft = AnswerDraft(
        summary="s",
        hidden_gems=[DraftClaim(text="Set --max-batch 64 [comment:c2bb] [post:zzz].", cites=[])],
    )
    result = _run(draft)
    assert result.hidden_gems[0].text == "Set --max-batch 64."
    assert result.hidden_gems[0].sources == [C2]
    assert result.removed_citations == ["post:zzz"]


def test_claim_text_keeps_evidence_links_and_loses_foreign_ones() -> None:
    draft = AnswerDraft(
        summary="s",
        minority_report=[
            DraftClaim(text=f"Read {C1} and https://evil.example/a, then decide.", cites=[])
        ],
    )
    result = _run(draft)
    assert result.minority_report[0].text == f"Read {C1} and, then decide."
    assert result.minority_report[0].sources == [C1]
    assert result.removed_citations == ["https://evil.example/a"]


def test_claim_text_stays_plain_text() -> None:
    draft = AnswerDraft(
        summary="s",
        hidden_gems=[DraftClaim(text="<b>bold</b> & <script>x</script>", cites=["c1aa"])],
    )
    assert _run(draft).hidden_gems[0].text == "<b>bold</b> & <script>x</script>"


# --- check_synthesis: numbers from the evidence, caps, budget --------------------------------


def test_scores_votes_and_dates_come_from_the_evidence() -> None:
    draft = AnswerDraft(
        summary="s",
        hidden_gems=[DraftClaim(text="this has 9000 upvotes", cites=["c2bb", "c1aa"])],
        minority_report=[DraftClaim(text="dissent with 5000 votes", cites=["c3cc", "c2bb"])],
        pivot_alerts=[
            DraftPivot(
                from_option="Airflow", to_option="Dagster", text="since 2019",
                cites=["c3cc", "c1aa", "c2bb"],
            )
        ],
    )  # fmt: skip
    result = _run(draft)
    assert result.hidden_gems[0].score == 120  # best of c2bb (7) and c1aa (120)
    assert result.minority_report[0].votes == 15  # best of c3cc (15) and c2bb (7)
    pivot = result.pivot_alerts[0]
    assert pivot.first_seen == T0 + timedelta(days=2)
    assert pivot.last_seen == T0 + timedelta(days=90)
    assert pivot.sources == [C3, C1, C2]


def test_pivot_without_dates_in_the_evidence_has_none() -> None:
    undated = _ct_thread("p9zz", "old", [])
    threads = [
        undated.model_copy(update={"post": undated.post.model_copy(update={"created_at": None})})
    ]
    draft = AnswerDraft(
        summary="s",
        pivot_alerts=[DraftPivot(from_option="A", to_option="B", text="t", cites=["p9zz"])],
    )
    result = _run_over(threads, draft, budget=500)
    assert result.pivot_alerts[0].first_seen is None
    assert result.pivot_alerts[0].last_seen is None


def test_caps_keep_the_first_claims_and_their_sources_only() -> None:
    draft = AnswerDraft(
        summary="s",
        hidden_gems=[
            DraftClaim(text="g1", cites=["c1aa"]),
            DraftClaim(text="g2", cites=["c2bb"]),
            DraftClaim(text="g3", cites=["c3cc"]),
        ],
        minority_report=[
            DraftClaim(text="d1", cites=["p2bb"]),
            DraftClaim(text="d2", cites=["p1aa"]),
        ],
    )
    result = _run(draft, gems=2, dissent=1)
    assert [g.text for g in result.hidden_gems] == ["g1", "g2"]
    assert [d.text for d in result.minority_report] == ["d1"]
    assert [s.id for s in result.sources] == ["c1aa", "c2bb", "p2bb"]
    assert result.dropped_claims == 0  # a cap is not a grounding failure


def test_summary_is_cut_at_a_sentence_within_the_budget() -> None:
    sentences = [f"Sentence number {n} is about Dagster [comment:c{n}]." for n in range(3)]
    threads = [_ct_thread("p1aa", "t", [_ct_comment(f"c{n}", "p1aa") for n in range(3)])]
    draft = AnswerDraft(summary=" ".join(sentences))
    full = _run_over(threads, draft, budget=1000)
    assert full.summary.marked().count("[") == 3
    budget = len(full.summary.marked()) - 5
    cut = _run_over(threads, draft, budget=budget)
    assert cut.summary.marked() == (
        "Sentence number 0 is about Dagster [comment:c0]. "
        "Sentence number 1 is about Dagster [comment:c1]."
    )
    assert len(cut.summary.marked()) <= budget
    assert [s.id for s in cut.sources] == ["c0", "c1"]  # c2 was only cited in the cut part


def test_a_single_overlong_sentence_is_cut_at_a_word() -> None:
    draft = AnswerDraft(summary="word " * 100 + "[post:p1aa]")
    result = _run(draft, budget=200)
    assert len(result.summary.marked()) <= 200
    assert result.summary.marked().endswith("…")


# --- property: nothing unknown survives --------------------------------------------------

_KNOWN = ["post:p1aa", "comment:c1aa", "c2bb", "t1_c3cc", "p2bb", C1, P2]
_UNKNOWN = ["post:zz1", "comment:zz2", "t3_zz3", "https://evil.example/z", "[post:zz4]"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(_KNOWN + _UNKNOWN), max_size=6),
    st.lists(st.lists(st.sampled_from(_KNOWN + _UNKNOWN), max_size=3), max_size=4),
)
def test_every_surviving_citation_is_evidence(
    summary_refs: list[str], gems: list[list[str]]
) -> None:
    summary = " ".join(
        f"Claim {n} {ref if ref.startswith(('http', '[')) else f'[{ref}]'}."
        for n, ref in enumerate(summary_refs)
    )
    draft = AnswerDraft(
        summary=summary,
        hidden_gems=[DraftClaim(text=f"gem {n}", cites=c) for n, c in enumerate(gems)],
    )
    result = _run(draft, gems=10)
    evidence_urls = {P1, P2, C1, C2, C3}
    assert {s.url for s in result.sources} <= evidence_urls
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", result.summary.marked())]
    assert all(1 <= n <= len(result.sources) for n in numbers)
    assert "zz" not in result.summary and "evil" not in result.summary
    for gem in result.hidden_gems:
        assert gem.sources and set(gem.sources) <= evidence_urls
    assert len(result.hidden_gems) + result.dropped_claims == len(gems)
    assert result.dropped_claims == sum(1 for cites in gems if not any(c in _KNOWN for c in cites))
