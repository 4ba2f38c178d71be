"""The installed package ships only what users run and what their own tests need.

Protocol servers, chaos fault injection and prompt-injection fixtures are test support: they
live in ``tests/support`` and nothing under ``src/crowdsift`` defines or imports them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support import injection
from tests.support.paths import REPO

SRC = REPO / "src" / "crowdsift"
SUPPORT = REPO / "tests" / "support"

PUBLIC_TESTING = {"__init__", "clock", "expert_store", "factories", "memory_source"}
"""``crowdsift.testing``: the fakes a user's own tests need (README, "Testing your own code")."""

FIXTURE_MODULES = {
    "amazon_server",
    "arctic_shift_query",
    "arctic_shift_server",
    "chaos",
    "hijacked_model",
    "injection",
    "local_http",
    "openai_server",
    "reddit_listings",
    "reddit_server",
    "youtube_server",
}
"""Names of test-support modules that must not reappear anywhere in the package."""

HTTP_SERVER_BASES = {"BaseHTTPRequestHandler", "HTTPServer", "ThreadingHTTPServer"}


def modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported(tree: ast.Module) -> Iterator[str]:
    """Every module an ``import`` names, lazy imports inside functions included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_crowdsift_testing_holds_only_the_public_fakes() -> None:
    shipped = {path.stem for path in (SRC / "testing").glob("*.py")}
    assert shipped == PUBLIC_TESTING
    assert not [p for p in (SRC / "testing").iterdir() if p.is_dir() and p.name != "__pycache__"]


def test_no_test_support_module_ships_in_the_package() -> None:
    assert {path.stem for path in SUPPORT.glob("*.py")} >= FIXTURE_MODULES
    shipped = [path for path in SRC.rglob("*.py") if path.stem in FIXTURE_MODULES]
    assert shipped == []


def test_nothing_in_the_package_imports_tests() -> None:
    found = [
        f"{path.relative_to(SRC)}: {name}"
        for path, tree in modules()
        for name in imported(tree)
        if name == "tests" or name.startswith("tests.")
    ]
    assert found == []


def test_no_module_in_the_package_is_an_http_protocol_server() -> None:
    """The service runs under uvicorn; a stdlib ``http.server`` is only ever a test fake."""
    found = []
    for path, tree in modules():
        if any(name == "http.server" or name.startswith("socketserver") for name in imported(tree)):
            found.append(f"{path.relative_to(SRC)}: imports http.server")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {
                    base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                    for base in node.bases
                }
                if bases & HTTP_SERVER_BASES:
                    found.append(f"{path.relative_to(SRC)}: class {node.name}")
    assert found == []


def test_no_prompt_injection_payload_ships_in_the_package() -> None:
    markers = (injection.EVIL_HOST, injection.FAKE_POST, "developer mode")
    found = [
        f"{path.relative_to(SRC)}: {marker}"
        for path in SRC.rglob("*.py")
        for marker in markers
        if marker.lower() in path.read_text(encoding="utf-8").lower()
    ]
    assert found == []
