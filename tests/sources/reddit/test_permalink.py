"""Every Post.url is the canonical public permalink, whatever the source gave us."""

from __future__ import annotations

import pytest

from crowdsift.sources.reddit.permalink import (
    comment_permalink,
    post_permalink,
    slugify_title,
    strip_fullname,
)
from crowdsift.testing.factories import raw_post

CANONICAL = "https://www.reddit.com/r/gadgets/comments/abc123/plaud_note_review/"


@pytest.mark.parametrize(
    "permalink",
    [
        "/r/gadgets/comments/abc123/plaud_note_review/",
        "/r/gadgets/comments/abc123/plaud_note_review",
        "https://oauth.reddit.com/r/gadgets/comments/abc123/plaud_note_review/",
        "https://old.reddit.com/r/gadgets/comments/abc123/plaud_note_review/?utm_source=share",
        "http://127.0.0.1:8123/r/gadgets/comments/abc123/plaud_note_review/?share_id=x#c",
    ],
)
def test_permalink_is_canonical_whatever_the_host_or_tracking(permalink: str) -> None:
    assert post_permalink(raw_post(permalink=permalink)) == CANONICAL


def test_missing_or_foreign_permalink_is_rebuilt_from_fields() -> None:
    post = raw_post(title="Plaud Note: review!", permalink=None)
    assert post_permalink(post) == CANONICAL
    elsewhere = raw_post(title="Plaud Note review", permalink="https://example.com/whatever")
    assert post_permalink(elsewhere) == CANONICAL
    other_id = raw_post(title="Plaud Note review", permalink="/r/gadgets/comments/zzz999/x/")
    assert post_permalink(other_id) == CANONICAL


def test_permalink_without_slug_gets_one() -> None:
    post = raw_post(title="Plaud note review", permalink="/r/gadgets/comments/abc123/")
    assert post_permalink(post) == CANONICAL


def test_permalink_needs_id_and_subreddit() -> None:
    with pytest.raises(ValueError, match="id and a subreddit"):
        post_permalink({"title": "x"})


def test_slugify_title() -> None:
    assert slugify_title("Café & Crème: ¿qué?") == "cafe_creme_que"
    assert slugify_title("Привет") == "post"
    long = slugify_title("word " * 30)
    assert len(long) <= 50 and not long.endswith("_")


def test_fullnames_and_comment_permalinks() -> None:
    assert strip_fullname("t3_abc") == "abc"
    assert strip_fullname("abc") == "abc"
    assert comment_permalink(CANONICAL, "t1_xyz") == CANONICAL + "xyz/"
