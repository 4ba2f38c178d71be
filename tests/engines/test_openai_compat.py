"""The openai engine against a real local chat-completions server (and the engine contract)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import httpx
import openai
import pytest
from pydantic import BaseModel

from crowdsift.core.config import Settings
from crowdsift.core.errors import (
    EngineConfigError,
    EngineOutputError,
    EngineTransportError,
)
from crowdsift.core.log import configure_logging
from crowdsift.engines.base import (
    ChatMessage,
    Engine,
    EngineReply,
    LocalKit,
    Phase,
    Task,
    fence,
)
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.engines.factory import build_engine
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.openai_compat import OpenAICompatEngine
from tests.support.openai_server import (
    ChatCompletionsServer,
    count_tokens,
    delay,
    disconnect,
    length,
    refusal,
    reject_json_schema,
    status,
    truncated,
)

Factory = Callable[..., OpenAICompatEngine]


class Classification(BaseModel):
    label: str
    score: float


class ClassifyTask(Task[Classification]):
    """Labels a text positive or negative; the local strategy is a keyword rule."""

    phase: ClassVar[Phase] = "filter"
    output_model: ClassVar[type[BaseModel]] = Classification

    def __init__(self, text: str) -> None:
        self.text = text

    def messages(self) -> list[ChatMessage]:
        return [
            ChatMessage(role="system", content="Classify the sentiment of the evidence."),
            ChatMessage(role="user", content=fence("text", self.text)),
        ]

    def run_local(self, _kit: LocalKit) -> Classification:
        positive = "good" in self.text.lower()
        return Classification(label="positive" if positive else "negative", score=0.75)


class SynthesisTask(ClassifyTask):
    """The same job in another phase, to check that each phase gets its own model."""

    phase: ClassVar[Phase] = "synthesis"


GOOD = ClassifyTask("This blender is good value.")
GOOD_JSON = '{"label": "positive", "score": 0.75}'


def answer_like_local(body: dict[str, Any]) -> str:
    """A responder: the JSON run_local would give for the user's text."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    kit = LocalKit(embedder=HashingEmbedder())
    return ClassifyTask(user).run_local(kit).model_dump_json()


def run_tasks(engine: Engine, *tasks: Task[Any]) -> list[EngineReply[Any]]:
    """Run tasks one after another in one event loop, then close the engine."""

    async def go() -> list[EngineReply[Any]]:
        try:
            return [await engine.run(task) for task in tasks]
        finally:
            await engine.aclose()

    return asyncio.run(go())


def run_one(engine: Engine, task: Task[Any]) -> EngineReply[Any]:
    return run_tasks(engine, task)[0]


def prompt_tokens(body: dict[str, Any]) -> int:
    return count_tokens("".join(m["content"] for m in body["messages"]))


# --- the contract every engine keeps -------------------------------------------------------


@pytest.fixture(params=["openai", "local"])
def any_engine(request: pytest.FixtureRequest, api_key: str) -> Iterator[Engine]:
    if request.param == "local":
        yield LocalEngine(embedder=HashingEmbedder())
        return
    with ChatCompletionsServer(api_key=api_key, responder=answer_like_local) as server:
        settings = Settings(llm_base_url=server.base_url, llm_api_key=api_key)
        yield OpenAICompatEngine.from_settings(settings)


def test_every_engine_returns_the_output_model_and_counts_the_call(any_engine: Engine) -> None:
    reply = run_one(any_engine, ClassifyTask("a good one"))

    assert isinstance(reply.output, Classification)
    assert reply.output.label == "positive"
    assert reply.usage.calls >= 1
    assert reply.usage.by_phase["filter"] >= 1
    assert reply.engine == any_engine.name


# --- requests and replies ------------------------------------------------------------------


def test_valid_json_becomes_the_output_and_the_request_carries_the_schema(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue(GOOD_JSON)

    reply = run_one(make_engine(model_filter="filter-model"), GOOD)

    assert reply.output == Classification(label="positive", score=0.75)
    assert reply.model == "filter-model"
    [body] = server.requests
    assert server.paths == ["/v1/chat/completions"]
    assert body["model"] == "filter-model"
    assert body["temperature"] == 0
    assert body["messages"] == [m.model_dump() for m in GOOD.messages()]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Classification",
            "schema": Classification.model_json_schema(),
            "strict": False,
        },
    }
    assert reply.usage.calls == 1
    assert reply.usage.by_phase == {"filter": 1}
    assert reply.usage.prompt_tokens == prompt_tokens(body)
    assert reply.usage.completion_tokens == count_tokens(GOOD_JSON)


@pytest.mark.parametrize(
    "content",
    [
        f"```json\n{GOOD_JSON}\n```",
        f"```\n{GOOD_JSON}\n```",
        f"Here is the classification:\n```json\n{GOOD_JSON}\n```\nHope this helps.",
    ],
)
def test_code_fenced_json_is_accepted_without_a_repair(
    server: ChatCompletionsServer, make_engine: Factory, content: str
) -> None:
    server.enqueue(content)

    reply = run_one(make_engine(), GOOD)

    assert reply.output.label == "positive"
    assert len(server.requests) == 1


def test_invalid_json_gets_one_repair_and_usage_sums_both_calls(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    bad = '{"label": "positive", "score": 0.75'
    server.enqueue(bad, GOOD_JSON)

    reply = run_one(make_engine(), GOOD)

    assert reply.output.score == 0.75
    first, second = server.requests
    original = [m.model_dump() for m in GOOD.messages()]
    assert second["messages"][:2] == original
    assert second["messages"][2] == {"role": "assistant", "content": bad}
    repair = second["messages"][3]
    assert repair["role"] == "user"
    assert "not valid JSON" in repair["content"]
    assert "only the corrected JSON" in repair["content"]
    assert reply.usage.calls == 2
    assert reply.usage.by_phase == {"filter": 2}
    assert reply.usage.prompt_tokens == prompt_tokens(first) + prompt_tokens(second)
    assert reply.usage.completion_tokens == count_tokens(bad) + count_tokens(GOOD_JSON)


def test_invalid_json_twice_is_an_output_error_with_the_raw_reply(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue("Sure! The label is positive.", "I think it is positive, score 0.75")

    with pytest.raises(EngineOutputError) as caught:
        run_one(make_engine(), GOOD)

    assert len(server.requests) == 2
    assert "even after one repair" in str(caught.value)
    assert "MODEL_" in str(caught.value)
    assert caught.value.raw == "I think it is positive, score 0.75"


def test_a_reply_that_breaks_the_schema_is_repaired_with_the_validation_error(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue('{"label": "positive", "score": "very"}', GOOD_JSON)

    reply = run_one(make_engine(), GOOD)

    assert reply.output == Classification(label="positive", score=0.75)
    repair = server.requests[1]["messages"][-1]["content"]
    assert "does not match Classification" in repair
    assert "score" in repair


def test_a_long_bad_reply_is_truncated_in_the_error(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue("x" * 5000, "y" * 5000)

    with pytest.raises(EngineOutputError) as caught:
        run_one(make_engine(), GOOD)

    assert caught.value.raw.startswith("y" * 500)
    assert len(caught.value.raw) < 600


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (refusal("I can't help with that."), "refused the task"),
        (length(GOOD_JSON), "token limit"),
        ("   ", "empty reply"),
    ],
)
def test_refusals_cut_and_empty_replies_are_output_errors_without_repair(
    server: ChatCompletionsServer, make_engine: Factory, fault: Any, words: str
) -> None:
    server.enqueue(fault)

    with pytest.raises(EngineOutputError) as caught:
        run_one(make_engine(), GOOD)

    assert words in str(caught.value)
    assert server.base_url in str(caught.value)
    assert len(server.requests) == 1


# --- json_schema fallback ------------------------------------------------------------------


def test_a_rejected_json_schema_falls_back_to_json_object_and_remembers(
    api_key: str, sleeps: Any
) -> None:
    with ChatCompletionsServer(
        api_key=api_key, responder=answer_like_local, supports_json_schema=False
    ) as server:
        settings = Settings(llm_base_url=server.base_url, llm_api_key=api_key)
        engine = OpenAICompatEngine.from_settings(settings, sleep=sleeps)

        first, second = run_tasks(engine, GOOD, ClassifyTask("bad"))

        formats = [body["response_format"]["type"] for body in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert (first.output.label, second.output.label) == ("positive", "negative")
    assert first.usage.calls == 1
    assert engine.json_mode == "json_object"
    assert sleeps.waits == []
    system = server.requests[1]["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("Classify the sentiment")
    assert (
        json.dumps(Classification.model_json_schema(), separators=(",", ":")) in system["content"]
    )
    assert "JSON" in system["content"]


def test_a_queued_json_schema_rejection_is_followed_by_json_object(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue(reject_json_schema(), GOOD_JSON)

    reply = run_one(make_engine(), GOOD)

    assert reply.output.label == "positive"
    assert [b["response_format"]["type"] for b in server.requests] == [
        "json_schema",
        "json_object",
    ]


def test_another_400_is_final_and_not_retried(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(status(400, "Invalid value for 'temperature'."))

    with pytest.raises(EngineTransportError) as caught:
        run_one(make_engine(), GOOD)

    assert caught.value.status == 400
    assert "temperature" in str(caught.value)
    assert sleeps.waits == []
    assert len(server.requests) == 1


# --- retries -------------------------------------------------------------------------------


def test_429_waits_at_least_retry_after_then_succeeds(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(status(429, "Rate limit reached", retry_after=3), GOOD_JSON)

    reply = run_one(make_engine(), GOOD)

    assert reply.output.label == "positive"
    assert sleeps.waits == [3.0]
    assert len(server.requests) == 2
    assert reply.usage.calls == 1  # the 429 produced no completion


def test_retry_after_ms_is_honoured(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(status(429, retry_after_ms=7500), GOOD_JSON)

    run_one(make_engine(), GOOD)

    assert sleeps.waits == [7.5]


def test_a_retry_after_longer_than_max_retry_wait_is_not_cut_short(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    """Asking again after 5 s when the server said an hour ignores its Retry-After: fail at
    once, say so, and let the phase degrade."""
    server.enqueue(status(429, retry_after=3600), GOOD_JSON)

    with pytest.raises(EngineTransportError, match=r"3600 s.*CROWDSIFT_MAX_RETRY_WAIT"):
        run_one(make_engine(max_retry_wait=5.0), GOOD)

    assert sleeps.waits == []
    assert len(server.requests) == 1


def test_a_retry_after_within_max_retry_wait_is_waited_in_full(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(status(429, retry_after=5), GOOD_JSON)

    run_one(make_engine(max_retry_wait=5.0), GOOD)

    assert sleeps.waits == [5.0]


def test_a_503_burst_is_retried_with_growing_backoff(
    server: ChatCompletionsServer, api_key: str, sleeps: Any
) -> None:
    server.enqueue(status(503), status(502), status(500), GOOD_JSON)
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key=api_key, max_retries=2)
    engine = OpenAICompatEngine(
        client, model_for=Settings().model_for, max_retries=3, sleep=sleeps, rng=lambda: 0.5
    )

    async def go() -> EngineReply[Any]:
        try:
            return await engine.run(GOOD)
        finally:
            await client.close()

    reply = asyncio.run(go())

    assert reply.output.label == "positive"
    assert sleeps.waits == [1.0, 2.0, 4.0]
    assert len(server.requests) == 4


@pytest.mark.parametrize("fault", [truncated(), disconnect()], ids=["cut-body", "disconnect"])
def test_broken_answers_are_retried(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any, fault: Any
) -> None:
    server.enqueue(fault, GOOD_JSON)

    reply = run_one(make_engine(), GOOD)

    assert reply.output.label == "positive"
    assert len(sleeps.waits) == 1
    assert len(server.requests) == 2


def test_a_reply_slower_than_the_timeout_is_retried(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(delay(30.0), GOOD_JSON)

    reply = run_one(make_engine(llm_timeout=0.3), GOOD)

    assert reply.output.label == "positive"
    assert len(sleeps.waits) == 1
    assert len(server.requests) == 2


def test_spent_retries_raise_a_transport_error_naming_url_and_status(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(*[status(503, "The server is overloaded")] * 3)

    with pytest.raises(EngineTransportError) as caught:
        run_one(make_engine(llm_max_retries=2), GOOD)

    error = caught.value
    assert error.status == 503
    assert error.url == server.base_url
    assert server.base_url in str(error)
    assert "3 attempts" in str(error)
    assert "HTTP 503 (The server is overloaded)" in str(error)
    assert "--engine local" in str(error)
    assert len(sleeps.waits) == 2
    assert len(server.requests) == 3


def test_a_timeout_every_time_is_a_transport_error_without_status(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    server.enqueue(delay(30.0), delay(30.0))

    with pytest.raises(EngineTransportError) as caught:
        run_one(make_engine(llm_timeout=0.2, llm_max_retries=1), GOOD)

    assert caught.value.status is None
    assert "timeout" in str(caught.value)
    assert "CROWDSIFT_LLM_TIMEOUT" in str(caught.value)


def test_a_refused_key_is_a_config_error_at_once(
    server: ChatCompletionsServer, make_engine: Factory, sleeps: Any
) -> None:
    with pytest.raises(EngineConfigError) as caught:
        run_one(make_engine(llm_api_key="sk-wrong-key-0000"), GOOD)

    assert "CROWDSIFT_LLM_API_KEY" in str(caught.value)
    assert "refused" in str(caught.value)
    assert sleeps.waits == []
    assert len(server.requests) == 1


def test_404_points_at_the_model_or_base_url(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    server.enqueue(status(404, "The model `gpt-9` does not exist"))

    with pytest.raises(EngineTransportError) as caught:
        run_one(make_engine(), GOOD)

    assert caught.value.status == 404
    assert "MODEL_" in str(caught.value)
    assert "CROWDSIFT_LLM_BASE_URL" in str(caught.value)


# --- settings ------------------------------------------------------------------------------


def test_each_phase_uses_its_model_from_the_environment(
    server: ChatCompletionsServer, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROWDSIFT_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("CROWDSIFT_LLM_API_KEY", api_key)
    monkeypatch.setenv("MODEL_FILTER", "small-filter-model")
    monkeypatch.setenv("MODEL_SYNTHESIS", "big-synthesis-model")
    server.enqueue(GOOD_JSON, GOOD_JSON)

    filtered, synthesised = run_tasks(
        build_engine(Settings(), "openai"), GOOD, SynthesisTask("good")
    )

    assert [body["model"] for body in server.requests] == [
        "small-filter-model",
        "big-synthesis-model",
    ]
    assert (filtered.model, synthesised.model) == ("small-filter-model", "big-synthesis-model")
    assert synthesised.usage.by_phase == {"synthesis": 1}


def test_the_bare_chat_completions_path_is_served_too(
    server: ChatCompletionsServer, api_key: str
) -> None:
    server.enqueue(GOOD_JSON)
    base = server.base_url.removesuffix("/v1")
    engine = OpenAICompatEngine.from_settings(Settings(llm_base_url=base, llm_api_key=api_key))

    run_one(engine, GOOD)

    assert server.paths == ["/chat/completions"]


@pytest.mark.parametrize("key", [None, "", "   "])
def test_a_missing_key_is_a_config_error_that_suggests_the_local_engine(key: str | None) -> None:
    settings = Settings(llm_api_key=key)

    with pytest.raises(EngineConfigError) as caught:
        OpenAICompatEngine.from_settings(settings)

    message = str(caught.value)
    assert "CROWDSIFT_LLM_API_KEY" in message
    assert "CROWDSIFT_LLM_BASE_URL" in message
    assert "--engine local" in message


def test_a_base_url_that_is_not_http_is_a_config_error() -> None:
    with pytest.raises(EngineConfigError, match="CROWDSIFT_LLM_BASE_URL"):
        OpenAICompatEngine.from_settings(Settings(llm_base_url="localhost:11434", llm_api_key="k"))


def test_an_injected_http_client_is_used_and_left_open(
    server: ChatCompletionsServer, api_key: str
) -> None:
    server.enqueue(GOOD_JSON)
    settings = Settings(llm_base_url=server.base_url, llm_api_key=api_key)

    async def go() -> tuple[bool, EngineReply[Any]]:
        async with httpx.AsyncClient(timeout=5.0) as http_client:
            engine = OpenAICompatEngine.from_settings(settings, http_client=http_client)
            reply = await engine.run(GOOD)
            await engine.aclose()
            return http_client.is_closed, reply

    closed_after_aclose, reply = asyncio.run(go())

    assert not closed_after_aclose
    assert reply.output.label == "positive"


def test_aclose_closes_the_client_the_engine_built(make_engine: Factory) -> None:
    engine = make_engine()

    asyncio.run(engine.aclose())

    assert engine.client.is_closed()


# --- secrets -------------------------------------------------------------------------------


def test_the_key_never_reaches_logs_errors_or_reprs(
    server: ChatCompletionsServer, make_engine: Factory, api_key: str
) -> None:
    stream = io.StringIO()
    configure_logging("DEBUG", stream)
    server.enqueue(status(429, f"slow down, {api_key}"), "not json", GOOD_JSON)
    server.enqueue(*[status(503, f"overloaded for key {api_key}")] * 4)
    engine = make_engine()

    async def go() -> EngineTransportError:
        try:
            await engine.run(GOOD)
            with pytest.raises(EngineTransportError) as caught:
                await engine.run(GOOD)
            return caught.value
        finally:
            await engine.aclose()

    error = asyncio.run(go())

    logged = stream.getvalue()
    assert "engine_call" in logged
    assert "outcome='http_429'" in logged
    assert "engine_repair" in logged
    assert api_key not in logged
    assert api_key not in str(error)
    assert "***" in str(error)
    assert api_key not in repr(engine)
    assert api_key not in repr(server)
    assert all(api_key not in json.dumps(body) for body in server.requests)


def test_each_request_logs_one_engine_call_with_tokens_latency_and_outcome(
    server: ChatCompletionsServer, make_engine: Factory
) -> None:
    stream = io.StringIO()
    configure_logging("INFO", stream)
    server.enqueue(status(503), GOOD_JSON)

    run_one(make_engine(model_filter="filter-model"), GOOD)

    lines = [line for line in stream.getvalue().splitlines() if "event='engine_call'" in line]
    assert len(lines) == 2
    failed, ok = lines
    assert "outcome='http_503'" in failed
    assert "attempt=1" in failed
    assert "wait_s=" in failed
    assert "outcome='ok'" in ok
    assert "attempt=2" in ok
    assert "phase='filter'" in ok
    assert "model='filter-model'" in ok
    body = server.requests[1]
    assert f"tok_in={prompt_tokens(body)} " in ok
    assert f"tok_out={count_tokens(GOOD_JSON)} " in ok
    assert "latency_ms=" in ok
