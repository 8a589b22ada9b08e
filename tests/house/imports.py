"""The import graph of a package, read from its source with ``ast`` (nothing is imported).

Every ``import`` statement counts, wherever it is: a lazy import inside a function still ties
two modules together, and hiding one there is the usual way a circle is kept alive. An edge
goes to the module that is named (``from pkg import mod`` names ``pkg.mod`` when that is a
module, else ``pkg``), not to the packages above it, which Python imports first anyway; so a
package's ``__init__`` may present what its own modules define.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

Graph = dict[str, set[str]]


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name → file of every module under the package folder ``root``.

    Names are absolute: the folders above ``root`` that hold an ``__init__.py`` are part of
    them, so ``bench/report`` gives ``bench.report.input.load`` and so on.
    """
    root = Path(root).resolve()
    top = root
    while (top.parent / "__init__.py").is_file():
        top = top.parent
    base = top.parent
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(tree: ast.AST, name: str, is_package: bool) -> Iterator[str]:
    """The dotted names each import statement of module ``name`` refers to."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                yield f"{source}.{alias.name}"  # a module, or a name inside ``source``


def import_graph(root: Path) -> Graph:
    """Module → the modules under ``root`` that it imports (see the module docstring)."""
    modules = module_names(root)
    graph: Graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for dotted in _imported(tree, name, path.name == "__init__.py"):
            # the longest prefix that is one of our modules: ``a.b.func`` → ``a.b``
            parts = dotted.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts:
                targets.add(".".join(parts))
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every import circle: the strongly connected components with more than one module
    (sorted, and sorted among themselves), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
