"""Tables about machines: their measured ceilings, their best throughput per workload, and one
summary row per fingerprint (hardware, software, runs, and whether a newer step superseded it).

These are what the machine pages and the Compare-machines page put side by side; results of
different fingerprints are never pooled, only shown next to each other.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from bench import schema, sittings
from bench.report.analysis.cells import Source, cells_of, machine_names, page_slug
from bench.report.analysis.intervals import median_ci, ratio_ci
from bench.report.analysis.sittings import counted
from bench.report.input.load import Dataset
from bench.report.vocabulary import Trust
from bench.schema import Status

#: What ``ceilings`` returns.
CEILING_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "anchor", "cell_id", "device", "op", "work_unit",
    "unit", "achieved", "ci_low", "ci_high", "burst", "n_ok", "n_total", "too_few_ok",
    "status_summary", "n_throttled",
)  # fmt: skip


def ceilings(data: Source) -> pd.DataFrame:
    """Measured machine ceilings per fingerprint, device and op; columns ``CEILING_COLUMNS``.

    unit is ``TFLOP/s`` or ``GB/s``; achieved is the sustained rate (median over replicates of
    each replicate's median iteration, in unit), with ci_low and ci_high from a bootstrap over
    replicates (NaN when insufficient); burst is the best short window (median over replicates
    of the fastest ``BURST_WINDOW`` consecutive iterations, in unit; NaN without samples);
    n_throttled counts the ok replicates whose clocks throttled. "% of peak" elsewhere is
    against ``achieved``.
    """
    cells = cells_of(data)
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
    out = pd.DataFrame(
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
            "too_few_ok": ceil["too_few_ok"],
            "status_summary": ceil["status_summary"],
            # a ceiling held down by a power cap is the capped machine's, and says so
            "n_throttled": ceil["n_throttled"],
        }
    )
    return out[list(CEILING_COLUMNS)]


#: What makes two machines' throughputs comparable on the Compare-machines page.
WORKLOAD_KEY = ["model", *schema.USER_MODEL_AXES, "mode", "batch_size", "resolution",
                "precision", "shapes"]


#: The same, and how the model ran: eager or compiled with a mode (and dynamic=). The
#: Compare-machines page keys on it, so that a compiled cell is only ever set beside compiled
#: cells of the same mode, and an eager one beside eager ones: a CPU's compiled throughput is
#: never weighed against a GPU's eager one as if they were one workload.
COMPILED_WORKLOAD_KEY = [*WORKLOAD_KEY, "compile", "compile_dynamic"]


#: What ``best_throughput`` returns.
BEST_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", *WORKLOAD_KEY, "samples_per_s", "steady_median_s",
    "cell_id", "anchor", "device", "memory_format", "cudnn_benchmark", "cudnn_deterministic",
    "cpu_threads", "compile", "compile_dynamic", "n_ok", "too_few_ok", "joules_per_sample",
    "mean_power_w", "samples_per_joule", "energy_method",
)  # fmt: skip


def best_throughput(data: Source, key: list[str] = WORKLOAD_KEY) -> pd.DataFrame:
    """Per fingerprint and workload (``key``: WORKLOAD_KEY, or COMPILED_WORKLOAD_KEY), the
    fastest cell with an ok median.

    Columns ``BEST_COLUMNS``. The best over the settings outside ``key`` (device included), so
    a GPU box is judged by its GPU; over WORKLOAD_KEY that includes the compile mode, which
    ``compile`` and ``compile_dynamic`` then name. Cells with too few ok replicates still
    compete, flagged ``too_few_ok``: dropping them would let a GPU box whose GPU cell lost a
    replicate be shown by its CPU's throughput.
    """
    cells = cells_of(data)
    ok = cells.loc[(cells["kind"] == "model") & cells["samples_per_s"].notna()]
    ok = ok.sort_values(["samples_per_s", "cell_id"], ascending=[False, True], kind="stable")
    best = ok.drop_duplicates(["fingerprint_id", *key], keep="first")
    cols = list(BEST_COLUMNS)
    return (
        best[cols]
        .sort_values(["fingerprint_id", *key], kind="stable")
        .reset_index(drop=True)
    )


#: How a fingerprint's step definition compares with its machine's newest (see machine_summary).
_STEP_COLUMNS = ("step_version", "newest_step_version", "superseded")
#: What ``machine_summary`` returns, in this order.
MACHINE_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "run_ids", "n_runs", "gpu_name", "gpu_count",
    "cpu_model", "cpu_cores", "cpu_logical", "cpu_threads", "gpu_memory_bytes", "memory_bytes",
    "torch_version", "torchvision_version", "cuda_version", "cudnn_version",
    "python_version", "os", "workload_version", "n_cells", "n_rows", "n_ok", "n_failed",
    "n_replaced",
    "first_started_at", "last_ended_at", "profile", "conv_api", "model", "reference",
    "machine_keys", "model_machines", *_STEP_COLUMNS,
)  # fmt: skip


def machine_summary(ds: Dataset) -> pd.DataFrame:
    """One row per fingerprint: machine, page, runs, hardware and software from env.json, counts.

    Columns ``MACHINE_COLUMNS``. The hardware counts are an int, or None where env.json does
    not say. Strings come from env.json untouched: untrusted, escape before display. Runs from
    before env.json recorded a workload version were measured with version 1 of the step.

    A new step definition fixes how something was measured (see ``WORKLOAD_VERSION``), so a
    fingerprint whose machine was measured again under a newer one is ``superseded``: the
    pages answer from the newest step only (step_version, and newest_step_version of that
    machine), and keep the older pages as measured.
    """
    res = ds.results
    rows = []
    figures = machine_figures(ds)
    judged = agreement(figures, ds.runs)
    runs = {r.results.as_posix(): r for r in ds.runs}
    names = machine_names(res)
    for fp, group in res.groupby("fingerprint_id", sort=True):
        env = ds.envs.get(str(fp), {})
        torch = env.get("torch") or {}
        gpus = env.get("gpus") or []
        cpu = env.get("cpu") or {}
        machine = names[str(fp)]
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
                "n_ok": int((group["status"] == Status.OK).sum()),
                "n_failed": int((group["status"] != Status.OK).sum()),
                "n_replaced": sum(ds.replaced.get(str(src), 0)
                                  for src in group["source"].unique()),
                "first_started_at": started.min() if len(started) else "",
                "last_ended_at": ended.max() if len(ended) else "",
                "profile": str(env.get("profile") or ""),
                "conv_api": conv_api(env),
                **_trust_facts(env, [runs[s] for s in group["source"].unique() if s in runs],
                               figures, judged, str(fp)),
            }
        )
    out = pd.DataFrame(rows, columns=[c for c in MACHINE_COLUMNS if c not in _STEP_COLUMNS])
    # the version as a number (1 where env.json's text is no number), to order step definitions
    version = pd.to_numeric(out["workload_version"], errors="coerce").fillna(1).astype(float)
    out["step_version"] = version
    out["newest_step_version"] = version.groupby(out["machine"]).transform("max")
    out["superseded"] = (version < out["newest_step_version"]).astype(bool)
    return out


def _trust_facts(env: dict[str, Any], runs: list[Any], figures: pd.DataFrame,
                 judged: dict[str, tuple[MachineAgreement, ...]], fp: str) -> dict[str, Any]:
    """A fingerprint's model, whether every run of it is the project's own, the machines its
    runs came from, and every machine of its model held against the rest (``spread``)."""
    model = hardware_model(env)
    mine = figures.loc[figures["fingerprint_id"] == fp, "machine_key"]
    return {
        "model": model,
        "reference": bool(runs) and all(r.trust is Trust.REFERENCE for r in runs),
        "machine_keys": tuple(sorted(set(mine))),
        "model_machines": judged.get(model, ()),
    }


def conv_api(env: dict[str, Any]) -> tuple[tuple[str, bool | None, str], ...]:
    """(entry point, whether it took ``algo=``, the error's first line) per convolution entry
    point the probe asked this fingerprint's torch about; empty for runs made before it asked.
    """
    found = env.get("conv_api")
    if not isinstance(found, dict):
        return ()
    out = []
    for name, answer in sorted(found.items()):
        if not isinstance(answer, dict):
            continue
        accepts = answer.get("accepts_algo")
        out.append((str(name), accepts if isinstance(accepts, bool) else None,
                    str(answer.get("error") or "")))
    return tuple(out)


def _count(value: object) -> int | None:
    """A positive whole number from env.json (untrusted JSON), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and value > 0 else None


#: What ``machine_figures`` returns: one row per physical machine and cell, its replicates'
#: step times (those every statistic counts) as a tuple.
FIGURE_COLUMNS: Final = ("model", "machine_key", "machine_name", "machine_uid",
                         "fingerprint_id", "kind", "cell_id", "cell_name", "seconds")
#: The band within which two machines' medians count as one: the sittings' (and the
#: verdicts') δ, since two machines of one model should agree as two sittings of one do.
AGREE_DELTA: Final = sittings.DELTA


def machine_key(run: Any) -> str:
    """A run's physical machine: its ``machine_uid``, else its folder (a run that does not
    say which machine measured it counts as a machine of its own)."""
    return f"uid:{run.machine_uid}" if run.machine_uid else f"run:{run.results.parent.as_posix()}"


def machine_figures(ds: Dataset) -> pd.DataFrame:
    """Every counted timed replicate's step time, per hardware model, physical machine and
    cell (``FIGURE_COLUMNS``): what the model pages hold machines of one model against."""
    res = ds.results
    rows = res.loc[counted(res) & res["kind"].isin(sittings.PACED_KINDS)
                   & (res["steady_median_s"] > 0)]
    runs = {r.results.as_posix(): r for r in ds.runs}
    rows = rows.loc[rows["source"].isin(runs)]
    if rows.empty:
        return pd.DataFrame(columns=list(FIGURE_COLUMNS))
    by_source = {s: (machine_key(r), r.machine_name or r.machine, r.machine_uid or "")
                 for s, r in runs.items()}
    models = {fp: hardware_model(env) for fp, env in ds.envs.items()}
    keyed = rows.assign(
        model=rows["fingerprint_id"].map(lambda fp: models.get(fp, "unknown hardware")),
        machine_key=rows["source"].map(lambda s: by_source[s][0]),
        machine_name=rows["source"].map(lambda s: by_source[s][1]),
        machine_uid=rows["source"].map(lambda s: by_source[s][2]))
    groups = keyed.groupby(["model", "machine_key", "cell_id"], sort=True)
    out = (groups.agg(machine_name=("machine_name", "first"),
                      machine_uid=("machine_uid", "first"),
                      fingerprint_id=("fingerprint_id", "first"), kind=("kind", "first"),
                      cell_name=("cell_name", "first"))
           .reset_index())
    # each group's step times in row order, cut from one stable sort by group (a tuple
    # built per group by pandas took longer than the rest of the figures)
    group = groups.ngroup().to_numpy()
    seconds = keyed["steady_median_s"].to_numpy(dtype=np.float64)[np.argsort(group,
                                                                            kind="stable")]
    ends = np.cumsum(np.bincount(group, minlength=len(out)))
    out["seconds"] = [tuple(part.tolist()) for part in np.split(seconds, ends[:-1])]
    return out[list(FIGURE_COLUMNS)]


#: What ``cell_spread`` returns: per model and cell measured by two or more machines.
SPREAD_COLUMNS: Final = ("model", "cell_id", "n_machines", "low_s", "high_s", "ratio")


def cell_spread(figures: pd.DataFrame) -> pd.DataFrame:
    """Per model and cell, the spread between its machines: the fastest and the slowest
    machine's median step time and their ratio, over how many machines (``SPREAD_COLUMNS``;
    only cells two or more machines measured)."""
    if figures.empty:
        return pd.DataFrame(columns=list(SPREAD_COLUMNS))
    # statistics' median of a few values is numpy's, at a tenth of its cost per call
    med = figures.assign(median=[float(statistics.median(s)) for s in figures["seconds"]])
    out = (med.groupby(["model", "cell_id"], sort=True)
           .agg(n_machines=("machine_key", "nunique"), low_s=("median", "min"),
                high_s=("median", "max"))
           .reset_index())
    out = out.loc[out["n_machines"] > 1].reset_index(drop=True)
    out["ratio"] = out["high_s"] / out["low_s"]
    return out[list(SPREAD_COLUMNS)]


@dataclass(frozen=True)
class MachineAgreement:
    """One physical machine of a hardware model held against the others of that model, cell
    by cell: on how many shared cells the interval of its median over theirs reaches into
    1 ± δ (``agree``), lies wholly outside it (``disagree``), or could not be had (too few
    replicates: neither), and the median of those ratios (its step time over theirs)."""

    key: str  # machine_key
    name: str  # the contributor's name for it (untrusted)
    uid: str  # "" where no run of it recorded one
    fingerprints: tuple[str, ...]
    reference: bool  # every run of it is the project's own
    shared: int  # cells it shares with another machine of its model
    agree: int
    disagree: int
    ratio: float | None  # median over its shared cells of its median over the others'


def agreement(figures: pd.DataFrame, runs: Sequence[Any] = ()
              ) -> dict[str, tuple[MachineAgreement, ...]]:
    """Model → every machine of it held against the rest of that model, pooled (``ratio_ci``
    of its replicates against the others' on each cell both measured); ``runs`` say which
    machines are the project's own."""
    if figures.empty:
        return {}
    reference: dict[str, bool] = {}
    for r in runs:
        reference[machine_key(r)] = reference.get(machine_key(r), True) and (
            r.trust is Trust.REFERENCE)
    mine: list[tuple[float, ...]] = []
    rest: list[tuple[float, ...]] = []
    where: list[int] = []
    rows = list(figures.itertuples(index=False))
    for _, idx in figures.groupby(["model", "cell_id"], sort=False).indices.items():
        if len(idx) < 2:
            continue
        for i in idx:
            mine.append(rows[i].seconds)
            rest.append(tuple(x for j in idx if j != i for x in rows[j].seconds))
            where.append(int(i))
    est, lo, hi = ratio_ci(mine, rest)
    found: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for i, e, a, b in zip(where, est, lo, hi):
        found.setdefault((rows[i].model, rows[i].machine_key), []).append((e, a, b))
    out: dict[str, list[MachineAgreement]] = {}
    for (model, key), group in figures.groupby(["model", "machine_key"], sort=True):
        judged = found.get((str(model), str(key)), [])
        ratios = [e for e, _, _ in judged if math.isfinite(e)]
        out.setdefault(str(model), []).append(MachineAgreement(
            key=str(key), name=str(group["machine_name"].iloc[0]),
            uid=str(group["machine_uid"].iloc[0]),
            fingerprints=tuple(sorted(set(map(str, group["fingerprint_id"])))),
            reference=reference.get(str(key), False), shared=len(judged),
            agree=int(sum(a <= 1 + AGREE_DELTA and b >= 1 - AGREE_DELTA for _, a, b in judged)),
            disagree=int(sum(a > 1 + AGREE_DELTA or b < 1 - AGREE_DELTA for _, a, b in judged)),
            ratio=float(np.median(ratios)) if ratios else None))
    return {model: tuple(found_) for model, found_ in out.items()}


def hardware_model(env: dict[str, Any]) -> str:
    """The hardware model a fingerprint ran on, as its page names it: the GPU's name (``2 ×
    NVIDIA H100`` for two), else the CPU's model and its logical CPUs (``AMD EPYC 9R14, 2
    vCPU``): machines of one model share a page, whatever their names or software."""
    gpus = env.get("gpus") or []
    if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) and gpus[0].get("name"):
        name = str(gpus[0]["name"]).strip()
        return f"{len(gpus)} × {name}" if len(gpus) > 1 else name
    cpu = env.get("cpu") or {}
    model = str(cpu.get("model") or "").strip() if isinstance(cpu, dict) else ""
    if not model:
        return "unknown hardware"
    count = _count(cpu.get("logical_cpus"))
    return f"{model}, {count} vCPU" if count else model
