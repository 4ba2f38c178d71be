"""comment_tree (flat comments → top-first pre-order tree) and flatten_listing (nested)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsift.sources.reddit.threads import collapsed_tree, comment_tree, flatten_listing
from crowdsift.testing.factories import raw_comment
from tests.support.reddit_listings import CommentTree, listing


def c(comment_id: str, parent: str = "t3_p1", score: int = 1, **extra: Any) -> dict[str, Any]:
    """A comment of thread p1 (``parent`` is a fullname; default top-level)."""
    return raw_comment(comment_id, "p1", parent_id=parent, score=score, **extra)


# A small thread; scores make the "top" order differ from the input order at every level.
#   a(5)            b(9)              d(1)
#   ├ a1(1)         ├ b1(3)
#   └ a2(4)         │ └ b1x(7)
#                   │   └ b1xy(2)
#                   └ b2(3, older than b1)
THREAD = [
    c("a", score=5),
    c("a1", "t1_a", score=1),
    c("d", score=1),
    c("b1", "t1_b", score=3, created_utc=200),
    c("b", score=9),
    c("a2", "t1_a", score=4),
    c("b1x", "t1_b1", score=7),
    c("b2", "t1_b", score=3, created_utc=100),
    c("b1xy", "t1_b1x", score=2),
]


def ids(comments: list[dict[str, Any]]) -> list[str]:
    return [comment["id"] for comment in comments]


# --- comment_tree ---------------------------------------------------------------------------


def test_pre_order_with_top_siblings_first() -> None:
    got = comment_tree(THREAD, "p1", limit=100, depth=10)
    assert ids(got) == ["b", "b2", "b1", "b1x", "b1xy", "a", "a2", "a1", "d"]
    assert [x["depth"] for x in got] == [0, 1, 1, 2, 3, 0, 1, 1, 0]
    assert [x["parent_id"] for x in got[:5]] == ["t3_p1", "t1_b", "t1_b", "t1_b1", "t1_b1x"]


def test_input_order_does_not_matter() -> None:
    shuffled = list(THREAD)
    random.Random(7).shuffle(shuffled)
    assert comment_tree(shuffled, "p1", limit=100, depth=10) == comment_tree(
        THREAD, "p1", limit=100, depth=10
    )


def test_depth_cut() -> None:
    assert ids(comment_tree(THREAD, "p1", limit=100, depth=1)) == ["b", "a", "d"]
    assert ids(comment_tree(THREAD, "p1", limit=100, depth=2)) == [
        "b", "b2", "b1", "a", "a2", "a1", "d",
    ]  # fmt: skip
    assert comment_tree(THREAD, "p1", limit=100, depth=0) == []


def test_limit_cut_keeps_the_pre_order_prefix() -> None:
    assert ids(comment_tree(THREAD, "p1", limit=4, depth=10)) == ["b", "b2", "b1", "b1x"]
    assert comment_tree(THREAD, "p1", limit=0, depth=5) == []
    assert comment_tree(THREAD, "p1", limit=-3, depth=5) == []


def test_sibling_ties_break_oldest_first_then_by_id() -> None:
    comments = [
        c("z", score=2, created_utc=50),
        c("y", score=2, created_utc=10),
        c("m", score=2, created_utc=10),
        c("top", score=3, created_utc=99),
    ]
    assert ids(comment_tree(comments, "p1", limit=10, depth=1)) == ["top", "m", "y", "z"]


def test_orphans_are_dropped_not_promoted() -> None:
    comments = [*THREAD, c("lost", "t1_gone", score=100), c("lost2", "t1_lost", score=100)]
    got = comment_tree(comments, "p1", limit=100, depth=10)
    assert "lost" not in ids(got) and "lost2" not in ids(got)
    assert len(got) == len(THREAD)


def test_other_threads_comments_are_dropped_even_under_a_matching_parent() -> None:
    alien = raw_comment("x", "p2", parent_id="t3_p1", score=99)
    alien_reply = raw_comment("xr", "p2", parent_id="t1_a", score=99)
    no_link = {k: v for k, v in c("nolink", score=99).items() if k != "link_id"}
    got = comment_tree([*THREAD, alien, alien_reply, no_link], "p1", limit=100, depth=10)
    assert not {"x", "xr", "nolink"} & set(ids(got))


def test_post_id_with_prefix_bare_parent_ids_and_wrappers() -> None:
    comments = [
        {"kind": "t1", "data": c("w", score=3)},
        {"kind": "more", "data": {"id": "m", "children": ["q"], "parent_id": "t3_p1"}},
        c("bare_top", "p1", score=2),  # a bare parent equal to the post id is the post
        c("bare_reply", "w", score=1),  # a bare parent of another id is a comment
        "not a comment",
    ]
    got = comment_tree(comments, "t3_p1", limit=10, depth=3)
    assert ids(got) == ["w", "bare_reply", "bare_top"]
    assert [x["parent_id"] for x in got] == ["t3_p1", "t1_w", "t3_p1"]


def test_duplicates_keep_the_first_and_self_parents_vanish() -> None:
    comments = [c("a", score=5), c("a", score=50, body="again"), c("loop", "t1_loop")]
    got = comment_tree(comments, "p1", limit=10, depth=5)
    assert ids(got) == ["a"]
    assert got[0]["score"] == 5


def test_inputs_are_not_changed() -> None:
    given_comments = copy.deepcopy(THREAD)
    got = comment_tree(given_comments, "p1", limit=100, depth=10)
    assert given_comments == THREAD
    assert all("depth" not in x for x in given_comments)
    got[0]["body"] = "edited"
    assert given_comments[4]["body"] == THREAD[4]["body"]


def test_missing_or_odd_scores_sort_as_zero() -> None:
    comments = [c("s", score="7"), c("n", score=None), c("neg", score=-1), c("t", score=True)]
    assert ids(comment_tree(comments, "p1", limit=10, depth=1)) == ["s", "n", "t", "neg"]


@st.composite
def forests(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, int]:
    """Random threads: each comment hangs under the post, an earlier comment, nothing, or
    belongs to another thread; scores collide often; input order shuffled."""
    size = draw(st.integers(0, 40))
    comments = []
    for index in range(size):
        kind = draw(st.sampled_from(["top", "reply", "reply", "reply", "orphan", "alien"]))
        if kind == "reply" and index:
            parent = f"t1_n{draw(st.integers(0, index - 1))}"
        elif kind == "orphan":
            parent = f"t1_ghost{index}"
        else:
            parent = "t3_p1"
        post = "p2" if kind == "alien" else "p1"
        score = draw(st.integers(-2, 3))
        created = draw(st.integers(0, 3))
        comments.append(
            raw_comment(f"n{index}", post, parent_id=parent, score=score, created_utc=created)
        )
    order = draw(st.permutations(comments))
    return list(order), draw(st.integers(1, 50)), draw(st.integers(1, 6))


def _reachable_depths(comments: list[dict[str, Any]], max_depth: int) -> dict[str, int]:
    """Independent of the code under test: each comment's depth if it hangs from the post."""
    by_id = {x["id"]: x for x in comments if x["link_id"] == "t3_p1"}
    depths: dict[str, int] = {}
    for comment_id in by_id:
        chain, node = 0, by_id[comment_id]
        while node["parent_id"].startswith("t1_") and node["parent_id"][3:] in by_id:
            node, chain = by_id[node["parent_id"][3:]], chain + 1
        if node["parent_id"] == "t3_p1" and chain < max_depth:
            depths[comment_id] = chain
    return depths


@settings(max_examples=150, deadline=None)
@given(forests())
def test_property_every_output_is_placed_under_an_earlier_one(
    case: tuple[list[dict[str, Any]], int, int],
) -> None:
    comments, limit, max_depth = case
    before = copy.deepcopy(comments)
    got = comment_tree(comments, "p1", limit=limit, depth=max_depth)

    assert comments == before
    assert len(got) <= limit
    expected_depths = _reachable_depths(comments, max_depth)
    placed: dict[str, int] = {}
    for comment in got:
        parent = comment["parent_id"]
        if parent == "t3_p1":
            assert comment["depth"] == 0
        else:
            assert parent[3:] in placed, "parent must come earlier in the output"
            assert comment["depth"] == placed[parent[3:]] + 1
        assert comment["depth"] < max_depth
        assert comment["link_id"] == "t3_p1"
        assert expected_depths[comment["id"]] == comment["depth"]
        placed[comment["id"]] = comment["depth"]
    assert len(placed) == len(got)  # no repeats
    if len(got) < limit:
        assert set(placed) == set(expected_depths)  # nothing reachable was left out
    else:
        assert len(got) == min(limit, len(expected_depths))


@settings(max_examples=100, deadline=None)
@given(forests())
def test_property_siblings_appear_best_first(case: tuple[list[dict[str, Any]], int, int]) -> None:
    comments, limit, max_depth = case
    got = comment_tree(comments, "p1", limit=limit, depth=max_depth)
    last_key: dict[str, tuple[int, int, str]] = {}
    for comment in got:
        key = (-comment["score"], comment["created_utc"], comment["id"])
        previous = last_key.get(comment["parent_id"])
        assert previous is None or previous < key
        last_key[comment["parent_id"]] = key


# --- flatten_listing ------------------------------------------------------------------------


def rendered(comments: list[dict[str, Any]], *, limit: int, depth: int) -> list[Any]:
    """Reddit's nested Listing children for ``comments`` (the fake server's renderer)."""
    tree = CommentTree("p1", comments, sort="top")
    children: list[Any] = tree.render(limit=limit, depth=depth)["data"]["children"]
    return children


def test_flatten_matches_the_flat_tree_for_a_top_sorted_listing() -> None:
    distinct = [c(f"k{i}", x["parent_id"], score=100 - i) for i, x in enumerate(THREAD)]
    children = rendered(distinct, limit=100, depth=10)
    flat = flatten_listing(children, "p1", limit=100, depth=10)
    assert [(x["id"], x["depth"]) for x in flat] == [
        (x["id"], x["depth"]) for x in comment_tree(distinct, "p1", limit=100, depth=10)
    ]
    assert all("replies" not in x for x in flat)
    assert [x["parent_id"] for x in flat] == [
        x["parent_id"] for x in comment_tree(distinct, "p1", limit=100, depth=10)
    ]


def test_flatten_keeps_reddits_order_and_skips_more_stubs() -> None:
    children = rendered(THREAD, limit=5, depth=3)  # "more" stubs for the cut siblings/levels
    kinds = {child["kind"] for child in children}
    assert "more" in kinds
    flat = flatten_listing(children, "p1", limit=100, depth=3)
    # The server breaks the b1/b2 score tie by insertion order (comment_tree would put the
    # older b2 first): Reddit's order is kept, not re-sorted.
    assert ids(flat) == ["b", "b1", "b1x", "b2", "a"]
    assert [x["depth"] for x in flat] == [0, 1, 2, 1, 0]


def test_flatten_order_is_not_resorted() -> None:
    low_first = [
        {"kind": "t1", "data": {**c("low", score=1), "replies": ""}},
        {"kind": "t1", "data": {**c("high", score=50), "replies": ""}},
    ]
    assert ids(flatten_listing(low_first, "p1", limit=10, depth=2)) == ["low", "high"]


def test_flatten_depth_and_limit_cut() -> None:
    children = rendered(THREAD, limit=100, depth=10)
    assert ids(flatten_listing(children, "t3_p1", limit=100, depth=2)) == [
        "b", "b1", "b2", "a", "a2", "a1", "d",
    ]  # fmt: skip
    assert ids(flatten_listing(children, "p1", limit=3, depth=10)) == ["b", "b1", "b1x"]
    assert flatten_listing(children, "p1", limit=0, depth=10) == []
    assert flatten_listing(children, "p1", limit=10, depth=0) == []


def test_flatten_drops_other_threads_and_misplaced_comments_with_their_replies() -> None:
    def nested(data: dict[str, Any], *replies: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "t1", "data": {**data, "replies": listing(replies) if replies else ""}}

    alien = raw_comment("alien", "p2", parent_id="t3_p1")
    children = [
        nested(alien, nested(c("r", "t1_alien"))),  # its reply goes with it
        nested(c("ok"), nested(c("m", "t1_elsewhere"))),  # nested under ok, claims elsewhere
        {"kind": "more", "data": {"id": "_", "children": []}},
    ]
    assert ids(flatten_listing(children, "p1", limit=10, depth=5)) == ["ok"]


def test_flatten_does_not_change_its_input() -> None:
    children = rendered(THREAD, limit=100, depth=10)
    before = copy.deepcopy(children)
    flatten_listing(children, "p1", limit=100, depth=10)
    assert children == before


@pytest.mark.parametrize("replies", ["", None, {"kind": "Listing"}, {"data": {"children": 3}}])
def test_flatten_tolerates_empty_or_odd_replies(replies: object) -> None:
    children = [{"kind": "t1", "data": {**c("only"), "replies": replies}}]
    assert ids(flatten_listing(children, "p1", limit=10, depth=5)) == ["only"]


def test_collapsed_tree_unnests_and_lists_collapsed_ids_shallowest_first() -> None:
    items = [
        {"kind": "t1", "data": {"id": "a", "replies": {"kind": "Listing", "data": {"children": [
            {"kind": "t1", "data": {"id": "b", "replies": [{"kind": "t1", "data": {"id": "e"}}]}},
            {"kind": "more", "data": {"children": ["d1", "d2"]}},
        ]}}}},
        {"kind": "more", "data": {"children": ["t1_c", "d1"]}},
        "junk",
        {"kind": "more", "data": {"children": "not a list"}},
    ]  # fmt: skip
    comments, collapsed = collapsed_tree(items)
    assert [c["id"] for c in comments] == ["a", "b", "e"]
    assert all("replies" not in c for c in comments)
    assert "replies" in items[0]["data"]  # type: ignore[index, operator]  # inputs untouched
    assert collapsed == ["c", "d1", "d2"]  # the top-level stub first, each id once
