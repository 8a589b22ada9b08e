"""The dynamic-shapes page, judged: each machine's comparisons with cudnn.benchmark's share of
the first pass, the claims and the advice the page states."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.report.analysis.pairs import join_cells, row_keys
from bench.report.judge.columns import comparison_columns
from bench.report.judge.common import (
    CONFIG_AXES,
    ComparisonPage,
    advice_list,
    claims_for,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, mark_charted
from bench.report.judge.rows import Pair, Table
from bench.report.judge.tally import MachineRows, comparisons
from bench.report.judge.tally import Tally as Tally  # its fields' types


@dataclass(frozen=True, kw_only=True)
class ShapesPair(Pair):
    """A changing-shapes pair, with its shape count and the variant's first pass."""

    shape_count: int | None = None
    var_cold_pass_s: float | None = None
    var_cold_pass_min_s: float | None = None  # the range over replicates (``join_cells``)
    var_cold_pass_max_s: float | None = None
    extra_cold_per_new_shape_s: float | None = None
    extra_cold_vs_bm_off_s: float | None = None  # ``with_benchmark_share``


@dataclass(frozen=True)
class ShapesSection:
    """One machine's pairs, what a label of them names, and their per-new-shape figures."""

    pairs: MachineRows[ShapesPair]
    columns: tuple[str, ...]  # the axes but ``shapes`` that vary
    per_shape: tuple[float, ...]  # each row's ``extra_cold_per_new_shape_s``, where it has one
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None

    @property
    def machine(self) -> Machine:
        return self.pairs.machine


@dataclass(frozen=True)
class ShapesPage(ComparisonPage[ShapesSection]):
    """Every changing-shapes pair (the CSV, with ``extra_cold_vs_bm_off_s``), and a section
    per machine."""


def _section(s: MachineRows[ShapesPair]) -> ShapesSection:
    return ShapesSection(s, comparison_columns(s.rows, "shapes"),
                         tuple(r.extra_cold_per_new_shape_s for r in s.rows
                               if r.extra_cold_per_new_shape_s is not None))


#: The axes a benchmark-on shapes pair shares with its benchmark-off twin: all but the switch.
_NOT_TWIN = ("shapes", "cudnn_benchmark", "cudnn_benchmark_limit")


def with_benchmark_share(shapes: pd.DataFrame) -> pd.DataFrame:
    """``shapes`` with ``extra_cold_vs_bm_off_s``: on benchmark-on rows, their
    ``extra_cold_per_new_shape_s`` minus that of the same configuration with benchmark off.

    Both terms are per new shape against the static cell of their own setting, so the
    difference is what turning the search on adds to the figure shown beside it. The
    analysis' ``penalty_vs_bm_off_s`` divides by every shape and subtracts the steady step
    instead, so a table printing it as a part of the per-new-shape figure said the part (15.7 s)
    exceeded the whole (11.5 s).
    """
    col = "extra_cold_vs_bm_off_s"
    if shapes.empty:
        return shapes.assign(**{col: pd.Series(dtype=float)})
    key = ["fingerprint_id", "variant_value",
           *(c for c in CONFIG_AXES if c in shapes.columns and c not in _NOT_TWIN)]
    per_shape = pd.to_numeric(shapes["extra_cold_per_new_shape_s"], errors="coerce")
    is_off = (shapes["cudnn_benchmark"] == "off").to_numpy()
    off = per_shape.loc[is_off].set_axis(row_keys(shapes.loc[is_off], key))
    off = off.loc[~off.index.duplicated(keep="last")]
    twin = off.reindex(row_keys(shapes, key)).to_numpy(dtype=float)
    on = (shapes["cudnn_benchmark"] == "on").to_numpy()
    return shapes.assign(**{col: np.where(on, per_shape.to_numpy(dtype=float) - twin, np.nan)})


def shapes_page(facts: Facts) -> ShapesPage:
    a = facts.analysis
    pairs = with_benchmark_share(a.shapes)
    shapes = pairs
    if len(shapes):  # each replicate's cold pass varies: the range beside the median
        shapes = join_cells(shapes, a.cells, ("cold_pass_min_s", "cold_pass_max_s"))
    sections = mark_charted([_section(s) for s in
                             comparisons(shapes, facts, row=ShapesPair).sections], a.cells)
    return ShapesPage(
        pairs=Table.of(pairs), sections=sections,
        claims=claims_for(facts, "dynamic-shapes"),
        advice=advice_list(facts, "cudnn.benchmark", shapes_only=True),
        sources=sources_of(facts, *(s.pairs.rows for s in sections),
                           claims_on="dynamic-shapes"),
    )
