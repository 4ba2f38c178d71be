"""Parsing and pseudonymising dump lines in worker processes while the importer writes.

Why processes: the import is GIL-bound Python. Per record, decoding the JSON, building the
row, hashing the author and splicing the raw JSON take about two thirds of the time and the
SQLite upserts most of the rest, and threads cannot share that (see ``writer``). Here the
importing process reads and decompresses lines, hands them out in chunks, takes each chunk
back as rows ready to bind (``scrub.row_values`` applied), in file order, and writes them
with ``BatchWriter``; workers do the rest. Whenever every worker is busy and the next result
is not back yet, and while a worker is still starting (a few tenths of a second), the
importing process parses the next chunk itself, so no core idles. Files below a size
threshold (``importer``) never start a worker.

Measured on 2 cores, where the second one is already busy a third of the time with the
writer's indexing, commits and checkpoints: the bench's 50,000 records went from 33k to 36k
records/s (a worker's start, ~0.2 s of imports, is paid in each import), 200,000 records
from 6.6 s to 5.3 s. More cores leave more to the workers.

Why plain ``subprocess`` rather than ``multiprocessing``: fork is unsafe once the importer's
threads run, and spawn/forkserver re-import the parent's ``__main__`` in every worker (for
the ``crowdsift`` command, its whole CLI): measured 0.29-0.36 s to a ready worker, against
0.21 s for ``python -c`` importing this module. A worker holds no copy of the parent's pipe
ends (a pool's shared queues would), so it reads end-of-file (or writes into a broken pipe)
and exits when the parent dies, however it dies. Workers ignore SIGINT
(Ctrl-C is the parent's to handle); the salt reaches them over the pipe, never on a
command line.

Workers run at a lower priority (nice 10) from their first instruction: every row waits on
the importing process's threads (writing, indexing, checkpoints), while a worker works ahead
and is helped when it falls behind. Measured on 2 cores: 2-4 % faster than at equal priority.

"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, cast

import crowdsift
from crowdsift.core.errors import ArchiveError
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive.codec import DocCodec
from crowdsift.sources.archive.parse_worker import (
    PreparedChunk,
    WorkerConfig,
    chunk_frame,
    grow_pipe,
    prepare_chunk,
    read_result,
    write_frame,
)
from crowdsift.sources.archive.streams import READ_ERRORS

CHUNK_BYTES = 256 << 10
"""Decompressed bytes of lines per chunk: about 150 records, a few ms of parsing."""
IN_FLIGHT = 16
"""Chunks handed to one worker and not yet taken back: enough that it keeps parsing while
this process spends ~40 ms upserting a batch (at 256 KiB, 2 MiB of lines per worker)."""
LOCAL_AHEAD = 32
"""Chunks this process may have parsed itself and not yet written (0: it never parses)."""
MAX_WORKERS = 4
"""The importing process's own share (reading, writing: about a third of the work per record)
keeps up with about three workers; beyond that more would wait for it."""
_STOP_TIMEOUT_S = 10.0
_WORKER_NICENESS = 10
_WORKER_CODE = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    f"os.nice({_WORKER_NICENESS}); sys.path.insert(0, sys.argv[1]); "
    "from crowdsift.sources.archive.parse_worker import serve; serve(int(sys.argv[2]), "
    "int(sys.argv[3]))"
)


def worker_count(setting: int | None) -> int:
    """How many workers to use: the setting (``CROWDSIFT_IMPORT_WORKERS``) if given, else one
    per core beside the importing process's own, at most ``MAX_WORKERS``. 0 (parse
    in-process) on one core, and where workers cannot be started this way (not POSIX)."""
    if os.name != "posix":
        return 0
    if setting is not None:
        return setting
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        cores = os.cpu_count() or 1
    return max(0, min(MAX_WORKERS, cores - 1))


# --- the importing process's side -----------------------------------------------------------


class _Chunk(NamedTuple):
    first_line_no: int
    block: bytes


class _Chunks:
    """Lines joined by newlines into chunks of about ``size`` bytes, numbered from 1.

    ``peek`` looks at the next chunk without taking it. A read error (a truncated or corrupt
    file) ends the chunks with the lines read before it and is kept in ``error``: the caller
    writes their rows first, then raises it.
    """

    def __init__(self, lines: Iterator[bytes], size: int) -> None:
        self._lines = lines
        self._size = size
        self._line_no = 0
        self._next: _Chunk | None = None
        self._exhausted = False
        self.error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._next is None and self._exhausted

    def peek(self) -> _Chunk | None:
        if self._next is None and not self._exhausted:
            self._next = self._read()
        return self._next

    def take(self) -> _Chunk | None:
        chunk = self.peek()
        self._next = None
        return chunk

    def _read(self) -> _Chunk | None:
        lines: list[bytes] = []
        size = 0
        try:
            for line in self._lines:
                lines.append(line)
                size += len(line) + 1
                if size >= self._size:
                    break
            else:
                self._exhausted = True
        except READ_ERRORS as exc:
            self.error = exc
            self._exhausted = True
        first = self._line_no + 1
        self._line_no += len(lines)
        return _Chunk(first, b"\n".join(lines)) if lines else None


class _Worker:
    """One worker process, the parent's ends of its two pipes, and what it was handed."""

    def __init__(self, config: WorkerConfig) -> None:
        to_worker_r, self.to_worker = os.pipe()
        self.from_worker, from_worker_w = os.pipe()
        try:
            grow_pipe(self.to_worker)
            grow_pipe(self.from_worker)
            package_root = str(Path(crowdsift.__file__).resolve().parents[1])
            fds = [str(to_worker_r), str(from_worker_w)]
            self.process = subprocess.Popen(  # noqa: S603 - our interpreter, fixed code
                [sys.executable, "-c", _WORKER_CODE, package_root, *fds],
                pass_fds=(to_worker_r, from_worker_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except BaseException:
            os.close(self.to_worker)
            os.close(self.from_worker)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self.ready = False
        self.in_flight = 0
        # Waits in the pipe; a worker that died already is noticed when it does not say hello.
        with contextlib.suppress(BrokenPipeError):
            write_frame(self.to_worker, chunk_frame(0, pickle.dumps(config)))

    def readable(self) -> bool:
        poller = select.poll()
        poller.register(self.from_worker, select.POLLIN)
        return bool(poller.poll(0))

    def stop(self) -> None:
        """Hang up (the worker exits at end of file) and reap it; kill it if it lingers.

        A worker still starting has nothing to finish: it is terminated, so a file that
        ended before its worker was ready does not wait for that start-up.
        """
        for fd in (self.to_worker, self.from_worker):
            with contextlib.suppress(OSError):
                os.close(fd)
        if not self.ready:
            self.process.terminate()
        try:
            self.process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Pending(NamedTuple):
    """A chunk handed out: to ``worker``, or parsed here already (``done``)."""

    worker: _Worker | None
    first_line_no: int
    done: PreparedChunk | None


class ParseWorkers:
    """Worker processes that turn chunks of dump lines into rows, results in file order.

    Started on first use, stopped on leaving the ``with`` (or by ``close``). ``prepare``
    yields the chunks of one file; if it stops early (an error, an interrupt) the workers are
    stopped, and the next ``prepare`` starts new ones.
    """

    def __init__(
        self,
        policy: AuthorPolicy,
        *,
        count: int,
        keep_bad: int,
        dictionaries: Sequence[bytes] = (),
    ) -> None:
        self.policy = policy
        self.count = max(1, count)
        self.keep_bad = keep_bad
        self.chunk_bytes = CHUNK_BYTES
        self.codec = DocCodec(dictionaries)
        self._config = WorkerConfig(
            policy.salt, policy.keep_usernames, keep_bad, tuple(dictionaries)
        )
        self._workers: list[_Worker] = []

    def __enter__(self) -> ParseWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker and wait for it to exit."""
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop()

    def prepare(self, lines: Iterator[bytes], path: str) -> Generator[PreparedChunk, None, None]:
        """``lines`` prepared chunk by chunk, in order; a read error is raised after the rows
        read before it are yielded."""
        if not self._workers:
            self._start(path)
        chunks = _Chunks(lines, self.chunk_bytes)
        finished = False
        try:
            yield from self._pipeline(chunks, path)
            finished = True
        finally:
            if not finished:
                self.close()  # results may still be on their way: out of step now
        if chunks.error is not None:
            raise chunks.error

    def _start(self, path: str) -> None:
        try:
            while len(self._workers) < self.count:
                self._workers.append(_Worker(self._config))
        except OSError as exc:  # not an error of the file: must not be reported as one
            self.close()
            raise ArchiveError(
                f"cannot start a parsing worker process to import {path}: {exc}. Set "
                "CROWDSIFT_IMPORT_WORKERS=0 to parse in the importing process."
            ) from exc

    def _pipeline(self, chunks: _Chunks, path: str) -> Iterator[PreparedChunk]:
        """Hand out, take back in order, and parse here whenever that beats waiting."""
        pending: deque[_Pending] = deque()
        while True:
            self._hand_out(chunks, pending, path)
            if pending and (head := self._head_if_back(pending, path)) is not None:
                yield head
                continue
            if self._may_help(chunks, pending):
                chunk = chunks.take()
                if chunk is not None:
                    done = prepare_chunk(
                        chunk.block, chunk.first_line_no, self.policy, self.keep_bad, self.codec
                    )
                    pending.append(_Pending(None, chunk.first_line_no, done))
                continue
            if not pending:
                if chunks.done:
                    return
                self._await_ready(path)
                continue
            yield self._result(pending.popleft(), path)  # the head is a worker's: wait

    def _hand_out(self, chunks: _Chunks, pending: deque[_Pending], path: str) -> None:
        """Give chunks to ready workers until each has ``IN_FLIGHT`` (least busy first)."""
        while (chunk := chunks.peek()) is not None:
            free = [w for w in self._workers if w.in_flight < IN_FLIGHT and self._ready(w, path)]
            if not free:
                return
            worker = min(free, key=lambda w: w.in_flight)
            chunks.take()
            try:
                write_frame(worker.to_worker, chunk_frame(chunk.first_line_no, chunk.block))
            except OSError:
                raise self._died(worker, path, chunk.first_line_no) from None
            worker.in_flight += 1
            pending.append(_Pending(worker, chunk.first_line_no, None))

    def _head_if_back(self, pending: deque[_Pending], path: str) -> PreparedChunk | None:
        head = pending[0]
        if head.done is not None:
            pending.popleft()
            return head.done
        assert head.worker is not None
        if not head.worker.readable():
            return None
        return self._result(pending.popleft(), path)

    def _may_help(self, chunks: _Chunks, pending: deque[_Pending]) -> bool:
        if LOCAL_AHEAD <= 0 or chunks.peek() is None:
            return False
        return sum(item.done is not None for item in pending) < LOCAL_AHEAD

    def _ready(self, worker: _Worker, path: str) -> bool:
        """True once the worker said it is ready (checked without waiting)."""
        if not worker.ready and worker.readable():
            self._hello(worker, path)
        return worker.ready

    def _await_ready(self, path: str) -> None:
        """Wait for a worker to be ready (needed only when this process may not help)."""
        self._hello(next(w for w in self._workers if not w.ready), path)

    def _hello(self, worker: _Worker, path: str) -> None:
        try:
            read_result(worker.from_worker)
        except (EOFError, OSError):
            raise self._died(worker, path, None) from None
        worker.ready = True

    def _result(self, item: _Pending, path: str) -> PreparedChunk:
        worker = item.worker
        assert worker is not None  # a chunk parsed here is never waited for
        try:
            kind, body = cast(tuple[str, object], read_result(worker.from_worker))
        except (EOFError, OSError):
            raise self._died(worker, path, item.first_line_no) from None
        worker.in_flight -= 1
        if kind != "rows":
            self.close()
            raise ArchiveError(
                f"a parsing worker failed while importing {path}: {body}. Rows committed "
                "before it are kept. This is a bug in crowdsift: please report it with that "
                "line; meanwhile CROWDSIFT_IMPORT_WORKERS=0 imports without workers."
            )
        return cast(PreparedChunk, body)

    def _died(self, worker: _Worker, path: str, first_line_no: int | None) -> ArchiveError:
        """The error for a worker that is gone; every worker is stopped first."""
        try:
            code: int | None = worker.process.wait(timeout=_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        if code is None:
            how = "stopped answering"
        elif code < 0:
            how = f"was killed by {_signal_name(-code)}"
        else:
            how = f"exited with code {code} (its own error, if any, is printed above)"
        where = "" if first_line_no is None else f" (lines from {first_line_no})"
        hint = " (out of memory? the kernel log says: dmesg)" if code == -signal.SIGKILL else ""
        return ArchiveError(
            f"the import's parsing worker (process {worker.process.pid}) {how} while "
            f"importing {path}{where}{hint}. Rows committed before it are kept: run the same "
            "import again to complete it (nothing is imported twice), or set "
            "CROWDSIFT_IMPORT_WORKERS=0 to parse in the importing process."
        )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
