"""CSV exports with a header: which column holds which field, and each row as a record.

Scrapers and notebooks export Reddit as CSV under many column names. A column maps to a
record field by its name (``COLUMN_NAMES``, a table with a reason per group) or by the user's
``--columns field=column,…``, which wins. A file holds posts or comments, decided once from
its fields (``decide_kind``): a ``title`` makes posts; a ``body`` with a post reference
(``link_id``/``post_id``, or a permalink that names the post) makes comments, even beside a
title column (exports of comments often repeat their post's title).

Rows become dicts shaped like dump records, so the rest of the import (``parse``) treats them
as it treats any record: numbers are parsed, dates may be Unix times or ISO dates (a date
without a zone is read as UTC), a comment without an id gets one derived from its post, body
and time (the n-th identical comment of a file its own), a comment without a parent hangs on
its post, and a subreddit missing from a comment's row comes from its permalink or from its
post already in the archive. Columns that map to no field are kept in the record under
``csv_columns``. No I/O here: the importer reads the file and looks posts up.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from crowdsift.core.errors import DumpFormatError
from crowdsift.sources.archive.parse import BadRecordError, RawDict, bare_id, to_int

Kind = Literal["t3", "t1"]

FIELDS = (
    "id",
    "title",
    "selftext",
    "body",
    "text",
    "score",
    "created_utc",
    "subreddit",
    "link_id",
    "parent_id",
    "permalink",
    "author",
    "num_comments",
)
"""What a column can hold. ``text`` is a post's selftext or a comment's body, by the file."""

COLUMN_NAMES: dict[str, str] = {
    # Reddit's own names, as the API and the dumps spell them.
    **{name: name for name in FIELDS},
    # Common export names for the same things.
    "date": "created_utc",  # scrapers write the creation time as a date
    "created": "created_utc",  # the API's older, local-time twin of created_utc
    "created_at": "created_utc",
    "timestamp": "created_utc",
    "post_id": "link_id",  # in a comments export, the post the comment belongs to
    "submission_id": "link_id",  # PRAW's name for a post
    "thread_id": "link_id",
    "url": "permalink",  # a post's link; used as the permalink when it is a Reddit one
    "username": "author",
    "comment_count": "num_comments",
    "subreddit_name": "subreddit",
}
"""Column name (lower case, ``_`` between words) → field."""

PREFIXES = ("post_", "poster_", "submission_", "comment_", "commenter_")
"""Exports prefix a record's own columns with what it is (``post_title``, ``comment_text``,
``poster_username``); the name after one of these is looked up again."""

_PERMALINK = re.compile(r"/r/([^/]+)/comments/([a-z0-9]+)(?:/[^/]*/([a-z0-9]+))?", re.IGNORECASE)
_WORDS = re.compile(r"[^a-z0-9]+")


def column_key(name: str) -> str:
    """'Post Title' → 'post_title': how column names are compared."""
    return _WORDS.sub("_", name.strip().lower()).strip("_")


def field_of_column(name: str) -> str | None:
    """The field a column holds by its name alone, or None."""
    key = column_key(name)
    if key in COLUMN_NAMES:
        return COLUMN_NAMES[key]
    for prefix in PREFIXES:
        if key.startswith(prefix) and key[len(prefix) :] in COLUMN_NAMES:
            return COLUMN_NAMES[key[len(prefix) :]]
    return None


def parse_columns_option(text: str) -> dict[str, str]:
    """``--columns body=comment_text,post_id=submission`` → {field: column}.

    Field names may be any name ``COLUMN_NAMES`` knows (``post_id`` is ``link_id``). Raises
    ValueError with what to write instead."""
    mapping: dict[str, str] = {}
    for part in (p for p in text.split(",") if p.strip()):
        name, sep, column = part.partition("=")
        target = COLUMN_NAMES.get(column_key(name))
        if not sep or not column.strip() or target is None:
            known = ", ".join(sorted(set(COLUMN_NAMES)))
            raise ValueError(
                f"--columns {part.strip()!r}: write field=column, e.g. body=comment_text; "
                f"fields: {known}"
            )
        mapping[target] = column.strip()
    return mapping


@dataclass(frozen=True)
class CsvLayout:
    """Where each field sits in a file's rows, and whether they are posts or comments."""

    kind: Kind
    fields: dict[str, int]
    extra: dict[str, int] = field(default_factory=dict)
    header: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        return len(self.header)

    @property
    def label(self) -> str:
        return "posts" if self.kind == "t3" else "comments"


def plan_layout(header: Sequence[str], columns: Mapping[str, str], where: str) -> CsvLayout:
    """The layout of a file from its header and the user's mapping; DumpFormatError when a
    named column is missing or the file is neither posts nor comments."""
    fields = _explicit(header, columns, where)
    taken = set(fields.values())
    for index, name in enumerate(header):
        target = field_of_column(name)
        if index not in taken and target is not None and target not in fields:
            fields[target] = index
            taken.add(index)
    kind = decide_kind(set(fields))
    if kind is None:
        raise DumpFormatError(_kind_problem(header, where))
    if kind == "t3" and "id" not in fields and "permalink" not in fields:
        raise DumpFormatError(
            f"{where} reads as posts (it has a title column) but has no id column: name it "
            "with --columns id=COLUMN; if it holds comments, name their text: "
            "--columns body=COLUMN"
        )
    if kind == "t3" and "subreddit" not in fields and "permalink" not in fields:
        raise DumpFormatError(
            f"{where} holds posts but no subreddit column: name it with --columns subreddit=COLUMN"
        )
    extra = {name: i for i, name in enumerate(header) if i not in taken and name.strip()}
    return CsvLayout(kind, fields, extra, tuple(header))


def _explicit(header: Sequence[str], columns: Mapping[str, str], where: str) -> dict[str, int]:
    keys = [column_key(name) for name in header]
    fields: dict[str, int] = {}
    for target, column in columns.items():
        if column in header:
            fields[target] = list(header).index(column)
        elif column_key(column) in keys:
            fields[target] = keys.index(column_key(column))
        else:
            raise DumpFormatError(
                f"--columns names {column!r} for {target}, but {where} has no such column; "
                f"its columns are: {', '.join(header)}"
            )
    return fields


def decide_kind(fields: set[str]) -> Kind | None:
    """Comments when there is a body and a post to hang it on, posts when there is a title,
    comments again for a text beside a post reference; None when nothing says."""
    has_post = "link_id" in fields or "permalink" in fields
    if "body" in fields and has_post:
        return "t1"
    if "title" in fields:
        return "t3"
    if "text" in fields and "link_id" in fields:
        return "t1"
    return None


def _kind_problem(header: Sequence[str], where: str) -> str:
    shown = ", ".join(name[:40] for name in header[:12]) or "none"
    return (
        f"{where} is not a CSV of Reddit posts or comments: its header ({shown}) has no "
        "title column (posts) and no body column with a post reference (comments). Name "
        "them with --columns, e.g. --columns title=COLUMN,id=COLUMN or "
        "--columns body=COLUMN,post_id=COLUMN"
    )


PostSubreddit = Callable[[str], str | None]
"""The subreddit of a post already in the archive (by bare id), or None."""


@dataclass
class CsvRecords:
    """Turns the rows of one file into record dicts; remembers which comments it has seen,
    so identical ones get distinct derived ids."""

    layout: CsvLayout
    post_subreddit: PostSubreddit = lambda _post: None
    seen: Counter[str] = field(default_factory=Counter)

    def record(self, values: Sequence[str]) -> RawDict:
        """A row as a record dict of ``layout.kind``; BadRecordError when it cannot be one."""
        layout = self.layout
        if len(values) != layout.width:
            raise BadRecordError(
                f"has {len(values)} cells where the header has {layout.width} (a quote left open?)"
            )
        cells = {name: values[i].strip() for name, i in layout.fields.items() if values[i].strip()}
        data: RawDict = _common(cells)
        extra = {name: values[i] for name, i in layout.extra.items() if values[i]}
        if extra:
            data["csv_columns"] = extra
        if layout.kind == "t3":
            return _post(data, cells)
        return self._comment(data, cells)

    def _comment(self, data: RawDict, cells: dict[str, str]) -> RawDict:
        found = _permalink_parts(cells.get("permalink", ""))
        link = bare_id(cells.get("link_id", "")) or (found[1] if found else "")
        if found and link != found[1]:
            raise BadRecordError(self._link_problem(link, found))
        if not link:
            raise BadRecordError("no post id: its post reference and permalink are empty")
        body = cells.get("body", cells.get("text", ""))
        data["body"] = body
        data["link_id"] = f"t3_{link}"
        data["parent_id"] = cells.get("parent_id") or f"t3_{link}"
        data["id"] = (
            cells.get("id")
            or (found[2] if found and found[2] else "")
            or self._derived_id(link, body, data["created_utc"])
        )
        if "subreddit" not in data:
            subreddit = self.post_subreddit(link)
            if subreddit is None:
                raise BadRecordError(
                    f"no subreddit: the file has no subreddit column and post t3_{link} is "
                    "not in the archive; import the posts first, or map a column with "
                    "--columns subreddit=COLUMN"
                )
            data["subreddit"] = subreddit
        return data

    def _link_problem(self, link: str, found: tuple[str, str, str]) -> str:
        column = self.layout.header[self.layout.fields["link_id"]]
        if link == found[2]:
            return (
                f"column {column!r} holds the comment's own id ({link}), not its post's "
                f"(its permalink names post {found[1]}): map it with --columns id={column}"
            )
        return f"column {column!r} names post {link}, but its permalink names post {found[1]}"

    def _derived_id(self, link: str, body: str, created: int) -> str:
        """A stable id for a comment exported without one: the same row of a re-export gets
        the same id, so importing it again changes nothing."""
        key = f"{link}\x00{body}\x00{created}"
        self.seen[key] += 1
        if self.seen[key] > 1:
            key += f"\x00{self.seen[key]}"
        return "x" + hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def _common(cells: dict[str, str]) -> RawDict:
    """The fields posts and comments share, typed as Reddit types them."""
    data: RawDict = {"created_utc": _epoch(cells.get("created_utc", ""))}
    for name in ("score", "num_comments"):
        if name in cells:
            number = to_int(cells[name])
            if number is None:
                raise BadRecordError(f"{name} {cells[name][:40]!r} is not a number")
            data[name] = number
    if "author" in cells:
        data["author"] = cells["author"]
    permalink = cells.get("permalink", "")
    found = _permalink_parts(permalink)
    if found:
        data["permalink"] = urlsplit(permalink).path or permalink
    elif permalink:
        data["url"] = permalink
    subreddit = cells.get("subreddit") or (found[0] if found else "")
    if subreddit:
        data["subreddit"] = subreddit
    return data


def _post(data: RawDict, cells: dict[str, str]) -> RawDict:
    """A post's fields; a row whose permalink is a comment's, or without a title, is no post
    (a comments export read as posts: say how to read it as comments)."""
    found = _permalink_parts(cells.get("permalink", ""))
    if found and found[2]:
        raise BadRecordError(
            f"its permalink is comment {found[2]}'s, not a post's: if the file holds "
            "comments, name their text column with --columns body=COLUMN"
        )
    if not cells.get("title"):
        raise BadRecordError(
            "a post without a title: if the file holds comments, name their text column "
            "with --columns body=COLUMN"
        )
    data["id"] = cells.get("id") or (found[1] if found else "")
    data["title"] = cells["title"]
    data["selftext"] = cells.get("selftext", cells.get("text", cells.get("body", "")))
    return data


def _permalink_parts(value: str) -> tuple[str, str, str] | None:
    """(subreddit, post id, comment id or "") of a Reddit permalink, absolute or relative."""
    match = _PERMALINK.search(value)
    if match is None:
        return None
    return match.group(1), match.group(2).lower(), (match.group(3) or "").lower()


def _epoch(value: str) -> int:
    """A creation time from a Unix time or an ISO date/time (UTC when it names no zone); 0
    when empty, as dumps without one have it."""
    if not value:
        return 0
    number = to_int(value)
    if number is not None:
        return number
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise BadRecordError(
            f"created_utc {value[:40]!r} is neither a Unix time nor an ISO date"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())
