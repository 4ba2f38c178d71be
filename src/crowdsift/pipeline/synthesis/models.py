"""The answer's models: seed 004's SummarizeRequest and PostPayload in, SummarizeResult out;
the staff-engineer sections (``RedditSynthesis``); the engine output (``AnswerDraft``).

They live with the synthesis that produces them, not with the Reddit branch: the sections are
part of the one checked answer (which ``RedditResponse`` carries), whichever source found the
evidence. Engine drafts cite evidence by short ids (``[post:ID]``, ``[comment:ID]``) because
models copy ids far more reliably than long URLs; the checked sections carry permalinks only
(``crowdsift.pipeline.synthesis.grounding`` maps the one to the other and drops what does not
resolve).

``SummarizeRequest`` and ``SummarizeResult`` keep seed 004's names: they are the specification's
interface, and their JSON schemas (titles and ``$defs`` keys included) are what other programs
read, so the layout's vocabulary stops at them. The checked texts (summary, highlights,
cautions) are stored as ``CitedText``, claims and their citation lists; seed 004's marker
strings are their JSON (``cited.Cited``), so the schemas keep their shape.
"""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    ValidationError,
    computed_field,
    model_validator,
)

# Naive datetimes read as UTC, as everywhere the evidence is dated.
from crowdsift.core.models import AwareDatetime as UTCDatetime
from crowdsift.pipeline.synthesis.cited import Cited, CitedSpan, CitedText
from crowdsift.sources.models import SourceKind


class _Model(BaseModel):
    """The staff-engineer sections and their drafts reject fields they do not define."""

    model_config = ConfigDict(extra="forbid")


class CommentPayload(BaseModel):
    """One comment as evidence, with its place in the thread (cited as ``[comment:ID]``)."""

    model_config = ConfigDict(frozen=True)

    comment_id: str
    excerpt: str = Field(description="cleaned and truncated (≤ max_comment_chars)")
    score: int
    depth: int = Field(0, ge=0, description="0 for a top-level comment")
    parent_id: str = Field("", description="t1_<comment> when it replies to a comment")
    created_at: AwareDatetime | None = None
    permalink: str = Field("", description="the comment's own permalink, when it has one")
    by_asker: bool = Field(
        False,
        description="written by the thread's own asker: context, not an answer, unless it "
        "reports what solved the problem",
    )


class PostPayload(BaseModel):
    """One post as evidence: the only things the synthesis may cite."""

    model_config = ConfigDict(frozen=True)

    post_id: str
    kind: SourceKind = Field("reddit", description="where the item comes from")
    subreddit: str = Field(
        description="normalised, lower case; a YouTube channel or Amazon marketplace otherwise"
    )
    title: str
    url: HttpUrl = Field(description="canonical permalink (thread, video, product), no tracking")
    body_excerpt: str
    comments: list[CommentPayload] = Field(
        default_factory=list, description="the comments shown (best scores), in thread order"
    )
    post_karma: int
    num_comments: int = Field(ge=0, description="accepted comments of this post")
    relevance_score: float
    matched_keywords: list[str] = Field(default_factory=list)
    created_at: AwareDatetime | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def top_comment_excerpts(self) -> list[str]:
        """The shown comments' excerpts (seed 004's field), in the order shown."""
        return [comment.excerpt for comment in self.comments]


class SummarizeRequest(BaseModel):
    """The evidence and the limits the selector applied (seed 004)."""

    query: str
    plan_id: UUID
    post_payloads: list[PostPayload]
    prompt_version: str
    max_posts: int
    max_comments_per_post: int
    max_post_chars: int
    max_comment_chars: int


class Source(BaseModel):
    """A post (or video, or product) the summary used, validated against the evidence."""

    post_id: str
    kind: SourceKind = "reddit"
    url: HttpUrl
    subreddit: str
    title: str


class Claims(BaseModel):
    """The answer's texts as spans: prose, and the citations (``post:ID`` / ``comment:ID``) that
    follow it. What the marker strings beside it say, with prose and citations already apart."""

    model_config = ConfigDict(frozen=True)

    summary: tuple[CitedSpan, ...]
    highlights: list[tuple[CitedSpan, ...]]
    cautions: list[tuple[CitedSpan, ...]]


_SEED_004_DESCRIPTION = (
    "Grounded, schema-constrained summary (seed 004, change note 2025-12-11).\n\n"
    "Texts cite evidence inline with [post:ID] / [comment:ID] markers after the claim they\n"
    "support; the written JSON also carries `claims`, the same texts as prose spans with their\n"
    "citation lists, so a reader never has to tell a citation from quoted text by pattern."
)
"""``SummarizeResult``'s description in its JSON schema, written for the programs that read the
schema (the class docstring is for this code's readers). Changing it changes the published
schema: ``tests/pipeline/research_result.schema.json`` is rewritten with it, on purpose."""


class SummarizeResult(BaseModel):
    """Grounded, schema-constrained summary (seed 004, change note 2025-12-11).

    ``summary``, ``highlights`` and ``cautions`` are stored as claims with their citation lists
    (``CitedText``, ``crowdsift.pipeline.synthesis.cited``); renderers number those lists and
    print ``[n]``. Their JSON is seed 004's contract string, which cites evidence with
    ``[post:ID]`` / ``[comment:ID]`` markers (``crowdsift.core.citations``), written from the
    claims; ``claims`` (added to that contract) gives the same texts as spans, so a reader
    need not parse markers. A result read from its own JSON takes its texts from ``claims``
    where they write exactly the strings beside them, so a stranger's literal ``[post:x]`` in
    the prose stays prose; other input is read from the strings.
    """

    model_config = ConfigDict(json_schema_extra={"description": _SEED_004_DESCRIPTION})

    status: Literal["ok", "partial", "error"]
    summary: Cited = Field(description="the answer, with [post:ID]/[comment:ID] markers")
    highlights: list[Cited] = Field(default_factory=list, description="takeaways, each cited")
    cautions: list[Cited] = Field(default_factory=list, description="risks and gaps, each cited")
    sources: list[Source] = Field(default_factory=list)
    prompt_version: str
    engine: str = Field("", description='"local" for the extractive engine, else the LLM engine')
    reason: str | None = Field(None, description="why the status is partial or error")
    abstained: bool = Field(
        False,
        description="the evidence does not discuss the question's subject, so the answer says "
        "so and cites nothing (status partial, reason 'abstained: …'); the engine was not called",
    )

    @model_validator(mode="before")
    @classmethod
    def _spans_of_claims(cls, data: Any) -> Any:
        """Each text from ``claims`` where its spans write exactly the string given beside them."""
        if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
            return data
        try:
            claims = Claims.model_validate(data["claims"])
        except ValidationError:
            return data  # not this program's claims: the strings are the contract
        taken = dict(data)
        summary = CitedText.of(list(claims.summary))
        if data.get("summary") == summary.marked():
            taken["summary"] = summary
        for name in ("highlights", "cautions"):
            cited = [CitedText.of(list(spans)) for spans in getattr(claims, name)]
            if data.get(name) == [text.marked() for text in cited]:
                taken[name] = cited
        return taken

    @computed_field(  # type: ignore[prop-decorator]
        description="summary, highlights and cautions as spans: prose as written and the "
        "citations (post:ID / comment:ID) that follow it, in order; the last span of a text "
        "may cite nothing. The marker strings say the same; read these to number citations"
    )
    @property
    def claims(self) -> Claims:
        return Claims(
            summary=self.summary.spans,
            highlights=[text.spans for text in self.highlights],
            cautions=[text.spans for text in self.cautions],
        )


class SummaryContent(BaseModel):
    """What an answer says: ``SummarizeResult`` but its status and reason, which are decided once,
    from the synthesis' verdict and the run's facts (``crowdsift.pipeline.status``), not by
    whichever stage builds the answer."""

    summary: Cited
    highlights: list[Cited] = Field(default_factory=list)
    cautions: list[Cited] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    prompt_version: str
    engine: str = ""
    abstained: bool = False


# --- The staff-engineer sections (checked, permalinks only) ---------------------------------


class HiddenGem(_Model):
    """A specific setting, flag, version or number found in a thread, with where it was said."""

    text: str
    sources: list[str] = Field(min_length=1, description="thread or comment permalinks")
    score: int = Field(description="karma of the best cited comment/post (from the evidence)")


class MinorityReport(_Model):
    """Competent dissent, with the votes it got (from the evidence, not the engine)."""

    text: str
    sources: list[str] = Field(min_length=1)
    votes: int


class PivotAlert(_Model):
    """A consensus shift between two options, dated by the cited evidence."""

    from_option: str
    to_option: str
    text: str
    sources: list[str] = Field(min_length=1)
    first_seen: UTCDatetime | None = None
    last_seen: UTCDatetime | None = None

    def line(self) -> str:
        """The alert as one line a person reads: "X → Y (first – last): what was said"."""
        dates = ""
        if self.first_seen is not None and self.last_seen is not None:
            dates = f" ({self.first_seen.date().isoformat()} – {self.last_seen.date().isoformat()})"
        return f"{self.from_option} → {self.to_option}{dates}: {self.text}"


class ComparisonRow(_Model):
    option: str
    verdict: str
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)


class CitedSource(_Model):
    """An evidence item the answer cites: a thread (or video, product) or a comment."""

    kind: Literal["thread", "comment"]
    id: str
    url: str
    title: str = Field(description="the thread's title (for comments, their thread's)")


class RedditSynthesis(_Model):
    """The staff-engineer sections of the one checked answer: every claim cites evidence."""

    summary: Cited = Field(
        description="the same text as SummarizeResult.summary, citing [post:ID]/[comment:ID]"
    )
    """Not a second summary: the answer's own (``SummaryContent.summary``), the same object,
    handed to both by grounding, the one place that builds it, so the JSON shows it here too
    (``reddit_response.synthesis.summary``). Readers take the answer's."""
    hidden_gems: list[HiddenGem] = Field(default_factory=list)
    minority_report: list[MinorityReport] = Field(default_factory=list)
    pivot_alerts: list[PivotAlert] = Field(default_factory=list)
    comparison_table: list[ComparisonRow] = Field(default_factory=list)
    sources: list[CitedSource] = Field(
        default_factory=list, description="every item any part cites, in first-citation order"
    )
    removed_citations: list[str] = Field(
        default_factory=list, description="ids the engine cited that are not in the evidence"
    )
    dropped_claims: int = Field(0, description="claims removed because no citation survived")


# --- The engine's draft (ids only) ------------------------------------------------------------


class SourceRef(BaseModel):
    """A source as an engine proposes it; checked against the evidence before use."""

    post_id: str
    url: str | None = None


class DraftClaim(_Model):
    """A claim and the evidence ids (``post:ID`` / ``comment:ID`` or bare ids) it rests on."""

    text: str
    cites: list[str] = Field(default_factory=list)


class DraftPivot(_Model):
    from_option: str
    to_option: str
    text: str
    cites: list[str] = Field(default_factory=list)


class DraftRow(_Model):
    option: str
    verdict: str = Field(description="one line: what the threads say about this option")
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)
    cites: list[str] = Field(default_factory=list)


class AnswerDraft(BaseModel):
    """What an engine returns for the one synthesis, before grounding checks.

    ``summary``, ``highlights`` and ``cautions`` cite evidence inline as ``[post:ID]`` or
    ``[comment:ID]``; the staff-engineer sections list their ids in ``cites``.
    """

    summary: str = Field(description="the answer; cite inline as [post:ID] / [comment:ID]")
    highlights: list[str] = Field(default_factory=list, description="one-sentence takeaways")
    cautions: list[str] = Field(default_factory=list, description="risks, disagreements, gaps")
    sources: list[SourceRef] = Field(default_factory=list)
    hidden_gems: list[DraftClaim] = Field(default_factory=list)
    minority_report: list[DraftClaim] = Field(default_factory=list)
    pivot_alerts: list[DraftPivot] = Field(default_factory=list)
    comparison_table: list[DraftRow] = Field(default_factory=list)
