"""What ``bench advise`` says of a knob's numerics beside its speed: the report's own judgement
(``bench.report.judge.numerics``: the knob's outputs against a strict reference, within the
tolerance of the arithmetic it ran), in the report's own words (``render.words.numerics``).

A knob that changes the arithmetic or its order (precision, layout, torch.compile,
deterministic algorithms) is worth switching only where its outputs still agree: the entry
carries the verdict (agrees, drifts, not checked), the speed and numerics weighed together
(``Tradeoff``: "faster, but its outputs drift: check on your own data before you switch"), and
the figures it rests on. The report's modules are imported only once the run is judged: the
plan needs none of them, and a command module stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.report.judge.numerics import NumericCheck

#: The JSON fields of a knob's numerics (None, or empty, where the knob is not judged by it).
FIELDS = ("numerics", "tradeoff", "numerics_text", "numerics_cell", "numerics_math",
          "numerics_reference", "numerics_replicates", "num_rel_err", "num_cosine",
          "num_top1_agree", "num_loss_rel_diff", "num_param_drift", "tolerance_rel_err",
          "tolerance_loss_rel_diff")


def fields(check: NumericCheck | None, speed: str) -> dict[str, Any]:
    """A knob's numerics as plain JSON fields: the verdict, the tradeoff with its speed
    verdict ``speed`` (None where either cannot tell), the words and the worst figures."""
    if check is None:
        return dict.fromkeys(FIELDS)
    from bench.report.judge.numerics import tradeoff  # the report's side: pandas, only once judged
    from bench.report.render.words import numerics as words

    both = tradeoff(speed, check.verdict)
    return {"numerics": str(check.verdict), "tradeoff": None if both is None else str(both),
            "numerics_text": words.clause(check), "numerics_cell": words.cell(check),
            "numerics_math": check.math.value, "numerics_reference": check.reference or None,
            "numerics_replicates": check.n, "num_rel_err": check.rel_err,
            "num_cosine": check.cosine, "num_top1_agree": check.top1,
            "num_loss_rel_diff": check.loss_rel_diff, "num_param_drift": check.param_drift,
            "tolerance_rel_err": check.tolerance.rel_err,
            "tolerance_loss_rel_diff": check.tolerance.loss_rel_diff}


def note(entry: dict[str, Any]) -> str:
    """The line under the table: ``faster, but its outputs drift: check on your own data
    before you switch; outputs drift (relative error 99%, over the fp16 tolerance of 1%)``;
    the figures alone where the speed cannot tell; empty off the numeric knobs."""
    text = entry.get("numerics_text") or ""
    both = entry.get("tradeoff")
    return f"{both}; {text}" if both and text else text


def cell(entry: dict[str, Any]) -> str:
    """The table's column: ``agrees, 0.4%``, ``drifts, 99%``, ``not checked``, or empty."""
    return str(entry.get("numerics_cell") or "")
