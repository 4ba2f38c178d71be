"""Docstrings name only what exists: every dotted module path (``crowdsift.x.y``, or ``x.y`` from
one of the package's top folders, as ``pipeline.reddit.branch``) and every ``folder/module.py``
path a module, class or function docstring names is a real module (or a name defined in one),
or a real file. A rename that leaves a docstring pointing at the old name fails here."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.support.paths import REPO, SRC

TOP = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
DOTTED = re.compile(
    rf"(?<![\w./-])(?:crowdsift\.({_NAME}(?:\.(?!py\b){_NAME})+)"
    rf"|((?:{'|'.join(TOP)})(?:\.(?!py\b){_NAME})+))(?![\w/]|\.py)"
)
"""``crowdsift.`` and at least two names (``crowdsift.stage`` is a span attribute), or a top
folder and at least one more (``pipeline.reddit``); never a file (``cli.py``)."""
FILE = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)+[A-Za-z_]\w*\.py)\b")


def docstrings() -> Iterator[tuple[Path, int, str]]:
    """(file, line, docstring) of every module, class and function under src/crowdsift."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node, clean=False)
                if text:
                    yield path, getattr(node, "lineno", 1), text


@cache
def defined_names(module: Path) -> frozenset[str]:
    """The top-level names a module defines or imports (what ``module.name`` may refer to)."""
    tree = ast.parse(module.read_text("utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def _module_file(parts: list[str]) -> Path | None:
    base = SRC.joinpath(*parts)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def named_modules(text: str) -> list[str]:
    return [crowdsift or top for crowdsift, top in DOTTED.findall(text)]


def resolves(dotted: str) -> bool:
    """The longest prefix that is a module; what follows it, a name that module defines
    (attributes of that name, e.g. a class's method, are not followed)."""
    parts = dotted.removeprefix("crowdsift.").split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is not None:
            rest = parts[cut:]
            if not rest:
                return True
            if (SRC.joinpath(*parts[:cut]) / rest[0]).is_dir():
                return False  # a folder that is no package
            return rest[0] in defined_names(module)
    return False


def file_exists(path: str, docstring_file: Path) -> bool:
    roots = [REPO, REPO / "src", SRC, docstring_file.parent, docstring_file.parent.parent]
    return any((root / path).is_file() for root in roots)


def test_docstrings_name_only_modules_that_exist() -> None:
    wrong = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path, line, text in docstrings()
        for name in named_modules(text)
        if not resolves(name)
    ]
    assert not wrong, "docstrings naming modules that do not exist:\n" + "\n".join(wrong)


def test_docstrings_name_only_files_that_exist() -> None:
    wrong = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path, line, text in docstrings()
        for name in FILE.findall(text)
        if not file_exists(name, path)
    ]
    assert not wrong, "docstrings naming files that do not exist:\n" + "\n".join(wrong)


def test_the_check_catches_a_renamed_module() -> None:
    assert resolves("pipeline.reddit.branch.run_reddit")
    assert resolves("crowdsift.core.text")
    assert not resolves("pipeline.reddit.planner")
    assert not resolves("crowdsift.sidecar.pipeline")
    assert not resolves("core.text.no_such_function")
    assert named_modules("``crowdsift.sources.run``, sources.run.fetch_sources, cli.py") == [
        "sources.run",
        "sources.run.fetch_sources",
    ]
    assert FILE.findall("in engines/onnx_embedder.py, not reddit/transport/auth.py") == [
        "engines/onnx_embedder.py",
        "reddit/transport/auth.py",
    ]


SIBLING = re.compile(rf"``({_NAME})\.({_NAME})``")


def test_docstrings_name_only_what_their_sibling_modules_define() -> None:
    """``stance.compound`` in a module of ``pipeline/synthesis`` is ``stance.py``'s ``compound``."""
    wrong = []
    for path, line, text in docstrings():
        for module, name in SIBLING.findall(text):
            sibling = path.parent / f"{module}.py"
            if name != "py" and sibling.is_file() and name not in defined_names(sibling):
                wrong.append(f"{path.relative_to(REPO)}:{line}: {module}.{name}")
    assert not wrong, "docstrings naming what a sibling module does not define:\n" + "\n".join(
        wrong
    )
