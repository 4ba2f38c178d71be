"""Seed 004's shape for tests: a FetchResult through the selector and the one synthesis.

The research run synthesises drilled threads (``synthesize_answer``); many synthesis tests
are clearer over a hand-made ``FetchResult``. ``select_evidence`` is the selector over one
(``select_threads`` of its posts as threads); ``summarize_fetch`` is exactly that followed by
the one engine call (``answer_request``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from crowdsift.core.models import FetchResult
from crowdsift.engines.base import Engine
from crowdsift.pipeline.synthesis.answer import answer_request
from crowdsift.pipeline.synthesis.config import SelectorConfig, SynthesisConfig
from crowdsift.pipeline.synthesis.models import SummarizeRequest, SummarizeResult
from crowdsift.pipeline.synthesis.prompt import get_template
from crowdsift.pipeline.synthesis.selector import select_threads, threads_of
from crowdsift.sources.models import EvidenceItem


def select_evidence(
    fetch_result: FetchResult,
    config: SelectorConfig,
    *,
    prompt_version: str,
    extra: Sequence[EvidenceItem] = (),
) -> SummarizeRequest:
    """``select_threads`` over a FetchResult's posts (most relevant first)."""
    return select_threads(
        fetch_result.query,
        threads_of(fetch_result.posts),
        config,
        prompt_version=prompt_version,
        extra=extra,
        plan_id=fetch_result.plan_id,
    )


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
