"""analysis: per-cell figures, pairing, verdict thresholds, break-even, crossover, never pooling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bench.fingerprint import fingerprint_id
from bench.report.analysis import DELTA, MIN_OK_REPLICATES, analyse, one_block
from bench.report.analysis.cells import cell_stats
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.machines import best_throughput, ceilings, machine_summary
from bench.report.analysis.pairs import AXES, compare, not_slower, verdict, within_band
from bench.report.analysis.studies import (
    benchmark_costs,
    break_even,
    cpu_vs_gpu,
    crossover,
    crossovers,
    determinism,
    dynamic_shapes,
)
from bench.report.input.load import load_reports
from bench.report.vocabulary import Verdict

from .builders import axes, cell, env_for, result_row

ENV = env_for("box", "run-1")


def _load(write_tree, rows, env=ENV):
    return load_reports(write_tree([(env, rows, [])]))


def _pair(write_tree, base_times, var_times, axis="cudnn_benchmark", **extra):
    values = {"cudnn_benchmark": ("off", "on"), "precision": ("fp32", "amp-bf16")}[axis]
    rows = cell(ENV, axes(**{axis: values[0]}), base_times, **extra.get("base", {}))
    rows += cell(ENV, axes(**{axis: values[1]}), var_times, **extra.get("var", {}))
    return compare(_load(write_tree, rows), axis)


def test_cell_stats_summarise_replicates(write_tree):
    rows = cell(ENV, axes(), [0.10, 0.12, 0.11, 0.50]) + cell(
        ENV, axes(model="vit_b_16"), [0.2, None]
    )
    cells = cell_stats(_load(write_tree, rows)).set_index("model")
    r50 = cells.loc["resnet50"]
    assert r50["steady_median_s"] == pytest.approx(0.115)  # median of replicate medians
    assert r50["iqr_s"] == pytest.approx(
        np.subtract(*np.percentile([0.10, 0.12, 0.11, 0.50], [75, 25]))
    )
    assert r50["cv"] == pytest.approx(np.std([0.10, 0.12, 0.11, 0.50], ddof=1) / 0.2075)
    assert (r50["n_total"], r50["n_ok"], r50["too_few_ok"]) == (4, 4, False)
    assert r50["anchor"] == f"cell-{ENV['fingerprint_id'][:8]}-{r50['cell_id']}"
    assert r50["page"] == f"box-{ENV['fingerprint_id'][:8]}"
    assert r50["model_family"] == "resnet"
    vit = cells.loc["vit_b_16"]
    assert (vit["n_ok"], vit["n_crash"], vit["too_few_ok"]) == (1, 1, True)
    assert vit["status_summary"] == "1 ok, 1 crash"
    assert vit["reasons"] == ("test crash",)


@pytest.mark.parametrize(
    ("base", "var", "expected"),
    [
        ([1.00, 1.01, 0.99], [0.50, 0.505, 0.495], "faster"),
        ([1.00, 1.01, 0.99], [2.00, 2.02, 1.98], "slower"),
        ([1.00, 1.01, 0.99], [1.00, 0.995, 1.005], "no clear difference"),
        ([1.02] * 3, [1.00] * 3, "no clear difference"),  # 2 % is inside δ = 3 %
        ([1.04] * 3, [1.00] * 3, "faster"),  # identical replicates: the CI is the point
        ([0.90, 1.10, 1.00], [0.80, 0.95, 1.05], "no clear difference"),  # noisy: CI straddles
        ([1.00, 1.01, 0.99], [0.50, 0.505, None], Verdict.INSUFFICIENT),
    ],
)
def test_verdict_thresholds(write_tree, base, var, expected):
    pairs = _pair(write_tree, base, var)
    assert len(pairs) == 1
    row = pairs.iloc[0]
    assert row["verdict"] == expected
    ok_var = [v for v in var if v is not None]
    assert row["speedup"] == pytest.approx(np.median(base) / np.median(ok_var))
    if expected == Verdict.INSUFFICIENT:
        assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
        assert (row["n_base"], row["n_var"]) == (3, 2)
    else:
        assert row["ci_low"] <= row["speedup"] * (1 + 1e-6) and row["speedup"] <= row["ci_high"] * (
            1 + 1e-6
        )


def test_verdict_function_is_strict_at_the_band_edge():
    edge = 1 + DELTA
    assert verdict(edge, 2.0, 3, 3) == "no clear difference"
    assert verdict(edge + 1e-9, 2.0, 3, 3) == "faster"
    assert verdict(0.5, 1 - DELTA - 1e-9, 3, 3) == "slower"
    assert verdict(1.5, 2.0, 3, MIN_OK_REPLICATES - 1) == Verdict.INSUFFICIENT


def test_ci_of_a_pair_does_not_depend_on_other_pairs():
    rng = np.random.default_rng(1)
    xs = [tuple(rng.lognormal(0, 0.05, 3)) for _ in range(50)]
    ys = [tuple(rng.lognormal(0, 0.05, 3)) for _ in range(50)]
    _, lo_all, hi_all = ratio_ci(xs, ys)
    _, lo_one, hi_one = ratio_ci(xs[7:8], ys[7:8])
    assert lo_all[7] == lo_one[0] and hi_all[7] == hi_one[0]
    again = ratio_ci(xs, ys)
    assert np.array_equal(again[1], lo_all) and np.array_equal(again[2], hi_all)


def test_pairs_need_every_other_axis_equal(write_tree):
    rows = cell(ENV, axes(), [0.1] * 3)
    rows += cell(ENV, axes(cudnn_benchmark="on", batch_size=128), [0.08] * 3)  # differs twice
    rows += cell(ENV, axes(cudnn_benchmark="on", cudnn_benchmark_limit=0), [0.07] * 3)
    pairs = compare(_load(write_tree, rows), "cudnn_benchmark")
    # benchmark_limit is ignored for this axis (off has no limit); batch size is not
    assert len(pairs) == 1
    assert pairs.iloc[0]["cudnn_benchmark_limit"] == 0
    assert pairs.iloc[0]["batch_size"] == 64


def test_results_are_never_pooled_across_fingerprints(write_tree):
    old = env_for("box", "run-0", torch_version="2.13.0")
    assert old["fingerprint_id"] != ENV["fingerprint_id"]
    root = write_tree(
        [
            (old, cell(old, axes(), [0.2] * 3), []),  # benchmark off, old torch only
            (
                ENV,
                cell(ENV, axes(), [0.1] * 3) + cell(ENV, axes(cudnn_benchmark="on"), [0.05] * 3),
                [],
            ),
        ]
    )
    ds = load_reports(root)
    cells = cell_stats(ds)
    same = cells.loc[cells["cudnn_benchmark"] == "off"]
    assert len(same) == 2 and same["cell_id"].nunique() == 1  # one cell id, two fingerprints
    assert sorted(same["steady_median_s"]) == [0.1, 0.2]
    assert same["page"].nunique() == 2
    pairs = compare(cells, "cudnn_benchmark")
    assert len(pairs) == 1  # the old fingerprint's off cell has no on partner on its machine
    assert pairs.iloc[0]["fingerprint_id"] == ENV["fingerprint_id"]
    assert pairs.iloc[0]["speedup"] == pytest.approx(2.0)


def test_break_even_including_never():
    got = break_even(
        np.array([10.0, 10.0, -1.0, 5.0, np.nan, -1.0]), np.array([0.1, 0.0, 0.1, -0.2, 0.1, 0.0])
    )
    assert got[0] == pytest.approx(100.0)
    assert got[1] == got[3] == got[5] == math.inf  # no saving: never pays back
    assert got[2] == 0.0  # cheaper cold pass and a saving: pays from the start
    assert math.isnan(got[4])


def test_benchmark_costs(write_tree):
    base = {
        "cold_pass_s": 0.5,
        "peak_mem_allocated_bytes": 1e9,
        "cold_peak_mem_allocated_bytes": 1e9,
    }
    helps = {
        "cold_pass_s": 2.5,
        "peak_mem_allocated_bytes": 1.1e9,
        "cold_peak_mem_allocated_bytes": 2e9,
    }
    rows = cell(ENV, axes(), [0.10] * 3, **base) + cell(
        ENV, axes(cudnn_benchmark="on"), [0.08] * 3, **helps
    )
    rows += cell(ENV, axes(model="vit_b_16"), [0.10] * 3, **base)
    rows += cell(ENV, axes(model="vit_b_16", cudnn_benchmark="on"), [0.12] * 3, **helps)
    costs = benchmark_costs(_load(write_tree, rows)).set_index("model")
    r50 = costs.loc["resnet50"]
    assert r50["verdict"] == "faster"
    assert r50["extra_cold_pass_s"] == pytest.approx(2.0)
    assert r50["saving_per_iter_s"] == pytest.approx(0.02)
    assert r50["break_even_iters"] == pytest.approx(100.0)
    assert r50["break_even_iters_low"] <= 100.0 + 1e-6 <= r50["break_even_iters_high"] + 2e-6
    assert r50["extra_cold_peak_mem_allocated_bytes"] == pytest.approx(1e9)
    assert r50["extra_peak_mem_allocated_bytes"] == pytest.approx(1e8)
    vit = costs.loc["vit_b_16"]
    assert vit["verdict"] == "slower" and vit["break_even_iters"] == math.inf


def _curve(batches, verdicts):
    return pd.DataFrame({"batch_size": batches, "verdict": verdicts})


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["slower", "faster", "faster", "faster"], 8),
        (["faster", "faster", "faster", "faster"], 1),
        (["faster", "faster", "slower", "faster"], 128),  # must win at every larger batch
        (["faster", "faster", "faster", "no clear difference"], None),
        (["slower", "faster", Verdict.INSUFFICIENT, "faster"], 8),  # a failed batch: no answer
        ([Verdict.INSUFFICIENT] * 4, None),
        (["slower", "slower", "slower", "slower"], None),
    ],
)
def test_crossover(verdicts, expected):
    shuffled = _curve([32, 1, 128, 8], [verdicts[2], verdicts[0], verdicts[3], verdicts[1]])
    assert crossover(shuffled) == expected


def test_cpu_vs_gpu_pairs_and_crossovers(write_tree):
    rows = []
    cpu_s = {1: 0.004, 8: 0.030, 32: 0.12}
    gpu_s = {1: 0.006, 8: 0.007, 32: 0.010}
    for b in (1, 8, 32):
        rows += cell(
            ENV, axes(device="cpu", mode="infer", batch_size=b, cpu_threads=4), [cpu_s[b]] * 3
        )
        rows += cell(ENV, axes(mode="infer", batch_size=b), [gpu_s[b]] * 3)
        # a GPU cell with benchmark on is not the CPU's partner
        rows += cell(
            ENV, axes(mode="infer", batch_size=b, cudnn_benchmark="on"), [gpu_s[b] / 9] * 3
        )
    cells = cell_stats(_load(write_tree, rows))
    cvg = cpu_vs_gpu(cells)
    assert len(cvg) == 3
    assert cvg["speedup"].round(6).tolist() == [round(cpu_s[b] / gpu_s[b], 6) for b in (1, 8, 32)]
    assert set(cvg["cudnn_benchmark"]) == {"off"} and set(cvg["cpu_threads"]) == {4}
    curves = crossovers(cvg)
    assert len(curves) == 1 and curves.iloc[0]["crossover_batch"] == 8
    assert curves.iloc[0]["verdicts"] == ("slower", "faster", "faster")


def test_best_throughput_keeps_a_faster_cell_with_too_few_replicates_flagged(write_tree):
    """A GPU cell that lost a replicate still beats the CPU cell, marked insufficient; the
    box is not reported at its CPU's speed."""
    rows = cell(ENV, axes(device="cpu", mode="infer", batch_size=1, cpu_threads=4), [0.03] * 3)
    rows += cell(ENV, axes(mode="infer", batch_size=1), [0.003, 0.004, None])
    best = best_throughput(cell_stats(_load(write_tree, rows)))
    assert len(best) == 1
    top = best.iloc[0]
    assert top["device"] == "cuda" and bool(top["too_few_ok"]) and top["n_ok"] == 2
    # the batch over the median step (the step time the pages print beside it)
    assert top["samples_per_s"] == pytest.approx(1 / 0.0035)
    assert top["steady_median_s"] == pytest.approx(0.0035)


def test_pct_of_peak_uses_the_matching_ceiling(write_tree):
    rows = []
    for op, rate in (("matmul-bf16", 800e12), ("matmul-tf32", 400e12), ("matmul-fp32", 50e12)):
        ax = axes(
            model=op,
            mode="",
            batch_size="",
            resolution="",
            precision="",
            memory_format="",
            shapes="",
            cudnn_benchmark="n/a",
            cudnn_deterministic="n/a",
            cudnn_benchmark_limit="",
        )
        rows += cell(
            ENV, ax, [1e12 / rate] * 3, kind="ceiling", work_per_iter=1e12, work_unit="flop"
        )
    # 64 samples/0.1 s × 4e9 flop = 2.56e12 flop/s
    rows += cell(ENV, axes(precision="fp32"), [0.1] * 3)
    rows += cell(ENV, axes(precision="fp32-strict"), [0.1] * 3, eff_cudnn_allow_tf32="false")
    rows += cell(ENV, axes(precision="amp-bf16"), [0.1] * 3)
    cpu = axes(device="cpu", precision="fp32", cpu_threads=4)
    rows += cell(ENV, cpu, [0.1] * 3)
    cells = cell_stats(_load(write_tree, rows))
    model = cells.loc[cells["kind"] == "model"].set_index(["device", "precision"])
    assert model.loc[("cuda", "fp32"), "peak_op"] == "matmul-tf32"
    assert model.loc[("cuda", "fp32"), "pct_of_peak"] == pytest.approx(100 * 2.56e12 / 400e12)
    assert model.loc[("cuda", "fp32-strict"), "pct_of_peak"] == pytest.approx(100 * 2.56e12 / 50e12)
    assert model.loc[("cuda", "amp-bf16"), "pct_of_peak"] == pytest.approx(100 * 2.56e12 / 800e12)
    assert math.isnan(model.loc[("cpu", "fp32"), "pct_of_peak"])  # no CPU ceiling measured
    ceil = ceilings(cells).set_index("op")
    assert ceil.loc["matmul-tf32", "achieved"] == pytest.approx(400.0)
    assert ceil.loc["matmul-tf32", "unit"] == "TFLOP/s"


def test_dynamic_shapes_penalty(write_tree):
    rows = []
    for bm, cold in (("off", 1.0), ("on", 7.0)):
        rows += cell(ENV, axes(cudnn_benchmark=bm), [0.1] * 3, cold_pass_s=0.5)
        dyn = axes(cudnn_benchmark=bm, shapes="dynamic")
        rows += cell(ENV, dyn, [0.1] * 3, cold_pass_s=cold, shape_count=4, samples_per_s=600)
    shapes = dynamic_shapes(_load(write_tree, rows)).set_index("cudnn_benchmark")
    assert shapes.loc["off", "penalty_per_shape_s"] == pytest.approx(1.0 / 4 - 0.1)
    assert shapes.loc["on", "penalty_per_shape_s"] == pytest.approx(7.0 / 4 - 0.1)
    assert shapes.loc["on", "penalty_vs_bm_off_s"] == pytest.approx(1.5)
    assert math.isnan(shapes.loc["off", "penalty_vs_bm_off_s"])
    assert shapes.loc["on", "extra_cold_per_new_shape_s"] == pytest.approx((7.0 - 0.5) / 3)
    assert shapes.loc["on", "slowdown"] == pytest.approx(640 / 600)  # throughput, static/dynamic


def test_determinism_joins_the_rerun_checks(write_tree):
    rows = cell(ENV, axes(), [0.10] * 3) + cell(ENV, axes(cudnn_deterministic="on"), [0.13] * 3)
    rows.append(
        result_row(ENV, axes(), kind="repro", repro_bitwise_equal="false", repro_max_abs_diff=3e-6)
    )
    rows.append(
        result_row(
            ENV,
            axes(cudnn_deterministic="on"),
            kind="repro",
            repro_bitwise_equal="true",
            repro_max_abs_diff=0.0,
        )
    )
    ds = _load(write_tree, rows)
    det = determinism(ds)
    assert len(det) == 1
    row = det.iloc[0]
    assert row["verdict"] == "slower"
    assert (bool(row["base_bitwise_equal"]), bool(row["var_bitwise_equal"])) == (False, True)
    assert row["base_max_abs_diff"] == pytest.approx(3e-6)
    assert row["var_repro_anchor"] == f"repro-{row['fingerprint_id'][:8]}-{row['variant_cell_id']}"
    assert len(cell_stats(ds)) == 2  # repro rows are not cells


def test_analyse_bundles_every_table(write_tree):
    rows = cell(ENV, axes(), [0.10] * 3) + cell(ENV, axes(cudnn_benchmark="on"), [0.08] * 3)
    analysis = analyse(_load(write_tree, rows))
    assert set(analysis.comparisons) == set(AXES)
    assert len(analysis.benchmark) == 1 and analysis.shapes.empty and analysis.cpu_gpu.empty
    assert analysis.machines.iloc[0]["gpu_name"] == "Test GPU"


def test_a_fingerprint_measured_again_under_a_newer_step_is_superseded(write_tree):
    """The machine summary says which fingerprints a newer step definition replaced: the same
    machine, an older step; other machines, and unreadable versions (read as step 1), not."""
    runs = []
    for run_id, torch, step in (("old", "2.13.0", 2), ("new", "2.14.1", 3), ("newer", "2.14.2", 3)):
        env = env_for("laptop", run_id, torch_version=torch)
        env["bench"] = {"workload_version": step}
        env["fingerprint_id"] = fingerprint_id(env)  # the loader recomputes it from the file
        runs.append((env, cell(env, axes(), [0.1] * 3), []))
    other = env_for("box", "run", torch_version="2.12.0")
    other["bench"] = {"workload_version": "not a number"}
    other["fingerprint_id"] = fingerprint_id(other)
    runs.append((other, cell(other, axes(), [0.1] * 3), []))
    summary = machine_summary(load_reports(write_tree(runs))).set_index("torch_version")
    assert summary["superseded"].to_dict() == {
        "2.12.0": False, "2.13.0": True, "2.14.1": False, "2.14.2": False,
    }
    assert summary["step_version"].to_dict() == {
        "2.12.0": 1.0, "2.13.0": 2.0, "2.14.1": 3.0, "2.14.2": 3.0,
    }
    assert summary.loc["2.13.0", "newest_step_version"] == 3.0
    assert summary.loc["2.12.0", "newest_step_version"] == 1.0


def test_threaded_comparisons_match_serial_ones():
    """analyse() runs the comparisons in a forked worker too: the same tables as one compare()
    after another, whatever order the jobs finish in (both with text as Python objects)."""
    from .builders import FIXTURE_REPORTS

    ds = load_reports(FIXTURE_REPORTS)
    analysis = analyse(ds)
    cells = one_block(cell_stats(ds))
    for axis in AXES:
        pd.testing.assert_frame_equal(analysis.comparisons[axis],
                                      one_block(compare(cells, axis)))


def test_text_is_held_as_python_objects():
    """Every table the judge reads holds its text as Python objects, in one block per type:
    an Arrow string column is copied on its own each time rows are selected."""
    from .builders import FIXTURE_REPORTS

    analysis = analyse(load_reports(FIXTURE_REPORTS))
    tables = {"cells": analysis.cells, "results": analysis.source.results,
              **{f"pairs {a}": f for a, f in analysis.comparisons.items()},
              "cpu_gpu": analysis.cpu_gpu, "machines": analysis.machines}
    for name, frame in tables.items():
        arrow = [c for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)]
        assert not arrow, f"{name}: {arrow}"


def test_degenerate_intervals_do_not_warn():
    """Zero or identical replicates are normal here: no warning from numpy or SciPy, in this
    thread or in worker threads, and no warning filter is needed for it."""
    import warnings
    from concurrent.futures import ThreadPoolExecutor

    zeros, same = [[0.0, 0.0, 0.0]], [[0.2, 0.2, 0.2]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est, lo, hi = ratio_ci(zeros, zeros)
        assert np.isnan(est[0]) and np.isnan(lo[0]) and np.isnan(hi[0])
        est, lo, hi = ratio_ci(same, [[0.1, 0.1, 0.1]])
        assert lo[0] == est[0] == hi[0] == 2.0
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: ratio_ci(zeros, zeros), range(8)))
    assert all(np.isnan(est[0]) for est, _, _ in results)


@pytest.mark.parametrize(
    ("low", "high", "within", "no_cost"),
    [
        (0.99, 1.01, True, True),
        (0.9651, 1.0349, True, True),  # printed 0.97–1.03: the sentence must agree with it
        (0.9649, 1.01, False, False),  # printed 0.96
        (0.98, 1.05, False, True),  # a possible gain beyond δ, but no possible cost
        (math.nan, 1.0, False, False),
        (None, None, False, False),
    ],
)
def test_band_as_printed(low, high, within, no_cost):
    assert within_band(low, high) is within
    assert not_slower(low) is no_cost


def test_compile_costs_pair_eager_with_each_mode_fresh_and_warm(write_tree):
    from bench.report.analysis.compiled import compile_costs

    eager = {"cold_pass_s": 0.5}
    rows = []
    for cache, compile_cold in (("fresh", 40.5), ("warm", 4.5)):
        rows += cell(ENV, axes(kernel_cache=cache), [0.10] * 3, **eager)
        rows += cell(ENV, axes(kernel_cache=cache, compile="default"), [0.08] * 3,
                     cold_pass_s=compile_cold, compile_time_s=compile_cold - 0.5, compiles=1,
                     recompiles=0, steady_graph_breaks=2)
    rows += cell(ENV, axes(compile="max-autotune", compile_dynamic="true"), [0.11] * 3,
                 cold_pass_s=100.5)
    costs = compile_costs(_load(write_tree, rows))
    fresh = costs.loc[(costs["kernel_cache"] == "fresh") & (costs["variant_value"] == "default")]
    (r,) = fresh.itertuples()
    assert r.verdict == "faster" and r.baseline_value == "off"
    assert r.extra_cold_pass_s == pytest.approx(40.0)
    assert r.break_even_iters == pytest.approx(2000.0)  # 40 s / 0.02 s saved per step
    assert r.warm_extra_cold_pass_s == pytest.approx(4.0)  # the warm pair, beside it
    assert r.warm_break_even_iters == pytest.approx(200.0)
    assert r.var_compile_time_s == pytest.approx(40.0) and r.var_steady_graph_breaks_max == 2
    slow = costs.loc[costs["variant_value"] == "max-autotune"].iloc[0]
    assert slow["compile_dynamic"] == "true"  # dynamic= is the compiled side's
    assert slow["verdict"] == "slower" and slow["break_even_iters"] == math.inf


def test_the_best_window_is_a_median_and_never_reads_slower_than_the_sustained_rate(write_tree):
    """One slow iteration inside every 10-iteration window, and an even number of replicates
    (the median of two is their mean): the best window stays at or above the sustained rate."""
    ax = axes(model="matmul-fp32", mode="", batch_size="", resolution="", precision="",
              memory_format="", shapes="", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
              cudnn_benchmark_limit="")
    rows = [result_row(ENV, ax, i, kind="ceiling", seconds=s, work_per_iter=1e12,
                       work_unit="flop", steady_iters=12) for i, s in enumerate((1.0, 0.5))]
    samples = []
    for row, times in zip(rows, ([1.0] * 6 + [2.0] + [1.0] * 5, [0.5] * 12)):
        ids = {k: row.get(k, "") for k in ("schema_version", "run_id", "fingerprint_id",
                                           "cell_id", "replicate", "attempt_id")}
        samples += [{**ids, "phase": "steady", "iter": i, "batch_size": 1, "resolution": 1,
                     "seconds": t} for i, t in enumerate(times)]
    ceil = ceilings(cell_stats(load_reports(write_tree([(ENV, rows, samples)])))).iloc[0]
    assert ceil["achieved"] == pytest.approx(1.5)  # the median of 1 and 2 TFLOP/s
    assert ceil["burst"] == pytest.approx(1.5)
