#!/usr/bin/env python3
"""Serve Reddit dump files through the local Arctic Shift emulator, for development.

Reads Pushshift / Arctic Shift style dumps (one JSON object per line; plain, .zst, .gz, .bz2
or .xz, streamed by ``crowdsift.sources.archive.streams.LineStream``): a line with ``title``
is a post (t3), one with ``body`` and ``link_id`` a comment (t1); anything else is skipped and
counted. Each record gets what the emulator and crowdsift's filtering layer rely on when the
dump lacks it (``name``, ``permalink``, ``t3_``/``t1_`` prefixes on ``link_id``/``parent_id``,
a numeric ``created_utc``), then the lot is served by ``tests.support.arctic_shift_server`` on
127.0.0.1 until Ctrl-C (or SIGTERM)::

    .venv/bin/python scripts/arctic_shift_local.py --port 8765 RS_x.zst RC_x.zst
    CROWDSIFT_ARCTIC_SHIFT_BASE_URL=http://127.0.0.1:8765 crowdsift ask ... --source arctic-shift

``/api/subreddits/search`` answers from a directory of subreddit ``about`` dicts:
``--subreddits FILE`` (a JSON list of them), else the bundled
``scripts/arctic_shift_subreddits.json``. That file is written by the project: about 300
well-known subreddits with a title and description in our own words and approximate subscriber
counts (rounded, for ordering only), not copied from Reddit. A subreddit found in the dumps but
not in the directory is added with an empty description and 0 subscribers, so it can be found.

Nothing here writes anywhere: the dumps stay where they are and only live in memory.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # ``tests.support`` is importable from the repository root
    sys.path.insert(0, str(REPO))

from crowdsift.sources.archive.streams import READ_ERRORS, LineStream  # noqa: E402
from tests.support.arctic_shift_server import ArcticShiftServer  # noqa: E402

DEFAULT_DIRECTORY = REPO / "scripts" / "arctic_shift_subreddits.json"
Item = dict[str, Any]


@dataclass
class Loaded:
    """Posts by subreddit and comments by post id, as read from the dumps."""

    posts: dict[str, list[Item]] = field(default_factory=dict)
    comments: dict[str, list[Item]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def post_count(self) -> int:
        return sum(len(p) for p in self.posts.values())

    @property
    def comment_count(self) -> int:
        return sum(len(c) for c in self.comments.values())

    def subreddits(self) -> dict[str, str]:
        """Every subreddit named by a post or a comment: lower-cased name -> name as spelt."""
        names = {name.lower(): name for name in self.posts}
        for comments in self.comments.values():
            for comment in comments:
                names.setdefault(str(comment["subreddit"]).lower(), str(comment["subreddit"]))
        return names


def records(paths: Iterable[Path], skipped: Counter[str]) -> Iterator[Item]:
    """The JSON objects of every dump line; blank, broken or non-object lines are counted."""
    for path in paths:
        with LineStream(path) as lines:
            for line in lines:
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    skipped["bad_json"] += 1
                    continue
                if isinstance(record, dict):
                    yield record
                else:
                    skipped["not_an_object"] += 1


def _created(record: Item) -> float | int | None:
    value = record.get("created_utc")
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    try:
        number = float(str(value))
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


def as_post(record: Item) -> Item | None:
    """A t3 dict with ``id``, ``name``, ``subreddit``, ``permalink``; None if it cannot be."""
    post_id = str(record.get("id") or "").removeprefix("t3_")
    subreddit = str(record.get("subreddit") or "")
    created = _created(record)
    if not post_id or not subreddit or created is None:
        return None
    post = dict(record)
    post.update(id=post_id, created_utc=created)
    post.setdefault("name", f"t3_{post_id}")
    post.setdefault("permalink", f"/r/{subreddit}/comments/{post_id}/")
    return post


def as_comment(record: Item) -> Item | None:
    """A t1 dict with prefixed ``link_id``/``parent_id``, ``name`` and ``permalink``."""
    comment_id = str(record.get("id") or "").removeprefix("t1_")
    subreddit = str(record.get("subreddit") or "")
    link = str(record.get("link_id") or "").removeprefix("t3_")
    created = _created(record)
    if not comment_id or not subreddit or not link or created is None:
        return None
    parent = str(record.get("parent_id") or link)
    if parent[:3] not in ("t1_", "t3_"):  # very old dumps: bare ids; the post's id means top
        parent = f"t3_{parent}" if parent == link else f"t1_{parent}"
    comment = dict(record)
    comment.update(id=comment_id, link_id=f"t3_{link}", parent_id=parent, created_utc=created)
    comment.setdefault("name", f"t1_{comment_id}")
    comment.setdefault("permalink", f"/r/{subreddit}/comments/{link}/_/{comment_id}/")
    return comment


def load_dumps(paths: Iterable[Path]) -> Loaded:
    loaded = Loaded()
    for record in records(paths, loaded.skipped):
        if "title" in record:
            post = as_post(record)
            if post is None:
                loaded.skipped["post_without_id_subreddit_or_date"] += 1
                continue
            loaded.posts.setdefault(str(post["subreddit"]), []).append(post)
        elif "body" in record and "link_id" in record:
            comment = as_comment(record)
            if comment is None:
                loaded.skipped["comment_without_id_subreddit_or_date"] += 1
                continue
            loaded.comments.setdefault(str(comment["link_id"])[3:], []).append(comment)
        else:
            loaded.skipped["neither_post_nor_comment"] += 1
    return loaded


def read_directory(path: Path) -> list[Item]:
    """A JSON list of subreddit about-dicts, each with a ``display_name``."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and str(item.get("display_name") or "").strip() for item in data
    ):
        raise SystemExit(f"{path}: expected a JSON list of objects with a display_name")
    return data


def directory_with_dumps(directory: list[Item], loaded: Loaded) -> tuple[list[Item], int]:
    """``directory`` plus a bare entry for each dumped subreddit it lacks; how many added."""
    known = {str(item["display_name"]).lower() for item in directory}
    added = [
        {
            "display_name": name,
            "title": "",
            "public_description": "",
            "subscribers": 0,
            "over18": False,
        }
        for key, name in sorted(loaded.subreddits().items())
        if key not in known
    ]
    return [*directory, *added], len(added)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dumps", nargs="+", type=Path, metavar="DUMP", help="RS_/RC_ dump files")
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any)")
    parser.add_argument(
        "--subreddits",
        type=Path,
        default=DEFAULT_DIRECTORY,
        metavar="FILE",
        help="JSON list of subreddit about-dicts (default: the bundled directory)",
    )
    args = parser.parse_args(argv)
    missing = [str(p) for p in [*args.dumps, args.subreddits] if not p.is_file()]
    if missing:
        parser.error(f"not a file: {', '.join(missing)}")

    started = time.perf_counter()
    try:
        loaded = load_dumps(args.dumps)
    except READ_ERRORS as exc:
        print(f"cannot read the dumps: {exc}", file=sys.stderr)
        return 1
    directory, added = directory_with_dumps(read_directory(args.subreddits), loaded)
    server = ArcticShiftServer(port=args.port)
    for subreddit, posts in loaded.posts.items():
        server.add_posts(subreddit, posts)
    for post_id, comments in loaded.comments.items():
        server.add_comments(post_id, comments)
    server.add_subreddits(directory)
    took = time.perf_counter() - started

    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    with server:
        base = server.base_url
        print(f"Arctic Shift emulator at {base}", flush=True)
        print(
            f"  {loaded.post_count} posts in {len(loaded.posts)} subreddits, "
            f"{loaded.comment_count} comments on {len(loaded.comments)} posts, "
            f"loaded in {took:.1f} s",
            flush=True,
        )
        print(
            f"  {len(directory)} subreddits in the directory ({added} added from the dumps)",
            flush=True,
        )
        if loaded.skipped:
            print(f"  skipped: {dict(loaded.skipped)}", flush=True)
        print(f"  try: curl '{base}/api/subreddits/search?subreddit_prefix=local&limit=5'")
        print("Ctrl-C to stop.", flush=True)
        while not stop.wait(0.5):
            pass
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
