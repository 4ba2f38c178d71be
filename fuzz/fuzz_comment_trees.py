"""Fuzz target: comment trees from flat comments (``comment_tree``) and nested listings.

Byte 0 is the limit, byte 1 the depth, byte 2 how many levels (x 8) of synthetic replies to
nest the decoded JSON under, so trees deeper than any recursion limit are tried too; the rest
is JSON: the comments (or listing children). Findings: any exception, or a result that is not
a pre-order walk (each comment placed right under the post or a comment placed before it,
depth 0 at the top, no id twice, at most ``limit`` comments, none deeper than ``depth``).

    python fuzz/fuzz_comment_trees.py fuzz/corpus/comment_trees -max_total_time=30
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    from crowdsift.sources.reddit.threads import comment_tree, flatten_listing
    from harness import quiet_logs

POST = "abc123"


def _decoded(data: bytes) -> Any:
    """The comments as decoded JSON; None when the bytes are not JSON (the sources' problem)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _nested(children: list[Any], levels: int) -> list[Any]:
    """``children`` as the replies of a chain of ``levels`` comments, built without recursion."""
    for level in range(levels, 0, -1):
        parent = f"t1_deep{level - 1}" if level > 1 else f"t3_{POST}"
        data = {
            "id": f"deep{level}",
            "link_id": f"t3_{POST}",
            "parent_id": parent,
            "body": "deep",
            "replies": {"kind": "Listing", "data": {"children": children}},
        }
        children = [{"kind": "t1", "data": data}]
    return children


def check_tree(tree: list[dict[str, Any]], *, limit: int, depth: int) -> None:
    assert len(tree) <= limit
    placed: dict[str, int] = {f"t3_{POST}": -1}
    for comment in tree:
        level, parent = comment["depth"], comment["parent_id"]
        assert isinstance(level, int) and 0 <= level < depth
        assert placed.get(parent) == level - 1, (parent, level)
        comment_id = str(comment["id"]).strip()
        bare = comment_id[3:] if comment_id[:3] in ("t1_", "t3_") else comment_id
        assert f"t1_{bare}" not in placed
        placed[f"t1_{bare}"] = level


def TestOneInput(data: bytes) -> None:
    if len(data) < 3:
        return
    limit, depth, levels = data[0] % 128 + 1, data[1] % 16 + 1, data[2] * 8
    doc = _decoded(data[3:])
    items = doc if isinstance(doc, list) else [doc]
    check_tree(comment_tree(items, POST, limit=limit, depth=depth), limit=limit, depth=depth)
    if levels:
        items, depth = _nested(items, levels), levels + depth
    tree = flatten_listing(items, POST, limit=limit + levels, depth=depth)
    assert all("replies" not in comment for comment in tree)
    check_tree(tree, limit=limit + levels, depth=depth)


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
