"""The filtering layer's pure steps: screen_post, filter_comments, build_post_model."""

from __future__ import annotations

from datetime import UTC, datetime

from crowdsift.core.models import RejectReason
from crowdsift.core.privacy import author_hash
from crowdsift.pipeline.fetch.filtering import (
    FilterConfig,
    Rejection,
    ScreenedPost,
    as_int,
    author_pseudonym,
    build_post_model,
    filter_comments,
    parse_created,
    screen_post,
)
from crowdsift.pipeline.fetch.relevance import RelevanceConfig
from crowdsift.testing.factories import raw_comment, raw_post

TERMS = ["plaud", "voice recorder"]
SALT = b"s" * 32
CONFIG = FilterConfig(author_salt=SALT)
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def screen(raw: dict[str, object], seen: set[str] | None = None) -> ScreenedPost | Rejection:
    return screen_post(
        raw, search_terms=TERMS, config=CONFIG, seen_post_ids=set() if seen is None else seen
    )


def test_accepted_post_is_cleaned_and_scored() -> None:
    raw = raw_post(
        title="**Plaud** Note &amp; me 😀",
        selftext="I [recorded](https://x.example/?utm_source=a) every meeting for a month.\n\n"
        "- battery: 30h\n- price: $159",
    )
    result = screen(raw)
    assert isinstance(result, ScreenedPost)
    assert result.title == "Plaud Note & me"
    assert result.body == "I recorded every meeting for a month. battery: 30h price: $159"
    assert result.relevance.relevance_score == 1.0
    assert result.relevance.positive_keywords == ["plaud"]


def test_rejections_follow_the_seed_order() -> None:
    assert screen(raw_post(over_18=True)) == Rejection("abc123", RejectReason.NSFW_OR_AD)
    off_topic = screen(raw_post(title="Best SDS drill", selftext="Need a hammer drill " * 5))
    assert isinstance(off_topic, Rejection)
    assert off_topic.reason == RejectReason.BELOW_THRESHOLD
    assert off_topic.score == 0.0
    short = screen(raw_post(selftext="title says it all", num_comments=0))
    assert isinstance(short, Rejection) and short.reason == RejectReason.TOO_SHORT


def test_a_post_without_a_body_but_with_replies_is_kept() -> None:
    """A link or image post's discussion is in its replies: only one nobody answered is too
    short to be evidence."""
    answered = screen(raw_post(selftext="", num_comments=12))
    assert isinstance(answered, ScreenedPost) and answered.body == ""
    unanswered = screen(raw_post(selftext="", num_comments=0))
    assert isinstance(unanswered, Rejection) and unanswered.reason == RejectReason.TOO_SHORT
    # found through its replies, it is not judged on a title that says nothing: the gate
    # reads the replies
    link = screen(raw_post(title="Look at this", selftext="", num_comments=4))
    assert isinstance(link, ScreenedPost) and link.relevance.relevance_score == 0.0
    off = screen(raw_post(title="Look at this", selftext="Nothing about it " * 5))
    assert isinstance(off, Rejection) and off.reason == RejectReason.BELOW_THRESHOLD


def test_dedupe_is_on_post_id_only_never_on_title() -> None:
    seen: set[str] = set()
    assert isinstance(screen(raw_post("a1"), seen), ScreenedPost)
    assert screen(raw_post("a1"), seen) == Rejection("a1", RejectReason.DUPLICATE, 1.0)
    assert isinstance(screen(raw_post("b2"), seen), ScreenedPost)  # same title, other id
    assert seen == {"a1", "b2"}


def test_rejected_posts_do_not_enter_the_dedupe_memory() -> None:
    seen: set[str] = set()
    screen(raw_post("a1", selftext="too short", num_comments=0), seen)
    assert seen == set()


def test_negative_keywords_from_config() -> None:
    config = FilterConfig(relevance=RelevanceConfig(negative_keywords=("giveaway",), threshold=0.7))
    raw = raw_post(title="Plaud giveaway", selftext="Enter to win a Plaud Note, ends Friday!!")
    result = screen_post(raw, search_terms=TERMS, config=config, seen_post_ids=set())
    assert isinstance(result, Rejection) and result.reason == RejectReason.BELOW_THRESHOLD


def test_filter_comments_veto_clean_length_dedupe_and_thread_scope() -> None:
    raws = [
        raw_comment("c1", body="Turn **off** the LED for ~2 more hours of battery."),
        raw_comment("c2", body="[deleted]"),
        raw_comment("c3", author="AutoModerator", body="Please read the rules before posting."),
        raw_comment("c4", body="+1"),
        raw_comment("c1", body="Turn off the LED for ~2 more hours of battery."),
        raw_comment("c5", post_id="other9", body="This belongs to another thread entirely."),
        raw_comment("c6", score="7", body="Firmware 2.1 fixed the transcription lag for me."),
    ]
    comments, rejections = filter_comments(
        "abc123", raws, config=CONFIG, source="archive", fetched_at=NOW
    )
    assert [c.comment_id for c in comments] == ["c1", "c6"]
    assert comments[0].body == "Turn off the LED for ~2 more hours of battery."
    assert comments[1].comment_karma == 7
    assert all(c.post_id == "abc123" and c.fetched_at == NOW for c in comments)
    assert [(r.item_id, r.reason) for r in rejections] == [
        ("c2", RejectReason.DELETED_OR_REMOVED),
        ("c3", RejectReason.METADATA_VETO),
        ("c4", RejectReason.TOO_SHORT),
        ("c1", RejectReason.DUPLICATE),
        ("c5", RejectReason.METADATA_VETO),
    ]


def test_build_post_model_fills_every_field() -> None:
    raw = raw_post(created_utc="1714000000.0", author="Field_Tester", num_comments=3)
    screened = screen(raw)
    assert isinstance(screened, ScreenedPost)
    comments, _ = filter_comments(
        "abc123", [raw_comment()], config=CONFIG, source="archive", fetched_at=NOW
    )
    post = build_post_model(screened, comments, source="archive", fetched_at=NOW)
    assert post.url == (
        "https://www.reddit.com/r/gadgets/comments/abc123/plaud_note_after_three_months_of_meetings/"
    )
    assert post.post_karma == 42 and post.num_comments == 3 and post.subreddit == "gadgets"
    assert post.created_at == datetime(2024, 4, 24, 23, 6, 40, tzinfo=UTC)
    assert post.author_hash == author_hash("field_tester", SALT)
    assert len(post.author_hash or "") == 16
    assert post.comments == comments
    assert post.matched_keywords == ["plaud"]


def test_tolerant_field_parsers() -> None:
    assert [as_int(v) for v in (5, "7", "3.0", 2.9, None, "x", True)] == [5, 7, 3, 2, 0, 0, 1]
    assert parse_created(1_700_000_000) == parse_created("1700000000") == parse_created(1.7e9)
    assert parse_created("garbage") is None and parse_created(None) is None
    assert author_pseudonym({"author": "[deleted]"}, CONFIG) is None
    assert author_pseudonym({"author": None}, CONFIG) is None


def test_pseudonyms_need_a_salt_and_prefer_the_one_an_archive_stored() -> None:
    named = {"author": "Field_Tester"}
    assert author_pseudonym(named, FilterConfig()) is None  # no salt: no (reversible) hash
    assert author_pseudonym(named, CONFIG) == author_hash("field_tester", SALT)
    stored = {"author": None, "author_hash": "0123456789abcdef"}
    assert author_pseudonym(stored, CONFIG) == author_pseudonym(stored, FilterConfig())
    assert author_pseudonym(stored, FilterConfig()) == "0123456789abcdef"
    assert "author_salt" not in CONFIG.model_dump() and repr(SALT) not in repr(CONFIG)
