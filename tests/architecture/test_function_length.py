"""No function in ``src/crowdsift`` is longer than ``MAX_LINES`` lines, counted from its ``def``
to its last line (docstring included): a longer one is several steps that want names."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.support.paths import REPO, SRC

MAX_LINES = 60


def function_lengths() -> Iterator[tuple[str, int]]:
    """``path:name`` and length of every function and method, nested ones included."""
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                yield f"{path.relative_to(REPO)}:{node.name}", node.end_lineno - node.lineno + 1


def test_no_function_in_src_is_longer_than_60_lines() -> None:
    lengths = list(function_lengths())
    assert len(lengths) > 100, "the walk found almost no functions: is SRC right?"
    too_long = [f"{where}: {lines} lines" for where, lines in lengths if lines > MAX_LINES]
    assert not too_long, f"functions over {MAX_LINES} lines; split them:\n" + "\n".join(too_long)
