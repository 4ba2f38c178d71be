"""Local servers and a small archive for the doctor's checks (no test reaches the internet)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crowdsift.sources.archive.importer import import_files
from tests.support.arctic_shift_server import ArcticShiftServer
from tests.support.openai_server import ChatCompletionsServer
from tests.support.reddit_server import RedditProtocolServer

REDDIT_SECRET = "reddit-secret-0123456789abcdef"
LLM_KEY = "sk-doctor-test-key-0123456789abcdef"
NOW_TS = 1_780_000_000


@pytest.fixture
def reddit_server() -> Iterator[RedditProtocolServer]:
    with RedditProtocolServer(client_id="doctor-client", client_secret=REDDIT_SECRET) as server:
        yield server


@pytest.fixture
def arctic_server() -> Iterator[ArcticShiftServer]:
    with ArcticShiftServer() as server:
        yield server


@pytest.fixture
def llm_server() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(api_key=LLM_KEY, responder=lambda _request: "OK") as server:
        yield server


@pytest.fixture
def user_archive(tmp_path: Path) -> Path:
    """An imported archive: three posts in two subreddits, one comment."""
    posts = [
        {"id": f"p{n}", "subreddit": sub, "author": "someone", "title": f"title {n}",
         "selftext": "body", "score": 5, "num_comments": 1, "created_utc": NOW_TS - n * 3600,
         "permalink": f"/r/{sub}/comments/p{n}/slug/", "over_18": False, "is_self": True}
        for n, sub in ((1, "Headphones"), (2, "Headphones"), (3, "audiophile"))
    ]  # fmt: skip
    comments = [
        {"id": "c1", "link_id": "t3_p1", "parent_id": "t3_p1", "subreddit": "Headphones",
         "author": "someone", "body": "a comment body", "score": 2, "created_utc": NOW_TS}
    ]  # fmt: skip
    dumps = []
    for name, records in (("RS_doctor.ndjson", posts), ("RC_doctor.ndjson", comments)):
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        dumps.append(path)
    target = tmp_path / "mine.sqlite"
    assert import_files(dumps, target).ok
    return target
