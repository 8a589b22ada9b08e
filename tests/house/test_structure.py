"""The shape of the whole house: no import circle anywhere in ``bench/``, no module or function
too long to read, no two public classes of one name, and a circle finder shown to find what it
is for.

Imports are read with ``ast`` (``tests/house/imports.py``), lazy ones inside functions
included: a circle closed by a lazy import is still a circle, only one that fails later.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from .imports import cycles, import_graph

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
MAX_LINES = 500
MAX_FUNCTION_LINES = 80


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_bench_has_no_import_circle() -> None:
    graph = import_graph(BENCH)
    # it read the whole tree, both sides and what they share
    assert {"bench.cli", "bench.schema", "bench.run.execute.runner", "bench.run.child.worker",
            "bench.report.input.load", "bench.report.questions.pages"} <= set(graph)
    assert "bench.run.execute.launch" in graph["bench.run.execute.runner"]  # and sees real imports
    assert cycles(graph) == []


def test_a_lazy_import_inside_a_function_still_closes_a_circle(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kit.py": "def render():\n    from pkg import views\n    return views\n",
        "pkg/views/__init__.py": "from pkg.views.page import page\n",
        "pkg/views/page.py": "from pkg.kit import render\n\ndef page():\n    return render\n",
    })
    assert cycles(import_graph(root)) == [["pkg.kit", "pkg.views", "pkg.views.page"]]


def test_a_circle_is_found_through_a_relative_import_and_gone_when_it_is(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.sub import b\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "def f():\n    from .c import g\n",
        "pkg/sub/c.py": "import pkg.a\n",
        "pkg/d.py": "from pkg import a\n",  # imports into the circle, not part of it
    })
    assert cycles(import_graph(root)) == [["pkg.a", "pkg.sub.b", "pkg.sub.c"]]
    (root / "sub" / "c.py").write_text("import json\n")
    assert cycles(import_graph(root)) == []


def test_relative_imports_and_imported_names_resolve_to_their_modules(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "from .a import thing\n",
        "pkg/a.py": "from . import b\nfrom .b import helper\nimport pkg.c\n",
        "pkg/b.py": "import json\nhelper = json.dumps\n",
        "pkg/c.py": "from pkg.a import thing as _\n",
    })
    graph = import_graph(root)
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b", "pkg.c"},
        "pkg.b": set(),
        "pkg.c": {"pkg.a"},
    }
    assert cycles(graph) == [["pkg.a", "pkg.c"]]


def test_a_package_init_presenting_its_own_modules_is_no_circle(tmp_path: Path) -> None:
    """``from pkg.sub.x import y`` is an edge to ``pkg.sub.x`` only, not to ``pkg.sub`` (which
    Python imports first, but which may re-export what ``x`` defines)."""
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "from pkg.sub.x import y\nfrom pkg.sub.z import w\n",
        "pkg/sub/x.py": "y = 1\n",
        "pkg/sub/z.py": "from pkg.sub.x import y\nw = y\n",
    })
    assert cycles(import_graph(root)) == []


@pytest.mark.parametrize("path", sorted(BENCH.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_500_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)}: {lines} lines"


def _functions(root: Path) -> dict[str, int]:
    """``path:name`` → lines (from ``def`` to its last line) of every function and method
    under ``root``, nested ones included."""
    out: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(root.parent).as_posix()}:{node.name}"
                out[where] = max(out.get(where, 0), (node.end_lineno or node.lineno)
                                 - node.lineno + 1)
    return out


def _public_classes(root: Path) -> dict[str, set[str]]:
    """Name → the modules under ``root`` that define a public top-level class of that name."""
    out: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out[node.name].add(path.relative_to(root.parent).as_posix())
    return out


def test_no_function_is_over_80_lines() -> None:
    found = _functions(BENCH)
    # it read the whole tree, methods included
    assert "bench/run/execute/runner.py:run_job" in found
    long = {f"{where} ({n} lines)" for where, n in found.items()
            if n > MAX_FUNCTION_LINES}
    assert not long, sorted(long)


def test_a_long_function_is_found(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": f"class C:\n    def f(self):\n"
                        f"{body.replace('    ', '        ')}\n\ndef g():\n    return 1\n"})
    assert _functions(tmp_path / "pkg") == {"pkg/a.py:f": MAX_FUNCTION_LINES + 1,
                                            "pkg/a.py:g": 2}


def test_no_two_public_classes_share_a_name() -> None:
    found = _public_classes(BENCH)
    assert "bench/run/execute/runner.py" in found["Runner"]  # it read the whole tree
    shared = {name: paths for name, paths in found.items() if len(paths) > 1}
    assert not shared, shared


def test_two_public_classes_of_one_name_are_found(tmp_path: Path) -> None:
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "class Finding:\n    pass\n",
                        "pkg/b/__init__.py": "", "pkg/b/c.py": "class Finding:\n    pass\n"
                        "class _Private:\n    pass\n",
                        "pkg/d.py": "class _Private:\n    pass\n"})
    assert _public_classes(tmp_path / "pkg") == {"Finding": {"pkg/a.py", "pkg/b/c.py"}}
