"""Random feeds over 50,000 indexed posts: slot sampling vs the seed's fetch-all-ids approach.

Both run in the same process against the same persistent Chroma collection:

- baseline (seed 003, B2): fetch every id, ``random.sample`` them, fetch the sample by id. The
  seed's literal ``collection.get()`` also reads every document and metadata; on Chroma 1.5 that
  fails at this size ("too many SQL variables"), so the baseline uses ``get(include=[])``, the
  cheapest form of the same idea (a conservative baseline: the real one is slower or broken);
- ours: ``FeedRetriever.get_feed(mode="random")`` with its slot table (as ``crowdsift feed``
  opens it): table size, slot → id, posts by id: three lookups by id.

Also printed: the same retriever without a slot table (one ``$in`` metadata filter, whose
cost in Chroma grows with the collection).

Target: median(ours) / median(baseline) <= 0.1 (``main()`` returns it, and the no-table variant
as information, as ``figures.Figure`` objects). Also printed: median preference-mode time and
indexing throughput. The 50k index uses the hashing embedder (embedding 50k texts with MiniLM
takes minutes and says nothing about retrieval); MiniLM indexing throughput is measured on a
smaller sample beside it.

    python bench/bench_feed.py [--posts 50000] [--minilm-sample 500]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chromadb
from chromadb.config import Settings as ChromaSettings

from crowdsift.core.models import Post
from crowdsift.feed.embedding import CrowdsiftEmbeddingFunction
from crowdsift.feed.retriever import FeedRetriever
from crowdsift.testing.factories import make_post
from figures import Figure, exit_code

TARGET = 0.1
FEED_SIZE = 5
_WORDS_TEXT = """
battery drill recorder meeting transcription airflow pipeline sourdough garden tomato laptop
keyboard wallet bitcoin router firmware drywall paint camera lens coffee grinder espresso bike
tire running shoes guitar pedal synth monitor desk chair headphones
"""
WORDS = _WORDS_TEXT.split()


def synthetic_posts(count: int, seed: int = 1) -> list[Post]:
    rng = random.Random(seed)
    posts = []
    for n in range(count):
        title = " ".join(rng.choices(WORDS, k=6))
        body = " ".join(rng.choices(WORDS, k=40))
        posts.append(
            make_post(f"b{n:07d}", title, body, subreddit=f"sub{n % 40:02d}", karma=n % 500)
        )
    return posts


def median_ms(call: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def index(collection: Any, posts: list[Post], slots: Any = None) -> float:
    """Posts per second through FeedRetriever.add_posts (validation, slots, embedding, upsert)."""
    retriever = FeedRetriever(collection, slots=slots)
    start = time.perf_counter()
    retriever.add_posts(posts)
    return len(posts) / (time.perf_counter() - start)


def main(posts: int = 50_000, minilm_sample: int = 500, runs: int = 31) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        client = chromadb.PersistentClient(
            path=str(Path(tmp) / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
        )
        collection = client.create_collection(
            "bench_posts",
            embedding_function=CrowdsiftEmbeddingFunction("hashing"),  # type: ignore[arg-type]
        )
        table = client.create_collection("bench_posts_slots", embedding_function=None)
        corpus = synthetic_posts(posts)
        hashing_rate = index(collection, corpus, table)
        print(f"indexed {posts:,} posts (hashing embedder): {hashing_rate:,.0f} posts/s")

        rng = random.Random(7)

        def baseline() -> None:
            ids = collection.get(include=[])["ids"]
            sampled = rng.sample(ids, FEED_SIZE)
            collection.get(ids=sampled, include=["documents", "metadatas"])

        retriever = FeedRetriever(
            collection, feed_size=FEED_SIZE, rng=random.Random(7), slots=table
        )
        bare = FeedRetriever(collection, feed_size=FEED_SIZE, rng=random.Random(7))
        naive = median_ms(baseline, max(5, runs // 3))
        ours = median_ms(lambda: retriever.get_feed(mode="random"), runs)
        no_table = median_ms(lambda: bare.get_feed(mode="random"), runs)
        preference = median_ms(lambda: retriever.get_feed(["espresso", "coffee", "grinder"]), runs)
        ratio = ours / naive
        print(f"random feed, baseline (all ids, sample, get by id): {naive:8.2f} ms median")
        print(f"random feed, slot table (3 lookups by id):          {ours:8.2f} ms median")
        print(f"random feed ratio: {ratio:.3f}x (target <= {TARGET})")
        print(
            f"  without a slot table (count + $in filter): {no_table:.2f} ms, "
            f"{no_table / naive:.3f}x"
        )
        print(f"preference feed (query embed + HNSW top-{FEED_SIZE}):       {preference:8.2f} ms")

        minilm_rate = 0.0
        if minilm_sample:
            function = CrowdsiftEmbeddingFunction("minilm")
            function(["warm up: load the model before timing"])
            sample = client.create_collection("bench_minilm", embedding_function=function)  # type:
            # ignore[arg-type]
            minilm_rate = index(sample, corpus[:minilm_sample])
            print(f"indexed {minilm_sample:,} posts (MiniLM, loaded): {minilm_rate:,.0f} posts/s")
    figures = [
        Figure(
            bench="feed",
            name=f"random feed median ({posts:,} posts, slot table)",
            value=ours,
            baseline=naive,
            unit="ms",
            target=TARGET,
            baseline_name="all ids, sample, get by id",
        ),
        Figure(
            bench="feed",
            name="random feed median, no slot table",
            value=no_table,
            baseline=naive,
            unit="ms",
            target=None,
            baseline_name="all ids, sample, get by id",
        ),
    ]
    return {
        "figures": figures,
        "ratio": ratio,
        "baseline_ms": naive,
        "random_ms": ours,
        "random_no_table_ms": no_table,
        "preference_ms": preference,
        "index_hashing_per_s": hashing_rate,
        "index_minilm_per_s": minilm_rate,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=50_000)
    parser.add_argument("--minilm-sample", type=int, default=500)
    args = parser.parse_args()
    raise SystemExit(exit_code(main(args.posts, args.minilm_sample)["figures"]))
