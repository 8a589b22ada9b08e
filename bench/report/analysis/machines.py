"""Tables about machines: their measured ceilings, their best throughput per workload, and one
summary row per fingerprint (hardware, software, runs, and whether a newer step superseded it).

These are what the machine pages and the Compare-machines page put side by side; results of
different fingerprints are never pooled, only shown next to each other.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import pandas as pd

from bench import schema
from bench.report.analysis.cells import Source, cells_of, page_slug
from bench.report.analysis.intervals import median_ci
from bench.report.input.load import Dataset
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
    "first_started_at", "last_ended_at", "profile", "conv_api", *_STEP_COLUMNS,
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
                "n_ok": int((group["status"] == Status.OK).sum()),
                "n_failed": int((group["status"] != Status.OK).sum()),
                "n_replaced": sum(ds.replaced.get(str(src), 0)
                                  for src in group["source"].unique()),
                "first_started_at": started.min() if len(started) else "",
                "last_ended_at": ended.max() if len(ended) else "",
                "profile": str(env.get("profile") or ""),
                "conv_api": conv_api(env),
            }
        )
    out = pd.DataFrame(rows, columns=[c for c in MACHINE_COLUMNS if c not in _STEP_COLUMNS])
    # the version as a number (1 where env.json's text is no number), to order step definitions
    version = pd.to_numeric(out["workload_version"], errors="coerce").fillna(1).astype(float)
    out["step_version"] = version
    out["newest_step_version"] = version.groupby(out["machine"]).transform("max")
    out["superseded"] = (version < out["newest_step_version"]).astype(bool)
    return out


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
