"""Canonical Reddit permalinks: every Post.url is ``https://www.reddit.com/r/<sub>/comments/<id>/<slug>/``.

Whatever the source or API base URL (oauth.reddit.com, old.reddit.com, a local test server, an
archive record without a permalink), the URL a reader gets is the public permalink with no
query string or fragment, so no tracking parameter survives.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from crowdsift.core.models import SUBREDDIT_NAME
from crowdsift.core.source import RawThing

REDDIT_ORIGIN = "https://www.reddit.com"
_PATH = re.compile(
    rf"^/r/(?P<sub>{SUBREDDIT_NAME})/comments/(?P<id>[A-Za-z0-9]+)(?:/(?P<slug>[^/?#]*))?"
    r"(?:/(?P<comment>[A-Za-z0-9]+))?/?$"
)
_SLUG_CHARS = re.compile(r"[^a-z0-9]+")
_FULLNAME = re.compile(r"t\d_")


def slugify_title(title: str, *, max_length: int = 50) -> str:
    """Reddit's URL slug: lower-case ASCII words joined by underscores, cut at a word."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = _SLUG_CHARS.sub("_", ascii_title.lower()).strip("_")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("_", 1)[0] or slug[:max_length]
    return slug or "post"


def strip_fullname(value: str) -> str:
    """'t3_abc' → 'abc'; ids without a kind prefix come back unchanged."""
    return value.split("_", 1)[1] if _FULLNAME.match(value) else value


def post_permalink(raw: RawThing) -> str:
    """The canonical permalink of a raw submission, built from its fields if it has none."""
    post_id = strip_fullname(str(raw.get("id") or raw.get("name") or ""))
    subreddit = str(raw.get("subreddit") or "").strip()
    title = str(raw.get("title") or "")
    permalink = raw.get("permalink")
    if isinstance(permalink, str) and permalink:
        # A bare path (what Reddit and the dumps store) needs no URL parsing.
        bare = permalink[:1] == "/" and "?" not in permalink and "#" not in permalink
        match = _PATH.match(permalink if bare else urlsplit(permalink).path or permalink)
        if match and (not post_id or match["id"].lower() == post_id.lower()):
            slug = match["slug"] or slugify_title(title)
            return f"{REDDIT_ORIGIN}/r/{match['sub']}/comments/{match['id']}/{slug}/"
    if not post_id or not subreddit:
        raise ValueError("a submission needs an id and a subreddit to have a permalink")
    return f"{REDDIT_ORIGIN}/r/{subreddit}/comments/{post_id}/{slugify_title(title)}/"


def comment_permalink(post_url: str, comment_id: str) -> str:
    """The permalink of one comment under its post's canonical permalink."""
    return f"{post_url.rstrip('/')}/{strip_fullname(comment_id)}/"
