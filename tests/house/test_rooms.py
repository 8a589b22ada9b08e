"""The rooms of the house: each side's folders are the steps of its data flow, a question is
one folder, and no room reaches up into a later step.

- ``bench/run``: ``plan`` (what will run) → ``execute`` (running it) → ``store`` (what it
  leaves), with ``child`` and ``cluster`` beside them; ``protocol`` and ``caches`` are the seam
  between the parent and its children.
- ``bench/report``: ``input`` → ``analysis`` → ``judge`` → ``questions`` (one folder per page:
  its model, its view, its template) with ``render`` (the kit the views format with).

Read off the source (``tests/house/imports.py``); nothing is imported, but the star imports.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import bench

from .imports import Graph, import_graph
from .literals import string_literals

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run"
REPORT = ROOT / "bench" / "report"
QUESTIONS = REPORT / "questions"

#: What each folder holds: its rooms (folders) and the modules that stand beside them.
LAYOUT = {
    RUN: ({"plan", "execute", "store", "child", "cluster"}, {"__init__", "protocol", "caches"}),
    REPORT: ({"input", "analysis", "judge", "questions", "render"},
             {"__init__", "build", "parallel", "vocabulary", "fmt"}),
}
#: Rooms that come before others in the flow never import the later ones.
NEVER = [
    ("bench.run.plan", r"bench\.run\.(execute|store|child|cluster)\b"),
    ("bench.run.store", r"bench\.run\.(execute|child|cluster)\b"),
    ("bench.run.execute", r"bench\.run\.cluster\b"),
    ("bench.report.input", r"bench\.report\.(analysis|judge|questions|render)\b"),
    ("bench.report.analysis", r"bench\.report\.(judge|questions|render)\b"),
    ("bench.report.judge", r"bench\.report\.(questions|render)\b"),
    ("bench.report.render", r"bench\.report\.questions\b"),
]


def _graph() -> Graph:
    return import_graph(ROOT / "bench")


def _entries(folder: Path) -> tuple[set[str], set[str]]:
    folders = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in folder.glob("*.py")}
    return folders, modules


@pytest.mark.parametrize("folder", list(LAYOUT), ids=lambda p: p.name)
def test_each_side_is_its_rooms(folder: Path) -> None:
    assert _entries(folder) == LAYOUT[folder]


@pytest.mark.parametrize("room, later", NEVER, ids=[r for r, _ in NEVER])
def test_no_room_imports_a_later_step(room: str, later: str) -> None:
    graph = _graph()
    mine = {m for m in graph if m == room or m.startswith(room + ".")}
    assert len(mine) > 1, f"{room}: no modules read"
    wrong = sorted(f"{m} imports {d}" for m in mine for d in graph[m] if re.match(later, d))
    assert not wrong, wrong


def _questions() -> list[Path]:
    return sorted(p for p in QUESTIONS.iterdir() if p.is_dir() and p.name != "__pycache__")


def test_a_question_imports_no_other_question() -> None:
    graph = _graph()
    names = {q.name for q in _questions()}
    assert {"cudnn", "feeding", "home", "machines"} <= names
    wrong = []
    for q in names:
        mine = f"bench.report.questions.{q}"
        for m, deps in graph.items():
            if m == mine or m.startswith(mine + "."):
                wrong += [f"{m} imports {d}" for d in deps
                          if (o := re.match(r"bench\.report\.questions\.(\w+)", d))
                          and o.group(1) in names and o.group(1) != q]
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("question", _questions(), ids=lambda p: p.name)
def test_a_question_holds_its_view_and_its_templates(question: Path) -> None:
    """Its view renders the templates beside it, and no template elsewhere but the kit's."""
    view = (question / "view.py").read_text(encoding="utf-8")
    templates = sorted(p.name for p in question.glob("*.md.j2"))
    assert templates, f"{question.name}: no template"
    used = set(re.findall(r'"([\w-]+\.md\.j2)"', view))
    assert used == set(templates), (question.name, used, templates)


def test_only_the_kit_keeps_templates_outside_the_questions() -> None:
    stray = [p.relative_to(ROOT) for p in REPORT.rglob("*.j2")
             if QUESTIONS not in p.parents and p.parent != REPORT / "render" / "templates"]
    assert not stray, stray


def test_every_package_face_can_be_star_imported() -> None:
    """``from pkg import *`` names only what the package has (``__all__`` holds no typo)."""
    faces = [m.name for m in pkgutil.walk_packages(bench.__path__, "bench.") if m.ispkg]
    assert "bench.report.judge.advice" in faces
    broken = []
    for name in faces:
        module = importlib.import_module(name)
        missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
        if missing:
            broken.append(f"{name}: {missing}")
    assert not broken, broken


#: A status's spelling (``bench.schema.Status``) where it is no row's status: the enums that
#: define words, JSON keys named "error", the fault kinds a test injects, torch's counter.
NOT_A_STATUS = {
    "bench/schema.py": ('OK = "ok"', 'OOM = "oom"', 'TIMEOUT = "timeout"', 'CRASH = "crash"',
                        'ERROR = "error"', 'SKIPPED = "skipped"', 'INTERRUPTED = "interrupted"',
                        'PACE_SKIPPED: Final = "skipped"'),
    "bench/report/vocabulary.py": ('SKIPPED = "skipped"',),
    "bench/report/analysis/machines.py": ('str(answer.get("error") or "")',),
    "bench/run/child/env.py": ('"error": f"TypeError:', '"error": f"{type(exc)', '"error": ""}'),
    "bench/run/child/compiling.py": ('counters["frames"].get("ok", 0)',),
    "bench/run/child/worker.py": ("FAULT_KINDS = (", 'if kind == "crash":',
                                  'if fault in ("oom", "error"):', 'if fault == "oom":'),
    "bench/run/execute/session.py": ('verb = "interrupted" if code else "done"',),
}


def _status_literals(path: Path) -> list[tuple[int, str]]:
    from bench.schema import STATUSES

    lines = path.read_text(encoding="utf-8").splitlines()
    return [(n, lines[n - 1].strip()) for n, value in string_literals(path)
            if value in STATUSES]


def test_no_status_is_spelled_outside_its_enum() -> None:
    found = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        allowed = NOT_A_STATUS.get(path.relative_to(ROOT).as_posix(), ())
        found += [f"{path.relative_to(ROOT)}:{n}: {line}"
                  for n, line in _status_literals(path) if not any(a in line for a in allowed)]
    assert not found, found


def test_a_spelled_status_is_found(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('if row["status"] == "ok":\n    pass\nx = "fine"\n', encoding="utf-8")
    assert _status_literals(path) == [(1, 'if row["status"] == "ok":')]


def _code_literals(path: Path) -> list[tuple[int, str]]:
    from bench.report.judge.advice.codes import Caveat, Rule

    codes = {c.value for enum in (Rule, Caveat) for c in enum}
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(n, lines[n - 1].strip()) for n, value in string_literals(path) if value in codes]


def test_no_rule_or_caveat_code_is_spelled_outside_its_enum() -> None:
    codes = ROOT / "bench" / "report" / "judge" / "advice" / "codes.py"
    found = [f"{path.relative_to(ROOT)}:{n}: {line}"
             for path in sorted((ROOT / "bench").rglob("*.py")) if path != codes
             for n, line in _code_literals(path)]
    assert not found, found
    assert len(_code_literals(codes)) > 40  # it read the enums' own spellings


def test_a_spelled_code_is_found(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('if "steady-drift" in r.caveats:\n    pass\nx = "steady"\n', encoding="utf-8")
    assert _code_literals(path) == [(1, 'if "steady-drift" in r.caveats:')]


def test_every_module_imports() -> None:
    """mypy is told to ignore imports it cannot find, so a module path left behind by a move
    would pass it: importing every module does not."""
    broken = []
    for found in pkgutil.walk_packages(bench.__path__, "bench."):
        try:
            importlib.import_module(found.name)
        except Exception as exc:  # any failure to import is the finding
            broken.append(f"{found.name}: {type(exc).__name__}: {exc}")
    assert not broken, broken


#: Where intervals are computed: the method, one interval at a time (the runner's adaptive
#: stopping reads it without numpy), and the same numbers vectorised for the report (a test
#: holds the two equal). Every other module asks one of them.
INTERVAL_MODULES = ("bench/intervals.py", "bench/report/analysis/intervals.py")


def test_intervals_are_computed_in_one_place() -> None:
    found = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in INTERVAL_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{rel}:{node.lineno}: {n}" for n in names if n.startswith("scipy")]
            if isinstance(node, ast.Attribute) and node.attr in ("ppf", "t_quantile",
                                                                 "bootstrap"):
                found.append(f"{rel}:{node.lineno}: .{node.attr}")
    assert not found, found
