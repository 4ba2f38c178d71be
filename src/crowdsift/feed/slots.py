"""The slot table: which post sits in which random-sampling slot, looked up by id only.

Random feeds draw slots from ``range(size)``; turning slots into posts must not scan the
collection. In Chroma 1.5 every ``get`` that is not by id (a metadata filter, even a bare
``limit=1``) and ``count()`` cost time that grows with the collection (~3 ms at 50k posts), while
``get(ids=...)`` is an index lookup (~0.3 ms). So the table lives in a companion collection of
the same client, keyed by id: ``slot:<n>`` → ``{"post_id": ...}`` plus one ``size`` record with
the number of slots handed out. Its records carry a constant 1-dimensional vector: Chroma wants
one, nothing ever queries it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

SIZE_ID = "size"
SUFFIX = "_slots"


def slot_id(slot: int) -> str:
    return f"slot:{slot}"


class SlotTable:
    """slot → post id, and how many slots exist, in a companion Chroma collection."""

    def __init__(self, collection: Collection, *, batch_size: int = 1000) -> None:
        self.collection = collection
        self._batch_size = batch_size

    def size(self) -> int | None:
        """Slots handed out so far, or None when the table was never written."""
        record = self.collection.get(ids=[SIZE_ID], include=["metadatas"])
        metadatas = record["metadatas"] or []
        if not metadatas:
            return None
        value = (metadatas[0] or {}).get("n")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def lookup(self, slots: Sequence[int]) -> dict[int, str]:
        """Post ids of the given slots (slots without an entry are left out)."""
        if not slots:
            return {}
        found = self.collection.get(ids=[slot_id(s) for s in slots], include=["metadatas"])
        result: dict[int, str] = {}
        for record_id, metadata in zip(found["ids"], found["metadatas"] or [], strict=False):
            post_id = (metadata or {}).get("post_id")
            if isinstance(post_id, str):
                result[int(record_id.removeprefix("slot:"))] = post_id
        return result

    def assign(self, entries: Mapping[int, str], size: int) -> None:
        """Write ``slot → post id`` entries and the new size in one upsert."""
        ids = [slot_id(slot) for slot in entries] + [SIZE_ID]
        metadatas: list[Mapping[str, Any]] = [{"post_id": pid} for pid in entries.values()]
        metadatas.append({"n": size})
        for start in range(0, len(ids), self._batch_size):
            chunk = slice(start, start + self._batch_size)
            self.collection.upsert(
                ids=ids[chunk],
                embeddings=np.ones((len(ids[chunk]), 1), dtype=np.float32),
                metadatas=metadatas[chunk],
            )

    def clear(self) -> None:
        while True:
            ids = self.collection.get(include=[], limit=self._batch_size)["ids"]
            if not ids:
                return
            self.collection.delete(ids=ids)
