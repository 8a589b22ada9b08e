"""The dynamic-shapes page: its first-pass columns share their baselines (one is never printed
as a part of the other), "no steady cost" only where the intervals lie within 1 ± δ, and the
steady state named for what it is, FLOP/s."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from bench.report.analysis import analyse
from bench.report.input.load import load_reports
from bench.report.judge.facts import Facts
from bench.report.judge.machines import machines_of
from bench.report.questions.shapes.model import (
    ShapesPair,
    Tally,
    shapes_page,
    with_benchmark_share,
)
from bench.report.questions.shapes.view import DECISION, decision, per_shape_text
from bench.report.vocabulary import Verdict

from .builders import axes, cell, env_for, render_tree

GPU = env_for("gpu-box", "run-1")
CPU = env_for("cpu-box", "run-1", gpu=False)
#: The H200 row a reviewer found: static on 25.32 s, static off 0.59 s, dynamic (3 shapes)
#: on 48.40 s and off 1.31 s; steady steps 0.30 s on, 0.10 s off.
COLD = {("off", "static"): 0.59, ("off", "dynamic"): 1.31,
        ("on", "static"): 25.32, ("on", "dynamic"): 48.40}
STEADY = {"off": 0.10, "on": 0.30}


def _page(write_tree, tmp_path: Path, env: dict, rows: list) -> str:
    generated = tmp_path / "generated"
    render_tree(write_tree([(env, rows, [])]), generated)
    return (generated / "dynamic-shapes.md").read_text()


def _cost_rows(write_tree) -> list:
    rows = []
    for (bm, shapes), cold in COLD.items():
        extra = {"shape_count": 3} if shapes == "dynamic" else {}
        rows += cell(GPU, axes(cudnn_benchmark=bm, shapes=shapes), [STEADY[bm]] * 3,
                     cold_pass_s=cold, **extra)
    return rows


def _seconds(text: str) -> float:
    value, unit = re.fullmatch(r"([+−-]?[\d.]+) (s|ms)", text.strip()).groups()
    return float(value.replace("−", "-")) * (1e-3 if unit == "ms" else 1.0)


def test_benchmark_column_is_a_difference_of_per_new_shape_figures(write_tree, tmp_path):
    """The old "Of it, benchmark's" printed +15.7 s beside a per-new-shape 11.5 s: it divided
    by every shape and used the dynamic bm=off cell as its baseline. Both columns now divide by
    the extra shapes against the static cell of their own setting."""
    page = _page(write_tree, tmp_path, GPU, _cost_rows(write_tree))
    assert "Of it, benchmark" not in page
    (row,) = [line for line in page.splitlines() if "| fresh |" in line and "bm&#61;on" in line]
    cells = [c.strip() for c in row.split("|")]
    per_new, bm_part = _seconds(cells[4]), _seconds(cells[5])
    assert per_new == pytest.approx((48.40 - 25.32) / 2, abs=0.05)
    off_per_new = (1.31 - 0.59) / 2
    assert bm_part == pytest.approx((48.40 - 25.32) / 2 - off_per_new, abs=0.05)
    assert bm_part <= per_new  # the bm=off per-new-shape figure is positive here
    caption = page.split("First pass of every configuration")[1].split("|")[0]
    assert "minus the first pass of the static cell" in caption
    assert "minus that of the" in caption and "not a share" in caption


def test_benchmark_share_matches_only_its_benchmark_off_twin() -> None:
    frame = pd.DataFrame({
        "fingerprint_id": ["f"] * 4, "variant_value": ["dynamic"] * 4,
        "model": ["a", "a", "b", "b"], "cudnn_benchmark": ["off", "on", "on", "n/a"],
        "cudnn_benchmark_limit": [10] * 4,
        "extra_cold_per_new_shape_s": [-0.5, 3.0, 2.0, 1.0],
    })
    got = with_benchmark_share(frame)["extra_cold_vs_bm_off_s"].tolist()
    assert got[1] == pytest.approx(3.5)  # on − its off twin (model a)
    assert all(pd.isna(v) for v in (got[0], got[2], got[3]))  # off, no twin, CPU
    assert with_benchmark_share(frame.iloc[:0])["extra_cold_vs_bm_off_s"].empty


@pytest.mark.parametrize(("times", "steady_cost"), [
    ([0.08, 0.10, 0.12], False),  # an interval reaching well beyond 1 ± 3%
    ([0.10, 0.10, 0.10], True),  # exactly as fast: the interval lies inside the band
])
def test_no_steady_cost_only_where_the_interval_lies_within_the_band(
        write_tree, tmp_path, times, steady_cost):
    rows = cell(CPU, axes(device="cpu"), [0.10] * 3)
    rows += cell(CPU, axes(device="cpu", shapes="dynamic"), times, shape_count=4)
    lead = re.search(r"\*\*cpu-box [^*]*\*\*", _page(write_tree, tmp_path, CPU, rows)).group(0)
    assert "no clear difference" not in lead  # the verdict agreed on, worded per the band
    assert ("no steady cost" in lead) is steady_cost
    assert ("no clear steady cost" in lead) is not steady_cost


def _tally(verdict: Verdict, low: float | None, high: float | None) -> Tally[ShapesPair]:
    return Tally(verdict, {}, (), (), low, high, None, None)


def test_decision_words_follow_the_band() -> None:
    ncd = Verdict.NO_CLEAR_DIFFERENCE
    assert decision(_tally(ncd, 0.98, 1.01)) == DECISION[ncd]
    for low, high in ((0.86, 1.22), (0.96, 1.09), (None, None)):
        assert decision(_tally(ncd, low, high)).startswith("no clear steady cost")
    assert decision(_tally(Verdict.SLOWER, 0.5, 0.6)) == DECISION[Verdict.SLOWER]


def test_a_first_pass_shorter_than_static_is_not_said_to_add() -> None:
    assert per_shape_text([0.059, 0.19]) == "; each extra shape adds 59.0 ms to 190 ms to the " \
        "first pass"
    assert per_shape_text([-1.42, 10.7]) == "; each extra shape changes the first pass by " \
        "−1.42 s to +10.7 s"
    assert per_shape_text([]) == ""


def test_steady_state_is_named_flop_per_second(write_tree, tmp_path):
    """samples/s × FLOP per sample is FLOP/s, not "throughput per FLOP" (a FLOP rate divided
    by FLOP would be a rate of steps)."""
    rows = cell(CPU, axes(device="cpu"), [0.10] * 3)
    rows += cell(CPU, axes(device="cpu", shapes="dynamic"), [0.10] * 3, shape_count=4)
    page = _page(write_tree, tmp_path, CPU, rows)
    assert "per FLOP" not in page.replace("FLOP per sample", "")
    assert "| FLOP/s vs static (95% CI) |" in page
    assert "FLOP/s against one static shape" in page
    assert "the FLOP/s of one static shape" in page  # the Cite line


def test_the_model_hands_typed_pairs_and_per_new_shape_figures(write_tree):
    a = analyse(load_reports(write_tree([(GPU, _cost_rows(write_tree), [])])))
    model = shapes_page(Facts(analysis=a, machines=machines_of(a.machines), recs=(),
                              regimes=(), claims=()))
    (s,) = model.sections
    assert all(isinstance(r, ShapesPair) for r in s.pairs.rows)
    (on,) = [r for r in s.pairs.rows if r.cudnn_benchmark == "on"]
    assert on.shape_count == 3 and on.var_cold_pass_s == pytest.approx(48.40, abs=0.01)
    assert on.extra_cold_vs_bm_off_s == pytest.approx((48.40 - 25.32) / 2 - (1.31 - 0.59) / 2,
                                                      abs=0.05)
    assert sorted(s.per_shape) == pytest.approx(sorted((c - s_) / 2 for c, s_ in (
        (1.31, 0.59), (48.40, 25.32))), abs=0.05)
    assert "shapes" not in s.columns and "cudnn_benchmark" in s.columns
    assert "extra_cold_vs_bm_off_s" in model.pairs.columns and len(model.pairs) == 2
