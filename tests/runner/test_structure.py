"""The measuring side's shape: no import circle through it, and no module too long to read.

Imports are read with ``ast``, lazy ones (inside a function) included: a circle closed by a
lazy import is still a circle, only one that fails later.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import ROOT

MAX_LINES = 600
#: The measuring side and what it shares with the report: no circle may pass through these.
MEASURING = ("bench.run", "bench.cli", "bench.schema", "bench.__main__", "bench")


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted name → file, for every module of ``package`` (whose folder is ``root``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (package, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Which of ``files``' modules each one imports, anywhere in its body."""
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package upwards
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    base = ".".join([*here[:len(here) - node.level + 1], *filter(None, [base])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            else:
                continue
            edges.update(t for t in targets if t in files and t != name)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _measuring(module: str) -> bool:
    return module in MEASURING or module.startswith("bench.run.")


def test_no_import_circle_passes_through_the_measuring_side() -> None:
    """The report side checks its own folder; a circle that touches ``bench/run``, the CLI or
    the schema is this side's."""
    graph = import_graph(module_files(ROOT / "bench", "bench"))
    assert "bench.run.launch" in graph["bench.run.runner"]  # the graph sees real imports
    bad = [c for c in circles(graph) if any(map(_measuring, c))]
    assert not bad, bad


def test_a_circle_is_found_even_through_a_lazy_or_relative_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .c import g\n")
    (pkg / "sub" / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg import a\n")  # imports into the circle, not part of it
    graph = import_graph(module_files(pkg, "pkg"))
    assert circles(graph) == [["pkg.a", "pkg.sub.b", "pkg.sub.c"]]
    (pkg / "sub" / "c.py").write_text("import json\n")
    assert circles(import_graph(module_files(pkg, "pkg"))) == []


SIZED = [*sorted((ROOT / "bench" / "run").rglob("*.py")), ROOT / "bench" / "cli.py",
         ROOT / "bench" / "schema.py"]


@pytest.mark.parametrize("path", SIZED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_measuring_module_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)}: {lines} lines"
