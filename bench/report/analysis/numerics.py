"""What a cell's outputs and training did to the numbers, over its replicates.

Each replicate may carry a paired numerics check (``num_*`` in results.csv): the same weights
and the same seeded inputs run through the cell's configuration and through a strict reference
(fp32 with TF32 off, eager, NCHW; fp64 on the CPU where affordable), outside the timed windows.
Per cell this module gives the **median** of each figure over its ok replicates (what a reader
reads as typical) and, where a tolerance is a bound every replicate must keep, the **worst**:
the largest relative error, absolute error, loss difference and parameter drift, the smallest
cosine similarity and top-1 agreement (``<figure>_worst``). The judge weighs the worst
(``judge.numerics``); the pages quote it beside the median.

Rows older than the check (or of a cell it skipped) have the columns empty: such a cell's
figures are NaN and ``num_n`` is 0, never a zero error. The flags the check reads back
(``eff_*``) are the cell's last replicate's, as its other labels are.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd

#: The check's figures per replicate, as results.csv names them.
NUM_FIGURES: Final = (
    "num_inputs", "num_rel_err", "num_max_abs_err", "num_cosine", "num_top1_agree",
    "num_train_steps", "num_loss", "num_ref_loss", "num_loss_rel_diff", "num_param_drift",
    "num_time_s",
)  # fmt: skip
#: Figures whose bound matters, and which end is the worst: +1 the largest, -1 the smallest.
WORST: Final[dict[str, int]] = {
    "num_rel_err": 1, "num_max_abs_err": 1, "num_loss_rel_diff": 1, "num_param_drift": 1,
    "num_cosine": -1, "num_top1_agree": -1,
}
#: The read-back flags that say which arithmetic a cell really ran (labels, the last
#: replicate's): the convolutions' math, TF32 in matmuls, and the fp32_precision settings.
MATH_FLAGS: Final = (
    "eff_conv_math", "eff_matmul_allow_tf32", "eff_float32_matmul_precision",
    "eff_matmul_fp32_precision", "eff_conv_fp32_precision",
)
#: What ``cell_numerics`` returns, per cell.
NUM_CELL_COLUMNS: Final = (
    "num_reference", "num_n", *NUM_FIGURES, *(f"{c}_worst" for c in WORST), *MATH_FLAGS,
)  # fmt: skip
#: The comparisons that carry the variant's numerics (``var_<col>``): the switches that change
#: the arithmetic or its order.
NUMERIC_AXES: Final = ("precision", "memory_format", "compile", "cudnn_deterministic")
#: What those comparisons take from the variant cell: its numerics, and cuDNN's TF32 switch
#: (what says the convolutions' math in rows older than ``eff_conv_math``).
_TAKE: Final = (*NUM_CELL_COLUMNS, "eff_cudnn_allow_tf32")
#: The variant-side columns those comparisons carry.
NUM_PAIR_COLUMNS: Final = tuple(f"var_{c}" for c in _TAKE)


def with_numeric_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every column this module reads, empty where the rows lack it (rows written
    before the check existed)."""
    missing: dict[str, object] = {c: np.nan for c in NUM_FIGURES if c not in rows.columns}
    missing.update({c: "" for c in ("num_reference", *MATH_FLAGS) if c not in rows.columns})
    return rows.assign(**missing) if missing else rows


def cell_numerics(ok: pd.DataFrame, gok: np.ndarray, n: int) -> pd.DataFrame:
    """Per cell number 0..n-1 (``gok``: each ok row's), ``NUM_CELL_COLUMNS``: the medians, the
    worst ends (``<figure>_worst``), how many ok replicates were checked (``num_n``), the
    reference they were checked against (the last replicate's that names one), and the math
    flags. A replicate was checked where it names a reference or has a figure: one whose check
    ran into an overflow names its reference with no finite figure, and counts."""
    ok = with_numeric_columns(ok)
    whole = pd.RangeIndex(n)
    figures = ok[list(NUM_FIGURES)].apply(pd.to_numeric, errors="coerce")
    refs = ok["num_reference"].fillna("").astype(str)
    checked = (refs != "") | figures["num_rel_err"].notna() | figures["num_loss_rel_diff"].notna()
    g = figures.groupby(gok)
    out = g.median().reindex(whole)
    out["num_n"] = checked.groupby(gok).sum().reindex(whole, fill_value=0).astype("int64")
    for col, end in WORST.items():
        worst = g[col].max() if end > 0 else g[col].min()
        out[f"{col}_worst"] = worst.reindex(whole)
    out["num_reference"] = refs.where(refs != "").groupby(gok).last().reindex(whole).fillna("")
    for col in MATH_FLAGS:
        out[col] = ok[col].fillna("").astype(str).groupby(gok).last().reindex(
            whole, fill_value="")
    return out[list(NUM_CELL_COLUMNS)].reset_index(drop=True)


def numeric_take(axis: str) -> tuple[str, ...]:
    """The cell columns ``compare`` takes from the variant for ``axis`` (none off the numeric
    axes)."""
    return _TAKE if axis in NUMERIC_AXES else ()


def pair_numerics(axis: str) -> tuple[str, ...]:
    """The variant-side numerics columns a comparison of ``axis`` carries."""
    return NUM_PAIR_COLUMNS if axis in NUMERIC_AXES else ()
