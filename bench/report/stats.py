"""Statistics over loaded results: per-cell figures, paired comparisons, and derived answers.

Pure functions of DataFrames (no I/O, no formatting). The constants below are what the
Methodology page quotes, so change them only together with that page.

Why these statistics:

- The unit of replication is the process, so a cell's figure is the **median of its replicates'
  steady medians**, with IQR and CV over replicates (not over iterations, which would understate
  the spread between processes: algorithm choice can differ from one process to the next).
- A comparison pairs two cells on the **same fingerprint** that differ in one axis only; results of
  different machines or software versions are never pooled (every group key has fingerprint_id).
- **speedup = median(baseline replicate medians) / median(variant replicate medians)**, so > 1 means
  the variant is faster; its 95 % CI is a percentile bootstrap over replicates (two independent
  samples, ``scipy.stats.bootstrap``, fixed seed so the site is byte-identical run to run).
- **verdict**: "faster" only if ci_low > 1 + DELTA, "slower" only if ci_high < 1 − DELTA, otherwise
  "no clear difference" (a real answer: the CI overlaps the ±DELTA band). With fewer than
  MIN_OK_REPLICATES ok replicates on either side the verdict is "insufficient" and there is no CI.

Performance: thousands of pairs are bootstrapped as one vectorised ``bootstrap`` call per
(n_base, n_var) group on stacked 2-D float32 arrays (half the memory traffic of float64, and
7 digits is plenty for an interval printed with 3), resampled in fixed-size batches to bound
memory. ``analyse()`` computes every table once so that pages and advice share them.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import numpy as np
import pandas as pd
from scipy import stats as sps

from bench import schema
from bench.report.load import Dataset
from bench.schema import DRIFT

if TYPE_CHECKING:  # typing.TypeGuard is Python 3.10+; annotations are never evaluated here
    from typing import TypeGuard

#: δ: a speedup inside [1 − δ, 1 + δ] is "no clear difference" (3 %).
DELTA = 0.03
#: Fewer ok replicates than this on either side → "insufficient", no CI, no verdict.
MIN_OK_REPLICATES = 3
#: Two-sided confidence level of every interval.
CONFIDENCE = 0.95
#: Bootstrap resamples per interval (percentile method). With the usual 3 replicates a side the
#: bootstrap distribution has at most 9 distinct values, so 1000 pins the 2.5 % and 97.5 %
#: percentiles exactly; with more replicates the bounds move by well under 1 % between seeds.
N_RESAMPLES = 1000
#: Seed of the bootstrap's generator: the same input gives the same intervals, byte for byte.
SEED = 20261129
#: Resamples drawn per vectorised step. Fixed (not sized to the data) so that a pair's interval
#: depends only on its own replicates, not on how many other pairs share its bootstrap call.
BOOTSTRAP_BATCH = 100

VERDICTS = ("faster", "slower", "no clear difference", "insufficient")

#: compare() axes: baseline value → variant values, and what is compared.
AXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "cudnn_benchmark": ("off", ("on",)),
    "cudnn_deterministic": ("off", ("on",)),
    "precision": ("fp32", ("fp32-strict", "amp-bf16", "amp-fp16")),
    "memory_format": ("nchw", ("channels_last",)),
    "device": ("cpu", ("cuda", "mps")),
    "shapes": ("static", ("dynamic", "ragged")),
}
#: Axis columns left out of the pairing key, per axis (beyond the axis itself). A benchmark-off
#: cell has no meaningful benchmark_limit; a CPU cell has no cuDNN switches, a GPU cell no threads.
_KEY_EXCLUDE: dict[str, tuple[str, ...]] = {
    "cudnn_benchmark": ("cudnn_benchmark_limit",),
    "device": ("cpu_threads", "cudnn_benchmark", "cudnn_deterministic", "cudnn_benchmark_limit"),
}
#: Context columns taken from the variant cell instead of the baseline.
_FROM_VARIANT: dict[str, tuple[str, ...]] = {
    "cudnn_benchmark": ("cudnn_benchmark_limit",),
    "device": ("cudnn_benchmark", "cudnn_deterministic", "cudnn_benchmark_limit"),
}

#: Model families, longest prefix first (``wide_resnet50_2`` is not a ``resnet``).
MODEL_FAMILIES = (
    "wide_resnet",
    "resnext",
    "resnet",
    "mobilenet",
    "convnext",
    "efficientnet",
    "regnet",
    "densenet",
    "shufflenet",
    "squeezenet",
    "mnasnet",
    "maxvit",
    "swin",
    "vit",
    "vgg",
    "alexnet",
    "googlenet",
    "inception",
)

_MEMORY = (
    "cold_peak_mem_allocated_bytes",
    "cold_peak_mem_reserved_bytes",
    "peak_mem_allocated_bytes",
    "peak_mem_reserved_bytes",
    "peak_rss_bytes",
)
_MEDIANS = (
    "steady_ci_rel",
    "samples_per_s",
    "cold_first_iter_s",
    "cold_pass_s",
    *_MEMORY,
    "flops_per_sample",
    "work_per_iter",
    "wall_s",
    "kernel_cache_end_bytes",
)
_CELL_KEY = ["fingerprint_id", "kind", "cell_id"]

Data = Union[Dataset, pd.DataFrame]


def model_family(model: str) -> str:
    """``resnet50`` → ``resnet``, ``mobilenet_v3_large`` → ``mobilenet``; else leading letters."""
    for fam in MODEL_FAMILIES:
        if model.startswith(fam):
            return fam
    match = re.match(r"[A-Za-z]+", model)
    return match.group(0).lower() if match else model


def page_slug(machine: str, fingerprint_id: str) -> str:
    """The machine page of one fingerprint: ``f"{machine}-{fingerprint_id[:8]}"``."""
    return f"{machine}-{fingerprint_id[:8]}"


def within_band(ci_low: float | None, ci_high: float | None) -> bool:
    """Whether an interval lies inside 1 ± DELTA, as the pages print it (two decimals).

    This backs wording ("within 1 ± 3%", "no measurable cost"), not verdicts: a "no clear
    difference" from a wide interval is no evidence that a setting is free. Rounding as printed
    keeps a sentence from contradicting the interval shown next to it.
    """
    return not_slower(ci_low) and _known(ci_high) and round(ci_high, 2) <= round(1 + DELTA, 2)


def not_slower(ci_low: float | None) -> bool:
    """Whether an interval rules out a slowdown beyond DELTA (as printed; see within_band)."""
    return _known(ci_low) and round(ci_low, 2) >= round(1 - DELTA, 2)


def _known(value: float | None) -> TypeGuard[float]:
    return value is not None and not math.isnan(value)


def verdict(ci_low: float, ci_high: float, n_base: int, n_var: int) -> str:
    """The verdict of one comparison (see the module docstring)."""
    return str(
        _verdicts(np.array([ci_low]), np.array([ci_high]), np.array([n_base]), np.array([n_var]))[0]
    )


# ---------------------------------------------------------------------------------------------
# Per cell.


def cell_stats(ds: Dataset) -> pd.DataFrame:
    """One row per (fingerprint_id, kind ∈ {model, ceiling}, cell_id).

    Columns: fingerprint_id, kind, cell_id, machine, page, anchor (``cell-<id>``), cell_name,
    the axis columns, model_family, shape_count, work_unit, eff_cudnn_allow_tf32; n_total, n_ok,
    n_<status> for every status, n_failed, status_summary (e.g. ``"2 ok, 1 crash"``), reasons
    (tuple of distinct failure reasons); over ok replicates: steady_median_s (median of replicate
    medians), steady_q25_s, steady_q75_s, iqr_s, cv (std/mean, ddof 1), and medians of
    steady_ci_rel, samples_per_s, cold_first_iter_s, cold_pass_s, the memory peaks,
    flops_per_sample, work_per_iter, wall_s, kernel_cache_end_bytes; cold_pass_min_s and
    cold_pass_max_s (the range over replicates: a cold cost that is "up to X" must hold for
    every replicate); whole_peak_mem_{allocated,reserved}_bytes (the peak of the whole
    replicate, cold pass included, largest over replicates) and
    workspace_mem_{allocated,reserved}_bytes (cold-pass peak minus steady peak: what the first
    pass, cudnn.benchmark's search among it, held beyond the steady state; largest over
    replicates); samples_per_s and throughput_basis (see ``THROUGHPUT_BASES``);
    replicate_medians and replicate_throughputs (tuples, for the bootstraps; the throughputs
    are whole-cycle rates, the shapes comparison's metric); best_window_s (ceilings: median
    over replicates of the fastest ``BURST_WINDOW`` consecutive iterations' mean);
    achieved_per_s and achieved_unit (``flop/s`` or ``byte/s``),
    achieved_tflops, achieved_gbps, peak_op (the ceiling used) and pct_of_peak (percent of that
    machine's measured ceiling, NaN when none); insufficient (n_ok < MIN_OK_REPLICATES);
    n_drift (ok replicates whose steady state drifted, see ``replicate_drift``) and drift_max
    (the largest drift ratio among them, NaN when none).
    """
    res = ds.results
    timed = res.loc[res["kind"].isin(["model", "ceiling"])]
    labels = [
        "machine",
        "cell_name",
        *schema.AXIS_COLUMNS,
        "shape_count",
        "work_unit",
        "eff_cudnn_allow_tf32",
    ]
    # Factorise the (fingerprint, kind, cell) key once; every later aggregate groups by the
    # integer group id, which is much cheaper than re-hashing three string columns each time.
    g = timed.groupby(_CELL_KEY, sort=True)
    out = g[labels].last()
    n_groups = len(out)
    gid = g.ngroup().to_numpy()
    status_code = pd.Categorical(timed["status"], categories=schema.STATUSES).codes
    counts = np.bincount(
        gid * len(schema.STATUSES) + status_code, minlength=n_groups * len(schema.STATUSES)
    ).reshape(n_groups, len(schema.STATUSES))
    out["n_total"] = counts.sum(axis=1)
    for i, status in enumerate(schema.STATUSES):
        out[f"n_{status}"] = counts[:, i]
    out["n_failed"] = out["n_total"] - out["n_ok"]
    out["status_summary"] = _status_summary(out)
    failed = ((timed["status"] != "ok") & (timed["reason"] != "")).to_numpy()
    reasons: list[tuple[str, ...]] = [()] * n_groups
    for i, reason in zip(gid[failed], timed["reason"].to_numpy()[failed]):
        if reason not in reasons[i]:
            reasons[i] = (*reasons[i], reason)
    out["reasons"] = pd.Series(reasons, index=out.index, dtype=object)

    ok = (timed["status"] == "ok").to_numpy()
    gok = gid[ok]
    okf = timed.loc[ok]
    steady = okf["steady_median_s"].groupby(gok)
    whole = pd.RangeIndex(n_groups)

    def per_group(series: pd.Series) -> np.ndarray:
        return series.reindex(whole).to_numpy(dtype=float)

    out["steady_median_s"] = per_group(steady.median())
    out["steady_q25_s"] = per_group(steady.quantile(0.25))
    out["steady_q75_s"] = per_group(steady.quantile(0.75))
    out["iqr_s"] = out["steady_q75_s"] - out["steady_q25_s"]
    out["cv"] = per_group(steady.std(ddof=1)) / per_group(steady.mean())
    medians = okf[list(_MEDIANS)].groupby(gok).median().reindex(whole)
    for col in _MEDIANS:
        out[col] = medians[col].to_numpy(dtype=float)
    cold = okf["cold_pass_s"].groupby(gok)
    out["cold_pass_min_s"] = per_group(cold.min())
    out["cold_pass_max_s"] = per_group(cold.max())
    for kind in ("allocated", "reserved"):
        cold_peak = okf[f"cold_peak_mem_{kind}_bytes"].to_numpy(dtype=float)
        steady_peak = okf[f"peak_mem_{kind}_bytes"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            workspace = np.clip(cold_peak - steady_peak, 0.0, None)
        out[f"whole_peak_mem_{kind}_bytes"] = per_group(
            pd.Series(np.fmax(cold_peak, steady_peak)).groupby(gok).max())
        out[f"workspace_mem_{kind}_bytes"] = per_group(pd.Series(workspace).groupby(gok).max())
    out["replicate_medians"] = _grouped_tuples(gok, okf["steady_median_s"], n_groups)
    out["replicate_throughputs"] = _grouped_tuples(gok, okf["samples_per_s"], n_groups)
    # FLOP/s (= sum of FLOPs / sum of time): the fair rate when the arms process different
    # resolutions or batch sizes, as dynamic and ragged schedules do
    out["replicate_work_rates"] = _grouped_tuples(
        gok, okf["samples_per_s"] * okf["flops_per_sample"], n_groups)
    drift = replicate_drift(ds.samples)
    if len(drift):
        key = pd.MultiIndex.from_arrays([okf["run_id"], okf["cell_id"], okf["replicate"]])
        ratio = drift.reindex(key).to_numpy(dtype=float)
        static = (okf["shapes"] == "static").to_numpy() & (okf["kind"] == "model").to_numpy()
        drifted = static & ((ratio > DRIFT) | (ratio < 1 / DRIFT))
    else:
        ratio, drifted = np.full(len(okf), np.nan), np.zeros(len(okf), dtype=bool)
    windows = best_window(ds.samples, okf.loc[okf["kind"] == "ceiling"])
    if len(windows):
        key = pd.MultiIndex.from_arrays([okf["run_id"], okf["cell_id"], okf["replicate"]])
        best = pd.Series(windows.reindex(key).to_numpy(dtype=float)).groupby(gok).median()
        out["best_window_s"] = per_group(best)
    else:
        out["best_window_s"] = np.nan
    out["n_drift"] = np.bincount(gok[drifted], minlength=n_groups)
    worst = pd.Series(np.maximum(ratio, 1 / ratio)[drifted]).groupby(gok[drifted]).max()
    out["drift_max"] = per_group(worst)
    tf32 = (okf["eff_cudnn_allow_tf32"] == "true").groupby(gok).any().reindex(whole)
    out["eff_cudnn_allow_tf32"] = np.where(
        tf32.fillna(False).to_numpy(dtype=bool), "true", out["eff_cudnn_allow_tf32"].to_numpy()
    )
    out = out.reset_index()
    _throughput(out)

    out["page"] = out["machine"] + "-" + out["fingerprint_id"].str.slice(0, 8)
    out["anchor"] = "cell-" + out["cell_id"]
    out["model_family"] = out["model"].map(model_family)
    out["insufficient"] = out["n_ok"] < MIN_OK_REPLICATES
    _add_achieved(out)
    front = ["fingerprint_id", "machine", "page", "anchor", "kind", "cell_id", "cell_name"]
    return out[front + [c for c in out.columns if c not in front]]


#: How a cell's samples/s is defined (``throughput_basis``). With one input shape: the batch
#: over the median step, the same median the step times on every page are, so a page never
#: shows a throughput that disagrees with the step time next to it. With cycled shapes
#: (dynamic, ragged): samples over time across whole cycles of the schedule (results.csv's
#: ``samples_per_s``), since no single step is typical of a cycle.
THROUGHPUT_BASES = ("median step", "whole cycle")
#: Consecutive steady iterations in a ceiling's "best short window" (see ``best_window``).
BURST_WINDOW = 10


def _throughput(out: pd.DataFrame) -> None:
    """samples_per_s by ``THROUGHPUT_BASES``: batch ÷ median step, or the whole-cycle rate."""
    model = (out["kind"] == "model").to_numpy()
    static = model & (out["shapes"] == "static").to_numpy()
    batch = out["batch_size"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_step = batch / out["steady_median_s"].to_numpy(dtype=float)
    out["samples_per_s"] = np.where(static, per_step, out["samples_per_s"].to_numpy(dtype=float))
    out["samples_per_s"] = out["samples_per_s"].where(model)
    out["throughput_basis"] = np.select([static, model], list(THROUGHPUT_BASES), "")


def best_window(samples: pd.DataFrame, rows: pd.DataFrame) -> pd.Series:
    """Per (run_id, cell_id, replicate) of ``rows``: the lowest mean over ``BURST_WINDOW``
    consecutive steady iterations (all of them when there are fewer).

    A machine's sustained rate (the median over a run of at least ``min_time_s``) is below
    what its first iterations reach while clocks and power settle: on an H200, the first ten
    bf16 and TF32 matmuls ran 10-13% faster than the sustained median. Pages report both,
    labelled, and hold model cells against the sustained one (they are sustained too).
    """
    key = ["run_id", "cell_id", "replicate"]
    if rows.empty or samples.empty:
        return pd.Series(dtype=float)
    wanted = pd.MultiIndex.from_frame(rows[key].astype(object))
    steady = samples.loc[samples["phase"] == "steady", [*key, "seconds"]]
    steady = steady.loc[steady["cell_id"].isin(set(rows["cell_id"]))]
    out = {}
    for k, group in steady.groupby(key, sort=False):
        if k in wanted:
            xs = group["seconds"].to_numpy(dtype=float)
            w = min(BURST_WINDOW, len(xs))
            sums = np.convolve(xs, np.ones(w), mode="valid")
            out[k] = float(sums.min() / w)
    return pd.Series(out, dtype=float)


def replicate_drift(samples: pd.DataFrame) -> pd.Series:
    """Per (run_id, cell_id, replicate): median of the later half of the steady iterations over
    that of the earlier half, for replicates with at least 3 steady iterations.

    The same test as ``bench check``'s "steady drift" (see :mod:`bench.sanity`): a ratio far
    from 1 means the step changed under the measurement, so its median describes no single
    regime. Samples are in iteration order within a replicate (the runner writes them so).
    """
    steady = samples.loc[samples["phase"] == "steady", ["run_id", "cell_id", "replicate",
                                                        "seconds"]]
    key = ["run_id", "cell_id", "replicate"]
    if steady.empty:
        return pd.Series(dtype=float, index=pd.MultiIndex.from_arrays([[], [], []], names=key))
    g = steady.groupby(key, sort=False)
    rank = g.cumcount().to_numpy()
    n = g["seconds"].transform("size").to_numpy()
    half = n // 2
    early = steady.loc[(n >= 3) & (rank < half)].groupby(key, sort=False)["seconds"].median()
    late = steady.loc[(n >= 3) & (rank >= n - half)].groupby(key, sort=False)["seconds"].median()
    return (late / early.where(early > 0)).rename("drift")


def _status_summary(out: pd.DataFrame) -> pd.Series:
    parts = [
        np.where(out[f"n_{s}"] > 0, out[f"n_{s}"].astype(str) + f" {s}", "")
        for s in schema.STATUSES
    ]
    joined = pd.Series([", ".join(p for p in row if p) for row in zip(*parts)], index=out.index)
    return joined


def _grouped_tuples(gid: np.ndarray, values: pd.Series, n_groups: int) -> list[tuple[float, ...]]:
    """Per group id, the tuple of non-NaN ``values`` over replicates, in file order."""
    keep = values.notna().to_numpy()
    ids, vals = gid[keep], values.to_numpy(dtype=float)[keep]
    order = np.argsort(ids, kind="stable")
    ids, vals = ids[order], vals[order]
    cuts = np.flatnonzero(np.diff(ids)) + 1
    tuples: list[tuple[float, ...]] = [()] * n_groups
    if len(ids):
        for i, chunk in zip(ids[np.r_[0, cuts]], np.split(vals, cuts)):
            tuples[int(i)] = tuple(chunk.tolist())
    return tuples


def _peak_op(out: pd.DataFrame) -> np.ndarray:
    """Which measured ceiling a model cell is held against."""
    amp = out["precision"].isin(["amp-bf16", "amp-fp16"])
    tf32 = (
        (out["device"] == "cuda")
        & (out["precision"] == "fp32")
        & (out["eff_cudnn_allow_tf32"] == "true")
    )
    return np.select([amp, tf32], ["matmul-bf16", "matmul-tf32"], "matmul-fp32")


def _add_achieved(out: pd.DataFrame) -> None:
    model = out["kind"] == "model"
    ceiling = out["kind"] == "ceiling"
    per_s = np.where(
        model,
        out["flops_per_sample"] * out["samples_per_s"],
        out["work_per_iter"] / out["steady_median_s"],
    )
    out["achieved_per_s"] = pd.Series(per_s, index=out.index, dtype="float64")
    unit = np.where(model | (out["work_unit"] == "flop"), "flop/s", "byte/s")
    out["achieved_unit"] = np.where(ceiling & (out["work_unit"] == ""), "", unit)
    flop = out["achieved_unit"] == "flop/s"
    out["achieved_tflops"] = out["achieved_per_s"].where(flop) / 1e12
    out["achieved_gbps"] = out["achieved_per_s"].where(out["achieved_unit"] == "byte/s") / 1e9
    out["peak_op"] = np.where(model, _peak_op(out), "")
    peaks = out.loc[ceiling & flop & (out["n_ok"] > 0)]
    peaks = peaks.drop_duplicates(["fingerprint_id", "device", "model"], keep="last")
    lookup = peaks.set_index(["fingerprint_id", "device", "model"])["achieved_per_s"]
    idx = pd.MultiIndex.from_arrays([out["fingerprint_id"], out["device"], out["peak_op"]])
    peak = lookup.reindex(idx).to_numpy()
    out["pct_of_peak"] = np.where(model, 100.0 * out["achieved_per_s"].to_numpy() / peak, np.nan)
    out.loc[~model, "peak_op"] = ""


# ---------------------------------------------------------------------------------------------
# Bootstrap.


def _median_last(a: np.ndarray) -> np.ndarray:
    """Median over the last axis; the 3-replicate case (the common one) without a sort."""
    if a.shape[-1] == 3:
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        return np.maximum(np.minimum(a0, a1), np.minimum(np.maximum(a0, a1), a2))
    if a.shape[-1] == 1:
        return a[..., 0]
    return np.asarray(np.median(a, axis=-1))


def _ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _median_last(np.moveaxis(x, axis, -1)) / _median_last(np.moveaxis(y, axis, -1))


def _median_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return _median_last(np.moveaxis(x, axis, -1))


def ratio_ci(
    xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """median(x)/median(y) per pair with a bootstrap CI; NaN CI when a side is too small.

    Pairs are grouped by (len(x), len(y)) and each group is one vectorised bootstrap call.
    """
    n = len(xs)
    est, lo, hi = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (x_i, y_i) in enumerate(zip(xs, ys)):
        groups.setdefault((len(x_i), len(y_i)), []).append(i)
    for (nx, ny), members in sorted(groups.items()):
        if nx == 0 or ny == 0:
            continue
        idx = np.array(members)
        x = np.array([xs[i] for i in members], dtype=float)
        y = np.array([ys[i] for i in members], dtype=float)
        est[idx] = _ratio(x, y)
        if nx < MIN_OK_REPLICATES or ny < MIN_OK_REPLICATES:
            continue
        lo[idx], hi[idx] = _bootstrap((x.astype(np.float32), y.astype(np.float32)), _ratio)
    return est, lo, hi


def median_ci(samples: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median per sample with a bootstrap CI (NaN CI below MIN_OK_REPLICATES values)."""
    n = len(samples)
    est, lo, hi = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(len(s), []).append(i)
    for k, members in sorted(groups.items()):
        if k == 0:
            continue
        idx = np.array(members)
        x = np.array([samples[i] for i in members], dtype=float)
        est[idx] = _median_last(x)
        if k < MIN_OK_REPLICATES:
            continue
        lo[idx], hi[idx] = _bootstrap((x.astype(np.float32),), _median_stat)
    return est, lo, hi


@contextlib.contextmanager
def quiet_bootstraps() -> Iterator[None]:
    """Silence the warnings of degenerate bootstraps: identical replicates are normal here.

    Warning filters are process-wide and ``catch_warnings`` is not thread-safe, so this is
    entered once, on the thread that starts :func:`analyse`'s worker threads, never by them.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _bootstrap(data: tuple[np.ndarray, ...], statistic: object) -> tuple[np.ndarray, np.ndarray]:
    """A percentile bootstrap CI per row. Warns on degenerate data (see quiet_bootstraps)."""
    res = sps.bootstrap(
        data,
        statistic,  # type: ignore[arg-type]
        n_resamples=N_RESAMPLES,
        batch=BOOTSTRAP_BATCH,
        vectorized=True,
        paired=False,
        axis=-1,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(SEED),
    )
    low = np.asarray(res.confidence_interval.low, dtype=float)
    high = np.asarray(res.confidence_interval.high, dtype=float)
    # All resamples equal (identical replicates): the interval is the point itself.
    point = np.asarray(statistic(*data, axis=-1), dtype=np.float64)  # type: ignore[operator]
    return np.where(np.isnan(low), point, low), np.where(np.isnan(high), point, high)


def _verdicts(lo: np.ndarray, hi: np.ndarray, n_base: np.ndarray, n_var: np.ndarray) -> np.ndarray:
    few = (np.asarray(n_base) < MIN_OK_REPLICATES) | (np.asarray(n_var) < MIN_OK_REPLICATES)
    return np.select(
        [few | np.isnan(lo) | np.isnan(hi), lo > 1 + DELTA, hi < 1 - DELTA],
        ["insufficient", "faster", "slower"],
        "no clear difference",
    )


# ---------------------------------------------------------------------------------------------
# Comparisons.


def _cells(data: Data) -> pd.DataFrame:
    return cell_stats(data) if isinstance(data, Dataset) else data


def compare(data: Data, axis: str) -> pd.DataFrame:
    """Pairs of cells on the same fingerprint that differ only in ``axis`` (see ``AXES``).

    Columns: fingerprint_id, machine, page, axis, metric (``time``; ``throughput`` for shapes),
    baseline_value, variant_value, baseline_cell_id, variant_cell_id, baseline_anchor,
    variant_anchor, the other axis columns as context, model_family, n_base, n_var (ok
    replicates), base_median_s, var_median_s, base_samples_per_s, var_samples_per_s, speedup
    (> 1: the variant is faster), ci_low, ci_high, verdict. For ``device`` a CPU cell is paired
    with the CUDA cell that has cudnn benchmark and deterministic off, whatever its thread count.
    """
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; expected one of: {', '.join(AXES)}")
    cells = _cells(data)
    baseline, variants = AXES[axis]
    model = cells.loc[cells["kind"] == "model"]
    exclude = {axis, *_KEY_EXCLUDE.get(axis, ())}
    key_cols = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS if c not in exclude)]
    base = model.loc[model[axis] == baseline]
    var = model.loc[model[axis].isin(variants)]
    if axis == "device":
        cuda = var["device"] == "cuda"
        var = var.loc[
            ~cuda | ((var["cudnn_benchmark"] == "off") & (var["cudnn_deterministic"] == "off"))
        ]
    if base.empty or var.empty:
        return _empty_compare(axis)
    base = base.assign(_key=_row_hash(base[key_cols]))
    var = var.assign(_key=_row_hash(var[key_cols]))
    take = [
        "_key",
        "cell_id",
        "anchor",
        axis,
        "n_ok",
        "steady_median_s",
        "samples_per_s",
        "replicate_medians",
        "replicate_throughputs",
        "replicate_work_rates",
        *_FROM_VARIANT.get(axis, ()),
    ]
    pairs = base.merge(var[take].add_prefix("v_"), left_on="_key", right_on="v__key", how="inner")
    metric = "throughput" if axis == "shapes" else "time"
    if metric == "time":
        est, lo, hi = ratio_ci(
            pairs["replicate_medians"].tolist(), pairs["v_replicate_medians"].tolist()
        )
    else:
        # work rates where both arms have FLOP counts, plain samples/s otherwise
        def finite(t: tuple[float, ...]) -> bool:
            return len(t) > 0 and bool(np.all(np.isfinite(np.asarray(t, dtype=float))))

        use_work = [finite(a) and finite(b) for a, b in
                    zip(pairs["v_replicate_work_rates"], pairs["replicate_work_rates"])]
        var_rates = [w if u else t for u, w, t in zip(
            use_work, pairs["v_replicate_work_rates"], pairs["v_replicate_throughputs"])]
        base_rates = [w if u else t for u, w, t in zip(
            use_work, pairs["replicate_work_rates"], pairs["replicate_throughputs"])]
        est, lo, hi = ratio_ci(var_rates, base_rates)
    out = pd.DataFrame(
        {
            "fingerprint_id": pairs["fingerprint_id"],
            "machine": pairs["machine"],
            "page": pairs["page"],
            "axis": axis,
            "metric": metric,
            "baseline_value": pairs[axis],
            "variant_value": pairs[f"v_{axis}"],
            "baseline_cell_id": pairs["cell_id"],
            "variant_cell_id": pairs["v_cell_id"],
            "baseline_anchor": pairs["anchor"],
            "variant_anchor": pairs["v_anchor"],
        }
    )
    for col in schema.AXIS_COLUMNS:
        if col == axis:
            continue
        out[col] = pairs[f"v_{col}"] if col in _FROM_VARIANT.get(axis, ()) else pairs[col]
    out["model_family"] = pairs["model_family"]
    out["n_base"] = pairs["n_ok"].astype("int64")
    out["n_var"] = pairs["v_n_ok"].astype("int64")
    out["base_median_s"] = pairs["steady_median_s"]
    out["var_median_s"] = pairs["v_steady_median_s"]
    out["base_samples_per_s"] = pairs["samples_per_s"]
    out["var_samples_per_s"] = pairs["v_samples_per_s"]
    out["speedup"], out["ci_low"], out["ci_high"] = est, lo, hi
    out["verdict"] = _verdicts(lo, hi, out["n_base"].to_numpy(), out["n_var"].to_numpy())
    insufficient = out["verdict"] == "insufficient"
    out.loc[insufficient, ["ci_low", "ci_high"]] = np.nan
    order = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS if c != axis), "variant_value"]
    return out.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)


def _row_hash(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def _empty_compare(axis: str) -> pd.DataFrame:
    cols = [
        "fingerprint_id",
        "machine",
        "page",
        "axis",
        "metric",
        "baseline_value",
        "variant_value",
        "baseline_cell_id",
        "variant_cell_id",
        "baseline_anchor",
        "variant_anchor",
        *(c for c in schema.AXIS_COLUMNS if c != axis),
        "model_family",
        "n_base",
        "n_var",
        "base_median_s",
        "var_median_s",
        "base_samples_per_s",
        "var_samples_per_s",
        "speedup",
        "ci_low",
        "ci_high",
        "verdict",
    ]
    return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})


def _join_cells(pairs: pd.DataFrame, cells: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    """Bring per-cell columns onto comparison rows as ``base_<col>`` and ``var_<col>``."""
    cols = list(cols)
    lookup = cells.loc[cells["kind"] == "model"].set_index(["fingerprint_id", "cell_id"])[cols]
    out = pairs.copy()
    for side, id_col in (("base", "baseline_cell_id"), ("var", "variant_cell_id")):
        idx = pd.MultiIndex.from_arrays([out["fingerprint_id"], out[id_col]])
        joined = lookup.reindex(idx)
        for col in cols:
            out[f"{side}_{col}"] = joined[col].to_numpy()
    return out


def benchmark_costs(data: Data, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """cudnn.benchmark off → on: what it saves per step, what it costs up front, and break-even.

    compare(..., "cudnn_benchmark") columns (each pair within one kernel-cache state) plus, from
    the cells: base_/var_ cold_pass_s (median), cold_pass_min_s, cold_pass_max_s,
    cold_first_iter_s, the memory peaks and their whole-replicate and workspace figures (see
    ``cell_stats``); extra_cold_pass_s and extra_cold_first_iter_s (on − off, medians);
    extra_cold_pass_max_s (the slowest benchmark-on replicate's cold pass − the median one off:
    what "adds up to" may say, true of every replicate); extra_<memory column> (on − off) and
    extra_whole_peak_mem_share (the whole-replicate allocated peak's growth, as a share);
    saving_per_iter_s (steady off − on); break_even_iters = median extra cold seconds / saving
    per iteration (0 when the cold pass is no dearer, ``inf`` = never when the saving is ≤ 0);
    break_even_iters_low (median extra, the CI's largest saving) and break_even_iters_high (the
    slowest replicate's extra, the CI's smallest saving; ``inf`` when the CI allows no saving).
    Pairs with an empty or shared cache also get the same configuration's warm-cache figures,
    where one was measured: warm_extra_cold_pass_s, warm_extra_cold_pass_max_s,
    warm_break_even_iters, warm_break_even_iters_high (NaN otherwise).
    """
    cells = _cells(data)
    pairs = compare(cells, "cudnn_benchmark") if pairs is None else pairs
    memory = (*_MEMORY[:4], *_WHOLE_MEMORY)
    cols = ("cold_pass_s", "cold_pass_min_s", "cold_pass_max_s", "cold_first_iter_s", *memory)
    out = _join_cells(pairs, cells, cols)
    out["extra_cold_pass_s"] = out["var_cold_pass_s"] - out["base_cold_pass_s"]
    out["extra_cold_pass_max_s"] = out["var_cold_pass_max_s"] - out["base_cold_pass_s"]
    out["extra_cold_first_iter_s"] = out["var_cold_first_iter_s"] - out["base_cold_first_iter_s"]
    for col in memory:
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
    return _with_warm(out)


#: Whole-replicate memory figures per cell (see ``cell_stats``).
_WHOLE_MEMORY = (
    "whole_peak_mem_allocated_bytes",
    "whole_peak_mem_reserved_bytes",
    "workspace_mem_allocated_bytes",
    "workspace_mem_reserved_bytes",
)
_WARM = {
    "warm_extra_cold_pass_s": "extra_cold_pass_s",
    "warm_extra_cold_pass_max_s": "extra_cold_pass_max_s",
    "warm_break_even_iters": "break_even_iters",
    "warm_break_even_iters_high": "break_even_iters_high",
}


def _with_warm(costs: pd.DataFrame) -> pd.DataFrame:
    """Beside each empty- or shared-cache pair, the same configuration's warm-cache figures."""
    for col in _WARM:
        costs[col] = np.nan
    if costs.empty or "kernel_cache" not in costs.columns:
        return costs
    key = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS
                               if c not in ("cudnn_benchmark", "kernel_cache"))]
    warm = costs.loc[costs["kernel_cache"] == "warm"].drop_duplicates(key, keep="last")
    if warm.empty:
        return costs
    lookup = warm.set_index(_row_keys(warm, key))
    found = lookup.reindex(_row_keys(costs, key))
    cold = (costs["kernel_cache"] != "warm").to_numpy()
    for col, src in _WARM.items():
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


def dynamic_shapes(data: Data, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Dynamic and ragged shapes against static, at each cudnn.benchmark setting.

    compare(..., "shapes") columns (speedup on throughput, so < 1 is a slowdown) plus
    slowdown (= 1/speedup) with slowdown_ci_low/high; shape_count; base_/var_ cold_pass_s and
    steady medians; penalty_per_shape_s = variant cold_pass_s / shape_count − its steady step
    (what each new shape costs over a normal step); extra_cold_per_new_shape_s = (variant cold
    pass − static cold pass) / (shape_count − 1); and, on benchmark-on rows,
    penalty_vs_bm_off_s = this penalty − the same comparison's penalty with benchmark off.
    """
    cells = _cells(data)
    pairs = compare(cells, "shapes") if pairs is None else pairs
    out = _join_cells(pairs, cells, ("cold_pass_s", "shape_count", "steady_median_s"))
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
    off_penalty = off.set_index(_row_keys(off, key))["penalty_per_shape_s"]
    mine = off_penalty.reindex(_row_keys(out, key)).to_numpy()
    out["penalty_vs_bm_off_s"] = np.where(
        out["cudnn_benchmark"] == "on", out["penalty_per_shape_s"].to_numpy() - mine, np.nan
    )
    return out


def _row_keys(frame: pd.DataFrame, key: list[str]) -> pd.Index:
    return pd.Index(_row_hash(frame[key]))


def repro_checks(ds: Dataset) -> pd.DataFrame:
    """The bitwise re-run checks, one row per (fingerprint_id, checked cell_id).

    Columns: fingerprint_id, machine, page, cell_id, cell_name, anchor (``repro-<id>``),
    cell_anchor (``cell-<id>``, the checked cell), the axis columns, n_checks, n_ok_checks,
    n_equal, bitwise_equal (True only if every ok check was equal; NA without an ok check),
    max_abs_diff (largest over ok checks), status_summary.
    """
    res = ds.results
    rep = res.loc[res["kind"] == "repro"]
    cols = [
        "fingerprint_id",
        "machine",
        "page",
        "cell_id",
        "cell_name",
        "anchor",
        "cell_anchor",
        *schema.AXIS_COLUMNS,
        "n_checks",
        "n_ok_checks",
        "n_equal",
        "bitwise_equal",
        "max_abs_diff",
        "status_summary",
    ]
    if rep.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    key = ["fingerprint_id", "cell_id"]
    g = rep.groupby(key, sort=True)
    out = g[["machine", "cell_name", *schema.AXIS_COLUMNS]].last()
    out["n_checks"] = g.size()
    ok = rep.loc[rep["status"] == "ok"]
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
    out["page"] = [page_slug(m, f) for m, f in zip(out["machine"], out["fingerprint_id"])]
    out["anchor"] = "repro-" + out["cell_id"]
    out["cell_anchor"] = "cell-" + out["cell_id"]
    return out[cols]


def determinism(
    ds: Dataset,
    cells: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    checks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """deterministic off → on: compare() columns plus each side's re-run check.

    Adds base_/var_ n_checks, bitwise_equal, max_abs_diff and repro_anchor (NaN/NA where the
    cell had no check). A "slower" verdict is the price of reproducibility; an unequal re-run
    with deterministic off is why one might pay it.
    """
    if pairs is None:
        pairs = compare(cell_stats(ds) if cells is None else cells, "cudnn_deterministic")
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
    return out


def cpu_vs_gpu(data: Data, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """CPU → CUDA per model × batch × mode (and the other axes): compare(..., "device") rows."""
    pairs = compare(data, "device") if pairs is None else pairs
    return pairs.loc[pairs["variant_value"] == "cuda"].reset_index(drop=True)


#: What identifies one speedup-vs-batch curve.
CURVE_KEY = [
    "fingerprint_id",
    "machine",
    "page",
    "model",
    "mode",
    "resolution",
    "precision",
    "memory_format",
    "shapes",
    "cpu_threads",
]


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
    known = verdicts != "insufficient"
    order = np.argsort(batches[known], kind="stable")
    batch = batches[known][order]
    faster = (verdicts[known][order] == "faster")[::-1]
    if not faster.size or not faster[0]:
        return None
    run = len(faster) if faster.all() else int(np.argmin(faster))  # trailing "faster" count
    return int(batch[len(batch) - run])


def crossovers(cvg: pd.DataFrame) -> pd.DataFrame:
    """crossover() per curve: CURVE_KEY columns, crossover_batch (Int64, NA = never), batches,
    verdicts and speedups (tuples in batch order), evidence (tuple of (page, anchor))."""
    cols = [*CURVE_KEY, "crossover_batch", "batches", "verdicts", "speedups", "evidence"]
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


def ceilings(data: Data) -> pd.DataFrame:
    """Measured machine ceilings per fingerprint, device and op.

    Columns: fingerprint_id, machine, page, anchor, cell_id, device, op, work_unit, unit
    (``TFLOP/s`` or ``GB/s``), achieved (the sustained rate: median over replicates of each
    replicate's median iteration, in unit), ci_low, ci_high (bootstrap over replicates; NaN when
    insufficient), burst (the best short window: median over replicates of the fastest
    ``BURST_WINDOW`` consecutive iterations, in unit; NaN without samples), n_ok, n_total,
    insufficient, status_summary. "% of peak" elsewhere is against ``achieved``.
    """
    cells = _cells(data)
    ceil = cells.loc[cells["kind"] == "ceiling"].reset_index(drop=True)
    scale = np.where(ceil["work_unit"] == "byte", 1e9, 1e12)
    rates = [
        tuple(w / s / k for s in reps)
        for w, reps, k in zip(ceil["work_per_iter"], ceil["replicate_medians"], scale)
    ]
    est, lo, hi = median_ci(rates)
    with np.errstate(divide="ignore", invalid="ignore"):
        burst = ceil["work_per_iter"].to_numpy(dtype=float) / ceil["best_window_s"].to_numpy(
            dtype=float) / scale
    return pd.DataFrame(
        {
            "fingerprint_id": ceil["fingerprint_id"],
            "machine": ceil["machine"],
            "page": ceil["page"],
            "anchor": ceil["anchor"],
            "cell_id": ceil["cell_id"],
            "device": ceil["device"],
            "op": ceil["model"],
            "work_unit": ceil["work_unit"],
            "unit": np.where(ceil["work_unit"] == "byte", "GB/s", "TFLOP/s"),
            "achieved": est,
            "ci_low": lo,
            "ci_high": hi,
            "burst": burst,
            "n_ok": ceil["n_ok"],
            "n_total": ceil["n_total"],
            "insufficient": ceil["insufficient"],
            "status_summary": ceil["status_summary"],
        }
    )


#: What makes two machines' throughputs comparable on the Compare-machines page.
WORKLOAD_KEY = ["model", "mode", "batch_size", "resolution", "precision", "shapes"]


def best_throughput(data: Data) -> pd.DataFrame:
    """Per fingerprint and workload (WORKLOAD_KEY), the fastest cell with an ok median.

    Columns: fingerprint_id, machine, page, WORKLOAD_KEY, samples_per_s, steady_median_s,
    cell_id, anchor, device, memory_format, cudnn_benchmark, cudnn_deterministic, cpu_threads,
    n_ok, insufficient. The best over settings (device included), so a GPU box is judged by its
    GPU. Cells with too few ok replicates still compete, flagged ``insufficient``: dropping them
    would let a GPU box whose GPU cell lost a replicate be shown by its CPU's throughput.
    """
    cells = _cells(data)
    ok = cells.loc[(cells["kind"] == "model") & cells["samples_per_s"].notna()]
    ok = ok.sort_values(["samples_per_s", "cell_id"], ascending=[False, True], kind="stable")
    best = ok.drop_duplicates(["fingerprint_id", *WORKLOAD_KEY], keep="first")
    cols = [
        "fingerprint_id",
        "machine",
        "page",
        *WORKLOAD_KEY,
        "samples_per_s",
        "steady_median_s",
        "cell_id",
        "anchor",
        "device",
        "memory_format",
        "cudnn_benchmark",
        "cudnn_deterministic",
        "cpu_threads",
        "n_ok",
        "insufficient",
    ]
    return (
        best[cols]
        .sort_values(["fingerprint_id", *WORKLOAD_KEY], kind="stable")
        .reset_index(drop=True)
    )


def machine_summary(ds: Dataset) -> pd.DataFrame:
    """One row per fingerprint: machine, page, runs, hardware and software from env.json, counts.

    Columns: fingerprint_id, machine, page, run_ids (tuple), n_runs, gpu_name, gpu_count,
    cpu_model, cpu_cores, cpu_logical, cpu_threads, gpu_memory_bytes, memory_bytes (counts:
    int, or None where env.json does not say), torch_version, torchvision_version,
    cuda_version, cudnn_version, python_version, os, workload_version, n_cells, n_rows, n_ok,
    n_failed, first_started_at, last_ended_at.
    Strings come from env.json untouched: untrusted, escape before display. Runs from before
    env.json recorded a workload version were measured with version 1 of the step.
    """
    res = ds.results
    rows = []
    for fp, group in res.groupby("fingerprint_id", sort=True):
        env = ds.envs.get(str(fp), {})
        torch = env.get("torch") or {}
        gpus = env.get("gpus") or []
        cpu = env.get("cpu") or {}
        machine = str(env.get("machine") or group["machine"].iloc[-1])
        started = group["started_at"].loc[group["started_at"] != ""]
        ended = group["ended_at"].loc[group["ended_at"] != ""]
        rows.append(
            {
                "fingerprint_id": fp,
                "machine": machine,
                "page": page_slug(machine, str(fp)),
                "run_ids": tuple(sorted(set(group["run_id"]))),
                "n_runs": group["run_id"].nunique(),
                "gpu_name": str(gpus[0].get("name", ""))
                if gpus and isinstance(gpus[0], dict)
                else "",
                "gpu_count": len(gpus),
                "cpu_model": str(cpu.get("model", "")),
                "cpu_cores": _count(cpu.get("physical_cores")),
                "cpu_logical": _count(cpu.get("logical_cpus")),
                "cpu_threads": _count(cpu.get("torch_threads")),
                "gpu_memory_bytes": _count(gpus[0].get("total_memory_bytes"))
                if gpus and isinstance(gpus[0], dict)
                else None,
                "memory_bytes": _count((env.get("memory") or {}).get("total_bytes")),
                "torch_version": str(torch.get("version") or ""),
                "torchvision_version": str(torch.get("torchvision") or ""),
                "cuda_version": str(torch.get("cuda") or ""),
                "cudnn_version": str(torch.get("cudnn") or ""),
                "python_version": str((env.get("python") or {}).get("version", "")),
                "os": str((env.get("os") or {}).get("platform", "")),
                "workload_version": str((env.get("bench") or {}).get("workload_version", 1)),
                "n_cells": group.loc[group["kind"] != "repro", "cell_id"].nunique(),
                "n_rows": len(group),
                "n_ok": int((group["status"] == "ok").sum()),
                "n_failed": int((group["status"] != "ok").sum()),
                "first_started_at": started.min() if len(started) else "",
                "last_ended_at": ended.max() if len(ended) else "",
            }
        )
    return pd.DataFrame(rows, columns=_MACHINE_COLUMNS)


def _count(value: object) -> int | None:
    """A positive whole number from env.json (untrusted JSON), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and value > 0 else None


_MACHINE_COLUMNS = [
    "fingerprint_id", "machine", "page", "run_ids", "n_runs", "gpu_name", "gpu_count",
    "cpu_model", "cpu_cores", "cpu_logical", "cpu_threads", "gpu_memory_bytes", "memory_bytes",
    "torch_version", "torchvision_version", "cuda_version", "cudnn_version",
    "python_version", "os", "workload_version", "n_cells", "n_rows", "n_ok", "n_failed",
    "first_started_at", "last_ended_at",
]  # fmt: skip


@dataclass(frozen=True)
class Analysis:
    """Every table the pages and the advice need, computed once (see ``analyse``)."""

    cells: pd.DataFrame
    comparisons: dict[str, pd.DataFrame]  # axis → compare(cells, axis), for every axis in AXES
    benchmark: pd.DataFrame  # benchmark_costs
    shapes: pd.DataFrame  # dynamic_shapes
    determinism: pd.DataFrame  # determinism
    repro: pd.DataFrame  # repro_checks
    cpu_gpu: pd.DataFrame  # cpu_vs_gpu
    crossovers: pd.DataFrame  # crossovers(cpu_gpu)
    ceilings: pd.DataFrame  # ceilings
    best: pd.DataFrame  # best_throughput
    machines: pd.DataFrame  # machine_summary


def analyse(ds: Dataset) -> Analysis:
    """Compute every statistic once. The comparisons dominate the cost (bootstraps), so pages
    and advice should share one ``Analysis`` rather than call compare() again."""
    with quiet_bootstraps():
        return _analyse(ds)


def _analyse(ds: Dataset) -> Analysis:
    cells = cell_stats(ds)
    # The comparisons are independent and spend most of their time in numpy and scipy code
    # that releases the GIL, so threads overlap them (2.2 -> 1.5 s on 2 cores for 100k rows).
    # Each bootstrap has its own seeded generator: the result does not depend on the order.
    with ThreadPoolExecutor(max_workers=min(len(AXES), os.cpu_count() or 1)) as pool:
        comparisons = dict(zip(AXES, pool.map(functools.partial(compare, cells), AXES)))
    repro = repro_checks(ds)
    cpu_gpu = cpu_vs_gpu(cells, comparisons["device"])
    return Analysis(
        cells=cells,
        comparisons=comparisons,
        benchmark=benchmark_costs(cells, comparisons["cudnn_benchmark"]),
        shapes=dynamic_shapes(cells, comparisons["shapes"]),
        determinism=determinism(ds, cells, comparisons["cudnn_deterministic"], repro),
        repro=repro,
        cpu_gpu=cpu_gpu,
        crossovers=crossovers(cpu_gpu),
        ceilings=ceilings(cells),
        best=best_throughput(cells),
        machines=machine_summary(ds),
    )
