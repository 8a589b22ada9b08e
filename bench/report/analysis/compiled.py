"""torch.compile against eager: the steady gain, what compiling costs up front, when it pays
back (fresh and warm caches), what each new input shape costs, and whether cudnn.benchmark
still matters in a compiled model.

Each pair is an eager cell and a compiled one that differ in ``compile`` (and its
``dynamic=``) only, on one fingerprint, so the cold-pass difference is compilation plus
whatever else the first call does differently. The cost columns are ``one_off_costs``'s, the
same break-even arithmetic as cudnn.benchmark's, so the two knobs are judged alike.
"""

from __future__ import annotations

from typing import Final

import pandas as pd

from bench import schema
from bench.report.analysis.cells import Source, cells_of
from bench.report.analysis.pairs import COMPARE_COLUMNS, compare, join_cells
from bench.report.analysis.studies import COST_COLUMNS, WARM_COLUMNS, one_off_costs, with_warm

#: The compiled side's torch-reported figures brought onto each pair, as var_<col>.
COMPILE_CELL_COLUMNS: Final = (
    "compile_time_s", "compile_time_max_s", "compiles_max", "recompiles_max",
    "graph_breaks_max", "steady_graph_breaks_max", "graphs_max", "graph_break_reasons",
)  # fmt: skip
#: What ``compile_costs`` returns.
COMPILE_COLUMNS: Final = (
    *COMPARE_COLUMNS["compile"], *COST_COLUMNS, *WARM_COLUMNS,
    *(f"var_{c}" for c in COMPILE_CELL_COLUMNS),
)  # fmt: skip


def compile_costs(data: Source, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Eager → each compile mode: speedup, the extra cold pass (compilation), break-even.

    Columns ``COMPILE_COLUMNS``: the comparison, ``one_off_costs``'s columns (extra_cold_pass_s
    is the compiled cold pass − the eager one, break_even_iters when that is paid back), the
    same configuration's warm-cache figures beside each fresh pair (``WARM_COLUMNS``), and the
    compiled cell's compile time and counts as torch reported them (var_…; the counts are the
    largest over its replicates).
    """
    cells = cells_of(data)
    pairs = compare(cells, "compile") if pairs is None else pairs
    out = with_warm(one_off_costs(cells, pairs), "compile")
    out = join_cells(out, cells, COMPILE_CELL_COLUMNS)
    return out[list(COMPILE_COLUMNS)]


def compiled_only(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a comparison (of another axis) whose cells are compiled, for the question
    "does this still matter under torch.compile?"; both sides share the compile mode."""
    if "compile" not in frame.columns:
        return frame.iloc[0:0]
    return frame.loc[frame["compile"].isin([m for m in schema.COMPILE_MODES if m != "off"])]


#: The compile counts ``with_compile_counts`` brings onto each pair, as base_<col> and var_<col>.
SHAPE_COUNT_COLUMNS: Final = ("compiles_max", "recompiles_max")


def with_compile_counts(frame: pd.DataFrame, data: Source) -> pd.DataFrame:
    """A comparison of compiled cells (``compiled_only``'s rows) with each side's compile
    counts as torch reported them, the largest over its ok replicates: ``base_compiles_max``
    and ``var_compiles_max`` (frames Dynamo compiled over the whole replicate, the cold pass's
    first call of each shape included), ``base_recompiles_max`` and ``var_recompiles_max``
    (those compiled in the steady state). On the shapes comparison, a variant that compiled
    more often than its static cell recompiled for the new shapes of its cold pass."""
    if frame.empty:
        out = frame.copy()
        for side in ("base", "var"):
            for col in SHAPE_COUNT_COLUMNS:
                out[f"{side}_{col}"] = pd.Series(dtype=float)
        return out
    return join_cells(frame, cells_of(data), SHAPE_COUNT_COLUMNS)
