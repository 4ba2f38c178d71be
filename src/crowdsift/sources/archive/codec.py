"""Records stored compressed: zstd with a dictionary trained on the archive's own dumps.

Why: a dump record is ~1.5 KB of JSON of which the pipeline reads a handful of fields, and a
monthly dump compresses ~9x because its seventy-odd keys and their usual values repeat on
every line. Compressed one record at a time, plain zstd finds nothing to repeat (measured:
~700 bytes a record); with a dictionary trained on a few thousand of the dump's own records
it keeps ~190 bytes, close to the streaming dump (~180), while any record still decompresses
alone in microseconds. The searchable text is stored once: inside this copy, with the FTS5
index contentless (see ``db``).

A stored record (``doc``) is one zstd frame of the record's JSON (usernames already
scrubbed, lone surrogates replaced). The frame names its dictionary (``dict_id``); the
dictionaries live in the archive's ``zstd_dicts`` table, so an archive holds everything
needed to read it and a later import may add a better dictionary without rewriting rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import orjson
import zstandard

from crowdsift.core.errors import ArchiveError

LEVEL = 3
"""zstd level: 3 keeps ~190 bytes a record at ~8 µs; 6 was no smaller here and 3x slower."""
MAX_DICT_BYTES = 110 << 10
MIN_SAMPLES = 50
"""Below this many sample records a dictionary is not worth training (nor reliably trainable)."""
SAMPLE_RECORDS = 4000
"""Records (spread over the files being imported) a dictionary is trained on: ~1 s."""


class DocCodec:
    """Encodes records with the newest dictionary; decodes a frame with whichever it names.

    Not thread-safe (zstandard's contexts are not): one per connection or worker.
    """

    def __init__(self, dictionaries: Sequence[bytes] = ()) -> None:
        self._decoders: dict[int, zstandard.ZstdDecompressor] = {0: zstandard.ZstdDecompressor()}
        self._encoder = zstandard.ZstdCompressor(level=LEVEL, write_checksum=False)
        self.dict_id = 0
        for data in dictionaries:
            self.add(data)

    def add(self, data: bytes) -> int:
        """Make ``data`` (a trained dictionary) known; new records are encoded with it."""
        zdict = zstandard.ZstdCompressionDict(data)
        zdict.precompute_compress(level=LEVEL)  # else every record pays for loading it
        dict_id = zdict.dict_id()
        self._decoders[dict_id] = zstandard.ZstdDecompressor(dict_data=zdict)
        self._encoder = zstandard.ZstdCompressor(
            level=LEVEL, dict_data=zdict, write_checksum=False, write_dict_id=True
        )
        self.dict_id = dict_id
        return dict_id

    def encode(self, data: dict[str, Any]) -> bytes:
        return self._encoder.compress(to_json(data))

    def decode(self, doc: bytes) -> dict[str, Any]:
        """The record a ``doc`` holds; ArchiveError when it cannot be read back."""
        try:
            decoder = self._decoders.get(zstandard.get_frame_parameters(doc).dict_id)
            if decoder is None:
                raise ArchiveError(
                    "a stored record names a compression dictionary the archive lacks; "
                    "re-import its dump files into a new archive"
                )
            text = decoder.decompress(doc)
            # orjson would read an integer past 64 bits as a float: what the stdlib wrote
            # (``to_json``), the stdlib reads.
            value = json.loads(text) if text[:1] == _STDLIB_MARK else orjson.loads(text)
        except (zstandard.ZstdError, ValueError) as exc:
            raise ArchiveError(
                f"a stored record is damaged ({exc}); re-import its dump files into a new archive"
            ) from exc
        if type(value) is not dict:
            raise ArchiveError("a stored record is not a JSON object; the archive is damaged")
        return value


def to_json(data: dict[str, Any]) -> bytes:
    """A record as compact UTF-8 JSON: orjson, or the stdlib for what orjson cannot write
    (an integer past 64 bits, which the stdlib parsed; NaN orjson writes as null). The
    stdlib's text starts with a space (still JSON), so ``decode`` knows to read it back
    with the stdlib too."""
    try:
        return orjson.dumps(data)
    except TypeError:
        return _STDLIB_MARK + json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


_STDLIB_MARK = b" "


def text_field(data: dict[str, Any], key: str) -> str:
    """The text a record gives the full-text index for ``key``: the string, else "".

    The one definition used both when indexing and when un-indexing (a contentless FTS5
    table must be told exactly the text it was given), so the two can never disagree."""
    value = data.get(key)
    return value if type(value) is str else ""


def train(samples: Sequence[bytes]) -> bytes | None:
    """A dictionary trained on ``samples`` (records' JSON), or None when there are too few.

    Sized to about a tenth of the sample text, at most ``MAX_DICT_BYTES``: zstd's trainer
    wants many times more sample than dictionary.
    """
    total = sum(len(sample) for sample in samples)
    if len(samples) < MIN_SAMPLES:
        return None
    size = min(MAX_DICT_BYTES, max(4096, total // 10))
    try:
        return zstandard.train_dictionary(size, list(samples), level=LEVEL).as_bytes()
    except zstandard.ZstdError:
        return None


def load(conn: sqlite3.Connection) -> list[bytes]:
    """The archive's dictionaries, oldest first (the last one encodes new records)."""
    rows = conn.execute("SELECT data FROM zstd_dicts ORDER BY seq").fetchall()
    return [bytes(data) for (data,) in rows]


def store(conn: sqlite3.Connection, data: bytes) -> None:
    """Record a new dictionary (in the caller's transaction, or its own)."""
    dict_id = zstandard.ZstdCompressionDict(data).dict_id()
    conn.execute(
        "INSERT INTO zstd_dicts (dict_id, data) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (dict_id, data),
    )
