"""Cited text as a model: prose, each piece followed by the citation list it rests on (pure).

An answer's texts (``SummarizeResult.summary``, ``highlights``, ``cautions``) are stored as
``CitedText``: the claims and their citation lists are the truth. The string the JSON contract
shows (seed 004: citations inline, ``claim [post:a][comment:b].``) is a view of it, written by
``marked``; a field typed ``Cited`` serialises that way and keeps the string's schema. A string
given where a ``CitedText`` is stored (an engine's text at grounding, a test, a saved result)
is read once, by ``CitedText.decode``, the one parser of inline markers. Every renderer
(terminal, Markdown, HTML, the web page through ``SummarizeResult.claims``) numbers the lists
it is handed (``numbered``, ``segments``), so none tells a citation from prose by pattern — a
stranger's literal ``[post:x]`` inside a span's prose stays prose.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from crowdsift.core.citations import (
    MARKER_GROUP,
    Citation,
    SourceNumbers,
    citations_in,
    parse_part,
    tidy,
)
from crowdsift.core.sentences import split_sentences

_RUN = re.compile(rf"(?:{MARKER_GROUP.pattern})+", re.IGNORECASE)
"""Adjacent marker groups: one citation list. Lists parted by spaces stay apart (the spaces
are the writer's), and read as one where a reader sees them (``numbered``, ``thin``)."""


def _read_cites(value: object) -> object:
    """Citations in their JSON form (``post:ID``, ``comment:ID``) read as ``Citation``s."""
    if not isinstance(value, list | tuple):
        return value
    return tuple(_read_cite(item) if isinstance(item, str) else item for item in value)


def _read_cite(ref: str) -> Citation:
    citation = parse_part(ref) if ":" in ref else None
    if citation is None:
        raise ValueError(f"{ref!r} is not a citation: write post:ID or comment:ID")
    return citation


def _write_cites(cites: tuple[Citation, ...]) -> list[str]:
    return [f"{citation.kind}:{citation.id}" for citation in cites]


class CitedSpan(BaseModel):
    """Prose (as written, possibly empty) and the citations that follow it, in order, each once.

    In JSON a citation is ``post:ID`` / ``comment:ID``, the id as written."""

    model_config = ConfigDict(frozen=True)

    text: str
    cites: Annotated[
        tuple[Citation, ...],
        BeforeValidator(_read_cites),
        PlainSerializer(_write_cites, return_type=list[str]),
    ] = ()


class CitedText(BaseModel):
    """A text as spans of prose and their citation lists; the last span may cite nothing."""

    model_config = ConfigDict(frozen=True)

    spans: tuple[CitedSpan, ...] = ()

    @classmethod
    def decode(cls, text: str) -> CitedText:
        """``text``'s inline markers read into citation lists: the one parser of them."""
        return _decode(text)

    @classmethod
    def of(cls, spans: list[CitedSpan]) -> CitedText:
        """``spans`` with each uncited span's prose joined to the next (one canonical form)."""
        joined: list[CitedSpan] = []
        prose = ""
        for span in spans:
            prose += span.text
            if span.cites:
                joined.append(CitedSpan(text=prose, cites=span.cites))
                prose = ""
        if prose:
            joined.append(CitedSpan(text=prose))
        return cls(spans=tuple(joined))

    @property
    def text(self) -> str:
        """The prose alone."""
        return "".join(span.text for span in self.spans)

    def marked(self) -> str:
        """The contract string: each list written ``[post:a][comment:b]`` after its prose."""
        return "".join(span.text + "".join(c.marker() for c in span.cites) for span in self.spans)

    def citations(self) -> list[Citation]:
        """Every citation, in reading order, each once."""
        found: dict[str, Citation] = {}
        for span in self.spans:
            for citation in span.cites:
                found.setdefault(citation.key, citation)
        return list(found.values())

    def refs(self) -> list[str]:
        """The citation keys (``post:id``, ``comment:id``) in reading order, each once."""
        return [citation.key for citation in self.citations()]

    def thin(self, keep: int) -> CitedText:
        """Each list cut to its first ``keep`` (where a claim was said, not all who agreed);
        lists parted only by spaces count as one and are written together."""
        spans: list[CitedSpan] = []
        for span in self.spans:
            if spans and spans[-1].cites and span.cites and not span.text.strip(" \t"):
                room = keep - len(spans[-1].cites)
                known = {c.key for c in spans[-1].cites}
                more = [c for c in span.cites if c.key not in known][: max(room, 0)]
                spans[-1] = CitedSpan(text=spans[-1].text, cites=(*spans[-1].cites, *more))
                continue
            spans.append(CitedSpan(text=span.text, cites=span.cites[:keep]))
        return CitedText(spans=tuple(spans))

    def lines(self) -> list[CitedText]:
        """One ``CitedText`` per line of the prose; a list stays with the line it ends."""
        lines: list[CitedText] = []
        current: list[CitedSpan] = []
        for span in self.spans:
            prose = ""
            for piece in span.text.splitlines(keepends=True):
                body = piece.splitlines()[0]
                if body == piece:
                    prose += piece
                    continue
                lines.append(CitedText.of([*current, CitedSpan(text=prose + body)]))
                current, prose = [], ""
            current.append(CitedSpan(text=prose, cites=span.cites))
        lines.append(CitedText.of(current))
        return lines

    def numbered(self, numbers: SourceNumbers) -> str:
        """The text as a person reads it: each list as ``[n]`` runs (ascending, each number
        once), citations of unknown sources left out; lists parted only by spaces read as one."""
        out, gap = "", ""
        run: set[int] = set()
        for span in self.spans:
            found = {n for n in map(numbers.number, span.cites) if n is not None}
            if run and not span.text.strip(" \t"):
                run, gap = (run | found, "") if found else (run, gap + span.text)
                continue
            out += "".join(f"[{n}]" for n in sorted(run)) + gap + span.text
            run, gap = found, ""
            if found and out and not out[-1].isspace() and out[-1] != "]":
                out += " "
        return tidy(out + "".join(f"[{n}]" for n in sorted(run)) + gap)

    def opening(self, limit: int | None) -> tuple[CitedText, int]:
        """The first ``limit`` claims (all when None), and how many there are.

        A claim is prose up to and including its citation list (and the punctuation some
        writers put after it), so shortening never parts a sentence from its source; a list
        with no prose of its own joins the claim before it. Sentences after the last list
        count one each."""
        pieces = _claims(self)
        chosen = pieces if limit is None else pieces[:limit]
        spans: list[CitedSpan] = []
        for number, piece in enumerate(chosen):
            if number:
                spans.append(CitedSpan(text=" "))
            spans += piece
        return CitedText.of(spans), len(pieces)


def _stored(value: object) -> CitedText:
    """What a ``Cited`` field stores: a ``CitedText`` as it is, a marker string read once."""
    if isinstance(value, CitedText):
        return value
    if isinstance(value, str):
        return CitedText.decode(value)
    raise PydanticCustomError("string_type", "Input should be a valid string")


Cited = Annotated[
    CitedText,
    PlainValidator(_stored),
    PlainSerializer(CitedText.marked, return_type=str),
    WithJsonSchema({"type": "string"}),
]
"""A stored ``CitedText`` whose JSON is the contract string (``marked``) and whose JSON schema
is the string's: seed 004's fields keep their shape while the model holds the claims."""


@lru_cache(maxsize=1024)
def _decode(text: str) -> CitedText:
    spans: list[CitedSpan] = []
    start = 0
    for run in _RUN.finditer(text):
        spans.append(CitedSpan(text=text[start : run.start()], cites=tuple(citations_in(run[0]))))
        start = run.end()
    spans.append(CitedSpan(text=text[start:]))
    return CitedText.of(spans)


def _claims(cited: CitedText) -> list[list[CitedSpan]]:
    """``cited`` as claims, each a list of spans (whitespace collapsed, ends stripped)."""
    spans = _flat(cited)
    pieces: list[list[CitedSpan]] = []
    rest = ""
    for index, span in enumerate(spans):
        prose = span.text
        if index:  # the previous claim took the punctuation after its list
            prose = prose[len(_lead(prose)) :]
        if not span.cites:
            rest = prose
            break
        tail = _lead(spans[index + 1].text) if index + 1 < len(spans) else ""
        claim = CitedSpan(text=prose.lstrip(), cites=span.cites)
        if not (prose + tail).strip(" .,;:!?"):  # a list alone: the previous claim's
            if pieces:
                joined = CitedSpan(text=" " + claim.text, cites=span.cites)
                pieces[-1] += [joined, CitedSpan(text=tail)]
            continue
        pieces.append([claim, CitedSpan(text=tail)])
    pieces += [[CitedSpan(text=s)] for s in split_sentences(rest)] if rest.strip() else []
    return pieces


def _lead(text: str) -> str:
    """The punctuation some writers put after a claim's citations: it closes that claim."""
    return text[: len(text) - len(text.lstrip(".!?;:,"))]


def _flat(cited: CitedText) -> list[CitedSpan]:
    """The spans with every run of whitespace one space, the text's ends stripped, and lists
    parted only by whitespace joined into one (each citation once)."""
    spans: list[CitedSpan] = []
    for span in cited.spans:
        text = re.sub(r"\s+", " ", span.text)
        if spans and spans[-1].cites and span.cites and not text.strip():
            joined = {c.key: c for c in [*spans[-1].cites, *span.cites]}
            spans[-1] = CitedSpan(text=spans[-1].text, cites=tuple(joined.values()))
            continue
        spans.append(CitedSpan(text=text, cites=span.cites))
    if spans:
        spans[0] = CitedSpan(text=spans[0].text.lstrip(), cites=spans[0].cites)
    if spans and not spans[-1].cites:
        spans[-1] = CitedSpan(text=spans[-1].text.rstrip())
    return spans
