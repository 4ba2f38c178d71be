"""FeedRetriever: index posts in a Chroma collection and hand out feeds (seed 003's contract).

Two feeds: *preference* (the ``feed_size`` posts most similar to an agent's interests, joined
into one query text and embedded by the collection's embedding function) and *random* (a
uniform sample of ``feed_size`` posts).

Random mode without reading the collection
------------------------------------------
The seed samples from *all* ids on every call (``collection.get()``), which costs time linear in
the collection (and, with documents and metadata included, fails outright at ~50k posts on
Chroma 1.5 with "too many SQL variables"). Instead every stored post carries one extra metadata
key, ``_slot``: a dense integer 0..n-1 assigned in insertion order (an upsert of a known id keeps
its slot). A random feed draws ``feed_size`` distinct slots from ``range(count())`` and fetches
exactly those posts with one ``$in`` filter. Slots stay dense because the retriever only ever
appends and ``clear`` empties everything. If someone deleted posts behind its back, the missing
draws are retried from slots not yet tried, and as a last resort the seed's full scan is used
(with a warning), so a feed is always as large as the collection allows.

Stored metadata is ``post.to_metadata()`` plus ``_slot``; ``Post.from_metadata`` ignores the
extra key, so every read gives back an equal ``Post`` (comments included: they travel as JSON).

Not thread-safe (as the contract says): slot assignment reads ``count()`` and then writes. Use
one retriever per thread, or lock around it; Chroma locks its own storage.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from pydantic import ValidationError

from crowdsift.log import get_logger
from crowdsift.models import Post

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Where

FeedMode = Literal["preference", "random"]
FEED_MODES: tuple[str, ...] = get_args(FeedMode)
MIN_FEED_SIZE = 1
MAX_FEED_SIZE = 20
SLOT_KEY = "_slot"
DEFAULT_BATCH_SIZE = 512
_RESAMPLE_ROUNDS = 3

log = get_logger(__name__)


class FeedRetriever:
    """Retrieves feeds from ChromaDB based on agent interests or random sampling."""

    def __init__(
        self,
        collection: Collection,
        feed_size: int = 5,
        default_mode: FeedMode = "preference",
        *,
        rng: random.Random | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        """``collection`` must have an embedding function (``crowdsift.feed.store`` opens one
        with the offline MiniLM embedder). ``rng`` makes random feeds reproducible."""
        if not isinstance(feed_size, int) or not MIN_FEED_SIZE <= feed_size <= MAX_FEED_SIZE:
            raise ValueError("feed_size must be between 1 and 20")
        _check_mode(default_mode)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._collection = collection
        self._feed_size = feed_size
        self._default_mode: FeedMode = default_mode
        self._rng = rng if rng is not None else random.Random()
        self._batch_size = batch_size

    @property
    def feed_size(self) -> int:
        return self._feed_size

    @property
    def default_mode(self) -> FeedMode:
        return self._default_mode

    # --- indexing -----------------------------------------------------------------------
    def add_post(self, post: Post) -> None:
        """Index a single post (upsert: an existing id is replaced)."""
        self.add_posts([post])

    def add_posts(
        self, posts: Sequence[Post], *, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Index posts in batches, upserting ``ids=[post.id]``, ``documents=[post.text]``,
        ``metadatas=[post.to_metadata()]`` (plus ``_slot``).

        Every post is validated before anything is written, so a bad post raises ``ValueError``
        and leaves the collection as it was. Repeated ids in one call: the last one wins.
        ``on_batch(n)`` is called after each written batch (progress bars).
        """
        unique: dict[str, Post] = {}
        for index, post in enumerate(posts):
            checked = _validated(post, index)
            unique[checked.id] = checked
        batch: list[Post] = []
        for post in unique.values():
            batch.append(post)
            if len(batch) >= self._batch_size:
                self._upsert(batch)
                if on_batch is not None:
                    on_batch(len(batch))
                batch = []
        if batch:
            self._upsert(batch)
            if on_batch is not None:
                on_batch(len(batch))

    def _upsert(self, batch: list[Post]) -> None:
        ids = [post.id for post in batch]
        known = self._collection.get(ids=ids, include=["metadatas"])
        slots: dict[str, int] = {}
        for post_id, metadata in zip(known["ids"], known["metadatas"] or [], strict=False):
            slot = (metadata or {}).get(SLOT_KEY)
            if isinstance(slot, int) and not isinstance(slot, bool):
                slots[post_id] = slot
        next_slot = self._collection.count()
        metadatas: list[Mapping[str, Any]] = []
        for post in batch:
            if post.id not in slots:
                slots[post.id] = next_slot
                next_slot += 1
            metadatas.append({**post.to_metadata(), SLOT_KEY: slots[post.id]})
        self._collection.upsert(
            ids=ids,
            documents=[post.text for post in batch],
            metadatas=metadatas,
        )

    # --- feeds --------------------------------------------------------------------------
    def get_feed(
        self,
        interests: list[str] | None = None,
        mode: FeedMode | None = None,
    ) -> list[Post]:
        """Up to ``feed_size`` posts: the most similar to ``interests`` first (preference), or a
        uniform random sample (random; ``interests`` ignored).

        Raises ``ValueError`` for missing/empty interests in preference mode or an unknown mode,
        ``RuntimeError("Collection is empty")`` when nothing is indexed.
        """
        chosen = self._default_mode if mode is None else _check_mode(mode)
        query = _query_text(interests) if chosen == "preference" else None
        total = self._collection.count()
        if total == 0:
            raise RuntimeError("Collection is empty")
        if query is not None:
            return self._preference(query, total)
        return self._random(total)

    def _preference(self, query: str, total: int) -> list[Post]:
        results = self._collection.query(
            query_texts=[query],
            n_results=min(self._feed_size, total),
            include=["documents", "metadatas"],
        )
        metadatas = (results["metadatas"] or [[]])[0]
        return _to_posts(results["ids"][0], metadatas)

    def _random(self, total: int) -> list[Post]:
        wanted = min(self._feed_size, total)
        slots = self._rng.sample(range(total), wanted)
        found = self._fetch_slots(slots)
        tried = set(slots)
        for _ in range(_RESAMPLE_ROUNDS):
            if len(found) >= wanted or len(tried) >= total:
                break
            untried = [slot for slot in range(total) if slot not in tried]
            extra = self._rng.sample(untried, min(wanted - len(found), len(untried)))
            tried.update(extra)
            for post in self._fetch_slots(extra).values():
                found.setdefault(post.id, post)
        if len(found) < wanted:
            log.warning("feed_slots_missing", wanted=wanted, found=len(found), total=total)
            return self._random_by_scan(wanted)
        return list(found.values())[:wanted]

    def _fetch_slots(self, slots: list[int]) -> dict[str, Post]:
        if not slots:
            return {}
        where = cast("Where", {SLOT_KEY: {"$in": slots}})
        results = self._collection.get(where=where, include=["documents", "metadatas"])
        posts = _to_posts(results["ids"], results["metadatas"] or [])
        order = {slot: rank for rank, slot in enumerate(slots)}
        slot_of = {
            post_id: (metadata or {}).get(SLOT_KEY)
            for post_id, metadata in zip(results["ids"], results["metadatas"] or [], strict=False)
        }
        posts.sort(key=lambda post: order.get(_as_slot(slot_of.get(post.id)), len(order)))
        return {post.id: post for post in posts}

    def _random_by_scan(self, wanted: int) -> list[Post]:
        """The seed's approach: all ids, sample, fetch by id. Correct at any state, O(n)."""
        all_ids = self._collection.get(include=[])["ids"]
        sampled = self._rng.sample(all_ids, min(wanted, len(all_ids)))
        results = self._collection.get(ids=sampled, include=["documents", "metadatas"])
        by_id = {post.id: post for post in _to_posts(results["ids"], results["metadatas"] or [])}
        return [by_id[post_id] for post_id in sampled if post_id in by_id]

    # --- housekeeping -------------------------------------------------------------------
    def count(self) -> int:
        """Return the number of indexed posts."""
        return self._collection.count()

    def clear(self) -> None:
        """Remove all posts from the collection (a no-op when it is empty)."""
        while True:
            ids = self._collection.get(include=[], limit=self._batch_size)["ids"]
            if not ids:
                return
            self._collection.delete(ids=ids)


def _check_mode(mode: object) -> FeedMode:
    if mode not in FEED_MODES:
        raise ValueError(f"mode must be one of {', '.join(FEED_MODES)}, got {mode!r}")
    return mode  # type: ignore[return-value]


def _query_text(interests: list[str] | None) -> str:
    if interests is None:
        raise ValueError("interests required for preference mode")
    cleaned = [interest.strip() for interest in interests if interest and interest.strip()]
    if not cleaned:
        raise ValueError("interests must be non-empty")
    return " ".join(cleaned)


def _validated(post: Post, index: int) -> Post:
    """Re-validate (a Post may have been built with ``model_construct`` or mutated) and make
    sure every string can be stored (Chroma needs UTF-8; lone surrogates cannot be)."""
    try:
        checked = Post.model_validate(post.model_dump() if isinstance(post, Post) else post)
    except ValidationError as exc:
        raise ValueError(f"post #{index} is not a valid Post: {exc}") from exc
    for key, value in checked.to_metadata().items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"post {checked.id!r}: field {key!r} is not valid UTF-8 ({exc.reason}); "
                    "clean the text before indexing"
                ) from exc
    return checked


def _as_slot(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _to_posts(ids: Sequence[str], metadatas: Iterable[Mapping[str, Any] | None]) -> list[Post]:
    """Stored records back to Posts; a record that is not one of ours is skipped and logged."""
    posts: list[Post] = []
    for post_id, metadata in zip(ids, metadatas, strict=False):
        try:
            posts.append(Post.from_metadata(metadata or {}))
        except (ValueError, TypeError) as exc:
            log.warning("feed_record_unreadable", id=post_id, error=str(exc)[:200])
    return posts
