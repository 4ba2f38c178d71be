"""The one numbered source list a person reads (pure).

Stored answers cite ``[post:ID]`` / ``[comment:ID]``; people read ``[n]``. The list is the
summary's sources (posts, videos, products) in their order, then every further thread or
comment the staff-engineer sections cite; ``SourceNumbers`` (``crowdsift.core.citations``) maps
every marker and permalink to its number, so terminal, previews and the web page number alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from crowdsift.core.citations import SourceNumbers
from crowdsift.pipeline.reddit.models import SidecarSynthesis
from crowdsift.pipeline.synthesis.models import SummarizeResult


@dataclass(frozen=True)
class ListedSource:
    """One numbered entry: what it is and where it leads."""

    number: int
    label: str
    url: str


def _where(kind: str, where: str) -> str:
    return {"youtube": f"YouTube · {where}", "amazon": f"Amazon · {where}"}.get(kind, f"r/{where}")


def numbered_sources(
    summary: SummarizeResult | None, synthesis: SidecarSynthesis | None
) -> tuple[SourceNumbers, list[ListedSource]]:
    """The numbering and the entries to print, in number order."""
    numbers = SourceNumbers()
    listed: list[ListedSource] = []
    for source in summary.sources if summary else []:
        url = str(source.url)
        if numbers.has([f"post:{source.post_id}"], url):
            continue
        number = numbers.add([f"post:{source.post_id}"], url)
        label = f"{_where(source.kind, source.subreddit)} — {source.title}"
        listed.append(ListedSource(number, label, url))
    for cited in synthesis.sources if synthesis else []:
        key = f"{'post' if cited.kind == 'thread' else 'comment'}:{cited.id}"
        if numbers.has([key], cited.url):
            numbers.add([key], cited.url)
            continue
        number = numbers.add([key], cited.url)
        label = cited.title if cited.kind == "thread" else f"a comment in “{cited.title}”"
        listed.append(ListedSource(number, label, cited.url))
    return numbers, listed
