"""``cursor_pages``: the one page walk every source's search and Arctic Shift's comments use."""

from __future__ import annotations

from collections.abc import Callable

from crowdsift.sources.reddit.pagination import cursor_pages

Fetch = Callable[[str | None], tuple[list[int], str | None]]


def pages_of(
    listing: dict[str | None, tuple[list[int], str | None]],
) -> tuple[Fetch, list[str | None]]:
    """A fetch serving ``listing`` (cursor → items, next cursor), and the cursors it was asked."""
    asked: list[str | None] = []

    def fetch(cursor: str | None) -> tuple[list[int], str | None]:
        asked.append(cursor)
        return listing[cursor]

    return fetch, asked


def test_a_walk_ends_on_a_page_without_a_next_cursor() -> None:
    fetch, asked = pages_of({None: ([1, 2], "a"), "a": ([3], None)})
    pages = list(cursor_pages(fetch))
    assert [list(p.items) for p in pages] == [[1, 2], [3]]
    assert [p.last for p in pages] == [False, True]
    assert asked == [None, "a"]


def test_a_repeated_cursor_ends_the_walk_and_is_reported() -> None:
    fetch, asked = pages_of({None: ([1], "a"), "a": ([2], "b"), "b": ([3], "a")})
    repeated: list[str] = []
    pages = list(cursor_pages(fetch, on_repeat=repeated.append))
    assert [list(p.items) for p in pages] == [[1], [2], [3]] and pages[-1].last
    assert repeated == ["a"] and asked == [None, "a", "b"]


def test_an_empty_page_ends_the_walk_and_a_start_cursor_counts_as_followed() -> None:
    fetch, _ = pages_of({"s": ([], "t")})
    assert [p.last for p in cursor_pages(fetch, start="s")] == [True]
    fetch, _ = pages_of({"s": ([1], "s")})
    repeated: list[str] = []
    assert [p.last for p in cursor_pages(fetch, start="s", on_repeat=repeated.append)] == [True]
    assert repeated == ["s"]


def test_no_page_is_fetched_after_the_caller_stops() -> None:
    fetch, asked = pages_of({None: ([1], "a"), "a": ([2], "b"), "b": ([3], None)})
    for page in cursor_pages(fetch):
        if 1 in page.items:
            break
    assert asked == [None]
