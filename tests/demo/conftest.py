"""Fixtures for the demo-archive tests: the committed dumps, parsed once per session."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import zstandard

from crowdsift.demo import demo_dump_files


@dataclass(frozen=True)
class Dump:
    """One dump file: raw NDJSON lines and the records they parse to, in file order."""

    lines: list[str]
    records: list[dict[str, Any]]


def _load(index: int) -> Dump:
    raw = zstandard.ZstdDecompressor().decompress(demo_dump_files()[index].read_bytes())
    lines = raw.decode("utf-8").splitlines()
    return Dump(lines, [json.loads(line) for line in lines])


@pytest.fixture(scope="session")
def submissions() -> Dump:
    return _load(0)


@pytest.fixture(scope="session")
def comments() -> Dump:
    return _load(1)
