"""Per-cell latency tails, energy and throttling over replicates (``analysis.energy``)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.report.analysis.cells import cell_stats
from bench.report.input.load import load_reports

from .builders import axes, env_for, result_row

ENV = env_for("box", "run-1")


def _samples(row: dict[str, object], times: list[float]) -> list[dict[str, object]]:
    ids = {k: row.get(k, "") for k in ("schema_version", "run_id", "fingerprint_id", "cell_id",
                                       "replicate", "attempt_id")}
    return [{**ids, "phase": "steady", "iter": i, "batch_size": 8, "resolution": 224,
             "seconds": t} for i, t in enumerate(times)]


def test_tails_come_from_each_replicates_samples_and_pool_by_their_median(write_tree):
    # each replicate: 99 fast iterations and one slow one, slower in each replicate
    slow = (0.5, 0.6, 0.7)
    times = [[0.1] * 99 + [s] for s in slow]
    rows = [result_row(ENV, axes(), i, seconds=0.1, steady_iters=100,
                       energy_method="nvml-energy", joules_per_sample=j, mean_power_w=400.0,
                       energy_j=j * 800, energy_window_s=2.0, throttled=t,
                       throttle_reasons="sw_power_cap 30%" if t == "true" else "",
                       sm_clock_min_mhz=c)
            for i, (j, t, c) in enumerate(((1.0, "false", 1980), (2.0, "true", 1500),
                                           (3.0, "false", 1965)))]
    samples = [s for row, xs in zip(rows, times) for s in _samples(row, xs)]
    cell = cell_stats(load_reports(write_tree([(ENV, rows, samples)]))).iloc[0]
    own = [float(np.quantile(xs, 0.99)) for xs in times]  # each replicate's own p99
    assert cell["latency_p99_s"] == pytest.approx(own[1])  # their median
    assert cell["latency_p99_lo_s"] <= cell["latency_p99_s"] <= cell["latency_p99_hi_s"]
    assert cell["latency_p50_s"] == pytest.approx(0.1)
    assert cell["joules_per_sample"] == pytest.approx(2.0)
    assert cell["samples_per_joule"] == pytest.approx(0.5)
    assert cell["energy_method"] == "nvml-energy" and cell["n_energy"] == 3
    assert cell["n_throttled"] == 1 and cell["throttle_reasons"] == "sw_power_cap 30%"
    assert cell["sm_clock_min_mhz"] == 1500 and cell["n_short_window"] == 0


def test_a_cell_that_measured_no_energy_keeps_its_reason_and_no_figure(write_tree):
    rows = [result_row(ENV, axes(device="cpu"), i, seconds=0.1, energy_method="none",
                       energy_reason="no RAPL counters readable") for i in range(3)]
    cell = cell_stats(load_reports(write_tree([(ENV, rows, [])]))).iloc[0]
    assert np.isnan(cell["joules_per_sample"]) and cell["n_energy"] == 0
    assert (cell["energy_method"], cell["energy_reason"]) == ("none",
                                                              "no RAPL counters readable")
    assert cell["latency_p99_s"] == pytest.approx(0.1)  # the tails need only the samples


def test_a_mix_of_methods_reads_as_the_weakest_and_short_windows_are_counted(write_tree):
    rows = [result_row(ENV, axes(), i, seconds=0.1, energy_method=m, joules_per_sample=1.0,
                       energy_j=10.0, energy_window_s=w)
            for i, (m, w) in enumerate((("nvml-energy", 1.5), ("nvml-power", 0.4),
                                        ("nvml-energy", 1.5)))]
    cell = cell_stats(load_reports(write_tree([(ENV, rows, [])]))).iloc[0]
    assert cell["energy_method"] == "nvml-power" and cell["n_short_window"] == 1


def test_a_ceiling_keeps_its_measured_power_and_says_it_has_no_per_sample_figure(write_tree):
    """A matmul ceiling has no samples, so no joules per sample, yet its power was measured:
    the machine page read "not measured on this machine" beside 704 W of NVML readings."""
    from bench.report.render.words.labels import energy_text

    ax = axes(model="matmul-fp32", mode="", batch_size="", resolution="", precision="",
              memory_format="", shapes="", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
              cudnn_benchmark_limit="")
    rows = [result_row(ENV, ax, i, kind="ceiling", seconds=1.0, work_per_iter=1e12,
                       work_unit="flop", energy_method="nvml-energy", energy_j=700.0 + i,
                       energy_window_s=1.1, mean_power_w=700.0 + i) for i in range(3)]
    cell = cell_stats(load_reports(write_tree([(ENV, rows, [])]))).iloc[0]
    assert np.isnan(cell["joules_per_sample"]) and cell["mean_power_w"] == pytest.approx(701.0)
    assert energy_text(cell["joules_per_sample"], cell["mean_power_w"],
                       cell["energy_method"]) == "701 W (nvml-energy); no per-sample figure"
    assert energy_text(float("nan"), float("nan"), "none") == "not measured on this machine"


def test_a_p99_of_few_steps_says_how_few(write_tree):
    """The H200's CPU at batch 128 timed 2 steady steps a replicate: its "p99" is the slower
    of two, and the tables say so; a replicate of 100 steps or more needs no such note."""
    from bench.report.render.words.labels import tail_text

    def rows_and_samples(steps: int) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        rows = [result_row(ENV, axes(batch_size=8 + steps), i, seconds=0.1, steady_iters=steps)
                for i in range(3)]
        return rows, [s for row in rows for s in _samples(row, [0.1] * (steps - 1) + [0.3])]

    few, many = rows_and_samples(2), rows_and_samples(120)
    cells = cell_stats(load_reports(write_tree([(ENV, few[0] + many[0], few[1] + many[1])])))
    by_steps = {int(c["latency_steps_min"]): c for _, c in cells.iterrows()}
    assert set(by_steps) == {2, 120}
    two, lots = by_steps[2], by_steps[120]
    assert tail_text(two["latency_p99_s"], None, None, two["latency_steps_min"]).endswith(
        ", of 2 steps")
    assert "steps" not in tail_text(lots["latency_p99_s"], None, None,
                                    lots["latency_steps_min"])


def test_a_throttled_ceiling_says_so_beside_its_figure(write_tree):
    """The H200's bf16 and tf32 ceilings ran power-capped in every replicate, and the compare
    page gave them as the machine's peak, with no note."""
    from bench.report.analysis.machines import ceilings
    from bench.report.judge.rows import typed_row
    from bench.report.questions.compare.model import CeilingFigure
    from bench.report.questions.compare.view import _capped

    ax = axes(model="matmul-bf16", mode="", batch_size="", resolution="", precision="",
              memory_format="", shapes="", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
              cudnn_benchmark_limit="")
    rows = [result_row(ENV, ax, i, kind="ceiling", seconds=1.0, work_per_iter=1e12,
                       work_unit="flop", throttled=t, throttle_reasons="sw_power_cap 80%")
            for i, t in enumerate(("true", "true", "false"))]
    ceil = ceilings(cell_stats(load_reports(write_tree([(ENV, rows, [])])))).iloc[0]
    assert int(ceil["n_throttled"]) == 2
    assert _capped(typed_row(CeilingFigure, ceil)) == " (clocks throttled in 2 of 3)"
