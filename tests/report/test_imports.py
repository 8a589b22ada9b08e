"""No import circle among the report's modules, and a checker that would see one."""

from __future__ import annotations

from pathlib import Path

from .imports import cycles, import_graph

REPORT = Path(__file__).resolve().parents[2] / "bench" / "report"


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_the_report_has_no_import_circle() -> None:
    graph = import_graph(REPORT)
    assert "bench.report.load" in graph and "bench.report.views" in graph  # it read the tree
    assert cycles(graph) == []


def test_a_lazy_import_inside_a_function_still_closes_a_circle(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kit.py": "def render():\n    from pkg import views\n    return views\n",
        "pkg/views/__init__.py": "from pkg.views.page import page\n",
        "pkg/views/page.py": "from pkg.kit import render\n\ndef page():\n    return render\n",
    })
    assert cycles(import_graph(root)) == [["pkg.kit", "pkg.views", "pkg.views.page"]]


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
