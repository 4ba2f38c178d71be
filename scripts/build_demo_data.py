#!/usr/bin/env python3
"""Build crowdsift's bundled demo archive: SAMPLE Reddit dumps written by the project.

Nothing here is real Reddit content. The text pools in ``scripts/demo_content/`` were written
for the demo; this script arranges them into Pushshift / Arctic Shift style dump files
(one JSON object per line, zstd-compressed) so ``make demo`` works with no key and no network.

The output is deterministic: a fixed seed per thread, fixed timestamps, stable ordering and a
single zstd frame, so two runs give byte-identical files.

    python scripts/build_demo_data.py               # write src/crowdsift/demo/data/*.zst
    python scripts/build_demo_data.py --check       # exit 1 if the committed files are stale
    python scripts/build_demo_data.py --out-dir DIR # write somewhere else
"""

from __future__ import annotations

import argparse
import calendar
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import zstandard

from demo_content import THEMES, common
from demo_content.dumpformat import (
    COMMENT_ID_BASE,
    COMMENT_ID_RATE,
    LAST_POST,
    POST_ID_BASE,
    POST_ID_RATE,
    START,
    PostSpec,
    assign_ids,
    comment_record,
    comment_times,
    encode,
    post_record,
    vary_created,
)
from demo_content.guides import GUIDES, NON_ENGLISH
from demo_content.model import Special, Theme, Topic
from demo_content.rng import Rng
from demo_content.specials import (
    AUTOMOD_COMMENTS,
    AUTOMOD_THREAD_BODY,
    AUTOMOD_THREADS,
    SPECIALS,
)
from demo_content.threads import Cast, Pools, ThreadBuilder

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "src" / "crowdsift" / "demo" / "data"
SUBMISSIONS = "RS_demo.ndjson.zst"
COMMENTS = "RC_demo.ndjson.zst"


@dataclass
class World:
    """Per-theme casts and per-topic decks, looked up by key."""

    casts: dict[str, Cast]
    pools: dict[str, Pools]
    theme_of: dict[str, Theme]
    first_topic_in: dict[str, str]

    @classmethod
    def create(cls) -> World:
        casts: dict[str, Cast] = {}
        pools: dict[str, Pools] = {}
        theme_of: dict[str, Theme] = {}
        first_topic_in: dict[str, str] = {}
        for theme in THEMES:
            casts[theme.key] = Cast(Rng.keyed("cast", theme.key), theme)
            for topic in theme.topics:
                pools[topic.key] = Pools(Rng.keyed("pools", topic.key), theme, topic)
                theme_of[topic.key] = theme
                for subreddit in topic.subreddits:
                    first_topic_in.setdefault(subreddit, topic.key)
        return cls(casts, pools, theme_of, first_topic_in)

    def builder(self, rng: Rng, topic_key: str, op: str, year: int) -> ThreadBuilder:
        cast = self.casts[self.theme_of[topic_key].key]
        return ThreadBuilder(rng, self.pools[topic_key], cast, op, year)


def moment_in(rng: Rng, year: int) -> int:
    low = max(START, calendar.timegm((year, 1, 1, 0, 0, 0)))
    high = min(LAST_POST, calendar.timegm((year + 1, 1, 1, 0, 0, 0)) - 1)
    return rng.between(low, high)


def thread_size(rng: Rng) -> int:
    roll = rng.random()
    if roll < 0.08:
        return rng.between(0, 2)
    if roll < 0.64:
        return rng.between(4, 10)
    if roll < 0.91:
        return rng.between(11, 19)
    return rng.between(20, 36)


def flair_for(theme: Theme, subreddit: str, rng: Rng) -> str | None:
    options = theme.flairs.get(subreddit, ())
    return rng.choice(options) if options else None


# -- ordinary threads -----------------------------------------------------------------------
def topic_posts(world: World, theme: Theme, topic: Topic) -> list[PostSpec]:
    """One post per title (per year for ``{year}`` titles), gems and dissent placed once each."""
    slots: list[tuple[str, int | None]] = []
    for title in topic.titles:
        if "{year}" in title:
            years = range(topic.years[0], topic.years[1] + 1)
            slots.extend((title.format(year=year), year) for year in years)
        else:
            slots.append((title, None))
    placer = Rng.keyed("placement", topic.key)
    order = placer.shuffled(range(len(slots)))
    specials = [("gem", text) for text in topic.gems] + [("dissent", t) for t in topic.dissent]
    assigned = {order[i]: specials[i] for i in range(min(len(specials), len(order)))}
    posts = []
    for index, (title, fixed_year) in enumerate(slots):
        rng = Rng.keyed("post", topic.key, title)
        year = fixed_year or rng.between(*topic.years)
        op = world.casts[theme.key].pick(rng)
        size = thread_size(rng)
        role, text = assigned.get(index, ("", ""))
        if role:
            size = max(size, 6)
        subreddit = rng.choice(topic.subreddits)
        automod = AUTOMOD_COMMENTS.get(subreddit, "") if rng.chance(0.3) else ""
        builder = world.builder(rng, topic.key, op, year)
        nodes = builder.build(
            size,
            gem=text if role == "gem" else "",
            dissent=text if role == "dissent" else "",
            automod=automod,
        )
        score = rng.heavy(6.0, 3800) + (3 * size if size >= 12 else 0)
        posts.append(
            PostSpec(
                key=f"{topic.key}/{index}",
                kind="normal",
                subreddit=subreddit,
                title=title,
                selftext=post_body(rng, topic),
                author=op,
                created=moment_in(rng, year),
                score=score,
                flair=flair_for(theme, subreddit, rng),
                nodes=nodes,
            )
        )
    return posts


def post_body(rng: Rng, topic: Topic) -> str:
    opening = rng.choice(topic.contexts)
    aside = rng.choice(common.ASIDES)
    parts = [f"{opening} {aside}".strip() if "\n" not in opening else opening]
    if "\n" in opening and aside:
        parts.append(aside)
    parts.append(rng.choice(topic.asks))
    if rng.chance(0.04):
        parts.append("&#x200B;")
    if rng.chance(0.12):
        parts.append(rng.choice(common.EDITS))
    return "\n\n".join(parts)


# -- hand-placed threads --------------------------------------------------------------------
def special_post(world: World, special: Special, index: int) -> PostSpec:
    rng = Rng.keyed("special", special.kind, special.title)
    topic_key = special.topic or world.first_topic_in[special.subreddit]
    theme = world.theme_of[topic_key]
    op = special.author or world.casts[theme.key].pick(rng)
    builder = world.builder(rng, topic_key, op, special.year)
    tops = [builder.add_top(text, "handwritten") for text in special.comments]
    if tops:
        parent = tops[0]
        for text in special.replies:
            parent = builder.add_reply(parent, text, "handwritten")
    for _ in range(special.extra_comments):
        builder.add_ordinary()
    score = rng.heavy(8.0, 2500)
    if special.kind == "guide":
        score = rng.between(380, 1900)
    flair = flair_for(theme, special.subreddit, rng)
    return PostSpec(
        key=f"special/{index}",
        kind=special.kind,
        subreddit=special.subreddit,
        title=special.title,
        selftext=special.selftext,
        author=op,
        created=moment_in(rng, special.year),
        score=score,
        flair=flair,
        nodes=builder.nodes,
        fields=dict(special.fields),
    )


def automod_threads(world: World) -> list[PostSpec]:
    posts = []
    for subreddit, title, topic_key, years in AUTOMOD_THREADS:
        for year in years:
            rng = Rng.keyed("automod", subreddit, year)
            created = moment_in(rng, year)
            day = f"{datetime.fromtimestamp(created, UTC):%B %d, %Y}"
            builder = world.builder(rng, topic_key, "AutoModerator", year)
            for _ in range(rng.between(4, 10)):
                builder.add_ordinary()
            posts.append(
                PostSpec(
                    key=f"automod/{subreddit}/{year}",
                    kind="automod",
                    subreddit=subreddit,
                    title=f"{title} - {day}",
                    selftext=AUTOMOD_THREAD_BODY.format(sub=subreddit),
                    author="AutoModerator",
                    created=created,
                    score=rng.between(2, 25),
                    flair=None,
                    nodes=builder.nodes,
                    fields={"stickied": True, "distinguished": "moderator"},
                )
            )
    return posts


def clones(world: World, posts: list[PostSpec]) -> list[PostSpec]:
    """A cross-post (same title, link to the original) and a plain repost in another sub."""
    by_key = {post.key: post for post in posts}
    out: list[PostSpec] = []
    original = by_key["plaud_note_review/0"]
    other = "productivity" if original.subreddit == "gadgets" else "gadgets"
    rng = Rng.keyed("crosspost")
    builder = world.builder(rng, "plaud_note_review", "crosspost_fan", 2025)
    for _ in range(3):
        builder.add_ordinary()
    out.append(
        PostSpec(
            key="clone/crosspost",
            kind="crosspost",
            subreddit=other,
            title=original.title,
            selftext="",
            author="crosspost_fan",
            created=original.created + 2 * 86400 + 517,
            score=14,
            flair=None,
            nodes=builder.nodes,
            fields={"is_self": False},
            clone_of=original,
        )
    )
    original = by_key["rag_chunking/0"]
    other = next(sub for sub in ("LocalLLaMA", "Rag") if sub != original.subreddit)
    rng = Rng.keyed("repost")
    builder = world.builder(rng, "rag_chunking", original.author, 2024)
    for _ in range(5):
        builder.add_ordinary()
    out.append(
        PostSpec(
            key="clone/repost",
            kind="repost",
            subreddit=other,
            title=original.title,
            selftext=original.selftext,
            author=original.author,
            created=original.created + 9 * 86400 + 1234,
            score=31,
            flair=None,
            nodes=builder.nodes,
        )
    )
    return out


# -- ids, times and records -----------------------------------------------------------------
def collect_posts() -> list[PostSpec]:
    world = World.create()
    posts: list[PostSpec] = []
    for theme in THEMES:
        for topic in theme.topics:
            posts.extend(topic_posts(world, theme, topic))
    extras = (*SPECIALS, *GUIDES, *NON_ENGLISH)
    posts.extend(special_post(world, special, i) for i, special in enumerate(extras))
    posts.extend(automod_threads(world))
    posts.extend(clones(world, posts))
    return posts


def build_records() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every submission and comment record, in dump order (by time), duplicates included."""
    posts = sorted(collect_posts(), key=lambda p: (p.created, p.key))
    post_ids = assign_ids([p.created for p in posts], POST_ID_BASE, POST_ID_RATE, Rng(1))
    for post, post_id in zip(posts, post_ids, strict=True):
        post.post_id = post_id
    flat: list[tuple[int, int, int]] = []  # (created, post index, node index)
    per_post_times = [comment_times(post) for post in posts]
    for p_index, times in enumerate(per_post_times):
        flat.extend((created, p_index, n_index) for n_index, created in enumerate(times))
    flat.sort()
    ids = assign_ids([c for c, _, _ in flat], COMMENT_ID_BASE, COMMENT_ID_RATE, Rng(2))
    node_ids = {(p, n): cid for (_, p, n), cid in zip(flat, ids, strict=True)}
    comments: list[dict[str, Any]] = []
    for (created, p_index, n_index), comment_id in zip(flat, ids, strict=True):
        post = posts[p_index]
        node = post.nodes[n_index]
        parent = (
            f"t3_{post.post_id}"
            if node.parent is None
            else f"t1_{node_ids[(p_index, node.parent)]}"
        )
        comments.append(comment_record(post, node, comment_id, parent, created))
    submissions = [post_record(post, len(post.nodes)) for post in posts]
    for index, record in enumerate(submissions):
        if index % 41 == 5:
            record["_meta"] = {"retrieved_2nd_on": record["retrieved_on"] + 36 * 3600}
    for index, record in enumerate(comments):
        if index % 331 == 3 and "_meta" not in record:
            record["_meta"] = {"retrieved_2nd_on": record["created_utc"] + 36 * 3600}
    vary_created(submissions, 53, 71)
    vary_created(comments, 401, 577)
    add_duplicates(posts, submissions, comments)
    return submissions, comments


def add_duplicates(
    posts: list[PostSpec], submissions: list[dict[str, Any]], comments: list[dict[str, Any]]
) -> None:
    """Real dumps repeat things: one post verbatim, one re-crawled later, one comment."""
    by_key = {post.key: index for index, post in enumerate(posts)}
    submissions.append(dict(submissions[by_key["plaud_vs_phone/0"]]))
    recrawl = dict(submissions[by_key["choosing_orchestrator/2"]])
    recrawl["score"] = recrawl["ups"] = int(recrawl["score"]) + 37
    recrawl["_meta"] = {"retrieved_2nd_on": int(float(recrawl["created_utc"])) + 40 * 86400}
    submissions.append(recrawl)
    comments.append(dict(comments[len(comments) // 3]))


# -- files --------------------------------------------------------------------------------
def build_files() -> dict[str, bytes]:
    submissions, comments = build_records()
    return {SUBMISSIONS: encode(submissions), COMMENTS: encode(comments)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--check", action="store_true", help="compare a fresh build with the files in --out-dir"
    )
    args = parser.parse_args(argv)
    files = build_files()
    if args.check:
        stale = [name for name, data in files.items() if _read(args.out_dir / name) != data]
        for name in stale:
            reason = _why(args.out_dir / name, files[name])
            print(
                f"stale: {args.out_dir / name} differs from a fresh build{reason}", file=sys.stderr
            )
        if stale:
            print("run: python scripts/build_demo_data.py", file=sys.stderr)
            return 1
        print(f"ok: {', '.join(files)} in {args.out_dir} match a fresh build")
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (args.out_dir / name).write_bytes(data)
        print(f"wrote {args.out_dir / name} ({len(data):,} bytes)")
    return 0


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def _why(path: Path, fresh: bytes) -> str:
    """Tell a content change from a zstd library change, which re-encodes identical text."""
    old = _read(path)
    if old is None:
        return " (missing)"
    unpack = zstandard.ZstdDecompressor().decompress
    try:
        same = unpack(old) == unpack(fresh)
    except zstandard.ZstdError:
        return " (not a readable zstd file)"
    return " (same records; only the zstd encoding differs: zstandard upgraded?)" if same else ""


if __name__ == "__main__":
    sys.exit(main())
