"""A chat-completions responder that answers every crowdsift task well, except where told not to.

``TaskResponder`` plugs into the real ``ChatCompletionsServer`` (``responder=``). It tells the
task from the request's ``response_format.json_schema.name`` (the output model's name) and
builds a valid reply from what the prompt lists — post ids, comment ids, item counts — the way
a careful model would: citing only what it was shown. A fault policy decides which requests get
a fault instead (a 429, a 500, a stall past the client timeout, invalid JSON, a wrong-length
array, a refusal, a cut-off reply, a broken body, a dropped connection). Everything the engine
does with the reply — retries, the repair round trip, validation — is the real engine's.

Also here: a small expert archive (posts, comments, drift groups) for the panel's phases, and
helpers that check a finished result's citations against its evidence.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar

from crowdsift.core.config import Settings
from crowdsift.engines.openai_compat import OpenAICompatEngine
from crowdsift.sources.experts.models import DriftGroup, Expert, ExpertComment, ExpertPost
from crowdsift.testing.expert_store import MemoryExpertStore
from tests.support.openai_server import (
    ChatCompletionsServer,
    Queued,
    delay,
    disconnect,
    length,
    refusal,
    status,
    truncated,
)

API_KEY = "sk-test-faults-7Hq2Lw9"
FaultKind = Literal[
    "429", "500", "timeout", "invalid_json", "wrong_length", "refusal", "length", "truncated",
    "disconnect",
]  # fmt: skip
FAULT_KINDS: tuple[FaultKind, ...] = (
    "429", "500", "timeout", "invalid_json", "wrong_length", "refusal", "length", "truncated",
    "disconnect",
)  # fmt: skip
FaultPolicy = Callable[[str, dict[str, Any]], FaultKind | None]
"""(schema name, request body) → the fault to serve, or None for a valid answer."""
T = TypeVar("T")

STALL_S = 30.0
"""How long a "timeout" fault holds its answer: far past any client timeout used here (the
server cuts the wait short when it stops, so no test waits this long)."""
INVALID_JSON = 'Sure! Here is the JSON you asked for: {"answer": [true, false'


# --- reading the request -------------------------------------------------------------------


def schema_of(body: dict[str, Any]) -> str:
    """The output model's name the engine asked for (``response_format.json_schema.name``)."""
    response_format = body.get("response_format") or {}
    return str((response_format.get("json_schema") or {}).get("name", "?"))


def _text(body: dict[str, Any], role: str) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"] if m["role"] == role)


def _first_user(body: dict[str, Any]) -> str:
    """The task's own user message (a repair round trip appends more after it)."""
    return next(str(m["content"]) for m in body["messages"] if m["role"] == "user")


def _ids(pattern: str, text: str) -> list[str]:
    match = re.search(pattern, text)
    return [part.strip() for part in match.group(1).split(",") if part.strip()] if match else []


def _fenced(label: str, text: str) -> str:
    match = re.search(rf'<evidence id="{re.escape(label)}">\n(.*?)\n</evidence>', text, re.DOTALL)
    return match.group(1) if match else ""


def map_chunk_ids(body: dict[str, Any]) -> list[int]:
    """The post ids of a map request's chunk."""
    return [int(i) for i in _ids(r"Post IDs in this chunk \(\d+\): ([\d, ]+)", _first_user(body))]


# --- valid replies, one per task -----------------------------------------------------------

Reply = dict[str, Any]


def _relevance(body: dict[str, Any]) -> Reply:
    count = int(re.search(r"exactly (\d+) booleans", _text(body, "system")).group(1))  # type:
    # ignore[union-attr]
    return {  # every other item is relevant; earlier items answer more directly
        "relevant": [n % 2 == 0 for n in range(count)],
        "scores": [round(max(0.1, 0.95 - 0.01 * n), 2) for n in range(count)],
    }


def _map(body: dict[str, Any]) -> Reply:
    marks = ("HIGH", "MEDIUM", "LOW")
    return {
        "posts": [
            {"post_id": pid, "relevance": marks[n % 3], "reason": "scored by position"}
            for n, pid in enumerate(map_chunk_ids(body))
        ]
    }


def _medium(body: dict[str, Any]) -> Reply:
    ids = _ids(r"Post IDs \(\d+\): ([\d, ]+)", _first_user(body))
    return {"scores": [{"post_id": int(i), "score": 0.9 if n % 2 == 0 else 0.2}
                       for n, i in enumerate(ids)]}  # fmt: skip


def _reduce(body: dict[str, Any]) -> Reply:
    ids = _ids(r"Citable posts \(the only valid IDs\): ([\d, ]+)", _first_user(body))
    cited = ids[:2]
    sentences = [
        "I use it every day for meetings and it has paid for itself",
        "The battery easily lasts through a long working week",
    ]
    return {"answer": " ".join(f"{s} [post:{i}]." for s, i in zip(sentences, cited, strict=False))}


_TRANSLATIONS = {
    "English": "The author recommends this device for meetings and long trips.",
    "Russian": "Автор рекомендует это устройство для встреч и долгих поездок.",
}


def _translate(body: dict[str, Any]) -> Reply:
    target = re.search(r"into (\w+)\.", _text(body, "system")).group(1)  # type: ignore[union-attr]
    original = _fenced("answer", _first_user(body))
    markers = " ".join(dict.fromkeys(re.findall(r"\[post:[^\]\s]+\]", original)))
    return {"text": f"{_TRANSLATIONS.get(target, _TRANSLATIONS['English'])} {markers}".strip()}


def _groups(body: dict[str, Any]) -> Reply:
    return {"group_ids": re.findall(r'<evidence id="group:([^"]+)">', _first_user(body))}


def _sections(body: dict[str, Any]) -> Reply:
    user = _first_user(body)
    heads = list(re.finditer(r"^Section (\w+) \(", user, re.MULTILINE))
    texts: dict[str, str] = {}
    for n, head in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(user)
        comments = re.findall(r'<evidence id="comment:(\d+)">', user[head.end() : end])
        if comments:
            texts[head.group(1)] = f"A useful clarification of the setup [comment:{comments[0]}]."
    return texts


class Formulation:
    """What the formulate (Reddit branch) and plan (ask) replies propose to search for."""

    def __init__(self, keywords: Iterable[str], subreddits: Iterable[str]) -> None:
        self.keywords = list(keywords)
        self.subreddits = list(subreddits)

    def formulate(self, body: dict[str, Any]) -> Reply:
        return {
            "english_question": _fenced("question", _first_user(body)),
            "intent": "comparison",
            "ai_mode": "none",
            "temporal": "evergreen",
            "keywords": self.keywords,
            "ai_queries": [f"{self.keywords[0]} review"],
            "subreddits": self.subreddits,
            "compared": [],
        }


def _answer(body: dict[str, Any]) -> Reply:
    """The one synthesis: summary, highlights and sources, and a gem when comments are shown."""
    user = _first_user(body)
    listed = re.findall(r"^- post:(\S+) (\S+)$", user, re.MULTILINE)
    comments = re.findall(r"^\[comment:([^\]]+)\] depth", user, re.MULTILINE)
    if not listed:
        return {"summary": "Nothing in the evidence answers the question."}
    (first, url), *rest = listed
    summary = f"Buyers say it helps in meetings [post:{first}]."
    if rest:
        summary += f" Others prefer a phone app [post:{rest[0][0]}]."
    gems = []
    if comments:
        summary += f" One reply names the setting that matters [comment:{comments[0]}]."
        gems = [{"text": "A concrete recording setting.", "cites": [f"comment:{comments[0]}"]}]
    return {
        "summary": summary,
        "highlights": [f"Meetings are the main use [post:{first}]."],
        "cautions": [],
        "sources": [{"post_id": first, "url": url}],
        "hidden_gems": gems,
    }


def _wrong_length(schema: str, _body: dict[str, Any], valid: Reply) -> Reply:
    """The valid reply with one element too few (or, for objects, a reply of the wrong shape)."""
    for key in ("relevant", "scores", "posts"):
        if isinstance(valid.get(key), list):
            items = valid[key]
            return {key: items[:-1] if len(items) > 1 else [*items, *items]}
    if schema == "RelevantGroups":
        return {"group_ids": ["not-offered"]}
    return {"answer": ["wrong", "shape"], "summary": ["wrong"], "text": ["wrong"]}


# --- the responder ---------------------------------------------------------------------------


class TaskResponder:
    """Valid JSON for every task, unless ``fault`` says otherwise; counts what it served."""

    def __init__(
        self,
        fault: FaultPolicy | None = None,
        *,
        formulation: Formulation | None = None,
        stall_s: float = STALL_S,
    ) -> None:
        self._fault = fault
        self._stall_s = stall_s
        self._lock = threading.Lock()
        self.served: Counter[str] = Counter()
        self.faults: list[tuple[str, FaultKind]] = []
        self.unknown: list[str] = []
        plan = formulation or Formulation(["plaud note", "phone recording app"], ["gadgets"])
        self._valid: dict[str, Callable[[dict[str, Any]], Reply]] = {
            "RelevanceVerdicts": _relevance,
            "MapVerdicts": _map,
            "MediumScores": _medium,
            "ReduceDraft": _reduce,
            "Translation": _translate,
            "RelevantGroups": _groups,
            "SectionTexts": _sections,
            "FormulationDraft": plan.formulate,
            "AnswerDraft": _answer,
        }

    def __call__(self, body: dict[str, Any]) -> Queued:
        schema = schema_of(body)
        builder = self._valid.get(schema)
        kind = self._fault(schema, body) if self._fault is not None else None
        with self._lock:
            self.served[schema] += 1
            if builder is None:
                self.unknown.append(schema)
            if kind is not None:
                self.faults.append((schema, kind))
        if builder is None:
            return status(500, f"TaskResponder has no reply for {schema}")
        valid = builder(body)
        if kind is None:
            return json.dumps(valid, ensure_ascii=False)
        return self._faulty(kind, schema, body, valid)

    def _faulty(self, kind: FaultKind, schema: str, body: dict[str, Any], valid: Reply) -> Queued:
        text = json.dumps(valid, ensure_ascii=False)
        faults: dict[FaultKind, Callable[[], Queued]] = {
            "429": lambda: status(429, "Rate limit reached for requests", retry_after=0),
            "500": lambda: status(500, "The server had an error while processing your request."),
            "timeout": lambda: delay(self._stall_s, reply=text),
            "invalid_json": lambda: INVALID_JSON,
            "wrong_length": lambda: json.dumps(_wrong_length(schema, body, valid)),
            "refusal": lambda: refusal(),
            "length": lambda: length(text),
            "truncated": lambda: truncated(),
            "disconnect": lambda: disconnect(),
        }
        return faults[kind]()

    def count(self, schema: str) -> int:
        with self._lock:
            return self.served[schema]


# --- fault policies ----------------------------------------------------------------------------


class FaultWhere:
    """Fault the first ``times`` requests (None: all) for ``schema`` that ``where`` accepts."""

    def __init__(
        self,
        schema: str,
        kind: FaultKind,
        *,
        times: int | None = None,
        where: Callable[[dict[str, Any]], bool] = lambda _body: True,
    ) -> None:
        self.schema, self.kind, self.times, self.where = schema, kind, times, where
        self.matched = 0
        self._lock = threading.Lock()

    def __call__(self, schema: str, body: dict[str, Any]) -> FaultKind | None:
        if schema != self.schema or not self.where(body):
            return None
        with self._lock:
            self.matched += 1
            return self.kind if self.times is None or self.matched <= self.times else None


class RandomFaults:
    """Every request has ``rate`` chance of a fault, of any kind.

    The draw is seeded by the request's content and how often that exact content was seen, so
    concurrent phases get the same faults whatever order their requests arrive in, and a retry
    of a faulted request draws again.
    """

    def __init__(self, seed: int, rate: float, kinds: Iterable[FaultKind] = FAULT_KINDS) -> None:
        self.seed, self.rate, self.kinds = seed, rate, list(kinds)
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, _schema: str, body: dict[str, Any]) -> FaultKind | None:
        content = json.dumps(body["messages"], sort_keys=True)
        digest = hashlib.sha256(content.encode()).hexdigest()
        with self._lock:
            self._seen[digest] += 1
            nth = self._seen[digest]
        rng = random.Random(f"{self.seed}:{nth}:{digest}")
        return rng.choice(self.kinds) if rng.random() < self.rate else None


# --- the engine --------------------------------------------------------------------------------


class SleepRecorder:
    """An async sleep that records what it was asked to wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def engine_settings(server: ChatCompletionsServer, *, timeout: float, retries: int) -> Settings:
    return Settings(
        llm_base_url=server.base_url,
        llm_api_key=API_KEY,
        llm_timeout=timeout,
        llm_max_retries=retries,
    )


async def with_engine(
    server: ChatCompletionsServer,
    work: Callable[[OpenAICompatEngine], Awaitable[T]],
    *,
    sleep: SleepRecorder | None = None,
    timeout: float = 10.0,
    retries: int = 1,
) -> T:
    """Run ``work`` with the real openai engine pointed at ``server``, then close the engine."""
    engine = OpenAICompatEngine.from_settings(
        engine_settings(server, timeout=timeout, retries=retries), sleep=sleep or SleepRecorder()
    )
    try:
        return await work(engine)
    finally:
        await engine.aclose()


# --- a small expert archive ----------------------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
ALPHA = Expert(expert_id="alpha", name="Alpha Audio", channel="alpha_ch", language="en")
BETA = Expert(expert_id="beta", name="Beta Gear", channel="beta_ch", language="en")
POSTS_PER_EXPERT = 12
_TOPICS = (
    "The Plaud Note records meetings well and the transcripts are accurate enough for notes.",
    "A phone recording app is fine for interviews if you keep the phone close to the speaker.",
    "Battery life of the recorder lasts a week of daily meetings without charging.",
    "I compared three voice recorders on a noisy train and the dedicated device won.",
)


def expert_store(*experts: Expert) -> MemoryExpertStore:
    """Each expert: 12 posts (one a day), two comments under every post (the expert's own and
    a community one), and two drift groups under the oldest posts."""
    store = MemoryExpertStore()
    for expert in experts or (ALPHA, BETA):
        store.add_expert(expert)
        store.add_posts(_post(expert, n) for n in range(1, POSTS_PER_EXPERT + 1))
        store.add_comments(c for n in range(1, POSTS_PER_EXPERT + 1) for c in _comments(expert, n))
        store.replace_drift_groups(expert.expert_id, _drift(expert))
    return store


def _post(expert: Expert, n: int) -> ExpertPost:
    return ExpertPost(
        expert_id=expert.expert_id, post_id=n, text=f"{_TOPICS[n % len(_TOPICS)]} (note {n})",
        date=NOW - timedelta(days=POSTS_PER_EXPERT - n), url=f"https://t.me/{expert.channel}/{n}",
    )  # fmt: skip


def _comments(expert: Expert, post_id: int) -> list[ExpertComment]:
    when = NOW - timedelta(days=POSTS_PER_EXPERT - post_id, hours=-1)
    return [
        ExpertComment(
            expert_id=expert.expert_id, comment_id=post_id * 10 + 1, post_id=post_id,
            author=expert.name, author_is_expert=True, date=when,
            text="To clarify: I record in the high quality mode and export to text afterwards.",
        ),
        ExpertComment(
            expert_id=expert.expert_id, comment_id=post_id * 10 + 2, post_id=post_id,
            author="reader", date=when + timedelta(minutes=5),
            text="Mine died after a year, so check the warranty before you buy one.",
        ),
    ]  # fmt: skip


def _drift(expert: Expert) -> list[DriftGroup]:
    return [
        DriftGroup(
            expert_id=expert.expert_id, group_id=f"{expert.expert_id}-g{post_id}",
            post_id=post_id, topic="warranty and repairs of recorders",
            keywords=["warranty", "repair"], comment_ids=[post_id * 10 + 1, post_id * 10 + 2],
            date=NOW - timedelta(days=POSTS_PER_EXPERT - post_id),
        )
        for post_id in (2, 3)
    ]  # fmt: skip


# --- citation checks ----------------------------------------------------------------------------

POST_MARKER = re.compile(r"\[post:([^\]\s]+)\]")
COMMENT_MARKER = re.compile(r"\[comment:([^\]\s]+)\]")
NUMBER_MARKER = re.compile(r"\[(\d+)\]")


def post_markers(*texts: str) -> set[str]:
    return {m for text in texts for m in POST_MARKER.findall(text)}
