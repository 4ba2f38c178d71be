"""Streaming lines out of plain and compressed dumps, never reading a file whole."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest
import zstandard

from crowdsift.core.errors import DumpFormatError
from crowdsift.sources.archive.streams import LineStream, content_suffix

PAYLOAD = b"".join(b'{"n": %d}\n' % i for i in range(5000))


def test_content_suffix_looks_under_compression() -> None:
    assert content_suffix(Path("RS_2023-01.zst")) == ""
    assert content_suffix(Path("saved.json.zst")) == ".json"
    assert content_suffix(Path("saved.JSON")) == ".json"
    assert content_suffix(Path("RC_2020-01.ndjson.gz")) == ".ndjson"


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("plain.ndjson", lambda b: b),
        ("z.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
        ("g.gz", gzip.compress),
        ("b.bz2", bz2.compress),
        ("x.xz", lzma.compress),
    ],
)
def test_every_compression_yields_the_same_lines(
    tmp_path: Path, name: str, compress: object
) -> None:
    path = tmp_path / name
    path.write_bytes(compress(PAYLOAD))  # type: ignore[operator]
    with LineStream(path, chunk_size=4096) as stream:
        lines = list(stream)
        assert stream.bytes_read == path.stat().st_size
    assert lines == PAYLOAD.split(b"\n")[:-1]


def test_multi_frame_zstd_is_read_to_the_end(tmp_path: Path) -> None:
    cctx = zstandard.ZstdCompressor()
    path = tmp_path / "frames.zst"
    path.write_bytes(cctx.compress(b"a\nb") + cctx.compress(b"c\nd\n") + cctx.compress(b"e"))
    with LineStream(path, chunk_size=7) as stream:
        assert list(stream) == [b"a", b"bc", b"d", b"e"]


def test_long_window_zstd_is_accepted(tmp_path: Path) -> None:
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=28)
    path = tmp_path / "long.zst"
    path.write_bytes(zstandard.ZstdCompressor(compression_params=params).compress(PAYLOAD))
    with LineStream(path) as stream:
        assert sum(1 for _ in stream) == 5000


def test_truncated_zstd_is_reported_not_half_read(tmp_path: Path) -> None:
    data = zstandard.ZstdCompressor().compress(PAYLOAD)
    path = tmp_path / "cut.zst"
    path.write_bytes(data[: len(data) // 2])
    with LineStream(path) as stream, pytest.raises(DumpFormatError, match="truncated"):
        list(stream)


def test_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "x.ndjson"
    path.write_bytes(b"one\ntwo")
    with LineStream(path) as stream:
        assert list(stream) == [b"one", b"two"]
