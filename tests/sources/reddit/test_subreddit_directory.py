"""The subreddit directory: reading about-dicts, a refresh with an injected fetch, the file,
and profiles of communities from their recent posts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from crowdsift.core.config import Settings
from crowdsift.core.errors import SourceError
from crowdsift.sources.reddit.community_posts import (
    RECENT_TERMS,
    RECENT_TITLES,
    TITLE_CHARS,
    profile_words,
)
from crowdsift.sources.reddit.directory import (
    DEFAULT_PREFIXES,
    DIRECTORY_MAX_AGE,
    MIN_SUBSCRIBERS,
    PROFILE_LIMIT,
    SubredditDirectory,
    SubredditDirectoryError,
    SubredditInfo,
    describe,
    directory_path,
    profile_directory,
    profile_targets,
    refresh_directory,
)

NOW = datetime(2025, 3, 1, tzinfo=UTC)


def about(name: str, subscribers: Any = 50_000, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "display_name": name,
        "title": f"The {name} community",
        "public_description": f"Everything about {name}.",
        "subscribers": subscribers,
        "over18": False,
        "created_utc": 1_300_000_000,
    }
    item.update(extra)
    return item


# --- from_about --------------------------------------------------------------------------------


def test_from_about_reads_a_reddit_about_dict() -> None:
    info = SubredditInfo.from_about(
        about(
            "HomeAssistant",
            512_000,
            title="  Home   Assistant ",
            public_description="Open source\nhome automation.",
        )
    )
    assert info == SubredditInfo(
        name="homeassistant",
        display_name="HomeAssistant",
        title="Home Assistant",
        description="Open source home automation.",
        subscribers=512_000,
        over18=False,
    )


@pytest.mark.parametrize(
    "raw",
    [
        {"title": "no name at all", "subscribers": 10},
        about(""),
        about("   "),
        about(None),  # type: ignore[arg-type]
        about(123),  # type: ignore[arg-type]
        about("no spaces!"),
        about("a"),  # one character
        about("x" * 22),  # Reddit names are at most 21 characters
        about("_leading"),
        about("reddit.com"),  # historic: no community to search
        about("u_spez", subreddit_type="user"),  # a user's profile
        about("u_someone"),
        about("quarantined", quarantine=True),
        "not a dict",
        None,
    ],
)
def test_from_about_refuses_what_cannot_be_an_entry(raw: Any) -> None:
    assert SubredditInfo.from_about(raw) is None


@pytest.mark.parametrize(
    ("subscribers", "expected"),
    [
        (1234, 1234),
        ("1234", 1234),
        (1234.9, 1234),
        (None, 0),
        (-5, 0),
        (True, 0),
        ("many", 0),
        (float("nan"), 0),
        (float("inf"), 0),
        ([1], 0),
    ],
)
def test_from_about_reads_subscribers_as_sent_and_unknown_as_zero(
    subscribers: Any, expected: int
) -> None:
    info = SubredditInfo.from_about(about("python", subscribers))
    assert info is not None and info.subscribers == expected


def test_from_about_name_forms_over18_and_description_fallback() -> None:
    prefixed = SubredditInfo.from_about(about("r/LocalLLaMA"))
    assert prefixed is not None
    assert (prefixed.name, prefixed.display_name) == ("localllama", "LocalLLaMA")
    assert SubredditInfo.from_about(about("spicy", over18=True)).over18  # type: ignore[union-attr]
    assert SubredditInfo.from_about(about("spicy2", over_18=True)).over18  # type: ignore[union-attr]
    assert not SubredditInfo.from_about(about("mild", over18="yes")).over18  # type: ignore[union-attr]
    sidebar = SubredditInfo.from_about(
        about("sidebar", public_description="", description="x " * 400)
    )
    assert sidebar is not None and len(sidebar.description) == 499  # cut at 500, stripped
    bare = SubredditInfo.from_about({"display_name": "bare"})
    assert bare == SubredditInfo(name="bare", display_name="bare")


def test_info_validates_its_own_fields() -> None:
    with pytest.raises(ValidationError, match="not r/python"):
        SubredditInfo(name="python", display_name="Pythons")
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        SubredditInfo(name="python", display_name="python", subscribers=-1)
    assert SubredditInfo(name="r/Python", display_name="Python").name == "python"


# --- refresh -----------------------------------------------------------------------------------


class FakeFetch:
    """Answers per prefix from a table; a prefix mapped to an exception raises it."""

    def __init__(self, answers: dict[str, list[Any] | Exception]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, prefix: str) -> list[dict[str, Any]]:
        self.calls.append(prefix)
        answer = self.answers.get(prefix, [])
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]


def test_refresh_keeps_sizeable_sfw_entries_once_biggest_first() -> None:
    fetch = FakeFetch(
        {
            "a": [
                about("AskScience", 20_000),
                about("askscience", 25_000, title="the bigger record"),  # same name, bigger
                about("askscience", 1_500),  # same name, smaller: ignored
                about("AdultThings", 900_000, over18=True),
                about("alittletoosmall", MIN_SUBSCRIBERS - 1),
                about("atthethreshold", MIN_SUBSCRIBERS),
                {"title": "nameless"},
                about("bad name!"),
            ],
            "b": [about("buildapc", 7_000_000)],
        }
    )
    progress: list[tuple[int, int, int]] = []
    directory = refresh_directory(
        fetch,
        prefixes=["a", "B", "a"],  # case and repeats do not cost requests
        progress=lambda *args: progress.append(args),
        clock=lambda: NOW,
    )
    assert fetch.calls == ["a", "b"]
    assert [(e.name, e.subscribers) for e in directory.entries] == [
        ("buildapc", 7_000_000),
        ("askscience", 25_000),
        ("atthethreshold", MIN_SUBSCRIBERS),
    ]
    assert directory.get("askscience").title == "the bigger record"  # type: ignore[union-attr]
    assert progress == [(1, 2, 2), (2, 2, 3)]
    assert directory.fetched_at == NOW and directory.source == "arctic-shift"
    assert directory.prefixes == ["a", "b"] and directory.failed_prefixes == {}
    counts = directory.counts
    assert (counts.records, counts.skipped, counts.over18, counts.small, counts.duplicates) == (
        9,
        2,
        1,
        1,
        2,
    )


def test_a_failing_prefix_is_recorded_and_the_others_still_count() -> None:
    fetch = FakeFetch(
        {
            "a": [about("askscience", 25_000)],
            "b": SourceError("arctic-shift refused prefix b (HTTP 400)"),
            "c": [about("cooking", 4_000_000)],
        }
    )
    directory = refresh_directory(fetch, prefixes="abc", clock=lambda: NOW)
    assert fetch.calls == ["a", "b", "c"]
    assert [e.name for e in directory.entries] == ["cooking", "askscience"]
    assert directory.failed_prefixes == {"b": "arctic-shift refused prefix b (HTTP 400)"}
    assert directory.prefixes == ["a", "c"]


def test_every_prefix_failing_raises_with_the_first_reason() -> None:
    fetch = FakeFetch({"a": SourceError("host refused"), "b": SourceError("second reason")})
    with pytest.raises(SubredditDirectoryError, match=r"all 2 prefixes failed.*'a'.*host refused"):
        refresh_directory(fetch, prefixes="ab")
    assert fetch.calls == ["a", "b"]


def test_a_bug_in_the_fetch_is_not_taken_for_a_source_failure() -> None:
    fetch = FakeFetch({"a": KeyError("bug")})
    with pytest.raises(KeyError):
        refresh_directory(fetch, prefixes="ab")


def test_refresh_needs_prefixes_and_defaults_to_a_to_z_and_digits() -> None:
    with pytest.raises(ValueError, match="prefixes"):
        refresh_directory(FakeFetch({}), prefixes=[])
    fetch = FakeFetch({"z": [about("zelda", 2_000)]})
    directory = refresh_directory(fetch)
    assert fetch.calls == list("abcdefghijklmnopqrstuvwxyz0123456789")
    assert len(DEFAULT_PREFIXES) == 36 and [e.name for e in directory.entries] == ["zelda"]


def test_a_partial_refresh_keeps_what_the_previous_one_found_elsewhere() -> None:
    previous = refresh_directory(
        FakeFetch(
            {
                "a": [about("askscience", 25_000), about("aquariums", 9_000)],
                "b": [about("buildapc", 7_000_000)],
                "c": [about("cooking", 4_000_000)],
            }
        ),
        prefixes="abc",
        clock=lambda: NOW - timedelta(days=40),
    )
    fetch = FakeFetch(
        {
            "a": [about("askscience", 30_000)],  # aquariums is gone from "a"
            "b": SourceError("timed out"),  # failed now: its old entries stay
        }
    )
    directory = refresh_directory(fetch, prefixes="ab", previous=previous, clock=lambda: NOW)
    assert [(e.name, e.subscribers) for e in directory.entries] == [
        ("buildapc", 7_000_000),
        ("cooking", 4_000_000),
        ("askscience", 30_000),
    ]
    assert directory.prefixes == ["a", "b", "c"]
    assert directory.failed_prefixes == {"b": "timed out"}
    assert directory.fetched_at == NOW


# --- the file ----------------------------------------------------------------------------------


def small_directory() -> SubredditDirectory:
    fetch = FakeFetch(
        {"h": [about("HomeAssistant", 500_000), about("home_improvement", 5_000_000)]}
    )
    return refresh_directory(fetch, prefixes="h", clock=lambda: NOW)


def test_save_then_load_is_the_same_directory(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "subreddits.json"
    directory = small_directory()
    directory.save(path)
    loaded = SubredditDirectory.load(path)
    assert loaded == directory
    assert loaded is not None and loaded.fetched_at == NOW
    assert json.loads(path.read_text())["entries"][0]["name"] == "home_improvement"
    assert [p.name for p in path.parent.iterdir()] == ["subreddits.json"]  # no temp files
    assert len(loaded) == 2
    assert loaded.get("r/HomeAssistant") == loaded.entries[1]
    assert "homeassistant" in loaded and "/r/HOMEASSISTANT/" in loaded
    assert "python" not in loaded and "not a name!" not in loaded and 42 not in loaded
    assert loaded.get("not a name!") is None


def test_load_of_no_file_is_none(tmp_path: Path) -> None:
    assert SubredditDirectory.load(tmp_path / "subreddits.json") is None


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ('{"version": 1, "entries": [', "file: Invalid JSON"),
        ("[]", "file: Input should be an object"),
        ('{"fetched_at": "2025-01-01T00:00:00Z", "entries": [{"name": "x y"}]}', "entries.0."),
        ('{"version": 99, "fetched_at": "2025-01-01T00:00:00Z"}', "version"),
    ],
)
def test_a_damaged_file_says_to_update(tmp_path: Path, content: str, where: str) -> None:
    path = tmp_path / "subreddits.json"
    path.write_text(content)
    with pytest.raises(SubredditDirectoryError) as info:
        SubredditDirectory.load(path)
    message = str(info.value)
    assert message.startswith(f"{path} is damaged (")
    assert where in message
    assert message.endswith("run `crowdsift subreddits update` to build it again")


def test_save_replaces_the_file_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "subreddits.json"
    old = small_directory()
    old.save(path)
    before = path.read_bytes()
    bigger = refresh_directory(
        FakeFetch({"p": [about("python", 1_300_000)]}), prefixes="p", previous=old
    )

    def broken_replace(_self: Path, _target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        bigger.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["subreddits.json"]
    monkeypatch.undo()
    bigger.save(path)
    assert SubredditDirectory.load(path) == bigger and len(bigger) == 3


def test_the_directory_lives_in_the_data_dir(tmp_path: Path) -> None:
    assert directory_path(Settings(home=tmp_path)) == tmp_path / "subreddits.json"


def test_stale_after_thirty_days() -> None:
    directory = small_directory()
    assert timedelta(days=30) == DIRECTORY_MAX_AGE
    assert not directory.is_stale(NOW + DIRECTORY_MAX_AGE)
    assert directory.is_stale(NOW + DIRECTORY_MAX_AGE + timedelta(seconds=1))
    assert directory.age(NOW + timedelta(days=2)) == timedelta(days=2)


# --- profiles ----------------------------------------------------------------------------------


def post(title: str, score: int = 1, *, body: str = "", comments: int = 0, **extra: Any) -> dict:
    item: dict[str, Any] = {
        "title": title,
        "selftext": body,
        "score": score,
        "num_comments": comments,
        "created_utc": 1_750_000_000,
    }
    item.update(extra)
    return item


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("How do I stop GLM 4.5 from thinking?", ["stop", "glm", "thinking"]),
        ("an M4 with a 4K screen or a 5070 Ti", ["m4", "4k", "screen", "5070"]),  # no "ti"
        ("Wi-Fi and e-mail", ["mail", "wifi", "email"]),  # joined too; parts under 3 dropped
        ("GPUs, cameras, batteries and glass", ["gpu", "camera", "battery", "glass"]),
        ("It doesn't work and I don't know", ["work", "know"]),  # no stop words or their stubs
        ("in 2025 on 16 GB", ["2025"]),  # numbers of 3+ digits only
    ],
)
def test_profile_words(text: str, words: list[str]) -> None:
    assert profile_words(text) == words


def test_a_profile_keeps_the_best_titles_and_the_words_posts_keep_using() -> None:
    posts = [
        post("Quiet post about GLM-4.5 thinking", 2, body="GLM &amp; https://x.io/settings"),
        post("Best GLM settings?", 50, comments=3),
        post("best glm settings?", 50, comments=1),  # the same title: once, the better record
        post("Spam for a crypto bot " * 3, 900, removed_by_category="moderator"),
        post(
            "Low-score question about VRAM", 0, body="VRAM &amp; RAM &#x200B; https://x.io/settings"
        ),
        post("A tie broken by comments", 50, comments=9),
        {"title": None, "score": 5},  # no title: read, not described
        post("x" * 70 + " " + "y" * 80, 3),
    ]
    info = SubredditInfo(name="localllama", display_name="LocalLLaMA").with_profile(posts, NOW)
    assert info.profiled and info.profiled_at == NOW
    assert info.profile_posts == len(posts)  # every post read counts
    assert info.recent_titles == [
        "A tie broken by comments",
        "Best GLM settings?",
        "x" * 70 + "…",  # cut at a word, under TITLE_CHARS
        "Quiet post about GLM-4.5 thinking",
        "Low-score question about VRAM",
    ]
    assert all(len(t) <= TITLE_CHARS for t in info.recent_titles)
    # words of titles and bodies, in at least two posts; links, entities, removed posts not
    assert info.recent_terms == {"glm": 3, "setting": 2}


def test_a_profile_is_bounded() -> None:
    posts = [post(f"title{n} shared{n % 200} common", n, body=f"body{n % 300}") for n in range(100)]
    posts += [
        post(f"title{n} shared{n % 200} common", n, body=f"body{n % 300}") for n in range(500)
    ]
    info = SubredditInfo(name="big", display_name="big").with_profile(posts, NOW)
    assert len(info.recent_titles) == RECENT_TITLES
    assert info.recent_titles[0].startswith("title499 ")  # best-scored first
    assert len(info.recent_terms) == RECENT_TERMS
    assert info.recent_terms["common"] == 600 and min(info.recent_terms.values()) >= 2
    nothing = SubredditInfo(name="quiet", display_name="quiet").with_profile([], NOW)
    assert nothing.profiled and nothing.profile_posts == 0
    assert (nothing.recent_titles, nothing.recent_terms) == ([], {})


class FakeRecent:
    """Recent posts per display name; a name mapped to an exception raises it."""

    def __init__(self, answers: dict[str, list[Any] | Exception]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, name: str) -> list[dict[str, Any]]:
        self.calls.append(name)
        answer = self.answers.get(name, [])
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]


def four() -> SubredditDirectory:
    return SubredditDirectory(
        fetched_at=NOW,
        entries=[
            SubredditInfo(name="buildapc", display_name="buildapc", subscribers=7_000_000),
            SubredditInfo(name="adult", display_name="Adult", subscribers=3_000_000, over18=True),
            SubredditInfo(name="localllama", display_name="LocalLLaMA", subscribers=500_000),
            SubredditInfo(name="smarthome", display_name="smarthome", subscribers=400_000),
        ],
    )


def test_profile_targets_are_the_biggest_sfw_entries() -> None:
    directory = four()
    assert profile_targets(directory) == ["buildapc", "LocalLLaMA", "smarthome"]
    assert profile_targets(directory, 2) == ["buildapc", "LocalLLaMA"]
    assert profile_targets(directory, 0) == []
    assert PROFILE_LIMIT == 1000


def test_profile_directory_profiles_each_entry_once_and_goes_on_after_a_failure() -> None:
    directory = four()
    fetch = FakeRecent(
        {
            "buildapc": SourceError("arctic-shift timed out"),
            "LocalLLaMA": [post("GLM 4.5 Air is great"), post("GLM on two 3090s")],
        }
    )
    progress: list[tuple[int, int, str, int]] = []
    profiled = profile_directory(
        directory, fetch, progress=lambda *args: progress.append(args), clock=lambda: NOW
    )
    assert fetch.calls == ["buildapc", "LocalLLaMA", "smarthome"]  # biggest first, no adult
    assert progress == [(1, 3, "buildapc", 1), (2, 3, "LocalLLaMA", 1), (3, 3, "smarthome", 1)]
    assert profiled.failed_profiles == {"buildapc": "arctic-shift timed out"}
    local = profiled.get("localllama")
    assert local is not None and local.recent_terms == {"glm": 2}
    assert local.recent_titles == ["GLM 4.5 Air is great", "GLM on two 3090s"]
    assert not profiled.get("buildapc").profiled  # type: ignore[union-attr]
    quiet = profiled.get("smarthome")
    assert quiet is not None and quiet.profiled and quiet.profile_posts == 0
    assert not directory.get("localllama").profiled  # type: ignore[union-attr]  # pure
    assert profiled.content_hash != directory.content_hash  # a new directory, new hash
    assert [e.name for e in profiled.entries] == [e.name for e in directory.entries]


def test_a_failed_profile_keeps_the_one_it_had_and_a_later_success_clears_it() -> None:
    first = profile_directory(
        four(), FakeRecent({"LocalLLaMA": [post("GLM tips"), post("GLM again")]}), clock=lambda: NOW
    )
    later = NOW + timedelta(days=3)
    again = profile_directory(
        first,
        FakeRecent({"LocalLLaMA": SourceError("HTTP 503"), "buildapc": [post("New build")]}),
        names=["r/LocalLLaMA", "buildapc"],
        clock=lambda: later,
    )
    assert again.get("localllama") == first.get("localllama")  # the old profile, untouched
    assert again.get("buildapc").profiled_at == later  # type: ignore[union-attr]
    assert again.failed_profiles == {"localllama": "HTTP 503"}
    healed = profile_directory(
        again, FakeRecent({"LocalLLaMA": [post("Qwen")]}), names=["localllama"], clock=lambda: later
    )
    assert healed.failed_profiles == {}
    assert healed.get("localllama").recent_titles == ["Qwen"]  # type: ignore[union-attr]


def test_profile_directory_refuses_unknown_names_and_bugs_in_the_fetch() -> None:
    fetch = FakeRecent({})
    with pytest.raises(ValueError, match="r/nosuch is not in the directory"):
        profile_directory(four(), fetch, names=["buildapc", "nosuch"])
    assert fetch.calls == []  # nothing fetched before the check
    with pytest.raises(KeyError):
        profile_directory(four(), FakeRecent({"buildapc": KeyError("bug")}), names=["buildapc"])


def test_a_refresh_keeps_the_profiles_of_the_previous_directory() -> None:
    old = profile_directory(
        refresh_directory(
            FakeFetch({"a": [about("askscience", 25_000)], "b": [about("buildapc", 7_000_000)]}),
            prefixes="ab",
            clock=lambda: NOW,
        ),
        FakeRecent({"askscience": [post("Why is the sky blue?")], "buildapc": SourceError("x")}),
        clock=lambda: NOW,
    )
    fresh = refresh_directory(
        FakeFetch({"a": [about("askscience", 30_000, title="Ask Science!")]}),
        prefixes="a",
        previous=old,
        clock=lambda: NOW + timedelta(days=1),
    )
    science = fresh.get("askscience")
    assert science is not None
    assert (science.title, science.subscribers) == ("Ask Science!", 30_000)  # fetched anew
    assert science.recent_titles == ["Why is the sky blue?"] and science.profiled_at == NOW
    assert fresh.failed_profiles == {"buildapc": "x"}  # kept with its entry
    gone = refresh_directory(FakeFetch({"b": []}), prefixes="b", previous=fresh)
    assert gone.failed_profiles == {}  # buildapc is gone, and its failure with it


def test_a_file_written_before_profiles_reads_as_entries_without_one(tmp_path: Path) -> None:
    path = tmp_path / "subreddits.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "fetched_at": "2025-01-01T00:00:00Z",
                "entries": [{"name": "python", "display_name": "Python", "subscribers": 5}],
                "prefixes": ["p"],
            }
        )
    )
    directory = SubredditDirectory.load(path)
    assert directory is not None and directory.failed_profiles == {}
    entry = directory.entries[0]
    assert not entry.profiled and entry.profile_posts == 0
    assert (entry.recent_titles, entry.recent_terms) == ([], {})
    assert len({entry, entry}) == 1  # still hashable


def test_a_profiled_directory_saves_and_loads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "subreddits.json"
    profiled = profile_directory(
        four(), FakeRecent({"LocalLLaMA": [post("GLM", 3), post("GLM two", 1)]}), clock=lambda: NOW
    )
    profiled.save(path)
    assert SubredditDirectory.load(path) == profiled
    summary = describe(profiled, NOW)
    assert (summary["profiled"], summary["profiled_without_posts"]) == (3, 2)
    assert summary["failed_profiles"] == {}
