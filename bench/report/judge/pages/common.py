"""What several page models share: the advice list of one setting, the claims a page answers,
and the scope of a summary (what its rows cover)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench import schema
from bench.report.judge.advice import Recommendation
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.judge.regimes import Regime
from bench.report.vocabulary import Action, Verdict

#: What a summary's scope names, so that a machine-level sentence never reads as a verdict for
#: every model on that machine: the models, modes, precisions, layouts, shapes, batches, kernel
#: caches and (where any cell compiled) torch.compile modes its comparisons cover.
SCOPE_AXES = ("model", "mode", "precision", "memory_format", "shapes", "batch_size",
              "kernel_cache", "compile")

#: A scope: per axis of ``SCOPE_AXES`` that the rows name, its distinct values in order.
Scope = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class AdviceList:
    """One setting's advice on a page: the regimes decided, and those with too few ok
    replicates to decide (each in advice's order)."""

    said: tuple[Regime, ...]
    unknown: tuple[Recommendation, ...]


def advice_list(facts: Facts, setting: str, *, shapes_only: bool = False) -> AdviceList:
    """The current regimes of ``setting`` (only those with changing shapes, ``shapes_only``)."""
    said: list[Regime] = []
    unknown: list[Recommendation] = []
    for regime in facts.current_regimes:
        r = regime.main
        if r.setting != setting or (shapes_only and r.shapes == "static"):
            continue
        if r.action == Action.INSUFFICIENT:
            unknown.append(r)
        else:
            said.append(regime)
    return AdviceList(tuple(said), tuple(unknown))


def merged(*lists: AdviceList) -> AdviceList:
    """Several settings' lists as one (the precision page lists precision and layout)."""
    return AdviceList(tuple(g for a in lists for g in a.said),
                      tuple(r for a in lists for r in a.unknown))


def claims_for(facts: Facts, page: str) -> tuple[ClaimAnswer, ...]:
    """The claims whose verdict a finding page shows (``pages`` in claims.toml)."""
    return tuple(v for v in facts.claims if page in v.claim.pages)


def claim(facts: Facts, claim_id: str) -> ClaimAnswer | None:
    """One claim's verdict (None when the claims file has no such claim)."""
    return next((v for v in facts.claims if v.claim.id == claim_id), None)


def scope_of(frame: pd.DataFrame) -> Scope:
    """The distinct values of ``SCOPE_AXES`` among ``frame``'s rows (eager-only compile
    columns, empty values and ``n/a`` are not named)."""
    parts = []
    for col in SCOPE_AXES:
        if col not in frame.columns:
            continue
        values = frame[col].dropna().astype(str)
        values = values.loc[(values != "") & (values != "n/a")].unique().tolist()
        if not values or (col == "compile" and values == ["off"]):  # eager: said nowhere else
            continue
        values = sorted(values, key=float) if col == "batch_size" else sorted(values)
        parts.append((col, tuple(values)))
    return tuple(parts)


#: The axes a comparison's configuration is described by, in reading order.
CONFIG_AXES = schema.AXIS_COLUMNS


def ordered(frame: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows in the order pages list them: by fingerprint, then ``extra``, then the axes."""
    cols = [c for c in ("fingerprint_id", *extra, *CONFIG_AXES) if c in frame.columns]
    return frame.sort_values(cols, kind="stable", na_position="first").reset_index(drop=True)


def with_pay_back(costs: pd.DataFrame) -> pd.DataFrame:
    """One-off cost rows with ``pays_back``: whether the row has a break-even worth quoting
    (only a clearly faster configuration does; a slower one or one with no clear saving never
    repays its first pass)."""
    if costs.empty:
        return costs.assign(pays_back=pd.Series(dtype=bool))
    finite = np.isfinite(pd.to_numeric(costs["break_even_iters"], errors="coerce")
                         .to_numpy(dtype=float))
    return costs.assign(pays_back=(costs["verdict"] == Verdict.FASTER).to_numpy() & finite)
