"""A numerics check in words (``judge.numerics``): what the precision, torch.compile and
determinism pages print beside a speedup, alike on each. The sentence of one check (``clause``,
``figures``, ``lead``) is the judge's own, which the claims speak too; this module adds what
only pages print: a table's cell and header, and a summary of many checks."""

from __future__ import annotations

from bench.report.judge.numerics import NumericCheck, NumericSummary, bound, lead
from bench.report.judge.numerics import clause as clause  # one check's words: the judge's own
from bench.report.judge.numerics import cosine as cosine
from bench.report.judge.numerics import error as error
from bench.report.judge.numerics import figures as figures
from bench.report.vocabulary import Numerics

#: What a table's numerics column is headed.
HEADER = "Outputs vs strict"


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
        ", ".join([lead(c), *bound(c)]) + ")"


def with_outputs(verdict: str, c: NumericCheck) -> str:
    """A Cite line's verdict with the outputs beside the speed where they were checked
    (``faster; outputs drift (loss 1.09% off …)``), so a quote carries both."""
    return f"{verdict}; {clause(c)}" if c.checked else verdict
