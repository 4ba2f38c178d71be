"""Who each source says it is: the operator's Reddit account for reddit-api, crowdsift for the
keyless APIs (Arctic Shift, YouTube), never a made-up account."""

from __future__ import annotations

from email.message import Message

import pytest

from crowdsift import __version__
from crowdsift.core.config import Settings
from crowdsift.core.errors import UsageError
from crowdsift.http.auth import RedditOAuth
from crowdsift.http.identity import crowdsift_user_agent, project_url, user_agent
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource, reddit_user_agent
from crowdsift.sources.youtube import YouTubeSource

CREDENTIALS = {"reddit_client_id": "id", "reddit_client_secret": "secret-value-77"}


@pytest.fixture(autouse=True)
def no_user_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDDIT_USER_AGENT", raising=False)


def _agents(settings: Settings) -> tuple[str, str]:
    """(the API client's User-Agent, the token request's) of a reddit-api source."""
    source = RedditApiSource.from_settings(settings)
    try:
        auth = source.transport.client.auth
        assert isinstance(auth, RedditOAuth)
        return source.transport.client.headers["User-Agent"], auth.user_agent
    finally:
        source.close()


def test_the_default_names_no_account() -> None:
    assert Settings().reddit_user_agent is None


def test_reddit_user_agent_is_used_as_given() -> None:
    settings = Settings(**CREDENTIALS, reddit_user_agent="web:org.example.mine:2.0 (by /u/me)")
    assert _agents(settings) == ("web:org.example.mine:2.0 (by /u/me)",) * 2


@pytest.mark.parametrize("username", ["alice_b", "u/alice_b", "/u/alice_b"])
def test_without_one_it_is_built_from_the_operators_username(username: str) -> None:
    settings = Settings(**CREDENTIALS, reddit_username=username)
    expected = f"python:crowdsift:{__version__} (by /u/alice_b)"
    assert _agents(settings) == (expected, expected)


def test_without_either_reddit_api_is_refused_with_what_reddit_expects() -> None:
    with pytest.raises(UsageError) as info:
        RedditApiSource.from_settings(Settings(**CREDENTIALS))
    message = str(info.value)
    assert "'<platform>:<app id>:<version> (by /u/<username>)'" in message
    assert "REDDIT_USERNAME" in message and "REDDIT_USER_AGENT" in message
    with pytest.raises(UsageError):
        reddit_user_agent(Settings(reddit_username="  "))


def test_arctic_shift_and_youtube_identify_crowdsift() -> None:
    settings = Settings(
        reddit_user_agent="web:org.example.mine:2.0 (by /u/me)", youtube_api_key="yt-key-123"
    )
    for source in (
        ArcticShiftSource.from_settings(settings),
        YouTubeSource.from_settings(settings),
    ):
        try:
            agent = source.transport.client.headers["User-Agent"]
            assert agent == crowdsift_user_agent()
            assert agent.startswith(f"crowdsift/{__version__}")
            assert "/u/me" not in agent
        finally:
            source.close()


def test_the_agent_carries_the_project_url_from_the_package_metadata() -> None:
    meta = Message()
    meta["Project-URL"] = "Issues, https://example.org/crowdsift/issues"
    meta["Project-URL"] = "Homepage, https://example.org/crowdsift"
    assert project_url(lambda _: meta) == "https://example.org/crowdsift"  # type: ignore[arg-type,return-value]
    assert project_url(lambda _: Message()) is None  # type: ignore[arg-type,return-value]
    assert user_agent("1.2.3", "https://example.org/crowdsift") == (
        "crowdsift/1.2.3 (+https://example.org/crowdsift)"
    )
    assert user_agent("1.2.3", None) == "crowdsift/1.2.3"
