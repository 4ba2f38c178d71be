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
its slot), and a slot table (``crowdsift.feed.slots``, a companion collection keyed by id) maps
slots to post ids. A random feed reads the table's size, draws ``feed_size`` distinct slots and
fetches exactly those posts: three lookups by id, whatever the collection's size. Without a
slot table (a bare collection, as in the seed's examples) the slots are found with one ``$in``
metadata filter instead: still no full read, but Chroma's filter cost grows with the collection.

Slots stay dense because the retriever appends, ``remove_posts`` moves the last posts into the
slots it frees, and ``clear`` empties everything. If posts were deleted behind its back,
missing draws are retried among untried slots, and as a last resort the seed's full scan is
used (with a warning), so a feed is always as large as the collection allows. Posts written
into the collection by something other than a FeedRetriever have no slot and are never drawn at
random (they still appear in preference feeds).

Stored metadata is ``post.to_metadata()`` plus ``_slot``; ``Post.from_metadata`` ignores the
extra key, so every read gives back an equal ``Post`` (comments included: they travel as JSON).

Not thread-safe (as the contract says): slot assignment reads the slot count, then writes. Use
one retriever per thread, or lock around it; Chroma locks its own storage.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from pydantic import ValidationError

from crowdsift.core.log import get_logger
from crowdsift.core.models import Post
from crowdsift.feed.slots import SlotTable, slot_id

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
        slots: Collection | None = None,
    ) -> None:
        """``collection`` must have an embedding function (``crowdsift.feed.store`` opens one
        with the offline MiniLM embedder). ``rng`` makes random feeds reproducible. ``slots``
        is the companion collection of the slot table (see ``crowdsift.feed.slots``); without
        it random feeds find slots with a metadata filter, which is correct but slower."""
        _check_size(feed_size)
        _check_mode(default_mode)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._collection = collection
        self._feed_size = feed_size
        self._default_mode: FeedMode = default_mode
        self._rng = rng if rng is not None else random.Random()
        self._batch_size = batch_size
        self._table = SlotTable(slots) if slots is not None else None

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
            slot = _as_slot((metadata or {}).get(SLOT_KEY))
            if slot >= 0:
                slots[post_id] = slot
        next_slot = self._slot_space()
        new: dict[int, str] = {}
        metadatas: list[Mapping[str, Any]] = []
        for post in batch:
            if post.id not in slots:
                slots[post.id] = new_slot = next_slot
                new[new_slot] = post.id
                next_slot += 1
            metadatas.append({**post.to_metadata(), SLOT_KEY: slots[post.id]})
        self._collection.upsert(
            ids=ids,
            documents=[post.text for post in batch],
            metadatas=metadatas,
        )
        if self._table is not None and new:
            self._table.assign(new, next_slot)

    def _slot_space(self) -> int:
        """How many slots exist: the slot table's size, else (no table) ``count()``."""
        if self._table is None:
            return self._collection.count()
        size = self._table.size()
        return size if size is not None else self._backfill()

    def _backfill(self) -> int:
        """Build the slot table from the posts' ``_slot`` keys (a collection indexed before the
        table existed). One paged scan, once."""
        assert self._table is not None
        entries: dict[int, str] = {}
        offset = 0
        while True:
            page = self._collection.get(
                include=["metadatas"], limit=self._batch_size, offset=offset
            )
            if not page["ids"]:
                break
            for post_id, metadata in zip(page["ids"], page["metadatas"] or [], strict=False):
                slot = _as_slot((metadata or {}).get(SLOT_KEY))
                if slot >= 0:
                    entries[slot] = post_id
            offset += len(page["ids"])
        size = max(entries, default=-1) + 1
        self._table.assign(entries, size)
        return size

    # --- feeds --------------------------------------------------------------------------
    def get_feed(
        self,
        interests: list[str] | None = None,
        mode: FeedMode | None = None,
        *,
        size: int | None = None,
    ) -> list[Post]:
        """Up to ``feed_size`` posts: the most similar to ``interests`` first (preference), or a
        uniform random sample (random; ``interests`` ignored). ``size`` overrides ``feed_size``
        for this call, so one long-lived retriever serves requests of any size.

        Raises ``ValueError`` for missing/empty interests in preference mode or an unknown mode,
        ``RuntimeError("Collection is empty")`` when nothing is indexed.
        """
        chosen = self._default_mode if mode is None else _check_mode(mode)
        wanted = self._feed_size if size is None else _check_size(size)
        if chosen == "preference":
            query = _query_text(interests)
            return self._preference(query, self._nonempty_count(), wanted)
        return self._random(wanted)

    def _nonempty_count(self) -> int:
        total = self._collection.count()
        if total == 0:
            raise RuntimeError("Collection is empty")
        return total

    def _preference(self, query: str, total: int, size: int) -> list[Post]:
        results = self._collection.query(
            query_texts=[query],
            n_results=min(size, total),
            include=["documents", "metadatas"],
        )
        metadatas = (results["metadatas"] or [[]])[0]
        return _to_posts(results["ids"][0], metadatas)

    def _random(self, size: int) -> list[Post]:
        space = self._slot_space()
        if space == 0:
            return self._random_by_scan(min(size, self._nonempty_count()))
        wanted = min(size, space)
        slots = self._rng.sample(range(space), wanted)
        found = self._posts_in_slots(slots)
        tried = set(slots)
        for _ in range(_RESAMPLE_ROUNDS):
            if len(found) >= wanted or len(tried) >= space:
                break
            # Holes (posts deleted behind our back): draw again among untried slots.
            untried = [slot for slot in range(space) if slot not in tried]
            extra = self._rng.sample(untried, min(wanted - len(found), len(untried)))
            tried.update(extra)
            known = {post.id for post in found}
            found += [post for post in self._posts_in_slots(extra) if post.id not in known]
        if len(found) < wanted:  # only a short feed pays for count()
            total = self._nonempty_count()
            if len(found) < min(wanted, total):
                log.warning("feed_slots_missing", wanted=wanted, found=len(found), slots=space)
                return self._random_by_scan(min(size, total))
        return found[:wanted]

    def _posts_in_slots(self, slots: list[int]) -> list[Post]:
        """The posts sitting in ``slots``, in the order of ``slots`` (missing ones left out)."""
        if not slots:
            return []
        if self._table is not None:
            by_slot = self._table.lookup(slots)
            ids = [by_slot[slot] for slot in slots if slot in by_slot]
            if not ids:
                return []
            results = self._collection.get(ids=ids, include=["documents", "metadatas"])
        else:
            where = cast("Where", {SLOT_KEY: {"$in": slots}})
            results = self._collection.get(where=where, include=["documents", "metadatas"])
        rank = {slot: n for n, slot in enumerate(slots)}
        placed = []
        for post_id, metadata in zip(results["ids"], results["metadatas"] or [], strict=False):
            slot = _as_slot((metadata or {}).get(SLOT_KEY))
            if slot in rank:  # the post really is in that slot (not a stale table entry)
                placed.append((rank[slot], post_id, metadata))
        placed.sort(key=lambda item: item[0])
        posts = _to_posts([pid for _, pid, _ in placed], [m for _, _, m in placed])
        return list({post.id: post for post in posts}.values())

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

    def post_ids(self, *, sources: Sequence[str]) -> list[str]:
        """Ids of the indexed posts whose ``source`` is one of ``sources`` (a paged scan: for
        maintenance such as ``crowdsift archive purge-deleted``, never for feeds)."""
        where = cast("Where", {"source": {"$in": list(sources)}})
        found: list[str] = []
        while True:
            page = self._collection.get(
                where=where, include=[], limit=self._batch_size, offset=len(found)
            )
            if not page["ids"]:
                return found
            found += page["ids"]

    def remove_posts(self, ids: Sequence[str]) -> int:
        """Delete posts by id (unknown ids are ignored); returns how many were indexed.

        Slots stay dense: each freed slot below the new size takes the post of a slot above
        it, so random feeds keep drawing from ``range(size)`` without holes and the next
        ``add_posts`` appends after the last post. Crash-safe in the order it writes: moved
        posts learn their new slot before the table does (a stale table entry is skipped, see
        ``_posts_in_slots``), and the table shrinks last.
        """
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        known = self._collection.get(ids=wanted, include=["metadatas"])
        present = list(known["ids"])
        if not present:
            return 0
        space = self._slot_space()
        freed = {
            slot
            for metadata in known["metadatas"] or []
            if 0 <= (slot := _as_slot((metadata or {}).get(SLOT_KEY))) < space
        }
        self._collection.delete(ids=present)
        if freed:
            self._compact(freed, space)
        return len(present)

    def _compact(self, freed: set[int], space: int) -> None:
        """Move the posts above the new size into the freed slots below it."""
        size = space - len(freed)
        holes = sorted(slot for slot in freed if slot < size)
        tail = [slot for slot in range(size, space) if slot not in freed]
        by_slot = self._slot_owners(tail)
        pairs = zip(holes, tail, strict=True)
        moves = {hole: by_slot[slot] for hole, slot in pairs if slot in by_slot}
        if moves:
            self._collection.update(
                ids=list(moves.values()), metadatas=[{SLOT_KEY: hole} for hole in moves]
            )
        if self._table is not None:
            self._table.assign(moves, size)
            self._table.collection.delete(ids=[slot_id(slot) for slot in range(size, space)])

    def _slot_owners(self, slots: list[int]) -> dict[int, str]:
        """Post id per slot, read from the posts themselves (the table may be stale)."""
        if not slots:
            return {}
        where = cast("Where", {SLOT_KEY: {"$in": slots}})
        found = self._collection.get(where=where, include=["metadatas"])
        owners: dict[int, str] = {}
        for post_id, metadata in zip(found["ids"], found["metadatas"] or [], strict=False):
            owners[_as_slot((metadata or {}).get(SLOT_KEY))] = post_id
        return owners

    def clear(self) -> None:
        """Remove all posts from the collection (a no-op when it is empty)."""
        if self._table is not None:
            self._table.clear()
        while True:
            ids = self._collection.get(include=[], limit=self._batch_size)["ids"]
            if not ids:
                return
            self._collection.delete(ids=ids)


def _check_size(size: object) -> int:
    if not isinstance(size, int) or not MIN_FEED_SIZE <= size <= MAX_FEED_SIZE:
        raise ValueError(f"feed_size must be between {MIN_FEED_SIZE} and {MAX_FEED_SIZE}")
    return size


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
