"""The ONNX Runtime path for MiniLM: same vectors as sentence-transformers, found without torch.

The equality tests use the export ``make install`` made inside the venv when there is one (the
exporter checked it there), else export the packaged model into a temporary folder once per
module: either way the graph a run would use is the graph compared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from crowdsift.core.errors import ConfigError
from crowdsift.engines.embedding import MiniLMEmbedder, SentenceTransformerEmbedder
from crowdsift.engines.onnx_embedder import (
    ExportManifest,
    OnnxEmbedder,
    batches,
    content_key,
    find_export,
    fingerprint,
    mean_pool_normalise,
)
from crowdsift.engines.onnx_export import default_model_dir, export_model

VARIED = [
    "How do I stop Tapcon screws from spinning in concrete?",
    "Tapcons spin when the hole is oversized: use the bit that comes in the box.",
    "Is the Plaud Note worth it compared to a phone recording app?",
    "какой диктофон дольше держит заряд",
    "Welcher Akkuschrauber für Trockenbau? Die Akkus halten im Winter nicht lange.",
    "¿Qué taladro compro para hormigón?",
    "中文句子也应该一样",
    "🔋🔋 battery life is great!!! 10/10 would buy again",
    "   padded with spaces and\ttabs\n",
    "x",
    "",
    "[post:abc123] says `airflow dags reserialize` fixes it, see https://example.com/a?b=c",
    "word " * 600,  # far past 256 tokens: truncated as sentence-transformers truncates
    "Airflow 3.0 parses DAGs faster; set min_file_process_interval = 60 (e.g. in airflow.cfg).",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return default_model_dir()


@pytest.fixture(scope="module")
def export(
    model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ExportManifest, Path]:
    found = find_export(model_dir)
    if found is None:
        target = tmp_path_factory.mktemp("onnx")
        export_model(model_dir, target)
        found = find_export(model_dir, [target])
    assert found is not None
    return found


@pytest.fixture(scope="module")
def reference() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="module")
def onnx(export: tuple[ExportManifest, Path], model_dir: Path) -> OnnxEmbedder:
    manifest, graph = export
    return OnnxEmbedder.from_export(manifest, graph, model_dir, name="test")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) * b.astype(np.float64)).sum(axis=1)


def test_onnx_vectors_equal_sentence_transformers_vectors(
    onnx: OnnxEmbedder, reference: SentenceTransformerEmbedder
) -> None:
    got, expected = onnx.embed(VARIED), reference.embed(VARIED)
    assert got.shape == expected.shape == (len(VARIED), 384)
    assert got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert _cosines(got, expected).min() >= 1 - 1e-4


def test_many_texts_of_mixed_length_keep_their_order(
    onnx: OnnxEmbedder, reference: SentenceTransformerEmbedder
) -> None:
    """More than one batch, sorted by length inside: each row still belongs to its text."""
    texts = [f"{'long ' * (i % 37)}sentence number {i} about drills" for i in range(80)]
    got, expected = onnx.embed(texts), reference.embed(texts)
    assert _cosines(got, expected).min() >= 1 - 1e-4
    assert float(got[3] @ got[4]) < 0.9999  # different texts, different rows


def test_minilm_embedder_runs_on_onnx_when_the_model_was_exported(
    export: tuple[ExportManifest, Path], reference: SentenceTransformerEmbedder
) -> None:
    embedder = MiniLMEmbedder(export_dirs=[export[1].parent])
    assert embedder.runtime == "onnxruntime"
    assert _cosines(embedder.embed(VARIED[:3]), reference.embed(VARIED[:3])).min() >= 1 - 1e-4
    again = MiniLMEmbedder(export_dirs=[export[1].parent])
    assert again._loaded() is embedder._loaded()  # one model per process, shared


def test_a_cold_process_embeds_without_importing_torch(
    export: tuple[ExportManifest, Path],
) -> None:
    script = (
        "import sys, json; from pathlib import Path\n"
        "from crowdsift.engines.embedding import MiniLMEmbedder\n"
        f"e = MiniLMEmbedder(export_dirs=[Path({str(export[1].parent)!r})])\n"
        "v = e.embed(['drill into concrete'])\n"
        "print(json.dumps([e.runtime, list(v.shape), "
        "sorted(m for m in ('torch', 'sentence_transformers', 'transformers') "
        "if m in sys.modules)]))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == ["onnxruntime", [1, 384], []]


def test_without_an_export_it_falls_back_to_sentence_transformers_with_a_note(
    tmp_path: Path, reference: SentenceTransformerEmbedder
) -> None:
    embedder = MiniLMEmbedder(export_dirs=[tmp_path])
    with capture_logs() as logs:
        assert embedder.runtime == "sentence-transformers"
    (note,) = [entry for entry in logs if entry["event"] == "embedding_runtime_fallback"]
    assert "python -m crowdsift.engines.onnx_export" in note["note"]
    assert _cosines(embedder.embed(VARIED[:2]), reference.embed(VARIED[:2])).min() > 0.99999


def test_a_broken_graph_falls_back_to_sentence_transformers_saying_why(
    model_dir: Path, tmp_path: Path
) -> None:
    _publish(model_dir, tmp_path).write_bytes(b"not an onnx graph")
    with capture_logs() as logs:
        assert MiniLMEmbedder(export_dirs=[tmp_path]).runtime == "sentence-transformers"
    (note,) = [entry for entry in logs if entry["event"] == "embedding_runtime_fallback"]
    assert "cannot be loaded" in note["note"]
    with pytest.raises(ConfigError, match="cannot be loaded"):
        MiniLMEmbedder(runtime="onnx", export_dirs=[tmp_path]).embed(["a text"])


def test_requiring_onnx_without_an_export_is_an_error_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no ONNX export.*onnx_export"):
        MiniLMEmbedder(runtime="onnx", export_dirs=[tmp_path]).embed(["a text"])


def test_an_existing_export_is_kept_without_loading_torch(
    export: tuple[ExportManifest, Path], model_dir: Path
) -> None:
    report = export_model(model_dir, export[1].parent)
    assert not report.created
    assert report.graph == export[1]
    assert report.max_cosine_gap <= 1e-4


def test_a_model_it_cannot_mirror_is_refused_and_nothing_is_written(
    model_dir: Path, tmp_path: Path
) -> None:
    """CLS pooling instead of mean: the runtime would give other vectors, so no export."""
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy, symlinks=True, ignore=shutil.ignore_patterns("*.safetensors"))
    (copy / "model.safetensors").symlink_to(model_dir / "model.safetensors")
    pooling = copy / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(config))
    target = tmp_path / "exports"
    with pytest.raises(ConfigError, match="only Transformer → mean Pooling → Normalize"):
        export_model(copy, target)
    assert not target.exists() or not any(target.iterdir())


# --- Finding an export: pure file logic on a tiny fake model ----------------------------------


@pytest.fixture
def fake_model(tmp_path: Path) -> Iterator[Path]:
    model = tmp_path / "model"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "config.json").write_text('{"hidden_size": 384}')
    (model / "model.safetensors").write_bytes(b"weights" * 100)
    (model / "1_Pooling" / "config.json").write_text('{"pooling_mode": "mean"}')
    (model / "README.md").write_text("not part of the model")
    yield model


def _publish(model: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    key = content_key(model)
    manifest = ExportManifest(
        key=key, files=fingerprint(model), source=str(model), max_seq_length=256,
        dimensions=384, max_cosine_gap=0.0,
    )  # fmt: skip
    (folder / manifest.graph_name).write_bytes(b"graph")
    (folder / f"{key}.json").write_text(manifest.model_dump_json())
    return folder / manifest.graph_name


def test_an_export_is_found_by_its_files_sizes_and_times(fake_model: Path, tmp_path: Path) -> None:
    graph = _publish(fake_model, tmp_path / "exports")
    found = find_export(fake_model, [tmp_path / "missing", tmp_path / "exports"])
    assert found is not None and found[1] == graph


def test_a_reinstalled_model_with_new_times_is_found_by_its_content(
    fake_model: Path, tmp_path: Path
) -> None:
    graph = _publish(fake_model, tmp_path / "exports")
    os.utime(fake_model / "model.safetensors", ns=(1, 1))
    found = find_export(fake_model, [tmp_path / "exports"])
    assert found is not None and found[1] == graph


def test_a_changed_model_never_runs_on_the_old_graph(fake_model: Path, tmp_path: Path) -> None:
    _publish(fake_model, tmp_path / "exports")
    (fake_model / "model.safetensors").write_bytes(b"fine-tuned" * 100)
    assert find_export(fake_model, [tmp_path / "exports"]) is None


def test_the_readme_does_not_change_the_key(fake_model: Path) -> None:
    before = content_key(fake_model)
    (fake_model / "README.md").write_text("edited")
    assert content_key(fake_model) == before


def test_a_manifest_without_its_graph_or_unreadable_is_skipped(
    fake_model: Path, tmp_path: Path
) -> None:
    graph = _publish(fake_model, tmp_path / "exports")
    (tmp_path / "exports" / "zz-broken.json").write_text("{not json")
    graph.unlink()
    assert find_export(fake_model, [tmp_path / "exports"]) is None


def test_mean_pooling_ignores_padding() -> None:
    """A text padded to a longer batch gets the vector it gets alone."""
    rng = np.random.default_rng(7)
    hidden = rng.normal(size=(1, 5, 4)).astype(np.float32)
    alone = mean_pool_normalise(hidden[:, :3], np.ones((1, 3), dtype=np.int64))
    padded = mean_pool_normalise(hidden, np.array([[1, 1, 1, 0, 0]], dtype=np.int64))
    assert np.allclose(alone, padded, atol=1e-7)
    expected = hidden[0, :3].mean(axis=0)
    assert np.allclose(alone[0], expected / np.linalg.norm(expected), atol=1e-6)


def test_batches_cover_every_text_once_longest_first_within_the_padded_budget() -> None:
    lengths = [135, 20, 3, 256, 40, 40, 7, 1, 90, 0, 300]
    found = batches(lengths, max_rows=4, max_tokens=256)
    assert sorted(i for batch in found for i in batch) == list(range(len(lengths)))
    flat = [lengths[i] for batch in found for i in batch]
    assert flat == sorted(lengths, reverse=True)
    for batch in found:
        assert len(batch) <= 4
        width = lengths[batch[0]]  # the batch pads to its first (longest) text
        assert len(batch) == 1 or len(batch) * width <= 256
    # a long text never drags short ones up to its width: 300 and 256 ride alone
    assert [len(b) for b in found[:2]] == [1, 1]
    assert batches([], max_rows=4, max_tokens=256) == []
