"""The one citation syntax: parsing, stripping, and numbering for display."""

from __future__ import annotations

from crowdsift.core.citations import (
    Citation,
    SourceNumbers,
    citations_in,
    cited_ids,
    number_citations,
    remove_markers,
    strip_quoted_citations,
)


def test_ids_may_hold_dashes_and_underscores() -> None:
    text = "A [post:yt-dQw4w9W_-Xc], B [post:amzn-B0ABC12345] and C [comment:k9x, post:1abc]."
    assert citations_in(text) == [
        Citation("post", "yt-dQw4w9W_-Xc"),
        Citation("post", "amzn-B0ABC12345"),
        Citation("comment", "k9x"),
        Citation("post", "1abc"),
    ]
    assert cited_ids(text) == ["yt-dQw4w9W_-Xc", "amzn-B0ABC12345", "1abc"]
    assert cited_ids(text, "comment") == ["k9x"]


def test_a_list_keeps_its_kind_and_repeats_count_once() -> None:
    assert citations_in("[comment:a, b] [comment:A]") == [
        Citation("comment", "a"), Citation("comment", "b"),
    ]  # fmt: skip


def test_numbering_covers_every_kind_of_id_and_drops_unknown_markers() -> None:
    numbers = SourceNumbers()
    assert numbers.add(["post:abc"], "https://www.reddit.com/r/x/comments/abc/t/") == 1
    assert numbers.add(["post:yt-dQw4w9W_-Xc"], "https://www.youtube.com/watch?v=dQw4w9W_-Xc") == 2
    assert numbers.add(["comment:c1"], "https://reddit.com/r/x/comments/abc/t/c1") == 3
    text = "Yes [post:abc][post:yt-dQw4w9W_-Xc]. Deep [comment:c1] [post:ghost]. Same [post:ABC]."
    assert numbers.text(text) == "Yes [1][2]. Deep [3]. Same [1]."
    assert numbers.of_urls(["https://youtube.com/watch?v=dQw4w9W_-Xc", "https://evil.example"]) == [
        2
    ]
    # the same permalink again is the same entry
    assert numbers.add(["post:other"], "https://www.reddit.com/r/x/comments/abc/t") == 1


def test_number_citations_takes_bare_post_ids_too() -> None:
    assert number_citations("A [post:x]. B [post:zz]", {"x": 1}) == "A [1]. B"
    assert number_citations("A [comment:q-1]", {"comment:q-1": 4}) == "A [4]"


def test_quotes_lose_every_marker_their_author_typed() -> None:
    quote = "It works [post:ok1] [3], see post:ab12 and [t1_xyz] [yt-abc_1]."
    assert strip_quoted_citations(quote) == "It works, see and."
    assert remove_markers("Claim [post:a] and [comment:b-c].") == "Claim and."


def test_adjacent_citations_read_in_ascending_order_each_once() -> None:
    numbers = {"comment:a": 1, "comment:b": 2, "post:c": 3}
    assert number_citations("A [comment:b][comment:a] B.", numbers) == "A [1][2] B."
    assert number_citations("A [post:c, comment:b][comment:b].", numbers) == "A [2][3]."
