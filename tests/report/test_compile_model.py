"""The torch.compile page's model holds typed rows, not frames: what its view reads is
declared (``CompilePair``, ``CompiledShapesPair``, ``Pair``), and the view renders from the
model and ``Shared`` alone. Judged from the committed fixtures: a CPU machine with one
workload, a GPU machine with three, a new-shape comparison of dynamic=auto and true, and
cudnn.benchmark compiled."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bench.report import fmt
from bench.report.analysis import CONFIDENCE, DELTA, analyse
from bench.report.input.load import load_reports
from bench.report.judge import Pair, Table
from bench.report.judge.facts import Facts
from bench.report.judge.machines import link_labels, machines_of
from bench.report.questions.answers import Shared
from bench.report.questions.compile import view
from bench.report.questions.compile.model import (
    Choice,
    CompiledShapesPair,
    CompilePage,
    CompilePair,
    Recompile,
    UnderCompile,
    Why,
    compile_page,
)
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.markdown import environment
from bench.report.render.writer import Writer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


@pytest.fixture(scope="module")
def judged() -> tuple[CompilePage, Shared]:
    a = analyse(load_reports(FIXTURES))
    machines = machines_of(a.machines)
    facts = Facts(analysis=a, machines=machines, recs=(), regimes=(), claims=())
    return compile_page(facts), Shared(machines, link_labels(machines), {})


def _values(obj: Any) -> list[Any]:
    """Every value a dataclass reaches, through its fields, tuples and dicts."""
    found = [obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            found += _values(getattr(obj, f.name))
    elif isinstance(obj, tuple | list):
        for v in obj:
            found += _values(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            found += _values(v)
    return found


def test_no_field_holds_a_frame(judged: tuple[CompilePage, Shared]) -> None:
    model, _ = judged
    found = _values(model)
    assert not [v for v in found if isinstance(v, pd.DataFrame | pd.Series)]
    assert isinstance(model.costs, Table) and len(model.costs) == 7
    assert "break_even_iters_low" in model.costs.columns  # the CSV's cost columns
    assert all(type(v) is not type(pd.NA) for v in found)  # missing values are None


def test_the_advice_reads_typed_pairs(judged: tuple[CompilePage, Shared]) -> None:
    model, _ = judged
    cpu, gpu = model.sections
    assert all(isinstance(r, CompilePair) for s in model.sections for r in s.costs)
    assert gpu.cuda and not cpu.cuda and gpu.agreed is Choice.USE
    assert gpu.cost_cols == ("model", "mode", "cudnn_benchmark")
    w = gpu.advice[-1]
    assert w.choice is Choice.USE and w.why is Why.FASTEST
    assert w.best is not None and (w.best.variant_value, w.best.kernel_cache) == (
        "reduce-overhead", "warm")
    assert isinstance(w.best.speedup, float) and w.best.pays_back is not None
    assert [r.variant_value for r in w.others] and w.best not in w.others
    assert w.missing_caches == ("fresh",)
    assert w.breaks is not None and w.best.breaks == w.breaks and w.breaks.total == 0


def test_the_studies_read_typed_pairs(judged: tuple[CompilePage, Shared]) -> None:
    model, _ = judged
    gpu = model.sections[1]
    assert all(isinstance(r, CompiledShapesPair) for r in gpu.shapes)
    (d,) = gpu.dynamic
    assert [k for k, _ in d.by_dynamic] == ["auto", "true"]
    auto = d.by_dynamic[0][1]
    assert isinstance(auto, CompiledShapesPair) and isinstance(auto.shape_count, int)
    assert d.recompile is Recompile.AVOIDED and d.cheaper is not None
    (b,) = gpu.benchmark
    assert isinstance(b.pair, Pair) and isinstance(b.eager, Pair)
    assert b.outcome is UnderCompile.NO_LONGER
    assert not model.shapes_unmeasured and not model.benchmark_unmeasured


def test_the_view_renders_from_its_model_and_shared(
        judged: tuple[CompilePage, Shared], tmp_path: Path) -> None:
    model, shared = judged
    generated = tmp_path / "generated"
    generated.mkdir()
    common = {"delta_pct": fmt.pct(DELTA), "confidence_pct": fmt.pct(CONFIDENCE),
              "build": BuildInfo("abc", False, "2026-01-01")}
    view.compile_page(Writer(tmp_path, environment()), model, shared, common)
    page = html.unescape((generated / "torch-compile.md").read_text(encoding="utf-8"))
    assert "compile it" in page and "use reduce-overhead" in page
    assert "dynamic=true avoided the recompile" in page
    assert any(tmp_path.rglob("torch-compile.csv"))  # every pair, from the model's Table
