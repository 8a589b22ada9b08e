"""The studies the pages report, each a table built from the comparisons and the cells:
cudnn.benchmark's costs and break-even, dynamic shapes, determinism and its re-run checks, and
CPU against GPU with the batch from which the GPU wins.

Each takes the cells (or a dataset) and, optionally, its comparison already computed, so that
``analyse`` bootstraps every pair once. Every table's columns are a module constant.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from bench import schema
from bench.report.analysis.cells import (
    MEMORY,
    WHOLE_MEMORY,
    Source,
    cells_of,
    machine_names,
    page_slug,
)
from bench.report.analysis.energy import PAIR_ENERGY_COLUMNS, with_cell_figures
from bench.report.analysis.pairs import (
    COMPARE_COLUMNS,
    compare,
    join_cells,
    row_keys,
)
from bench.report.input.load import Dataset
from bench.report.vocabulary import Verdict
from bench.schema import Status

_COST_MEMORY = (*MEMORY[:4], *WHOLE_MEMORY)
#: The cells' figures ``benchmark_costs`` brings onto each pair, as base_<col> and var_<col>.
COST_CELL_COLUMNS: Final = (
    "cold_pass_s", "cold_pass_min_s", "cold_pass_max_s", "cold_first_iter_s", *_COST_MEMORY,
)  # fmt: skip


#: The same configuration's figures with a warm kernel cache, beside each cold-cache pair.
WARM_COLUMNS: Final = {
    "warm_extra_cold_pass_s": "extra_cold_pass_s",
    "warm_extra_cold_pass_max_s": "extra_cold_pass_max_s",
    "warm_break_even_iters": "break_even_iters",
    "warm_break_even_iters_low": "break_even_iters_low",
    "warm_break_even_iters_high": "break_even_iters_high",
}


#: What ``one_off_costs`` adds to a comparison's columns.
COST_COLUMNS: Final = (
    *(f"{side}_{col}" for side in ("base", "var") for col in COST_CELL_COLUMNS),
    "extra_cold_pass_s", "extra_cold_pass_max_s", "extra_cold_first_iter_s",
    *(f"extra_{col}" for col in _COST_MEMORY), "extra_whole_peak_mem_share",
    "saving_per_iter_s", "break_even_iters", "break_even_iters_low", "break_even_iters_high",
)  # fmt: skip
#: What ``benchmark_costs`` returns.
BENCHMARK_COLUMNS: Final = (*COMPARE_COLUMNS["cudnn_benchmark"], *COST_COLUMNS, *WARM_COLUMNS)


def benchmark_costs(data: Source, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """cudnn.benchmark off → on: what it saves per step, what it costs up front, and break-even.

    Columns ``BENCHMARK_COLUMNS``: the comparison (each pair within one kernel-cache state),
    then ``COST_CELL_COLUMNS`` of each side from the cells (base_/var_). extra_cold_pass_s and
    extra_cold_first_iter_s are on − off (medians); extra_cold_pass_max_s is the slowest
    benchmark-on replicate's cold pass − the median one off (what "adds up to" may say, true of
    every replicate); extra_<memory column> is on − off, and extra_whole_peak_mem_share the
    whole-replicate allocated peak's growth as a share. saving_per_iter_s is steady off − on;
    break_even_iters = median extra cold seconds / saving per iteration (0 when the cold pass is
    no dearer, ``inf`` = never when the saving is ≤ 0); break_even_iters_low uses the median
    extra and the CI's largest saving, break_even_iters_high the slowest replicate's extra and
    the CI's smallest saving (``inf`` when the CI allows no saving). Pairs with an empty or
    shared cache also get the same configuration's warm-cache figures (``WARM_COLUMNS``), where
    one was measured (NaN otherwise).
    """
    cells = cells_of(data)
    pairs = compare(cells, "cudnn_benchmark") if pairs is None else pairs
    return with_warm(one_off_costs(cells, pairs), "cudnn_benchmark")[list(BENCHMARK_COLUMNS)]


def one_off_costs(data: Source, pairs: pd.DataFrame) -> pd.DataFrame:
    """Any comparison's pairs with ``COST_COLUMNS``: what the variant costs up front (its
    first pass, its memory) against what it saves per step, and when it pays back (see
    ``benchmark_costs``, whose figures these are; cudnn.benchmark is where the up-front cost
    is large, but every setting has a first pass)."""
    cells = cells_of(data)
    out = join_cells(pairs, cells, COST_CELL_COLUMNS)
    out["extra_cold_pass_s"] = out["var_cold_pass_s"] - out["base_cold_pass_s"]
    out["extra_cold_pass_max_s"] = out["var_cold_pass_max_s"] - out["base_cold_pass_s"]
    out["extra_cold_first_iter_s"] = out["var_cold_first_iter_s"] - out["base_cold_first_iter_s"]
    for col in _COST_MEMORY:
        out[f"extra_{col}"] = out[f"var_{col}"] - out[f"base_{col}"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["extra_whole_peak_mem_share"] = out[
            "extra_whole_peak_mem_allocated_bytes"
        ].astype(float) / out["base_whole_peak_mem_allocated_bytes"].astype(float)
    base = out["base_median_s"].astype(float)
    out["saving_per_iter_s"] = base - out["var_median_s"].astype(float)
    extra = out["extra_cold_pass_s"].astype(float)
    out["break_even_iters"] = break_even(extra, out["saving_per_iter_s"])
    saving_hi = base * (1 - 1 / out["ci_high"].astype(float))
    saving_lo = base * (1 - 1 / out["ci_low"].astype(float))
    out["break_even_iters_low"] = break_even(extra, saving_hi)
    out["break_even_iters_high"] = break_even(out["extra_cold_pass_max_s"], saving_lo)
    return out


def with_warm(costs: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Beside each empty- or shared-cache pair of ``axis``, the same configuration's
    warm-cache figures (``WARM_COLUMNS``)."""
    for col in WARM_COLUMNS:
        costs[col] = np.nan
    if costs.empty or "kernel_cache" not in costs.columns:
        return costs
    key = ["fingerprint_id", "variant_value",
           *(c for c in schema.AXIS_COLUMNS if c not in (axis, "kernel_cache"))]
    warm = costs.loc[costs["kernel_cache"] == "warm"].drop_duplicates(key, keep="last")
    if warm.empty:
        return costs
    lookup = warm.set_index(row_keys(warm, key))
    found = lookup.reindex(row_keys(costs, key))
    cold = (costs["kernel_cache"] != "warm").to_numpy()
    for col, src in WARM_COLUMNS.items():
        costs[col] = np.where(cold, found[src].to_numpy(dtype=float), np.nan)
    return costs


def break_even(
    extra_cold_s: pd.Series | np.ndarray, saving_per_iter_s: pd.Series | np.ndarray
) -> np.ndarray:
    """Iterations after which a one-off cost is paid back; ``inf`` when the saving is ≤ 0."""
    extra = np.asarray(extra_cold_s, dtype=float)
    saving = np.asarray(saving_per_iter_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = extra / saving
    return np.select(
        [np.isnan(extra) | np.isnan(saving), saving <= 0, extra <= 0],
        [np.nan, np.inf, 0.0],
        ratio,
    )


#: The cells' figures ``dynamic_shapes`` brings onto each pair, as base_<col> and var_<col>.
SHAPES_CELL_COLUMNS: Final = ("cold_pass_s", "shape_count", "steady_median_s")
#: What ``dynamic_shapes`` returns.
SHAPES_COLUMNS: Final = (
    *COMPARE_COLUMNS["shapes"],
    *(f"{side}_{col}" for side in ("base", "var") for col in SHAPES_CELL_COLUMNS),
    "shape_count", "slowdown", "slowdown_ci_low", "slowdown_ci_high", "penalty_per_shape_s",
    "extra_cold_per_new_shape_s", "penalty_vs_bm_off_s",
)  # fmt: skip


def dynamic_shapes(data: Source, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Dynamic and ragged shapes against static, at each cudnn.benchmark setting.

    Columns ``SHAPES_COLUMNS``: the comparison (speedup on throughput, so < 1 is a slowdown),
    then ``SHAPES_CELL_COLUMNS`` of each side (base_/var_); shape_count (the variant's);
    slowdown (= 1/speedup) with slowdown_ci_low/high; penalty_per_shape_s = variant cold_pass_s
    / shape_count − its steady step (what each new shape costs over a normal step);
    extra_cold_per_new_shape_s = (variant cold pass − static cold pass) / (shape_count − 1);
    and, on benchmark-on rows, penalty_vs_bm_off_s = this penalty − the same comparison's
    penalty with benchmark off.
    """
    cells = cells_of(data)
    pairs = compare(cells, "shapes") if pairs is None else pairs
    out = join_cells(pairs, cells, SHAPES_CELL_COLUMNS)
    out["shape_count"] = out["var_shape_count"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["slowdown"] = 1 / out["speedup"].astype(float)
        out["slowdown_ci_low"] = 1 / out["ci_high"].astype(float)
        out["slowdown_ci_high"] = 1 / out["ci_low"].astype(float)
    count = out["var_shape_count"].astype("Float64").astype(float)
    out["penalty_per_shape_s"] = out["var_cold_pass_s"] / count - out["var_steady_median_s"]
    out["extra_cold_per_new_shape_s"] = (out["var_cold_pass_s"] - out["base_cold_pass_s"]) / (
        count - 1
    ).where(count > 1)
    key = [
        "fingerprint_id",
        "variant_value",
        *(
            c
            for c in schema.AXIS_COLUMNS
            if c not in ("shapes", "cudnn_benchmark", "cudnn_benchmark_limit")
        ),
    ]
    off = out.loc[out["cudnn_benchmark"] == "off"].drop_duplicates(key, keep="last")
    off_penalty = off.set_index(row_keys(off, key))["penalty_per_shape_s"]
    mine = off_penalty.reindex(row_keys(out, key)).to_numpy()
    out["penalty_vs_bm_off_s"] = np.where(
        out["cudnn_benchmark"] == "on", out["penalty_per_shape_s"].to_numpy() - mine, np.nan
    )
    return out[list(SHAPES_COLUMNS)]


#: What ``repro_checks`` returns.
REPRO_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "cell_id", "cell_name", "anchor", "cell_anchor",
    *schema.AXIS_COLUMNS, "n_checks", "n_ok_checks", "n_equal", "bitwise_equal",
    "max_abs_diff", "status_summary",
)  # fmt: skip
#: What ``determinism`` returns.
DETERMINISM_COLUMNS: Final = (
    *COMPARE_COLUMNS["cudnn_deterministic"],
    *(f"{side}_{col}" for side in ("base", "var")
      for col in ("n_checks", "bitwise_equal", "max_abs_diff", "repro_anchor")),
)  # fmt: skip


def repro_checks(ds: Dataset) -> pd.DataFrame:
    """The bitwise re-run checks, one row per (fingerprint_id, checked cell_id).

    Columns ``REPRO_COLUMNS``: anchor is ``repro-<fingerprint>-<id>``, cell_anchor
    ``cell-<fingerprint>-<id>`` (the checked cell); bitwise_equal is True only if every ok
    check was equal (NA without an ok check); max_abs_diff is the largest over ok checks.
    """
    res = ds.results
    rep = res.loc[res["kind"] == "repro"]
    cols = list(REPRO_COLUMNS)
    if rep.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    key = ["fingerprint_id", "cell_id"]
    g = rep.groupby(key, sort=True)
    out = g[["machine", "cell_name", *schema.AXIS_COLUMNS]].last()
    out["n_checks"] = g.size()
    ok = rep.loc[rep["status"] == Status.OK]
    go = ok.groupby(key)
    out["n_ok_checks"] = go.size().reindex(out.index, fill_value=0)
    equal = ok["repro_bitwise_equal"].fillna(False).astype(bool)
    out["n_equal"] = equal.groupby([ok[k] for k in key]).sum().reindex(out.index, fill_value=0)
    all_equal = out["n_equal"] == out["n_ok_checks"]
    out["bitwise_equal"] = pd.array(
        np.where(out["n_ok_checks"] > 0, all_equal, False), dtype="boolean"
    )
    out.loc[out["n_ok_checks"] == 0, "bitwise_equal"] = pd.NA
    out["max_abs_diff"] = go["repro_max_abs_diff"].max().reindex(out.index)
    statuses = rep.groupby(key)["status"].agg(
        lambda s: ", ".join(
            f"{n} {st}"
            for st, n in s.value_counts().reindex(schema.STATUSES).dropna().astype(int).items()
        )
    )
    out["status_summary"] = statuses.reindex(out.index)
    out = out.reset_index()
    names = machine_names(ds.results)  # one name a fingerprint, whoever ran each check
    out["machine"] = out["fingerprint_id"].astype(str).map(names)
    out["page"] = [page_slug(m, f) for m, f in zip(out["machine"], out["fingerprint_id"])]
    fp8 = out["fingerprint_id"].str.slice(0, 8)
    out["anchor"] = "repro-" + fp8 + "-" + out["cell_id"]
    out["cell_anchor"] = "cell-" + fp8 + "-" + out["cell_id"]
    return out[cols]


def determinism(
    ds: Dataset,
    cells: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    checks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """deterministic off → on: the comparison plus each side's re-run check.

    Columns ``DETERMINISM_COLUMNS``: base_/var_ n_checks, bitwise_equal, max_abs_diff and
    repro_anchor (NaN/NA where the cell had no check). A "slower" verdict is the price of
    reproducibility; an unequal re-run with deterministic off is why one might pay it.
    """
    if pairs is None:
        pairs = compare(cells_of(ds) if cells is None else cells, "cudnn_deterministic")
    checks = (repro_checks(ds) if checks is None else checks).set_index(
        ["fingerprint_id", "cell_id"]
    )
    out = pairs.copy()
    for side, id_col in (("base", "baseline_cell_id"), ("var", "variant_cell_id")):
        idx = pd.MultiIndex.from_arrays([out["fingerprint_id"], out[id_col]])
        joined = checks.reindex(idx)
        out[f"{side}_n_checks"] = joined["n_checks"].fillna(0).astype("int64").to_numpy()
        out[f"{side}_bitwise_equal"] = pd.array(joined["bitwise_equal"].to_numpy(), dtype="boolean")
        out[f"{side}_max_abs_diff"] = joined["max_abs_diff"].astype(float).to_numpy()
        out[f"{side}_repro_anchor"] = joined["anchor"].fillna("").to_numpy()
    return out[list(DETERMINISM_COLUMNS)]


#: What ``cpu_vs_gpu`` returns: the device comparisons whose variant is CUDA.
CPU_GPU_COLUMNS: Final = (*COMPARE_COLUMNS["device"], *PAIR_ENERGY_COLUMNS)


def cpu_vs_gpu(data: Source, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """CPU → CUDA per model × batch × mode (and the other axes): compare(..., "device") rows,
    with each side's latency tail and energy (``energy.PAIR_ENERGY_COLUMNS``)."""
    pairs = compare(data, "device") if pairs is None else pairs
    found = pairs.loc[pairs["variant_value"] == "cuda"].reset_index(drop=True)
    return with_cell_figures(found, cells_of(data))


#: What identifies one speedup-vs-batch curve.
CURVE_KEY = [
    "fingerprint_id",
    "machine",
    "page",
    "model",
    *schema.USER_MODEL_AXES,
    "mode",
    "resolution",
    "precision",
    "memory_format",
    "shapes",
    "cpu_threads",
]


#: What ``crossovers`` returns: one row per curve.
CROSSOVER_COLUMNS: Final = (
    *CURVE_KEY, "crossover_batch", "batches", "verdicts", "speedups", "evidence",
)  # fmt: skip


def crossover(rows: pd.DataFrame) -> int | None:
    """Smallest batch from which the GPU is "faster" at that batch and every larger one.

    ``rows``: one curve's cpu_vs_gpu rows (batch_size, verdict). Batches whose comparison is
    "insufficient" (a failed or too-thin side) are not measured answers and are left out.
    None when the GPU never wins that way.
    """
    return _crossover_batch(
        rows["batch_size"].to_numpy(dtype=float), rows["verdict"].to_numpy(dtype=object)
    )


def _crossover_batch(batches: np.ndarray, verdicts: np.ndarray) -> int | None:
    known = verdicts != Verdict.INSUFFICIENT
    order = np.argsort(batches[known], kind="stable")
    batch = batches[known][order]
    faster = (verdicts[known][order] == Verdict.FASTER)[::-1]
    if not faster.size or not faster[0]:
        return None
    run = len(faster) if faster.all() else int(np.argmin(faster))  # trailing "faster" count
    return int(batch[len(batch) - run])


def crossovers(cvg: pd.DataFrame) -> pd.DataFrame:
    """crossover() per curve, columns ``CROSSOVER_COLUMNS``: crossover_batch (Int64, NA =
    never); batches, verdicts and speedups (tuples in batch order); evidence (tuple of (page,
    anchor))."""
    cols = list(CROSSOVER_COLUMNS)
    if cvg.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    df = cvg.sort_values([*CURVE_KEY, "batch_size"], kind="stable").reset_index(drop=True)
    batch = df["batch_size"].to_numpy(dtype=float)
    verdicts = df["verdict"].to_numpy(dtype=object)
    speedups = df["speedup"].to_numpy(dtype=float)
    page = df["page"].to_numpy(dtype=object)
    base = df["baseline_anchor"].to_numpy(dtype=object)
    var = df["variant_anchor"].to_numpy(dtype=object)
    keys = df[CURVE_KEY].to_numpy(dtype=object)
    rows = []
    for idx in df.groupby(CURVE_KEY, sort=True, dropna=False).indices.values():
        idx = np.sort(idx)
        evidence = tuple((page[i], a[i]) for i in idx for a in (base, var))
        rows.append(
            (
                *keys[idx[0]],
                _crossover_batch(batch[idx], verdicts[idx]),
                tuple(int(b) for b in batch[idx]),
                tuple(verdicts[idx].tolist()),
                tuple(speedups[idx].tolist()),
                evidence,
            )
        )
    out = pd.DataFrame(rows, columns=cols)
    out["crossover_batch"] = out["crossover_batch"].astype("Int64")
    return out.sort_values(CURVE_KEY, kind="stable").reset_index(drop=True)
