"""A real local HTTP server that speaks OpenAI's chat-completions protocol, for tests and demos.

``POST /v1/chat/completions`` (and ``/chat/completions``) answers like api.openai.com does:

- Auth is ``Authorization: Bearer <api_key>``; anything else is HTTP 401 in OpenAI's error
  envelope ``{"error": {"message", "type", "param", "code"}}``.
- A success is a ``chat.completion`` object: ``id``, ``object``, ``created``, ``model`` (the
  request's, echoed), one choice ``{"index": 0, "message": {"role": "assistant", "content",
  "refusal"}, "finish_reason"}`` and ``usage`` (``prompt_tokens``, ``completion_tokens``,
  ``total_tokens``). Token counts are deterministic: characters // 4 (at least 1).
- What to answer comes from a queue (``enqueue``) of content strings and faults, then from
  ``responder(body)``, and otherwise is a 500 saying nothing was queued.

Faults reproduce what real endpoints do: ``status`` (any code, optional ``Retry-After``),
``delay`` (answer late, to trigger client timeouts), ``refusal`` (the model declines),
``length`` (``finish_reason: "length"`` with the content cut), ``truncated`` (the HTTP body's
JSON is cut off, as by a proxy), ``disconnect`` (close the connection without an answer) and
``reject_json_schema`` (400 for ``response_format: json_schema``, as many OpenAI-compatible
servers answer). ``supports_json_schema=False`` makes that rejection permanent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.local_http import LocalHTTPServer, Reply

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Status:
    """Answer HTTP ``code`` with ``body`` (a message string or a full JSON payload)."""

    code: int
    body: str | dict[str, Any] | None = None
    retry_after: float | str | None = None
    retry_after_ms: int | None = None


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds``, then answer with ``reply`` (else the responder's answer, else a 500).

    ``stop()`` cuts the wait short and closes the connection unanswered."""

    seconds: float
    reply: str | None = None


@dataclass(frozen=True)
class Refusal:
    """The model refuses: ``content`` is null and ``refusal`` carries the text."""

    text: str


@dataclass(frozen=True)
class Length:
    """The reply hit the token limit: ``finish_reason: "length"``, content cut in half."""

    content: str


@dataclass(frozen=True)
class Truncated:
    """A 200 whose JSON body is cut off half way, as a dropped proxy connection leaves it."""


@dataclass(frozen=True)
class Disconnect:
    """Close the connection without answering."""


@dataclass(frozen=True)
class RejectJsonSchema:
    """A 400 for ``response_format: json_schema`` (requests without one pass through)."""


Fault = Status | Delay | Refusal | Length | Truncated | Disconnect | RejectJsonSchema
Queued = str | Fault
Responder = Callable[[dict[str, Any]], Queued]


def status(
    code: int,
    body: str | dict[str, Any] | None = None,
    retry_after: float | str | None = None,
    *,
    retry_after_ms: int | None = None,
) -> Status:
    return Status(code, body, retry_after, retry_after_ms)


def delay(seconds: float, reply: str | None = None) -> Delay:
    return Delay(seconds, reply)


def refusal(text: str = "I'm sorry, I can't help with that.") -> Refusal:
    return Refusal(text)


def length(content: str) -> Length:
    return Length(content)


def truncated() -> Truncated:
    return Truncated()


def disconnect() -> Disconnect:
    return Disconnect()


def reject_json_schema() -> RejectJsonSchema:
    return RejectJsonSchema()


def error_body(message: str, type_: str, *, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error envelope."""
    return {"error": {"message": message, "type": type_, "param": param, "code": None}}


def count_tokens(text: str) -> int:
    """The server's deterministic token count: characters // 4, at least 1."""
    return max(1, len(text) // 4)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}
_JSON_SCHEMA_REJECTION = (
    "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this "
    "model. Use 'json_object' instead."
)


class ChatCompletionsServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 (port 0) in a background thread."""

    def __init__(
        self,
        *,
        api_key: str = "test-key",
        responder: Responder | None = None,
        supports_json_schema: bool = True,
    ) -> None:
        self._api_key = api_key
        self._responder = responder
        self.supports_json_schema = supports_json_schema
        self._lock = threading.Lock()
        self._queue: deque[Queued] = deque()
        self._requests: list[dict[str, Any]] = []
        self._paths: list[str] = []
        self._stopping = threading.Event()
        self._counter = 0
        self._http = LocalHTTPServer(self, name="chat-completions-server")

    def __repr__(self) -> str:
        return f"ChatCompletionsServer(running={self._http.running})"  # never the key

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self._stopping.clear()
        self._http.start()

    def stop(self) -> None:
        """Stop serving; delayed answers are cut short so handler threads end at once."""
        self._stopping.set()
        self._http.stop()

    def __enter__(self) -> ChatCompletionsServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``: ``http://127.0.0.1:<port>/v1``."""
        return f"{self._http.base_url}/v1"

    # --- scripting and inspection -------------------------------------------------------

    def enqueue(self, *replies: Queued) -> None:
        """Queue answers: content strings (the assistant message) or faults, in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies received, oldest first (a copy; the key is never recorded)."""
        with self._lock:
            return list(self._requests)

    @property
    def paths(self) -> list[str]:
        """The request paths, parallel to ``requests``."""
        with self._lock:
            return list(self._paths)

    @property
    def pending(self) -> int:
        """Queued answers not yet served."""
        with self._lock:
            return len(self._queue)

    # --- protocol (called from handler threads) ------------------------------------------

    def respond(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> Reply | None:
        path = target.split("?", 1)[0]
        if method != "POST" or path not in CHAT_PATHS:
            return _json(
                404, error_body(f"Unknown request URL: {method} {path}", "invalid_request_error")
            )
        try:
            request = json.loads(body or b"null")
        except json.JSONDecodeError as exc:
            return _json(
                400, error_body(f"We could not parse the JSON body: {exc}", "invalid_request_error")
            )
        if not isinstance(request, dict):
            return _json(
                400, error_body("The body must be a JSON object.", "invalid_request_error")
            )
        with self._lock:
            self._requests.append(request)
            self._paths.append(path)
        if headers.get("authorization", "") != f"Bearer {self._api_key}":
            message = "Incorrect API key provided. You can find your API key in your settings."
            return _json(401, error_body(message, "invalid_request_error"))
        if not self.supports_json_schema and _wants_json_schema(request):
            return _json(
                400,
                error_body(
                    _JSON_SCHEMA_REJECTION, "invalid_request_error", param="response_format"
                ),
            )
        return self._answer(request, self._next(request))

    def _next(self, request: dict[str, Any]) -> Queued | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self._responder(request) if self._responder is not None else None

    def _answer(self, request: dict[str, Any], item: Queued | None) -> Reply | None:
        if item is None:
            message = "ChatCompletionsServer has no reply queued and no responder."
            return _json(500, error_body(message, "server_error"))
        if isinstance(item, str):
            return _json(200, self._completion(request, item))
        if isinstance(item, Delay):
            if self._stopping.wait(item.seconds):
                return None
            # The late answer never takes from the queue: the client has usually gone, and the
            # queued replies belong to its retries.
            if item.reply is not None:
                return self._answer(request, item.reply)
            return self._answer(request, self._responder(request) if self._responder else None)
        if isinstance(item, Status):
            return _status_reply(item)
        if isinstance(item, Refusal):
            return _json(200, self._completion(request, None, refusal_text=item.text))
        if isinstance(item, Length):
            cut = item.content[: len(item.content) // 2]
            return _json(200, self._completion(request, cut, finish_reason="length"))
        if isinstance(item, Truncated):
            whole = json.dumps(self._completion(request, "{}")).encode()
            return Reply(200, whole[: len(whole) // 2], dict(_JSON))
        if isinstance(item, Disconnect):
            return None
        if _wants_json_schema(request):  # RejectJsonSchema
            return _json(
                400,
                error_body(
                    _JSON_SCHEMA_REJECTION, "invalid_request_error", param="response_format"
                ),
            )
        return self._answer(request, self._next(request))

    def _completion(
        self,
        request: dict[str, Any],
        content: str | None,
        *,
        refusal_text: str | None = None,
        finish_reason: str = "stop",
    ) -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            number = self._counter
        prompt = "".join(str(m.get("content") or "") for m in request.get("messages") or [])
        prompt_tokens = count_tokens(prompt)
        completion_tokens = count_tokens(content or refusal_text or "")
        return {
            "id": f"chatcmpl-local{number:06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model", "")),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal_text},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _wants_json_schema(request: dict[str, Any]) -> bool:
    response_format = request.get("response_format")
    return isinstance(response_format, dict) and response_format.get("type") == "json_schema"


def _json(code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return Reply(code, json.dumps(payload).encode(), {**_JSON, **(headers or {})})


def _status_reply(fault: Status) -> Reply:
    headers: dict[str, str] = {}
    if fault.retry_after is not None:
        headers["Retry-After"] = str(fault.retry_after)
    if fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    if isinstance(fault.body, dict):
        return _json(fault.code, fault.body, headers)
    kind = _ERROR_TYPES.get(
        fault.code, "server_error" if fault.code >= 500 else "invalid_request_error"
    )
    message = fault.body if fault.body is not None else f"Simulated HTTP {fault.code}."
    return _json(fault.code, error_body(message, kind), headers)
