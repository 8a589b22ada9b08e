"""The two walls of the design, checked in fresh interpreters.

- The parent (CLI, runner, launcher) never imports torch: torch lives in the children.
- The measuring side never imports pandas, matplotlib or jinja2, so it runs inside a bare
  PyTorch environment.
- The report side never imports torch, so it runs on a laptop against committed CSVs.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

PRESENTATION = ("pandas", "matplotlib", "jinja2", "scipy", "mkdocs")


def _imported_after(code: str) -> set[str]:
    probe = (f"import sys\n{code}\n"
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return set(out.stdout.split())


def test_parent_side_never_imports_torch() -> None:
    mods = _imported_after("import bench.cli, bench.runner, bench.launch, bench.matrix, "
                           "bench.store, bench.progress, bench.estimate")
    assert "torch" not in mods and "torchvision" not in mods
    assert not mods & set(PRESENTATION)


def test_measuring_side_never_imports_presentation() -> None:
    mods = _imported_after("import torch, bench.worker, bench.workloads, bench.measure, "
                           "bench.settings, bench.env, bench.launch")
    assert "torch" in mods
    assert not mods & set(PRESENTATION), mods & set(PRESENTATION)


def test_report_side_never_imports_torch() -> None:
    pytest.importorskip("pandas")
    mods = _imported_after("import bench.report, bench.report.build, bench.report.load, "
                           "bench.report.stats, bench.report.advice")
    assert "pandas" in mods
    assert "torch" not in mods and "torchvision" not in mods
