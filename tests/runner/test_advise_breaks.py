"""``bench advise --knobs torch.compile`` on a user model with two graph breaks (a ``print``
and an ``.item()`` branch): a real CPU compile, whose breaks advise names beside the speedup,
in torch's words, with torch's hint for each, and which its JSON fields carry."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.report.input.load import load_reports
from bench.report.judge import asks

from .conftest import read_csv, run_cli

needs_cxx = pytest.mark.skipif(
    not os.environ.get("CI") and not any(map(shutil.which, ("g++", "c++", "clang++"))),
    reason="torch.compile on the CPU needs a C++ compiler (install g++)")


@pytest.mark.e2e
@needs_cxx
def test_advise_names_a_compiled_models_breaks_and_how_to_remove_them(
        advised_breaks: tuple[str, Path]) -> None:
    stdout, out = advised_breaks
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith("torch.compile ")]
    assert "2 graph breaks" in line, stdout
    notes = [ln for ln in stdout.splitlines() if ln.startswith("note on torch.compile:")]
    assert any("broke into 2 graphs" in n and "`print`" in n and "Tensor.item()" in n
               for n in notes), notes
    assert any("capture_scalar_outputs = True" in n for n in notes), notes
    assert not [ln for ln in stdout.splitlines() if ln.startswith(("amp-", "channels"))]

    ids = {r["compile"]: r["cell_id"] for r in read_csv(out / "results.csv")}
    (answer,) = asks.judge(load_reports(out), [asks.Ask(
        "torch.compile", "compile", ids["off"], ids["default"])], 10_000)
    assert (answer.graph_breaks, answer.graphs) == (2, 2)
    assert sorted(answer.graph_break_reasons) == [
        "1x Failed to trace builtin operator: `print` (gb0059)",
        "1x Unsupported Tensor.item() call with capture_scalar_outputs=False (gb0124)"]
    assert len(answer.break_hints) == 2 and answer.rule.startswith("compile-")


def test_an_unknown_knob_is_refused_with_the_valid_choices() -> None:
    proc = run_cli("advise", "resnet18", "--knobs", "torch.compile,tf64", "--dry-run")
    assert proc.returncode != 0
    (line,) = proc.stderr.strip().splitlines()
    assert "--knobs: unknown knob 'tf64'; valid choices: cudnn.benchmark, amp-bf16" in line
    assert "torch.compile" in line
