"""Fakes that ship with the package: a scripted engine and a counting wrapper.

``ScriptedEngine`` answers tasks from a queue (output models, dicts, JSON strings, or
exceptions to raise) or from a function, and records every task it was given, like
pydantic-ai's FunctionModel or llm's MockModel. Replies go through the task's own ``parse``,
so an invalid scripted reply fails exactly as an invalid LLM reply would.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from crowdsift.engines.base import Engine, EngineName, EngineReply, OutT, Task, Usage
from crowdsift.errors import EngineError, EngineOutputError


class ScriptedEngine:
    """Returns queued replies (or ``function(task)``), records ``requests``."""

    def __init__(
        self,
        replies: Iterable[Any] = (),
        *,
        function: Callable[[Task[Any]], Any] | None = None,
        tokens_per_call: tuple[int, int] = (0, 0),
        name: EngineName = "scripted",
    ) -> None:
        self._queue: deque[Any] = deque(replies)
        self._function = function
        self._tokens = tokens_per_call
        self.name: EngineName = name
        self.requests: list[Task[Any]] = []

    def enqueue(self, *replies: Any) -> None:
        self._queue.extend(replies)

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        self.requests.append(task)
        if self._function is not None:
            reply = self._function(task)
        elif self._queue:
            reply = self._queue.popleft()
        else:
            raise EngineError(f"ScriptedEngine has no reply queued for {type(task).__name__}")
        if isinstance(reply, BaseException):
            raise reply
        output = _to_output(task, reply)
        prompt, completion = self._tokens
        usage = Usage(
            calls=1,
            prompt_tokens=prompt,
            completion_tokens=completion,
            by_phase={task.phase: 1},
        )
        return EngineReply(output=output, usage=usage, engine=self.name, model="scripted")

    async def aclose(self) -> None:
        """Nothing to release."""


def _to_output(task: Task[OutT], reply: Any) -> OutT:
    if isinstance(reply, task.output_model):
        return reply  # type: ignore[return-value]
    if isinstance(reply, str):
        try:
            reply = json.loads(reply)
        except json.JSONDecodeError as exc:
            raise EngineOutputError(f"scripted reply is not JSON: {exc}", raw=reply) from exc
    if isinstance(reply, BaseModel):
        reply = reply.model_dump()
    return task.parse(reply)


class CountingEngine:
    """Wraps any engine and counts its calls and tokens per phase (for budgets and benches)."""

    def __init__(self, inner: Engine) -> None:
        self.inner = inner
        self.name: EngineName = inner.name
        self.usage = Usage()
        self.calls: list[str] = []

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        self.calls.append(task.phase)
        reply = await self.inner.run(task)
        self.usage.add(reply.usage)
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()
