"""The default workload: what an answer leads with, rather than its largest number.

A reader's job most likely runs in PyTorch's defaults (fp32, NCHW, one input shape, an empty
kernel cache, cudnn.deterministic off), so an answer leads with the decision for that
configuration, of the model measured in the most configurations, training before inference
and the largest batch first (``common.representative``'s order); the regimes where the switch
pays follow it, each with its own decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import pandas as pd

from bench.report.judge.advice.codes import Setting
from bench.report.judge.common import representative
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Pair
from bench.report.vocabulary import Action, Noise

P = TypeVar("P", bound=Pair)

#: PyTorch's defaults, per axis an answer holds fixed where it is not the one compared.
DEFAULTS = {"precision": "fp32", "memory_format": "nchw", "shapes": "static",
            "cudnn_benchmark": "off", "cudnn_deterministic": "off", "kernel_cache": "fresh"}


def default_workload(mine: pd.DataFrame, row: type[P] = Pair) -> P | None:  # type: ignore[assignment]
    """The default workload's pair among one machine's judged pairs: PyTorch's defaults on the
    axes not compared (where any pair has them), the model measured in the most of them, then
    ``common.representative``'s order (training, the largest batch, ...). A pair resting on a
    replicate ``bench check`` flags (drift, throttled clocks) is quoted only where every one
    does."""
    rows = mine
    if "noise" in rows.columns:
        steady = rows.loc[~rows["noise"].isin([Noise.DRIFT, Noise.THROTTLED])]
        rows = steady if len(steady) else rows
    for col, value in DEFAULTS.items():
        if col in rows.columns and (rows[col].astype(str) == value).any():
            rows = rows.loc[rows[col].astype(str) == value]
    counts = mine["model"].astype(str).value_counts()
    most = counts.loc[counts == counts.max()].index
    return representative(rows.loc[rows["model"].astype(str).isin(most)], row) \
        or representative(rows, row)


def decision_for(regimes: Sequence[Regime], setting: Setting, pair: Pair
                 ) -> tuple[Regime | None, tuple[Regime, ...]]:
    """The decision for ``pair``'s regime (the regime of ``setting`` whose evidence holds its
    rows), and the other regimes of its machine whose advice is to switch the setting on."""
    mine = [g for g in regimes if g.main.setting == setting and g.main.page == pair.page]
    rows = {pair.baseline_anchor, pair.variant_anchor}
    decision = next((g for g in mine if rows & {a for _, a in g.main.evidence}), None)
    pays = tuple(g for g in mine if g is not decision and g.main.action == Action.ENABLE)
    return decision, pays
