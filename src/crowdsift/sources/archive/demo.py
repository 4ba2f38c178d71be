"""The bundled demo archive: built from the packaged demo dumps on first use, rebuilt on change.

The archive records a hash of the dump files (and of the schema and import format versions),
so a new crowdsift release with new demo data or a new schema rebuilds it by itself. It is
built in a temporary file in the same directory and renamed into place, so a crash never
leaves half an archive and readers only ever see a complete one. One process builds it at a
time (``core.schema_lock`` on ``demo-archive.sqlite.lock``): processes started together on a
fresh data directory wait for the first one's archive instead of each importing their own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path

from crowdsift.core.errors import ArchiveError
from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.core.schema_lock import schema_lock
from crowdsift.demo import demo_dump_files
from crowdsift.sources.archive import db
from crowdsift.sources.archive.importer import import_files

log = get_logger(__name__)

DEMO_FILENAME = "demo-archive.sqlite"
HASH_KEY = "demo_content_hash"
IMPORT_FORMAT_VERSION = 3  # bump when the importer changes what it stores (3: compressed)
DEMO_AUTHORS = AuthorPolicy(salt=b"crowdsift demo archive: made-up people, a public salt")
"""The demo's authors are invented, so their pseudonyms need no secret: a fixed salt keeps the
demo archive identical on every machine and independent of the user's salt."""
_build_lock = threading.Lock()
_built: dict[str, Path] = {}
"""Demo archives this process built, by content hash: the build is deterministic (a fixed
author policy, the same files), so another data directory gets a copy of the file instead of a
second import (a service with several homes, a test suite with one home per test)."""


def packaged_demo_files() -> list[Path]:
    """The demo dumps shipped inside the package; ArchiveError if they were not installed."""
    return demo_dump_files()


def content_hash(files: Sequence[Path]) -> str:
    """SHA-256 over the files' names and bytes plus the schema and import format versions."""
    digest = hashlib.sha256(f"schema={db.SCHEMA_VERSION};format={IMPORT_FORMAT_VERSION}".encode())
    for path in sorted(files, key=lambda p: p.name):
        digest.update(f"\0{path.name}\0{path.stat().st_size}\0".encode())
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def stored_hash(archive: Path) -> str | None:
    """The content hash recorded in an existing demo archive, or None if absent or unusable."""
    if not archive.is_file():
        return None
    try:
        conn = db.open_readonly(archive)
    except ArchiveError:
        return None
    try:
        return db.get_meta(conn, HASH_KEY)
    finally:
        conn.close()


def ensure_demo_archive(data_dir: Path, *, dump_files: Sequence[Path] | None = None) -> Path:
    """``data_dir/demo-archive.sqlite``, (re)built when missing or out of date."""
    files = list(dump_files) if dump_files is not None else packaged_demo_files()
    target = data_dir / DEMO_FILENAME
    digest = content_hash(files)
    if stored_hash(target) == digest:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock, schema_lock(target):  # other processes wait, then find it built
        if stored_hash(target) != digest and not _copy_built(digest, target):
            _build(files, target, digest)
            _built[digest] = target
    return target


def _copy_built(digest: str, target: Path) -> bool:
    """Copy a demo archive this process already built for ``digest``, if it is still intact;
    written beside the target and renamed over it, so a reader never sees half a file."""
    source = _built.get(digest)
    if source is None or source == target or stored_hash(source) != digest:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        shutil.copyfile(source, tmp)
        tmp.replace(target)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return stored_hash(target) == digest


def _build(files: list[Path], target: Path, digest: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        report = import_files(files, tmp, authors=DEMO_AUTHORS)
        if not report.ok:
            errors = "; ".join(f.error for f in report.files if f.error)
            raise ArchiveError(f"the bundled demo data could not be imported: {errors}")
        conn = db.connect(tmp)
        try:
            db.set_meta(conn, HASH_KEY, digest)
            # One self-contained file: a WAL side file would not follow the rename.
            conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            conn.close()
        tmp.replace(target)
        log.info(
            "demo_archive_built", path=str(target), posts=report.posts, comments=report.comments
        )
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
