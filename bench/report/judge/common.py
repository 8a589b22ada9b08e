"""What several page models share: the advice list of one setting, the claims a page answers,
the scope of a summary (what its rows cover), and what every comparison page holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

from bench import schema
from bench.report.judge.advice import Recommendation
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Pair, Table, texts, typed_row
from bench.report.judge.selection import judged
from bench.report.vocabulary import Action, Verdict

P = TypeVar("P", bound=Pair)
#: A comparison page's section: one machine's part of it.
S = TypeVar("S")

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


@dataclass(frozen=True)
class ComparisonPage(Generic[S]):
    """What every comparison page (cudnn, shapes, determinism, CPU vs GPU) holds, so that one
    view writes the part they share: its pairs (the page's CSV), a section per current machine,
    the claims and advice it states, and the fingerprints its figures come from."""

    pairs: Table = field(repr=False)
    sections: tuple[S, ...]
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList
    sources: tuple[Machine, ...]


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
    columns, empty values and ``n/a`` are not named).

    A value at a time over the column's array: a summary has tens of rows and there are
    thousands of summaries, where pandas' few calls per column cost more than the values."""
    parts = []
    for col in SCOPE_AXES:
        if col not in frame.columns:
            continue
        values = sorted(_distinct(frame[col]), key=float if col == "batch_size" else None)
        if not values or (col == "compile" and values == ["off"]):  # eager: said nowhere else
            continue
        parts.append((col, tuple(values)))
    by_mode = _batches_by_mode(frame)
    if by_mode:
        parts.append(("batch_by_mode", by_mode))
    return tuple(parts)


def _distinct(col: pd.Series) -> set[str]:
    """A column's distinct values as text, missing, empty and ``n/a`` left out."""
    if col.dtype.kind == "f":  # as pandas writes a float: 8.0, not 8
        text = (repr(float(v)) for v in col.to_numpy() if v == v)
    else:
        text = (str(v) for v in col.to_numpy(dtype=object) if not pd.isna(v))
    return set(text) - {"", "n/a"}


def _batches_by_mode(frame: pd.DataFrame) -> tuple[str, ...]:
    """``("infer", "1", "128", "train", "1", "1")``: each mode with its smallest and largest
    batch, where the modes' batches differ ("infer and train, batch 1 to 128" would read as
    if training had been measured at 128); () where they are the same or there is one mode."""
    if not {"mode", "batch_size"} <= set(frame.columns) or frame.empty:
        return ()
    # a value at a time, as ``scope_of``: a groupby per summary cost more than the values
    found: dict[str, set[int]] = {}
    batches = pd.to_numeric(frame["batch_size"], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan)
    for mode, batch in zip(texts(frame["mode"]), batches.tolist(), strict=True):
        if mode in ("infer", "train") and batch == batch:
            found.setdefault(mode, set()).add(int(batch))
    sizes = {m: sorted(v) for m, v in found.items()}
    if len(sizes) < 2 or len({tuple(v) for v in sizes.values()}) == 1:
        return ()
    return tuple(x for m, v in sorted(sizes.items()) for x in (m, str(v[0]), str(v[-1])))


#: The axes a comparison's configuration is described by, in reading order.
CONFIG_AXES = schema.AXIS_COLUMNS


def ordered(frame: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows in the order pages list them: by fingerprint, then ``extra``, then the axes
    (``sort_values(cols, na_position="first")``'s order, by ``_sort_keys``)."""
    cols = [c for c in ("fingerprint_id", *extra, *CONFIG_AXES) if c in frame.columns]
    return sorted_rows(frame, cols).reset_index(drop=True)


def sorted_rows(frame: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """``frame.sort_values(cols, kind="stable", na_position="first")``, index kept, by
    ``_sort_keys``."""
    if not cols or len(frame) < 2:
        return frame
    order = np.lexsort([_sort_keys(frame[c]) for c in reversed(cols)])
    return frame.take(order)


def _sort_keys(col: pd.Series) -> np.ndarray:
    """What pandas sorts ``col`` by in a sort on several columns, missing values first: a
    numeric column's values (NaN as -inf), else its codes among its sorted distinct values
    (-1 for a missing one), as ``Categorical(col, ordered=True)`` gives them.

    Why not ``sort_values``: it builds a Categorical per column, about half a millisecond
    each, over twenty columns, and pages order thousands of small frames."""
    values = col.to_numpy() if isinstance(col.dtype, np.dtype) else None
    if values is not None and values.dtype.kind in "fiub":
        if values.dtype.kind == "f" and np.isnan(values).any():
            return np.where(np.isnan(values), -np.inf, values)
        return values
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy()
    return pd.factorize(col, sort=True)[0]


def with_pay_back(costs: pd.DataFrame) -> pd.DataFrame:
    """One-off cost rows with ``pays_back``: whether the row has a break-even worth quoting
    (only a clearly faster configuration does; a slower one or one with no clear saving never
    repays its first pass)."""
    if costs.empty:
        return costs.assign(pays_back=pd.Series(dtype=bool))
    finite = np.isfinite(pd.to_numeric(costs["break_even_iters"], errors="coerce")
                         .to_numpy(dtype=float))
    return costs.assign(pays_back=(costs["verdict"] == Verdict.FASTER).to_numpy() & finite)


#: How a page picks the one configuration it quotes for a machine (its Cite line), in order:
#: training before inference, the largest batch, PyTorch's default precision and layout, one
#: input shape, an empty kernel cache, then the heaviest workload (the longest step), where a
#: setting has the most to save.
_PRECISIONS = ("fp32", "fp32-strict", "amp-bf16", "amp-fp16")


def representative(pairs: pd.DataFrame, row: type[P] = Pair) -> P | None:  # type: ignore[assignment]
    """The judged pair a machine's answer quotes (see ``_PRECISIONS``' comment), or None."""
    return quoted(judged(pairs), row)


def quoted(ok: pd.DataFrame, row: type[P] = Pair) -> P | None:  # type: ignore[assignment]
    """``representative`` of pairs already ``judged``."""
    if ok.empty:
        return None

    def rank(col: str, order: tuple[str, ...]) -> list[int]:
        if col not in ok.columns:
            return [len(order)] * len(ok)
        return [order.index(v) if v in order else len(order) for v in texts(ok[col])]

    def less(col: str) -> list[float]:  # larger first
        return [-v for v in pd.to_numeric(ok[col], errors="coerce").fillna(0).tolist()]

    key = zip(rank("mode", ("train", "infer")), less("batch_size"),
              rank("precision", _PRECISIONS), rank("memory_format", ("nchw", "channels_last")),
              rank("shapes", ("static", "dynamic", "ragged")),
              rank("kernel_cache", ("fresh", "shared", "warm")), less("base_median_s"),
              texts(ok["model"]))
    # the first of the least: a stable sort's first row, without sorting a frame per summary
    first = min(enumerate(key), key=lambda ik: ik[1])[0]
    return typed_row(row, ok.iloc[first])


def sources_of(facts: Facts, *frames: pd.DataFrame | Sequence[Pair], claims_on: str = ""
               ) -> tuple[Machine, ...]:
    """The fingerprints whose rows ``frames`` cite (by their ``page`` column), and those of the
    findings of the claims a page shows (``claims_on``: its id in claims.toml), in page order:
    what a page's provenance line names, and whether it needs an older-run banner."""
    keys: set[str] = set()
    for frame in frames:
        if isinstance(frame, pd.DataFrame):
            if len(frame) and "page" in frame.columns:
                keys.update(frame["page"].astype(str))
        else:
            keys.update(r.page for r in frame)
    if claims_on:
        keys.update(f.page for c in claims_for(facts, claims_on) for f in c.findings)
    return tuple(m for k, m in facts.machines.items() if k in keys)  # the reader's own first
