"""Input-pipeline figures: one row per pipeline or end-to-end cell, over its replicates, and
the device's consumption each is held against.

A pipeline cell's figure is its delivered samples/s, the median over its replicates (fresh
processes) with a bootstrap interval, as a model cell's throughput is. The device's
consumption of a model cell is the same statistic of its synthetic-input throughput: the
rate at which the step would take batches if they were free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

import numpy as np
import pandas as pd

from bench.report.analysis.cells import machine_names, page_slug
from bench.report.analysis.intervals import MIN_OK_REPLICATES, median_ci
from bench.report.analysis.startup import windows
from bench.report.input.load import Dataset
from bench.report.vocabulary import Feeding
from bench.schema import Status

#: What ``pipeline_stats`` returns, in this order.
PIPELINE_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "anchor", "kind", "cell_id", "cell_name", "device",
    "model", "mode", "batch_size", "precision", "memory_format", "cudnn_benchmark",
    "num_workers", "decoder", "images", "n_total", "n_ok", "rate", "rate_low", "rate_high",
    "first_batch_s", "decode_errors", "cpu_time_s", "cpu_s_per_sample", "tree_peak_rss_bytes",
    "data_wait_frac", "status_summary", "batch_mean_s", "batch_iqr_s", "first_batch_min_s",
    "first_batch_max_s", "peak_rss_bytes", "n_rated", "n_startup",
)  # fmt: skip
#: What ``consumption`` returns: a model cell's synthetic-input rate and its interval.
DEMAND_COLUMNS: Final = (
    "fingerprint_id", "page", "anchor", "cell_id", "cell_name", "device", "model", "mode",
    "batch_size", "precision", "memory_format", "cudnn_benchmark", "n_ok", "rate", "rate_low",
    "rate_high",
)  # fmt: skip
_KINDS = ("pipeline", "e2e")
_KEY = ["fingerprint_id", "kind", "cell_id"]
_LABELS = ["machine", "cell_name", "device", "model", "mode", "batch_size", "precision",
           "memory_format", "cudnn_benchmark", "num_workers", "decoder", "images"]


def pipeline_stats(ds: Dataset) -> pd.DataFrame:
    """One row per (fingerprint, kind ∈ {pipeline, e2e}, cell); columns ``PIPELINE_COLUMNS``.

    rate is the median of the ok replicates' delivered samples/s over their windows past the
    workers' start-up (``analysis.startup``), rate_low and rate_high its 95% bootstrap interval
    (NaN below three such rates); n_rated counts them, n_startup the ok replicates timed inside
    the start-up (no rate). first_batch_s (the workers' start-up and first batch), cpu_time_s,
    cpu_s_per_sample (the tree's CPU seconds per delivered sample), tree_peak_rss_bytes and
    data_wait_frac are medians over ok replicates (the CPU per sample and data_wait_frac over
    those whose window had nothing to cut: they cannot be recomputed without the start-up);
    decode_errors is their sum (any bad file should be seen). batch_mean_s is the median over
    the rated replicates of each one's mean time per batch, batch_iqr_s its IQR: a loader's
    batches arrive in bursts (a worker's batch is often ready at once, then the next takes a
    whole decode), so a replicate's median batch can be a hundredth of its mean; the mean is
    what the delivered rate is, the batch over it."""
    res = ds.results
    rows = res.loc[res["kind"].isin(_KINDS)]
    if rows.empty:
        return pd.DataFrame(columns=list(PIPELINE_COLUMNS))
    ok_rows = rows.loc[rows["status"] == Status.OK]
    rows = rows.join(windows(ok_rows, ds.samples))
    out = []
    names = machine_names(res)  # one name a fingerprint, whoever ran each replicate
    for (fp, kind, cell), group in rows.groupby(_KEY, sort=True):
        ok = group.loc[group["status"] == Status.OK]
        rates = tuple(ok["window_rate"].dropna().astype(float))
        whole = ok.loc[ok["startup_cut"] == 0]
        steady_s = whole["steady_iters"].astype(float) * whole["steady_mean_s"].astype(float)
        delivered = whole["samples_per_s"].astype(float) * steady_s
        with np.errstate(divide="ignore", invalid="ignore"):
            per_sample = (whole["cpu_time_s"].astype(float) / delivered).where(delivered > 0)
        inside = int((ok["window_rate"].isna() & (ok["startup_cut"] > 0)).sum())
        last = group.iloc[-1]
        labels = {c: last[c] for c in _LABELS} | {"machine": names[str(fp)]}
        out.append({
            "fingerprint_id": fp, "kind": kind, "cell_id": cell,
            "page": page_slug(names[str(fp)], str(fp)),
            "anchor": f"cell-{str(fp)[:8]}-{cell}", **labels,
            "n_total": len(group), "n_ok": len(ok), "rates": rates,
            "first_batch_s": _median(ok["cold_first_iter_s"]),
            "decode_errors": float(ok["decode_errors"].astype(float).sum()) if len(ok) else np.nan,
            "cpu_time_s": _median(ok["cpu_time_s"]), "cpu_s_per_sample": _median(per_sample),
            "tree_peak_rss_bytes": _median(ok["tree_peak_rss_bytes"]),
            "data_wait_frac": _median(whole["data_wait_frac"]),
            "status_summary": _status(group, inside),
            "batch_mean_s": _median(ok["window_batch_s"]),
            "batch_iqr_s": _iqr(ok["window_batch_s"]),
            "first_batch_min_s": _extreme(ok["cold_first_iter_s"], min),
            "first_batch_max_s": _extreme(ok["cold_first_iter_s"], max),
            "peak_rss_bytes": _median(ok["peak_rss_bytes"]),
            "n_rated": len(rates), "n_startup": inside,
        })
    frame = pd.DataFrame(out)
    frame["rate"], frame["rate_low"], frame["rate_high"] = median_ci(list(frame["rates"]))
    frame["num_workers"] = frame["num_workers"].astype(float)
    return frame[list(PIPELINE_COLUMNS)]


def _status(group: pd.DataFrame, inside: int) -> str:
    """``3 ok``, ``1 timeout, 3 ok``; with ``(2 timed inside the workers' start-up)`` where
    ok replicates give no rate."""
    text = ", ".join(f"{n} {status}" for status, n in
                     group["status"].value_counts(sort=False).items())
    return text + (f" ({inside} {Feeding.STARTUP})" if inside else "")


def _median(values: pd.Series) -> float:
    xs = values.dropna().astype(float)
    return float(xs.median()) if len(xs) else float("nan")


def _iqr(values: pd.Series) -> float:
    xs = values.dropna().astype(float)
    return float(xs.quantile(0.75) - xs.quantile(0.25)) if len(xs) else float("nan")


def _extreme(values: pd.Series, pick: Callable[[Iterable[float]], float]) -> float:
    xs = values.dropna().astype(float)
    return float(pick(xs)) if len(xs) else float("nan")


def as_cells(pipes: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Pipeline rows in ``cell_stats``'s columns (its figures where they mean the same: the
    delivered rate as samples/s, the mean time per batch as the step, so that the two agree as
    a model cell's do, the first batch as the first pass, the tree's peak memory where it was
    read), for the tables that list every cell of a machine. A pipeline's row
    records no drift, throttling or energy, so those counts are 0, as on a CPU's cells, not
    missing (a missing count would read as one)."""
    out = pipes.rename(columns={"rate": "samples_per_s", "first_batch_s": "cold_pass_s",
                                "first_batch_min_s": "cold_pass_min_s",
                                "first_batch_max_s": "cold_pass_max_s",
                                "batch_mean_s": "steady_median_s", "batch_iqr_s": "iqr_s"})
    out = out.assign(peak_rss_bytes=out["tree_peak_rss_bytes"].fillna(out["peak_rss_bytes"]),
                     too_few_ok=out["n_ok"] < MIN_OK_REPLICATES, n_drift=0, n_throttled=0,
                     n_short_window=0, n_energy=0, throughput_basis="")
    return out.reindex(columns=list(columns))


def consumption(cells: pd.DataFrame) -> pd.DataFrame:
    """The synthetic-input rate of every eager, static-shape model cell (``cell_stats``'s
    rows), with its interval: what the device would consume were the batches free. The rate
    is the cell's own ``samples_per_s``, so a step reads the same here as on every page."""
    model = cells.loc[(cells["kind"] == "model") & (cells["shapes"] == "static")
                      & (cells["compile"] == "off") & (cells["n_ok"] > 0)
                      & (cells["model_source"] == "")]  # a user model may take no images
    if model.empty:
        return pd.DataFrame(columns=list(DEMAND_COLUMNS))
    model = model.copy()
    # each replicate's batch over its median step: the rate every other page quotes for the
    # cell (batch over the median step, ``cells.THROUGHPUT_BASES``), with its interval, not
    # the median of the replicates' mean rates, which read 4,329 where they quote 4,369
    batch = model["batch_size"].astype(float)
    per_step = [tuple(b / m for m in ms if m > 0)
                for b, ms in zip(batch, model["replicate_medians"])]
    _, model["rate_low"], model["rate_high"] = median_ci(per_step)
    model["rate"] = model["samples_per_s"].astype(float)
    return model[list(DEMAND_COLUMNS)].reset_index(drop=True)
