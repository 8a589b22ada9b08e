"""Per-cell figures: one row per cell of each fingerprint, over its replicates.

A cell is one configuration (the axis values) measured on one fingerprint; its replicates are
fresh processes. The unit of replication is the process, so a cell's figure is the **median of
its replicates' steady medians**, with IQR and CV over replicates (not over iterations, which
would understate the spread between processes: algorithm choice can differ from one process to
the next). Results of different machines or software versions are never pooled: every group
key starts with fingerprint_id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Union

import numpy as np
import pandas as pd

from bench import consistency as rules
from bench import schema
from bench.report.analysis.energy import ENERGY_CELL_COLUMNS, cell_energy
from bench.report.analysis.intervals import MIN_OK_REPLICATES
from bench.report.analysis.numerics import NUM_CELL_COLUMNS, cell_numerics
from bench.report.analysis.sittings import counted, left_out
from bench.report.input.load import Dataset
from bench.schema import Status

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


#: The memory peaks a replicate records (GPU cold and steady, and the process's RSS).
MEMORY = (
    "cold_peak_mem_allocated_bytes",
    "cold_peak_mem_reserved_bytes",
    "peak_mem_allocated_bytes",
    "peak_mem_reserved_bytes",
    "peak_rss_bytes",
)
#: Per-replicate figures whose median over a cell's ok replicates is the cell's.
MEDIANS = (
    "steady_ci_rel",
    "samples_per_s",
    "cold_first_iter_s",
    "cold_pass_s",
    *MEMORY,
    "flops_per_sample",
    "work_per_iter",
    "wall_s",
    "kernel_cache_end_bytes",
    "compile_time_s",
)
#: torch.compile's counts per cell: the largest over ok replicates (a count a page quotes, such
#: as "no recompiles in the steady state", must hold for every replicate).
COMPILE_COUNTS = ("compiles", "recompiles", "graph_breaks", "steady_graph_breaks", "graphs")
#: Whole-replicate memory figures per cell: the peak with the cold pass, and the workspace.
WHOLE_MEMORY = (
    "whole_peak_mem_allocated_bytes",
    "whole_peak_mem_reserved_bytes",
    "workspace_mem_allocated_bytes",
    "workspace_mem_reserved_bytes",
)
_CELL_KEY = ["fingerprint_id", "kind", "cell_id"]

#: What ``cell_stats`` returns, in this order.
CELL_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "anchor", "kind", "cell_id", "cell_name",
    *schema.AXIS_COLUMNS, "shape_count", "work_unit", "eff_cudnn_allow_tf32",
    "n_total", *(f"n_{status}" for status in schema.STATUSES), "n_failed", "n_left_out",
    "status_summary",
    "reasons", "steady_median_s", "steady_q25_s", "steady_q75_s", "iqr_s", "cv", *MEDIANS,
    "cold_pass_min_s", "cold_pass_max_s", "compile_time_max_s",
    *(f"{c}_max" for c in COMPILE_COUNTS), "graph_break_reasons",
    "whole_peak_mem_allocated_bytes", "workspace_mem_allocated_bytes",
    "whole_peak_mem_reserved_bytes", "workspace_mem_reserved_bytes",
    "replicate_medians", "replicate_throughputs", "replicate_work_rates", "best_window_s",
    "n_drift", "drift_max", "throughput_basis", "model_family", "too_few_ok",
    "achieved_per_s", "achieved_unit", "achieved_tflops", "achieved_gbps", "peak_op",
    "pct_of_peak", *ENERGY_CELL_COLUMNS, *NUM_CELL_COLUMNS,
)  # fmt: skip

#: What the tables below ``cell_stats`` accept: a loaded dataset, or its cells already computed
#: (``analyse`` computes them once and hands them to every table).
Source = Union[Dataset, pd.DataFrame]


def cells_of(data: Source) -> pd.DataFrame:
    """``cell_stats(data)``, unless ``data`` already is its result."""
    return cell_stats(data) if isinstance(data, Dataset) else data


def model_family(model: str, source: str = "") -> str:
    """``resnet50`` → ``resnet``, ``mobilenet_v3_large`` → ``mobilenet``; else leading letters.

    A user's model (``pkg.module:factory``, ``file.py:factory``) is a family of its own, named
    with the hash of its sources (``file.py:build@ecfe4f0842``): advice groups by family, and
    two versions of one file must never share a recommendation.
    """
    if ":" in model:
        return f"{model}@{source}" if source else model
    for fam in MODEL_FAMILIES:
        if model.startswith(fam):
            return fam
    match = re.match(r"[A-Za-z]+", model)
    return match.group(0).lower() if match else model


def page_slug(machine: str, fingerprint_id: str) -> str:
    """The machine page of one fingerprint: ``f"{machine}-{fingerprint_id[:8]}"``."""
    return f"{machine}-{fingerprint_id[:8]}"


def machine_names(results: pd.DataFrame) -> dict[str, str]:
    """Fingerprint id → the one machine name its pages go by: that of its earliest row (by
    ``started_at``, then name). Why one: the fingerprint hashes a stack, not a host, so
    machines of one model and stack that their contributors named apart share it, and a page
    named from each row's own machine would split one fingerprint's rows between pages that do
    not exist. Why the earliest: a page keeps its address when another machine joins it."""
    if results.empty:
        return {}
    started = results["started_at"].astype(str)
    rows = pd.DataFrame({"fp": results["fingerprint_id"].astype(str).to_numpy(),
                         "unknown": (started == "").to_numpy(), "at": started.to_numpy(),
                         "machine": results["machine"].astype(str).to_numpy()})
    first = rows.sort_values(["fp", "unknown", "at", "machine"], kind="stable")
    first = first.drop_duplicates("fp")
    return dict(zip(first["fp"], first["machine"], strict=True))


def page_slugs(results: pd.DataFrame) -> dict[str, str]:
    """Fingerprint id → its machine page (``page_slug`` of its name, ``machine_names``)."""
    return {fp: page_slug(name, fp) for fp, name in machine_names(results).items()}


def cell_stats(ds: Dataset) -> pd.DataFrame:
    """One row per (fingerprint_id, kind ∈ {model, ceiling}, cell_id); columns ``CELL_COLUMNS``.

    The figures are over ok replicates. steady_median_s is the median of replicate medians,
    with steady_q25_s, steady_q75_s, iqr_s and cv (std/mean, ddof 1) over replicates; the
    other ``MEDIANS`` are medians over replicates too. status_summary reads ``"2 ok, 1
    crash"``; reasons is the tuple of distinct failure reasons. cold_pass_min_s and
    cold_pass_max_s are the range over replicates (a cold cost that is "up to X" must hold for
    every replicate); compile_time_max_s and the ``COMPILE_COUNTS`` (as <count>_max) are the
    largest over replicates. whole_peak_mem_* is the peak of the whole replicate, cold pass
    included, and workspace_mem_* the cold-pass peak minus the steady peak: what the first pass,
    cudnn.benchmark's search among it, held beyond the steady state (both the largest over
    replicates). samples_per_s follows ``throughput_basis`` (see ``THROUGHPUT_BASES``).
    replicate_medians, replicate_throughputs and replicate_work_rates are tuples for the
    bootstraps (the throughputs are whole-cycle rates, the shapes comparison's metric).
    best_window_s (ceilings) is the fastest ``BURST_WINDOW`` consecutive iterations' median,
    over replicates as the time of their median rate. achieved_per_s is in achieved_unit
    (``flop/s`` or ``byte/s``), also as achieved_tflops or achieved_gbps; peak_op names the
    ceiling a model cell is held against and pct_of_peak is the percentage of that measured
    ceiling (NaN when none). too_few_ok: n_ok < MIN_OK_REPLICATES. n_drift counts the ok
    replicates whose steady state drifted (see ``replicate_drift``) and drift_max is the
    largest such ratio. The latency tails, energy and throttling are ``energy.cell_energy``'s
    (``ENERGY_CELL_COLUMNS``); the paired numerics check's are ``numerics.cell_numerics``'s.
    """
    res = ds.results
    timed = res.loc[res["kind"].isin(["model", "ceiling"])]
    # Factorise the (fingerprint, kind, cell) key once; every later aggregate groups by the
    # integer group id, which is much cheaper than re-hashing three string columns each time.
    g = timed.groupby(_CELL_KEY, sort=True)
    out = g[_LABELS].last()
    groups = _Groups.of(timed, g.ngroup().to_numpy())
    _statuses(out, timed, groups)
    _steady(out, groups)
    _memory(out, groups)
    _replicates(out, groups)
    _drift(out, ds, groups)
    _best_windows(out, ds, groups)
    tf32 = (groups.ok["eff_cudnn_allow_tf32"] == "true").groupby(groups.gok).any()
    out["eff_cudnn_allow_tf32"] = np.where(
        tf32.reindex(groups.whole, fill_value=False).to_numpy(dtype=bool),
        "true",
        out["eff_cudnn_allow_tf32"].to_numpy(),
    )
    numerics = cell_numerics(groups.ok, groups.gok, groups.n)
    out = out.join(cell_energy(ds)).reset_index()
    # one block per dtype again (copy consolidates): the columns added below, and every
    # selection of rows later, then copy a few arrays rather than one per column
    out = pd.concat([out, pd.DataFrame({c: numerics[c].to_numpy() for c in NUM_CELL_COLUMNS},
                                       index=out.index)], axis=1).copy()
    _throughput(out)
    names = machine_names(ds.results)  # a cell two names measured is its fingerprint's
    out["machine"] = out["fingerprint_id"].astype(str).map(names)
    out["page"] = out["machine"] + "-" + out["fingerprint_id"].str.slice(0, 8)
    out["anchor"] = "cell-" + out["fingerprint_id"].str.slice(0, 8) + "-" + out["cell_id"]
    out["model_family"] = [model_family(m, s) for m, s in zip(out["model"], out["model_source"])]
    out["too_few_ok"] = out["n_ok"] < MIN_OK_REPLICATES
    _add_achieved(out)
    return out[list(CELL_COLUMNS)].copy()


#: Per cell, the last replicate's value of these (they are the same for every replicate).
_LABELS = ["machine", "cell_name", *schema.AXIS_COLUMNS, "shape_count", "work_unit",
           "eff_cudnn_allow_tf32"]


@dataclass(frozen=True)
class _Groups:
    """The rows' cell numbers (``gid``), the ok rows and theirs (``gok``): what every
    per-cell aggregate groups by."""

    gid: np.ndarray
    ok: pd.DataFrame
    gok: np.ndarray
    n: int

    @classmethod
    def of(cls, timed: pd.DataFrame, gid: np.ndarray) -> _Groups:
        ok = counted(timed)
        return cls(gid, timed.loc[ok], gid[ok], int(gid.max()) + 1 if len(gid) else 0)

    @property
    def whole(self) -> pd.RangeIndex:
        return pd.RangeIndex(self.n)

    def per_group(self, series: pd.Series) -> np.ndarray:
        return series.reindex(self.whole).to_numpy(dtype=float)

    def replicate_key(self) -> pd.MultiIndex:
        return pd.MultiIndex.from_arrays([self.ok["run_id"], self.ok["cell_id"],
                                          self.ok["replicate"]])


def _statuses(out: pd.DataFrame, timed: pd.DataFrame, groups: _Groups) -> None:
    """Replicates per status, their summary, and the distinct failure reasons."""
    n_groups, gid = groups.n, groups.gid
    status_code = pd.Categorical(timed["status"], categories=schema.STATUSES).codes
    counts = np.bincount(
        gid * len(schema.STATUSES) + status_code, minlength=n_groups * len(schema.STATUSES)
    ).reshape(n_groups, len(schema.STATUSES))
    out["n_total"] = counts.sum(axis=1)
    for i, status in enumerate(schema.STATUSES):
        out[f"n_{status}"] = counts[:, i]
    # an ok replicate of a sitting that disagrees is counted apart, and in no statistic
    out["n_left_out"] = np.bincount(gid[left_out(timed)], minlength=n_groups)
    out["n_ok"] -= out["n_left_out"]
    out["n_failed"] = out["n_total"] - out["n_ok"] - out["n_left_out"]
    out["status_summary"] = _status_summary(out)
    failed = ((timed["status"] != Status.OK) & (timed["reason"] != "")).to_numpy()
    reasons: list[tuple[str, ...]] = [()] * n_groups
    for i, reason in zip(gid[failed], timed["reason"].to_numpy()[failed]):
        if reason not in reasons[i]:
            reasons[i] = (*reasons[i], reason)
    out["reasons"] = pd.Series(reasons, index=out.index, dtype=object)


def _steady(out: pd.DataFrame, groups: _Groups) -> None:
    """The steady state and the cold pass over ok replicates, and compile's figures."""
    okf, gok, per_group = groups.ok, groups.gok, groups.per_group
    steady = okf["steady_median_s"].groupby(gok)
    out["steady_median_s"] = per_group(steady.median())
    out["steady_q25_s"] = per_group(steady.quantile(0.25))
    out["steady_q75_s"] = per_group(steady.quantile(0.75))
    out["iqr_s"] = out["steady_q75_s"] - out["steady_q25_s"]
    out["cv"] = per_group(steady.std(ddof=1)) / per_group(steady.mean())
    medians = okf[list(MEDIANS)].groupby(gok).median().reindex(groups.whole)
    for col in MEDIANS:
        out[col] = medians[col].to_numpy(dtype=float)
    cold = okf["cold_pass_s"].groupby(gok)
    out["cold_pass_min_s"] = per_group(cold.min())
    out["cold_pass_max_s"] = per_group(cold.max())
    out["compile_time_max_s"] = per_group(okf["compile_time_s"].groupby(gok).max())
    for col in COMPILE_COUNTS:
        out[f"{col}_max"] = per_group(okf[col].groupby(gok).max())
    # the reasons of the replicate that met the most breaks (replicates of one cell compile
    # the same model, so they name the same ones)
    most = okf.assign(_g=gok).sort_values("graph_breaks", ascending=False, kind="stable",
                                         na_position="last")
    reasons = most.groupby("_g")["graph_break_reasons"].first()
    out["graph_break_reasons"] = reasons.reindex(groups.whole, fill_value="").fillna(
        "").to_numpy(dtype=object)


def _memory(out: pd.DataFrame, groups: _Groups) -> None:
    """The whole replicate's peaks and the first pass's workspace, largest over replicates."""
    okf, gok = groups.ok, groups.gok
    for kind in ("allocated", "reserved"):
        cold_peak = okf[f"cold_peak_mem_{kind}_bytes"].to_numpy(dtype=float)
        steady_peak = okf[f"peak_mem_{kind}_bytes"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            workspace = np.clip(cold_peak - steady_peak, 0.0, None)
        out[f"whole_peak_mem_{kind}_bytes"] = groups.per_group(
            pd.Series(np.fmax(cold_peak, steady_peak)).groupby(gok).max())
        out[f"workspace_mem_{kind}_bytes"] = groups.per_group(
            pd.Series(workspace).groupby(gok).max())


def _replicates(out: pd.DataFrame, groups: _Groups) -> None:
    """Each cell's replicate figures as tuples, for the bootstraps."""
    okf, gok, n = groups.ok, groups.gok, groups.n
    out["replicate_medians"] = _grouped_tuples(gok, okf["steady_median_s"], n)
    out["replicate_throughputs"] = _grouped_tuples(gok, okf["samples_per_s"], n)
    # FLOP/s (= sum of FLOPs / sum of time): the fair rate when the arms process different
    # resolutions or batch sizes, as dynamic and ragged schedules do
    out["replicate_work_rates"] = _grouped_tuples(
        gok, okf["samples_per_s"] * okf["flops_per_sample"], n)


def _drift(out: pd.DataFrame, ds: Dataset, groups: _Groups) -> None:
    """How many ok replicates drifted while timed, and the worst drift."""
    okf, gok = groups.ok, groups.gok
    drift = replicate_drift(ds.samples)
    if len(drift):
        ratio = drift.reindex(groups.replicate_key()).to_numpy(dtype=float)
        drifted = rules.drift_applies(okf["kind"].to_numpy(object),
                                      okf["shapes"].to_numpy(object)) & rules.drifted(ratio)
    else:
        ratio, drifted = np.full(len(okf), np.nan), np.zeros(len(okf), dtype=bool)
    out["n_drift"] = np.bincount(gok[drifted], minlength=groups.n)
    worst = pd.Series(np.maximum(ratio, 1 / ratio)[drifted]).groupby(gok[drifted]).max()
    out["drift_max"] = groups.per_group(worst)


def _best_windows(out: pd.DataFrame, ds: Dataset, groups: _Groups) -> None:
    """A ceiling's best short window: the median of its replicates' rates, as a time, as the
    sustained rate is taken (the two differ when an even number of replicates is averaged)."""
    okf = groups.ok
    windows = best_window(ds.samples, okf.loc[okf["kind"] == "ceiling"])
    if not len(windows):
        out["best_window_s"] = np.nan
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = 1.0 / windows.reindex(groups.replicate_key()).to_numpy(dtype=float)
        out["best_window_s"] = 1.0 / groups.per_group(pd.Series(rates).groupby(groups.gok)
                                                      .median())


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
    """Per (run_id, cell_id, replicate) of ``rows``: the lowest median over ``BURST_WINDOW``
    consecutive steady iterations (all of them when there are fewer). A median, like the
    sustained figure it stands beside, so one slow iteration in a window does not make the
    best window read slower than the sustained rate.

    A machine's sustained rate (the median over a run of at least ``min_time_s``) is below
    what its first iterations reach while clocks and power settle: on an H200, the best
    windows of the bf16 and TF32 matmuls reached 13-16% above the sustained rate. Pages report both,
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
            windows = np.lib.stride_tricks.sliding_window_view(xs, w)
            out[k] = float(np.median(windows, axis=1).min())
    return pd.Series(out, dtype=float)


def replicate_drift(samples: pd.DataFrame) -> pd.Series:
    """Per (run_id, cell_id, replicate): median of the later half of the steady iterations over
    that of the earlier half, for replicates with at least 3 steady iterations.

    The same rule as ``bench check``'s "steady drift" (:mod:`bench.consistency`): a ratio far
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
    early = steady.loc[rules.early_half(rank, n)].groupby(key, sort=False)["seconds"].median()
    late = steady.loc[rules.late_half(rank, n)].groupby(key, sort=False)["seconds"].median()
    return (late / early.where(early > 0)).rename("drift")


def _status_summary(out: pd.DataFrame) -> pd.Series:
    parts = [
        np.where(out[f"n_{s}"] > 0, out[f"n_{s}"].astype(str) + f" {s}", "")
        for s in schema.STATUSES
    ]
    parts.append(np.where(out["n_left_out"] > 0,
                          out["n_left_out"].astype(str) + " left out (sittings disagree)", ""))
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
