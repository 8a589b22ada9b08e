"""Per cell: latency tails, energy per sample, power and throttling, over its replicates.

What a purchase weighs besides samples/s. The replicate is the unit, as everywhere: a
replicate's p50, p95 and p99 step times are order statistics of its own steady iterations
(recomputed from samples.csv, so rows written before the tails were columns have them too);
the cell's figure is their median over ok replicates, with a bootstrap interval over the
replicates (``bootstrap.median_ci``). Energy per sample and mean power are the medians of the
replicates that measured them; a cell's energy method is its replicates' (a mix reads as the
weakest), and where none measured, the reason of its rows. Nothing is estimated.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

from bench import schema
from bench.report.analysis.intervals import median_ci
from bench.report.analysis.sittings import counted
from bench.report.input.load import Dataset

#: The latency quantiles a replicate is summarised by.
TAILS: Final = {"p50": 0.50, "p95": 0.95, "p99": 0.99}
#: The energy methods from the most to the least direct (a cell reads as its weakest).
_METHOD_ORDER: Final = ("nvml-energy", "rapl", "nvml-power", "none")

#: What ``cell_energy`` adds to each cell.
ENERGY_CELL_COLUMNS: Final = (
    "latency_p50_s", "latency_p95_s", "latency_p99_s", "latency_p99_lo_s", "latency_p99_hi_s",
    "latency_steps_min", "joules_per_sample", "mean_power_w", "samples_per_joule", "n_energy",
    "energy_method", "energy_reason", "n_throttled", "throttle_reasons", "sm_clock_min_mhz",
    "sm_clock_median_mhz", "gpu_util_pct", "n_short_window",
)  # fmt: skip

_KEY = ["run_id", "cell_id", "replicate"]


def replicate_tails(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (run_id, cell_id, replicate): the p50, p95 and p99 of its steady iterations, and
    how many there were (``steps``: a p99 of 5 steps is near their slowest, not a 1-in-100)."""
    steady = samples.loc[samples["phase"] == "steady", [*_KEY, "seconds"]]
    if steady.empty:
        return pd.DataFrame(columns=[*TAILS, "steps"], index=pd.MultiIndex.from_arrays(
            [[], [], []], names=_KEY), dtype=float)
    g = steady.groupby(_KEY, sort=False)["seconds"]
    return pd.DataFrame({**{name: g.quantile(q) for name, q in TAILS.items()},
                         "steps": g.size().astype(float)})


def _weakest(methods: pd.Series, cell: pd.Series) -> pd.Series:
    """Per cell, the weakest of its rows' energy methods (``_METHOD_ORDER``; other values and
    empty ones tell nothing): the largest rank, taken over the whole column at once."""
    rank = methods.map({m: i for i, m in enumerate(_METHOD_ORDER)})
    found = rank.groupby(cell, sort=False).max()
    return found.map(lambda r: "" if r != r else _METHOD_ORDER[int(r)])


def _first_text(values: pd.Series, cell: pd.Series) -> pd.Series:
    """Per cell, the first of its rows' non-empty texts (a cell without one is left out)."""
    text = values.map(lambda v: isinstance(v, str) and bool(v)).astype(bool)
    return values.loc[text].groupby(cell.loc[text], sort=False).first()


def _tails(ok: pd.DataFrame, tails: pd.DataFrame, out: pd.DataFrame) -> None:
    key = pd.MultiIndex.from_arrays([ok["run_id"], ok["cell_id"], ok["replicate"]])
    got = tails.reindex(key)
    per = ok.assign(**{f"_{n}": got[n].to_numpy(dtype=float) for n in (*TAILS, "steps")})
    groups = per.groupby("_cell", sort=False)
    out["latency_steps_min"] = groups["_steps"].min()
    for name in TAILS:
        out[f"latency_{name}_s"] = groups[f"_{name}"].median()
    each = groups["_p99"].agg(tuple)
    p99 = [tuple(x for x in xs if np.isfinite(x)) for xs in each]
    _, lo, hi = median_ci(p99)
    out["latency_p99_lo_s"] = pd.Series(lo, index=each.index)
    out["latency_p99_hi_s"] = pd.Series(hi, index=each.index)


def _energy(ok: pd.DataFrame, every: pd.DataFrame, out: pd.DataFrame) -> None:
    g = ok.groupby("_cell", sort=False)
    measured = ok["joules_per_sample"].notna()
    out["joules_per_sample"] = ok.loc[measured].groupby("_cell")["joules_per_sample"].median()
    # a ceiling has no samples to divide its energy by, yet its power was measured
    powered = ok["mean_power_w"].notna()
    out["mean_power_w"] = ok.loc[powered].groupby("_cell")["mean_power_w"].median()
    out["samples_per_joule"] = 1.0 / out["joules_per_sample"]
    out["n_energy"] = measured.groupby(ok["_cell"]).sum()
    out["energy_method"] = _weakest(ok["energy_method"], ok["_cell"])
    out["energy_reason"] = _first_text(every["energy_reason"], every["_cell"])
    throttled = ok["throttled"].astype(str).isin(["True", "true"])
    out["n_throttled"] = throttled.groupby(ok["_cell"]).sum()
    out["throttle_reasons"] = _first_text(ok.loc[throttled, "throttle_reasons"],
                                          ok.loc[throttled, "_cell"])
    out["sm_clock_min_mhz"] = g["sm_clock_min_mhz"].min()
    out["sm_clock_median_mhz"] = g["sm_clock_median_mhz"].median()
    out["gpu_util_pct"] = g["gpu_util_pct"].median()
    short = ok["energy_j"].notna() & (ok["energy_window_s"] < schema.ENERGY_MIN_WINDOW_S)
    out["n_short_window"] = short.groupby(ok["_cell"]).sum()


def cell_energy(ds: Dataset) -> pd.DataFrame:
    """One row per (fingerprint_id, kind, cell_id) of the timed rows; ``ENERGY_CELL_COLUMNS``.

    latency_*: medians over ok replicates of their own quantiles (NaN without samples), the
    p99's bootstrap interval in latency_p99_lo_s/hi_s (NaN below three replicates), and
    latency_steps_min the fewest steady iterations an ok replicate timed.
    joules_per_sample: the median over the n_energy replicates that measured it (NaN where
    none did: energy_reason says why); mean_power_w: over those that measured it, a ceiling's
    (which has no samples) included. n_throttled: ok replicates whose
    device throttled, with the first one's reasons; n_short_window: ok replicates whose energy
    window was under ``schema.ENERGY_MIN_WINDOW_S``.
    """
    res = ds.results
    every = res.loc[res["kind"].isin(["model", "ceiling"])].copy()
    # each cell numbered in the order it first appears (grouping by a number, not a tuple)
    cells = pd.MultiIndex.from_arrays([every["fingerprint_id"], every["kind"], every["cell_id"]],
                                      names=["fingerprint_id", "kind", "cell_id"])
    codes, uniques = pd.factorize(cells)
    every["_cell"] = codes
    ok = every.loc[counted(every)]
    out = pd.DataFrame(index=pd.RangeIndex(len(uniques)))
    _tails(ok, replicate_tails(ds.samples), out)
    _energy(ok, every, out)
    for col in ("n_energy", "n_throttled", "n_short_window"):
        out[col] = out[col].fillna(0).astype(int)
    for col in ("energy_method", "energy_reason", "throttle_reasons"):
        out[col] = out[col].fillna("").astype(object)
    out.index = pd.MultiIndex.from_tuples(list(uniques),
                                          names=["fingerprint_id", "kind", "cell_id"])
    return out[list(ENERGY_CELL_COLUMNS)]


#: The figures ``with_cell_figures`` copies beside a comparison, each side's.
PAIR_ENERGY: Final = ("latency_p99_s", "latency_p99_lo_s", "latency_p99_hi_s",
                      "latency_steps_min", "joules_per_sample", "mean_power_w",
                      "samples_per_joule", "energy_method", "n_throttled")
#: What they are called there: ``base_`` (the baseline cell's) and ``var_`` (the variant's).
PAIR_ENERGY_COLUMNS: Final = (*(f"base_{c}" for c in PAIR_ENERGY),
                              *(f"var_{c}" for c in PAIR_ENERGY))


def with_cell_figures(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with each side's latency tail, energy and throttling (``PAIR_ENERGY_COLUMNS``),
    looked up by fingerprint and cell id."""
    model = cells.loc[cells["kind"] == "model"].set_index(["fingerprint_id", "cell_id"])
    out = pairs.copy()
    for side, col in (("base", "baseline_cell_id"), ("var", "variant_cell_id")):
        key = pd.MultiIndex.from_arrays([out["fingerprint_id"], out[col]])
        got = model[list(PAIR_ENERGY)].reindex(key)
        for c in PAIR_ENERGY:
            out[f"{side}_{c}"] = got[c].to_numpy()
    return out
