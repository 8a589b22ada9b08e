"""Pairs of cells that differ in one setting: the speedup, its interval and the verdict.

- A comparison pairs two cells on the **same fingerprint** that differ in one axis only;
  results of different machines or software versions are never pooled.
- **speedup = median(baseline replicate medians) / median(variant replicate medians)**, so > 1
  means the variant is faster; its 95 % CI is over replicates (see ``intervals``).
- **verdict**: "faster" only if ci_low > 1 + DELTA, "slower" only if ci_high < 1 − DELTA,
  otherwise "no clear difference" (a real answer: the CI overlaps the ±DELTA band). With fewer
  than MIN_OK_REPLICATES ok replicates on either side the verdict is "insufficient" and there
  is no CI.

DELTA is what the Methodology page quotes, so change it only together with that page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from bench import schema
from bench.intervals import DELTA as DELTA
from bench.report.analysis.cells import Source, cells_of
from bench.report.analysis.intervals import MIN_OK_REPLICATES, ratio_ci
from bench.report.analysis.numerics import numeric_take, pair_numerics
from bench.report.vocabulary import Noise, Verdict

if TYPE_CHECKING:  # typing.TypeGuard is Python 3.10+; annotations are never evaluated here
    from typing import TypeGuard

#: Every verdict a comparison can have.
VERDICTS = (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT)


def _other_values(axis: str, baseline: str) -> tuple[str, ...]:
    """Every other value the schema allows on ``axis``, in its order: a value added there is
    compared too. ``n/a`` (a CPU cell's cuDNN switch) is no setting to compare."""
    return tuple(v for v in schema.AXIS_CHOICES[axis] if v not in (baseline, "n/a"))


#: compare() axes: baseline value → variant values, and what is compared.
AXES: dict[str, tuple[str, tuple[str, ...]]] = {
    axis: (base, _other_values(axis, base)) for axis, base in (
        ("cudnn_benchmark", "off"), ("cudnn_deterministic", "off"), ("precision", "fp32"),
        ("memory_format", "nchw"), ("device", "cpu"), ("shapes", "static"))
}
AXES["cpu_threads"] = ("all", ("1",))  # every core the process may use, against one thread
AXES["compile"] = ("off", _other_values("compile", "off"))  # eager first

#: Axis columns left out of the pairing key, per axis (beyond the axis itself). A benchmark-off
#: cell has no meaningful benchmark_limit; a CPU cell has no cuDNN switches, a GPU cell no threads.
_KEY_EXCLUDE: dict[str, tuple[str, ...]] = {
    "cudnn_benchmark": ("cudnn_benchmark_limit",),
    "compile": ("compile_dynamic",),  # an eager cell has no dynamic= (it reads "auto")
    "device": ("cpu_threads", "cudnn_benchmark", "cudnn_deterministic", "cudnn_benchmark_limit"),
}
#: Context columns taken from the variant cell instead of the baseline.
_FROM_VARIANT: dict[str, tuple[str, ...]] = {
    "cudnn_benchmark": ("cudnn_benchmark_limit",),
    "compile": ("compile_dynamic",),
    "device": ("cudnn_benchmark", "cudnn_deterministic", "cudnn_benchmark_limit"),
}

#: The leading columns of every comparison: which pair, of which axis, where.
PAIR_COLUMNS: Final = (
    "fingerprint_id", "machine", "page", "axis", "metric", "baseline_value", "variant_value",
    "baseline_cell_id", "variant_cell_id", "baseline_anchor", "variant_anchor",
)  # fmt: skip
#: The figures of every comparison, after the context axes.
PAIR_FIGURES: Final = (
    "model_family", "n_base", "n_var", "base_median_s", "var_median_s", "base_samples_per_s",
    "var_samples_per_s", "speedup", "ci_low", "ci_high", "verdict", "noise", "spread",
    "n_left_out",
)  # fmt: skip


def compare_columns(axis: str) -> tuple[str, ...]:
    """What ``compare(…, axis)`` returns: the pair, the other axes as context, the figures,
    and on the axes that change the arithmetic the variant's numerics (``var_num_*``, see
    ``numerics``), so a pair has its speed and its numbers side by side."""
    return (*PAIR_COLUMNS, *(c for c in schema.AXIS_COLUMNS if c != axis), *PAIR_FIGURES,
            *pair_numerics(axis))


#: What ``compare`` returns, per axis.
COMPARE_COLUMNS: Final[dict[str, tuple[str, ...]]] = {axis: compare_columns(axis) for axis in AXES}


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


def _verdicts(lo: np.ndarray, hi: np.ndarray, n_base: np.ndarray, n_var: np.ndarray) -> np.ndarray:
    few = (np.asarray(n_base) < MIN_OK_REPLICATES) | (np.asarray(n_var) < MIN_OK_REPLICATES)
    return np.select(
        [few | np.isnan(lo) | np.isnan(hi), lo > 1 + DELTA, hi < 1 - DELTA],
        [Verdict.INSUFFICIENT, Verdict.FASTER, Verdict.SLOWER],
        Verdict.NO_CLEAR_DIFFERENCE,
    )


def candidate_pairs(cells: pd.DataFrame, axis: str) -> int:
    """About how many pairs ``compare(cells, axis)`` will bootstrap: one per variant cell at
    most (for ``device``, per CUDA cell that the pairing keeps). Sets the order of the work."""
    baseline = AXES[axis][0]
    model = cells.loc[cells["kind"] == "model"]
    if not (model[axis] == baseline).any():
        return 0
    return len(_variants(model, axis))


def _variants(model: pd.DataFrame, axis: str) -> pd.DataFrame:
    """The cells on the variant side of ``axis``; for ``device``, only CUDA cells with cudnn
    benchmark and deterministic off."""
    var = model.loc[model[axis].isin(AXES[axis][1])]
    if axis == "device":
        cuda = var["device"] == "cuda"
        var = var.loc[
            ~cuda | ((var["cudnn_benchmark"] == "off") & (var["cudnn_deterministic"] == "off"))
        ]
    return var


def compare(data: Source, axis: str) -> pd.DataFrame:
    """Pairs of cells on the same fingerprint that differ only in ``axis`` (see ``AXES``).

    Columns ``COMPARE_COLUMNS[axis]``: metric is ``time`` (``throughput`` for shapes); the
    other axis columns are context; n_base and n_var count ok replicates; speedup > 1 means
    the variant is faster. For ``device`` a CPU cell is paired with the CUDA cell that has
    cudnn benchmark and deterministic off, whatever its thread count.
    """
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; expected one of: {', '.join(AXES)}")
    cells = cells_of(data)
    baseline = AXES[axis][0]
    model = cells.loc[cells["kind"] == "model"]
    if axis == "cpu_threads":
        model = model.assign(cpu_threads=threads_text(model["cpu_threads"]))
    exclude = {axis, *_KEY_EXCLUDE.get(axis, ())}
    key_cols = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS if c not in exclude)]
    base = model.loc[model[axis] == baseline]
    var = _variants(model, axis)
    if base.empty or var.empty:
        return _empty_compare(axis)
    base = base.assign(_key=row_hash(base[key_cols]))
    var = var.assign(_key=row_hash(var[key_cols]))
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
        *_NOISE_INPUTS,
        *_FROM_VARIANT.get(axis, ()),
        *numeric_take(axis),
    ]
    pairs = base.merge(var[take].add_prefix("v_"), left_on="_key", right_on="v__key", how="inner")
    metric = "throughput" if axis == "shapes" else "time"
    est, lo, hi = _ratios(pairs, metric)
    out = _pair_columns(pairs, axis, metric)
    out["model_family"] = pairs["model_family"]
    out["n_base"] = pairs["n_ok"].astype("int64")
    out["n_var"] = pairs["v_n_ok"].astype("int64")
    out["base_median_s"] = pairs["steady_median_s"]
    out["var_median_s"] = pairs["v_steady_median_s"]
    out["base_samples_per_s"] = pairs["samples_per_s"]
    out["var_samples_per_s"] = pairs["v_samples_per_s"]
    out["speedup"], out["ci_low"], out["ci_high"] = est, lo, hi
    out["verdict"] = _verdicts(lo, hi, out["n_base"].to_numpy(), out["n_var"].to_numpy())
    out["noise"], out["spread"] = _noise(pairs)
    out["n_left_out"] = (pairs["n_left_out"] + pairs["v_n_left_out"]).astype("int64")
    for col in numeric_take(axis):
        out[f"var_{col}"] = pairs[f"v_{col}"].to_numpy()
    insufficient = out["verdict"] == Verdict.INSUFFICIENT
    out.loc[insufficient, ["ci_low", "ci_high"]] = np.nan
    order = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS if c != axis), "variant_value"]
    return out.sort_values(order, kind="stable", na_position="first").reset_index(drop=True)


#: What a pair's noise is judged from, on each side.
_NOISE_INPUTS = ("n_drift", "n_throttled", "n_left_out", "cv")
#: Replicates whose coefficient of variation passes this are too spread for an interval a
#: reader can use: the page says "noisy" and gives the spread instead.
NOISY_CV = 0.10


def _noise(pairs: pd.DataFrame) -> tuple[list[object], np.ndarray]:
    """Each pair's ``Noise`` (the first that applies: drift, throttling, spread; "" for none)
    and the larger of its two sides' coefficients of variation."""
    def both(col: str) -> tuple[np.ndarray, np.ndarray]:
        return (pairs[col].fillna(0).to_numpy(dtype=float),
                pairs[f"v_{col}"].fillna(0).to_numpy(dtype=float))

    drift, throttled = (np.maximum(*both(c)) > 0 for c in ("n_drift", "n_throttled"))
    spread = np.maximum(*both("cv"))
    noise = np.select([drift, throttled, spread > NOISY_CV],
                      [Noise.DRIFT, Noise.THROTTLED, Noise.SPREAD], "")
    return list(noise), spread


def _ratios(pairs: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair's ratio and its interval: of step times (baseline over variant), or of
    throughputs (variant over baseline), as work rates where both arms have FLOP counts and
    plain samples/s otherwise."""
    if metric == "time":
        return ratio_ci(pairs["replicate_medians"].tolist(), pairs["v_replicate_medians"].tolist())

    def finite(t: tuple[float, ...]) -> bool:
        return len(t) > 0 and bool(np.all(np.isfinite(np.asarray(t, dtype=float))))

    use_work = [finite(a) and finite(b) for a, b in
                zip(pairs["v_replicate_work_rates"], pairs["replicate_work_rates"])]
    var_rates = [w if u else t for u, w, t in zip(
        use_work, pairs["v_replicate_work_rates"], pairs["v_replicate_throughputs"])]
    base_rates = [w if u else t for u, w, t in zip(
        use_work, pairs["replicate_work_rates"], pairs["replicate_throughputs"])]
    return ratio_ci(var_rates, base_rates)


def _pair_columns(pairs: pd.DataFrame, axis: str, metric: str) -> pd.DataFrame:
    """Which pair, of which axis, where, and the other axes as its context."""
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
    return out


def threads_text(threads: pd.Series) -> pd.Series:
    """``cpu_threads`` as ``compare`` pairs it: the count as text, ``all`` where it is empty
    (every core the process may use)."""
    return pd.Series([str(int(t)) if pd.notna(t) else "all" for t in threads],
                     index=threads.index, dtype=object)


def row_hash(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def row_keys(frame: pd.DataFrame, key: list[str]) -> pd.Index:
    return pd.Index(row_hash(frame[key]))


def _empty_compare(axis: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in COMPARE_COLUMNS[axis]})


def join_cells(pairs: pd.DataFrame, cells: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
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
