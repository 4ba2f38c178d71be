"""Saved API answers: Reddit's Listings, things and ``/comments/{id}`` arrays, and
Pushshift / Arctic Shift search answers (``{"data": [...], "metadata": …}``).

Comment trees nest replies as a Listing under ``replies`` (or ``""``); every t1 is kept, the
tree flattened, and ``more`` stubs (comments Reddit did not send) are passed on for the
importer to count as skipped. A search answer's records carry no ``kind``: each is a post or a
comment by its fields (``record_kind``), as a dump line is. The same answers saved one per line
(NDJSON) arrive here line by line (``parse.ApiDocument``).
"""

from __future__ import annotations

from collections.abc import Iterator

from crowdsift.core.errors import DumpFormatError
from crowdsift.sources.archive.parse import (
    BadRecordError,
    RawDict,
    Record,
    is_search_answer,
    record_from_dict,
    record_kind,
)


def iter_api_things(doc: object) -> Iterator[tuple[str, RawDict]]:
    """Every thing in a saved API answer, depth first, as ``(kind, data)``.

    Accepts a Listing, a single thing, a bare record, a search answer's ``data`` list, or a
    list of them (``/comments/{id}`` answers with ``[post listing, comment listing]``).
    Comment ``replies`` (``""`` or a Listing) are flattened so every t1 is yielded, with
    ``replies`` blanked in the yielded dict; ``more`` stubs are yielded too, for the caller to
    count as skipped. A record without ``kind`` is yielded with the kind its fields say ("" if
    neither post nor comment).
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
        if kind is None:
            if is_search_answer(node):
                stack.extend(reversed(node["data"]))
            else:
                yield record_kind(node) or "", node
            continue
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


def api_records(
    doc: object, retrieved_default: int = 0
) -> Iterator[Record | BadRecordError | None]:
    """The rows of a saved API answer, in document order: a row, None for a thing that is
    neither post nor comment (a ``more`` stub), or the BadRecordError of a thing that cannot
    be one (the caller counts it and goes on)."""
    for kind, data in iter_api_things(doc):
        try:
            yield record_from_dict(data, kind=kind, retrieved_default=retrieved_default)
        except BadRecordError as exc:
            yield exc


def document_problem(doc: object) -> str | None:
    """Why ``doc`` is not a saved API answer or records (a phrase), or None when it is one."""
    if isinstance(doc, dict) and doc.get("error") and not doc.get("data"):
        return f"a saved error answer, not data (error: {str(doc['error'])[:200]})"
    items = doc if isinstance(doc, list) else [doc]
    ok = bool(items) and all(
        isinstance(item, dict)
        and (
            item.get("kind") in ("Listing", "t1", "t3", "more")
            or (item.get("kind") is None and (record_kind(item) or is_search_answer(item)))
        )
        for item in items
    )
    if ok:
        return None
    return (
        "JSON, but not a Reddit Listing, a /comments array, a Pushshift or Arctic Shift "
        'answer ({"data": [...]}) or a dump record'
    )


def check_api_document(doc: object, where: str) -> None:
    """Raise DumpFormatError unless ``doc`` looks like a saved API answer or records."""
    problem = document_problem(doc)
    if problem is not None:
        raise DumpFormatError(
            f"{where} is {problem}; pass NDJSON dumps (.zst or plain), saved API JSON or CSV "
            "with a header"
        )
