"""Crash driver: upsert generated comments into a ``CommentStore``, one batch per transaction.

``python comment_writer.py URL FIRST LAST SIZE`` upserts batches FIRST..LAST-1 (SIZE comments
each) and prints ``committed N`` after batch N is stored, so a test can tell committed batches
from the one in flight when it kills the process. The comments are a pure function of their
number, so the test computes exactly what a batch wrote (``batch``).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

from crowdsift.core.models import Comment
from crowdsift.core.store import CommentStore

FETCHED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def comment(n: int) -> Comment:
    """Comment number ``n``: seven per post, a body long enough to make a batch take a while."""
    return Comment(
        comment_id=f"c{n}",
        post_id=f"p{n // 7}",
        body=f"comment {n}: the dock held up for a year of daily use. " * 4,
        comment_karma=n % 97 - 10,
        source="reddit-api",
        fetched_at=FETCHED + timedelta(seconds=n),
    )


def batch(number: int, size: int) -> list[Comment]:
    return [comment(n) for n in range(number * size, (number + 1) * size)]


def main(argv: list[str]) -> None:
    url, first, last, size = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    store = CommentStore.from_url(url)
    try:
        for number in range(first, last):
            store.upsert(batch(number, size))
            print(f"committed {number}", flush=True)
    finally:
        store.close()


if __name__ == "__main__":
    main(sys.argv[1:])
