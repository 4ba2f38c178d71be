"""What every fuzz target shares: what counts as a finding, and each parser's minimal context.

A target hands fuzzed bytes to a parser. A ``CrowdsiftError`` is the parser saying "this input
is bad", which is its job; any other exception escapes ``TestOneInput`` and is the finding
(atheris stops and writes the input as ``crash-<sha1>``). Targets also assert the invariants
of what a parser returns (counts that add up, trees whose parents come first), so a silent
miscount is a finding too.

The API sources run in-process over ``httpx.MockTransport``: the whole source and its
``HttpTransport`` (status handling, JSON decoding, retries) run on the fuzzed body, without
a socket per input. The property tests (``tests/property``) drive the same code over real
HTTP on 127.0.0.1.

This module is imported by the targets (``python fuzz/fuzz_x.py`` puts ``fuzz/`` on
``sys.path``) and by ``tests/property``, which adds ``fuzz/`` to ``sys.path`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.log import configure_logging
from crowdsift.engines.base import Task
from crowdsift.feed.agent import DecideTask
from crowdsift.feed.formatting import format_feed_for_prompt
from crowdsift.http.transport import HttpTransport
from crowdsift.pipeline.experts.comments import CommentGroupsTask, GroupDigest
from crowdsift.pipeline.experts.drift import DriftTask
from crowdsift.pipeline.experts.language import TranslateTask
from crowdsift.pipeline.experts.map import MapTask
from crowdsift.pipeline.experts.medium import MediumScoringTask
from crowdsift.pipeline.experts.reduce import ReduceTask
from crowdsift.pipeline.experts.synthesis import CommentSynthesisTask
from crowdsift.pipeline.gate.judge import GateItem, RelevanceTask
from crowdsift.pipeline.reddit.formulate import FormulateTask
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.models import SummarizeRequest
from crowdsift.pipeline.synthesis.task import AnswerTask
from crowdsift.sources.amazon import AmazonSource
from crowdsift.sources.amazon_auth import CreatorsOAuth
from crowdsift.sources.experts.models import Expert, ExpertPost, Relevance, ScoredPost
from crowdsift.sources.reddit.arctic_shift import ArcticShiftSource
from crowdsift.sources.reddit.reddit_api import RedditApiSource
from crowdsift.sources.youtube import YouTubeSource
from crowdsift.sources.youtube_api import YouTubeTransport
from crowdsift.testing.factories import make_post

T = TypeVar("T")
FIXED_NOW = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)
BASE_URL = "http://fuzz.invalid"


def typed(call: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
    """``call(*args)``; None when it raised a CrowdsiftError, anything else propagates."""
    try:
        return call(*args, **kwargs)
    except CrowdsiftError:
        return None


def text_of(data: bytes) -> str:
    """Bytes as text the way a lenient reader sees them; bad bytes become lone surrogates."""
    return data.decode("utf-8", "surrogateescape")


def split(data: bytes, parts: int) -> list[bytes]:
    """``data`` cut at NUL bytes into exactly ``parts`` pieces (JSON never holds a raw NUL)."""
    pieces = data.split(b"\0", parts - 1)
    return pieces + [b""] * (parts - len(pieces))


def no_sleep(_seconds: float) -> None:
    """Retries must not wait while fuzzing."""


# --- API sources over an in-process transport -----------------------------------------------


def _answer(bodies: Mapping[str, tuple[int, bytes]]) -> Callable[[httpx.Request], httpx.Response]:
    """A handler answering each request with the body of the first path fragment it contains."""

    def handle(request: httpx.Request) -> httpx.Response:
        for fragment, (status, body) in bodies.items():
            if fragment in request.url.path:
                return httpx.Response(status, content=body)
        return httpx.Response(404, content=b"{}")

    return handle


@contextmanager
def in_process_client(bodies: Mapping[str, tuple[int, bytes]]) -> Iterator[httpx.Client]:
    """An httpx client whose requests are answered from ``bodies`` (path fragment → answer)."""
    client = httpx.Client(base_url=BASE_URL, transport=httpx.MockTransport(_answer(bodies)))
    try:
        yield client
    finally:
        client.close()


def reddit_api_source(client: httpx.Client) -> RedditApiSource:
    """The reddit-api source with no retries and no waiting (one answer per request)."""
    return RedditApiSource(
        HttpTransport(client, source="reddit-api", max_retries=0, sleep=no_sleep)
    )


def arctic_shift_source(client: httpx.Client) -> ArcticShiftSource:
    return ArcticShiftSource(
        HttpTransport(client, source="arctic-shift", max_retries=0, sleep=no_sleep),
        clock=lambda: FIXED_NOW,
    )


def youtube_source(client: httpx.Client) -> YouTubeSource:
    transport = YouTubeTransport(client, source="youtube", max_retries=0, sleep=no_sleep)
    return YouTubeSource(transport, api_key="fuzz-key", now=lambda: FIXED_NOW)


# --- every LLM task, with just enough context to parse a reply --------------------------------


def _expert_post(post_id: int) -> ExpertPost:
    return ExpertPost(
        expert_id="fuzz",
        post_id=post_id,
        text=f"post {post_id} about standing desks",
        date=FIXED_NOW,
        url=f"https://t.me/fuzzchannel/{post_id}",
    )


def reply_tasks() -> dict[str, Task[Any]]:
    """One instance of every Task in crowdsift, by class name; tests check none is missing."""
    posts = (_expert_post(1), _expert_post(2))
    feed_posts = [make_post("abc123", "Desk review"), make_post("def456", "Chair review")]
    request = SummarizeRequest(
        query="q",
        plan_id="6f1c2a4e-0d3b-4c1e-9a57-2b8d4e6f0a01",
        post_payloads=[],
        prompt_version="v1",
        max_posts=5,
        max_comments_per_post=3,
        max_post_chars=500,
        max_comment_chars=200,
    )
    tasks: list[Task[Any]] = [
        RelevanceTask(query="q", source="reddit", items=(GateItem(title="t", snippet="s"),)),
        AnswerTask(request, SynthesisConfig()),
        DecideTask(
            agent="a",
            persona="p",
            interests=("desks",),
            feed_text=format_feed_for_prompt(feed_posts),
        ),
        FormulateTask(question="q"),
        MediumScoringTask(question="q", posts=posts),
        ReduceTask(
            question="q",
            expert=Expert(expert_id="fuzz", name="Fuzz", channel="fuzzchannel"),
            posts=tuple(ScoredPost(post=p, relevance=Relevance.HIGH) for p in posts),
        ),
        DriftTask(post=posts[0], comments=()),
        TranslateTask(answer="a", source_language="en", target_language="de"),
        MapTask(question="q", posts=posts),
        CommentSynthesisTask(question="q", language="en", sections=()),
        CommentGroupsTask(
            question="q",
            groups=(GroupDigest(group_id="g1", topic="t"), GroupDigest(group_id="g2", topic="u")),
        ),
    ]
    return {type(task).__name__: task for task in tasks}


VALID_REPLIES: dict[str, Any] = {
    "RelevanceTask": {"relevant": [True], "scores": [0.8]},
    "AnswerTask": {
        "summary": "s [post:abc]",
        "highlights": ["h"],
        "sources": ["abc"],
        "hidden_gems": [{"text": "g", "cites": ["post:abc"]}],
    },
    "DecideTask": {"action": "like", "post_id": "abc123", "reason": "fits"},
    "FormulateTask": {"english_question": "q", "intent": "comparison", "keywords": ["desk"]},
    "MediumScoringTask": {"scores": [{"post_id": 1, "score": 0.7}]},
    "ReduceTask": {"answer": "a [post:1]"},
    "DriftTask": {"groups": [{"topic": "t", "keywords": ["k"], "comment_ids": [1, 2]}]},
    "TranslateTask": {"text": "Hallo"},
    "MapTask": {
        "posts": [
            {"post_id": 1, "relevance": "HIGH", "reason": "r"},
            {"post_id": 2, "relevance": "LOW", "reason": ""},
        ]
    },
    "CommentSynthesisTask": {"expert_notes": "e", "community_notes": "c"},
    "CommentGroupsTask": {"group_ids": ["g2", "g1"]},
}
"""A reply each task accepts, as decoded JSON: round-trip material and fuzz seeds."""


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def amazon_source(client: httpx.Client) -> AmazonSource:
    """The Amazon source with a 3.x (Login with Amazon) token endpoint on the same client."""
    auth = CreatorsOAuth(
        auth_url=f"{BASE_URL}{AMAZON_TOKEN_PATH}",
        credential_id="fuzz-id",
        credential_secret="fuzz-secret",
        version="3.1",
        clock=lambda: 0.0,
    )
    return AmazonSource(
        client, auth, base_url=BASE_URL, partner_tag="fuzz-20", max_retries=0, sleep=no_sleep
    )


AMAZON_TOKEN_PATH = "/auth/o2/token"
AMAZON_TOKEN_BODY = b'{"access_token": "fuzz-token", "expires_in": 3600}'


def quiet_logs() -> None:
    """Fuzzing runs a parser millions of times: only critical events may reach stderr."""
    configure_logging("CRITICAL")
