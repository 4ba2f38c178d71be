"""Vectors kept on disk between processes: reused for the same model, never for another, and a
damaged file costs a warning, never a run."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from structlog.testing import capture_logs

from crowdsift.core.config import Settings
from crowdsift.engines.embedding import CachedEmbedder, HashingEmbedder, Vectors
from crowdsift.engines.local import LocalEngine
from crowdsift.engines.vector_cache import DiskVectorCache, vector_key

TEXTS = ["Tapcons spin in an oversized hole.", "Use the bit from the box.", "Drill deeper."]


class Counting:
    """A model with a name for its vectors (``identity``) that counts the texts it embeds."""

    name = "counting"

    def __init__(self, identity: str = "model-a") -> None:
        self.identity = identity
        self.embedded: list[str] = []
        self._inner = HashingEmbedder()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded += list(texts)
        return self._inner.embed(texts)


def test_a_new_process_reuses_the_vectors_an_earlier_one_stored(tmp_path: Path) -> None:
    first_model = Counting()
    first = CachedEmbedder(first_model, disk=DiskVectorCache(tmp_path / "v.sqlite"))
    expected = first.embed(TEXTS)
    assert first_model.embedded == TEXTS

    later_model = Counting()  # a new process: empty memory, the same file
    later = CachedEmbedder(later_model, disk=DiskVectorCache(tmp_path / "v.sqlite"))
    got = later.embed([*TEXTS, "A new question?"])
    assert later_model.embedded == ["A new question?"]
    assert np.array_equal(got[:3], expected)
    assert later.misses == 1


def test_another_model_never_reads_them(tmp_path: Path) -> None:
    CachedEmbedder(Counting("model-a"), disk=DiskVectorCache(tmp_path / "v.sqlite")).embed(TEXTS)
    other = Counting("model-b")
    CachedEmbedder(other, disk=DiskVectorCache(tmp_path / "v.sqlite")).embed(TEXTS)
    assert other.embedded == TEXTS


def test_the_oldest_entries_go_first_past_the_bound(tmp_path: Path) -> None:
    cache = DiskVectorCache(tmp_path / "v.sqlite", max_rows=3)
    keys = [vector_key("m", f"text {i}") for i in range(5)]
    for key in keys:
        cache.put_many({key: np.ones(4, dtype=np.float32)})
    assert sorted(cache.get_many(keys)) == sorted(keys[2:])


def test_a_damaged_file_is_a_warning_and_the_embeddings_still_come(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    model = Counting()
    with capture_logs() as logs:
        got = CachedEmbedder(model, disk=DiskVectorCache(path)).embed(TEXTS)
    assert np.array_equal(got, HashingEmbedder().embed(TEXTS))
    warnings = [e for e in logs if e["event"] == "vector_cache_off"]
    assert len(warnings) == 1 and "delete the file" in warnings[0]["note"]


def test_a_model_without_a_name_for_its_vectors_is_not_cached_on_disk(tmp_path: Path) -> None:
    CachedEmbedder(HashingEmbedder(), disk=DiskVectorCache(tmp_path / "v.sqlite")).embed(TEXTS)
    assert not (tmp_path / "v.sqlite").exists()


def test_the_local_engine_keeps_its_vectors_in_the_data_directory(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    engine = LocalEngine.from_settings(settings)
    engine.kit.embedder.embed(["How do I stop Tapcon screws from spinning?"])
    stored = DiskVectorCache(tmp_path / "vectors.sqlite")
    identity = engine.kit.embedder.inner.identity  # type: ignore[attr-defined]
    assert identity.startswith("onnx:")  # make install exported the model
    key = vector_key(identity, "How do I stop Tapcon screws from spinning?")
    assert list(stored.get_many([key])) == [key]


def test_a_file_another_process_is_writing_is_skipped_for_now_not_for_good(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v.sqlite"
    cache = DiskVectorCache(path, timeout=0.05)
    key = vector_key("m", "a text")
    cache.put_many({vector_key("m", "warm"): np.ones(4, dtype=np.float32)})  # file exists
    writer = sqlite3.connect(path)
    writer.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    with capture_logs() as logs:
        cache.put_many({key: np.ones(4, dtype=np.float32)})
    writer.rollback()
    writer.close()
    assert not [e for e in logs if e["event"] == "vector_cache_off"]
    cache.put_many({key: np.ones(4, dtype=np.float32)})  # the lock is gone: it stores again
    assert list(cache.get_many([key])) == [key]
