"""The shape of the whole house: no import circle anywhere in ``bench/``, no module too long to
read, and a circle finder shown to find what it is for.

Imports are read with ``ast`` (``tests/house/imports.py``), lazy ones inside functions
included: a circle closed by a lazy import is still a circle, only one that fails later.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .imports import cycles, import_graph

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
MAX_LINES = 600


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_bench_has_no_import_circle() -> None:
    graph = import_graph(BENCH)
    # it read the whole tree, both sides and what they share
    assert {"bench.cli", "bench.schema", "bench.run.runner", "bench.run.child.worker",
            "bench.report.load", "bench.report.views"} <= set(graph)
    assert "bench.run.launch" in graph["bench.run.runner"]  # and sees real imports
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
def test_no_module_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)}: {lines} lines"
