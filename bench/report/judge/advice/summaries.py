"""One vectorised summary per regime (a groupby), so the rules loop over regimes, not rows.

How a regime's pairs are combined: the pairs that are not "insufficient" must agree. All
"faster" → the faster rule, all "slower" → the slower rule, all "no clear difference" → leave the
default; a mix → "mixed", which the rules answer "depends on model" (measure your own). The
figures are the median speedup and the envelope of the CIs (lowest ci_low, highest ci_high),
so a sentence never overstates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from bench.report.analysis import MIN_OK_REPLICATES
from bench.report.vocabulary import Verdict


def agreed(n_judged: Any, n_distinct: Any, first: Any) -> Any:
    """The verdict of several comparisons, from how many have a verdict, how many distinct
    verdicts those are, and the first of them: none → insufficient, one → it, several → mixed.
    Works on arrays (a regime per element) and on single values alike, so the advice and the
    page summaries apply the same rule."""
    return np.select([np.asarray(n_judged) == 0, np.asarray(n_distinct) == 1],
                     [Verdict.INSUFFICIENT, np.asarray(first, dtype=object)], Verdict.MIXED)


def agreement(verdicts: Iterable[str]) -> Verdict:
    """``agreed`` over one group's verdicts (insufficient ones tell nothing)."""
    judged = [Verdict(v) for v in verdicts if v != Verdict.INSUFFICIENT]
    first = judged[0] if judged else Verdict.INSUFFICIENT
    return Verdict(str(agreed(len(judged), len(set(judged)), first)))


def summarise(
    pairs: pd.DataFrame,
    by: list[str],
    extra: dict[str, tuple[str, str]] | None = None,
    extra_all: dict[str, tuple[str, str]] | None = None,
    anchors: Sequence[str] = (),
    *,
    failures: bool = False,
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Per regime (sorted): n_pairs, n_sufficient, verdict (agreed, "mixed" or "insufficient"),
    median speedup and the CI envelope, evidence, models; ``extra`` = {name: (column, agg)} over the
    sufficient pairs, ``extra_all`` over all pairs, ``anchors`` = more anchor columns to cite.
    With ``failures``, also ``failed`` (> 0: the variant failed outright in some pair, see
    ``variant_failed``), which the rules turn into the ``variant-failed`` caveat."""
    if failures:
        pairs = pairs.assign(_failed=variant_failed(pairs).astype(float))
        extra_all = {"failed": ("_failed", "max"), **(extra_all or {})}
    suff = (pairs["verdict"] != Verdict.INSUFFICIENT).to_numpy()
    work = pd.DataFrame({c: pairs[c] for c in by})
    work["_suff"] = suff
    work["_v"] = pairs["verdict"].where(suff)
    work["_speedup"] = pairs["speedup"].astype(float).where(suff)
    work["_lo"] = pairs["ci_low"].astype(float).where(suff)
    work["_hi"] = pairs["ci_high"].astype(float).where(suff)
    aggs: dict[str, tuple[str, str]] = {
        "n_pairs": ("_suff", "size"),
        "n_sufficient": ("_suff", "sum"),
        "n_verdicts": ("_v", "nunique"),
        "first_verdict": ("_v", "first"),
        "speedup": ("_speedup", "median"),
        "ci_low": ("_lo", "min"),
        "ci_high": ("_hi", "max"),
    }
    for name, (col, how) in (extra or {}).items():
        work[f"_{name}"] = pd.to_numeric(pairs[col], errors="coerce").astype(float).where(suff)
        aggs[name] = (f"_{name}", how)
    for name, (col, how) in (extra_all or {}).items():
        work[f"_{name}"] = pd.to_numeric(pairs[col], errors="coerce").astype(float)
        aggs[name] = (f"_{name}", how)
    grouped = work.groupby(by, sort=True, dropna=False)
    out = grouped.agg(**aggs)  # type: ignore[call-overload]
    out["verdict"] = agreed(out["n_sufficient"].to_numpy(), out["n_verdicts"].to_numpy(),
                            out["first_verdict"].to_numpy(dtype=object))
    page = pairs["page"].to_numpy(dtype=object)
    cited = [
        pairs[c].to_numpy(dtype=object) for c in ("baseline_anchor", "variant_anchor", *anchors)
    ]
    model = pairs["model"].to_numpy(dtype=object)
    evidence, models = {}, {}
    for key, idx in grouped.indices.items():
        found = ((page[i], col[i]) for i in np.sort(idx) for col in cited if col[i])
        evidence[key] = tuple(dict.fromkeys(found))
        models[key] = tuple(sorted({str(model[i]) for i in idx}))
    out["evidence"] = [evidence[k] for k in out.index]
    out["models"] = [models[k] for k in out.index]
    keys = [as_key(k) for k in out.index]
    return list(zip(keys, out.to_dict("records")))


def as_key(key: Any) -> tuple[Any, ...]:
    """A groupby key as a tuple: pandas gives a bare value where the grouping is one column,
    and a regime is looked up by the same tuple however many columns it has."""
    return key if isinstance(key, tuple) else (key,)


def number(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def key_fields(by: list[str], key: Any) -> dict[str, Any]:
    return {c: str(v) for c, v in zip(by, as_key(key))}


def variant_failed(pairs: pd.DataFrame) -> pd.Series:
    return (pairs["n_var"] == 0) & (pairs["n_base"] >= MIN_OK_REPLICATES)


def figures(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "verdict": str(row["verdict"]),
        "n_pairs": int(row["n_pairs"]),
        "n_sufficient": int(row["n_sufficient"]),
        "speedup": number(row["speedup"]),
        "ci_low": number(row["ci_low"]),
        "ci_high": number(row["ci_high"]),
        "models": tuple(row["models"]),
    }
