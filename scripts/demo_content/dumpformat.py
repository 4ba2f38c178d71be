"""The dump format: Pushshift / Arctic Shift submission (RS) and comment (RC) records.

Turns the generator's ``PostSpec``/``Node`` trees into the dicts real dumps hold, with Reddit's
quirks kept on purpose (HTML-escaped text, ids that grow with time, mixed ``created_utc``
types), and serialises them to one deterministic zstd frame.
"""

from __future__ import annotations

import calendar
import html
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import zstandard

from demo_content.rng import Rng
from demo_content.threads import Node

START = calendar.timegm((2023, 1, 1, 0, 0, 0))
END = calendar.timegm((2026, 10, 31, 23, 59, 59))
LAST_POST = END - 10 * 86400
POST_ID_BASE, POST_ID_RATE = int("10a0000", 36), 12
COMMENT_ID_BASE, COMMENT_ID_RATE = int("j0a0000", 36), 60

SUBREDDIT_IDS = {
    "HomeImprovement": "t5_2qhwy",
    "Tools": "t5_2qnn4",
    "DIY": "t5_2qh7d",
    "ChatGPTCoding": "t5_7v9x2m",
    "LocalLLaMA": "t5_81eyvm",
    "Rag": "t5_9k2p1c",
    "gadgets": "t5_2qgzt",
    "productivity": "t5_2qhul",
    "dataengineering": "t5_36en4",
    "apacheairflow": "t5_3kq7vz",
}


@dataclass
class PostSpec:
    """A submission before ids are handed out; ``nodes`` is its comment tree."""

    key: str
    kind: str
    subreddit: str
    title: str
    selftext: str
    author: str
    created: int
    score: int
    flair: str | None
    nodes: list[Node]
    fields: dict[str, Any] = field(default_factory=dict)
    post_id: str = ""
    clone_of: PostSpec | None = None


def base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


def assign_ids(times: list[int], base: int, rate: int, rng: Rng) -> list[str]:
    """Reddit ids grow with time; ours do too, with jitter, and never collide."""
    ids, last = [], 0
    for created in times:
        value = max(base + (created - START) * rate + rng.below(rate), last + 1)
        ids.append(base36(value))
        last = value
    return ids


def slugify(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > 50:
            break
        slug = f"{slug}_{word}" if slug else word
    return slug or "_"


def escape(text: str) -> str:
    """Reddit's JSON carries &, < and > HTML-escaped in titles and bodies; so do we."""
    return html.escape(text, quote=False)


def comment_times(post: PostSpec) -> list[int]:
    times: list[int] = []
    for node in post.nodes:
        after = post.created if node.parent is None else times[node.parent]
        room = max(2, (END - after) // 2)
        times.append(after + max(1, min(node.delay, room)))
    return times


def post_record(post: PostSpec, comment_count: int) -> dict[str, Any]:
    slug = slugify(post.title)
    permalink = f"/r/{post.subreddit}/comments/{post.post_id}/{slug}/"
    fields = dict(post.fields)
    is_self = bool(fields.pop("is_self", True))
    url = str(fields.pop("url", f"https://www.reddit.com{permalink}"))
    record: dict[str, Any] = {
        "author": post.author,
        "created_utc": post.created,
        "distinguished": None,
        "domain": f"self.{post.subreddit}" if is_self else urlsplit(url).hostname,
        "id": post.post_id,
        "is_self": is_self,
        "link_flair_text": post.flair,
        "name": f"t3_{post.post_id}",
        "num_comments": comment_count,
        "over_18": False,
        "permalink": permalink,
        "retrieved_on": post.created + 3600 + (post.created % 90000),
        "score": post.score,
        "selftext": escape(post.selftext),
        "stickied": False,
        "subreddit": post.subreddit,
        "subreddit_id": SUBREDDIT_IDS[post.subreddit],
        "title": post.title if post.kind == "xss" else escape(post.title),
        "ups": post.score,
        "upvote_ratio": round(0.72 + (post.created % 27) / 100, 2),
        "url": url,
    }
    if post.created >= calendar.timegm((2024, 1, 1, 0, 0, 0)):
        record["is_created_from_ads_ui"] = False
    if post.clone_of is not None:
        original = post.clone_of
        parent_link = f"/r/{original.subreddit}/comments/{original.post_id}/{slug}/"
        record["crosspost_parent"] = f"t3_{original.post_id}"
        record["url"] = parent_link
        record["domain"] = f"self.{original.subreddit}"
    record.update(fields)
    return record


def comment_record(
    post: PostSpec, node: Node, comment_id: str, parent_id: str, created: int
) -> dict[str, Any]:
    slug = slugify(post.title)
    record: dict[str, Any] = {
        "author": node.author,
        "body": escape(node.body),
        "controversiality": 1 if node.controversial else 0,
        "created_utc": created,
        "distinguished": node.distinguished,
        "id": comment_id,
        "is_submitter": node.author == post.author and node.author != "[deleted]",
        "link_id": f"t3_{post.post_id}",
        "name": f"t1_{comment_id}",
        "parent_id": parent_id,
        "permalink": f"/r/{post.subreddit}/comments/{post.post_id}/{slug}/{comment_id}/",
        "score": node.score,
        "stickied": node.stickied,
        "subreddit": post.subreddit,
        "subreddit_id": SUBREDDIT_IDS[post.subreddit],
    }
    if node.deleted_later:
        record["_meta"] = {"removal_type": "deleted", "was_deleted_later": True}
    return record


def vary_created(records: list[dict[str, Any]], float_every: int, str_every: int) -> None:
    """Older dumps wrote created_utc as float or string; a few of ours do too."""
    for index, record in enumerate(records):
        if index % float_every == 7:
            record["created_utc"] = float(record["created_utc"])
        elif index % str_every == 11:
            record["created_utc"] = str(record["created_utc"])


def encode(records: list[dict[str, Any]]) -> bytes:
    """NDJSON, compact; every other line holding an astral emoji is written \\u-escaped."""
    lines, toggle = [], False
    for record in records:
        text = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        if any(ord(char) > 0xFFFF for char in text):
            toggle = not toggle
            if toggle:
                text = json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
        lines.append(text)
    payload = "\n".join(lines) + "\n"
    compressor = zstandard.ZstdCompressor(level=19, write_checksum=True, write_content_size=True)
    return bytes(compressor.compress(payload.encode("utf-8")))
