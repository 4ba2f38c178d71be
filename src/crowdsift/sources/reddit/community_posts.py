"""A community's recent posts as the subreddit directory keeps them (pure): the words they use
and their best titles, cleaned and counted; what ``SubredditInfo.with_profile`` stores and
``directory_match`` compares a question with.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from crowdsift.core.words import STOPWORDS, tokenize

RECENT_POSTS = 100
"""Posts read per community: one request of the largest page Arctic Shift serves."""
RECENT_TITLES = 40
"""Titles kept per profile: the best-scored of the posts read (about 3 KB an entry)."""
TITLE_CHARS = 120
"""A kept title is cut to this (at a word): a title's opening says what the thread is about."""
RECENT_TERMS = 150
"""Words kept per profile: those the most posts read use (title or body), each in at least
``MIN_TERM_POSTS`` (about 2 KB an entry). Bodies say what titles leave out ("VRAM" is in one
r/LocalLLaMA title of a hundred and in 17 posts); on threads held out from the profiles, 150
matched as well as 300 or 500 and better than 100."""
MIN_TERM_POSTS = 2
"""A word in one post only is as likely an accident as a topic; twice is a habit."""


def summarise_posts(posts: Sequence[Mapping[str, Any]]) -> tuple[list[str], dict[str, int]]:
    """A community's recent ``posts`` as a profile keeps them: up to ``RECENT_TITLES`` titles,
    best-scored first (then most comments, then newest), each cut to ``TITLE_CHARS``, and up to
    ``RECENT_TERMS`` words (``profile_words``) with how many posts use them, the most used,
    each in at least ``MIN_TERM_POSTS``. Posts a moderator removed are read but not described:
    they are what the community is not about."""
    kept = [p for p in posts if _describes(p)]
    ranked = sorted(
        kept,
        key=lambda p: (
            -as_count(p.get("score")),
            -as_count(p.get("num_comments")),
            -as_count(p.get("created_utc")),
        ),
    )
    titles: dict[str, str] = {}
    for post in ranked:
        title = _cut(clean_field(post.get("title")), TITLE_CHARS)
        titles.setdefault(title.lower(), title)
    used = Counter[str]()
    for post in kept:
        used.update(set(profile_words(_post_text(post))))
    terms = sorted(
        ((w, n) for w, n in used.items() if n >= MIN_TERM_POSTS), key=lambda t: (-t[1], t[0])
    )
    return list(titles.values())[:RECENT_TITLES], dict(terms[:RECENT_TERMS])


def clean_field(value: object) -> str:
    """A string field with its whitespace collapsed; "" for anything else."""
    return " ".join(value.split()) if isinstance(value, str) else ""


def as_count(value: object) -> int:
    """Subscribers as Reddit sends them (int, float, numeric string); unknown is 0."""
    if isinstance(value, bool):
        return 0
    try:
        number = float(value) if isinstance(value, int | float | str) else math.nan
    except ValueError:
        return 0
    return int(number) if math.isfinite(number) and number > 0 else 0


_LINK_OR_ENTITY = re.compile(r"https?://\S+|&#?\w+;")


def _post_text(post: Mapping[str, Any]) -> str:
    """Title and body, without links and HTML entities (``&amp;``, ``&#x200B;``)."""
    body = post.get("selftext")
    text = f"{clean_field(post.get('title'))} {body if isinstance(body, str) else ''}"
    return _LINK_OR_ENTITY.sub(" ", text)


def _describes(post: Mapping[str, Any]) -> bool:
    title = post.get("title")
    if not isinstance(title, str) or not title.strip():
        return False
    return not post.get("removed_by_category") and title.strip() not in ("[deleted]", "[removed]")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:-") + "…"


# --- words -----------------------------------------------------------------------------------

_CONTRACTION_TEXT = "aren couldn didn doesn don hadn hasn haven isn shouldn wasn weren won wouldn"
_CONTRACTIONS = frozenset(_CONTRACTION_TEXT.split())
"""What "doesn't" leaves of itself once the apostrophe splits it."""

_HYPHENATED = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


def profile_words(text: str) -> list[str]:
    """The words profiles and questions compare by: lower-cased word tokens
    (``core.words.tokenize``: "GLM 4.5" → glm, 4, 5) without stop words (``STOPWORDS`` and
    the stubs of "doesn't"), kept when 3+ characters (numbers too: "5070", "1080") or two
    mixing a letter and a digit ("m4", "4k"); then hyphenated words joined ("Wi-Fi" → wifi,
    "e-mail" → email), as they are as often written. A plural "s"/"ies" is dropped, so "GPUs"
    meets "GPU" and "cameras" "camera"."""
    tokens = tokenize(text)
    if "-" in text:
        tokens += ["".join(tokenize(m.group())) for m in _HYPHENATED.finditer(text)]
    words = []
    for token in tokens:
        if token in STOPWORDS or token in _CONTRACTIONS:
            continue
        if len(token) < 3 and not (len(token) == 2 and not token.isalpha() and not token.isdigit()):
            continue
        words.append(_singular(token))
    return words


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
