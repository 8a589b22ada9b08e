"""What every claims rule shares: which rows it answers from, what a configuration is called,
and how a comparison's verdict becomes a finding's stance and words.

A "no clear difference" whose interval reaches beyond 1 ± δ only fails to show a change, so it
tells nothing either way (``too_wide``); the figures a finding quotes are its rows' own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.analysis.pairs import DELTA, within_band
from bench.report.judge.claims.model import Finding
from bench.report.judge.rows import records
from bench.report.judge.selection import current as current_rows
from bench.report.judge.selection import superseded_pages
from bench.report.vocabulary import Stance, Verdict

#: What a configuration is called in a finding, in this order (values that do not vary among a
#: rule's rows are left out).
_LABEL = ("model", "mode", "batch_size", "precision", "memory_format", "shapes", "kernel_cache")
_WORDS = {"batch_size": "batch {}", "kernel_cache": "{} kernel cache", "shapes": "{} shapes"}

GPU_RUN = "a run of the gpu profile on a CUDA machine (python -m bench run --profile gpu)"


def current(frame: pd.DataFrame, a: Any) -> pd.DataFrame:
    """``frame`` without the fingerprints a newer step definition superseded."""
    return current_rows(frame, superseded_pages(a.machines))


def labeller(frame: pd.DataFrame, omit: tuple[str, ...] = (),
             keep: tuple[str, ...] = ()) -> Callable[[Any], str]:
    """A function naming one row of ``frame`` by the label columns that vary in it (the model
    and mode always, ``keep`` too; ``omit`` never): ``resnet50 · train · fp32-strict``."""
    shown = [c for c in _LABEL if c in frame.columns and c not in omit and (
        c in ("model", "mode", *keep) or frame[c].astype(str).nunique() > 1)]

    def name(row: Any) -> str:
        parts = []
        for c in shown:
            value = getattr(row, c)
            if value is None or value is pd.NA or str(value) in ("", "nan"):
                continue
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            parts.append(_WORDS.get(c, "{}").format(value))
        return " · ".join(parts)

    return name


def rows(frame: pd.DataFrame) -> Iterable[Any]:
    """``frame``'s rows as tuples with plain values (nullable columns as objects:
    ``records`` converts the frame to objects itself)."""
    return records(frame)


def pair_evidence(r: Any) -> tuple[tuple[str, str], ...]:
    return ((str(r.page), str(r.baseline_anchor)), (str(r.page), str(r.variant_anchor)))


def interval(r: Any) -> str:
    """``1.21× (95% CI 1.18–1.25×)``, or the speedup alone without an interval."""
    ci = fmt.ci(r.ci_low, r.ci_high)
    return fmt.ratio(r.speedup) + (f" (95% CI {ci})" if ci != fmt.MISSING else "")


def per_machine(findings: list[Finding]) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        out.setdefault((f.machine, f.page), []).append(f)
    return out


def plural(n: int, what: str) -> str:
    """``1 configuration``, ``3 configurations`` (``what`` is the plural, its first word the
    noun that ``fmt.count`` makes agree: "configurations with one input shape")."""
    first, _, rest = what.partition(" ")
    one = first[:-1] if first.endswith("s") else first
    return fmt.count(n, one, first) + (f" {rest}" if rest else "")


#: Regimes a summary names per side before it says "and N more".
NAMED = 3


def name_list(names: list[str], total: int | None = None) -> str:
    """``a, b, c and 2 more``: the first ``NAMED`` names, then how many more (of ``total``,
    which defaults to how many names there are)."""
    total = len(names) if total is None else total
    shown = names[:NAMED]
    more = total - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def depends(findings: list[Finding]) -> bool:
    """Whether the findings give "it depends": those that can tell say different things."""
    return len({f.stance for f in findings} - {Stance.CANNOT_TELL}) > 1


def label_of(f: Finding) -> str:
    """What a summary calls a finding's regime: its label, else its model, else its machine."""
    return f.label or f.model or f.machine


def tally(findings: list[Finding], what: str, yes: str, no: str,
          unknown: str = "too few ok replicates to tell") -> str:
    """Per machine, ``on m, of 4 configurations (resnet50): faster in 1, not in 2, too few …
    in 1`` (only the last where none can tell), naming the models it rests on; where the
    verdict is "it depends", or a machine's findings say different things (so its counts do
    not say which regime told what), each side names its regimes
    (``faster in 1 (resnet50 · train), …``), capped at ``NAMED``. Those that cannot tell are
    counted under the reasons their findings give (``Finding.why``) where each gives one, else
    under ``unknown``."""
    parts = []
    grouped = per_machine(findings)
    names = [machine for machine, _ in grouped]
    split = depends(findings)
    for (machine, page), fs in grouped.items():
        named = split or len({f.stance for f in fs}) > 1
        if names.count(machine) > 1:  # one machine under two fingerprints: say which, as
            machine = f"{machine} {page[-8:]}"  # its page's title does
        said = []
        telling = any(f.stance != Stance.CANNOT_TELL for f in fs)
        for stance, word in ((Stance.SUPPORTS, yes), (Stance.CONTRADICTS, no),
                             (Stance.CANNOT_TELL, unknown)):
            mine = [f for f in fs if f.stance == stance]
            if (stance == Stance.CANNOT_TELL and not mine) or (
                    stance != Stance.CANNOT_TELL and not telling):
                continue  # a machine none of whose findings can tell says only that
            if stance == Stance.CANNOT_TELL and mine and all(f.why for f in mine):
                whys = [f.why for f in mine]  # each reason these cannot tell, with its count
                said += [f"{w} in {whys.count(w)}" for w in dict.fromkeys(whys)]
                continue
            text = f"{word} in {len(mine)}"
            if named and mine and stance != Stance.CANNOT_TELL:
                text += f" ({name_list([label_of(f) for f in mine])})"
            said.append(text)
        parts.append(f"on {machine}, of {plural(len(fs), what)}{models_of(fs)}: "
                     f"{', '.join(said)}")
    return "; ".join(parts)


def models_of(findings: Iterable[Finding]) -> str:
    """`` (resnet50, vit_b_16)``: the models some finding measured (the first ``NAMED``, then
    how many more), so a verdict on one machine never reads as the whole machine's; "" where
    the findings are about machines."""
    models = sorted({m for f in findings for m in f.model.split(", ") if m})
    return f" ({name_list(models)})" if models else ""


#: What a finding says of a "no clear difference" whose interval reaches beyond 1 ± δ.
TOO_WIDE = f"an interval too wide to tell (it reaches beyond 1 ± {fmt.pct(DELTA)})"


def too_wide(verdict: str, ci_low: Any, ci_high: Any) -> bool:
    """Whether a "no clear difference" only fails to show a change (its interval reaches beyond
    1 ± δ) rather than showing there is none: no evidence either way."""
    return verdict == Verdict.NO_CLEAR_DIFFERENCE and not within_band(num(ci_low), num(ci_high))


def stance(verdict: str, ci_low: Any, ci_high: Any, yes: Verdict = Verdict.FASTER) -> Stance:
    """What one comparison says of a claim that predicts ``yes``: it supports it with that
    verdict, tells nothing when it is a too-wide "no clear difference", and contradicts it
    otherwise (the other direction, or a tight interval inside 1 ± δ)."""
    if verdict == yes:
        return Stance.SUPPORTS
    return Stance.CANNOT_TELL if too_wide(verdict, ci_low, ci_high) else Stance.CONTRADICTS


def said(verdict: str, ci_low: Any, ci_high: Any) -> str:
    """The verdict word, qualified when its interval is too wide to tell."""
    return f"{verdict}, {TOO_WIDE}" if too_wide(verdict, ci_low, ci_high) else verdict


def num(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x
