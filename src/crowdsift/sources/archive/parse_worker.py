"""A parsing worker: the process side of ``parallel``, and the frames both sides speak.

A worker is started by ``parallel.ParseWorkers`` as ``python -c`` running ``serve`` with the
two pipe descriptors it inherited. It reads a ``WorkerConfig`` (the salt travels here, never on
a command line), says it is ready, then answers every chunk of dump lines with a
``PreparedChunk``: the rows ``prepare_chunk`` built (parsed, usernames hashed and scrubbed,
exactly what the in-process import binds), or the failure that stopped it.

Frames are a length and the payload: a chunk's lines joined by newlines, or a pickle of the
answer. A worker reads its input and writes its answers on two threads (their system calls
release the GIL) so that neither side waits for the other while the parent is busy writing
a batch; its reader takes a pipe's worth per read, as each read costs it a wait for the GIL.
Pipes are grown to 1 MiB where the OS allows it (Linux).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import struct
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import NamedTuple

from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive.api_json import api_records, document_problem
from crowdsift.sources.archive.codec import DocCodec
from crowdsift.sources.archive.parse import (
    ApiDocument,
    BadRecordError,
    PostRow,
    parse_line_or_document,
)
from crowdsift.sources.archive.scrub import BoundRow, row_values

_CHUNK_HEADER = struct.Struct("!QQ")  # payload bytes, number of the chunk's first line
_RESULT_HEADER = struct.Struct("!Q")
_PIPE_BYTES = 1 << 20
_WORKER_SWITCH_S = 0.001  # a worker's I/O threads get the GIL back from the parser this fast
_STOP_TIMEOUT_S = 10.0
_RECORD_SIZE_GUESS = 1000
"""What a record of an API answer saved as one line counts towards a batch's size (as
``BatchWriter.add`` counts a record without its own line)."""


class PreparedChunk(NamedTuple):
    """One chunk of lines turned into upsert parameters, with what the report counts.

    Per row: ``kinds`` (1 = post, 0 = comment), ``sizes`` (length of its JSON line: the
    writer bounds batches by it) and ``seen`` (non-blank lines of the chunk up
    to this row: the progress count when a batch fills at this row).
    """

    first_line_no: int
    lines: int
    skipped: int
    bad_count: int
    bad: list[tuple[int, str]]
    rows: list[BoundRow]
    kinds: bytes
    sizes: list[int]
    seen: list[int]


def prepare_chunk(
    block: bytes, first_line_no: int, policy: AuthorPolicy, keep_bad: int, codec: DocCodec
) -> PreparedChunk:
    """What the in-process import does per line, up to ``BatchWriter.add``, for the lines
    of ``block`` (joined by newlines). ``keep_bad`` bounds the bad lines whose reason is
    kept; all are counted."""
    rows: list[BoundRow] = []
    kinds = bytearray()
    sizes: list[int] = []
    seen: list[int] = []
    bad: list[tuple[int, str]] = []
    count = skipped = bad_count = 0
    # Lines stay bytes: orjson reads UTF-8 itself, faster than decoding first (a newline is
    # never part of a UTF-8 sequence, so splitting the bytes splits the text).
    for line_no, line in enumerate(block.split(b"\n"), first_line_no):
        if not line or line.isspace():
            continue
        count += 1
        try:
            record = parse_line_or_document(line)
        except BadRecordError as exc:
            bad_count += 1
            if len(bad) < keep_bad:
                bad.append((line_no, exc.reason))
            continue
        if record is None:
            skipped += 1
            continue
        if isinstance(record, ApiDocument):
            shares = (rows, kinds, sizes, seen, bad)
            more_skipped, more_bad = _document_rows(record, line_no, count, shares, policy, codec)
            skipped += more_skipped
            bad_count += more_bad
            del bad[keep_bad:]
            continue
        rows.append(row_values(record, policy, codec, line))
        kinds.append(type(record) is PostRow)
        sizes.append(len(line))
        seen.append(count)
    return PreparedChunk(
        first_line_no, count, skipped, bad_count, bad, rows, bytes(kinds), sizes, seen
    )


def _document_rows(
    document: ApiDocument,
    line_no: int,
    count: int,
    into: tuple[list[BoundRow], bytearray, list[int], list[int], list[tuple[int, str]]],
    policy: AuthorPolicy,
    codec: DocCodec,
) -> tuple[int, int]:
    """The rows of an API answer saved as one line, appended to ``into`` (rows, kinds, sizes,
    seen, bad reasons); returns how many of its things were skipped and how many were bad."""
    rows, kinds, sizes, seen, bad = into
    problem = document_problem(document.doc)
    if problem is not None:
        bad.append((line_no, problem))
        return 0, 1
    skipped = bad_count = 0
    for item in api_records(document.doc):
        if isinstance(item, BadRecordError):
            bad_count += 1
            bad.append((line_no, item.reason))
        elif item is None:
            skipped += 1
        else:
            rows.append(row_values(item, policy, codec))
            kinds.append(type(item) is PostRow)
            sizes.append(_RECORD_SIZE_GUESS)
            seen.append(count)
    return skipped, bad_count


# --- frames ---------------------------------------------------------------------------------


def write_frame(fd: int, frame: bytes) -> None:
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, size: int) -> bytearray:
    """``size`` bytes; EOFError when the other end closed its pipe first."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if got == 0:
            raise EOFError
        done += got
    return buffer


def chunk_frame(first_line_no: int, block: bytes) -> bytes:
    return _CHUNK_HEADER.pack(len(block), first_line_no) + block


def result_frame(message: object) -> bytes:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _RESULT_HEADER.pack(len(payload)) + payload


def read_result(fd: int) -> object:
    (size,) = _RESULT_HEADER.unpack(read_exact(fd, _RESULT_HEADER.size))
    return pickle.loads(read_exact(fd, size))  # noqa: S301 - our own child, a private pipe


def grow_pipe(fd: int) -> None:
    """1 MiB of pipe buffer where the OS lets us (Linux): a chunk or a result moves in one
    system call. The default (64 KiB) works too, only with more of them."""
    import fcntl  # POSIX only, as workers are (see ``worker_count``)

    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with contextlib.suppress(OSError):  # over the per-user limit: keep the default
            fcntl.fcntl(fd, set_size, _PIPE_BYTES)


# --- the worker process ---------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerConfig:
    salt: bytes
    keep_usernames: bool
    keep_bad: int
    dictionaries: tuple[bytes, ...] = ()


def serve(in_fd: int, out_fd: int) -> None:
    """A worker's life: a config, then chunks answered in order until the parent hangs up.

    Input is read and answers are written on two threads, so the parent never waits on a
    worker that is busy parsing and the worker parses on while the parent is busy writing
    rows. A parent that is gone (its pipe at end of file, or broken) ends the worker quietly;
    a failure to parse is sent back, then the worker ends.
    """
    sys.setswitchinterval(_WORKER_SWITCH_S)
    inbox: queue.SimpleQueue[tuple[int, bytes] | None] = queue.SimpleQueue()
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    threading.Thread(target=_read_frames, args=(in_fd, inbox), daemon=True).start()
    writer = threading.Thread(target=_write_frames, args=(out_fd, outbox), daemon=True)
    writer.start()
    try:
        _answer(inbox, outbox)
    finally:
        outbox.put(None)
        writer.join(_STOP_TIMEOUT_S)


def _answer(
    inbox: queue.SimpleQueue[tuple[int, bytes] | None], outbox: queue.SimpleQueue[bytes | None]
) -> None:
    first = inbox.get()
    config = None if first is None else pickle.loads(first[1])  # noqa: S301 - from our parent
    if not isinstance(config, WorkerConfig):
        return
    policy = AuthorPolicy(config.salt, keep_usernames=config.keep_usernames)
    codec = DocCodec(config.dictionaries)
    outbox.put(result_frame(("ready", os.getpid())))
    while (message := inbox.get()) is not None:
        first_line_no, block = message
        try:
            prepared = prepare_chunk(block, first_line_no, policy, config.keep_bad, codec)
        except Exception as exc:  # a bug: say where, then stop
            detail = "".join(traceback.format_exception_only(exc)).strip()
            message_text = f"{detail} (in the lines from line {first_line_no})"
            outbox.put(result_frame(("failed", message_text)))
            return
        outbox.put(result_frame(("rows", prepared)))


def _read_frames(fd: int, inbox: queue.SimpleQueue[tuple[int, bytes] | None]) -> None:
    """Chunk frames from ``fd`` into ``inbox``, then None at end of file (or on any error).

    Reads up to a pipe's worth at a time: every read costs this thread a wait for the GIL.
    """
    buffer = bytearray()
    header = _CHUNK_HEADER.size
    try:
        while data := os.read(fd, _PIPE_BYTES):
            buffer += data
            while len(buffer) >= header:
                size, first_line_no = _CHUNK_HEADER.unpack_from(buffer)
                end = header + size
                if len(buffer) < end:
                    break
                inbox.put((first_line_no, bytes(buffer[header:end])))
                del buffer[:end]
    finally:
        inbox.put(None)


def _write_frames(fd: int, outbox: queue.SimpleQueue[bytes | None]) -> None:
    """Frames from ``outbox`` to ``fd`` until None, or until the parent is gone."""
    with contextlib.suppress(OSError):
        while (frame := outbox.get()) is not None:
            write_frame(fd, frame)
