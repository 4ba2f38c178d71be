"""The one synthesis task: one ``Task[AnswerDraft]`` that any engine can run.

An LLM engine gets ``messages()`` (the versioned prompt with fenced evidence) and must answer
with JSON matching ``AnswerDraft``: summary, highlights, cautions, sources and the
staff-engineer sections. The local engine runs ``run_local`` (the extractive strategy). Either
way the draft is checked against the evidence afterwards (``grounding``): the task itself
trusts nothing it is given back.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from crowdsift.engines.base import ChatMessage, LocalKit, Phase, Task
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import local_answer
from crowdsift.pipeline.synthesis.models import AnswerDraft, SummarizeRequest
from crowdsift.pipeline.synthesis.prompt import PromptContext, build_messages
from crowdsift.pipeline.synthesis.sections import AnswerScope


class AnswerTask(Task[AnswerDraft]):
    """Answer ``request``'s question from its evidence within the scope (phase ``synthesis``)."""

    phase: ClassVar[Phase] = "synthesis"
    output_model: ClassVar[type[BaseModel]] = AnswerDraft

    def __init__(
        self,
        request: SummarizeRequest,
        config: SynthesisConfig,
        context: PromptContext | None = None,
    ) -> None:
        self.request = request
        self.config = config
        self.context = context or PromptContext()

    @property
    def prompt_version(self) -> str:  # type: ignore[override]  # per request, not per class
        """The template version named on the request (the base class has a class default)."""
        return self.request.prompt_version

    def messages(self) -> list[ChatMessage]:
        return build_messages(self.request, self.config, self.context)

    def run_local(self, kit: LocalKit) -> AnswerDraft:
        scope = AnswerScope(
            compared=tuple(self.context.compared) if self.context.table_required else (),
            max_gems=self.context.max_gems,
            max_dissent=self.context.max_dissent,
            intent=self.context.intent,
            pick=self.context.pick,
        )
        return local_answer(self.request, self.config, kit.embedder, scope=scope)

    def parse(self, data: Any) -> AnswerDraft:
        """Accept the draft, also when a model lists sources as bare IDs (``["abc"]``).

        Everything else must match ``AnswerDraft``; citations are checked later, not here.
        """
        if isinstance(data, dict) and isinstance(data.get("sources"), list):
            data = {
                **data,
                "sources": [
                    {"post_id": ref} if isinstance(ref, str) else ref for ref in data["sources"]
                ],
            }
        return super().parse(data)
