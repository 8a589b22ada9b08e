"""Sittings through the report: a replicate of a sitting that disagrees keeps its row and
leaves every statistic (``bench.report.analysis.sittings``), and ``--resume`` measures exactly
that replicate again (``bench.run.store.resume.left_out_keys``)."""

from __future__ import annotations

import csv
import math

import pytest

from bench.report.analysis import MIN_OK_REPLICATES, analyse
from bench.report.input.load import load_reports
from bench.report.vocabulary import Verdict
from bench.run.store.resume import left_out_keys
from bench.schema import RESULTS_FILE
from bench.sittings import Agreement

from .builders import axes, env_for, result_row, synth

ENV = {**env_for("box", "run-1"),
       "sittings": [{"sitting": 1, "code": "aaaa", "started_at": "2026-11-29T00:00:00Z"},
                    {"sitting": 2, "code": "aaaa", "started_at": "2026-11-30T00:00:00Z"}]}
#: Sitting 2's replicate of the ``off`` cell ran 1.6x the step time of sitting 1's two.
OFF = [(1, 0.100), (1, 0.101), (2, 0.160)]
#: The ``on`` cell: three replicates at one pace, in sittings 1, 1 and 2.
ON = [(1, 0.080), (1, 0.0804), (2, 0.0802)]


def _rows(cell_axes: dict[str, object], times: list[tuple[int, float]]) -> list[dict[str, object]]:
    return [result_row(ENV, cell_axes, i, seconds=t, sitting=s, cold_pass_s=t * 5 * (i + 1))
            for i, (s, t) in enumerate(times)]


@pytest.fixture
def tree(write_tree):
    rows = _rows(axes(cudnn_benchmark="off"), OFF) + _rows(axes(cudnn_benchmark="on"), ON)
    return write_tree([(ENV, rows, [])])


def test_the_slow_sittings_replicate_is_left_out_of_every_statistic(tree) -> None:
    assert MIN_OK_REPLICATES == 3  # two replicates left: too few for a verdict
    analysis = analyse(load_reports(tree))
    cells = analysis.cells.set_index("cudnn_benchmark")
    off, on = cells.loc["off"], cells.loc["on"]
    assert (off["n_total"], off["n_ok"], off["n_left_out"], off["n_failed"]) == (3, 2, 1, 0)
    assert (on["n_ok"], on["n_left_out"]) == (3, 0)
    assert off["too_few_ok"] and not on["too_few_ok"]
    assert "1 left out (sittings disagree)" in off["status_summary"]
    # its figure is in no statistic of the cell: its median, quartiles, spread, cold pass
    assert sorted(off["replicate_medians"]) == pytest.approx([0.100, 0.101])
    assert off["steady_median_s"] == pytest.approx(0.1005)
    assert off["steady_q75_s"] < 0.101 + 1e-12
    assert off["cold_pass_max_s"] == pytest.approx(0.101 * 5 * 2)  # not 0.16 * 5 * 3
    # and in no comparison: two replicates give no interval at all
    [pair] = analysis.comparisons["cudnn_benchmark"].to_dict("records")
    assert pair["verdict"] == Verdict.INSUFFICIENT
    assert pair["n_base"] == 2 and pair["n_var"] == 3
    assert math.isnan(pair["ci_low"]) and math.isnan(pair["ci_high"])
    assert pair["speedup"] == pytest.approx(0.1005 / 0.0802)


def test_the_machine_tables_say_which_replicates_were_left_out(tree) -> None:
    analysis = analyse(load_reports(tree))
    [left] = analysis.sitting_cells.to_dict("records")
    off_id = analysis.cells.set_index("cudnn_benchmark").loc["off", "cell_id"]
    assert (left["sitting"], left["cell_id"], left["reference"], left["part"]) == (
        2, off_id, 1, "cuda")
    # medians of log times: sitting 1's two replicates meet at their geometric mean
    assert left["ratio"] == pytest.approx(0.160 / math.sqrt(0.100 * 0.101))
    paces = analysis.sittings.set_index("sitting")
    # two shared cells: too few to judge a whole sitting, so it was judged cell by cell
    assert list(paces["agreement"]) == [Agreement.FEW, Agreement.FEW]
    assert list(paces["left_out_cells"]) == [0, 1]


def test_a_comparison_counts_only_the_replicates_kept(write_tree) -> None:
    """With a fourth replicate the left-out one's cell has three: a verdict, over them alone."""
    off = [*OFF, (1, 0.0995)]
    on = [*ON, (1, 0.0803)]
    root = write_tree([(ENV, _rows(axes(cudnn_benchmark="off"), off)
                        + _rows(axes(cudnn_benchmark="on"), on), [])])
    analysis = analyse(load_reports(root))
    [pair] = analysis.comparisons["cudnn_benchmark"].to_dict("records")
    assert (pair["n_base"], pair["n_var"]) == (3, 4)
    assert pair["verdict"] == "faster"
    assert pair["speedup"] == pytest.approx(0.100 / 0.08025)
    # an interval that held the left-out replicate would reach toward 0.16 / 0.08 = 2
    assert pair["ci_high"] < 1.4


def test_resume_measures_exactly_the_left_out_replicate_again(tree) -> None:
    run = tree / "box" / "run-1"
    with open(run / RESULTS_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    off_id = synth.cell_id_for(axes(cudnn_benchmark="off"))
    assert left_out_keys(rows, ENV["fingerprint_id"], ENV["sittings"]) == {
        ("model", off_id, 2)}
    # another fingerprint's rows are not this machine's to measure again
    assert left_out_keys(rows, "other", ENV["sittings"]) == set()
    # records that are not a list (a hand edit) change nothing: rows alone decide here
    assert left_out_keys(rows, ENV["fingerprint_id"], "junk") == {("model", off_id, 2)}
