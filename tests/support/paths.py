"""Where the repository's folders are, for tests that read its files (README, examples, fuzz
targets, the package source): one place, so a test file can move without counting parents."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "crowdsift"
TESTS = REPO / "tests"
