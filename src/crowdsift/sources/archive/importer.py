"""Streaming import of dump files and saved API JSON into an archive, with a report.

Rows are upserted in batches (one transaction each), so an interrupted import keeps every
committed batch, the FTS index always agrees with the table (new posts are indexed in the
same transaction, see ``db``) and re-running the import completes it. Upserts key on the
Reddit id; the version with the later retrieval time wins, ties go to the file imported
last, and an identical row is left untouched, so re-importing the same files changes nothing.

Big NDJSON files are parsed by worker processes (``parallel``) while this process writes;
the archive and the report are the same either way.

Records are stored compressed with a dictionary trained on the archive's own data
(``codec``): the first import into an archive samples its files and trains it before
writing anything, so every row (and every worker) uses the same dictionary.

A bad line is counted, the first few are kept with their line number and reason, and the
import carries on. A file that cannot be read, or that gives no record at all, is recorded in
the report (``error``) and the other files are still imported: a file of garbage is a
failure, never an import that found nothing.
"""

from __future__ import annotations

import contextlib
import csv
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from crowdsift.core.config import get_settings
from crowdsift.core.errors import DumpFormatError
from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive import codec, db
from crowdsift.sources.archive.api_json import (
    api_records,
    check_api_document,
    document_problem,
)
from crowdsift.sources.archive.csv_rows import CsvRecords, PostSubreddit, plan_layout
from crowdsift.sources.archive.dictionary import ensure_dictionary
from crowdsift.sources.archive.parallel import ParseWorkers, worker_count
from crowdsift.sources.archive.parse import (
    BadRecordError,
    CommentRow,
    PostRow,
    Record,
    parse_line_or_document,
    record_from_dict,
)
from crowdsift.sources.archive.parse_worker import PreparedChunk
from crowdsift.sources.archive.report import (
    MAX_BAD_LINES_KEPT,
    BadLine,
    FileReport,
    ImportReport,
    nothing_imported,
)
from crowdsift.sources.archive.scrub import scrub_existing
from crowdsift.sources.archive.streams import (
    COMPRESSED_SUFFIXES,
    READ_ERRORS,
    LineStream,
    content_suffix,
)
from crowdsift.sources.archive.writer import BackgroundCheckpointer, BatchWriter

log = get_logger(__name__)

BATCH_SIZE = 20_000
PARALLEL_MIN_BYTES = 32 << 20
"""NDJSON with less text than this (about 20,000 records) is parsed in-process: a worker
process would not pay for its start. Measured: 20,000 records took as long either way."""
_COMPRESSION_GUESS = 8
"""How much text a compressed dump holds per byte on disk, roughly (zstd ~9, gzip ~6)."""
CSV_FIELD_LIMIT = (1 << 31) - 1
"""The csv module refuses fields over 128 KiB by default; a long post is longer."""


@dataclass(frozen=True)
class _Parallel:
    """Worker processes, and the size from which a file is worth handing to them."""

    pool: ParseWorkers
    min_bytes: int


@dataclass(frozen=True)
class CsvOptions:
    """What CSV files need beyond their rows: the user's ``--columns`` ({field: column}) and
    the subreddit of a post already in the archive (for comments that do not name it)."""

    columns: dict[str, str]
    post_subreddit: PostSubreddit


@dataclass(frozen=True)
class ImportProgress:
    """Sent after every batch is committed: drives a progress bar sized by bytes on disk."""

    file: str
    bytes_read: int
    total_bytes: int
    records: int


ProgressFn = Callable[[ImportProgress], None]


def import_files(
    paths: Iterable[Path],
    archive: Path,
    *,
    progress: ProgressFn | None = None,
    batch_size: int = BATCH_SIZE,
    authors: AuthorPolicy | None = None,
    workers: int | None = None,
    parallel_min_bytes: int = PARALLEL_MIN_BYTES,
    columns: dict[str, str] | None = None,
) -> ImportReport:
    """Import dump files and saved API JSON into ``archive`` (created if missing).

    ``authors`` says how usernames are stored (default: from the settings, i.e. salted
    hashes only); rows already in the archive are brought to it first (``scrub_existing``).
    NDJSON files holding at least ``parallel_min_bytes`` of text (estimated from their size
    on disk) are parsed by ``workers`` processes (default: the setting, else one per spare
    core; 0 = in this process), see ``crowdsift.sources.archive.parallel``; the archive ends up the
    same either way. ``columns`` ({field: column}) maps CSV columns whose names say nothing
    (see ``crowdsift.sources.archive.csv_rows``).
    """
    started = time.perf_counter()
    report = ImportReport(archive=str(archive))
    settings = get_settings()
    policy = authors if authors is not None else AuthorPolicy.from_settings(settings)
    workers = worker_count(settings.import_workers if workers is None else workers)
    paths = [Path(path) for path in paths]
    conn = db.connect(archive)
    posts = db.PostSubreddits(archive)
    csv_options = CsvOptions(dict(columns or {}), posts)
    try:
        report.rehashed = scrub_existing(conn, policy)
        ensure_dictionary(conn, paths, policy)
        with (
            BackgroundCheckpointer(archive, conn) as checkpointer,
            BatchWriter(
                conn, batch_size=batch_size, authors=policy, checkpointer=checkpointer
            ) as writer,
            ParseWorkers(
                policy,
                count=workers,
                keep_bad=MAX_BAD_LINES_KEPT,
                dictionaries=codec.load(conn),
            ) as pool,
        ):
            parallel = _Parallel(pool, parallel_min_bytes) if workers > 0 else None
            for path in paths:
                report.files.append(_import_file(writer, path, progress, parallel, csv_options))
                log.info(
                    "archive_import_file",
                    **report.files[-1].model_dump(exclude={"first_bad_lines"}),
                )
        _settle(conn)
    finally:
        posts.close()
        conn.close()
    _add_up(report)
    report.elapsed_seconds = round(time.perf_counter() - started, 3)
    log.info("archive_import_done", **report.model_dump(exclude={"files"}))
    return report


def _settle(conn: sqlite3.Connection) -> None:
    """After an import: fresh query-planner statistics, and the write-ahead log folded in."""
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _add_up(report: ImportReport) -> None:
    """The import's totals: its files' counts added up."""
    for f in report.files:
        report.lines += f.lines
        report.posts += f.posts
        report.comments += f.comments
        report.skipped += f.skipped
        report.bad_lines += f.bad_lines
        report.failed_files += f.error is not None


class _FileImport:
    """State of importing one file: counters, bad lines, the writer and progress.

    Counters are plain attributes (not the pydantic report: its validated ``__setattr__``
    cost 10 % of the import) and become a FileReport at the end.
    """

    def __init__(
        self,
        path: Path,
        writer: BatchWriter,
        stream: LineStream,
        progress: ProgressFn | None,
        total_bytes: int,
        parallel: _Parallel | None = None,
    ) -> None:
        self.path = str(path)
        self.writer = writer
        self.stream = stream
        self.progress = progress
        self.total_bytes = total_bytes
        self.parallel = parallel
        self.format: str | None = None
        self.lines = self.posts = self.comments = self.skipped = self.bad_lines = 0
        self.first_bad_lines: list[BadLine] = []
        self.error: str | None = None

    def to_report(self) -> FileReport:
        return FileReport(
            path=self.path,
            format=self.format,
            lines=self.lines,
            posts=self.posts,
            comments=self.comments,
            skipped=self.skipped,
            bad_lines=self.bad_lines,
            first_bad_lines=self.first_bad_lines,
            error=self.error,
        )

    def bad(self, line_no: int, reason: str) -> None:
        self.bad_lines += 1
        if len(self.first_bad_lines) < MAX_BAD_LINES_KEPT:
            self.first_bad_lines.append(BadLine(line_no=line_no, reason=reason))

    def take(self, record: Record | None) -> None:
        if record is None:
            self.skipped += 1
            return
        if type(record) is PostRow:
            self.posts += 1
        else:
            self.comments += 1
        if self.writer.add(record):
            self.flush()

    def flush(self) -> None:
        self.writer.flush()
        if self.progress is not None:
            self.progress(
                ImportProgress(
                    file=self.path,
                    bytes_read=self.stream.bytes_read,
                    total_bytes=self.total_bytes,
                    records=self.lines,
                )
            )

    def ndjson(self, lines: Iterator[bytes]) -> None:
        """The hot loop: one JSON object per line (parsed by worker processes if the file is
        big enough, see ``crowdsift.sources.archive.parallel``)."""
        self.format = "ndjson"
        pool = self._pool()
        if pool is not None:
            with contextlib.closing(pool.prepare(lines, self.path)) as chunks:
                self.take_prepared(chunks)
            return
        add = self.writer.add
        for line_no, line in enumerate(lines, 1):
            if not line or line.isspace():
                continue
            self.lines += 1
            try:
                record = parse_line_or_document(line)
            except BadRecordError as exc:
                self.bad(line_no, exc.reason)
                continue
            # take() inlined: this loop runs once per record of a multi-GB dump
            if record is None:
                self.skipped += 1
                continue
            if type(record) is PostRow:
                self.posts += 1
            elif type(record) is CommentRow:
                self.comments += 1
            else:  # a saved API answer on one line: rare, so it may cost a call
                self.document(line_no, record.doc)  # type: ignore[union-attr]
                continue
            if add(record, line):
                self.flush()

    def document(self, line_no: int, doc: object, retrieved: int = 0) -> None:
        """The records of an API answer saved as one line; a bad one is reported with the
        line's number, and a line that is no such answer is bad as a whole."""
        problem = document_problem(doc)
        if problem is not None:
            self.bad(line_no, problem)
            return
        for item in api_records(doc, retrieved):
            if isinstance(item, BadRecordError):
                self.bad(line_no, item.reason)
            else:
                self.take(item)

    def _pool(self) -> ParseWorkers | None:
        """The worker processes, if there are any and this file is big enough for them."""
        parallel = self.parallel
        if parallel is None:
            return None
        compressed = Path(self.path).name.lower().endswith(COMPRESSED_SUFFIXES)
        text_bytes = self.total_bytes * (_COMPRESSION_GUESS if compressed else 1)
        return parallel.pool if text_bytes >= parallel.min_bytes else None

    def take_prepared(self, chunks: Iterator[PreparedChunk]) -> None:
        """Chunks' rows (bound by workers) into the writer, and their counts into ours."""
        for chunk in chunks:
            self._take_chunk(chunk)

    def _take_chunk(self, chunk: PreparedChunk) -> None:
        add = self.writer.add_bound
        before = self.lines
        for values, post, size, seen in zip(
            chunk.rows, chunk.kinds, chunk.sizes, chunk.seen, strict=True
        ):
            if add(values, post, size):
                self.lines = before + seen  # the progress count as the in-process loop has it
                self.flush()
        self.lines = before + chunk.lines
        posts = chunk.kinds.count(1)
        self.posts += posts
        self.comments += len(chunk.rows) - posts
        self.skipped += chunk.skipped
        self.bad_lines += chunk.bad_count
        room = MAX_BAD_LINES_KEPT - len(self.first_bad_lines)
        for line_no, reason in chunk.bad[: max(0, room)]:
            self.first_bad_lines.append(BadLine(line_no=line_no, reason=reason))

    def api_json(self, doc: object, retrieved: int) -> None:
        """Every thing of a saved API answer; ``n`` (document order) stands in for a line."""
        self.format = "api-json"
        check_api_document(doc, self.path)
        for n, item in enumerate(api_records(doc, retrieved), 1):
            self.lines += 1
            if isinstance(item, BadRecordError):
                self.bad(n, item.reason)
            else:
                self.take(item)

    def csv(self, lines: Iterator[bytes], options: CsvOptions, retrieved: int) -> None:
        """The rows of a CSV file with a header, each a post or, by the file's columns, a
        comment (``crowdsift.sources.archive.csv_rows``); a bad row is reported with the
        number of the line it starts on."""
        csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
        reader = csv.reader(_text_lines(lines))
        try:
            header = next(reader, None)
            if header is None:
                return
            layout = plan_layout(header, options.columns, self.path)
            self.format = f"csv-{layout.label}"
            rows = CsvRecords(layout, options.post_subreddit)
            start = reader.line_num + 1
            for values in reader:
                line_no, start = start, reader.line_num + 1
                if not any(value.strip() for value in values):
                    continue
                self.lines += 1
                try:
                    data = rows.record(values)
                    record = record_from_dict(data, kind=layout.kind, retrieved_default=retrieved)
                except BadRecordError as exc:
                    self.bad(line_no, exc.reason)
                    continue
                self.take(record)
        except csv.Error as exc:
            raise DumpFormatError(
                f"{self.path} is not readable as CSV from line {reader.line_num} ({exc}); "
                "the rows before it were imported"
            ) from None


def _text_lines(lines: Iterator[bytes]) -> Iterator[str]:
    """A file's lines as the csv module reads them: text, newline kept (quoted fields span
    lines), a UTF-8 byte-order mark dropped, bytes that are not UTF-8 as U+FFFD."""
    first = True
    for line in lines:
        text = line.decode("utf-8", "replace")
        if first:
            text, first = text.removeprefix("\ufeff"), False
        yield text + "\n"


def _import_file(
    writer: BatchWriter,
    path: Path,
    progress: ProgressFn | None,
    parallel: _Parallel | None,
    csv_options: CsvOptions,
) -> FileReport:
    try:
        stat = path.stat()
        if not path.is_file():
            raise IsADirectoryError(f"{path} is not a file")
        with LineStream(path) as stream:
            job = _FileImport(path, writer, stream, progress, stat.st_size, parallel)
            try:
                if content_suffix(path) == ".csv":
                    job.csv(iter(stream), csv_options, int(stat.st_mtime))
                else:
                    _dispatch(job, stream, path, int(stat.st_mtime))
            except READ_ERRORS as exc:
                job.error = _describe(exc, path, job.lines)
            job.flush()
            writer.wait()  # the file's last batch is committed before it is reported
            report = job.to_report()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        # Not logged as a warning: the report carries it, and the CLI prints it once.
        return FileReport(path=str(path), error=f"cannot read {path}: {reason}")
    if report.error is None and not report.posts and not report.comments:
        report.error = nothing_imported(report)
    return report


def _dispatch(job: _FileImport, stream: LineStream, path: Path, mtime: int) -> None:
    """NDJSON unless the name says .json and the content is one JSON document."""
    lines = iter(stream)
    if content_suffix(path) != ".json":
        job.ndjson(lines)
        return
    head: list[bytes] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first_ok = _parses(head[-1]) if head else False
    if first_ok:
        for line in lines:
            head.append(line)
            if line.strip():
                job.ndjson(_chain(head, lines))
                return
        job.api_json(json.loads(b"\n".join(head)), mtime)
        return
    text = b"\n".join(_chain(head, lines))
    try:
        doc = json.loads(text)
    except RecursionError:
        raise DumpFormatError(f"{path} is not valid JSON (nested too deeply)") from None
    except ValueError as exc:
        raise DumpFormatError(f"{path} is not valid JSON ({exc})") from None
    job.api_json(doc, mtime)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest


def _describe(exc: BaseException, path: Path, lines: int) -> str:
    """A file-level read error as a sentence that says where and what to do."""
    if isinstance(exc, DumpFormatError):
        message = str(exc)
    else:
        message = (
            f"{path} is corrupt or truncated after line {lines} "
            f"({type(exc).__name__}: {exc}); download it again and re-import"
        )
    # Not a warning: the report carries it and the CLI prints it, once.
    log.debug("archive_import_file_error", path=str(path), error=message)
    return message
