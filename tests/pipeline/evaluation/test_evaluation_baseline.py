"""The BM25 baseline of ``crowdsift eval --baseline``: its query, its ranking over title, body and
best-voted replies, its answer, and the whole ``eval --baseline`` path on a small archive built
from dumps as ``crowdsift archive import`` builds one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.pipeline.evaluation.baseline import (
    ANSWER_REPLIES,
    Bm25Baseline,
    fts_query,
)
from crowdsift.sources.archive.importer import import_files

CREATED = 1_717_000_000
QUESTION = "How do I fix a transfer that hangs? Toggle bluetooth?"


def post(
    post_id: str, title: str, selftext: str = "", subreddit: str = "gadgets"
) -> dict[str, Any]:
    return {
        "id": post_id, "subreddit": subreddit, "author": "someone", "title": title,
        "selftext": selftext, "score": 5, "num_comments": 3, "created_utc": CREATED,
        "permalink": f"/r/{subreddit}/comments/{post_id}/slug/", "over_18": False,
        "is_self": True,
    }  # fmt: skip


def reply(
    comment_id: str, link: str, body: str, score: int, parent: str | None = None
) -> dict[str, Any]:
    return {
        "id": comment_id, "link_id": f"t3_{link}", "parent_id": parent or f"t3_{link}",
        "subreddit": "gadgets", "author": "someone", "body": body, "score": score,
        "created_utc": CREATED + 60,
    }  # fmt: skip


POSTS = [
    post("p1", "Transfer hangs", "my recorder stalls"),
    post("p2", "Transfer hangs, any fix?", "it hangs"),
    post("p3", "Best soldering iron", "for a beginner"),
    post("p4", "Mesh wifi for three floors", "coverage is bad"),
    post("p5", "Quiet keyboard switches", "for an office"),
    post("p6", "Slow transfer", "the transfer hangs at 50%"),
    post("p7", "File transfer to my phone", "it hangs often"),
]
COMMENTS = [
    reply("c1", "p1", "Force-close the app, then toggle bluetooth off and on.", 40),
    reply("c2", "p1", "[deleted]", 90),
    reply("c3", "p1", "Same here, it fixed itself.", 3),
    reply("c4", "p1", "A nested reply that is not a direct answer.", 500, parent="t1_c1"),
    reply("c5", "p1", "Update the firmware first.", 10),
    reply("c6", "p1", "Fourth best reply, never shown.", 2),
    reply("c7", "p2", "No idea, sorry.", 7),
    reply("c8", "p3", "A Pinecil is fine.", 20),
    reply("c9", "p7", "Use a cable.", 4),
]


def build_archive(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    dumps = []
    for name, records in (("RS_t.ndjson.zst", POSTS), ("RC_t.ndjson.zst", COMMENTS)):
        data = "\n".join(json.dumps(record) for record in records) + "\n"
        path = directory / name
        path.write_bytes(zstandard.ZstdCompressor().compress(data.encode()))
        dumps.append(path)
    target = directory / "archive.sqlite"
    report = import_files(dumps, target, workers=0)
    assert report.ok and report.posts == len(POSTS) and report.comments == len(COMMENTS)
    return target


def test_the_query_is_the_questions_words_quoted_and_ored_without_stop_words() -> None:
    assert fts_query('Is the "Plaud" worth it, or a phone? A/B: c++') == (
        '"plaud" OR "worth" OR "phone" OR "b" OR "c"'
    )
    assert fts_query("Is it the?! ...") == ""


def test_a_thread_whose_words_are_only_in_its_replies_ranks_above_one_that_lacks_them(
    tmp_path: Path,
) -> None:
    """Many threads say "transfer hangs"; p2's own text also says "fix", but only p1's voted
    replies hold the question's other rare words (toggle, bluetooth): a reader's thread wins
    over a title match."""
    baseline = Bm25Baseline.from_archive(build_archive(tmp_path))
    try:
        answer = baseline.answer(QUESTION)
        assert answer.threads[:2] == ["p1", "p2"]
        without = baseline.answer("fix transfer hangs").threads
        assert without[0] == "p2" and without.index("p1") > 0  # without those words, p2 first
        assert baseline.answer("nested direct answer").threads == []  # a nested reply: not indexed
        assert baseline.answer("the of a").threads == []  # nothing left to search for
        replies = answer.replies
        assert replies[:ANSWER_REPLIES] == [  # best-voted direct replies, deleted ones skipped
            "Force-close the app, then toggle bluetooth off and on.",
            "Update the firmware first.",
            "Same here, it fixed itself.",
        ]
        assert replies[ANSWER_REPLIES:] == ["No idea, sorry."]  # then the second thread's
        assert answer.lead == replies[0] and "Fourth best" not in answer.text
    finally:
        baseline.close()


def test_crowdsift_eval_baseline_runs_both_on_the_configured_archive(
    tmp_path: Path, isolated_environment: Path
) -> None:
    build_archive(isolated_environment)  # CROWDSIFT_HOME/archive.sqlite: the archive in use
    cases = {
        "answerable": [{
            "id": "stuck", "kind": "troubleshooting", "q": QUESTION, "thread": ["p1"],
            "keys": [["toggle bluetooth"], ["update the firmware"]],
        }],
        "off_topic": ["Which espresso grinder under 300 dollars?"],
    }  # fmt: skip
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    args = ["eval", "--cases", str(path), "--engine", "local", "--baseline"]
    outcome = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert outcome.exit_code in (0, 1), outcome.stderr
    report = json.loads(outcome.stdout)
    stuck, off = report["cases"]
    base = stuck["baseline"]
    assert (base["rank"], base["reciprocal_rank"], base["hit_at_5"]) == (1, 1.0, True)
    assert (base["shown_hit"], base["lead_hit"], base["lead_found"]) == (True, False, 1)
    assert base["answer_threads"][:2] == ["p1", "p2"] and base["abstained"] is False
    assert off["baseline"]["abstention_correct"] is False  # it never abstains
    assert report["baseline"]["shown_hits"] == 1 and report["baseline"]["declined_off_topic"] == 0
    assert report["baseline_index_seconds"] >= 0
    assert stuck["crowdsift"]["seconds"] > 0 and report["totals"]["seconds"] > 0
    assert "(baseline " in outcome.stderr and "[2/2]" in outcome.stderr

    table = CliRunner().invoke(app, args, catch_exceptions=False)
    lines = table.stdout.splitlines()
    assert "baseline (BM25)" in lines[0] and "│" in lines[1]
    row = next(line for line in lines if line.startswith("stuck "))
    assert row.split("│")[1].split()[:3] == ["✓", "✗", "1"]
    assert any(line.startswith("  baseline   1/1 100%") for line in lines)


@pytest.mark.parametrize("source", ["auto", "reddit-api"])
def test_the_baseline_is_refused_for_a_live_source(tmp_path: Path, source: str) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"off_topic": ["Which espresso grinder?"]}))
    args = ["eval", "--cases", str(path), "--baseline", "--source", source]
    outcome = CliRunner().invoke(app, args, catch_exceptions=False)
    assert outcome.exit_code == 2
    assert f"--baseline indexes an archive, not --source {source}" in outcome.stderr
