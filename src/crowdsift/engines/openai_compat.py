"""The ``openai`` engine: any OpenAI-compatible chat endpoint (OpenAI, Gemini's compatible
endpoint, OpenRouter, Ollama, vLLM, llama.cpp server).

A task becomes one chat-completions request: its ``messages()``, temperature 0, and
``response_format`` carrying the output model's JSON schema. Endpoints that refuse
``json_schema`` get ``json_object`` plus the schema in the prompt, remembered for later calls.
The reply is never trusted: code fences are stripped, the JSON is validated by the task, and a
bad reply gets exactly one repair round trip. Transport faults are retried by our own policy
(``openai_retry``), the SDK's retries being off, so waits go through the injected ``sleep``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import ResponseFormat
from openai.types.shared_params import ResponseFormatJSONObject, ResponseFormatJSONSchema
from openai.types.shared_params.response_format_json_schema import JSONSchema

from crowdsift.core.config import Settings
from crowdsift.core.errors import EngineOutputError, EngineSetupError
from crowdsift.core.log import get_logger, register_secrets
from crowdsift.core.tracing import engine_attributes, engine_span_name, observe, reply_attributes
from crowdsift.engines.base import (
    ChatMessage,
    EngineName,
    EngineReply,
    OutT,
    Stopwatch,
    Task,
    Usage,
)
from crowdsift.engines.json_reply import (
    json_object_instruction,
    output_schema,
    parse_reply,
    repair_messages,
    schema_name,
    truncate,
)
from crowdsift.engines.openai_retry import (
    KEY_VARIABLE,
    URL_VARIABLE,
    RetryPolicy,
    classify,
    final_error,
    is_json_schema_rejection,
    safe_url,
)
from crowdsift.engines.prices import PriceTable, price_table_from_settings, priced_call

if TYPE_CHECKING:
    import httpx
    import httpx2

log = get_logger(__name__)
JsonMode = Literal["json_schema", "json_object"]
Sleep = Callable[[float], Awaitable[None]]


class OpenAICompatEngine:
    """Runs tasks on an OpenAI-compatible chat endpoint through an injected ``AsyncOpenAI``."""

    name: EngineName = "openai"

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        model_for: Callable[[str], str],
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        sleep: Sleep = asyncio.sleep,
        base_url_for_messages: str = "",
        rng: Callable[[], float] = random.random,
        prices: PriceTable | None = None,
    ) -> None:
        # Our policy retries; the SDK retrying too would multiply attempts and ignore `sleep`.
        self._client = client if client.max_retries == 0 else client.with_options(max_retries=0)
        self._model_for = model_for
        self._policy = RetryPolicy(max_retries=max_retries, max_wait=max_retry_wait, rng=rng)
        self._sleep = sleep
        self.url = safe_url(base_url_for_messages or str(client.base_url))
        self.json_mode: JsonMode = "json_schema"
        self._owns_client = False
        self._prices = prices

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        http_client: httpx.AsyncClient | httpx2.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> OpenAICompatEngine:
        """Build from CROWDSIFT_LLM_* settings; an injected ``http_client`` stays the caller's."""
        key = settings.llm_api_key.get_secret_value().strip() if settings.llm_api_key else ""
        if not key:
            raise EngineSetupError(
                f"The openai engine needs an API key: set {KEY_VARIABLE}. For Ollama, vLLM or "
                f"llama.cpp set {URL_VARIABLE} to the server (e.g. http://localhost:11434/v1); "
                "any non-empty key works there. Or use --engine local to run without a key."
            )
        register_secrets([key])
        base_url = settings.llm_base_url.strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise EngineSetupError(
                f"{URL_VARIABLE}={safe_url(base_url)!r} is not an http(s) URL; set it to the "
                "endpoint's base, e.g. https://api.openai.com/v1, or use --engine local."
            )
        client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=key,
            max_retries=0,
            timeout=settings.llm_timeout,
            # openai 3.x types this as httpx2.AsyncClient; it accepts httpx.AsyncClient too.
            http_client=http_client,  # type: ignore[arg-type]
        )
        engine = cls(
            client,
            model_for=settings.model_for,
            max_retries=settings.llm_max_retries,
            max_retry_wait=settings.max_retry_wait,
            sleep=sleep,
            base_url_for_messages=base_url,
            prices=price_table_from_settings(settings),
        )
        engine._owns_client = http_client is None
        return engine

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client requests go through (its retries off)."""
        return self._client

    def __repr__(self) -> str:
        return f"OpenAICompatEngine(url={self.url!r}, json_mode={self.json_mode!r})"

    async def aclose(self) -> None:
        """Close the SDK client if we built it (closing it closes its HTTP client too)."""
        if self._owns_client:
            await self._client.close()

    @observe(engine_span_name, attributes=engine_attributes, result_attributes=reply_attributes)
    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        """One validated output: request, parse, at most one repair; usage sums both calls.

        ``usage.calls`` counts completions received (a retried 429/5xx/timeout yields none and
        shows only in the ``engine_call`` log); ``latency_ms`` is the whole run, waits included.
        """
        stopwatch = Stopwatch()
        model = self._model_for(task.phase)
        usage = Usage()
        conversation = task.messages()
        content = await self._complete(task, model, conversation, usage)
        try:
            output = parse_reply(task, content)
        except EngineOutputError as problem:
            log.info("engine_repair", engine="openai", phase=task.phase, model=model,
                     problem=str(problem)[:300])  # fmt: skip
            retry = repair_messages(conversation, content, str(problem), task.output_model)
            content = await self._complete(task, model, retry, usage)
            try:
                output = parse_reply(task, content)
            except EngineOutputError as again:
                raise EngineOutputError(
                    f"{type(task).__name__}: {model} at {self.url} did not produce valid "
                    f"{task.output_model.__name__} JSON, even after one repair: {again}. Try a "
                    f"stronger model for phase {task.phase!r} (MODEL_* variables) or "
                    "--engine local.",
                    raw=truncate(content),
                ) from again
        usage.latency_ms = stopwatch.ms()
        usage.by_phase = {task.phase: usage.calls}
        return EngineReply(output=output, usage=usage, engine="openai", model=model)

    async def _complete(
        self, task: Task[Any], model: str, messages: list[ChatMessage], usage: Usage
    ) -> str:
        """The assistant's text for ``messages``, after retries; adds the call to ``usage``."""
        attempt = retries = 0
        while True:
            attempt += 1
            mode = self.json_mode
            stopwatch = Stopwatch()
            try:
                completion = await self._client.chat.completions.create(
                    model=model,
                    messages=_wire(messages, task, mode),
                    temperature=0,
                    response_format=_response_format(task, mode),
                )
            except (openai.APIError, json.JSONDecodeError) as exc:
                if mode == "json_schema" and is_json_schema_rejection(exc):
                    self.json_mode = "json_object"
                    self._log(task, model, stopwatch, attempt, "json_schema_rejected")
                    continue
                failure = classify(exc)
                too_long = self._policy.asks_too_long(failure.headers)
                if failure.retryable and retries < self._policy.max_retries and too_long is None:
                    retries += 1
                    wait = self._policy.wait(retries, failure.headers)
                    self._log(task, model, stopwatch, attempt, failure.outcome, wait_s=wait)
                    await self._sleep(wait)
                    continue
                self._log(task, model, stopwatch, attempt, failure.outcome)
                raise final_error(
                    failure, url=self.url, attempts=attempt, asked_wait=too_long
                ) from exc
            return self._accept(task, model, completion, usage, stopwatch, attempt)

    def _accept(
        self,
        task: Task[Any],
        model: str,
        completion: ChatCompletion,
        usage: Usage,
        stopwatch: Stopwatch,
        attempt: int,
    ) -> str:
        """Count the completed call, then return its text or say why it has none."""
        tokens_in = completion.usage.prompt_tokens if completion.usage else 0
        tokens_out = completion.usage.completion_tokens if completion.usage else 0
        served = completion.model or model  # the dated snapshot name prices best
        usage.add(
            priced_call(
                self._prices,
                phase=task.phase,
                model=served,
                prompt_tokens=tokens_in,
                completion_tokens=tokens_out,
                latency_ms=stopwatch.ms(),
            )
        )
        content, outcome, problem = _content_of(completion)
        self._log(task, model, stopwatch, attempt, outcome, tokens=(tokens_in, tokens_out))
        if problem is None:
            return content
        raise EngineOutputError(
            f"{type(task).__name__}: {model} at {self.url} {problem}", raw=truncate(content)
        )

    def _log(
        self,
        task: Task[Any],
        model: str,
        stopwatch: Stopwatch,
        attempt: int,
        outcome: str,
        *,
        tokens: tuple[int, int] = (0, 0),
        wait_s: float | None = None,
    ) -> None:
        # "tok_in"/"tok_out", not "*_tokens": log.py redacts every field named like "token".
        fields: dict[str, Any] = {
            "engine": "openai", "phase": task.phase, "task": type(task).__name__,
            "model": model, "tok_in": tokens[0], "tok_out": tokens[1],
            "latency_ms": stopwatch.ms(), "attempt": attempt, "outcome": outcome,
        }  # fmt: skip
        if wait_s is not None:
            fields["wait_s"] = wait_s
        if outcome == "ok":
            log.info("engine_call", **fields)
        else:
            log.warning("engine_call", **fields)


def _content_of(completion: ChatCompletion) -> tuple[str, str, str | None]:
    """(text, log outcome, problem or None): a refusal, a cut or an empty reply is unusable."""
    if not completion.choices:
        return "", "no_choices", "returned no choices"
    choice = completion.choices[0]
    content = choice.message.content or ""
    if choice.message.refusal:
        return content, "refusal", f"refused the task: {choice.message.refusal!r}"
    if choice.finish_reason == "length":
        return (
            content,
            "length",
            (
                "stopped at its token limit (finish_reason 'length'), so the JSON is cut off; "
                "use a model with a larger output limit or less evidence per call"
            ),
        )
    if choice.finish_reason == "content_filter":
        return content, "content_filter", "withheld the reply (finish_reason 'content_filter')"
    if not content.strip():
        return content, "empty", "returned an empty reply"
    return content, "ok", None


def _response_format(task: Task[Any], mode: JsonMode) -> ResponseFormat:
    if mode == "json_object":
        return ResponseFormatJSONObject(type="json_object")
    schema = JSONSchema(
        name=schema_name(task.output_model),
        schema=output_schema(task.output_model),
        strict=False,
    )
    return ResponseFormatJSONSchema(type="json_schema", json_schema=schema)


def _wire(
    messages: list[ChatMessage], task: Task[Any], mode: JsonMode
) -> list[ChatCompletionMessageParam]:
    """Messages as the SDK types them; in json_object mode the schema joins the system prompt
    (one system message: some chat templates reject a second)."""
    if mode == "json_object":
        instruction = json_object_instruction(task.output_model)
        if messages and messages[0].role == "system":
            merged = f"{messages[0].content}\n\n{instruction.content}"
            messages = [ChatMessage(role="system", content=merged), *messages[1:]]
        else:
            messages = [instruction, *messages]
    wire: list[ChatCompletionMessageParam] = []
    for message in messages:
        if message.role == "system":
            wire.append(ChatCompletionSystemMessageParam(role="system", content=message.content))
        elif message.role == "assistant":
            wire.append(
                ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
            )
        else:
            wire.append(ChatCompletionUserMessageParam(role="user", content=message.content))
    return wire
