"""Deduplication: URL normalisation, same id, same link, alike titles, survivor choice, speed."""

from __future__ import annotations

import random
from typing import Any

import pytest

from crowdsift.core.models import Candidate
from crowdsift.pipeline.fetch.dedupe import dedupe, normalise_title, normalise_url
from crowdsift.testing.factories import make_post

SIMILARITY = 90.0


def _candidate(
    post_id: str,
    title: str,
    *,
    strategies: list[Any] | None = None,
    karma: int = 10,
    comments: int = 0,
    link_url: str | None = None,
    subreddit: str = "homelab",
) -> Candidate:
    post = make_post(post_id, title, subreddit=subreddit, karma=karma)
    post = post.model_copy(update={"num_comments": comments})
    return Candidate(post=post, strategies=strategies or ["targeted"], link_url=link_url)


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("https://www.example.com/a/b/", "example.com/a/b"),
        ("http://EXAMPLE.com:443/a#section", "example.com/a"),
        ("https://m.example.com/A/Case", "example.com/A/Case"),
        ("example.com/x?utm_source=rd&utm_medium=social&id=7&ref=front", "example.com/x?id=7"),
        ("https://example.com/x?b=2&a=1&fbclid=zz&share_id=q", "example.com/x?a=1&b=2"),
        ("https://www.reddit.com/r/homelab/comments/AbC12/my_build/", "reddit.com/comments/abc12"),
        (
            "https://old.reddit.com/r/homelab/comments/abc12/my_build/?context=3",
            "reddit.com/comments/abc12",
        ),
        (
            "https://np.reddit.com/r/homelab/comments/abc12/my_build/xyz9/",
            "reddit.com/comments/abc12",
        ),
        ("https://reddit.com/comments/abc12", "reddit.com/comments/abc12"),
        ("https://www.reddit.com/gallery/abc12", "reddit.com/comments/abc12"),
        ("https://redd.it/abc12", "reddit.com/comments/abc12"),
        ("https://www.reddit.com/r/homelab/", "reddit.com/r/homelab"),
        ("  ", ""),
    ],
)
def test_normalise_url(url: str, normalised: str) -> None:
    assert normalise_url(url) == normalised


def test_normalise_title() -> None:
    assert normalise_title("[x-post from r/selfhosted] My Proxmox build!! 🚀") == (
        "my proxmox build"
    )
    assert normalise_title("My Proxmox build (crosspost)") == "my proxmox build"
    assert normalise_title("My Proxmox build, x-post from r/homelab") == "my proxmox build"
    assert normalise_title("Cross-posted: My_Proxmox—build") == "my proxmox build"


def test_same_post_id_merges_strategies_in_strategy_order() -> None:
    outcome = dedupe(
        [
            _candidate("p1", "Proxmox cluster on three mini PCs", strategies=["timeless"]),
            _candidate("p2", "Completely different thread about NAS drives"),
            _candidate("p1", "Proxmox cluster on three mini PCs", strategies=["sniper"]),
            _candidate("p1", "Proxmox cluster on three mini PCs", strategies=["targeted"]),
        ],
        title_similarity=SIMILARITY,
    )
    assert [c.post.id for c in outcome.kept] == ["p1", "p2"]
    assert outcome.kept[0].strategies == ["targeted", "sniper", "timeless"]
    assert outcome.kept[0].duplicates == []
    assert outcome.removed == 2


def test_link_posts_to_one_article_are_one_and_the_more_engaged_survives() -> None:
    outcome = dedupe(
        [
            _candidate(
                "a1", "Great article on ZFS", link_url="https://www.blog.io/zfs/?utm_source=x"
            ),
            _candidate(
                "b2",
                "ZFS explained (must read)",
                link_url="http://blog.io/zfs#top",
                karma=50,
                strategies=["ai_intent"],
            ),
        ],
        title_similarity=SIMILARITY,
    )
    [kept] = outcome.kept
    assert kept.post.id == "b2"
    assert kept.strategies == ["targeted", "ai_intent"]
    assert kept.duplicates == ["a1"]
    assert outcome.removed == 1


def test_crosspost_linking_to_the_original_is_folded() -> None:
    original = _candidate("orig1", "My rack after two years", karma=300)
    crosspost = _candidate(
        "xp22",
        "Look at this rack",
        subreddit="homelabporn",
        link_url="https://www.reddit.com/r/homelab/comments/orig1/my_rack_after_two_years/",
        strategies=["sniper"],
    )
    outcome = dedupe([crosspost, original], title_similarity=SIMILARITY)
    [kept] = outcome.kept
    assert kept.post.id == "orig1"
    assert kept.duplicates == ["xp22"]
    assert kept.strategies == ["targeted", "sniper"]


def test_alike_titles_are_one_post() -> None:
    outcome = dedupe(
        [
            _candidate("a1", "[x-post r/selfhosted] My Proxmox cluster build 🚀", comments=3),
            _candidate("b2", "My Proxmox cluster build!", comments=40),
            _candidate("c3", "Build my Proxmox cluster", comments=1),  # same words, reordered
        ],
        title_similarity=SIMILARITY,
    )
    [kept] = outcome.kept
    assert kept.post.id == "b2"
    assert kept.duplicates == ["a1", "c3"]


def test_different_titles_stay_apart() -> None:
    outcome = dedupe(
        [
            _candidate("a1", "My Proxmox cluster build"),
            _candidate("b2", "My TrueNAS backup strategy"),
            _candidate("c3", "My Proxmox cluster died"),
        ],
        title_similarity=SIMILARITY,
    )
    assert [c.post.id for c in outcome.kept] == ["a1", "b2", "c3"]
    assert outcome.removed == 0


def test_alike_titles_with_different_numbers_are_different_threads() -> None:
    outcome = dedupe(
        [
            _candidate("a1", "Airflow vs Dagster for a small data team in 2023"),
            _candidate("b2", "Airflow vs Dagster for a small data team in 2024"),
            _candidate("c3", "Airflow vs Dagster for a small data team in 2024!"),
        ],
        title_similarity=SIMILARITY,
    )
    assert [c.post.id for c in outcome.kept] == ["a1", "b2"]
    assert outcome.kept[1].duplicates == ["c3"]


def test_threshold_is_honoured() -> None:
    pair = [
        _candidate("a1", "Proxmox cluster on three mini PCs"),
        _candidate("b2", "Proxmox cluster on four mini PCs"),
    ]
    assert len(dedupe(pair, title_similarity=99.0).kept) == 2
    assert len(dedupe(pair, title_similarity=80.0).kept) == 1


def test_short_generic_titles_only_match_by_id_or_url() -> None:
    outcome = dedupe(
        [_candidate("a1", "Help!"), _candidate("b2", "help"), _candidate("c3", "Question")],
        title_similarity=SIMILARITY,
    )
    assert len(outcome.kept) == 3


def test_tie_keeps_the_earliest_and_survivors_keep_first_seen_order() -> None:
    outcome = dedupe(
        [
            _candidate("solo", "Something unrelated about UPS batteries"),
            _candidate("x1", "Ten things I wish I knew about ZFS", karma=20),
            _candidate("x2", "10 things I wish I knew about ZFS!!", karma=0),
            _candidate("x3", "Ten things I wish I knew about ZFS", karma=20),
        ],
        title_similarity=85.0,
    )
    assert [c.post.id for c in outcome.kept] == ["solo", "x1"]
    assert outcome.kept[1].duplicates == ["x2", "x3"]


def test_groups_are_transitive() -> None:
    # a~b by link, b~c by title: one post
    outcome = dedupe(
        [
            _candidate("a1", "Totally different wording here", link_url="https://blog.io/post"),
            _candidate("b2", "Home server power usage explained", link_url="https://blog.io/post/"),
            _candidate("c3", "Home server power usage explained", karma=99),
        ],
        title_similarity=SIMILARITY,
    )
    [kept] = outcome.kept
    assert kept.post.id == "c3"
    assert sorted(kept.duplicates) == ["a1", "b2"]


def test_empty_input() -> None:
    outcome = dedupe([], title_similarity=SIMILARITY)
    assert (outcome.kept, outcome.removed) == ([], 0)


def test_300_candidates_lose_only_their_repeated_links() -> None:
    """Speed is bench_reddit's business (a ratio, not a wall-clock assert in a unit test)."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def title() -> str:
        return " ".join("".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(6))

    candidates = [
        _candidate(f"p{i}", title(), link_url=f"https://blog.io/{i % 250}") for i in range(300)
    ]
    outcome = dedupe(candidates, title_similarity=SIMILARITY)
    assert outcome.removed == 50  # the repeated links, and nothing else
    assert len({c.link_url for c in outcome.kept}) == 250
