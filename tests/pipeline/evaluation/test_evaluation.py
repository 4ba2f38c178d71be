"""The eval: grounding checks, the metrics (hand-computed), what the reader is shown (the shown
answer and its lead, through the real terminal renderer), the thread's rank in the answer's own
source list, the case file and its errors, the totals and table, and one ``crowdsift eval`` run
on the demo archive. The BM25 baseline has its own file (``test_evaluation_baseline``)."""

from __future__ import annotations

import asyncio
import difflib
import html
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
import zstandard
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.cli.render import render_research
from crowdsift.core.models import Comment, FetchResult, Post
from crowdsift.engines.base import Usage
from crowdsift.pipeline.evaluation import (
    BaselineAnswer,
    EvalCase,
    EvalCasesError,
    EvalTargets,
    check,
    load_cases,
    measure,
    preview_text,
    run_cases,
    summarise,
    summary_lines,
)
from crowdsift.pipeline.evaluation.metrics import (
    abstained,
    advice_found,
    best_rank,
    lead_of,
    normalise,
    reciprocal_rank,
    terminal_rows,
    thread_of,
    threads_of,
)
from crowdsift.pipeline.reddit.models import RankedPost, RedditResponse
from crowdsift.pipeline.result import AskRun, ResearchResult
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.models import (
    CitedSource,
    RedditSynthesis,
    Source,
    SummarizeResult,
)

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


def source(post_id: str) -> Source:
    return Source(post_id=post_id, url=URL.format(post_id), subreddit="gadgets", title=post_id)


def summary(**fields: object) -> SummarizeResult:
    base: dict[str, object] = {
        "status": "ok",
        "summary": "Battery lasts long. [post:a1]",
        "highlights": ["The battery lasts thirty hours [post:a1]", "Cheap and great [post:a1]"],
        "sources": [source("a1")],
        "prompt_version": "v1",
        "engine": "local",
    }
    base.update(fields)
    return SummarizeResult.model_validate(base)


ANSWERABLE = EvalCase(
    id="sync", kind="troubleshooting", question="Why?",
    key_advice=[["force-close the app"], ["toggle bluetooth", "restart bluetooth"]],
    threads=["a1", "b2"],
)  # fmt: skip
OFF_TOPIC = EvalCase(id="sony", kind="off_topic", question="Is the Sony good?")


def test_a_grounded_answer_passes_and_support_is_counted() -> None:
    report = check(ANSWERABLE, evidence(), summary(), SynthesisConfig())
    assert report.passed and report.sources_valid and report.budget_respected
    assert (report.highlights, report.highlights_supported) == (2, 1)


def test_unknown_sources_citations_and_budgets_fail() -> None:
    foreign = source("zz")
    assert not check(ANSWERABLE, evidence(), summary(sources=[foreign]), SynthesisConfig()).passed
    cited = summary(summary="Invented. [post:zz]")
    assert not check(ANSWERABLE, evidence(), cited, SynthesisConfig()).sources_valid
    long = summary(summary="x" * 200)
    assert not check(ANSWERABLE, evidence(), long, SynthesisConfig(summary_char_budget=100)).passed
    assert not check(ANSWERABLE, evidence(), summary(status="error"), SynthesisConfig()).passed


def test_a_video_citation_and_an_unknown_dashed_id_are_checked_and_numbered() -> None:
    video = Source(
        post_id="yt-dQw4w9W_-Xc", kind="youtube", url="https://www.youtube.com/watch?v=dQw4w9W_-Xc",
        subreddit="GadgetChannel", title="Review",
    )  # fmt: skip
    answer = summary(
        summary="Battery lasts long [post:a1]. The review agrees [post:yt-dQw4w9W_-Xc].",
        sources=[*summary().sources, video],
    )
    assert not check(ANSWERABLE, evidence(), answer, SynthesisConfig()).sources_valid
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
    report = check(ANSWERABLE, fetched, answer, SynthesisConfig())
    assert report.sources_valid and report.highlights_supported == 1


# --- metrics (pure, hand-computed) ---------------------------------------------------------------


def test_advice_groups_pass_on_any_alternative_and_ignore_case_quotes_and_spacing() -> None:
    text = "If it sticks, Force-close  the app and toggle\u200b Bluetooth. Don\u2019t panic."
    groups = [["force-close the app", "restart the phone"], ["toggle bluetooth"], ["don't panic"]]
    assert advice_found(text, groups) == [True, True, True]
    assert advice_found(text, [["restart the phone"], ["wi-fi transfer", "toggle bluetooth"]]) == [
        False,
        True,
    ]
    assert advice_found("", [["anything"]]) == [False]


def test_a_phrase_the_terminal_wrapped_is_still_found() -> None:
    wrapped = "  • then force-\n    close the app and\n    toggle bluetooth [2]"
    assert advice_found(wrapped, [["force-close the app"], ["and toggle bluetooth"]]) == [True] * 2
    assert normalise("a -\nb") == "a - b"  # a dash on its own is not a broken word


def test_the_lead_is_the_first_paragraph_after_any_sample_banner() -> None:
    shown = "SAMPLE DATA: not real.\n\nFirst line\nsecond line [1]\n\nHighlights:\n  • x"
    assert lead_of(shown, banner=True) == "First line\nsecond line [1]"
    assert lead_of(shown) == "SAMPLE DATA: not real."
    assert lead_of("\n\nOnly one\n") == "Only one" and lead_of("") == ""


def test_threads_come_from_permalinks_and_a_comment_counts_as_its_thread() -> None:
    assert thread_of("https://www.reddit.com/r/a/comments/AbC12/some_title/") == "abc12"
    assert thread_of("https://www.reddit.com/r/a/comments/p1/_/k9/") == "p1"
    assert thread_of("https://www.youtube.com/watch?v=x") is None
    urls = [
        URL.format("p1"),
        "https://www.reddit.com/r/a/comments/p2/_/k1/",
        "https://www.youtube.com/watch?v=x",
        "https://www.reddit.com/r/a/comments/p1/_/k2/",
        URL.format("p3"),
    ]
    assert threads_of(urls) == ["p1", "p2", "p3"]


def test_the_rank_is_the_best_of_the_expected_threads_and_absent_is_zero() -> None:
    assert best_rank(["x", "X", "b", "a"], ["a", "B"]) == 2  # repeats do not take a rank
    assert best_rank(["x", "y"], ["a"]) is None and best_rank([], ["a"]) is None
    assert reciprocal_rank(2) == 0.5 and reciprocal_rank(None) == 0.0


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


# --- one case measured, as the reader sees it -----------------------------------------------------


def ranked(*ids: str) -> RedditResponse:
    posts = [_ranked_post(post_id, 1.0 - i / 10) for i, post_id in enumerate(ids)]
    return RedditResponse(status="ok", engine="local", source="archive", ranked=posts)


def _ranked_post(post_id: str, score: float) -> RankedPost:
    return RankedPost(
        post_id=post_id, url=URL.format(post_id), title="t", subreddit="gadgets", post_karma=1,
        num_comments=0, strategies=["targeted"], relevance=score, engagement=0.0,
        final_score=score,
    )  # fmt: skip


def research(
    answer: SummarizeResult | None, response: RedditResponse | None, *, sample: bool = False
) -> ResearchResult:
    return ResearchResult(
        question="Why?", status="ok", engine="local", summary=answer, reddit_response=response,
        timings_ms={}, usage=Usage(), sample_data=sample,
    )  # fmt: skip


def test_advice_counts_where_the_reader_sees_it_not_behind_full() -> None:
    """Lead: the opening paragraph. Shown: the default rendering, highlights included. A
    sentence the short answer cuts (only ``--full`` prints it) counts for neither."""
    answer = summary(
        summary="Force-close the app first. [post:a1] It helps. [post:a1] It helps again. "
        "[post:a1] It still helps. [post:a1] Reset the recorder to factory settings. [post:a1]",
        highlights=["Toggle Bluetooth off and on [post:a1]"],
    )
    case = EvalCase(
        id="c", kind="how_to", question="Why?", threads=["a1"],
        key_advice=[["force-close the app"], ["toggle bluetooth"], ["factory settings"]],
    )  # fmt: skip
    result = research(answer, ranked("a1"), sample=True)
    shown = render_research(result)
    assert "factory settings" in render_research(result, full=True)  # it is in the answer …
    grounding = check(case, evidence(), answer, SynthesisConfig())
    report = measure(case, result, grounding, shown, EvalTargets())
    measured = report.crowdsift
    assert (measured.shown_found, measured.lead_found) == (2, 1)  # … but not shown
    assert measured.advice_missing == [["factory settings"]]
    assert (measured.shown_hit, measured.lead_hit) == (False, False)
    only_two = case.model_copy(update={"key_advice": case.key_advice[:2]})
    both = measure(only_two, result, grounding, shown, EvalTargets()).crowdsift
    assert (both.shown_hit, both.lead_hit) == (True, False)
    assert measured.lines == terminal_rows(shown) and measured.lines > 5


def test_the_rank_is_the_threads_place_in_the_answers_source_list() -> None:
    """Threads in the order the answer numbers its sources (a cited comment stands for its
    thread), not the retrieval order, which is kept as a diagnostic."""
    synthesis = RedditSynthesis(
        summary="s",
        sources=[
            CitedSource(kind="comment", id="k1", url="https://www.reddit.com/r/g/comments/b2/_/k1/",
                          title="another thread"),
        ],
    )  # fmt: skip
    answer = summary(sources=[source("x1"), source("a1")])
    response = ranked("b2", "x1", "a1").model_copy(update={"synthesis": synthesis})
    result = research(answer, response)
    grounding = check(ANSWERABLE, evidence(), answer, SynthesisConfig())

    def report(threads: list[str]) -> Any:
        case = ANSWERABLE.model_copy(update={"threads": threads})
        return measure(case, result, grounding, "x", EvalTargets(), seconds=1.25)

    b2 = report(["b2"])
    assert b2.crowdsift.answer_threads == ["x1", "a1", "b2"]
    assert (b2.crowdsift.rank, b2.crowdsift.reciprocal_rank, b2.crowdsift.hit_at_5) == (
        3,
        pytest.approx(1 / 3),
        True,
    )
    assert b2.retrieval_rank == 1 and b2.crowdsift.seconds == 1.25
    assert report(["zz", "a1"]).crowdsift.rank == 2  # the best of the expected threads
    missing = report(["zz"])
    assert (missing.crowdsift.rank, missing.crowdsift.reciprocal_rank) == (None, 0.0)
    assert missing.crowdsift.hit_at_5 is False and missing.retrieval_rank is None
    six = summary(sources=[source(f"p{i}") for i in range(6)])
    sixth = measure(
        ANSWERABLE.model_copy(update={"threads": ["p5"]}), research(six, None),
        check(ANSWERABLE, evidence(), six, SynthesisConfig()), "x", EvalTargets(),
    ).crowdsift  # fmt: skip
    assert (sixth.rank, sixth.hit_at_5, len(sixth.answer_threads)) == (6, False, 5)


def test_off_topic_cases_must_abstain_and_answerable_ones_must_not() -> None:
    declined = summary(summary="Nothing here discusses it.", sources=[], highlights=[],
                       status="partial", reason="abstained: no post mentions it",
                       abstained=True)  # fmt: skip
    answered = summary(summary="Force-close the app, toggle Bluetooth [post:a1]")
    config = SynthesisConfig()

    def report(case: EvalCase, answer: SummarizeResult) -> Any:
        grounding = check(case, evidence(), answer, config)
        return measure(
            case, research(answer, None), grounding, answer.summary.marked(), EvalTargets()
        )

    assert report(OFF_TOPIC, declined).crowdsift.abstention_correct is True
    assert report(OFF_TOPIC, declined).verdict == "PASS"
    wrong = report(OFF_TOPIC, answered)
    assert wrong.crowdsift.abstention_correct is False and wrong.verdict == "FAIL"
    assert wrong.crowdsift.shown_hit is None and wrong.crowdsift.reciprocal_rank is None
    assert report(ANSWERABLE, declined).crowdsift.abstention_correct is False
    assert report(ANSWERABLE, answered).verdict == "PASS"


# --- running cases, totals and the table ----------------------------------------------------------


def test_cases_are_timed_with_the_injected_clock_and_the_baseline_is_measured_alike() -> None:
    hit = summary(summary="Force-close the app, then toggle Bluetooth. [post:a1]")
    declined = summary(summary="Nothing discusses it.", sources=[], highlights=[],
                       status="partial", reason="abstained", abstained=True)  # fmt: skip
    answers = {"sync": hit, "sony": declined}

    async def ask_case(case: EvalCase) -> AskRun:
        return AskRun(research(answers[case.id], ranked("a1")), evidence())

    ticks = iter([10.0, 12.5, 12.5, 12.75, 20.0, 21.0, 21.0, 21.5])
    lines: list[str] = []

    def baseline(_question: str) -> BaselineAnswer:
        return BaselineAnswer(
            threads=["zz", "b2"], replies=["Toggle Bluetooth.", "Force-close the app."]
        )

    def render(result: ResearchResult) -> str:
        return result.summary.summary.marked() if result.summary else ""

    reports = asyncio.run(
        run_cases(
            [ANSWERABLE, OFF_TOPIC], ask_case, SynthesisConfig(), render=render,
            clock=lambda: next(ticks), baseline=baseline, progress=lines.append,
        )
    )  # fmt: skip
    first, second = reports
    assert (first.crowdsift.seconds, first.baseline and first.baseline.seconds) == (2.5, 0.25)
    assert (second.crowdsift.seconds, second.baseline and second.baseline.seconds) == (1.0, 0.5)
    assert lines == ["[1/2] sync 2.5 s (baseline 0.25 s)", "[2/2] sony 1.0 s (baseline 0.50 s)"]
    base = first.baseline
    assert base is not None
    assert (base.shown_hit, base.lead_hit, base.rank, base.reciprocal_rank) == (True, False, 2, 0.5)
    assert second.baseline is not None and second.baseline.abstention_correct is False

    summary_ = summarise(reports, EvalTargets(max_answer_lines=20), baseline_index_seconds=0.3)
    totals, side = summary_.totals, summary_.baseline
    assert side is not None and summary_.baseline_index_seconds == 0.3
    assert (totals.shown_hits, totals.lead_hits, totals.hits_at_5, totals.mrr) == (1, 1, 1, 1.0)
    assert (totals.declined_off_topic, totals.abstention_correct, totals.seconds) == (1, 2, 3.5)
    assert (side.shown_hits, side.lead_hits, side.hits_at_5, side.mrr) == (1, 0, 1, 0.5)
    assert (side.declined_off_topic, side.abstention_correct, side.seconds) == (0, 1, 0.75)
    assert summary_.passed  # the baseline's figures are reported, never judged
    text = "\n".join(summary_lines(summary_))
    assert "baseline (BM25)" in text.splitlines()[0]
    totals_of = {
        line.split()[0]: line.split()[1:] for line in text.splitlines() if line[:3] == "  c"
    }
    totals_of |= {
        line.split()[0]: line.split()[1:] for line in text.splitlines() if line[:3] == "  b"
    }
    assert totals_of["crowdsift"][:9] == ["1/1", "100%"] * 3 + ["1.00", "1/1", "declined"]
    assert totals_of["baseline"][:9] == ["1/1", "100%", "0/1", "0%", "1/1", "100%", "0.50", "0/1",
                                         "declined"]  # fmt: skip
    row = next(line for line in text.splitlines() if line.startswith("sync "))
    assert row.split("│")[1].split()[:3] == ["✓", "✗", "2"]


def test_totals_and_targets_follow_the_cases() -> None:
    config = SynthesisConfig()
    targets = EvalTargets(max_answer_lines=20)
    hit = summary(summary="Force-close the app, then toggle Bluetooth. [post:a1]")
    declined = summary(summary="Nothing discusses it.", sources=[], highlights=[],
                       status="partial", reason="abstained", abstained=True)  # fmt: skip
    shown = "Force-close the app, then toggle Bluetooth [1]\n"
    reports = [
        measure(ANSWERABLE, research(hit, ranked("a1", "b2")),
                check(ANSWERABLE, evidence(), hit, config), shown * 10, targets),
        measure(ANSWERABLE, research(summary(), ranked("x")),
                check(ANSWERABLE, evidence(), summary(), config), "x\n" * 30, targets),
        measure(OFF_TOPIC, research(declined, None),
                check(OFF_TOPIC, evidence(), declined, config), "x", targets),
    ]  # fmt: skip
    result = summarise(reports, targets)
    totals = result.totals
    assert (totals.cases, totals.answerable, totals.off_topic) == (3, 2, 1)
    assert (totals.shown_hits, totals.shown_rate) == (1, 0.5)
    assert (totals.hits_at_5, totals.mrr) == (2, 1.0)  # a1 is the answer's first source both times
    assert (totals.retrieval_hits_at_5, totals.retrieval_mrr) == (1, 0.5)
    assert (totals.abstention_correct, totals.abstention_accuracy) == (3, 1.0)
    assert (totals.max_lines, totals.answers_over_limit) == (30, 1)
    assert result.baseline is None
    verdicts = {check.name: check.passed for check in result.targets}
    assert verdicts == {
        "key advice": False, "abstention": True, "answer length": False, "grounding": True,
    }  # fmt: skip
    assert not result.passed and result.engine == "local"
    text = "\n".join(summary_lines(result))
    assert "key advice     1/2 = 50% shown" in text and "FAIL: key advice, answer length" in text
    assert "sony" in text and "off_topic" in text and "│" not in text
    passing = summarise(reports[:1] + reports[2:], targets)
    assert passing.passed and summary_lines(passing)[-1] == "PASS: every target met"


# --- the case file -------------------------------------------------------------------------------

GOOD = {"id": "c1", "kind": "how-to", "q": "How?", "thread": "abc12", "keys": ["do it"]}


def write(tmp_path: Path, data: object, indent: int | None = 2) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=indent))
    return path


def test_a_case_file_takes_both_key_shapes_thread_lists_and_both_off_topic_forms(
    tmp_path: Path,
) -> None:
    data = {
        "about": "anything",
        "answerable": [
            GOOD,
            {"id": "c2", "kind": "Troubleshooting", "q": "Why?", "thread": ["AB1", "cd2"],
             "keys": [["force-close the app"], ["toggle bluetooth", "restart bluetooth"]],
             "subreddits": ["gadgets"]},
            {"id": "c3", "kind": "buying", "q": "Which?", "thread": "x9", "keys": ["a b c"]},
        ],
        "off_topic": ["Is the Sony good?", {"id": "espresso", "q": "Which grinder?"}, "Why not?"],
    }  # fmt: skip
    cases = load_cases(write(tmp_path, data))
    assert [c.id for c in cases] == ["c1", "c2", "c3", "off_topic_1", "espresso", "off_topic_3"]
    first, second, third, off = cases[:4]
    assert (first.kind, first.key_advice, first.threads) == ("how_to", [["do it"]], ["abc12"])
    assert second.kind == "troubleshooting" and second.threads == ["ab1", "cd2"]
    assert second.key_advice == [["force-close the app"], ["toggle bluetooth", "restart bluetooth"]]
    assert second.subreddits == ["gadgets"] and third.kind == "buying"
    assert (off.kind, off.question, off.expect_abstain, off.answerable) == (
        "off_topic",
        "Is the Sony good?",
        True,
        False,
    )
    assert not first.expect_abstain and first.answerable
    only_off = load_cases(write(tmp_path, {"off_topic": ["Is it?"]}))
    assert [c.id for c in only_off] == ["off_topic_1"]


ONE = {"answerable": [GOOD]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{\n  "answerable": [,]\n}', "cases.json:2: not valid JSON"),
        ([GOOD], "a JSON list is the old case format"),
        ({"answerable": []}, "no cases"),
        ({"answerable": GOOD}, "'answerable' must be a list"),
        ({"answerable": [GOOD], "offtopic": ["x"]}, "unknown key 'offtopic'"),
        (
            {"answerable": [GOOD, GOOD | {"id": "c2", "key": ["x"]}]},
            "cases.json:20: answerable case 2 ('c2'), key: Extra inputs are not permitted",
        ),
        (
            {"answerable": [GOOD, GOOD | {"id": "c2", "thread": []}]},
            "cases.json:16: answerable case 2 ('c2'), thread: Value should have at least 1 item",
        ),
        (
            {"answerable": [GOOD | {"keys": ["ok phrase", ""]}]},
            "answerable case 1 ('c1'), keys[0][1]: String should have at least 3 characters",
        ),
        ({"answerable": [GOOD | {"keys": [[]]}]}, "keys[0]: List should have at least 1 item"),
        (
            {"answerable": [GOOD | {"keys": []}]},
            "cases.json:8: answerable case 1 ('c1'), keys: Value should have at least 1 item",
        ),
        ({"answerable": [GOOD | {"thread": "t3_abc"}]}, "thread[0]: String should match"),
        ({"answerable": [GOOD | {"kind": "howto"}]}, "kind: Input should be 'how_to'"),
        ({"answerable": [{"id": "u", "q": "Why?"}]}, "kind: Field required"),
        ({"off_topic": [{"id": "o1"}]}, "off_topic case 1 ('o1'), q: Field required"),
        ({"off_topic": ["ok?", "no"]}, "off_topic case 2, q: String should have at least 3"),
        (
            {"answerable": [GOOD], "off_topic": [{"id": "c1", "q": "Again?"}]},
            "cases.json:14: off_topic case 1 ('c1'), id: 'c1' is used twice",
        ),
    ],
)
def test_a_bad_case_file_says_where_and_what_to_do(
    tmp_path: Path, data: object, message: str
) -> None:
    with pytest.raises(EvalCasesError) as caught:
        load_cases(write(tmp_path, data))
    assert message in str(caught.value)
    assert "--cases" in str(caught.value) or "fix the syntax" in str(caught.value)


def test_a_bad_case_file_is_a_usage_error_on_one_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, {"answerable": [GOOD | {"kind": "nope"}, GOOD | {"id": "c2", "kind": "?"}]}
    )
    outcome = CliRunner().invoke(app, ["eval", "--cases", str(path)], catch_exceptions=False)
    assert outcome.exit_code == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith("error: ") and outcome.stderr.count("\n") == 1
    assert "answerable case 1 ('c1'), kind:" in outcome.stderr
    assert "(and 1 more)" in outcome.stderr
    missing = CliRunner().invoke(app, ["eval", "--cases", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "no evaluation cases at" in missing.stderr


def test_the_baseline_needs_an_archive_source(tmp_path: Path) -> None:
    args = ["eval", "--cases", str(write(tmp_path, ONE)), "--baseline", "--source", "arctic-shift"]
    outcome = CliRunner().invoke(app, args, catch_exceptions=False)
    assert outcome.exit_code == 2 and outcome.stdout == ""
    assert "--baseline indexes an archive, not --source arctic-shift" in outcome.stderr
    bad = CliRunner().invoke(app, ["eval", "--cases", str(write(tmp_path, ONE)), "-s", "nope"])
    assert bad.exit_code == 2 and "unknown --source 'nope'" in bad.stderr


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
    assert any(len(case.key_advice) > 1 for case in cases)  # the stricter labels survived
    assert any(len(case.threads) > 1 for case in cases)
    titles, bodies = _demo_threads()
    lowered = [title.lower() for title in titles.values()]
    said = "\x00".join(normalise(body) for thread in bodies.values() for body in thread)
    everything = f"{normalise(' '.join(titles.values()))}\x00{said}"
    for case in cases:
        question = case.question.lower()
        closest = max(difflib.SequenceMatcher(None, question, t).ratio() for t in lowered)
        assert closest < 0.6, f"{case.id} is phrased like a thread title"
        assert set(case.threads) <= set(titles), f"{case.id}: unknown thread"
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
    data = {
        "answerable": [{
            "id": "transfer", "kind": "troubleshooting",
            "q": "My Plaud recorder hangs at zero percent when I move recordings to my phone.",
            "keys": ["zzqx nobody ever wrote this"], "thread": "zzzzzz",
        }],
        "off_topic": ["Is the Sony WH-1000XM6 worth it?"],
    }  # fmt: skip
    previews = tmp_path / "previews"
    args = ["eval", "--cases", str(write(tmp_path, data)), "--engine", "local", "--json"]
    outcome = CliRunner().invoke(app, [*args, "--save", str(previews)], catch_exceptions=False)
    report = json.loads(outcome.stdout)
    assert set(report) == {
        "engine", "cases", "totals", "baseline", "baseline_index_seconds", "targets", "passed",
    }  # fmt: skip
    assert report["engine"] == "local" and report["passed"] is False and outcome.exit_code == 1
    assert report["baseline"] is None
    assert "[1/2] transfer " in outcome.stderr and "[2/2] off_topic_1 " in outcome.stderr
    first, second = report["cases"]
    assert [first["id"], second["id"]] == ["transfer", "off_topic_1"]
    for case in report["cases"]:  # every per-case key of the grounding report is still there
        assert {"status", "sources", "sources_valid", "budget_respected", "highlights"} <= set(case)
        saved = SummarizeResult.model_validate(
            json.loads((previews / f"{case['id']}.json").read_text())["summarize_result"]
        )
        answer = case["crowdsift"]
        assert answer["abstained"] == abstained(saved)
        assert answer["abstention_correct"] == (answer["abstained"] == case["expect_abstain"])
        assert answer["lines"] > 0 and answer["seconds"] >= 0
        assert len(answer["answer_threads"]) <= 5
    answer = first["crowdsift"]
    assert (answer["shown_found"], answer["shown_hit"], answer["lead_hit"]) == (0, False, False)
    assert answer["advice_missing"] == [["zzqx nobody ever wrote this"]]
    assert (answer["rank"], answer["reciprocal_rank"], answer["hit_at_5"]) == (None, 0.0, False)
    assert first["retrieval_rank"] is None and first["verdict"] == "FAIL"
    assert second["crowdsift"]["shown_hit"] is None
    totals = report["totals"]
    assert (totals["cases"], totals["answerable"], totals["off_topic"]) == (2, 1, 1)
    assert (totals["shown_hits"], totals["shown_rate"], totals["mrr"]) == (0, 0.0, 0.0)
    correct = sum(c["crowdsift"]["abstention_correct"] for c in report["cases"])
    assert totals["abstention_correct"] == correct and totals["abstention_accuracy"] == correct / 2
    lines = [c["crowdsift"]["lines"] for c in report["cases"]]
    assert totals["max_lines"] == max(lines)
    checks = {check["name"]: check for check in report["targets"]}
    assert checks["key advice"]["passed"] is False
    assert checks["answer length"]["passed"] == (max(lines) <= 50)
