"""Grounding checks (DESIGN.md "Grounding"): an engine's draft against the evidence, in code.

Pure. Nothing an engine returns is trusted: every source must be a post of the evidence with
that post's own permalink, every inline ``[post:ID]`` must name an evidence post, and every
link in the text must be an evidence permalink. What fails is removed and named in
``problems``; any problem makes the result ``partial`` with the problems as its ``reason``.
Source metadata (url, subreddit, title) always comes from the evidence, never from the model.

Not problems (normal tidying): repeated sources, posts cited inline but missing from
``sources`` (added from the evidence), citation lists such as ``[post:a, post:b]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from crowdsift.summarizer.config import SummarizerConfig
from crowdsift.summarizer.models import (
    PostPayload,
    Source,
    SummarizeRequest,
    SummarizeResult,
    SummaryDraft,
)
from crowdsift.summarizer.selector import truncate_words

_CITATION = re.compile(r"\s*\[post:([^\]]*)\]", re.IGNORECASE)
_CITED_ID = re.compile(r"\[post:([^\]\s]+)\]")
_LINK = re.compile(r"https?://[^\s<>\[\]\"'`]+|www\.[^\s<>\[\]\"'`]+", re.IGNORECASE)
_TRAILING = ".,;:!?)'\""
_NOT_A_POST = r"(?:comment\s*:|t[13]_)[^\]\n]*"
"""Bracketed markers a summary cannot resolve: it cites posts (``[post:ID]``) only."""
_SENTENCE_END = re.compile(
    r"(?:[.!?…]+[\"'”’)\]]*(?:\s*\[post:[^\]]*\])*|(?:\s*\[post:[^\]]*\])+)(?=\s|$)"
)


def ground(
    draft: SummaryDraft,
    request: SummarizeRequest,
    config: SummarizerConfig,
    *,
    engine: str = "",
) -> tuple[SummarizeResult, list[str]]:
    """The grounded result (``ok`` or ``partial``) and what had to be removed from the draft."""
    checker = _Checker(request.post_payloads)
    summary = checker.clean_text(draft.summary, "summary")
    highlights = [h for h in (checker.clean_text(t, "a highlight") for t in draft.highlights) if h]
    cautions = [c for c in (checker.clean_text(t, "a caution") for t in draft.cautions) if c]
    problems = checker.problems
    sources = checker.sources(draft)
    if len(summary) > config.summary_char_budget:
        problems.append(
            f"summary was {len(summary)} characters; cut to the "
            f"{config.summary_char_budget}-character budget"
        )
        summary = truncate_at_sentence(summary, config.summary_char_budget)
    if not summary:
        problems.append("the engine returned an empty summary")
    highlights = _cap(highlights, config.max_highlights, "highlights", problems)
    cautions = _cap(cautions, config.max_cautions, "cautions", problems)
    if request.post_payloads and not sources:
        problems.append("the summary cites none of the evidence posts")
    result = SummarizeResult(
        status="partial" if problems else "ok",
        summary=summary,
        highlights=highlights,
        cautions=cautions,
        sources=sources,
        prompt_version=request.prompt_version,
        engine=engine,
        reason="; ".join(problems) if problems else None,
    )
    return result, problems


def truncate_at_sentence(
    text: str, limit: int, *, sentence_end: re.Pattern[str] = _SENTENCE_END
) -> str:
    """``text`` cut after its last sentence (and that sentence's citations) within ``limit``;
    at a word boundary with "…" when even the first sentence is too long. ``sentence_end``
    says what ends a sentence, citations included (``[post:ID]`` here, ``[n]`` elsewhere)."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in sentence_end.finditer(text) if m.end() <= limit]
    if ends:
        return text[: ends[-1]].rstrip()
    return truncate_words(text, limit)


def url_key(url: str) -> str:
    """A URL compared loosely: scheme, ``www.``, case, query, fragment, final slash ignored —
    except YouTube's ``v``, which is the video itself (every video's path is ``/watch``)."""
    parts = urlsplit(url.strip() if "://" in url else f"https://{url.strip()}")
    host = parts.netloc.lower().removeprefix("www.").removeprefix("m.")
    key = f"{host}{parts.path.rstrip('/').lower()}"
    if host == "youtube.com" and parts.path.rstrip("/") == "/watch":
        key += "?v=" + parse_qs(parts.query).get("v", [""])[0].lower()
    return key


_FOREIGN_TOKEN = re.compile(
    r"(?P<markdown>\[(?P<label>[^\[\]\n]*)\]\(\s*<?(?P<target>[^()\s<>]+)>?\s*\))"
    r"|(?P<bracket>\[\s*(?P<inner>[^\[\]\n]{1,300}?)\s*\])"
    r"|(?P<link>https?://[^\s<>\[\]()\"'`]+|www\.[^\s<>\[\]()\"'`]+)",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"\d{1,3}(?:\s*[,;]\s*\d{1,3})*")


def remove_foreign(
    text: str,
    *,
    allowed: Callable[[str], bool],
    markers: str,
    quoted: Callable[[str], bool] = lambda url: False,
) -> tuple[str, list[str]]:
    """``text`` without the references in it that lead outside the evidence, and what went.

    Removed: links to a URL ``allowed`` refuses — a bare link may also stay when ``quoted``
    says it is quoted from the evidence; a Markdown link, which reads as a citation, keeps
    only its label (none if the label is a bare number) —, brackets whose content fully
    matches the regex ``markers`` (citation kinds that are not valid in this text, e.g.
    ``comment:ID`` in a summary that cites posts), and numbered markers ``[n]`` (footnotes
    that point nowhere). Removed items are listed in order, each once; gaps they leave before
    punctuation close.
    """
    foreign = re.compile(markers, re.IGNORECASE)
    removed: list[str] = []

    def drop(what: str, keep: str = "") -> str:
        if what not in removed:
            removed.append(what)
        return keep

    def replace(match: re.Match[str]) -> str:
        if match.group("markdown"):
            label, target = match.group("label").strip(), match.group("target")
            if not _LINK.fullmatch(target) or allowed(target):
                return match.group(0)
            return drop(target, "" if _NUMBERED.fullmatch(label) else label)
        if match.group("bracket"):
            inner = match.group("inner")
            if _NUMBERED.fullmatch(inner) or foreign.fullmatch(inner):
                return drop(f"[{inner}]")
            return match.group(0)
        link = match.group("link")
        bare = link.rstrip(_TRAILING + "”’»…")
        return link if allowed(bare) or quoted(bare) else drop(bare, link[len(bare) :])

    cleaned = _FOREIGN_TOKEN.sub(replace, text)
    if removed:
        cleaned = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned))
    return cleaned.strip(), removed


class _Checker:
    """Checks one draft against one evidence set, collecting problems and cited posts."""

    def __init__(self, evidence: list[PostPayload]) -> None:
        self.posts = {p.post_id: p for p in evidence}
        self.ids = {p.post_id.lower(): p.post_id for p in evidence}
        self.urls = {url_key(str(p.url)) for p in evidence}
        self.cited: list[str] = []
        self.problems: list[str] = []

    def clean_text(self, text: str, where: str) -> str:
        """``text`` without unknown citations and foreign links, whitespace tidied."""
        before = len(self.problems)
        text = _CITATION.sub(lambda m: self._citation(m.group(1), where), text)
        text, foreign = remove_foreign(
            text, allowed=lambda url: url_key(url) in self.urls, markers=_NOT_A_POST
        )
        for what in foreign:
            self.problems.append(
                f"removed {what!r} from {where}: summaries cite posts only, as [post:ID]"
                if what.startswith("[")
                else f"removed link {what!r} from {where}: not an evidence permalink"
            )
        text = " ".join(text.split())
        if len(self.problems) > before:  # something was cut out: close the gap it left
            text = re.sub(r"\s+([.,;:!?])", r"\1", text)
        return text.strip()

    def _citation(self, inner: str, where: str) -> str:
        known: list[str] = []
        for part in re.split(r"[,;\s]+", inner):
            ref = re.sub(r"^post:", "", part.strip(), flags=re.IGNORECASE)
            if not ref:
                continue
            post_id = self.ids.get(ref.lower())
            if post_id is None:
                self.problems.append(f"removed citation of unknown post {ref!r} from {where}")
            else:
                known.append(post_id)
                self.cited.append(post_id)
        return "".join(f" [post:{post_id}]" for post_id in dict.fromkeys(known))

    def sources(self, draft: SummaryDraft) -> list[Source]:
        """Draft sources that name an evidence post with its URL, then uncited-listed posts."""
        chosen: list[str] = []
        for ref in draft.sources:
            post_id = self.ids.get(ref.post_id.strip().removeprefix("post:").lower())
            if post_id is None:
                self.problems.append(f"dropped source {ref.post_id!r}: not in the evidence")
                continue
            if ref.url is not None and url_key(ref.url) != url_key(str(self.posts[post_id].url)):
                self.problems.append(
                    f"dropped source {post_id!r}: url {ref.url!r} is not that post's permalink"
                )
                continue
            chosen.append(post_id)
        chosen.extend(self.cited)
        return [self._source(self.posts[post_id]) for post_id in dict.fromkeys(chosen)]

    @staticmethod
    def _source(post: PostPayload) -> Source:
        return Source(
            post_id=post.post_id,
            kind=post.kind,
            url=post.url,
            subreddit=post.subreddit,
            title=post.title,
        )


def _cap(items: list[str], limit: int, name: str, problems: list[str]) -> list[str]:
    if len(items) > limit:
        problems.append(f"kept {limit} of {len(items)} {name} (the limit)")
    return items[:limit]


def cited_ids(text: str) -> list[str]:
    """Post IDs cited as ``[post:ID]`` in ``text``, in order, each once."""
    return list(dict.fromkeys(_CITED_ID.findall(text)))
