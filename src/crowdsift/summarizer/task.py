"""The summarize task: one ``Task[SummaryDraft]`` that any engine can run.

An LLM engine gets ``messages()`` (the versioned prompt with fenced evidence) and must answer
with JSON matching ``SummaryDraft``; the local engine runs ``run_local`` (the extractive
strategy). Either way the draft is checked against the evidence afterwards (``grounding``):
the task itself trusts nothing it is given back.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from crowdsift.engines.base import ChatMessage, LocalKit, Phase, Task
from crowdsift.summarizer.config import SummarizerConfig
from crowdsift.summarizer.extractive import extract_summary
from crowdsift.summarizer.models import SummarizeRequest, SummaryDraft
from crowdsift.summarizer.prompt import build_messages


class SummarizeTask(Task[SummaryDraft]):
    """Summarise ``request``'s evidence within ``config``'s limits (phase ``synthesis``)."""

    phase: ClassVar[Phase] = "synthesis"
    output_model: ClassVar[type[BaseModel]] = SummaryDraft

    def __init__(self, request: SummarizeRequest, config: SummarizerConfig) -> None:
        self.request = request
        self.config = config

    @property
    def prompt_version(self) -> str:  # type: ignore[override]  # per request, not per class
        """The template version named on the request (the base class has a class default)."""
        return self.request.prompt_version

    def messages(self) -> list[ChatMessage]:
        return build_messages(self.request, self.config)

    def run_local(self, kit: LocalKit) -> SummaryDraft:
        return extract_summary(self.request, self.config, kit.embedder)

    def parse(self, data: Any) -> SummaryDraft:
        """Accept the draft, also when a model lists sources as bare IDs (``["abc"]``).

        Everything else must match ``SummaryDraft``; citations are checked later, not here.
        """
        if isinstance(data, dict) and isinstance(data.get("sources"), list):
            data = {
                **data,
                "sources": [
                    {"post_id": ref} if isinstance(ref, str) else ref for ref in data["sources"]
                ],
            }
        return super().parse(data)
