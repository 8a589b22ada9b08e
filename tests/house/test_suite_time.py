"""The suite's time figure (``nox -s speed``) times the very command ``nox -s tests`` runs."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "speed"))

import suite_time  # noqa: E402


def _session_body(name: str) -> str:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return ast.unparse(fn)


def test_the_speed_figure_runs_pytest_as_the_tests_session_does() -> None:
    args = suite_time.session_args()
    assert args[0] == "-n" and int(args[1]) >= 2 and "--dist" in args, "xdist workers"
    assert "session.run('pytest', *PYTEST_ARGS, *session.posargs)" in _session_body("tests")
    assert "session.run('python', script)" in _session_body("speed")
    assert "tests/speed/suite_time.py" in (ROOT / "noxfile.py").read_text(encoding="utf-8")


def test_a_noxfile_without_the_arguments_is_one_line(tmp_path: Path) -> None:
    bare = tmp_path / "noxfile.py"
    bare.write_text("import nox\n")
    with pytest.raises(SystemExit) as stop:
        suite_time.session_args(bare)
    assert str(stop.value) == f"{bare} defines no PYTEST_ARGS"


def test_the_summary_is_pytests_last_line() -> None:
    out = "....\n===== 3 passed, 1 skipped in 12.0s =====\n\n"
    assert suite_time.summary(out) == "3 passed, 1 skipped in 12.0s"
    assert suite_time.summary("") == "(pytest printed nothing)"
