"""A numerics check in words (``judge.numerics``): what the precision, torch.compile and
determinism pages print beside a speedup, alike on each."""

from __future__ import annotations

import math

from bench.report import fmt
from bench.report.judge.numerics import NumericCheck, NumericSummary
from bench.report.vocabulary import Numerics

#: What a table's numerics column is headed.
HEADER = "Outputs vs strict"


def error(value: float | None) -> str:
    """A relative error or drift: a percentage, in powers of ten below 0.01%."""
    if value is None:
        return fmt.MISSING
    if not math.isfinite(value):
        return "not finite"
    if 0 < abs(value) < 1e-4:
        return f"{value:.1e}"
    return fmt.pct(value)


def cosine(value: float | None) -> str:
    """A cosine similarity to its sixth decimal, trailing zeros dropped (0.99998)."""
    if value is None or not math.isfinite(value):
        return fmt.MISSING
    if value >= 0.9999995:
        return "≈ 1"
    return f"{value:.6f}".rstrip("0").rstrip(".")


def figures(c: NumericCheck) -> str:
    """The figures a check rests on: ``relative error 0.4%, cosine 0.99998`` (inference), the
    loss and the parameter drift too in training; a drifting check names its bound."""
    parts = []
    if c.rel_err is not None or not c.training:
        parts.append(f"relative error {error(c.rel_err)}")
    if c.cosine is not None:
        parts.append(f"cosine {cosine(c.cosine)}")
    if c.training:
        parts.append(f"loss {error(c.loss_rel_diff)} off after the same steps")
        if c.param_drift is not None:
            parts.append(f"parameters {error(c.param_drift)}")
    return ", ".join([*parts, *_bound(c)])


def _bound(c: NumericCheck) -> list[str]:
    """A drifting check's bound: ``over the fp16 tolerance of 1%``."""
    if c.verdict is not Numerics.DRIFTS:
        return []
    tol = c.tolerance
    if c.training and "loss after the same steps" in c.failed:
        return [f"over the {c.math.value} tolerance of {error(tol.loss_rel_diff)} for the loss"]
    if "relative error" in c.failed:
        return [f"over the {c.math.value} tolerance of {error(tol.rel_err)}"]
    return [f"outside the {c.math.value} tolerance ({', '.join(c.failed)})"]


def lead(c: NumericCheck) -> str:
    """The measure a check leads with: the loss in training, the outputs otherwise."""
    if c.training and c.loss_rel_diff is not None:
        return f"loss {error(c.loss_rel_diff)} off"
    return f"relative error {error(c.rel_err)}"


def clause(c: NumericCheck) -> str:
    """``outputs agree (relative error 0.4%, cosine 0.99998)``, or ``outputs not checked``."""
    if not c.checked:
        return "outputs not checked"
    word = "agree" if c.verdict is Numerics.AGREES else "drift"
    return f"outputs {word} ({figures(c)})"


def cell(c: NumericCheck) -> str:
    """A table cell: the verdict and its leading figure, ``agrees, 0.4%``."""
    if not c.checked:
        return str(Numerics.NOT_CHECKED)
    figure = c.loss_rel_diff if c.training and c.loss_rel_diff is not None else c.rel_err
    return f"{c.verdict}, {error(figure)}"


def summary_clause(s: NumericSummary) -> str:
    """What a variant's checked pairs add up to, e.g. ``outputs agree in 4 of 4 checked
    (worst: relative error 0.4%, cosine 0.99998)``; empty where none was checked."""
    if s.quoted is None:
        return ""
    agree = s.verdict is Numerics.AGREES
    n = s.checked if agree else s.drifting
    of = f" in {n} of {s.checked} checked" if s.checked > 1 else ""
    word = "agree" if agree else "drift"
    c = s.quoted.numerics
    return f"outputs {word}{of} ({'worst ' if s.checked > 1 else ''}" + \
        ", ".join([lead(c), *_bound(c)]) + ")"
