"""What the Arctic Shift API's search parameters mean, for the local server that emulates it.

Pure functions over parameter dicts and stored items: which parameters each endpoint accepts,
Dates (epoch, partial ISO 8601, offsets), the full-text approximation of PostgreSQL's
``websearch_to_tsquery``, filters, ``fields`` selection, the subreddit directory search.
``arctic_shift_server`` serves them over HTTP; the reference they follow (and what we chose
where it is silent) is described in its module docstring.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Any

_COMMON = {"author", "subreddit", "author_flair_text", "after", "before", "limit", "sort",
           "sort_type", "md2html", "fields"}  # fmt: skip
POST_PARAMS = _COMMON | {"crosspost_parent_id", "over_18", "spoiler", "title", "selftext",
                          "link_flair_text", "query", "url", "url_exact"}  # fmt: skip
COMMENT_PARAMS = _COMMON | {"body", "link_id", "parent_id"}
SUBREDDIT_PARAMS = {"subreddit", "subreddit_prefix", "limit"}
SUBREDDIT_LIMIT_MAX = 1000
_BOTH_FIELDS = {"author", "author_fullname", "author_flair_text", "created_utc", "distinguished",
                "id", "retrieved_on", "subreddit", "subreddit_id", "score"}  # fmt: skip
_POST_FIELDS = _BOTH_FIELDS | {"crosspost_parent", "link_flair_text", "num_comments", "over_18",
                               "post_hint", "selftext", "spoiler", "title", "url"}  # fmt: skip
_COMMENT_FIELDS = _BOTH_FIELDS | {"body", "link_id", "parent_id"}
_TRUE = {"true", "1", "yes", "y"}
_FALSE = {"false", "0", "no", "n"}
_OFFSET_RE = re.compile(r"^(\d+)\s*([a-z]+)$")
_OFFSET_SECONDS = {
    **dict.fromkeys(("s", "sec", "second", "seconds"), 1),
    **dict.fromkeys(("min", "minute", "minutes"), 60),
    **dict.fromkeys(("h", "hour", "hours"), 3600),
    **dict.fromkeys(("d", "day", "days"), 86400),
    **dict.fromkeys(("m", "month", "months"), 30 * 86400),
    **dict.fromkeys(("y", "year", "years"), 365 * 86400),
}
_STOP_TEXT = (
    "a an and are as at be but by for from has have i if in into is it its me my no not of on "
    "or our so than that the their them then there these they this to was we were what when "
    "which who will with you your"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
TEXT_PARAMS = {
    "query": ("title", "selftext"),
    "title": ("title",),
    "selftext": ("selftext",),
    "body": ("body",),
    "link_flair_text": ("link_flair_text",),
    "author_flair_text": ("author_flair_text",),
}
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
Item = dict[str, Any]


class ApiError(Exception):
    """A request the real API would refuse: becomes the error envelope with ``status``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def parse_date(value: str, now: datetime) -> float:
    """An Arctic Shift Date as epoch seconds; raises ApiError for what the API would refuse."""
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        number = float(text)
        return number / 1000 if number > 100_000_000_000 else number
    match = _OFFSET_RE.fullmatch(text.lower())
    if match and match.group(2) in _OFFSET_SECONDS:
        return now.timestamp() - int(match.group(1)) * _OFFSET_SECONDS[match.group(2)]
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ApiError(f"Invalid date: {value}") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _words(text: str) -> list[str]:
    """Lower-cased words, stop words dropped, a trailing plural 's' folded."""
    out = []
    for word in _WORD_RE.findall(text.lower()):
        word = word.removesuffix("'s")
        if word in _STOP_WORDS:
            continue
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return out


def full_text_match(query: str, text: str) -> bool:
    """Approximates ``to_tsvector(text) @@ websearch_to_tsquery(query)`` (see module docs)."""
    doc, doc_set = _document(text)

    def holds(negated: bool, words: tuple[str, ...]) -> bool:
        if len(words) == 1:
            present = words[0] in doc_set
        else:
            n = len(words)
            present = any(doc[i : i + n] == words for i in range(len(doc) - n + 1))
        return present != negated

    return all(any(holds(neg, words) for neg, words in group) for group in _query(query))


@lru_cache(maxsize=1 << 16)
def _document(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """``text``'s words in order and as a set, remembered: a search tokenizes every item it
    scans, and the same items are scanned again by the next search."""
    words = tuple(_words(text))
    return words, frozenset(words)


@lru_cache(maxsize=256)
def _query(query: str) -> tuple[tuple[tuple[bool, tuple[str, ...]], ...], ...]:
    """``query`` as groups ANDed together of ``(negated, phrase)`` alternatives ORed."""
    groups: list[list[tuple[bool, tuple[str, ...]]]] = [[]]
    pending_or = False
    for raw in re.findall(r'-?"[^"]*"?|\S+', query):
        if raw == "OR":
            pending_or = bool(groups[-1])
            continue
        negated = raw.startswith("-")
        words = tuple(_words(raw.lstrip("-").strip('"')))
        if not words:
            continue
        if pending_or:
            groups[-1].append((negated, words))
        else:
            groups.append([(negated, words)])
        pending_or = False
    return tuple(tuple(group) for group in groups if group)


def _parse_bool(name: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ApiError(f"Invalid boolean for {name}: {value}")


def _strip_prefix(value: str, prefixes: tuple[str, ...]) -> str:
    lowered = value.strip().lower()
    for prefix in prefixes:
        lowered = lowered.removeprefix(prefix)
    return lowered


def _fullname(value: str, default_prefix: str) -> str:
    value = value.strip()
    return value if value[:3] in ("t1_", "t3_") else f"{default_prefix}{value}"


SCOPES = ("subreddit", "link_id")
"""The parameters a store can index items by (see ``scope_key`` and ``item_key``)."""


def scope_key(name: str, value: str) -> str | None:
    """What ``item_key(name, ...)`` must equal for an item to pass the ``name`` filter; None
    when ``value`` does not filter (an empty ``link_id``)."""
    if name == "subreddit":
        return _strip_prefix(value, ("/", "r/"))
    return _fullname(value, "t3_").lower() if value.strip() else None


def item_key(name: str, item: Item) -> str:
    """``item``'s value for a ``SCOPES`` parameter, as the filters compare it."""
    return str(item.get(name) or "").lower()


def reject_unknown(params: Mapping[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ApiError(f"Unknown parameter: {unknown[0]}")


def parse_limit(value: str) -> int:
    if value == "auto":
        return 1000
    if not value.isdigit() or not 1 <= int(value) <= 100:
        raise ApiError(f"Invalid limit: {value} (1 - 100 or auto)")
    return int(value)


def item_filters(params: Mapping[str, str]) -> list[Callable[[Item], bool]]:
    """One check per filtering parameter present in the request."""
    checks: list[Callable[[Item], bool]] = []
    for name, prefixes in (("subreddit", ("/", "r/")), ("author", ("/", "u/"))):
        if name in params:
            checks.append(partial(_equals, name, _strip_prefix(params[name], prefixes)))
    for name in ("over_18", "spoiler"):
        if name in params:
            checks.append(partial(_flag, name, _parse_bool(name, params[name])))
    if "url" in params:
        exact = _parse_bool("url_exact", params.get("url_exact", "false"))
        checks.append(partial(_url, params["url"], exact))
    for name, key, prefix in (
        ("crosspost_parent_id", "crosspost_parent", "t3_"),
        ("link_id", "link_id", "t3_"),
        ("parent_id", "parent_id", "t1_"),
    ):
        if params.get(name, "").strip():
            checks.append(partial(_equals, key, _fullname(params[name], prefix).lower()))
        elif name == "parent_id" and name in params:  # empty: top-level comments only
            checks.append(_top_level)
    for name, keys in TEXT_PARAMS.items():
        if name in params:
            checks.append(partial(_text, params[name], keys))
    return checks


def _equals(key: str, want: str, item: Item) -> bool:
    return str(item.get(key) or "").lower() == want


def _flag(key: str, want: bool, item: Item) -> bool:
    return bool(item.get(key)) == want


def _url(url: str, exact: bool, item: Item) -> bool:
    value = str(item.get("url") or "")
    return value == url if exact else value.startswith(url)


def _top_level(item: Item) -> bool:
    return str(item.get("parent_id", "")).startswith("t3_")


def _text(query: str, keys: tuple[str, ...], item: Item) -> bool:
    return full_text_match(query, " ".join(str(item.get(k) or "") for k in keys))


def by_ids(items: list[Item], params: Mapping[str, str], is_post: bool = True) -> list[Item]:
    """``/api/posts/ids?ids=a,t3_b`` (or ``/api/comments/ids``, ``t1_``): the archived things
    among them, in the order asked; unknown ids are left out. At most 500 ids (the docs)."""
    reject_unknown(params, {"ids", "fields", "md2html"})
    prefix = "t3_" if is_post else "t1_"
    wanted = [_fullname(i, prefix)[3:] for i in params.get("ids", "").split(",") if i.strip()]
    if not wanted or len(wanted) > 500:
        raise ApiError(f"Invalid ids: give 1 - 500 comma-separated ids, not {len(wanted)}")
    by_id = {str(item.get("id")): item for item in items}
    return shape([by_id[i] for i in dict.fromkeys(wanted) if i in by_id], params, is_post)


def shape(items: list[Item], params: Mapping[str, str], is_post: bool) -> list[Item]:
    """Apply ``fields`` and ``md2html`` to the chosen items (copies; the store is untouched)."""
    out = [dict(item) for item in items]
    if _parse_bool("md2html", params.get("md2html", "false")):
        key = "selftext" if is_post else "body"
        for item in out:
            item[f"{key}_html"] = (
                f'<div class="md"><p>{html.escape(str(item.get(key) or ""))}</p></div>'
            )
    if "fields" in params:
        wanted = [f.strip() for f in params["fields"].split(",") if f.strip()]
        bad = [f for f in wanted if f not in (_POST_FIELDS if is_post else _COMMENT_FIELDS)]
        if bad:
            raise ApiError(f"Invalid field: {bad[0]}")
        out = [{k: item[k] for k in wanted if k in item} for item in out]
    return out


def subreddit_search(subreddits: list[Item], params: Mapping[str, str]) -> list[Item]:
    """``/api/subreddits/search``: about-dicts whose ``display_name`` equals ``subreddit`` and/or
    starts with ``subreddit_prefix`` (case-insensitive, a leading ``r/`` or ``/`` ignored; at
    least one of them, non-empty), most ``subscribers`` first, then by name; ``limit`` 1 - 1000
    (default 25). Our choices where the docs are silent (see the server's module notes)."""
    reject_unknown(params, SUBREDDIT_PARAMS)
    raw_limit = params.get("limit", "25")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= SUBREDDIT_LIMIT_MAX:
        raise ApiError(f"Invalid limit: {raw_limit} (1 - {SUBREDDIT_LIMIT_MAX})")
    exact = _strip_prefix(params.get("subreddit", ""), ("/", "r/"))
    prefix = _strip_prefix(params.get("subreddit_prefix", ""), ("/", "r/"))
    if not exact and not prefix:
        raise ApiError("subreddit or subreddit_prefix is required")
    matched = [
        item
        for item in subreddits
        if (name := str(item.get("display_name") or "").lower())
        and (not exact or name == exact)
        and name.startswith(prefix)
    ]
    matched.sort(key=lambda i: (-_subscribers(i), str(i.get("display_name")).lower()))
    return [dict(item) for item in matched[: int(raw_limit)]]


def _subscribers(item: Item) -> int:
    value = item.get("subscribers")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


TREE_PARAMS = {"link_id", "parent_id", "limit", "start_breadth", "start_depth", "md2html"}


def tree(comments: list[Item], params: Mapping[str, str]) -> list[Item]:
    """``/api/comments/tree``: the thread's comments nested as Reddit nests them.

    ``limit`` (1 - 25000, default 50) caps the comments returned; past it, a sibling list's
    remaining comments and everything under them collapse into one ``{"kind": "more"}`` stub
    whose ``children`` lists their ids (Reddit's convention). Siblings are oldest first, as
    the archive stores them, so a collapsed tail holds the latest comments. ``start_breadth`` and
    ``start_depth`` are validated but not emulated (our simplification: collapsing is by
    ``limit`` only). ``parent_id`` roots the tree at that comment; unset means the whole thread.
    """
    reject_unknown(params, TREE_PARAMS)
    link = params.get("link_id", "").strip()
    if not link:
        raise ApiError("link_id is required")
    raw_limit = params.get("limit", "50")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 25000:
        raise ApiError(f"Invalid limit: {raw_limit} (1 - 25000)")
    for name in ("start_breadth", "start_depth"):
        if name in params and not params[name].isdigit():
            raise ApiError(f"Invalid {name}: {params[name]}")
    post = _fullname(link, "t3_").lower()
    kids: dict[str, list[Item]] = {}
    for item in comments:
        if str(item.get("link_id") or "").lower() == post:
            kids.setdefault(str(item.get("parent_id") or "").lower(), []).append(item)
    for siblings in kids.values():
        siblings.sort(key=lambda i: (float(i.get("created_utc", 0)), str(i.get("id"))))
    root = _fullname(params["parent_id"], "t1_").lower() if params.get("parent_id") else post
    budget = [int(raw_limit)]
    return _nest(kids, root, budget, 0)


def _nest(kids: dict[str, list[Item]], parent: str, budget: list[int], depth: int) -> list[Item]:
    out: list[Item] = []
    siblings = kids.get(parent, [])
    for index, item in enumerate(siblings):
        if budget[0] <= 0:
            rest = [i for sib in siblings[index:] for i in _ids_under(kids, sib)]
            out.append({"kind": "more", "data": {"id": rest[0], "parent_id": parent,
                        "count": len(rest), "depth": depth, "children": rest}})  # fmt: skip
            break
        budget[0] -= 1
        data = dict(item)
        replies = _nest(kids, f"t1_{item['id']}".lower(), budget, depth + 1)
        data["replies"] = {"kind": "Listing", "data": {"children": replies}} if replies else ""
        out.append({"kind": "t1", "data": data})
    return out


def _ids_under(kids: dict[str, list[Item]], item: Item) -> list[str]:
    """``item``'s id and every descendant's, in pre-order."""
    out = [str(item["id"])]
    for child in kids.get(f"t1_{item['id']}".lower(), []):
        out.extend(_ids_under(kids, child))
    return out
