"""Pure parsing: dump lines and saved API JSON into table rows, and era normalisation of raw dicts.

Real dumps span fifteen years of schema drift. What this module absorbs, so nothing downstream
has to:

- ``created_utc`` as int, float or numeric string (falls back to ``created``, then 0);
- ``score``/``num_comments`` likewise; missing text fields become ``""``;
- ids in ``link_id``/``parent_id`` with or without their ``t3_``/``t1_`` prefix, and ids
  saved as JSON integers (Pushshift's API answers ``parent_id`` as the base-36 id's value);
- subreddits as ``r/Name`` or ``Name``: stored as ``name`` (``subreddit_key``), the form the
  search looks them up by;
- ``permalink`` missing (old eras) or absolute: rebuilt as Reddit's relative path;
- ``\\ud83d\\ude00`` escapes (json pairs them) and *lone* surrogates, which Python can hold but
  SQLite's UTF-8 cannot: replaced by U+FFFD in columns and in dicts handed back;
- ``_meta`` blocks and extra fields: kept in the stored record, ignored for columns.

Lines are parsed with orjson (measured 2.3x the stdlib's records/s on dump lines); what
orjson refuses (lone surrogates, NaN, deep nesting) is parsed again by the stdlib, which
accepts the first two and words every error well. A record keeps its parsed dict (``data``),
stored compressed (``crowdsift.sources.archive.codec``) and normalised when read back
(``crowdsift.sources.archive.normalise``). Saved API JSON is flattened into the same records
by ``crowdsift.sources.archive.api_json``; a dump line holding such a response (a
``/comments`` array, a Listing, a Pushshift ``{"data": [...]}``) is handed back whole as an
``ApiDocument`` for it to flatten (``parse_line_or_document``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

import orjson

from crowdsift.core.errors import ArchiveError

RawDict = dict[str, Any]

_SURROGATE = re.compile("[\ud800-\udfff]")
_RECORD_KINDS = ("t3", "t1")
_loads = orjson.loads


class PostRow(NamedTuple):
    """One ``posts`` row, in column order (a tuple, so ``executemany`` takes it as is)."""

    id: str
    subreddit: str
    author: str | None
    title: str
    selftext: str
    score: int
    num_comments: int
    created_utc: int
    retrieved: int
    data: RawDict
    """The whole record as parsed (no lone surrogates): what the archive stores."""


class CommentRow(NamedTuple):
    """One ``comments`` row, in column order. ``link_id`` is bare, ``parent_id`` prefixed."""

    id: str
    link_id: str
    parent_id: str
    subreddit: str
    author: str | None
    body: str
    score: int
    created_utc: int
    retrieved: int
    data: RawDict


Record = PostRow | CommentRow


class ApiDocument(NamedTuple):
    """A line that holds a saved API response rather than one record: ``/comments``' array of
    two Listings, a Listing, or a Pushshift/Arctic Shift ``{"data": [...]}`` answer. Flattened
    into records by ``crowdsift.sources.archive.api_json.api_records``."""

    doc: Any


class BadRecordError(ArchiveError, ValueError):
    """A line or thing that cannot become a row; ``reason`` goes into the import report.

    A typed error like every other crowdsift raises (the importer counts it and carries on);
    still a ValueError for callers that caught it as one.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def to_int(value: object) -> int | None:
    """An int from an int, a finite float or a numeric string; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                return None
            return int(number) if math.isfinite(number) else None
    return None


def clean_text(value: object) -> str:
    """A string column value: non-strings become "", lone surrogates become U+FFFD."""
    if not isinstance(value, str):
        return ""
    return _SURROGATE.sub("\ufffd", value)


_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(number: int) -> str:
    """A Reddit id from its integer value: Pushshift's API answers ``parent_id`` (and some
    archives ``id``) as the number whose base-36 spelling is the id (``37608457292`` is
    ``h9z3rd8``)."""
    digits = ""
    while number > 0:
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
    return digits or "0"


def bare_id(value: object) -> str:
    """``t3_abc``/``t1_abc``/``abc`` → ``abc``; an integer id → its base-36 spelling; ""
    when absent or of another type."""
    if isinstance(value, int) and not isinstance(value, bool):
        return base36(value) if value >= 0 else ""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if len(text) > 3 and text[0] == "t" and text[2] == "_" and text[1] in "13":
        return text[3:]
    return text


def parent_fullname(parent: object, link: str) -> str:
    """``parent_id`` with its prefix; a bare id equal to the post's id is the post itself."""
    if isinstance(parent, str) and parent.startswith(("t1_", "t3_")):
        return parent.strip()
    bare = bare_id(parent)
    if not bare or bare == link:
        return f"t3_{link}"
    return f"t1_{bare}"


def subreddit_key(name: str) -> str:
    """'/r/HomeImprovement/' → 'homeimprovement': how the archive stores a subreddit and how
    its search and stats look one up, so a name is found however it was written."""
    cleaned = name.strip().strip("/")
    if cleaned[:2].lower() == "r/":
        cleaned = cleaned[2:]
    return cleaned.strip().lower()


def created_time(data: RawDict) -> int:
    """``created_utc`` in whatever type its era used, else ``created``, else 0."""
    value = data.get("created_utc")
    if type(value) is int:  # the common case, checked first: this runs once per record
        return value
    number = to_int(value)
    if number is None:
        number = to_int(data.get("created"))
    return number or 0


def int_field(data: RawDict, key: str) -> int:
    """An integer field (score, num_comments) of any era; 0 when missing or not a number."""
    value = data.get(key)
    if type(value) is int:
        return value
    return to_int(value) or 0


_RETRIEVED_KEYS = ("retrieved_on", "retrieved_utc", "updated_utc")


def retrieved_time(data: RawDict) -> int:
    """When the archiver fetched this record; decides which of two versions is newer."""
    best = 0
    for key in _RETRIEVED_KEYS:
        value = data.get(key)
        if value is not None:
            number = value if type(value) is int else to_int(value)
            if number is not None and number > best:
                best = number
    meta = data.get("_meta")
    if type(meta) is dict:
        number = to_int(meta.get("retrieved_2nd_on"))
        if number is not None and number > best:
            best = number
    return best


def record_kind(data: RawDict) -> str | None:
    """``t3`` if it has a title, ``t1`` if it has a body and a link_id, otherwise None."""
    if "title" in data:
        return "t3"
    if "body" in data and "link_id" in data:
        return "t1"
    return None


def parse_line(text: str | bytes) -> Record | None:
    """One NDJSON dump line → a row; None for a record that is neither post nor comment.

    Raises BadRecordError (with the reason) for a line that is not a JSON object, lacks an
    id or subreddit, or holds a whole API response (``parse_line_or_document`` takes those).
    A ``{"kind": "t3", "data": {...}}`` wrapper is unwrapped.
    """
    row = parse_line_or_document(text)
    if isinstance(row, ApiDocument):
        raise BadRecordError("a saved API response holding several records, not one record")
    return row


def parse_line_or_document(text: str | bytes) -> Record | ApiDocument | None:
    """``parse_line``, except that a line holding a saved API response (a JSON array, a
    Listing, a Pushshift ``{"data": [...]}``) comes back whole as an ``ApiDocument``."""
    try:
        obj = _loads(text)
        clean = True
    except ValueError:
        obj = _stdlib_loads(text)
        clean = False
    if type(obj) is not dict:
        if type(obj) is list and obj and all(type(item) is dict for item in obj):
            return ApiDocument(obj if clean else clean_strings(obj))
        raise BadRecordError(f"not a JSON object (a {type(obj).__name__})")
    if not clean:
        clean_strings(obj)
    if "kind" in obj:
        kind = obj.get("kind")
        data = obj.get("data")
        if kind == "Listing":
            return ApiDocument(obj)
        if isinstance(kind, str) and isinstance(data, dict):
            return record_from_dict(data, kind=kind, escaped=False)
    row = _fast_record(obj)
    if row is not None:
        return row
    if is_search_answer(obj):
        return ApiDocument(obj)
    return record_from_dict(obj, escaped=False)


def is_search_answer(obj: RawDict) -> bool:
    """A Pushshift / Arctic Shift API answer: ``{"data": [...], "metadata": …}``, not a record."""
    return type(obj.get("data")) is list and "id" not in obj and record_kind(obj) is None


def _stdlib_loads(text: str | bytes) -> Any:
    """What orjson refused: lone surrogates and NaN are JSON the stdlib takes, and bytes
    that are not UTF-8 are read with U+FFFD in place of the bad bytes; anything else is a
    bad line, with the stdlib's wording of why."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
        try:
            return _loads(text)
        except ValueError:
            pass
    try:
        return json.loads(text)
    except RecursionError:
        raise BadRecordError("not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise BadRecordError(f"not JSON ({exc})") from None


def clean_strings(node: Any) -> Any:
    """Replace lone surrogates everywhere inside a decoded JSON value (dicts/lists in place)."""
    if isinstance(node, str):
        return clean_text(node)
    if isinstance(node, dict):
        for key, value in list(node.items()):
            if isinstance(value, str | dict | list):
                node[key] = clean_strings(value)
            if isinstance(key, str) and _SURROGATE.search(key):
                node[clean_text(key)] = node.pop(key)
    elif isinstance(node, list):
        node[:] = [clean_strings(value) for value in node]
    return node


def _fast_record(obj: RawDict) -> Record | None:
    """``record_from_dict`` for the common modern record, inlined; None means "not common".

    Runs once per line of a multi-GB dump. Anything unusual (a prefixed or padded id, a
    string timestamp, a missing field, a bare parent id) returns None and takes the general
    path; a property test checks that both paths agree.
    """
    get = obj.get
    record_id = get("id")
    subreddit = get("subreddit")
    created = get("created_utc")
    score = get("score")
    if (
        type(record_id) is not str
        or not record_id
        or "_" in record_id[:3]
        or record_id.strip() is not record_id
        or type(subreddit) is not str
        or not subreddit
        or subreddit.strip() is not subreddit
        or "/" in subreddit
        or type(created) is not int
        or type(score) is not int
    ):
        return None
    author = get("author")
    if type(author) is not str:
        author = None
    retrieved = get("retrieved_on")
    if (
        type(retrieved) is not int
        or retrieved < 0
        or "retrieved_utc" in obj
        or "_meta" in obj
        or "updated_utc" in obj
    ):
        retrieved = retrieved_time(obj)
    sub = subreddit.lower()
    if "title" in obj:
        return _fast_post(obj, record_id, sub, author, score, created, retrieved)
    return _fast_comment(obj, record_id, sub, author, score, created, retrieved)


def _fast_post(
    obj: RawDict, record_id: str, sub: str, author: str | None, score: int, created: int,
    retrieved: int,
) -> PostRow | None:  # fmt: skip
    """``_fast_record``'s post: title, body and comment count of the plain types, else None."""
    get = obj.get
    title = get("title")
    selftext = get("selftext", "")
    num_comments = get("num_comments")
    if type(title) is not str or type(selftext) is not str or type(num_comments) is not int:
        return None
    return PostRow(
        record_id, sub, author, title, selftext, score, num_comments, created, retrieved, obj
    )


def _fast_comment(
    obj: RawDict, record_id: str, sub: str, author: str | None, score: int, created: int,
    retrieved: int,
) -> CommentRow | None:  # fmt: skip
    """``_fast_record``'s comment: a body, a ``t3_`` link and a prefixed parent, else None."""
    get = obj.get
    body = get("body")
    link = get("link_id")
    parent = get("parent_id")
    if (
        type(body) is not str
        or type(link) is not str
        or type(parent) is not str
        or link[:3] != "t3_"
        or len(link) < 4
        or link.strip() is not link
        or parent[:3] not in ("t1_", "t3_")
    ):
        return None
    return CommentRow(
        record_id, link[3:], parent.strip(), sub, author, body, score, created, retrieved, obj
    )


def record_from_dict(
    data: RawDict,
    *,
    kind: str | None = None,
    escaped: bool = True,
    retrieved_default: int = 0,
) -> Record | None:
    """A t3/t1 ``data`` dict → a row that keeps ``data`` (cleaned of lone surrogates in place).

    ``escaped`` False promises ``data`` holds no lone surrogates (orjson parsed it, or it was
    cleaned already), so cleaning is skipped. Runs once per unusual record of a dump, hence
    the inlined type checks.
    """
    kind = _record_kind(data, kind)
    if kind is None:
        return None
    if escaped:
        clean_strings(data)
    record_id = data.get("id")
    if type(record_id) is not str or "_" in record_id[:3] or record_id.strip() != record_id:
        record_id = bare_id(record_id)
    if not record_id:
        raise BadRecordError("missing id")
    subreddit = data.get("subreddit")
    if type(subreddit) is not str or not subreddit.strip():
        raise BadRecordError(f"{kind}_{record_id}: missing subreddit")
    text = _plain_text
    author = data.get("author")
    author = text(author) if type(author) is str else None
    sub = text(subreddit_key(subreddit))
    if not sub:
        raise BadRecordError(f"{kind}_{record_id}: missing subreddit")
    retrieved = retrieved_time(data) or retrieved_default
    if kind == "t3":
        return PostRow(
            record_id,
            sub,
            author,
            text(data.get("title")),
            text(data.get("selftext")),
            int_field(data, "score"),
            int_field(data, "num_comments"),
            created_time(data),
            retrieved,
            data,
        )
    link, parent = _thread_of(data, record_id)
    return CommentRow(
        record_id,
        link,
        parent,
        sub,
        author,
        text(data.get("body")),
        int_field(data, "score"),
        created_time(data),
        retrieved,
        data,
    )


def _record_kind(data: RawDict, kind: str | None) -> str | None:
    """``t3`` or ``t1``: as given, else what the fields say; None for anything else."""
    if kind is not None:
        return kind if kind in _RECORD_KINDS else None
    if "title" in data:
        return "t3"
    if "body" in data and "link_id" in data:
        return "t1"
    return None


def _thread_of(data: RawDict, record_id: str) -> tuple[str, str]:
    """A comment's post id and its parent's fullname."""
    link = data.get("link_id")
    if type(link) is str and link[:3] == "t3_" and len(link) > 3 and link.strip() == link:
        link = link[3:]
    else:
        link = bare_id(link)
    if not link:
        raise BadRecordError(f"t1_{record_id}: missing link_id")
    parent = data.get("parent_id")
    if type(parent) is not str or parent[:3] not in ("t1_", "t3_"):
        parent = parent_fullname(parent, link)
    else:
        parent = parent.strip()
    return link, parent


def _plain_text(value: object) -> str:
    return value if type(value) is str else ""
