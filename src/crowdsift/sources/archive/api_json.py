"""Saved Reddit API JSON: a Listing, a single thing, or ``/comments/{id}``'s two listings.

Comment trees nest replies as a Listing under ``replies`` (or ``""``); every t1 is kept, the
tree flattened, and ``more`` stubs (comments Reddit did not send) are passed on for the
importer to count as skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

from crowdsift.core.errors import DumpFormatError
from crowdsift.sources.archive.parse import RawDict, record_kind


def iter_api_things(doc: object) -> Iterator[tuple[str, RawDict]]:
    """Every thing in saved Reddit API JSON, depth first, as ``(kind, data)``.

    Accepts a Listing, a single thing, or a list of them (``/comments/{id}`` answers with
    ``[post listing, comment listing]``). Comment ``replies`` (``""`` or a Listing) are
    flattened so every t1 is yielded, with ``replies`` blanked in the yielded dict; ``more``
    stubs are yielded too, for the caller to count as skipped.
    """
    stack: list[object] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("kind")
        data = node.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            continue
        if kind == "Listing":
            children = data.get("children")
            if isinstance(children, list):
                stack.extend(reversed(children))
            continue
        replies = data.get("replies")
        if kind == "t1" and replies not in (None, ""):
            data = {**data, "replies": ""}
            stack.append(replies)
        yield kind, data


def check_api_document(doc: object, where: str) -> None:
    """Raise DumpFormatError unless ``doc`` looks like saved Reddit API JSON or one record."""
    items = doc if isinstance(doc, list) else [doc]
    ok = bool(items) and all(
        isinstance(item, dict)
        and (
            item.get("kind") in ("Listing", "t1", "t3", "more")
            or (item.get("kind") is None and record_kind(item) is not None)
        )
        for item in items
    )
    if not ok:
        raise DumpFormatError(
            f"{where} is JSON but not a Reddit Listing, a /comments array or a dump record; "
            "pass Pushshift/Arctic Shift NDJSON dumps (.zst or plain) or saved API JSON"
        )
