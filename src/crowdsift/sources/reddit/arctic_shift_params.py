"""What Arctic Shift refuses with HTTP 400, checked before a request leaves (pure).

The API answers a malformed request with ``{"data": null, "error": "..."}`` and HTTP 400;
projects that query it live in 2026 hit each of these (see ``arctic_shift``'s module notes):

- ``fields`` accepts only the documented selectable fields: ``permalink`` and ``is_self`` (both
  needed by the filtering layer) and most others are a 400, and ``/api/comments/search``
  rejects post fields (``title``, ``num_comments``) just as post search rejects ``body``;
- a full-text parameter (``query``, ``title``, ``selftext``, ``body``) without ``subreddit`` or
  ``author`` (comments: also ``link_id``/``parent_id``) is a 400;
- ``limit`` is 1-100 on the search endpoints, 1-25000 on ``/api/comments/tree``, and at most
  500 ids go in one ``/api/*/ids`` request;
- ``after`` and ``before`` are exclusive bounds, so ``after >= before`` can match nothing: such
  a request is not an error to the API, but it is never worth sending (``empty_window``);
- ``/api/subreddits/search`` is thinly documented: crowdsift sends only ``subreddit`` (one name)
  or ``subreddit_prefix``, non-empty, and ``limit`` 1-1000 — what clients in the wild send and
  the local emulator accepts; anything else (``fields`` included) is refused before sending.

``check`` raises ``SourceError`` naming the parameter, so a bug in crowdsift shows up as a
clear message before it costs a request (and a 400 in the user's log), never as a silent empty
answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

from crowdsift.core.errors import SourceError

POSTS_PATH = "/api/posts/search"
COMMENTS_PATH = "/api/comments/search"
TREE_PATH = "/api/comments/tree"
COMMENT_IDS_PATH = "/api/comments/ids"
SUBREDDITS_PATH = "/api/subreddits/search"

SEARCH_LIMIT_MAX = 100
TREE_LIMIT_MAX = 25000
IDS_MAX = 500
SUBREDDIT_LIMIT_MAX = 1000
SUBREDDIT_PARAMS = frozenset({"subreddit", "subreddit_prefix", "limit"})

_BOTH_FIELDS = frozenset(
    {"author", "author_fullname", "author_flair_text", "created_utc", "distinguished", "id",
     "retrieved_on", "subreddit", "subreddit_id", "score"}
)  # fmt: skip
POST_FIELDS = _BOTH_FIELDS | {
    "crosspost_parent", "link_flair_text", "num_comments", "over_18", "post_hint", "selftext",
    "spoiler", "title", "url",
}  # fmt: skip
COMMENT_FIELDS = _BOTH_FIELDS | {"body", "link_id", "parent_id"}
"""The selectable ``fields`` of the API reference ("Selectable fields"); anything else is a 400."""

_TEXT_PARAMS = {
    POSTS_PATH: ("query", "title", "selftext", "link_flair_text", "author_flair_text"),
    COMMENTS_PATH: ("body", "author_flair_text"),
}
_SCOPES = {
    POSTS_PATH: ("subreddit", "author"),
    COMMENTS_PATH: ("subreddit", "author", "link_id", "parent_id"),
}

Params = Mapping[str, str | int | float]


def check(path: str, params: Params) -> None:
    """Raise ``SourceError`` for a request Arctic Shift would refuse with HTTP 400."""
    if path in (POSTS_PATH, COMMENTS_PATH):
        _check_limit(path, params, 1, SEARCH_LIMIT_MAX)
        _check_scope(path, params)
        _check_fields(path, params, POST_FIELDS if path == POSTS_PATH else COMMENT_FIELDS)
    elif path == TREE_PATH:
        if not str(params.get("link_id", "")).strip():
            _refuse(path, "link_id is required")
        _check_limit(path, params, 1, TREE_LIMIT_MAX)
    elif path == COMMENT_IDS_PATH:
        ids = [i for i in str(params.get("ids", "")).split(",") if i.strip()]
        if not 1 <= len(ids) <= IDS_MAX:
            _refuse(path, f"ids takes 1-{IDS_MAX} ids, not {len(ids)}")
        _check_fields(path, params, COMMENT_FIELDS)
    elif path == SUBREDDITS_PATH:
        extra = sorted(set(params) - SUBREDDIT_PARAMS)
        if extra:
            _refuse(path, f"{', '.join(extra)} is not a parameter it takes")
        names = [n for n in ("subreddit", "subreddit_prefix") if str(params.get(n, "")).strip()]
        if len(names) != 1:
            _refuse(path, "it needs exactly one of subreddit, subreddit_prefix (non-empty)")
        _check_limit(path, params, 1, SUBREDDIT_LIMIT_MAX)


def empty_window(params: Params) -> bool:
    """True when exclusive ``after``/``before`` bounds leave no second to match."""
    after, before = params.get("after"), params.get("before")
    if after is None or before is None:
        return False
    try:
        return float(after) >= float(before) - 1
    except (TypeError, ValueError):  # a date form the API parses; let it decide
        return False


def _check_limit(path: str, params: Params, low: int, high: int) -> None:
    value = params.get("limit")
    if value is None:
        return
    try:
        number = int(value)
    except (TypeError, ValueError):
        _refuse(path, f"limit must be a whole number, not {value!r}")
    if not low <= number <= high:
        _refuse(path, f"limit must be {low}-{high}, not {number}")


def _check_scope(path: str, params: Params) -> None:
    text = [name for name in _TEXT_PARAMS[path] if str(params.get(name, "")).strip()]
    scopes = _SCOPES[path]
    if text and not any(str(params.get(name, "")).strip() for name in scopes):
        _refuse(path, f"full-text {text[0]} needs {' or '.join(scopes)}")


def _check_fields(path: str, params: Params, allowed: frozenset[str]) -> None:
    raw = params.get("fields")
    if raw is None:
        return
    bad = sorted({f.strip() for f in str(raw).split(",") if f.strip()} - allowed)
    if bad:
        _refuse(path, f"fields {', '.join(bad)} cannot be selected (allowed: {sorted(allowed)})")


def _refuse(path: str, what: str) -> NoReturn:
    raise SourceError(
        f"Not sending GET {path} to Arctic Shift: {what}, which the API refuses with HTTP 400. "
        "This is a bug in crowdsift; please report it with this message, and use "
        "--source archive or --source reddit-api meanwhile."
    )
