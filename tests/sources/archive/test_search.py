"""ArchiveSource: Reddit-like search (query safety, sorts, time filter, cursors) and comments."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsift.core.errors import ArchiveError, SubredditUnavailableError
from crowdsift.core.source import RedditSource
from crowdsift.sources.archive import db, search
from crowdsift.sources.archive.fts_query import build_match
from crowdsift.sources.archive.importer import import_files
from crowdsift.sources.archive.search import lower_bound, search_posts
from crowdsift.sources.archive.source import ArchiveSource
from crowdsift.sources.reddit.pagination import paginate_search

Dump = Callable[[str, list[Any]], Path]


@pytest.fixture
def source(small_archive: Path, kit: Any) -> Any:
    src = ArchiveSource(small_archive, clock=kit.clock)
    yield src
    src.close()


def ids(page: Any) -> list[str]:
    return [p["id"] for p in page.posts]


def test_archive_source_is_a_reddit_source(source: ArchiveSource) -> None:
    assert isinstance(source, RedditSource)
    assert source.name == "archive"


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("sony battery", '{title selftext} : (("sony"* AND "battery"*))'),
        ("sony OR bose", '{title selftext} : (("sony"*) OR ("bose"*))'),
        ("a b OR c", '{title selftext} : (("a" AND "b") OR ("c"))'),
        (
            '"noise cancelling" sony',
            '{title selftext} : ((NEAR("noise"* "cancelling"*, 1) AND "sony"*))',
        ),
        ('"plaud.ai app"', '{title selftext} : (("plaud.ai app"))'),
        ("tapcons", '{title selftext} : (("tapcon"*))'),
        ("glass", '{title selftext} : (("glass"*))'),
        ("plaud.ai", '{title selftext} : (("plaud.ai"))'),
        ('say "hi', '{title selftext} : (("say" AND """hi"))'),
        ("sony AND bose or", '{title selftext} : (("sony"* AND "bose"* AND "or"))'),
        ("- : * OR", None),
        ("", None),
    ],
)
def test_build_match_quotes_every_word(term: str, expected: str | None) -> None:
    assert build_match(term) == expected


HOSTILE = [
    "plaud.ai",
    "c++",
    '"quoted phrase"',
    '"unbalanced',
    "-",
    "a:b",
    "title:sony",
    "*",
    "sony*",
    "NOT sony",
    "sony AND",
    "OR OR OR",
    "NEAR(sony battery)",
    "^sony",
    "(sony",
    "sony)",
    "{title}: x",
    "'; DROP TABLE posts; --",
    "😀",
    "\x00",
    "sony\x00battery",
    '"sony\x00"',
]


@pytest.mark.parametrize("term", HOSTILE)
def test_hostile_punctuation_never_raises(source: ArchiveSource, term: str) -> None:
    page = source.search_subreddit("headphones", term)
    assert page.after is None or page.posts


def test_plain_words_match_plural_and_singular(source: ArchiveSource) -> None:
    """The index has no stemmer: a question's "batteries" must still find "battery"."""
    assert ids(source.search_subreddit("headphones", "battery")) != []
    assert set(ids(source.search_subreddit("headphones", "sonys battery", limit=100))) == set(
        ids(source.search_subreddit("headphones", "sony battery", limit=100))
    )


def test_punctuated_words_match_as_phrases(source: ArchiveSource) -> None:
    assert ids(source.search_subreddit("headphones", "WH-1000XM5")) == ["p1"]
    assert ids(source.search_subreddit("headphones", "sony*")) != []  # literal, still matches


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40))
def test_no_term_whatsoever_raises(source: ArchiveSource, term: str) -> None:
    source.search_subreddit("headphones", term, limit=5)


def test_words_are_anded_and_or_means_or(source: ArchiveSource) -> None:
    assert set(ids(source.search_subreddit("headphones", "sony battery", limit=100))) == {
        "p1",
        "p2",
        "p3",
        "p5",
    }
    assert set(ids(source.search_subreddit("headphones", "bose OR cheap"))) == {"p4", "p2"}


def test_search_is_restricted_to_the_subreddit(source: ArchiveSource) -> None:
    assert "q1" not in ids(source.search_subreddit("headphones", "sony", limit=100))
    assert ids(source.search_subreddit("r/AudioPhile/", "sony")) == ["q1"]


def test_unknown_subreddit_is_unavailable(source: ArchiveSource) -> None:
    with pytest.raises(SubredditUnavailableError) as info:
        source.search_subreddit("cooking", "sony")
    assert info.value.subreddit == "cooking"
    assert "archive stats" in info.value.reason


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("new", ["p1", "p2", "p3", "p4", "p5"]),
        ("top", ["p2", "p5", "p1", "p3", "p4"]),
        ("comments", ["p3", "p2", "p1", "p4", "p5"]),
        ("hot", ["p1", "p2", "p3", "p4", "p5"]),
    ],
)
def test_sort_orders_are_exact(source: ArchiveSource, sort: Any, expected: list[str]) -> None:
    assert ids(source.search_subreddit("headphones", "sony", sort=sort, limit=100)) == expected


def test_relevance_weights_title_above_body(source: ArchiveSource) -> None:
    # "battery" is in p3's title; in the others only in the body.
    assert ids(source.search_subreddit("headphones", "battery", limit=100))[0] == "p3"


@pytest.mark.parametrize(
    ("time_filter", "expected"),
    [
        ("hour", ["p1"]),
        ("day", ["p1"]),
        ("week", ["p1", "p2"]),
        ("month", ["p1", "p2", "p3"]),
        ("year", ["p1", "p2", "p3", "p4"]),
        ("all", ["p1", "p2", "p3", "p4", "p5"]),
    ],
)
def test_time_filter_is_a_lower_bound_from_the_clock(
    source: ArchiveSource, time_filter: Any, expected: list[str]
) -> None:
    page = source.search_subreddit("headphones", "sony", sort="new", time_filter=time_filter)
    assert ids(page) == expected


def test_time_filter_boundary_is_inclusive(kit: Any) -> None:
    assert lower_bound("day", kit.NOW) == kit.NOW_TS - kit.DAY
    assert lower_bound("all", kit.NOW) < 0


@pytest.mark.parametrize("sort", ["relevance", "new", "top", "hot", "comments"])
def test_pages_walk_every_match_once_and_end_with_none(source: ArchiveSource, sort: Any) -> None:
    seen, after = walk_pages(
        lambda after: source.search_subreddit("headphones", "sony", sort=sort, limit=2, after=after)
    )
    full = ids(source.search_subreddit("headphones", "sony", sort=sort, limit=100))
    assert seen == full and len(full) == 5
    assert after is None


def walk_pages(page_after: Callable[[str | None], Any]) -> tuple[list[str], str | None]:
    """The ids of every page, cursor after cursor (at most 10 pages), and the last cursor."""
    seen: list[str] = []
    after = None
    for _ in range(10):
        page = page_after(after)
        seen += ids(page)
        after = page.after
        if after is None:
            break
    return seen, after


def test_limit_is_clamped(source: ArchiveSource) -> None:
    assert len(source.search_subreddit("headphones", "sony", limit=0).posts) == 1
    assert len(source.search_subreddit("headphones", "sony", limit=1000).posts) == 5


def test_paginate_search_over_a_larger_archive(dump: Dump, archive_path: Path, kit: Any) -> None:
    posts = [
        kit.post(f"m{i:03d}", title=f"sony {i}", score=i % 7, created=kit.NOW_TS - i * 60)
        for i in range(237)
    ]
    import_files([dump("RS_many.zst", posts)], archive_path)
    with ArchiveSource(archive_path, clock=kit.clock) as src:
        for sort in ("relevance", "new", "top"):
            walked = [
                p["id"]
                for p in paginate_search(
                    src, "headphones", "sony", sort=sort, page_size=25, cap=1000
                )
            ]
            assert len(walked) == 237 and len(set(walked)) == 237
        assert src.stats.pages >= 3 * 10


def test_results_are_normalised_raw_dicts(dump: Dump, archive_path: Path, kit: Any) -> None:
    old = kit.post("o1", title="Old sony post!", created="1199145600", permalink=None)
    del old["permalink"]
    import_files([dump("RS_old.ndjson", [old])], archive_path)
    with ArchiveSource(archive_path, clock=kit.clock) as src:
        (raw,) = src.search_subreddit("headphones", "sony").posts
    assert raw["permalink"] == "/r/Headphones/comments/o1/old_sony_post/"
    assert raw["created_utc"] == 1199145600
    assert raw["name"] == "t3_o1" and raw["over_18"] is False


def test_cursor_errors(source: ArchiveSource) -> None:
    with pytest.raises(ArchiveError, match="not a cursor"):
        source.search_subreddit("headphones", "sony", after="garbage")
    page = source.search_subreddit("headphones", "sony", after="t3_nothere")
    assert page.posts == [] and page.after is None


def test_comments_are_top_level_of_that_post_only_best_first(source: ArchiveSource) -> None:
    comments = source.fetch_post_comments("p1")
    assert [c["id"] for c in comments] == ["c2", "c5", "c1"]
    assert all(c["parent_id"] == "t3_p1" and c["link_id"] == "t3_p1" for c in comments)
    assert [c["id"] for c in source.fetch_post_comments("t3_p1", limit=1)] == ["c2"]
    assert source.fetch_post_comments("p1", limit=0) == []
    assert source.fetch_post_comments("nope") == []


def test_missing_archive_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as info:
        ArchiveSource(tmp_path / "nope.sqlite")
    assert "nope.sqlite" in str(info.value)
    assert "crowdsift archive import" in str(info.value)
    assert "drop --archive" in str(info.value)


def test_non_archive_files_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not sqlite at all" * 10)
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE x (y)")
    conn.commit()
    conn.close()
    for path in (text, other, tmp_path):
        with pytest.raises(ArchiveError, match="crowdsift archive import"):
            ArchiveSource(path)


def test_source_opens_read_only(source: ArchiveSource) -> None:
    conn = source._connection()
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM posts")


def test_closed_source_refuses_calls(small_archive: Path) -> None:
    src = ArchiveSource(small_archive)
    src.close()
    with pytest.raises(ArchiveError, match="closed"):
        src.search_subreddit("headphones", "sony")


def test_concurrent_threads_get_consistent_results(source: ArchiveSource) -> None:
    expected = ids(source.search_subreddit("headphones", "sony", sort="top"))
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                results.append(ids(source.search_subreddit("headphones", "sony", sort="top")))
                source.fetch_post_comments("p1")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 120 and all(r == expected for r in results)
    assert source.stats.requests == 1 + 240


# --- a search's cost follows its matches, not the archive -----------------------------------


def _search_steps(path: Path, kit: Any, sort: Any, term: str) -> int:
    """SQLite VM steps (in thousands) one search takes: a measure of work, not of time."""
    conn = db.open_readonly(path)
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 1000)
    try:
        search_posts(
            conn, "headphones", term, sort=sort, time_filter="all", limit=25, after=None,
            now=kit.NOW,
        )  # fmt: skip
    finally:
        conn.close()
    return steps[0]


@pytest.mark.parametrize("sort", ["relevance", "new", "top", "comments", "hot"])
def test_a_rare_term_costs_the_same_in_a_small_and_a_large_subreddit(
    dump: Dump, tmp_path: Path, kit: Any, sort: Any
) -> None:
    """The matches drive the query: a subreddit 40x larger must not make a search for a word
    two posts contain walk its whole index (it did, through the (subreddit, score) index)."""
    sizes = {}
    for size in (50, 2000):
        posts = [kit.post(f"f{i:05d}", title=f"common words {i}") for i in range(size)]
        posts += [kit.post("r1", title="rare tapcon"), kit.post("r2", title="tapcon again")]
        path = tmp_path / f"a{size}.sqlite"
        import_files([dump(f"RS_{size}.zst", posts)], path)
        sizes[size] = _search_steps(path, kit, sort, "tapcon")
    assert sizes[2000] <= sizes[50] + 2, sizes


def test_relevance_ranks_only_the_newest_post_window_matches(
    dump: Dump, archive_path: Path, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A common word's ranking is bounded: the best of the last POST_WINDOW matches imported."""
    posts = [kit.post(f"w{i}", title="sony " * (5 - i) + "review") for i in range(5)]
    import_files([dump("RS_window.zst", posts)], archive_path)
    with ArchiveSource(archive_path, clock=kit.clock) as src:
        everything = ids(src.search_subreddit("headphones", "sony", limit=100))
        monkeypatch.setattr(search, "POST_WINDOW", 2)
        windowed = ids(src.search_subreddit("headphones", "sony", limit=100))
    assert everything[0] == "w0"  # the most "sony" title ranks first when all are ranked
    assert windowed == ["w3", "w4"]  # only the last two imported were ranked


def test_a_next_page_starts_where_the_last_ended_without_searching_for_its_cursor(
    source: ArchiveSource, small_archive: Path, kit: Any
) -> None:
    """Pages walked with remembered positions are the pages walked without, and a continuation
    page runs one search instead of two (the cursor's position is known)."""
    conn = db.open_readonly(small_archive)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    positions = search.Positions()
    try:
        for sort in ("relevance", "new", "top"):
            walked, after = walk_pages(
                lambda after, sort=sort: search_posts(
                    conn,
                    "headphones",
                    "sony",
                    sort=sort,
                    time_filter="all",
                    limit=2,
                    after=after,
                    now=kit.NOW,
                    positions=positions,
                )
            )
            assert after is None
            full = ids(source.search_subreddit("headphones", "sony", sort=sort, limit=100))
            assert walked == full and len(full) == 5
    finally:
        conn.close()
    assert not [s for s in statements if "WHERE id = " in s]  # no cursor lookups at all


def _walk_counting(
    path: Path, kit: Any, *, sort: Any, limit: int, between: Callable[[], None] | None = None
) -> tuple[list[str], int]:
    """A walk of every page with remembered positions: its ids, and how many searches ran."""
    conn = db.open_readonly(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    positions = search.Positions()
    pages = [0]

    def page(after: str | None) -> Any:
        if pages[0] == 1 and between is not None:
            between()
        pages[0] += 1
        return search_posts(
            conn, "headphones", "sony", sort=sort, time_filter="all", limit=limit,
            after=after, now=kit.NOW, positions=positions,
        )  # fmt: skip

    try:
        walked, after = walk_pages(page)
    finally:
        conn.close()
    assert after is None
    return walked, len([s for s in statements if "ORDER BY sort_key" in s])


@pytest.mark.parametrize("sort", ["relevance", "new", "top"])
def test_a_walk_reads_ahead_once_and_serves_its_next_pages_from_what_it_read(
    source: ArchiveSource, small_archive: Path, kit: Any, sort: Any
) -> None:
    """Ranking the matches is a search's cost: the pages after the first (a fetch's next page,
    the gate's refetch) come from the results read with it, not from searching again."""
    full = ids(source.search_subreddit("headphones", "sony", sort=sort, limit=100))
    walked, searches = _walk_counting(small_archive, kit, sort=sort, limit=2)
    assert walked == full and len(full) == 5
    assert searches == 1  # three pages, one search


def test_a_walk_searches_on_from_its_position_once_what_it_read_ahead_runs_out(
    source: ArchiveSource, small_archive: Path, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-ahead shorter than the walk: each search reads 3, a page takes 2, so a page that
    the rest cannot fill searches on from where the last page ended; same pages either way."""
    full = ids(source.search_subreddit("headphones", "sony", limit=100))
    monkeypatch.setattr(search, "READ_AHEAD", 3)
    walked, searches = _walk_counting(small_archive, kit, sort="relevance", limit=2)
    assert walked == full
    assert searches == 3


def test_a_post_deleted_after_its_page_was_read_ahead_is_left_out(
    source: ArchiveSource, small_archive: Path, kit: Any
) -> None:
    """Results read ahead are ids; the records are read when their page is served, so a post
    deleted meanwhile is not served (and nothing fails)."""
    full = ids(source.search_subreddit("headphones", "sony", limit=100))
    gone = full[3]

    def delete() -> None:
        conn = db.connect(small_archive)
        try:
            with conn:
                conn.execute("DELETE FROM posts WHERE id = ?", (gone,))
        finally:
            conn.close()

    walked, searches = _walk_counting(small_archive, kit, sort="relevance", limit=2, between=delete)
    assert walked == [i for i in full if i != gone]
    assert searches == 1


@pytest.mark.parametrize(("step", "searches"), [(timedelta(seconds=5), 1), (timedelta(hours=2), 4)])
def test_a_walk_in_a_moving_time_window_keeps_its_place(
    source: ArchiveSource, small_archive: Path, kit: Any, step: timedelta, searches: int
) -> None:
    """ "year" is a bound that moves with the clock: the next pages of a walk seconds later
    come from what was read ahead; hours later they are searched again, from where the last
    page ended (never by running the search to find the cursor). Same posts either way."""
    full = ids(source.search_subreddit("headphones", "sony", sort="new", time_filter="year"))
    conn = db.open_readonly(small_archive)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    positions = search.Positions()
    clock = [kit.NOW]

    def page(after: str | None) -> Any:
        clock[0] += step
        return search_posts(
            conn, "headphones", "sony", sort="new", time_filter="year", limit=1, after=after,
            now=clock[0], positions=positions,
        )  # fmt: skip

    try:
        walked, after = walk_pages(page)
    finally:
        conn.close()
    assert walked == full and len(full) == 4 and after is None
    assert len([s for s in statements if "ORDER BY sort_key" in s]) == searches
    assert not [s for s in statements if "WHERE id = " in s]
