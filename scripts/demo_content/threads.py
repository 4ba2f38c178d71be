"""Grows one comment tree from the text pools: who says what, to whom, how deep, how liked.

Everything random comes from the ``Rng`` handed in, so a thread depends only on its own key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from demo_content import common
from demo_content.model import Theme, Topic
from demo_content.rng import Deck, Rng

MAX_DEPTH = 5
SHIFT_BY_YEAR = {2023: 0.22, 2024: 0.45, 2025: 0.74, 2026: 0.86}


@dataclass
class Node:
    """One comment before it gets an id: ``parent`` indexes the same thread's node list."""

    parent: int | None
    depth: int
    body: str
    author: str
    score: int
    kind: str
    delay: int
    side: str = ""
    stickied: bool = False
    distinguished: str | None = None
    controversial: bool = False
    deleted_later: bool = False


class Cast:
    """A theme's regular posters; a few write a lot, most write once or twice (Zipf-like)."""

    def __init__(self, rng: Rng, theme: Theme, size: int = 160) -> None:
        names: list[str] = []
        while len(names) < size:
            name = _username(rng, theme.name_parts)
            if name not in names:
                names.append(name)
        self.names = tuple(names)
        self.weights = tuple(1.0 / (rank + 4) for rank in range(size))

    def pick(self, rng: Rng, avoid: str = "") -> str:
        for _ in range(4):
            name = rng.weighted(self.names, self.weights)
            if name != avoid:
                return name
        return name


def _username(rng: Rng, parts: tuple[str, ...]) -> str:
    part, adj, noun = rng.choice(parts), rng.choice(common.ADJECTIVES), rng.choice(common.NOUNS)
    style = 6 if rng.below(25) == 0 else rng.below(6)
    if style == 0:
        return f"{adj}_{part}{rng.between(2, 99)}"
    if style == 1:
        return f"{part.capitalize()}{noun.capitalize()}"
    if style == 2:
        return f"{part}-{noun}"
    if style == 3:
        return f"{adj.capitalize()}{part.capitalize()}{rng.between(1000, 9999)}"
    if style == 4:
        return f"{noun}_of_{part}s"
    if style == 5:
        return f"{part}_{noun}_{rng.between(70, 99)}"
    return f"throwaway_{part}{rng.between(100, 999)}"


class Pools:
    """A topic's decks, shared by all its threads so sentences rotate before they repeat."""

    def __init__(self, rng: Rng, theme: Theme, topic: Topic) -> None:
        self.theme, self.topic = theme, topic
        self.facts = Deck(rng, topic.facts)
        self.side_a = Deck(rng, topic.side_a)
        self.side_b = Deck(rng, topic.side_b)
        self.counters = Deck(rng, topic.counters or topic.facts)
        self.questions = Deck(rng, (*topic.questions, *topic.questions, *theme.questions))
        self.answers = {**theme.questions, **topic.questions}
        self.frames = Deck(rng, theme.frames)

    def side(self, which: str, said: set[str] | None = None) -> str:
        return (self.side_a if which == "a" else self.side_b).draw(said)


class ThreadBuilder:
    """Builds the comment tree of one post."""

    def __init__(self, rng: Rng, pools: Pools, cast: Cast, op: str, year: int) -> None:
        self.rng, self.pools, self.cast, self.op = rng, pools, cast, op
        self.has_sides = bool(pools.side_a) and bool(pools.side_b)
        self.p_b = SHIFT_BY_YEAR[year] if pools.topic.shift else 0.5
        self.nodes: list[Node] = []
        self.said: set[str] = set()

    def build(
        self, size: int, *, gem: str = "", dissent: str = "", automod: str = ""
    ) -> list[Node]:
        """``size`` ordinary comments, plus the bot notice, the dissent and the gem chain."""
        if automod:
            self._add(None, automod, "AutoModerator", 1, "automod", self.rng.between(4, 45))
            self.nodes[-1].stickied, self.nodes[-1].distinguished = True, "moderator"
        for _ in range(size):
            self.add_ordinary()
        if dissent:
            self._add_dissent(dissent)
        if gem:
            self._add_gem_chain(gem)
        self._apply_noise()
        return self.nodes

    def add_top(self, body: str, kind: str = "fact") -> int:
        """A top-level comment with given text (hand-written threads use this)."""
        self._add(None, body, self.cast.pick(self.rng, self.op), self._top_score(), kind, 0)
        return len(self.nodes) - 1

    def add_reply(self, parent: int, body: str, kind: str = "fact") -> int:
        author = self.cast.pick(self.rng, self.nodes[parent].author)
        self._add(parent, body, author, self._reply_score(parent), kind, 0)
        return len(self.nodes) - 1

    # -- ordinary comments ------------------------------------------------------------
    def add_ordinary(self) -> None:
        open_parents = [
            i for i, n in enumerate(self.nodes) if n.depth < MAX_DEPTH and n.kind != "automod"
        ]
        if not open_parents or self.rng.chance(0.38):
            self._top_level()
            return
        weights = [1.0 + math.sqrt(max(self.nodes[i].score, 0)) for i in open_parents]
        self._reply(self.rng.weighted(open_parents, weights))

    def _top_level(self) -> None:
        rng, pools = self.rng, self.pools
        roll, side, kind = rng.random(), "", "fact"
        if roll < 0.80:
            text, side = self._substance()
            body = self._voice(self._with_fact(text, 0.28))
            kind = f"side_{side}" if side else "fact"
            if rng.chance(0.2):
                body = f"{pools.frames.draw(self.said).format(n=rng.between(2, 18))} {body}"
        elif roll < 0.88:
            body, kind = pools.counters.draw(self.said), "counter"
        elif roll < 0.96:
            body, kind = pools.questions.draw(self.said), "question"
        else:
            body, kind = rng.choice(common.SHORT), "short"
        score = self._top_score()
        if kind == "counter":
            score = rng.between(-14, 30)
        elif kind == "short":
            score = rng.between(-3, 6)
        elif side and self.pools.topic.shift and side == ("b" if self.p_b >= 0.5 else "a"):
            score += rng.between(0, 25)
        self._add(None, body, self.cast.pick(rng, self.op), score, kind, 0, side)

    def _reply(self, parent: int) -> None:
        rng, pools, above = self.rng, self.pools, self.nodes[parent]
        author, side = self.cast.pick(rng, above.author), above.side
        roll = rng.random()
        if above.kind == "question":
            body, author, side = *self._answer(parent), ""
            kind = "answer"
        elif roll < 0.26:
            text, side = self._substance(side)
            body, kind = f"{rng.choice(common.AGREE)} {self._voice(text)}", "agree"
        elif roll < 0.40:
            if above.kind in ("counter", "dissent"):
                text, side = self._substance()
            elif side and self.has_sides:
                side = "a" if side == "b" else "b"
                text = pools.side(side, self.said)
            else:
                text, side = pools.counters.draw(self.said), ""
            body, kind = f"{rng.choice(common.DISAGREE)} {text}", "disagree"
        elif roll < 0.55:
            body, kind, side = pools.questions.draw(self.said), "question", ""
        elif roll < 0.64:
            body, kind, side = rng.choice(common.THANKS), "thanks", ""
        elif roll < 0.72 and above.author != self.op:
            body, kind, side, author = self._op_reply(), "op", "", self.op
        elif roll < 0.76:
            body, kind, side = rng.choice(common.SHORT), "short", ""
        else:
            text, side = self._substance(side)
            body, kind = self._voice(text), "fact"
        self._add(parent, body, author, self._reply_score(parent), kind, 0, side)

    def _answer(self, question: int) -> tuple[str, str]:
        """The asked person answers: the commenter above the question, or OP for top level."""
        asked = self.nodes[question].parent
        author = self.op if asked is None else self.nodes[asked].author
        if author in ("[deleted]", self.nodes[question].author):
            author = self.cast.pick(self.rng, self.nodes[question].author)
        answers = self.pools.answers.get(self.nodes[question].body, ())
        if answers:
            return self.rng.choice(answers), author
        text = f"{self.rng.choice(common.ANSWER)} {self._substance()[0]}".strip()
        return text, self.cast.pick(self.rng, self.nodes[question].author)

    def _substance(self, side: str = "") -> tuple[str, str]:
        """A claim: in X-vs-Y topics often one camp's (the year decides which), else a fact."""
        if self.has_sides and (side or self.rng.chance(0.5)):
            side = side or ("b" if self.rng.chance(self.p_b) else "a")
            return self.pools.side(side, self.said), side
        return self.pools.facts.draw(self.said), ""

    def _voice(self, text: str) -> str:
        """People hedge and sign off differently; the same advice rarely reads identically."""
        roll = self.rng.random()
        if roll < 0.1:
            return f"{self.rng.choice(common.HEDGES)} {text}"
        if roll < 0.22:
            return f"{text} {self.rng.choice(common.TAILS)}"
        return text

    def _op_reply(self) -> str:
        if self.rng.chance(0.5):
            return f"{self.rng.choice(common.OP_OPENERS)} {self.pools.questions.draw(self.said)}"
        return self.rng.choice(common.OP_REPLIES)

    def _with_fact(self, first: str, p_second: float) -> str:
        if not self.rng.chance(p_second):
            return first
        second = self.pools.facts.draw(self.said)
        glue = "\n\n" if self.rng.chance(0.5) else " "
        return f"{first}{glue}{second}"

    # -- the special voices ---------------------------------------------------------------
    def _add_dissent(self, text: str) -> None:
        rng = self.rng
        self._add(None, text, self.cast.pick(rng, self.op), rng.between(60, 420), "dissent", 0)
        root = len(self.nodes) - 1
        self.nodes[root].controversial = True
        counter = self.pools.facts.draw(self.said)
        self.add_reply(root, f"{rng.choice(common.DISAGREE)} {counter}", "disagree")
        self.add_reply(root, rng.choice(common.DISSENT_REPLIES), "agree")
        if rng.chance(0.6):
            self._add(root, rng.choice(common.OP_REPLIES), self.op, rng.between(3, 40), "op", 0)

    def _add_gem_chain(self, gem: str) -> None:
        rng = self.rng
        tops = [i for i, n in enumerate(self.nodes) if n.parent is None and n.kind != "automod"]
        current = rng.choice(tops) if tops else self.add_top(self.pools.facts.draw(self.said))
        target = rng.between(3, MAX_DEPTH)
        while self.nodes[current].depth < target - 1:
            if self.nodes[current].kind == "question":
                body, author = self._answer(current)
                score = self._reply_score(current)
                self._add(current, body, author, score, "answer", 0)
                current = len(self.nodes) - 1
            elif rng.chance(0.5):
                current = self.add_reply(current, self.pools.questions.draw(self.said), "question")
            else:
                text = f"{rng.choice(common.AGREE)} {self._substance()[0]}"
                current = self.add_reply(current, text, "agree")
        body = f"{rng.choice(common.GEM_OPENERS)} {gem}".strip()
        author = self.cast.pick(rng, self.nodes[current].author)
        self._add(current, body, author, rng.between(2, 38), "gem", 0)

    def _apply_noise(self) -> None:
        """Deleted, removed and orphaned-author comments, emoji and zero-width characters."""
        rng = self.rng
        for node in self.nodes:
            if node.kind in ("automod", "dissent", "gem"):
                continue
            roll = rng.random()
            if roll < 0.025:
                node.body, node.author = "[deleted]", "[deleted]"
                node.deleted_later = rng.chance(0.5)
            elif roll < 0.037:
                node.body, node.author = "[removed]", "[deleted]"
            elif roll < 0.052:
                node.author = "[deleted]"
            elif roll < 0.085:
                node.body = f"{node.body} {rng.choice(common.EMOJI)}"
            elif roll < 0.097 and " " in node.body:
                head, tail = node.body.split(" ", 1)
                node.body = f"{head}\u200b {tail}"

    # -- plumbing ---------------------------------------------------------------------
    def _add(
        self,
        parent: int | None,
        body: str,
        author: str,
        score: int,
        kind: str,
        delay: int,
        side: str = "",
    ) -> None:
        depth = 1 if parent is None else self.nodes[parent].depth + 1
        if not delay:
            scale = 420.0 if parent is None else 600.0
            delay = self.rng.heavy(scale, 20 * 86400) + self.rng.between(20, 240)
        self.nodes.append(Node(parent, depth, body, author, score, kind, delay, side))

    def _top_score(self) -> int:
        return self.rng.heavy(3.0, 900) - self.rng.below(3)

    def _reply_score(self, parent: int) -> int:
        """Replies mostly score below their parent; deeper ones get less attention."""
        above = self.nodes[parent]
        cap = max(8, above.score + above.score // 2)
        if self.rng.chance(0.08):
            cap = max(cap, 300 // (above.depth + 1))
        return self.rng.heavy(2.0, cap) - self.rng.below(3)
