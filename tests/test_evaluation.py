"""The eval: grounding checks, the answer-quality metrics (hand-computed), the labelled case file
and its errors, and one ``crowdsift eval`` run on the demo archive."""

from __future__ import annotations

import difflib
import html
import io
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import zstandard
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.core.models import Comment, FetchResult, Post
from crowdsift.engines.base import Usage
from crowdsift.pipeline.evaluation import (
    EvalCase,
    EvalCasesError,
    EvalTargets,
    check,
    load_cases,
    measure,
    preview_text,
    summarise,
    summary_lines,
)
from crowdsift.pipeline.evaluation.metrics import (
    abstained,
    advice_found,
    answer_text,
    ndcg_at_k,
    normalise,
    terminal_rows,
)
from crowdsift.pipeline.reddit.models import RankedPost, RedditResponse
from crowdsift.pipeline.result import ResearchResult
from crowdsift.pipeline.synthesis.config import SummarizerConfig
from crowdsift.pipeline.synthesis.models import Source, SummarizeResult

NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://www.reddit.com/r/gadgets/comments/{}/t/"
DEMO = Path("src/crowdsift/demo/data")


def evidence() -> FetchResult:
    post = Post(
        id="a1", title="Plaud battery", selftext="The battery lasts thirty hours of recording.",
        post_karma=1, relevance_score=1, url=URL.format("a1"), fetched_at=NOW,
        source="archive", subreddit="gadgets",
    )  # fmt: skip
    return FetchResult(
        query="q", plan_id=uuid4(), search_terms=["x"], subreddits=["gadgets"],
        fetched_at=NOW, posts=[post],
    )  # fmt: skip


def summary(**fields: object) -> SummarizeResult:
    base: dict[str, object] = {
        "status": "ok",
        "summary": "Battery lasts long. [post:a1]",
        "highlights": ["The battery lasts thirty hours [post:a1]", "Cheap and great [post:a1]"],
        "sources": [Source(post_id="a1", url=URL.format("a1"), subreddit="gadgets", title="t")],
        "prompt_version": "v1",
        "engine": "local",
    }
    base.update(fields)
    return SummarizeResult.model_validate(base)


CASE = EvalCase(id="c1", question="Is it good?")


def test_a_grounded_answer_passes_and_support_is_counted() -> None:
    report = check(CASE, evidence(), summary(), SummarizerConfig())
    assert report.passed and report.sources_valid and report.budget_respected
    assert (report.highlights, report.highlights_supported) == (2, 1)


def test_unknown_sources_citations_and_budgets_fail() -> None:
    foreign = Source(post_id="zz", url=URL.format("zz"), subreddit="gadgets", title="t")
    assert not check(CASE, evidence(), summary(sources=[foreign]), SummarizerConfig()).passed
    cited = summary(summary="Invented. [post:zz]")
    assert not check(CASE, evidence(), cited, SummarizerConfig()).sources_valid
    long = summary(summary="x" * 200)
    assert not check(CASE, evidence(), long, SummarizerConfig(summary_char_budget=100)).passed
    assert not check(CASE, evidence(), summary(status="error"), SummarizerConfig()).passed


def test_a_video_citation_and_an_unknown_dashed_id_are_checked_and_numbered() -> None:
    video = Source(
        post_id="yt-dQw4w9W_-Xc", kind="youtube", url="https://www.youtube.com/watch?v=dQw4w9W_-Xc",
        subreddit="GadgetChannel", title="Review",
    )  # fmt: skip
    answer = summary(
        summary="Battery lasts long [post:a1]. The review agrees [post:yt-dQw4w9W_-Xc].",
        sources=[*summary().sources, video],
    )
    # the evidence of a case is Reddit only: a video id is not in it (the old regex never saw it)
    assert not check(CASE, evidence(), answer, SummarizerConfig()).sources_valid
    text = preview_text(answer)
    assert text.startswith("Battery lasts long [1]. The review agrees [2].")
    assert (
        "[2] YouTube · GadgetChannel — Review https://www.youtube.com/watch?v=dQw4w9W_-Xc" in text
    )
    assert "post:" not in text


def test_a_comment_citation_is_valid_evidence_and_supports_its_highlight() -> None:
    fetched = evidence()
    post = fetched.posts[0]
    comment = Comment(
        comment_id="k-1", post_id="a1", body="Mine died after a week of recording meetings.",
        comment_karma=3, source="archive", fetched_at=NOW,
    )  # fmt: skip
    fetched = fetched.model_copy(
        update={"posts": [post.model_copy(update={"comments": [comment]})]}
    )
    answer = summary(highlights=["Mine died after a week of recording [comment:k-1]"])
    report = check(CASE, fetched, answer, SummarizerConfig())
    assert report.sources_valid and report.highlights_supported == 1


# --- metrics (pure, hand-computed) ---------------------------------------------------------------

LOG3 = math.log2(3)  # the discount of rank 2 is 1 / log2(3)


def test_ndcg_is_one_for_a_perfect_ranking_and_counts_missing_threads_as_zero() -> None:
    assert ndcg_at_k([("a", 0.9), ("b", 0.8), ("x", 0.1)], ["a", "b"]) == pytest.approx(1.0)
    # b is never ranked: DCG = 1 (a at rank 1); ideal = 1 + 1/log2(3)
    assert ndcg_at_k([("a", 0.9), ("x", 0.8), ("y", 0.7)], ["a", "b"]) == pytest.approx(
        1 / (1 + 1 / LOG3)
    )
    # a relevant thread at rank 2 only: (1/log2(3)) / 1
    assert ndcg_at_k([("x", 0.9), ("a", 0.8)], ["a"]) == pytest.approx(1 / LOG3)
    # beyond the cut-off, or absent, it adds nothing
    sixth = [(f"x{i}", 1.0 - i / 10) for i in range(5)] + [("a", 0.1)]
    assert ndcg_at_k(sixth, ["a"]) == 0.0
    assert ndcg_at_k([], ["a"]) == 0.0


def test_ndcg_shares_the_gain_of_tied_threads_whatever_their_order() -> None:
    # x and a tie at rank 1-2: each position gets gain 1/2 → (1 + 1/log2(3)) / 2
    tied = ndcg_at_k([("x", 0.9), ("a", 0.9), ("y", 0.5)], ["a"])
    assert tied == pytest.approx((1 + 1 / LOG3) / 2)
    assert ndcg_at_k([("a", 0.9), ("x", 0.9), ("y", 0.5)], ["a"]) == pytest.approx(tied)
    # a tie straddling the cut-off (k=2): ranks 2-4 share gain 1/3, only rank 2 counts
    straddle = [("x", 1.0), ("a", 0.5), ("b", 0.5), ("c", 0.5)]
    assert ndcg_at_k(straddle, ["a"], k=2) == pytest.approx((1 / 3) / LOG3)


def test_ndcg_ignores_case_and_repeats_and_is_undefined_without_expected_threads() -> None:
    assert ndcg_at_k([("A", 0.9), ("a", 0.8), ("b", 0.7)], ["a", "B"]) == pytest.approx(1.0)
    assert ndcg_at_k([("a", 0.9)], []) is None
    with pytest.raises(ValueError, match="k must be"):
        ndcg_at_k([("a", 0.9)], ["a"], k=0)


def test_advice_groups_pass_on_any_alternative_and_ignore_case_quotes_and_spacing() -> None:
    text = "If it sticks, Force-close  the app and toggle\u200b Bluetooth. Don\u2019t panic."
    groups = [["force-close the app", "restart the phone"], ["toggle bluetooth"], ["don't panic"]]
    assert advice_found(text, groups) == [True, True, True]
    assert advice_found(text, [["restart the phone"], ["wi-fi transfer", "toggle bluetooth"]]) == [
        False,
        True,
    ]
    assert advice_found("", [["anything"]]) == [False]


def test_answer_text_is_summary_highlights_and_cautions_without_markers() -> None:
    answer = summary(
        summary="Toggle Bluetooth [post:a1].",
        highlights=["Force-close the app [comment:k1]"],
        cautions=["Wi-Fi transfer is faster [post:a1]"],
    )
    text = answer_text(answer)
    assert "post:" not in text and "comment:" not in text
    assert advice_found(text, [["toggle bluetooth"], ["close the app"], ["wi-fi transfer"]]) == [
        True,
        True,
        True,
    ]
    assert answer_text(None) == ""


def test_abstention_is_the_answers_own_flag() -> None:
    declined = summary(
        sources=[], status="partial", reason="abstained: nothing discusses it", abstained=True
    )
    assert abstained(declined)
    assert not abstained(summary(sources=[], status="partial", reason="no posts matched"))
    assert not abstained(None)


def test_terminal_rows_count_wrapped_lines() -> None:
    assert terminal_rows("") == 0
    assert terminal_rows("one\ntwo\n") == 2
    assert terminal_rows("a\n" + "x" * 250, width=100) == 1 + 3
    assert terminal_rows("\n\n", width=100) == 2  # blank lines are rows too
    with pytest.raises(ValueError):
        terminal_rows("x", width=0)


# --- one case measured, and the totals ---------------------------------------------------------


def ranked(*ids_scores: tuple[str, float]) -> RedditResponse:
    posts = [_ranked_post(post_id, score) for post_id, score in ids_scores]
    return RedditResponse(status="ok", engine="local", source="archive", ranked=posts)


def _ranked_post(post_id: str, score: float) -> RankedPost:
    return RankedPost(
        post_id=post_id, url=URL.format(post_id), title="t", subreddit="gadgets", post_karma=1,
        num_comments=0, strategies=["targeted"], relevance=score, engagement=0.0,
        final_score=score,
    )  # fmt: skip


def research(answer: SummarizeResult | None, response: RedditResponse | None) -> ResearchResult:
    return ResearchResult(
        question="Why?", status="ok", engine="local", summary=answer, reddit_response=response,
        timings_ms={}, usage=Usage(),
    )  # fmt: skip


ANSWERABLE = EvalCase(
    id="sync", kind="troubleshooting", question="Why?",
    key_advice=[["force-close the app"], ["toggle bluetooth", "restart bluetooth"]],
    top_threads=["a1", "b2"],
)  # fmt: skip
OFF_TOPIC = EvalCase(id="sony", kind="off_topic", question="Why?", expect_abstain=True)


def test_a_case_is_measured_from_its_answer_ranking_and_rendering() -> None:
    answer = summary(summary="Force-close the app. [post:a1]", highlights=[])
    result = research(answer, ranked(("a1", 0.9), ("x", 0.5), ("b2", 0.4)))
    grounding = check(ANSWERABLE, evidence(), answer, SummarizerConfig())
    report = measure(ANSWERABLE, result, grounding, "line\n" * 12, EvalTargets())
    assert (report.advice_groups, report.advice_found, report.advice_hit) == (2, 1, False)
    assert report.advice_missing == [["toggle bluetooth", "restart bluetooth"]]
    assert report.top_threads == ["a1", "x", "b2"]
    assert report.ndcg_at_5 == pytest.approx((1 + 1 / 2) / (1 + 1 / LOG3))  # ranks 1 and 3
    assert report.answer_lines == 12 and report.grounding_passed
    assert (report.abstained, report.abstention_correct, report.verdict) == (False, True, "FAIL")


def test_off_topic_cases_must_abstain_and_answerable_ones_must_not() -> None:
    declined = summary(summary="Nothing here discusses it.", sources=[], highlights=[],
                       status="partial", reason="abstained: no post mentions it",
                       abstained=True)  # fmt: skip
    answered = summary()
    config = SummarizerConfig()

    def report(case: EvalCase, answer: SummarizeResult) -> Any:
        grounding = check(case, evidence(), answer, config)
        return measure(case, research(answer, None), grounding, "x", EvalTargets())

    assert report(OFF_TOPIC, declined).abstention_correct is True
    assert report(OFF_TOPIC, answered).abstention_correct is False
    assert report(ANSWERABLE, declined).abstention_correct is False
    wrong = report(OFF_TOPIC, answered)
    assert wrong.advice_hit is None and wrong.ndcg_at_5 is None and wrong.verdict == "FAIL"
    unlabelled = report(CASE, answered)
    assert unlabelled.abstention_correct is None and unlabelled.verdict == "PASS"


def test_totals_and_targets_follow_the_cases() -> None:
    config = SummarizerConfig()
    targets = EvalTargets(max_answer_lines=20)
    hit = summary(summary="Force-close the app, then toggle Bluetooth. [post:a1]")
    declined = summary(summary="Nothing discusses it.", sources=[], highlights=[],
                       status="partial", reason="abstained", abstained=True)  # fmt: skip
    reports = [
        measure(ANSWERABLE, research(hit, ranked(("a1", 0.9), ("b2", 0.8))),
                check(ANSWERABLE, evidence(), hit, config), "x\n" * 10, targets),
        measure(ANSWERABLE, research(summary(), ranked(("x", 0.9))),
                check(ANSWERABLE, evidence(), summary(), config), "x\n" * 30, targets),
        measure(OFF_TOPIC, research(declined, None),
                check(OFF_TOPIC, evidence(), declined, config), "x", targets),
    ]  # fmt: skip
    result = summarise(reports, targets)
    totals = result.totals
    assert (totals.cases, totals.answerable, totals.off_topic, totals.labelled) == (3, 2, 1, 3)
    assert (totals.key_advice_hits, totals.key_advice_rate) == (1, 0.5)
    assert totals.mean_ndcg_at_5 == pytest.approx(0.5) and totals.ndcg_cases == 2
    assert (totals.abstention_correct, totals.abstention_accuracy) == (3, 1.0)
    assert (totals.max_answer_lines, totals.answers_over_limit) == (30, 1)
    verdicts = {check.name: check.passed for check in result.targets}
    assert verdicts == {
        "key advice": False, "abstention": True, "answer length": False, "grounding": True,
    }  # fmt: skip
    assert not result.passed and result.engine == "local"
    text = "\n".join(summary_lines(result))
    assert "key advice     1/2 = 50%" in text and "FAIL: key advice, answer length" in text
    assert "sony" in text and "off_topic" in text
    passing = summarise(reports[:1] + reports[2:], targets)
    assert passing.passed and summary_lines(passing)[-1] == "PASS: every target met"


# --- the case file -------------------------------------------------------------------------------

GOOD = {"id": "c1", "kind": "how_to", "question": "How?", "key_advice": [["do it"]],
        "top_threads": ["abc12"]}  # fmt: skip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[\n  {"id": "c1",,}\n]', "cases.json:2: not valid JSON"),
        ('{"id": "c1"}', "expected a non-empty JSON list"),
        ("[]", "expected a non-empty JSON list"),
        (
            json.dumps([GOOD, GOOD | {"id": "c2", "key_advise": [["x"]]}], indent=2),
            "cases.json:27: case 2 ('c2'), key_advise: Extra inputs are not permitted",
        ),
        (
            json.dumps([GOOD, {"id": "s", "kind": "off_topic", "question": "Sony?"}], indent=2),
            "case 2 ('s'), expect_abstain: an off_topic case must set it to true",
        ),
        (
            json.dumps([GOOD | {"top_threads": []}], indent=2),
            "cases.json:11: case 1 ('c1'), top_threads: an answerable case needs the post ids",
        ),
        (
            json.dumps([GOOD | {"key_advice": [["ok phrase", ""]]}], indent=2),
            "case 1 ('c1'), key_advice[0][1]: String should have at least 3 characters",
        ),
        (
            json.dumps([GOOD | {"key_advice": [[]]}]),
            "key_advice[0]: List should have at least 1 item",
        ),
        (json.dumps([GOOD | {"top_threads": ["t3_abc"]}]), "top_threads[0]: String should match"),
        (json.dumps([GOOD | {"kind": "howto"}]), "kind: Input should be 'how_to'"),
        (json.dumps([{"id": "u", "question": "Why?", "expect_abstain": True}]), "needs a kind"),
        (json.dumps([GOOD, GOOD], indent=2), "cases.json:15: case 2 ('c1'), id: 'c1' is already"),
    ],
)
def test_a_bad_case_file_says_where_and_what_to_do(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "cases.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EvalCasesError) as caught:
        load_cases(path)
    assert message in str(caught.value)
    assert "--cases" in str(caught.value) or "fix the syntax" in str(caught.value)


def test_a_bad_case_file_is_a_usage_error_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([GOOD | {"kind": "nope"}, GOOD | {"id": "c2", "kind": "?"}]))
    outcome = CliRunner().invoke(app, ["eval", "--cases", str(path)], catch_exceptions=False)
    assert outcome.exit_code == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith("error: ") and outcome.stderr.count("\n") == 1
    assert "case 1 ('c1'), kind:" in outcome.stderr and "(and 1 more)" in outcome.stderr
    missing = CliRunner().invoke(app, ["eval", "--cases", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "no evaluation cases at" in missing.stderr


def test_an_unlabelled_case_file_still_loads_for_grounding_only(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text('[{"id": "q1", "question": "Is it good?"}]')
    (case,) = load_cases(path)
    assert not case.labelled and not case.answerable and case.kind is None


def _demo_threads() -> tuple[dict[str, str], dict[str, list[str]]]:
    """The demo archive's titles and comment bodies per post id, read from its dumps."""

    def lines(name: str) -> list[dict[str, Any]]:
        with (DEMO / name).open("rb") as raw:
            reader = io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(raw), "utf-8")
            return [json.loads(line) for line in reader if line.strip()]

    titles = {p["id"]: html.unescape(p["title"]) for p in lines("RS_demo.ndjson.zst")}
    bodies: dict[str, list[str]] = {}
    for comment in lines("RC_demo.ndjson.zst"):
        bodies.setdefault(str(comment["link_id"])[3:], []).append(str(comment.get("body") or ""))
    return titles, bodies


def test_the_shipped_cases_are_labelled_from_the_demo_archive() -> None:
    cases = load_cases(Path("data/eval/cases.json"))
    kinds = [case.kind for case in cases]
    assert len(cases) >= 20 and {"how_to", "troubleshooting", "comparison", "general"} <= set(kinds)
    assert kinds.count("off_topic") >= 3
    titles, bodies = _demo_threads()
    lowered = [title.lower() for title in titles.values()]
    said = "\x00".join(normalise(body) for thread in bodies.values() for body in thread)
    everything = f"{normalise(' '.join(titles.values()))}\x00{said}"
    for case in cases:
        question = case.question.lower()
        closest = max(difflib.SequenceMatcher(None, question, t).ratio() for t in lowered)
        assert closest < 0.6, f"{case.id} is phrased like a thread title"
        assert set(case.top_threads) <= set(titles), f"{case.id}: unknown thread"
        for group in case.key_advice:  # every phrase is advice somebody in the archive gave
            for phrase in group:
                assert normalise(phrase) in said, f"{case.id}: nobody said {phrase!r}"
        if case.expect_abstain:  # some word of its subject appears nowhere in the archive
            words = [w.strip("?,.!").lower() for w in case.question.split()]
            assert any(len(w) > 4 and w not in everything for w in words), case.id
    previews = {p.stem for p in Path("data/eval/previews").glob("*.json")}
    assert previews <= {case.id for case in cases}
    for name in sorted(previews)[:1]:
        saved = json.loads(Path(f"data/eval/previews/{name}.json").read_text())
        FetchResult.model_validate(saved["fetch_result"])
        SummarizeResult.model_validate(saved["summarize_result"])


# --- end to end ----------------------------------------------------------------------------------


def test_crowdsift_eval_on_the_demo_archive_reports_what_the_run_produced(tmp_path: Path) -> None:
    # labels no answer can meet (a phrase nobody said, a thread that does not exist): if the
    # figures were not computed from the run, these would not come out as they must
    impossible = EvalCase(
        id="transfer", kind="troubleshooting",
        question="My Plaud recorder hangs at zero percent when I move recordings to my phone.",
        key_advice=[["zzqx nobody ever wrote this"]], top_threads=["zzzzzz"],
    )  # fmt: skip
    off_topic = EvalCase(
        id="sony", kind="off_topic", question="Is the Sony WH-1000XM6 worth it?",
        expect_abstain=True,
    )  # fmt: skip
    path = tmp_path / "cases.json"
    path.write_text(
        json.dumps([c.model_dump(exclude_defaults=True) for c in (impossible, off_topic)])
    )
    previews = tmp_path / "previews"
    args = ["eval", "--cases", str(path), "--engine", "local", "--json", "--save", str(previews)]
    outcome = CliRunner().invoke(app, args, catch_exceptions=False)
    report = json.loads(outcome.stdout)
    assert set(report) == {"engine", "cases", "totals", "targets", "passed"}
    assert report["engine"] == "local" and report["passed"] is False and outcome.exit_code == 1
    first, second = report["cases"]
    assert [first["id"], second["id"]] == ["transfer", "sony"]
    for case in report["cases"]:  # every per-case key of the grounding report is still there
        assert {"status", "sources", "sources_valid", "budget_respected", "highlights"} <= set(case)
        saved = SummarizeResult.model_validate(
            json.loads((previews / f"{case['id']}.json").read_text())["summarize_result"]
        )
        assert case["abstained"] == abstained(saved)
        assert case["abstention_correct"] == (case["abstained"] == case["expect_abstain"])
        assert case["answer_lines"] > 0 and (saved.summary or case["abstained"] is False)
        assert len(case["top_threads"]) <= 5
    assert (first["advice_found"], first["advice_hit"]) == (0, False)
    assert first["advice_missing"] == [["zzqx nobody ever wrote this"]]
    assert first["ndcg_at_5"] == 0.0 and first["verdict"] == "FAIL"
    assert second["advice_hit"] is None and second["ndcg_at_5"] is None
    totals = report["totals"]
    assert (totals["cases"], totals["answerable"], totals["off_topic"]) == (2, 1, 1)
    assert (totals["key_advice_hits"], totals["key_advice_rate"]) == (0, 0.0)
    correct = sum(c["abstention_correct"] for c in report["cases"])
    assert totals["abstention_correct"] == correct and totals["abstention_accuracy"] == correct / 2
    lines = [c["answer_lines"] for c in report["cases"]]
    assert totals["max_answer_lines"] == max(lines)
    checks = {check["name"]: check for check in report["targets"]}
    assert checks["key advice"]["passed"] is False
    assert checks["answer length"]["passed"] == (max(lines) <= 50)
