"""The local chat-completions server speaks OpenAI's wire format, faults included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

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

KEY = "server-test-key"
BODY: dict[str, Any] = {
    "model": "m-1",
    "messages": [{"role": "user", "content": "Say hello in JSON."}],
}


@pytest.fixture
def chat() -> Iterator[tuple[ChatCompletionsServer, httpx.Client]]:
    with (
        ChatCompletionsServer(api_key=KEY) as server,
        httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {KEY}"}, timeout=5
        ) as client,
    ):
        yield server, client


def test_a_queued_reply_comes_back_as_a_chat_completion(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue('{"hello": "world"}')

    response = client.post("/chat/completions", json=BODY)

    assert response.status_code == 200
    payload = response.json()
    assert payload["object"] == "chat.completion"
    assert payload["id"].startswith("chatcmpl-")
    assert isinstance(payload["created"], int)
    assert payload["model"] == "m-1"
    assert payload["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": '{"hello": "world"}', "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ]
    prompt, completion = count_tokens("Say hello in JSON."), count_tokens('{"hello": "world"}')
    assert payload["usage"] == {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    assert server.requests == [BODY]
    assert server.paths == ["/v1/chat/completions"]


def test_a_wrong_or_missing_key_is_401_in_the_error_envelope(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue("kept for later")

    wrong = client.post("/chat/completions", json=BODY, headers={"Authorization": "Bearer nope"})
    missing = httpx.post(f"{server.base_url}/chat/completions", json=BODY)

    assert (wrong.status_code, missing.status_code) == (401, 401)
    assert wrong.json()["error"]["type"] == "invalid_request_error"
    assert server.pending == 1


def test_queue_first_then_responder_then_500() -> None:
    with ChatCompletionsServer(api_key=KEY) as server, httpx.Client(timeout=5) as client:
        url = f"{server.base_url}/chat/completions"
        auth = {"Authorization": f"Bearer {KEY}"}
        server.enqueue("queued")
        first = client.post(url, json=BODY, headers=auth)
        empty = client.post(url, json=BODY, headers=auth)

    assert first.json()["choices"][0]["message"]["content"] == "queued"
    assert empty.status_code == 500
    assert "no reply queued" in empty.json()["error"]["message"]

    with ChatCompletionsServer(api_key=KEY, responder=lambda body: body["model"]) as server:
        answered = httpx.post(
            f"{server.base_url}/chat/completions", json=BODY, headers=auth, timeout=5
        )
    assert answered.json()["choices"][0]["message"]["content"] == "m-1"


def test_status_faults_carry_retry_after_and_the_error_envelope(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue(status(429, "Rate limit reached", retry_after=3), status(503, retry_after_ms=20))

    limited = client.post("/chat/completions", json=BODY)
    unavailable = client.post("/chat/completions", json=BODY)

    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "3"
    assert limited.json()["error"] == {
        "message": "Rate limit reached",
        "type": "rate_limit_error",
        "param": None,
        "code": None,
    }
    assert unavailable.status_code == 503
    assert unavailable.headers["retry-after-ms"] == "20"
    assert unavailable.json()["error"]["type"] == "server_error"


def test_refusal_length_and_truncated_replies(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue(refusal("No."), length('{"a": "bcdefgh"}'), truncated())

    refused = client.post("/chat/completions", json=BODY).json()["choices"][0]
    cut = client.post("/chat/completions", json=BODY).json()["choices"][0]
    broken = client.post("/chat/completions", json=BODY)

    assert refused["message"] == {"role": "assistant", "content": None, "refusal": "No."}
    assert cut["finish_reason"] == "length"
    assert cut["message"]["content"] == '{"a": "b'
    assert broken.status_code == 200
    with pytest.raises(ValueError):
        broken.json()


def test_disconnect_closes_without_an_answer(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue(disconnect())

    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/chat/completions", json=BODY)


def test_a_delayed_reply_arrives_late_and_leaves_the_queue_alone(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue(delay(0.05, "late"), "next")

    late = client.post("/chat/completions", json=BODY)

    assert late.json()["choices"][0]["message"]["content"] == "late"
    assert server.pending == 1


def test_json_schema_rejection_only_hits_json_schema_requests(
    chat: tuple[ChatCompletionsServer, httpx.Client],
) -> None:
    server, client = chat
    server.enqueue(reject_json_schema(), "plain", reject_json_schema(), "fallback")
    schema_format = {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}}

    passed = client.post("/chat/completions", json=BODY)
    rejected = client.post("/chat/completions", json={**BODY, "response_format": schema_format})
    fallback = client.post(
        "/chat/completions", json={**BODY, "response_format": {"type": "json_object"}}
    )

    assert passed.json()["choices"][0]["message"]["content"] == "plain"
    assert rejected.status_code == 400
    assert rejected.json()["error"]["param"] == "response_format"
    assert "json_schema" in rejected.json()["error"]["message"]
    assert fallback.json()["choices"][0]["message"]["content"] == "fallback"


def test_unknown_paths_are_404(chat: tuple[ChatCompletionsServer, httpx.Client]) -> None:
    _server, client = chat

    assert client.post("/embeddings", json={}).status_code == 404
    assert client.get("/chat/completions").status_code == 404
