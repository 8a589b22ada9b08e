"""The precision and layout page, judged: one machine's comparisons in page order, with the
claims and the advice the page states."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bench.report.judge.common import (
    AdviceList,
    advice_list,
    merged,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.tally import Comparisons, comparisons
from bench.report.judge.tally import MachineRows as MachineRows  # its fields' types
from bench.report.judge.tally import Tally as Tally


@dataclass(frozen=True)
class PrecisionPage:
    precision: Comparisons  # with ``baseline_allow_tf32``: the fp32 baseline's TF32 flag
    layout: Comparisons
    advice: AdviceList
    sources: tuple[Machine, ...]


def _with_tf32(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The precision pairs with their baseline cell's read-back ``allow_tf32`` flag."""
    if pairs.empty:
        return pairs.assign(baseline_allow_tf32=pd.Series(dtype=object))
    flags = cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
    keys = zip(pairs["fingerprint_id"], pairs["baseline_cell_id"])
    return pairs.assign(baseline_allow_tf32=[str(flags.get(k, "")) for k in keys])


def precision_page(facts: Facts) -> PrecisionPage:
    a = facts.analysis
    precision = comparisons(_with_tf32(a.comparisons["precision"], a.cells), facts,
                            ("variant_value",))
    layout = comparisons(a.comparisons["memory_format"], facts, ("variant_value",))
    return PrecisionPage(
        precision=precision, layout=layout,
        advice=merged(advice_list(facts, "precision"), advice_list(facts, "memory_format")),
        sources=sources_of(facts, *(s.rows for s in (*precision.sections, *layout.sections))),
    )
