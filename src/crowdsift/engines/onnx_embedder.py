"""MiniLM on ONNX Runtime: sentence-transformers' vectors without importing torch.

Importing sentence-transformers (torch, transformers, scikit-learn) costs most of a cold
``crowdsift ask``; ``tokenizers`` + ``onnxruntime`` + numpy cost a fraction of a second. So the
model is exported once, at install time (``python -m crowdsift.engines.onnx_export``, which
``make install`` runs while torch is there anyway), and a run only tokenizes, runs the graph,
mean-pools over the attention mask and L2-normalises, exactly as sentence-transformers' Pooling
and Normalize modules do. The exporter checks the vectors against sentence-transformers before
it publishes a graph, so an export that exists is one that agrees.

Exports live inside the Python environment (``<sys.prefix>/share/crowdsift/onnx``) and, when
that is read-only, in the user's cache: never under ``CROWDSIFT_HOME``, so runs (and tests) with
a temporary home or data directory reuse the one export. Each graph is named by the SHA-256 of
the model directory's files, so a changed model never runs on a stale graph; a manifest beside
it records the files' sizes and modification times, so finding it costs a few ``stat`` calls,
not hashing 90 MB, on every start.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import platformdirs
from pydantic import BaseModel, ValidationError

from crowdsift.core.log import get_logger

log = get_logger(__name__)

Vectors = npt.NDArray[np.float32]
_SKIPPED = ("README.md",)
"""Files of a model directory that do not change its vectors (hidden files are skipped too)."""


class ExportManifest(BaseModel):
    """What the exporter wrote beside a graph: which model it is and what it was checked for."""

    key: str
    """SHA-256 of the model directory's files (``content_key``); the graph is ``<key>.onnx``."""
    files: dict[str, tuple[int, int]]
    """Each model file's (size, mtime_ns) at export: the cheap way to recognise the model."""
    source: str
    """The model directory exported (informational: a moved copy is found by its key)."""
    max_seq_length: int
    """Tokens per text, as sentence-transformers truncates (256 for all-MiniLM-L6-v2)."""
    dimensions: int
    max_cosine_gap: float
    """The largest 1 - cosine to sentence-transformers' vectors the exporter measured."""

    @property
    def graph_name(self) -> str:
        return f"{self.key}.onnx"


def export_dirs() -> list[Path]:
    """Where exports live, preferred first: the Python environment (shared by every HOME that
    uses it), then the user's cache (when the environment is read-only)."""
    return [
        Path(sys.prefix) / "share" / "crowdsift" / "onnx",
        Path(platformdirs.user_cache_dir("crowdsift", appauthor=False)) / "onnx",
    ]


def model_files(model_dir: Path) -> list[Path]:
    """The files that make the model's vectors, in a stable order (relative paths)."""
    found = [
        path.relative_to(model_dir)
        for path in model_dir.rglob("*")
        if path.is_file()
        and path.name not in _SKIPPED
        and not any(part.startswith(".") for part in path.relative_to(model_dir).parts)
    ]
    return sorted(found, key=lambda p: p.as_posix())


def fingerprint(model_dir: Path) -> dict[str, tuple[int, int]]:
    """Each model file's (size, mtime_ns): recognises an exported model without reading it."""
    stats = {rel.as_posix(): (model_dir / rel).stat() for rel in model_files(model_dir)}
    return {name: (st.st_size, st.st_mtime_ns) for name, st in stats.items()}


def content_key(model_dir: Path) -> str:
    """SHA-256 over every model file's relative path and bytes."""
    digest = hashlib.sha256()
    for rel in model_files(model_dir):
        digest.update(rel.as_posix().encode() + b"\0")
        with (model_dir / rel).open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def read_manifest(path: Path) -> ExportManifest | None:
    """A manifest, or None when it is unreadable or not one (a half-written or foreign file)."""
    try:
        return ExportManifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        log.debug("onnx_manifest_skipped", path=str(path), error=str(exc))
        return None


def find_export(
    model_dir: Path, dirs: Iterable[Path] | None = None
) -> tuple[ExportManifest, Path] | None:
    """The export of ``model_dir`` (its manifest and graph path), or None when there is none.

    First by the files' sizes and mtimes (a few ``stat`` calls); only when nothing matches,
    by content hash (a reinstalled or copied model with new mtimes is still found)."""
    folders = [d for d in (dirs if dirs is not None else export_dirs()) if d.is_dir()]
    if not folders or not model_dir.is_dir():
        return None
    stamp = fingerprint(model_dir)
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            manifest = read_manifest(path)
            if manifest and manifest.files == stamp and (folder / manifest.graph_name).is_file():
                return manifest, folder / manifest.graph_name
    key = content_key(model_dir)
    for folder in folders:
        manifest = read_manifest(folder / f"{key}.json")
        if manifest and manifest.key == key and (folder / manifest.graph_name).is_file():
            return manifest, folder / manifest.graph_name
    return None


class OnnxEmbedder:
    """An exported sentence-transformers model (mean pooling + Normalize) on ONNX Runtime.

    Thread-safe: ONNX Runtime sessions and tokenizers may be shared between threads."""

    def __init__(
        self,
        graph: Path,
        model_dir: Path,
        *,
        max_seq_length: int,
        dimensions: int,
        name: str,
        batch_size: int = 64,
        batch_tokens: int = 1024,
        identity: str | None = None,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.name = name
        # which vectors these are (keys the vector cache): by default the graph's file name,
        # the model files' content hash (``content_key``) for an install-time export
        self.identity = identity or f"onnx:{graph.stem}"
        self.dimensions = dimensions
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.no_padding()  # padding per batch, below; tokenizer.json pads to 128 otherwise
        tokenizer.enable_truncation(max_length=max_seq_length)
        self._tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: its notices are not the user's business
        # Idle threads sleep instead of spinning: on a shared CPU (a laptop, a service beside
        # other work) spinning burns cores the other threads need, for little latency gained.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {node.name for node in self._session.get_inputs()}

    @classmethod
    def from_export(
        cls, manifest: ExportManifest, graph: Path, model_dir: Path, *, name: str
    ) -> OnnxEmbedder:
        return cls(
            graph,
            model_dir,
            max_seq_length=manifest.max_seq_length,
            dimensions=manifest.dimensions,
            name=name,
        )

    @classmethod
    def from_folder(cls, folder: Path, *, name: str) -> OnnxEmbedder:
        """A model folder (``model.onnx`` + ``tokenizer.json``, ``engines.model_files``). Tokens
        per text from its ``crowdsift-model.json`` or ``sentence_bert_config.json``, else
        all-MiniLM-L6-v2's 256; the width from the graph's output."""
        from crowdsift.engines.model_files import (
            GRAPH,
            MAX_SEQ_LENGTH,
            folder_identity,
            read_info,
        )

        length = read_info(folder).get("max_seq_length")
        if not isinstance(length, int):
            length = _sentence_bert_length(folder) or MAX_SEQ_LENGTH
        embedder = cls(
            folder / GRAPH,
            folder,
            max_seq_length=length,
            dimensions=384,
            name=name,
            identity=folder_identity(folder),
        )
        width = embedder._session.get_outputs()[0].shape[-1]
        if isinstance(width, int) and width > 0:
            embedder.dimensions = width
        return embedder

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text. Texts are sorted by token length (as
        sentence-transformers sorts them) and batched by padded size (``batches``)."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([str(text) for text in texts])
        lengths = [len(encoding.ids) for encoding in encodings]
        for rows in batches(lengths, max_rows=self._batch_size, max_tokens=self._batch_tokens):
            out[rows] = self._embed_batch([encodings[i] for i in rows])
        return out

    def _embed_batch(self, encodings: Sequence[Any]) -> Vectors:
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            ids[row, :length] = encoding.ids
            types[row, :length] = encoding.type_ids
            mask[row, :length] = encoding.attention_mask
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        return mean_pool_normalise(np.asarray(hidden, dtype=np.float32), mask)


def _sentence_bert_length(folder: Path) -> int | None:
    """``max_seq_length`` of a sentence-transformers folder's ``sentence_bert_config.json``."""
    try:
        value = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    length = value.get("max_seq_length") if isinstance(value, dict) else None
    return length if isinstance(length, int) and length > 0 else None


def batches(lengths: Sequence[int], *, max_rows: int, max_tokens: int) -> list[list[int]]:
    """Indexes of texts grouped into batches, longest first, each padded to its first text.

    The graph computes every padded position, so a batch of 64 whose longest text has 135
    tokens costs 64 x 135 tokens even when most of its texts have 20: measured on an answer's
    93 claims, 1.6x the time of batches cut at ``max_tokens`` padded tokens (per-token cost
    is flat from 8 rows up on 2 cores, so smaller batches lose nothing).
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    found: list[list[int]] = []
    start = 0
    while start < len(order):
        width = max(lengths[order[start]], 1)
        rows = max(1, min(max_rows, max_tokens // width))
        found.append(order[start : start + rows])
        start += rows
    return found


def mean_pool_normalise(hidden: Vectors, mask: npt.NDArray[np.int64]) -> Vectors:
    """sentence-transformers' Pooling (mean over real tokens) then Normalize (L2, eps 1e-12)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    vectors: Vectors = (pooled / norms).astype(np.float32)
    return vectors
