"""A deterministic Reddit corpus for a plan: every (subreddit, term) gets its own posts.

Used by the fetch integration tests and the fetch benchmark, so both serve the same shape of
data to the local protocol servers. Each post mentions exactly one plan term, so the expected
FetchResult is known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crowdsift.core.source import RawThing
from crowdsift.testing.factories import raw_comment, raw_post


@dataclass
class Corpus:
    """Raw posts per subreddit (in relevance order) and raw comments per post id."""

    posts: dict[str, list[RawThing]] = field(default_factory=dict)
    comments: dict[str, list[RawThing]] = field(default_factory=dict)

    def load_into(self, server: object) -> None:
        """Feed a RedditProtocolServer or ArcticShiftServer (both have add_posts/add_comments)."""
        for subreddit, posts in self.posts.items():
            server.add_posts(subreddit, posts)  # type: ignore[attr-defined]
        for post_id, comments in self.comments.items():
            server.add_comments(post_id, comments)  # type: ignore[attr-defined]


def build_corpus(
    subreddits: list[str],
    terms: list[str],
    *,
    posts_per_query: int = 6,
    comments_per_post: int = 3,
) -> Corpus:
    """Posts whose title names one term; bodies long enough to pass; comments that pass too."""
    corpus = Corpus()
    for s_index, subreddit in enumerate(subreddits):
        posts: list[RawThing] = []
        for t_index, term in enumerate(terms):
            for n in range(posts_per_query):
                post_id = f"s{s_index}t{t_index}n{n}"
                posts.append(
                    raw_post(
                        post_id,
                        subreddit=subreddit,
                        title=f"{term} notes number {n}",
                        selftext=(
                            f"Long-form experience report {n} about {term}: what worked, "
                            "what broke, and the settings I would use again."
                        ),
                        score=100 - n,
                        num_comments=comments_per_post,
                        created_utc=1_700_000_000 + s_index * 10_000 + t_index * 100 + n,
                    )
                )
                corpus.comments[post_id] = [
                    raw_comment(
                        f"{post_id}c{c}",
                        post_id,
                        subreddit=subreddit,
                        body=f"Comment {c} on {post_id}: a specific tip worth keeping.",
                        score=10 - c,
                        created_utc=1_700_000_500 + c,
                    )
                    for c in range(comments_per_post)
                ]
        corpus.posts[subreddit] = posts
    return corpus
