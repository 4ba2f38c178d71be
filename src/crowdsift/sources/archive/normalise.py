"""Era normalisation of stored raw dicts, applied when they are read back for a source.

Downstream code (the filtering layer) reads the same keys from every source, so a dict from
a 2008 dump must look like one from today's API: prefixed ``name``/``link_id``/``parent_id``,
integer ``created_utc``/``score``/``num_comments``, string texts, a relative ``permalink``
(built from subreddit, id and a slug of the title when an old era lacks it), and no lone
surrogates. Everything else, including unknown fields and ``_meta``, is handed back as stored.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from crowdsift.sources.archive.parse import (
    RawDict,
    bare_id,
    clean_text,
    created_time,
    int_field,
    parent_fullname,
)

_SLUG_JUNK = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """Reddit-style URL slug of a title: lowercase ascii words joined by ``_``, ≤ 50 chars."""
    slug = _SLUG_JUNK.sub("_", title.lower())[:50].strip("_")
    return slug or "_"


def _relative_permalink(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith(("http://", "https://")):
        text = urlsplit(text).path
    return text if text.startswith("/r/") else None


def normalise_post(data: RawDict) -> RawDict:
    """A stored t3 dict made uniform across eras (in place, and returned)."""
    _clean_strings(data)
    post_id = bare_id(data.get("id"))
    raw_title = data.get("title")
    title = raw_title if isinstance(raw_title, str) else ""
    data["id"] = post_id
    data["name"] = f"t3_{post_id}"
    data["title"] = title
    data["selftext"] = data.get("selftext") if isinstance(data.get("selftext"), str) else ""
    data["created_utc"] = created_time(data)
    data["score"] = int_field(data, "score")
    data["num_comments"] = int_field(data, "num_comments")
    permalink = _relative_permalink(data.get("permalink"))
    if permalink is None:
        permalink = f"/r/{data.get('subreddit', '')}/comments/{post_id}/{slugify(title)}/"
    data["permalink"] = permalink
    return data


def normalise_comment(data: RawDict) -> RawDict:
    """A stored t1 dict made uniform across eras (in place, and returned)."""
    _clean_strings(data)
    comment_id = bare_id(data.get("id"))
    link = bare_id(data.get("link_id"))
    data["id"] = comment_id
    data["name"] = f"t1_{comment_id}"
    data["link_id"] = f"t3_{link}"
    data["parent_id"] = parent_fullname(data.get("parent_id"), link)
    data["body"] = data.get("body") if isinstance(data.get("body"), str) else ""
    data["created_utc"] = created_time(data)
    data["score"] = int_field(data, "score")
    permalink = _relative_permalink(data.get("permalink"))
    if permalink is None:
        permalink = f"/r/{data.get('subreddit', '')}/comments/{link}/_/{comment_id}/"
    data["permalink"] = permalink
    return data


def _clean_strings(node: Any) -> Any:
    """Replace lone surrogates everywhere inside a decoded JSON value (dicts/lists in place)."""
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str | dict | list):
                node[key] = _clean_strings(value)
    elif isinstance(node, list):
        node[:] = [_clean_strings(value) for value in node]
    return node
