"""``scripts/arctic_shift_local.py``: dumps and the bundled subreddit directory it serves.

The dumps here are written by the test (a few project-made records), never real data.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import zstandard

from crowdsift.http.transport import HttpTransport
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.paths import REPO

SCRIPT = REPO / "scripts" / "arctic_shift_local.py"
DIRECTORY = REPO / "scripts" / "arctic_shift_subreddits.json"
MUST_HAVE = ("LocalLLaMA", "buildapc", "techsupport", "homeautomation", "smarthome",
             "pcmasterrace", "linux4noobs", "windows10", "computers", "hardware")  # fmt: skip


@pytest.fixture(scope="module")
def script() -> Iterator[ModuleType]:
    """The script as a module (registered while in use: its dataclass needs that)."""
    spec = importlib.util.spec_from_file_location("arctic_shift_local", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def lines(*records: Any) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


@pytest.fixture
def dumps(tmp_path: Path) -> list[Path]:
    posts = tmp_path / "RS_test.ndjson.zst"
    posts.write_bytes(
        zstandard.ZstdCompressor().compress(
            lines(
                {
                    "id": "p1",
                    "title": "Which GPU for vllm",
                    "selftext": "",
                    "subreddit": "Tiny",
                    "created_utc": "1700000000",
                    "author": "a",
                },
                {"id": "p2", "title": "no subreddit", "created_utc": 1700000001},
                b"{not json",
                b"",
                [1, 2],
            )
        )
    )
    comments = tmp_path / "RC_test.ndjson"
    comments.write_bytes(
        lines(
            {
                "id": "c1",
                "body": "top",
                "link_id": "p1",
                "parent_id": "p1",
                "subreddit": "Tiny",
                "created_utc": 1700000100,
                "score": 5,
            },
            {
                "id": "c2",
                "body": "reply",
                "link_id": "t3_p1",
                "parent_id": "c1",
                "subreddit": "Tiny",
                "created_utc": 1700000200,
            },
            {"id": "x", "kind": "something else"},
        )
    )
    return [posts, comments]


def test_load_dumps_fills_what_the_emulator_needs(script: ModuleType, dumps: list[Path]) -> None:
    loaded = script.load_dumps(dumps)

    (post,) = loaded.posts["Tiny"]
    assert (post["name"], post["permalink"], post["created_utc"]) == (
        "t3_p1",
        "/r/Tiny/comments/p1/",
        1700000000,
    )
    top, reply = loaded.comments["p1"]
    assert (top["link_id"], top["parent_id"], top["name"]) == ("t3_p1", "t3_p1", "t1_c1")
    assert reply["parent_id"] == "t1_c1"
    assert reply["permalink"] == "/r/Tiny/comments/p1/_/c2/"
    assert loaded.skipped == {
        "post_without_id_subreddit_or_date": 1,
        "bad_json": 1,
        "not_an_object": 1,
        "neither_post_nor_comment": 1,
    }


def test_dumped_subreddits_join_the_directory_and_everything_is_served(
    script: ModuleType, dumps: list[Path]
) -> None:
    loaded = script.load_dumps(dumps)
    directory, added = script.directory_with_dumps(script.read_directory(DIRECTORY), loaded)
    assert added == 1
    assert directory[-1] == {
        "display_name": "Tiny",
        "title": "",
        "public_description": "",
        "subscribers": 0,
        "over18": False,
    }

    server = ArcticShiftServer()
    for subreddit, posts in loaded.posts.items():
        server.add_posts(subreddit, posts)
    for post_id, comments in loaded.comments.items():
        server.add_comments(post_id, comments)
    server.add_subreddits(directory)
    with server, httpx.Client(base_url=server.base_url) as client:
        source = ArcticShiftSource(HttpTransport(client, source="arctic-shift"))
        assert [s["display_name"] for s in source.search_subreddits(prefix="ti")] == ["Tiny"]
        page = source.search_subreddit("tiny", "gpu")
        assert [p["id"] for p in page.posts] == ["p1"]
        tree = source.fetch_comment_tree("p1")
    assert [(c["id"], c["parent_id"]) for c in tree] == [("c1", "t3_p1"), ("c2", "t1_c1")]


def test_bundled_directory_is_sorted_safe_and_complete() -> None:
    directory = json.loads(DIRECTORY.read_text(encoding="utf-8"))
    names = [item["display_name"] for item in directory]

    assert names == sorted(names, key=str.lower)
    assert len({n.lower() for n in names}) == len(names)
    assert 250 <= len(names) <= 350
    for item in directory:
        assert set(item) == {
            "display_name", "title", "public_description", "subscribers", "over18", "created_utc"
        }  # fmt: skip
        assert item["over18"] is False
        assert item["title"] and item["public_description"].endswith(".")
        assert isinstance(item["subscribers"], int) and item["subscribers"] > 0
        assert isinstance(item["created_utc"], int) and item["created_utc"] > 1_136_073_600
    by_name = {item["display_name"]: item for item in directory}
    for name in MUST_HAVE:
        assert len(by_name[name]["public_description"]) > 80, name
