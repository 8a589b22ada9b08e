"""The walls of the design, read off the folders and checked in fresh interpreters.

- ``bench/run/`` (the parent: CLI side, runner, launchers) never imports torch: torch lives in
  ``bench/run/child/``, which only the launched processes import.
- Nothing under ``bench/run/`` (the child included) imports pandas, matplotlib, jinja2 or
  scipy, so a bare PyTorch box can measure.
- Nothing under ``bench/report/`` imports torch or the measuring side, so the report builds on
  a laptop from committed CSVs.
- ``bench/schema.py``, ``bench/cli.py`` and ``bench/commands/``, which both sides share, import
  neither; nor does ``bench/commands/advise.py`` until it has checked that the report's
  dependencies are there.

The module lists come from walking the folders, so a new module is inside its wall from the
moment it exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

TORCH = ("torch", "torchvision")
PRESENTATION = ("pandas", "matplotlib", "jinja2", "scipy", "mkdocs")
BENCH = ROOT / "bench"


def modules_under(folder: Path, skip: Path | None = None) -> list[str]:
    """Dotted names of every module in ``folder`` (packages included), ``skip`` left out."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        if skip is not None and skip in path.parents:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def imported_by(modules: list[str], first: str = "") -> set[str]:
    """Everything in ``sys.modules`` after a fresh interpreter imports ``modules``."""
    lines = ["import importlib, sys", first,
             *(f"importlib.import_module({m!r})" for m in modules),
             "print(' '.join(sorted(sys.modules)))"]
    out = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def _roots(mods: set[str], names: tuple[str, ...]) -> set[str]:
    return {m.split(".")[0] for m in mods} & set(names)


PARENT = modules_under(BENCH / "run", skip=BENCH / "run" / "child")
CHILD = modules_under(BENCH / "run" / "child")
REPORT = modules_under(BENCH / "report")


def test_the_folders_are_walked() -> None:
    assert {"bench.run", "bench.run.execute.runner", "bench.run.execute.launch",
            "bench.run.protocol"} <= set(PARENT)
    assert {"bench.run.child.server", "bench.run.child.worker", "bench.run.child.flags"} <= set(
        CHILD)
    assert not set(PARENT) & set(CHILD)
    assert "bench.report.build" in REPORT
    assert {"bench", "bench.schema", "bench.cli", "bench.commands.advise"} <= set(SHARED)


@pytest.mark.parametrize("module", PARENT)
def test_the_parent_never_imports_torch_or_presentation(module: str) -> None:
    mods = imported_by([module])
    assert not _roots(mods, TORCH + PRESENTATION), f"{module} pulls in " \
        f"{_roots(mods, TORCH + PRESENTATION)}"
    # nor the report's code, nor the child's: those run in other processes
    assert not _ours(mods, "bench.report"), f"{module} pulls in {_ours(mods, 'bench.report')}"
    assert not _ours(mods, "bench.run.child"), \
        f"{module} pulls in {_ours(mods, 'bench.run.child')}"


def test_the_child_never_imports_presentation() -> None:
    """The child with everything the fork server preloads: what a GPU box really imports."""
    from bench.run.child.server import PRELOAD

    mods = imported_by([*PRELOAD, *CHILD])
    assert "torch" in mods
    assert not _roots(mods, PRESENTATION), _roots(mods, PRESENTATION)
    assert not _ours(mods, "bench.report"), _ours(mods, "bench.report")


#: The shared modules: every module directly in bench/ and every command module (a new one is
#: shared from the start).
SHARED = sorted({"bench", *(f"bench.{p.stem}" for p in BENCH.glob("*.py") if p.stem != "__init__"),
                 *modules_under(BENCH / "commands")})


def _ours(mods: set[str], package: str) -> set[str]:
    return {m for m in mods if m == package or m.startswith(package + ".")}


@pytest.mark.parametrize("module", SHARED)
def test_shared_modules_import_neither_side_heavy(module: str) -> None:
    mods = imported_by([module])
    assert not _roots(mods, TORCH + PRESENTATION), _roots(mods, TORCH + PRESENTATION)


def test_the_report_never_imports_torch_or_the_measuring_side() -> None:
    pytest.importorskip("pandas")
    mods = imported_by(REPORT)
    assert "pandas" in mods
    assert not _roots(mods, TORCH), _roots(mods, TORCH)
    assert not _ours(mods, "bench.run")


def test_run_never_imports_pandas_through_the_cli() -> None:
    """``bench run`` parses its arguments with the report's options registered: argparse only."""
    mods = imported_by(["bench.cli"], first="import bench.cli; bench.cli.build_parser()")
    assert not _roots(mods, PRESENTATION + TORCH)
