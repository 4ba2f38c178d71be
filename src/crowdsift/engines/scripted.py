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

from crowdsift.core.errors import BudgetExceededError, EngineError, EngineOutputError
from crowdsift.core.tracing import engine_attributes, engine_span_name, observe, reply_attributes
from crowdsift.engines.base import Engine, EngineName, EngineReply, OutT, Task, Usage
from crowdsift.engines.prices import PriceTable, priced_call


class ScriptedEngine:
    """Returns queued replies (or ``function(task)``), records ``requests``."""

    def __init__(
        self,
        replies: Iterable[Any] = (),
        *,
        function: Callable[[Task[Any]], Any] | None = None,
        tokens_per_call: tuple[int, int] = (0, 0),
        name: EngineName = "scripted",
        model: str = "scripted",
        prices: PriceTable | None = None,
    ) -> None:
        self._queue: deque[Any] = deque(replies)
        self._function = function
        self._tokens = tokens_per_call
        self.name: EngineName = name
        self.requests: list[Task[Any]] = []
        self.model = model
        self._prices = prices

    def enqueue(self, *replies: Any) -> None:
        self._queue.extend(replies)

    @observe(engine_span_name, attributes=engine_attributes, result_attributes=reply_attributes)
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
        usage = priced_call(
            self._prices, phase=task.phase, model=self.model, prompt_tokens=prompt,
            completion_tokens=completion,
        )  # fmt: skip
        usage.by_phase = {task.phase: 1}
        return EngineReply(output=output, usage=usage, engine=self.name, model=self.model)

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
    """Wraps any engine: counts calls, tokens and cost per phase, and enforces a USD budget.

    With ``budget_usd``, a call is refused (``BudgetExceededError``, an ``EngineError``) once
    the calls so far cost that much, so each phase degrades as it does on any engine failure
    and the run ends ``partial``. Calls already in flight finish, so a run can overshoot by the
    cost of the calls running concurrently at the moment the budget was reached.
    """

    def __init__(self, inner: Engine, *, budget_usd: float | None = None) -> None:
        self.inner = inner
        self.name: EngineName = inner.name
        self.usage = Usage(budget_usd=budget_usd)
        self.calls: list[str] = []

    async def run(self, task: Task[OutT]) -> EngineReply[OutT]:
        budget = self.usage.budget_usd
        if budget is not None and self.usage.cost_usd >= budget:
            self.usage.budget_exhausted = True
            self.usage.calls_skipped += 1
            raise BudgetExceededError(
                f"the LLM budget of ${budget:g} is spent (${self.usage.cost_usd:.4f} so far); "
                f"skipped the {task.phase} call — raise --budget-usd (CROWDSIFT_BUDGET_USD) "
                "for a fuller answer"
            )
        self.calls.append(task.phase)
        reply = await self.inner.run(task)
        self.usage.add(reply.usage)
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()
