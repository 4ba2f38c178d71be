"""Comment trees (``crowdsift.sources.reddit.threads``): any input gives a well-formed pre-order
tree; a valid tree comes back whole, in order, at any depth (none blows the recursion limit)."""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from strategies import IDS, examples, json_values, mutated

from crowdsift.sources.reddit.threads import comment_tree, flatten_listing

POST = "abc123"
ROOT = f"t3_{POST}"
KEYS = ["kind", "data", "id", "link_id", "parent_id", "replies", "children", "score"]


def check_tree(tree: list[dict[str, Any]], *, limit: int, depth: int) -> None:
    """Pre-order: each comment sits right under the post or under a comment placed before it."""
    assert len(tree) <= limit
    placed = {ROOT: -1}
    for comment in tree:
        level, parent = comment["depth"], comment["parent_id"]
        assert isinstance(level, int) and 0 <= level < depth
        assert placed.get(parent) == level - 1, (parent, level)
        comment_id = str(comment["id"]).strip()
        bare = comment_id[3:] if comment_id[:3] in ("t1_", "t3_") else comment_id
        assert f"t1_{bare}" not in placed, "a comment appears twice"
        placed[f"t1_{bare}"] = level


def _comment(comment_id: str, parent: str, score: int = 0) -> dict[str, Any]:
    return {
        "id": comment_id,
        "link_id": ROOT,
        "parent_id": parent,
        "body": f"body of {comment_id}",
        "score": score,
        "created_utc": 1_700_000_000,
    }


@st.composite
def trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid flat comments: unique ids, each parent the post or an earlier comment."""
    ids = draw(st.lists(IDS, min_size=1, max_size=25, unique=True))
    comments = []
    for index, comment_id in enumerate(ids):
        parent = (
            ROOT if index == 0 else draw(st.sampled_from([ROOT, *(f"t1_{i}" for i in ids[:index])]))
        )
        comments.append(_comment(comment_id, parent, draw(st.integers(-5, 5))))
    return comments


def nested(flat: list[dict[str, Any]], parent: str = ROOT) -> list[dict[str, Any]]:
    """Reddit's nested listing children for ``flat``, in the order ``comment_tree`` sorts."""
    ordered = comment_tree(flat, POST, limit=10**6, depth=10**6)
    children: dict[str, list[dict[str, Any]]] = {}
    for comment in ordered:
        node = {"kind": "t1", "data": {k: v for k, v in comment.items() if k != "depth"}}
        node["data"]["replies"] = ""
        children.setdefault(comment["parent_id"], []).append(node)
    for kids in children.values():
        for node in kids:
            replies = children.get(f"t1_{node['data']['id']}")
            if replies:
                node["data"]["replies"] = {"kind": "Listing", "data": {"children": replies}}
    return children.get(parent, [])


# --- (a) any input ----------------------------------------------------------------------------

ITEMS = st.lists(
    st.one_of(
        json_values(KEYS, max_leaves=6),
        trees().flatmap(lambda flat: mutated(flat[0])),
        trees().map(lambda flat: {"kind": "t1", "data": flat[-1]}),
    ),
    max_size=8,
)


@examples(150)
@given(items=ITEMS, limit=st.integers(-1, 30), depth=st.integers(-1, 6))
def test_any_flat_comments_give_a_well_formed_tree(
    items: list[Any], limit: int, depth: int
) -> None:
    tree = comment_tree(items, POST, limit=limit, depth=depth)
    if limit < 1 or depth < 1:
        assert tree == []
    else:
        check_tree(tree, limit=limit, depth=depth)


@examples(150)
@given(items=ITEMS, limit=st.integers(-1, 30), depth=st.integers(-1, 6))
def test_any_listing_children_give_a_well_formed_tree(
    items: list[Any], limit: int, depth: int
) -> None:
    tree = flatten_listing(items, POST, limit=limit, depth=depth)
    if limit < 1 or depth < 1:
        assert tree == []
        return
    check_tree(tree, limit=limit, depth=depth)
    assert all("replies" not in comment for comment in tree)


# --- (b) every valid comment kept -------------------------------------------------------------


@examples(100)
@given(
    flat=trees(),
    junk=st.lists(json_values(KEYS, max_leaves=4), max_size=5),
    order=st.randoms(use_true_random=False),
)
def test_junk_beside_a_valid_thread_drops_nothing_valid(
    flat: list[dict[str, Any]], junk: list[Any], order: Any
) -> None:
    """Junk items (not t1 dicts of this thread) are skipped; every valid comment is placed."""
    items: list[Any] = [*flat, *(j for j in junk if not (isinstance(j, dict) and j.get("link_id")))]
    order.shuffle(items)
    tree = comment_tree(items, POST, limit=10**6, depth=10**6)
    assert sorted(c["id"] for c in tree) == sorted(c["id"] for c in flat)
    assert tree == comment_tree(flat, POST, limit=10**6, depth=10**6)


@examples(100)
@given(
    flat=trees(),
    scores=st.lists(st.one_of(json_values(max_leaves=1), st.just(float("nan"))), max_size=25),
    order=st.randoms(use_true_random=False),
)
def test_the_tree_never_depends_on_input_order(
    flat: list[dict[str, Any]], scores: list[Any], order: Any
) -> None:
    """Siblings are sorted by score, date and id, whatever the scores hold (NaN included)."""
    for comment, score in zip(flat, scores, strict=False):
        comment["score"] = score
    shuffled = list(flat)
    order.shuffle(shuffled)
    assert comment_tree(shuffled, POST, limit=100, depth=100) == comment_tree(
        flat, POST, limit=100, depth=100
    )


# --- (c) round trip: flat → nested listing → flat ---------------------------------------------


@examples(100)
@given(flat=trees())
def test_a_nested_listing_flattens_back_to_the_same_tree(flat: list[dict[str, Any]]) -> None:
    expected = comment_tree(flat, POST, limit=10**6, depth=10**6)
    tree = flatten_listing(nested(flat), POST, limit=10**6, depth=10**6)
    assert [(c["id"], c["depth"], c["parent_id"]) for c in tree] == [
        (c["id"], c["depth"], c["parent_id"]) for c in expected
    ]


def test_threads_far_deeper_than_the_recursion_limit_are_walked_whole() -> None:
    """A reply chain 5x the recursion limit: both shapes, no RecursionError, nothing lost."""
    length = sys.getrecursionlimit() * 5
    flat = [_comment("c0", ROOT)] + [_comment(f"c{i}", f"t1_c{i - 1}") for i in range(1, length)]
    tree = comment_tree(flat, POST, limit=length, depth=length)
    assert [c["depth"] for c in tree] == list(range(length))
    children: list[Any] = []
    for comment in reversed(flat):  # built inside out, without recursion
        data = {**comment, "replies": {"kind": "Listing", "data": {"children": children}}}
        children = [{"kind": "t1", "data": data}]
    walked = flatten_listing(children, POST, limit=length, depth=length)
    assert [c["id"] for c in walked] == [c["id"] for c in flat]
    check_tree(walked, limit=length, depth=length)
