"""No import cycles inside ``crowdsift``, lazy imports included (DESIGN.md, "Layout").

How the graph is built (statically, with ``ast``; nothing under ``src/crowdsift`` is imported):

* One node per module file; a package is its ``__init__.py`` (``crowdsift.service.jobs``).
* One edge per import of a ``crowdsift`` module *anywhere* in the file: at module level and
  inside functions and methods (a lazy import still closes a cycle, only later, at run time).
  Imports under ``if TYPE_CHECKING:`` are skipped, as they never run (its ``else:`` counts).
* Relative imports are resolved against the importing module's package.
* ``from crowdsift.pkg import name`` is an edge to ``crowdsift.pkg.name`` when that module
  exists, else to ``crowdsift.pkg``. ``import crowdsift.a.b`` is an edge to ``crowdsift.a.b``
  (or to the longest prefix of it that is a module).
* Edges to a package ``__init__`` that is empty or only a docstring are dropped: such a module
  imports nothing, so it can never be part of a cycle and would only clutter the graph.
* Not modelled, to keep the checker simple: importing ``crowdsift.a.b`` also executes
  ``crowdsift/a/__init__.py`` first, but no implicit ``crowdsift.a.b -> crowdsift.a`` edge is
  added (the ``__init__``'s own imports are still edges of its node, so a cycle *through* an
  ``__init__`` that imports its siblings is found when something imports the package itself).
  Dynamic imports (``importlib.import_module(...)``, as the PEP 562 ``__getattr__`` of
  ``crowdsift.feed`` and ``crowdsift.sources.archive`` use) are not seen either.

Cycles are the strongly connected components of that graph (Tarjan's algorithm); each one is
reported as chains ``a -> b -> c -> a`` covering every edge of the component, with the file
and line of every import involved, so the failure says what to move.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import crowdsift

ROOT_PACKAGE = "crowdsift"
SOURCE_DIR = Path(crowdsift.__file__).resolve().parent

# --- the graph (a test helper, not product code) -------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


@dataclass(frozen=True)
class ImportSite:
    """Where an edge comes from: the importing file's line, and whether it runs lazily."""

    path: Path
    line: int
    lazy: bool

    def describe(self, root: Path) -> str:
        where = f"{self.path.relative_to(root.parent).as_posix()}:{self.line}"
        return f"{where} (lazy)" if self.lazy else where


Graph = dict[str, dict[str, ImportSite]]  # importer -> imported -> first import site


def find_modules(package_dir: Path, package: str = ROOT_PACKAGE) -> dict[str, Module]:
    """Every ``.py`` file under ``package_dir``, by dotted module name."""
    modules: dict[str, Module] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join([package, *parts])
        modules[name] = Module(name, path, is_package)
    return modules


def is_trivial(tree: ast.Module) -> bool:
    """Empty, or only a docstring (and ``from __future__`` imports): imports nothing."""
    for i, node in enumerate(tree.body):
        docstring = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            return False
    return True


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


class _ImportCollector(ast.NodeVisitor):
    """Every ``Import``/``ImportFrom`` that can run, with its line and laziness."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
        self._function_depth = 0

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:  # the body only runs for type checkers
                self.visit(child)
            return
        self.generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._visit_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._visit_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_function(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append((node, self._function_depth > 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append((node, self._function_depth > 0))


def _longest_module(name: str, modules: Mapping[str, Module]) -> str | None:
    """``name`` if it is a module, else its longest dotted prefix that is one."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _from_base(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module a ``from … import`` names (relative levels resolved)."""
    if node.level == 0:
        return node.module or ""
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imported_modules(
    module: Module, tree: ast.Module, modules: Mapping[str, Module], package: str = ROOT_PACKAGE
) -> Iterator[tuple[str, int, bool]]:
    """``(imported module, line, lazy)`` for each import of ``package`` in the module."""
    collector = _ImportCollector()
    collector.visit(tree)
    prefix = package + "."
    for node, lazy in collector.found:
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = _from_base(module, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.append(submodule if submodule in modules else base)
        for target in targets:
            if target != package and not target.startswith(prefix):
                continue
            resolved = _longest_module(target, modules)
            if resolved is not None:
                yield resolved, node.lineno, lazy


def build_graph(package_dir: Path, package: str = ROOT_PACKAGE) -> Graph:
    """The import graph of every module under ``package_dir`` (see the module docstring)."""
    modules = find_modules(package_dir, package)
    trees = {name: ast.parse(m.path.read_text("utf-8"), str(m.path)) for name, m in modules.items()}
    trivial = {name for name, m in modules.items() if m.is_package and is_trivial(trees[name])}
    graph: Graph = {name: {} for name in modules}
    for name, module in modules.items():
        for target, line, lazy in imported_modules(module, trees[name], modules, package):
            if target == name or target in trivial:
                continue
            site = ImportSite(module.path, line, lazy)
            known = graph[name].get(target)
            if known is None or (known.lazy and not lazy):  # prefer showing the eager import
                graph[name][target] = site
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components with more than one node, each sorted."""
    tarjan = _Tarjan(graph)
    for root in sorted(graph):
        if root not in tarjan.index:
            tarjan.walk(root)
    return sorted(tarjan.components)


class _Tarjan:
    """The state of one run of Tarjan's algorithm over ``graph``."""

    def __init__(self, graph: Mapping[str, Iterable[str]]) -> None:
        self.graph = graph
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.on_stack: set[str] = set()
        self.stack: list[str] = []
        self.components: list[list[str]] = []

    def visit(self, node: str) -> tuple[str, Iterator[str]]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return node, iter(sorted(self.graph.get(node, ())))

    def walk(self, root: str) -> None:
        work = [self.visit(root)]
        while work:
            node, successors = work[-1]
            unseen = self.next_unseen(node, successors)
            if unseen is not None:
                work.append(self.visit(unseen))
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                self.low[parent] = min(self.low[parent], self.low[node])
            if self.low[node] == self.index[node]:
                self.close(node)

    def next_unseen(self, node: str, successors: Iterator[str]) -> str | None:
        """The next successor not visited yet; those on the stack lower ``node``'s link."""
        for succ in successors:
            if succ not in self.index:
                return succ
            if succ in self.on_stack:
                self.low[node] = min(self.low[node], self.index[succ])
        return None

    def close(self, node: str) -> None:
        """Pop ``node``'s component; keep it when it is a cycle (more than one module)."""
        component: list[str] = []
        while True:
            member = self.stack.pop()
            self.on_stack.discard(member)
            component.append(member)
            if member == node:
                break
        if len(component) > 1:
            self.components.append(sorted(component))


def _shortest_path(graph: Mapping[str, Iterable[str]], start: str, goal: str) -> list[str]:
    """Breadth-first: the shortest path ``start … goal`` within ``graph``."""
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for succ in sorted(graph.get(node, ())):
            if succ not in came_from:
                came_from[succ] = node
                queue.append(succ)
    path: list[str] = []
    step: str | None = goal
    while step is not None:
        path.append(step)
        step = came_from[step]
    return path[::-1]


def cycles_covering(graph: Mapping[str, Iterable[str]], component: list[str]) -> list[list[str]]:
    """Simple cycles (``[a, b, c, a]``) that together use every edge of the component.

    For each edge ``u -> v`` no cycle listed so far uses: ``u -> v`` plus the shortest way back
    from ``v`` to ``u``. Each cycle is rotated to start at its smallest module.
    """
    members = set(component)
    inner = {n: sorted(s for s in graph[n] if s in members) for n in component}
    covered: set[tuple[str, str]] = set()
    cycles: list[list[str]] = []
    for u in component:
        for v in inner[u]:
            if (u, v) in covered:
                continue
            loop = [u, *_shortest_path(inner, v, u)]  # u, v, …, u
            ring = loop[:-1]
            start = ring.index(min(ring))
            ring = ring[start:] + ring[:start]
            cycles.append([*ring, ring[0]])
            covered.update(zip(ring, [*ring[1:], ring[0]], strict=True))
    return cycles


def describe_cycles(graph: Graph, root: Path) -> str:
    """Every import cycle as readable chains, then the import lines that close them."""
    lines: list[str] = []
    for number, component in enumerate(strongly_connected(graph), 1):
        lines.append(f"cycle group {number} ({len(component)} modules): {', '.join(component)}")
        for cycle in cycles_covering(graph, component):
            lines.append("  " + " -> ".join(cycle))
        for u in component:
            for v in sorted(graph[u]):
                if v in component:
                    lines.append(f"    {u} -> {v}  at {graph[u][v].describe(root)}")
    return "\n".join(lines)


# --- the checks ----------------------------------------------------------------------------


def test_crowdsift_has_no_import_cycles() -> None:
    graph = build_graph(SOURCE_DIR)
    found = strongly_connected(graph)
    assert not found, f"{len(found)} import cycle group(s):\n{describe_cycles(graph, SOURCE_DIR)}"


def _write(root: Path, files: Mapping[str, str]) -> Path:
    package_dir = root / "pkg"
    for relative, text in files.items():
        path = package_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return package_dir


def _edges(graph: Graph) -> set[tuple[str, str]]:
    return {(u, v) for u, targets in graph.items() for v in targets}


def test_the_checker_resolves_every_import_form(tmp_path: Path) -> None:
    package_dir = _write(
        tmp_path,
        {
            "__init__.py": '"""Only a docstring."""\n',
            "a.py": "from pkg import b\nimport pkg.sub.c as c\n",
            "b.py": "from .sub import c, NAME\nfrom . import d\n",
            "d.py": "def later():\n    from .sub.c import thing\n",
            "e.py": (
                "from typing import TYPE_CHECKING\nimport pkg\n"
                "if TYPE_CHECKING:\n    from pkg import a\nelse:\n    from pkg import b\n"
            ),
            "sub/__init__.py": "from ..a import x\n",
            "sub/c.py": "from .. import d\nimport os\n",
        },
    )
    graph = build_graph(package_dir, "pkg")

    assert _edges(graph) == {
        ("pkg.a", "pkg.b"),  # from the package: the submodule
        ("pkg.a", "pkg.sub.c"),  # dotted import
        ("pkg.b", "pkg.sub.c"),  # relative, submodule
        ("pkg.b", "pkg.sub"),  # relative, a name of the package
        ("pkg.b", "pkg.d"),
        ("pkg.d", "pkg.sub.c"),  # lazy
        ("pkg.e", "pkg.b"),  # the TYPE_CHECKING else branch; `import pkg` is trivial
        ("pkg.sub", "pkg.a"),  # a package __init__ with imports is a node like any other
        ("pkg.sub.c", "pkg.d"),  # two levels up; `import os` is not ours
    }
    assert graph["pkg.d"]["pkg.sub.c"].lazy and not graph["pkg.a"]["pkg.b"].lazy


def test_the_checker_reports_each_cycle_as_a_chain(tmp_path: Path) -> None:
    package_dir = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "def f():\n    from pkg import c\n",
            "c.py": "import pkg.a\nimport pkg.b\n",
            "d.py": "import pkg.a\n",
        },
    )
    graph = build_graph(package_dir, "pkg")

    assert strongly_connected(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    report = describe_cycles(graph, package_dir)
    assert "pkg.a -> pkg.b -> pkg.c -> pkg.a" in report
    assert "pkg.b -> pkg.c -> pkg.b" in report
    assert "pkg.b -> pkg.c  at pkg/b.py:2 (lazy)" in report
    assert "pkg.d" not in report
