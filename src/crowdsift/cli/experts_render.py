"""Plain-text rendering of the panel's answers: one block per expert, sources as whole URLs."""

from __future__ import annotations

from collections.abc import Sequence

from crowdsift.sources.experts.models import ExpertResponse


def render_expert_responses(responses: Sequence[ExpertResponse]) -> str:
    return "\n\n".join(render_expert(response) for response in responses)


def render_expert(response: ExpertResponse) -> str:
    lines = [
        f"== {response.expert_id} · status {response.status} · engine {response.engine} · "
        f"language {response.language}"
    ]
    if response.answer:
        lines += ["", response.answer.strip()]
    if response.main_sources:
        lines += ["", "Sources:"]
        lines += [
            f"  [post:{s.post_id}] {s.date.date().isoformat()} {s.relevance.value:<7} {s.url}"
            for s in response.main_sources
        ]
    for section in response.comment_sections:
        lines += ["", f"-- {section.title}", section.text.strip()]
    if response.removed_citations:
        lines += [
            "",
            f"removed citations not in the evidence: {', '.join(response.removed_citations)}",
        ]
    lines += [f"note: {note}" for note in response.notes]
    counts = ", ".join(f"{k}={v}" for k, v in response.counts.items())
    total_ms = sum(response.timings_ms.values())
    if counts:
        lines += ["", f"({counts}; {total_ms / 1000:.1f}s)"]
    return "\n".join(lines)
