"""The archive's compression dictionary, trained once on the first files imported into it.

Records are sampled from the start of each file as they will be stored (scrubbed of names),
so the dictionary learns what the archive will hold; ``codec`` trains and applies it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from crowdsift.core.log import get_logger
from crowdsift.core.privacy import AuthorPolicy
from crowdsift.sources.archive import codec, db
from crowdsift.sources.archive.api_json import api_records
from crowdsift.sources.archive.parse import ApiDocument, BadRecordError, parse_line_or_document
from crowdsift.sources.archive.scrub import scrub_data
from crowdsift.sources.archive.streams import READ_ERRORS, LineStream

log = get_logger(__name__)


def ensure_dictionary(conn: sqlite3.Connection, paths: list[Path], policy: AuthorPolicy) -> None:
    """Train the archive's compression dictionary on the files about to be imported, unless
    it has one. Records are sampled from the start of each NDJSON file (scrubbed as they will
    be stored); with too few records the archive goes without one until a bigger import."""
    if codec.load(conn):
        return
    started = time.perf_counter()
    quota = max(1, codec.SAMPLE_RECORDS // max(1, len(paths)))
    samples: list[bytes] = []
    for path in paths:
        samples += _samples(path, quota, policy)
    trained = codec.train(samples)
    if trained is None:
        log.info("archive_dictionary_skipped", samples=len(samples))
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        db.add_dictionary(conn, trained)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    log.info(
        "archive_dictionary_trained",
        samples=len(samples),
        bytes=len(trained),
        seconds=round(time.perf_counter() - started, 3),
    )


def _samples(path: Path, quota: int, policy: AuthorPolicy) -> list[bytes]:
    """Up to ``quota`` records from the start of ``path`` as they will be stored; none from
    a file that is not NDJSON or cannot be read (the import itself reports why)."""
    samples: list[bytes] = []
    try:
        with LineStream(path) as stream:
            for line in stream:
                if len(samples) >= quota:
                    break
                try:
                    parsed = parse_line_or_document(line) if line.strip() else None
                except BadRecordError:
                    continue
                if isinstance(parsed, ApiDocument):
                    records = [r for r in api_records(parsed.doc) if isinstance(r, tuple)]
                    line = b""
                else:
                    records = [] if parsed is None else [parsed]
                for record in records:
                    scrub_data(record.data, policy, record.author, policy.hash(record.author), line)
                    samples.append(codec.to_json(record.data))
    except READ_ERRORS:
        return samples
    return samples
