"""Seed 004's shape for tests: a FetchResult through the selector and the one synthesis.

The research run synthesises drilled threads (``synthesize_answer``); many synthesis tests
are clearer over a hand-made ``FetchResult``. ``summarize_fetch`` is exactly the selector
(``select_evidence``) followed by the one engine call (``answer_request``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from crowdsift.core.models import FetchResult
from crowdsift.engines.base import Engine
from crowdsift.pipeline.synthesis.answer import answer_request
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.synthesis.models import SummarizeResult
from crowdsift.pipeline.synthesis.prompt import get_template
from crowdsift.pipeline.synthesis.selector import select_evidence
from crowdsift.sources.models import EvidenceItem


def summarize_fetch(
    fetched: FetchResult,
    *,
    engine: Engine,
    selector_config: SelectorConfig | None = None,
    synthesis_config: SynthesisConfig | None = None,
    prompt_version: str = "v1",
    extra: Sequence[EvidenceItem] = (),
) -> SummarizeResult:
    """The grounded summary of ``fetched``; never raises on engine errors (status error)."""
    get_template(prompt_version)
    request = select_evidence(
        fetched, selector_config or SelectorConfig(), prompt_version=prompt_version, extra=extra
    )
    answer = asyncio.run(
        answer_request(request, analysis=None, engine=engine, synthesis_config=synthesis_config)
    )
    return answer.summary
