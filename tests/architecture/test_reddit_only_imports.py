"""The one synthesis stands on its own: no Reddit-branch or synthesis module imports the experts
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


REDDIT_ONLY = ("pipeline/fetch", "pipeline/gate", "pipeline/reddit", "pipeline/synthesis")
"""The folders a Reddit-only run executes; none of them may pull in the Experts Panel."""


def test_no_module_of_a_reddit_only_run_imports_the_experts_panel() -> None:
    paths = [path for folder in REDDIT_ONLY for path in sorted((PACKAGE / folder).glob("*.py"))]
    assert len(paths) > 20  # the folders exist and hold the pipeline's modules
    panel = "crowdsift.pipeline.experts"
    offenders = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in paths
        for name in _imports(path)
        if name == panel or name.startswith(f"{panel}.")
    }
    assert offenders == set()


def test_one_citation_syntax_and_one_clock() -> None:
    sources = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    clocks = [p for p, text in sources.items() if "def utc_now" in text or "def _utc_now" in text]
    assert [p.relative_to(PACKAGE).as_posix() for p in clocks] == ["core/text.py"]
    patterns = [
        p.relative_to(PACKAGE).as_posix()
        for p, text in sources.items()
        if r"re.compile(r\"\[post:" in text or r"re.compile(r'\[post:" in text
    ]
    assert patterns == []
