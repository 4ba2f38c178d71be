"""Reading dump files as a stream of lines, whatever their compression, never all at once.

Pushshift / Arctic Shift dumps are zstandard with a long window (up to 2 GiB, hence
``max_window_size=2**31``) and sometimes several frames; older ones are bz2, xz or gzip. Lines
are split from 1 MiB chunks. A zstd file that ends inside a frame is reported as truncated (an
interrupted download) instead of silently yielding a half line. Progress is the number of
*compressed* bytes consumed, so a progress bar can be sized by the files on disk.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO, Protocol

import zstandard

from crowdsift.core.errors import DumpFormatError

CHUNK = 1 << 20
COMPRESSED_SUFFIXES = (".zst", ".gz", ".bz2", ".xz")

# What a corrupt or truncated compressed stream raises, per library.
READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    lzma.LZMAError,
    zstandard.ZstdError,
    DumpFormatError,
)


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def content_suffix(path: Path) -> str:
    """The suffix under any compression: ``RS_2023-01.zst`` → "", ``t.json.gz`` → ".json"."""
    name = path.name.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return Path(name).suffix


class LineStream:
    """The decompressed lines of one file (bytes, newline stripped), plus bytes consumed.

    Use as a context manager; iterate once. ``bytes_read`` is the position in the file on
    disk, so it reaches the file size at the end.
    """

    def __init__(self, path: Path, *, chunk_size: int = CHUNK) -> None:
        self.path = path
        self.chunk_size = chunk_size
        self._stack = ExitStack()
        self._raw: BinaryIO | None = None

    def __enter__(self) -> LineStream:
        self._raw = self._stack.enter_context(self.path.open("rb", buffering=0))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def bytes_read(self) -> int:
        return 0 if self._raw is None or self._raw.closed else self._raw.tell()

    def __iter__(self) -> Iterator[bytes]:
        pending = b""
        for chunk in self._chunks():
            lines = chunk.split(b"\n")
            if pending:  # the line cut at the previous chunk's end
                lines[0] = pending + lines[0]
            pending = lines.pop()
            yield from lines
        if pending:
            yield pending

    def _chunks(self) -> Iterator[bytes]:
        raw = self._raw
        if raw is None:
            raise RuntimeError("LineStream must be entered before reading")
        name = self.path.name.lower()
        if name.endswith(".zst"):
            yield from self._zstd_chunks(raw)
            return
        # Decompressors are closed by the ExitStack, with the file under them.
        source: _Readable = raw
        if name.endswith(".gz"):
            source = self._stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        elif name.endswith(".bz2"):
            source = self._stack.enter_context(bz2.BZ2File(raw, mode="rb"))
        elif name.endswith(".xz"):
            source = self._stack.enter_context(lzma.LZMAFile(raw, mode="rb"))  # noqa: SIM115
        while chunk := source.read(self.chunk_size):
            yield chunk

    def _zstd_chunks(self, raw: BinaryIO) -> Iterator[bytes]:
        """Decompress frame after frame; a frame cut short means the file is truncated."""
        dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
        dobj = dctx.decompressobj()
        in_frame = False
        # Small input reads: one read inflates ~10x, and huge outputs cost more to allocate.
        while chunk := raw.read(max(1, self.chunk_size // 16)):
            while chunk:
                out = dobj.decompress(chunk)
                in_frame = True
                if out:
                    yield out
                if dobj.eof:
                    chunk = dobj.unused_data
                    dobj = dctx.decompressobj()
                    in_frame = False
                else:
                    chunk = b""
        if in_frame:
            raise DumpFormatError(
                f"{self.path} ends in the middle of a zstd frame: the file is truncated "
                "(an interrupted download?); download it again and re-import"
            )
