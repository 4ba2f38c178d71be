"""The direct answer the way a person reads Reddit: the replies the community voted up.

A person looking for an answer on Reddit opens the thread that asks their question and reads
its best-voted replies: the votes are the community's verdict on which answer holds. The local
engine's lead does the same, with a few principles instead of phrase rules:

- **the most relevant threads**: the evidence comes ranked (retrieval, the relevance gate and
  the rerank decided its order); the lead reads the first ``LEAD_THREADS`` Reddit threads that
  have a reply worth quoting, in that order;
- **replies that respond**: top-level replies (a reply to a reply answers someone else), with
  words to them (``MIN_SENTENCE_CHARS``), not only a question back, and about the question or
  its thread (``RESPONDS``: a joke or a moderator's notice is about neither); for a question
  asking what to do (how-to, troubleshooting), only the replies that say what to do (a
  thread of jokes and stories, however voted, has nothing to lead with), and for a
  comparison the replies that name one of the options, when a thread has any;
- **the community's order**: within a thread, by votes (equal votes: the reply closer to the
  question first); the first thread's second reply is quoted too when the community rated it
  nearly as high (``RUNNER_UP``);
- **their words, whole when short**: a reply of up to ``QUOTE_CHARS`` is quoted whole; a
  longer one by its opening sentences (the point of a Reddit reply comes first), never cut
  mid-sentence unless its first sentence alone is too long; each quote carries its votes and
  its citation.

The asker's own post is never quoted here: it is the question's context, not an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from crowdsift.core.sentences import split_sentences, truncate_words
from crowdsift.engines.embedding import Embedder
from crowdsift.pipeline.synthesis.candidates import MIN_SENTENCE_CHARS
from crowdsift.pipeline.synthesis.claims import is_instruction
from crowdsift.pipeline.synthesis.injected_orders import addresses_the_model
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.pipeline.synthesis.specifics import option_pattern

LEAD_THREADS = 2
"""Threads whose replies make the lead: the best-ranked one, and the next, which is the answer
as often as the first is when retrieval is unsure."""
MAX_QUOTES = 3
"""Replies the lead quotes at most: the community's verdict, before the claims that add to it."""
THREAD_PEER = 0.8
"""A later thread's replies join the lead only when the thread is at least this close to the
question as the first one quoted is (cosine of its title and opening), or as the best-ranked
thread when nobody replied to it: a popular thread about something else has popular replies
about something else."""
QUOTE_CHARS = 420
"""A reply this long or shorter is quoted whole; a longer one by its opening sentences."""
RESPONDS = 0.2
"""Cosine to the question or to the thread's own title and opening at or above which a reply
is about them."""
RUNNER_UP = 0.5
"""A thread's second reply is quoted too when its votes are at least this share of the best's."""
ASKS_WHAT_TO_DO = frozenset({"how_to", "troubleshooting"})
"""Intents whose answer is something to do: a reply answers them by saying what."""
MOST_VOTED = 8
"""Replies of a thread the lead weighs: the best-voted; one further down is not the verdict."""
LOOKAHEAD = 4
"""Threads the lead may look through for ``LEAD_THREADS`` that have a reply worth quoting."""
CITATION_ROOM = 40
"""Characters a quote's marks, votes and citation take beside its words."""
REMOVED = frozenset({"[deleted]", "[removed]"})


@dataclass(frozen=True)
class Quote:
    """One reply the lead quotes: what it says (whole or its opening) and where."""

    comment_id: str
    post_id: str
    text: str
    score: int

    def cited(self) -> str:
        """The quote with its votes and citation, as one unit of the answer."""
        points = "point" if abs(self.score) == 1 else "points"
        return f"“{self.text}” ({self.score} {points}) [comment:{self.comment_id}]"


def voted_lead(
    request: SummarizeRequest,
    embedder: Embedder,
    *,
    intent: str = "general",
    compared: Sequence[str] = (),
    budget: int = QUOTE_CHARS,
) -> list[Quote]:
    """The best-voted replies that respond to the question, from the best-ranked threads.

    One embedding batch: the question, and each of the first ``LOOKAHEAD`` threads' title and
    opening and replies; the choice itself is ``choose`` (pure)."""
    if budget - CITATION_ROOM < MIN_SENTENCE_CHARS:
        return []  # no room to quote anyone
    reddit = [post for post in request.post_payloads if post.kind == "reddit"]
    threads = [(post, replies) for post in reddit if (replies := _replies(post))][:LOOKAHEAD]
    if not threads:
        return []
    unanswered = [] if threads[0][0] is reddit[0] else [thread_context(reddit[0])]
    texts = [request.query, *unanswered]  # the best-ranked thread, when nobody replied to it
    for post, replies in threads:
        texts += [thread_context(post), *(reply.excerpt[:QUOTE_CHARS] for reply in replies)]
    vectors = embedder.embed(texts)
    question, at = vectors[0], 1 + len(unanswered)
    bar = float(vectors[1] @ question) if unanswered else None
    patterns = [option_pattern(option) for option in compared]

    def names_option(text: str) -> bool:
        return any(pattern.search(text) for pattern in patterns)

    scored: list[Thread] = []
    for post, replies in threads:
        context, rows = vectors[at], vectors[at + 1 : at + 1 + len(replies)]
        at += 1 + len(replies)
        about = np.maximum(rows @ question, rows @ context)
        pairs = list(zip(replies, map(float, about), strict=True))
        if intent in ASKS_WHAT_TO_DO:  # a thread whose replies say nothing to do has no answer
            pairs = [(r, a) for r, a in pairs if _says_what_to_do(r.excerpt)]
        elif compared:  # naming an option is responding to a comparison, whatever the cosine
            pairs = [(r, max(a, RESPONDS) if names_option(r.excerpt) else a) for r, a in pairs]
            pairs = _preferring(pairs, names_option)
        scored.append(Thread(post, float(context @ question), pairs))
    return choose(scored, limit=min(QUOTE_CHARS, budget - CITATION_ROOM), bar=bar)


@dataclass(frozen=True)
class Thread:
    """A thread as the lead weighs it: how close it is to the question, and each reply with
    how close it is to the question or the thread (the higher of the two cosines)."""

    post: PostPayload
    closeness: float
    replies: list[tuple[CommentPayload, float]]


def choose(
    threads: list[Thread], *, limit: int = QUOTE_CHARS, bar: float | None = None
) -> list[Quote]:
    """The lead's quotes from threads in their ranked order (see the module's principles).

    ``bar``: the best-ranked thread's closeness to the question when nobody replied to it
    (unanswered, it still says what the question is about); else the first thread quoted sets
    it."""
    quotes: list[Quote] = []
    first: float | None = bar
    for thread in threads:
        if len(quotes) >= MAX_QUOTES or len({q.post_id for q in quotes}) >= LEAD_THREADS:
            break
        if first is not None and thread.closeness < THREAD_PEER * first:
            continue  # a later thread about something else: its votes say nothing here
        responding = [(reply, about) for reply, about in thread.replies if about >= RESPONDS]
        if not responding:
            continue
        first = thread.closeness if first is None else first
        responding.sort(key=lambda pair: (-pair[0].score, -pair[1]))  # ties: the closer first
        ranked = [reply for reply, _ in responding]
        for reply in _voted(ranked) if len(quotes) == 0 else ranked[:1]:
            if len(quotes) < MAX_QUOTES and not _repeats(reply, quotes):
                quotes.append(_quote(thread.post, reply, limit))
    return quotes


def _preferring(
    pairs: list[tuple[CommentPayload, float]], answers: Callable[[str], bool]
) -> list[tuple[CommentPayload, float]]:
    """The replies that answer the kind of question asked, when the thread has any."""
    return [(reply, about) for reply, about in pairs if answers(reply.excerpt)] or pairs


def _says_what_to_do(text: str) -> bool:
    """An instruction, a setting, a fix: praise of the thing answers no "how"."""
    return any(is_instruction(s) for s in split_sentences(" ".join(text.split())))


def _voted(picked: list[CommentPayload]) -> list[CommentPayload]:
    """A thread's best reply, and its second when the community rated it nearly as high."""
    best = picked[0]
    if len(picked) > 1 and best.score > 0 and picked[1].score >= RUNNER_UP * best.score:
        return picked[:2]
    return picked[:1]


def _repeats(reply: CommentPayload, quotes: list[Quote]) -> bool:
    """The same words as a reply already quoted (a repost, a double submit)."""
    said = " ".join(reply.excerpt.lower().split())
    return any(said.startswith(quote.text.lower().removesuffix(" …")) for quote in quotes)


def thread_context(post: PostPayload) -> str:
    """What a thread is about, as compared with the question: its title and opening."""
    return " ".join(f"{post.title} {post.body_excerpt[:QUOTE_CHARS]}".split())


def _replies(post: PostPayload) -> list[CommentPayload]:
    """A thread's ``MOST_VOTED`` best-voted top-level replies with words to them (the others
    answer someone else, agree, joke, or ask back), none the asker wrote (their own thread's
    context), and none that gives orders to a model or its reader ("ignore the evidence…"):
    votes do not make an order a claim."""
    replies = [
        c
        for c in post.comments
        if c.depth == 0
        and c.comment_id
        and not c.by_asker
        and c.excerpt.strip() not in REMOVED
        and len(c.excerpt.strip()) >= MIN_SENTENCE_CHARS
        and not _only_asks(c.excerpt)
        and not any(addresses_the_model(s) for s in split_sentences(" ".join(c.excerpt.split())))
    ]
    return sorted(replies, key=lambda c: -c.score)[:MOST_VOTED]


def _only_asks(text: str) -> bool:
    """A reply whose every sentence is a question asks back; it does not answer."""
    sentences = split_sentences(" ".join(text.split()))
    return bool(sentences) and all(s.rstrip(" )\"'”").endswith("?") for s in sentences)


def _quote(post: PostPayload, reply: CommentPayload, limit: int = QUOTE_CHARS) -> Quote:
    return Quote(reply.comment_id, post.post_id, opening(reply.excerpt, limit), reply.score)


def opening(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` whole when it fits ``limit``, else its first sentences that fit (at least the
    first, cut at a word when it alone is too long)."""
    flat = " ".join(text.split()).lstrip(" .,;:")  # what a removed image link leaves before
    if len(flat) <= limit:
        return flat
    kept = ""
    for sentence in split_sentences(flat):
        joined = f"{kept} {sentence}".strip()
        if len(joined) > limit:
            break
        kept = joined
    return f"{kept} …" if kept else truncate_words(flat, limit)
