"""The bundled demo archive: reproducible, well-formed, and full of the cases features need."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import crowdsift.demo
from crowdsift.core.errors import ArchiveError
from crowdsift.core.models import SearchPlan
from crowdsift.demo import COMMENTS_FILE, SUBMISSIONS_FILE, demo_data_dir, demo_dump_files

if TYPE_CHECKING:
    from conftest import Dump

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "build_demo_data.py"
EXAMPLES = REPO / "examples"
PLANS = sorted(EXAMPLES.glob("*.json"))
START = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
END = datetime(2026, 10, 31, 23, 59, 59, tzinfo=UTC).timestamp()
ID_RE = re.compile(r"^[0-9a-z]{6,7}$")
THEME_SUBREDDITS = {
    "power tools": {"homeimprovement", "tools", "diy"},
    "ai coding": {"chatgptcoding", "localllama", "rag"},
    "voice recorders": {"gadgets", "productivity"},
    "orchestration": {"dataengineering", "apacheairflow"},
}


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


def created(record: dict[str, Any]) -> float:
    return float(record["created_utc"])


def unique_posts(dump: Dump) -> dict[str, dict[str, Any]]:
    return {post["id"]: post for post in dump.records}


def unique_comments(dump: Dump) -> dict[str, dict[str, Any]]:
    return {comment["id"]: comment for comment in dump.records}


def depth(comment: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> int:
    level = 1
    while comment["parent_id"].startswith("t1_"):
        comment = by_id[comment["parent_id"][3:]]
        level += 1
    return level


# -- reproducibility ----------------------------------------------------------------------
def test_regenerating_gives_byte_identical_files(tmp_path: Path) -> None:
    result = run_script("--out-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for committed in demo_dump_files():
        assert (tmp_path / committed.name).read_bytes() == committed.read_bytes(), (
            f"{committed} is stale: run python scripts/build_demo_data.py"
        )


def test_check_passes_on_committed_files_and_fails_on_changed_ones(tmp_path: Path) -> None:
    assert run_script("--check").returncode == 0
    for name in (SUBMISSIONS_FILE, COMMENTS_FILE):
        shutil.copy(demo_data_dir() / name, tmp_path / name)
    stale = tmp_path / COMMENTS_FILE
    stale.write_bytes(stale.read_bytes()[:-1] + b"\x00")
    result = run_script("--check", "--out-dir", str(tmp_path))
    assert result.returncode == 1
    assert COMMENTS_FILE in result.stderr and SUBMISSIONS_FILE not in result.stderr


def test_demo_dump_files_are_the_submissions_then_the_comments() -> None:
    files = demo_dump_files()
    assert [path.name for path in files] == [SUBMISSIONS_FILE, COMMENTS_FILE]
    assert sum(path.stat().st_size for path in files) < 600_000


def test_missing_demo_files_raise_an_archive_error_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / SUBMISSIONS_FILE).write_bytes(b"")
    monkeypatch.setattr(crowdsift.demo, "demo_data_dir", lambda: tmp_path)
    with pytest.raises(ArchiveError, match=COMMENTS_FILE) as raised:
        demo_dump_files()
    assert SUBMISSIONS_FILE not in str(raised.value)


# -- shape and counts ----------------------------------------------------------------------
def test_counts_are_in_the_promised_ranges(submissions: Dump, comments: Dump) -> None:
    assert 300 <= len(unique_posts(submissions)) <= 400
    assert 3000 <= len(unique_comments(comments)) <= 4000
    subreddits = {post["subreddit"].lower() for post in submissions.records}
    assert subreddits == set().union(*THEME_SUBREDDITS.values())


def test_submission_fields_follow_the_dump_format(submissions: Dump) -> None:
    for post in submissions.records:
        assert ID_RE.match(post["id"]) and post["name"] == f"t3_{post['id']}"
        assert post["permalink"].startswith(f"/r/{post['subreddit']}/comments/{post['id']}/")
        assert post["permalink"].endswith("/")
        assert post["subreddit_id"].startswith("t5_")
        assert START <= created(post) <= END
        assert post["ups"] == post["score"] and 0 < post["upvote_ratio"] <= 1
        for key in ("title", "selftext", "author", "url", "is_self", "over_18", "stickied"):
            assert key in post, key
        assert "link_flair_text" in post and "distinguished" in post


def test_created_utc_comes_as_int_float_and_string_like_real_dumps(
    submissions: Dump, comments: Dump
) -> None:
    for dump in (submissions, comments):
        kinds = Counter(type(record["created_utc"]).__name__ for record in dump.records)
        assert kinds["int"] > 0 and kinds["float"] > 0 and kinds["str"] > 0
    assert any("_meta" in post for post in submissions.records)
    assert any("_meta" in comment for comment in comments.records)


def test_num_comments_matches_the_comments_in_the_dump(submissions: Dump, comments: Dump) -> None:
    per_post = Counter(c["link_id"] for c in unique_comments(comments).values())
    for post in submissions.records:
        assert post["num_comments"] == per_post[f"t3_{post['id']}"], post["id"]


def test_every_comment_hangs_off_its_own_thread(submissions: Dump, comments: Dump) -> None:
    posts = unique_posts(submissions)
    by_id = unique_comments(comments)
    for comment in by_id.values():
        post_id = comment["link_id"].removeprefix("t3_")
        post = posts[post_id]
        assert ID_RE.match(comment["id"]) and comment["name"] == f"t1_{comment['id']}"
        parent = comment["parent_id"]
        if parent.startswith("t1_"):
            above = by_id[parent[3:]]
            assert above["link_id"] == comment["link_id"]
            assert created(comment) >= created(above)
        else:
            assert parent == comment["link_id"]
        assert created(post) < created(comment) <= END
        assert comment["subreddit"] == post["subreddit"]
        assert comment["permalink"] == f"{post['permalink']}{comment['id']}/"


def test_comment_trees_reach_depth_five_and_no_deeper(comments: Dump) -> None:
    by_id = unique_comments(comments)
    depths = Counter(depth(comment, by_id) for comment in by_id.values())
    assert max(depths) == 5 and depths[5] >= 20 and depths[1] < len(by_id) / 2


# -- the cases filters and features need ---------------------------------------------------
def test_every_veto_case_is_present_several_times(submissions: Dump, comments: Dump) -> None:
    posts, notes = submissions.records, comments.records
    assert sum(p["over_18"] for p in posts) >= 3
    assert sum(p["selftext"] == "[deleted]" for p in posts) >= 2
    assert sum(p["selftext"] == "[removed]" for p in posts) >= 2
    assert sum(c["body"] == "[deleted]" for c in notes) >= 3
    assert sum(c["body"] == "[removed]" for c in notes) >= 3
    assert sum(p["author"] == "[deleted]" for p in posts) >= 2
    assert sum(c["author"] == "[deleted]" and c["body"][0] != "[" for c in notes) >= 3
    assert sum(p["author"] == "AutoModerator" for p in posts) >= 3
    assert sum(c["author"] == "AutoModerator" and c["stickied"] for c in notes) >= 3
    assert sum(p.get("promoted") is True for p in posts) >= 2
    assert sum(p.get("is_created_from_ads_ui") is True for p in posts) >= 2
    links = [p for p in posts if not p["is_self"] and "crosspost_parent" not in p]
    assert sum(p["selftext"] == "" and "reddit.com" not in p["url"] for p in links) >= 3
    short = [p for p in posts if p["is_self"] and len(p["selftext"].strip()) < 20]
    assert sum(not p["selftext"].startswith("[") for p in short) >= 3


def test_duplicates_crossposts_and_reposts_are_present(submissions: Dump) -> None:
    ids = Counter(post["id"] for post in submissions.records)
    repeated = [post_id for post_id, count in ids.items() if count > 1]
    assert len(repeated) >= 2
    twins = [p for p in submissions.records if p["id"] == repeated[0]]
    assert twins[0] == twins[1]
    titles: dict[str, set[str]] = {}
    for post in submissions.records:
        titles.setdefault(post["title"], set()).add(post["id"])
    assert sum(len(found) > 1 for found in titles.values()) >= 2
    crossposts = [p for p in submissions.records if "crosspost_parent" in p]
    assert crossposts and all(p["crosspost_parent"][3:] in ids for p in crossposts)


def test_languages_emoji_markdown_and_escapes_are_present(
    submissions: Dump, comments: Dump
) -> None:
    posts = submissions.records
    text = [p["title"] + "\n" + p["selftext"] for p in posts]
    assert sum(bool(re.search("[а-яА-Я]", t)) for t in text) >= 2
    assert sum(bool(re.search("[äöüß]", t)) for t in text) >= 2
    assert sum("¿" in t for t in text) >= 2
    everything = "\n".join(text + [c["body"] for c in comments.records])
    raw = "\n".join(submissions.lines + comments.lines)
    assert sum(ord(char) > 0xFFFF for char in everything) >= 20
    assert re.search(r"\\ud83[c-e]\\ud[c-f][0-9a-f]{2}", raw)
    for marker in ("**", "](http", "```", "\n- ", "\n1. ", "&amp;", "&lt;", "&gt;", "\u200b"):
        assert marker in everything, marker


def test_hostile_sample_text_is_present_verbatim(submissions: Dump) -> None:
    injected = [p for p in submissions.records if "Ignore previous instructions" in p["selftext"]]
    assert len(injected) == 1
    assert any(p["title"].startswith("<img src=x onerror=alert(1)>") for p in submissions.records)


def test_hidden_gems_and_upvoted_dissent_exist(comments: Dump) -> None:
    by_id = unique_comments(comments)
    deep = [c for c in by_id.values() if depth(c, by_id) >= 3]
    specific = [c for c in deep if len(c["body"]) >= 180 and "`" in c["body"]]
    assert len(specific) >= 10
    dissent = [c for c in by_id.values() if c["controversiality"] == 1 and c["score"] >= 60]
    assert len(dissent) >= 10


def test_orchestration_threads_pivot_from_airflow_to_dagster(comments: Dump) -> None:
    by_year: dict[int, Counter[str]] = {}
    for comment in comments.records:
        if comment["subreddit"] not in ("dataengineering", "apacheairflow"):
            continue
        year = datetime.fromtimestamp(created(comment), UTC).year
        body = comment["body"].lower()
        counts = by_year.setdefault(year, Counter())
        counts["dagster"] += "dagster" in body
        counts["airflow"] += "airflow" in body
    share = {y: c["dagster"] / max(1, c["dagster"] + c["airflow"]) for y, c in by_year.items()}
    assert share[2023] < 0.4 < share[2025] and share[2026] > 0.4


# -- example plans -------------------------------------------------------------------------
def test_example_plans_validate_and_name_subreddits_in_the_data(submissions: Dump) -> None:
    present = {post["subreddit"].lower() for post in submissions.records}
    assert {path.name for path in PLANS} >= {
        "demo_plan.json",
        "plan_airflow_dagster.json",
        "plan_power_tools.json",
        "plan_ai_coding.json",
    }
    for path in PLANS:
        plan = SearchPlan.model_validate(json.loads(path.read_text(encoding="utf-8")))
        assert set(plan.subreddits) <= present, path.name


@pytest.mark.parametrize("theme", sorted(THEME_SUBREDDITS))
def test_each_theme_has_a_plan_term_matching_many_posts(theme: str, submissions: Dump) -> None:
    subreddits = THEME_SUBREDDITS[theme]
    texts = [
        (p["title"] + " " + p["selftext"]).lower()
        for p in unique_posts(submissions).values()
        if p["subreddit"].lower() in subreddits
    ]
    plans = [SearchPlan.model_validate_json(path.read_text(encoding="utf-8")) for path in PLANS]
    best = max(
        sum(term.lower() in text for text in texts)
        for plan in plans
        if set(plan.subreddits) & subreddits
        for term in plan.search_terms
    )
    assert best >= 25
