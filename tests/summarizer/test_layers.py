"""The one synthesis stands on its own: no sidecar or summarizer module imports the experts
panel (lazy imports included), so a Reddit-only run never loads it."""

from __future__ import annotations

import ast
from pathlib import Path

import crowdsift

PACKAGE = Path(crowdsift.__file__).parent


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):  # every import, at module level or inside a function
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_no_sidecar_or_summarizer_module_imports_the_experts_panel() -> None:
    offenders = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for folder in ("sidecar", "summarizer")
        for path in sorted((PACKAGE / folder).glob("*.py"))
        for name in _imports(path)
        if name == "crowdsift.experts" or name.startswith("crowdsift.experts.")
    }
    assert offenders == set()


def test_one_citation_syntax_and_one_clock() -> None:
    sources = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    clocks = [p for p, text in sources.items() if "def utc_now" in text or "def _utc_now" in text]
    assert [p.relative_to(PACKAGE).as_posix() for p in clocks] == ["text.py"]
    patterns = [
        p.relative_to(PACKAGE).as_posix()
        for p, text in sources.items()
        if r"re.compile(r\"\[post:" in text or r"re.compile(r'\[post:" in text
    ]
    assert patterns == []
