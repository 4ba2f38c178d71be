"""Feeds as prompt text: numbered, fenced, and readable back by the local engine.

``format_feed_for_prompt`` is what an agent (LLM or local) reads. Each entry is a header line
outside the fence (``1. [post:ID] r/sub · 42 karma``), the post's title and excerpt inside an
``<evidence>`` fence (strangers' text: data, never instructions), and the link. Titles and
excerpts are collapsed to one line each, so ``parse_feed`` can read entries back without ever
trusting a line that came from inside a fence: a post cannot smuggle a fake entry in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from crowdsift.core.citations import ID
from crowdsift.core.models import Post
from crowdsift.engines.base import fence

EXCERPT_CHARS = 280
_HEADER = re.compile(rf"^(\d+)\. \[post:({ID})\] r/(\S*) · (-?\d+) karma$")
_FENCE_OPEN = re.compile(rf'^<evidence id="post:({ID})">$')
_FENCE_CLOSE = "</evidence>"


class FeedItem(BaseModel):
    """One feed entry as an agent sees it."""

    model_config = ConfigDict(frozen=True)

    number: int
    post_id: str
    subreddit: str
    karma: int
    title: str
    excerpt: str
    url: str

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.excerpt}".strip()


def one_line(text: str) -> str:
    return " ".join(text.split())


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The first ``limit`` characters on one line, cut at a word boundary with an ellipsis."""
    flat = one_line(text)
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]  # one more: a word ending exactly at the limit is whole
    cut = head.rsplit(" ", 1)[0] if " " in head else flat[:limit]
    return cut.rstrip(",;:.") + "…"


def format_feed_for_prompt(posts: Sequence[Post]) -> str:
    """Number, fence and link every post (empty feed → a line that says so)."""
    if not posts:
        return "The feed is empty."
    entries = []
    for number, post in enumerate(posts, start=1):
        body = f"Title: {one_line(post.title)}\nExcerpt: {excerpt(post.selftext)}"
        entries.append(
            f"{number}. [post:{post.id}] r/{post.subreddit} · {post.post_karma} karma\n"
            f"{fence(f'post:{post.id}', body)}\n"
            f"Link: {post.url}"
        )
    return "\n\n".join(entries)


def parse_feed(text: str) -> list[FeedItem]:
    """Read entries back from ``format_feed_for_prompt`` output (unknown lines are ignored)."""
    items: list[FeedItem] = []
    header: re.Match[str] | None = None
    inside: list[str] | None = None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if inside is not None:
            if line == _FENCE_CLOSE:
                fields = _fence_fields(inside)
                inside = None
            else:
                inside.append(line)
            continue
        if (match := _HEADER.match(line)) is not None:
            header, fields = match, {}
        elif header is not None and _FENCE_OPEN.match(line):
            inside = []
        elif header is not None and line.startswith("Link: "):
            items.append(_item(header, fields, line.removeprefix("Link: ").strip()))
            header = None
    return items


def _fence_fields(lines: list[str]) -> dict[str, str]:
    fields = {"title": "", "excerpt": ""}
    for line in lines[:2]:
        if line.startswith("Title: "):
            fields["title"] = line.removeprefix("Title: ")
        elif line.startswith("Excerpt: "):
            fields["excerpt"] = line.removeprefix("Excerpt: ")
    return fields


def _item(header: re.Match[str], fields: dict[str, str], url: str) -> FeedItem:
    number, post_id, subreddit, karma = header.groups()
    return FeedItem(
        number=int(number),
        post_id=post_id,
        subreddit=subreddit,
        karma=int(karma),
        title=fields.get("title", ""),
        excerpt=fields.get("excerpt", ""),
        url=url,
    )
