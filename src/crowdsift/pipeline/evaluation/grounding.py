"""The grounding checks of one answer (seed 004 "Evaluation"): are its sources and citations
posts of the evidence, did the budget and caps hold, and are its highlights supported by the
text of a post they cite?"""

from __future__ import annotations

from pydantic import BaseModel

from crowdsift.core.models import FetchResult, Post
from crowdsift.core.text import url_key
from crowdsift.core.words import tokenize
from crowdsift.pipeline.evaluation.cases import EvalCase
from crowdsift.pipeline.synthesis.cited import CitedText
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.models import SummarizeResult

SUPPORT_SHARE = 0.6


class EvalReport(BaseModel):
    """The grounding checks of one case."""

    id: str
    status: str
    sources: int
    sources_valid: bool
    budget_respected: bool
    highlights: int
    highlights_supported: int
    engine: str

    @property
    def passed(self) -> bool:
        """Grounding held: valid sources and citations, budget respected, not an error."""
        return self.sources_valid and self.budget_respected and self.status != "error"


def check(
    case: EvalCase,
    evidence: FetchResult,
    summary: SummarizeResult,
    config: SynthesisConfig,
) -> EvalReport:
    """The grounding checks of one answer against the evidence it was given (pure)."""
    posts = {post.id: post for post in evidence.posts}
    sources_valid = all(
        source.post_id in posts and url_key(str(source.url)) == url_key(posts[source.post_id].url)
        for source in summary.sources
    )
    owners = _owners(evidence)
    cited_everywhere = [
        citation.key
        for text in [summary.summary, *summary.highlights, *summary.cautions]
        for citation in text.citations()
    ]
    sources_valid = sources_valid and all(key in owners for key in cited_everywhere)
    budget = (
        len(summary.summary.marked()) <= config.summary_char_budget  # as grounding measures
        and len(summary.highlights) <= config.max_highlights
        and len(summary.cautions) <= config.max_cautions
    )
    supported = sum(1 for item in summary.highlights if _supported(item, owners))
    return EvalReport(
        id=case.id,
        status=summary.status,
        sources=len(summary.sources),
        sources_valid=sources_valid,
        budget_respected=budget,
        highlights=len(summary.highlights),
        highlights_supported=supported,
        engine=summary.engine,
    )


def _owners(evidence: FetchResult) -> dict[str, Post]:
    """Every citable key of the evidence (``post:id``, ``comment:id``) → its post."""
    owners: dict[str, Post] = {}
    for post in evidence.posts:
        owners[f"post:{post.id.lower()}"] = post
        owners.update({f"comment:{c.comment_id.lower()}": post for c in post.comments})
    return owners


def _supported(highlight: CitedText, owners: dict[str, Post]) -> bool:
    """A highlight is supported when a post it cites (or the post of a comment it cites)
    contains most of its content words."""
    words = {w for w in tokenize(highlight.text) if len(w) > 3}
    for citation in highlight.citations():
        post = owners.get(citation.key)
        if post is None or not words:
            continue
        text = " ".join([post.title, post.selftext, *(c.body for c in post.comments)])
        if len(words & set(tokenize(text))) / len(words) >= SUPPORT_SHARE:
            return True
    return False
