"""Fuzz target: dump files through the archive importer, and every line through ``parse_line``.

The first byte picks how the rest is written (see ``_LAYOUTS``): plain NDJSON, saved API JSON,
zstd/gzip-compressed or raw bytes under a compressed name. Findings: ``import_files`` raising
anything (a file it cannot read is reported, never raised), a report whose counts do not add
up (``lines = posts + comments + skipped + bad_lines``), ``parse_line`` raising anything but
``BadRecordError``, or a row holding text SQLite cannot store.

    python fuzz/fuzz_dump_lines.py fuzz/corpus/dump_lines -max_total_time=30
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    import zstandard

    from crowdsift.sources.archive.importer import MAX_BAD_LINES_KEPT, import_files
    from crowdsift.sources.archive.parse import BadRecordError, CommentRow, PostRow, parse_line
    from harness import quiet_logs

_WORKDIR = Path(tempfile.mkdtemp(prefix="crowdsift-fuzz-dump-"))
atexit.register(shutil.rmtree, _WORKDIR, ignore_errors=True)
_ARCHIVE = _WORKDIR / "archive.sqlite"


def _zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=1).compress(data)


_LAYOUTS: tuple[tuple[str, Callable[[bytes], bytes]], ...] = (
    ("RS_fuzz.ndjson", bytes),
    ("saved.json", bytes),
    ("RC_fuzz.zst", _zstd),
    ("RC_fuzz.zst", bytes),  # not zstd at all, or a frame cut short
    ("saved.json.zst", _zstd),
    ("RS_fuzz.gz", gzip.compress),
    ("RS_fuzz.bz2", bytes),
)


def check_line(text: str) -> None:
    """One line: a row with storable text, None (not a post or comment), or BadRecordError."""
    try:
        row = parse_line(text)
    except BadRecordError as exc:
        assert exc.reason
        return
    if row is None:
        return
    assert row.id and row.subreddit == row.subreddit.lower()
    texts = (row.title, row.selftext) if isinstance(row, PostRow) else (row.body, row.parent_id)
    stored = json.dumps(row.data, ensure_ascii=False)  # the record the archive compresses
    for value in (*texts, stored, row.author or ""):
        value.encode("utf-8")  # raises on a lone surrogate, which SQLite cannot store
    if isinstance(row, CommentRow):
        assert row.link_id and row.parent_id[:3] in ("t1_", "t3_")


def import_file(name: str, content: bytes) -> None:
    """The whole file through the importer; every line it saw is accounted for."""
    path = _WORKDIR / name
    path.write_bytes(content)
    report = import_files([path], _ARCHIVE)
    (file_report,) = report.files
    counted = file_report.posts + file_report.comments + file_report.skipped
    assert file_report.lines == counted + file_report.bad_lines, file_report
    assert len(file_report.first_bad_lines) == min(file_report.bad_lines, MAX_BAD_LINES_KEPT)
    assert report.failed_files == (file_report.error is not None)


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    name, encode = _LAYOUTS[data[0] % len(_LAYOUTS)]
    body = data[1:]
    for line in body.split(b"\n")[:200]:
        text = line.decode("utf-8", "replace")  # as the importer decodes
        if text.strip():
            check_line(text)
    import_file(name, encode(body))


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
