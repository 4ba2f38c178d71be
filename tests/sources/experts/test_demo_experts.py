"""The bundled demo experts: reproducible exports that import cleanly and stay isolated."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crowdsift.core.errors import ArchiveError
from crowdsift.sources.experts.db import SqlExpertStore
from crowdsift.sources.experts.demo import demo_experts_dir, demo_manifest, ensure_demo_experts
from crowdsift.sources.experts.models import Expert, ExpertComment, ExpertPost, PostLink
from tests.support.paths import REPO

SCRIPT = REPO / "scripts" / "build_demo_experts.py"
DEMO_IDS = ["homelab_field_notes", "dannye_bez_boli", "desk_gear_weekly"]
NOW = datetime(2026, 11, 15, tzinfo=UTC)  # "today" for the recent-only window of the demo


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


class CountingStore(SqlExpertStore):
    """Counts imports, so a test can tell a skipped import from a repeated one."""

    writes = 0

    def write_import(
        self,
        expert: Expert,
        posts: Sequence[ExpertPost],
        links: Sequence[PostLink],
        comments: Sequence[ExpertComment],
        *,
        digest: str | None = None,
    ) -> None:
        self.writes += 1
        super().write_import(expert, posts, links, comments, digest=digest)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingStore]:
    opened = CountingStore(f"sqlite:///{tmp_path_factory.mktemp('demo') / 'experts.sqlite'}")
    assert ensure_demo_experts(opened) == DEMO_IDS
    yield opened
    opened.close()


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((demo_experts_dir() / name).read_text("utf-8"))
    return document


# --- reproducibility ---------------------------------------------------------------------
def test_check_passes_on_committed_files_and_fails_on_changed_ones(tmp_path: Path) -> None:
    assert run_script("--check").returncode == 0, "run: python scripts/build_demo_experts.py"
    shutil.copytree(demo_experts_dir(), tmp_path / "experts")
    stale = tmp_path / "experts" / "dannye_bez_boli" / "discussion.json"
    stale.write_bytes(stale.read_bytes().replace("Спасибо".encode(), "Спасибо!".encode(), 1))
    result = run_script("--check", "--out-dir", str(tmp_path / "experts"))
    assert result.returncode == 1
    assert "dannye_bez_boli/discussion.json" in result.stderr
    assert "result.json" not in result.stderr


def test_files_are_package_data_next_to_the_reddit_demo() -> None:
    """Hatch ships every file under src/crowdsift that git does not ignore (as RS_demo)."""
    base = demo_experts_dir()
    assert base.parent.name == "demo" and (base.parent / "__init__.py").is_file()
    names = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
    assert names == [
        "README.md",
        "dannye_bez_boli/discussion.json",
        "dannye_bez_boli/result.json",
        "desk_gear_weekly/discussion.json",
        "desk_gear_weekly/result.json",
        "homelab_field_notes/discussion.json",
        "homelab_field_notes/result.json",
        "manifest.json",
    ]
    assert sum((base / name).stat().st_size for name in names) < 700_000
    ignored = subprocess.run(
        ["git", "check-ignore", *names], cwd=base, capture_output=True, text=True, check=False
    )
    if ignored.returncode != 128:  # 128: not a git checkout (an installed package)
        assert ignored.stdout == ""


# --- the exports look like Telegram Desktop's -------------------------------------------------
@pytest.mark.parametrize("channel", DEMO_IDS)
def test_exports_have_the_shapes_the_importer_must_handle(channel: str) -> None:
    result = load(f"{channel}/result.json")
    group = load(f"{channel}/discussion.json")
    assert (result["type"], group["type"]) == ("public_channel", "public_supergroup")
    posts = [m for m in result["messages"] if m["type"] == "message"]
    assert 40 <= len(posts) <= 80
    assert any(m["type"] == "service" for m in result["messages"])
    assert any(isinstance(m["text"], list) for m in posts)  # entity-list texts
    assert any("reply_to_message_id" in m for m in posts)
    assert any(m.get("forwarded_from") == result["name"] for m in posts)  # own forwards
    assert any(m.get("forwarded_from") not in (None, result["name"]) for m in posts)
    assert any(m["text"] == "" and "photo" in m for m in posts)
    dates = [datetime.fromtimestamp(int(m["date_unixtime"]), UTC) for m in posts]
    assert dates == sorted(dates)
    assert timedelta(days=500) < dates[-1] - dates[0] < timedelta(days=600)  # ~18 months
    assert NOW - timedelta(days=30) < dates[-1] < NOW
    assert sum(d >= NOW - timedelta(days=90) for d in dates) >= 5  # recent-only keeps some
    ids = [m["id"] for m in result["messages"]]
    assert ids == sorted(set(ids))
    copies = [m for m in group["messages"] if m.get("forwarded_from") == result["name"]]
    assert len(copies) == len(posts)


def test_one_channel_is_russian_and_topics_overlap_the_reddit_demo() -> None:
    texts = {
        channel: " ".join(json.dumps(m["text"], ensure_ascii=False)
                          for m in load(f"{channel}/result.json")["messages"])
        for channel in DEMO_IDS
    }  # fmt: skip
    assert sum(ch.isalpha() and "а" <= ch.lower() <= "я" for ch in texts["dannye_bez_boli"]) > 5000
    for channel in DEMO_IDS:
        assert "Plaud" in texts[channel]
        assert "Cursor" in texts[channel] or "Copilot" in texts[channel]
    assert all("Airflow" in texts[c] and "Dagster" in texts[c] for c in DEMO_IDS[:2])
    assert all("hammer drill" in texts[c] for c in ("homelab_field_notes", "desk_gear_weekly"))


# --- imported ----------------------------------------------------------------------------
def test_demo_imports_with_links_comments_and_experts(store: CountingStore) -> None:
    summaries = {s.expert_id: s for s in store.experts()}
    assert sorted(summaries) == sorted(DEMO_IDS)
    assert summaries["dannye_bez_boli"].language == "ru"
    assert summaries["homelab_field_notes"].language == "en"
    for expert_id in DEMO_IDS:
        posts = store.posts(expert_id)
        assert len(posts) >= 40 and summaries[expert_id].posts == len(posts)
        links = store.links(expert_id, [p.post_id for p in posts])
        assert {k.kind for k in links} == {"reply", "forward", "mention"}
        comments = store.all_comments(expert_id)
        by_expert = [c for c in comments if c.author_is_expert]
        assert len(by_expert) >= 15 and len(comments) - len(by_expert) >= 50
        assert {c.post_id for c in comments} <= {p.post_id for p in posts}
        assert any(c.reply_to_comment_id for c in comments)  # threads, not just flat lists
        assert len(store.posts(expert_id, since=NOW - timedelta(days=90))) >= 5


def test_demo_import_is_skipped_when_unchanged(store: CountingStore) -> None:
    before = store.writes
    assert ensure_demo_experts(store) == DEMO_IDS
    assert store.writes == before  # one hash and one query per expert, no import


def test_demo_experts_are_isolated(store: CountingStore) -> None:
    """Message ids overlap across the demo channels; reads never mix them."""
    post_ids = {e: {p.post_id for p in store.posts(e)} for e in DEMO_IDS}
    assert post_ids["homelab_field_notes"] & post_ids["desk_gear_weekly"]  # overlap exists
    for expert_id in DEMO_IDS:
        url = f"https://t.me/{expert_id}/"
        assert all(p.url.startswith(url) for p in store.posts_by_id(expert_id, list(range(200))))
        assert {c.expert_id for c in store.comments(expert_id, list(range(200)))} == {expert_id}


def test_changed_demo_files_are_reimported(tmp_path: Path) -> None:
    shutil.copytree(demo_experts_dir(), tmp_path / "experts")
    store = CountingStore(f"sqlite:///{tmp_path / 'experts.sqlite'}")
    try:
        ensure_demo_experts(store, directory=tmp_path / "experts")
        assert store.writes == 3
        changed = tmp_path / "experts" / "desk_gear_weekly" / "result.json"
        changed.write_bytes(changed.read_bytes().replace(b"Plaud Note", b"Plaud NOTE"))
        ensure_demo_experts(store, directory=tmp_path / "experts")
        assert store.writes == 4
        assert any("Plaud NOTE" in p.text for p in store.posts("desk_gear_weekly"))
    finally:
        store.close()


def test_missing_demo_files_are_an_archive_error(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match=r"build_demo_experts\.py"):
        demo_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text(
        json.dumps({"experts": [{"channel": "x_chan", "result": "a", "discussion": "b"}]})
    )
    store = SqlExpertStore(f"sqlite:///{tmp_path / 'e.sqlite'}")
    try:
        with pytest.raises(ArchiveError, match="unreadable"):
            ensure_demo_experts(store, directory=tmp_path)
    finally:
        store.close()
