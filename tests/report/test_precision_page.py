"""The precision page's model: typed pairs with the fp32 baseline's TF32 flag, and the
variant an answer recommends (the one clearly faster by the most), chosen by the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.report.analysis import analyse
from bench.report.input.load import load_reports
from bench.report.judge.facts import Facts
from bench.report.judge.machines import machines_of
from bench.report.questions.precision.model import PrecisionPair, precision_page

from .builders import axes, cell, env_for

ENV = env_for("gpu-box", "run-1")


def _facts(root: Path) -> Facts:
    a = analyse(load_reports(root))
    return Facts(analysis=a, machines=machines_of(a.machines), recs=(), regimes=(), claims=())


def _page(write_tree: Any, times: dict[str, list[float]]) -> Any:
    rows = [r for precision, t in times.items() for r in cell(ENV, axes(precision=precision), t)]
    return precision_page(_facts(write_tree([(ENV, rows, [])])))


def test_the_answer_recommends_the_variant_clearly_faster_by_the_most(write_tree: Any) -> None:
    model = _page(write_tree, {"fp32": [0.100, 0.101, 0.099], "amp-bf16": [0.060, 0.061, 0.059],
                               "amp-fp16": [0.050, 0.051, 0.049]})
    (s,) = model.precision.sections
    assert all(isinstance(r, PrecisionPair) for r in s.pairs.rows)
    assert {r.variant_value for r in s.pairs.rows} == {"amp-bf16", "amp-fp16"}
    assert all(isinstance(r.baseline_allow_tf32, str) for r in s.pairs.rows)
    assert s.winner == "amp-fp16" and s.judged
    assert s.quoted is not None and s.quoted.variant_value == "amp-fp16"
    assert "precision" not in s.columns and {"model", "mode"} <= set(s.columns)
    assert len(model.precision.pairs) == 2
    assert "baseline_allow_tf32" in model.precision.pairs.columns
    assert model.layout.sections == ()


def test_no_winner_where_nothing_was_clearly_faster(write_tree: Any) -> None:
    model = _page(write_tree, {"fp32": [0.100, 0.101, 0.099], "amp-bf16": [0.100, 0.101, 0.099]})
    (s,) = model.precision.sections
    assert s.winner is None and s.judged
    assert s.quoted == s.pairs.summary.quoted and s.quoted is not None
