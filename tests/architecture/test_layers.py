"""Folders are layers, and no module imports a higher one (DESIGN.md, "Layout").

The layers, lowest first::

    core < engines < http < sources < pipeline < feed < service < cli

A module's layer is the first folder under ``src/crowdsift`` (``crowdsift.pipeline.gate`` is
``pipeline``). Outside the folders: ``crowdsift`` itself (``__version__``) and the
``crowdsift.demo`` data package count as core, ``crowdsift.__main__`` as cli, and
``crowdsift.testing`` (fakes for users' tests) sits above every layer, so no product module may
import it.

Imports are read with ``ast`` (nothing is imported): at module level and inside functions
(lazy imports run too, only later). Imports under ``if TYPE_CHECKING:`` are skipped (its
``else:`` counts). Relative imports are resolved; ``from crowdsift.a import b`` is an import of
``crowdsift.a.b`` when that module exists, else of ``crowdsift.a``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import crowdsift

LAYERS = ("core", "engines", "http", "sources", "pipeline", "feed", "service", "cli")
OUTSIDE = {"crowdsift": "core", "crowdsift.demo": "core", "crowdsift.__main__": "cli"}
ABOVE_ALL = "testing"  # crowdsift.testing: may import anything, nothing imports it
SRC = Path(crowdsift.__file__).resolve().parent


def rank(layer: str) -> int:
    return len(LAYERS) if layer == ABOVE_ALL else LAYERS.index(layer)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = ["crowdsift", *path.relative_to(SRC).with_suffix("").parts]
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    if len(parts) > 1 and parts[1] == ABOVE_ALL:
        return ABOVE_ALL
    for prefix, layer in OUTSIDE.items():
        if module == prefix or (prefix != "crowdsift" and module.startswith(prefix + ".")):
            return layer
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run, skipping the body of ``if TYPE_CHECKING:``."""
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        for child in node.orelse:
            yield from _runtime_imports(child)
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _runtime_imports(child)


def _longest(name: str, known: dict[str, Path]) -> str | None:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in known:
            return ".".join(parts[:i])
    return None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int


def imports_of(module: str, path: Path, known: dict[str, Path]) -> Iterator[Edge]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in _runtime_imports(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *filter(None, [base])])
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        for name in names:
            if name.split(".")[0] != "crowdsift":
                continue
            target = _longest(name, known)
            if target is not None and target != module:
                yield Edge(module, target, node.lineno)


def test_every_module_is_in_a_layer() -> None:
    homeless = [m for m in modules() if layer_of(m) is None]
    if homeless:
        pytest.fail(
            f"modules outside the layer folders {', '.join(LAYERS)} (move each into one): "
            + ", ".join(homeless),
            pytrace=False,
        )


def test_no_module_imports_a_higher_layer() -> None:
    known = modules()
    upward: dict[str, None] = {}  # ordered, one line per import statement
    for module, path in known.items():
        here = layer_of(module)
        if here is None:
            continue
        for edge in imports_of(module, path, known):
            there = layer_of(edge.target)
            if there is not None and rank(there) > rank(here):
                where = f"{path.relative_to(SRC.parent)}:{edge.line}"
                upward[f"{module} ({here}) imports {edge.target} ({there})  [{where}]"] = None
    if upward:
        pytest.fail(
            "imports that go up the layers " + " < ".join(LAYERS) + ":\n  " + "\n  ".join(upward),
            pytrace=False,
        )
