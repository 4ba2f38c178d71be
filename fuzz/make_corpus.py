"""Write the seed corpus of every fuzz target into ``fuzz/corpus/<target>/``.

Seeds come only from crowdsift's own bundled sample data (``crowdsift/demo``: the demo archive
and the demo expert exports, all written by the project) and the builders in
``tests.support``; nothing third-party. Each seed is small (a few KB) and valid, so the
fuzzer starts from inputs that reach deep into each parser. Re-run after changing a target's
input layout:

    python fuzz/make_corpus.py
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import zstandard

import repo_root  # noqa: F401 - puts the repository root (tests.support) on sys.path
from harness import AMAZON_TOKEN_BODY, VALID_REPLIES, reply_tasks
from tests.support.amazon_server import product
from tests.support.reddit_listings import CommentTree, complete_post, listing

ROOT = Path(__file__).resolve().parent
DEEP = b"[" * 1100 + b"]" * 1100
"""Nesting past CPython's recursion limit: each corpus keeps one, as a regression seed (the
JSON decoder raised RecursionError through every parser until issue 9's fixes)."""
LONG_NUMBER = b"9" * 4400
"""Past Python's 4300-digit limit: the decoder raises a plain ValueError, not JSONDecodeError."""
DEMO = ROOT.parent / "src" / "crowdsift" / "demo"
EXPERT = DEMO / "experts" / "desk_gear_weekly"


def _dump(name: str) -> Iterator[dict[str, Any]]:
    reader = zstandard.ZstdDecompressor().stream_reader((DEMO / "data" / name).open("rb"))
    with reader:
        for line in reader.read().splitlines():
            yield json.loads(line)


def _demo_thread() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two r/gadgets demo posts and comments of the first, whose id becomes abc123."""
    posts = [
        p
        for p in _dump("RS_demo.ndjson.zst")
        if p["subreddit"].lower() == "gadgets" and "plaud" in p["title"].lower()
    ][:2]
    first = posts[0]["id"]
    comments = [c for c in _dump("RC_demo.ndjson.zst") if c["link_id"] == f"t3_{first}"][:6]
    renamed = json.loads(json.dumps([posts, comments]).replace(first, "abc123"))
    return renamed[0], renamed[1]


def _ndjson(records: list[Any]) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode() + b"\n"


def _j(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def dump_lines(posts: list[Any], comments: list[Any]) -> dict[str, bytes]:
    things = [{"kind": "t3", "data": p} for p in posts]
    return {
        "ndjson": b"\0" + _ndjson(posts) + b'{"id": "bad"\n[1, 2]\n',
        "api_listing": b"\1" + _j(listing(things)),
        "zstd_comments": b"\2" + _ndjson(comments),
        "comments_array": b"\4" + _j([listing(things[:1]), listing(_nested(comments))]),
        "gzip": b"\5" + _ndjson(posts[:1] + comments[:2]),
        "hostile_lines": b"\0" + _ndjson(posts[:1]) + DEEP + b"\n" + LONG_NUMBER + b"\n",
        "deep_api_json": b"\1" + DEEP,
    }


def _nested(comments: list[Any]) -> list[Any]:
    rendered = CommentTree("abc123", comments).render(limit=100, depth=10)
    children: list[Any] = rendered["data"]["children"]
    return children


def listings(posts: list[Any], comments: list[Any]) -> dict[str, bytes]:
    complete = [
        complete_post({**p, "selftext": p["selftext"] + " plaud"}, "gadgets") for p in posts
    ]
    search = _j(listing({"kind": "t3", "data": p} for p in complete))
    thread = _j([listing([{"kind": "t3", "data": complete[0]}]), listing(_nested(comments))])
    youtube_search = {
        "items": [
            {
                "id": {"kind": "youtube#video", "videoId": "dQw4w9WgXcQ"},
                "snippet": {
                    "title": "Plaud Note &amp; NotePin review",
                    "description": "Three months of meetings",
                    "channelTitle": "Desk Gear",
                    "publishedAt": "2025-06-01T08:00:00Z",
                },
            }
        ]
    }
    videos = {"items": [{"id": "dQw4w9WgXcQ", "statistics": {"viewCount": "1200"}}]}
    threads = {
        "items": [
            {
                "id": "Ugz1",
                "snippet": {
                    "topLevelComment": {
                        "id": "Ugz1",
                        "snippet": {"textDisplay": "Battery lasts a week", "likeCount": 3},
                    }
                },
            }
        ]
    }
    amazon = {"searchResult": {"items": [product("B0ABCDEFGH", "Plaud Note", rating=4.5)]}}
    return {
        "reddit_fetch": b"\0" + search + b"\0" + thread,
        "arctic_fetch": b"\1" + _j({"data": complete}) + b"\0" + _j({"data": comments}),
        "reddit_tree": b"\2" + thread,
        "arctic_tree": b"\3" + _j({"data": comments}),
        "youtube": b"\4" + _j(youtube_search) + b"\0" + _j(videos) + b"\0" + _j(threads),
        "amazon": b"\5" + _j(amazon) + b"\0" + AMAZON_TOKEN_BODY,
        "deep_search": b"\0" + DEEP + b"\0" + thread,
        "long_number_token": b"\5" + _j(amazon) + b'\0{"expires_in": ' + LONG_NUMBER + b"}",
        "huge_expiry": b"\5"
        + _j(amazon)
        + b'\0{"access_token": "t", "expires_in": 1'
        + b"0" * 400
        + b"}",
    }


def comment_trees(comments: list[Any]) -> dict[str, bytes]:
    return {
        "flat": bytes([50, 5, 0]) + _j(comments),
        "nested": bytes([50, 5, 0]) + _j(_nested(comments)),
        "deep": bytes([10, 3, 40]) + _j(_nested(comments[:2])),
    }


def telegram() -> dict[str, bytes]:
    channel = json.loads((EXPERT / "result.json").read_text(encoding="utf-8"))
    group = json.loads((EXPERT / "discussion.json").read_text(encoding="utf-8"))
    channel["messages"] = channel["messages"][:6]
    group["messages"] = group["messages"][:12]
    return {
        "channel_and_group": _j(channel) + b"\0" + _j(group),
        "channel_only": _j(channel),
        "deep_group": _j(channel) + b"\0" + DEEP,
    }


def plan_files() -> dict[str, bytes]:
    examples = ROOT.parent / "examples"
    return {
        "demo_plan": (examples / "demo_plan.json").read_bytes(),
        "power_tools": (examples / "plan_power_tools.json").read_bytes(),
        "deep": b'{"search_terms": ' + DEEP + b"}",
        "long_number": b'{"search_terms": ["a"], "subreddits": ["gadgets"], "n": '
        + LONG_NUMBER
        + b"}",
    }


def llm_replies() -> dict[str, bytes]:
    names = sorted(reply_tasks())
    seeds = {}
    for index, name in enumerate(names):
        reply = json.dumps(VALID_REPLIES[name], ensure_ascii=False)
        text = f"```json\n{reply}\n```" if index % 2 else reply
        seeds[name] = bytes([index]) + text.encode()
        if name == "RerankTask":
            seeds["deep"] = bytes([index]) + b'{"scores": ' + DEEP + b"}"
            seeds["long_number"] = bytes([index]) + b'```json\n{"scores": [' + LONG_NUMBER + b"]}"
    return seeds


def main() -> None:
    posts, comments = _demo_thread()
    corpora = {
        "dump_lines": dump_lines(posts, comments),
        "listings": listings(posts, comments),
        "comment_trees": comment_trees(comments),
        "telegram": telegram(),
        "plan_files": plan_files(),
        "llm_replies": llm_replies(),
    }
    for target, seeds in corpora.items():
        folder = ROOT / "corpus" / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in seeds.items():
            (folder / name).write_bytes(content)


if __name__ == "__main__":
    main()
