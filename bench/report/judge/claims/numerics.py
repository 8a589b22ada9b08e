"""The claims about accuracy: "AMP does not hurt accuracy" and "TF32 is as good as fp32 for
training", answered from the paired numerics check (``judge.numerics``), never from speed.

Each comparison whose side of interest ran the arithmetic a claim names is one finding: its
outputs (and, in training, its loss and parameters after the same steps) agree with the strict
reference within the tolerance of that arithmetic, which supports the claim; or they drift,
which goes against it; or the check did not run for it, which cannot tell. A claim none of
whose rows carry the check (rows older than it, or a study without ``numerics = true``) is not
measured, with what would measure it: a speedup says nothing of the numbers.

A finding words its check as the pages do, in the judge's own words for a check
(``judge.numerics.clause``): ``outputs drift (relative error 5%, over the fp16 tolerance of
1%)``.

TF32 is PyTorch's default for fp32 convolutions, so the precision comparison holds it as the
*baseline* (fp32) against fp32-strict. The TF32 claim reads those pairs from the other side:
the fp32 cell's own numerics, and the arithmetic its flags read back, so a cell labelled fp32
that ran TF32 is judged as TF32 and one whose every switch was off is not a TF32 finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from bench.report.analysis.numerics import numeric_take
from bench.report.judge.claims.findings import current, labeller, pair_evidence, tally
from bench.report.judge.claims.model import Claim, ClaimAnswer, Finding, decide
from bench.report.judge.numerics import Math, NumericPair, claim_pairs, clause, stance
from bench.report.judge.rows import typed_rows
from bench.report.vocabulary import Numerics, Stance

#: What a finding whose pair ran no numerics check says, in a summary's count.
UNCHECKED = "outputs not checked"
#: What would measure the claims: a run whose precision studies check the numerics.
NUMERICS_RUN = ("a run whose precision study sets numerics = true (python -m bench run "
                "--profile gpu on a CUDA machine, or --profile cpu for bf16 on a CPU)")
#: The precision comparison's side that runs fp32 with TF32 against its strict counterpart.
_STRICT = "fp32-strict"


def _findings(frame: pd.DataFrame, pairs: Sequence[NumericPair]) -> list[Finding]:
    """One finding per pair: what its variant's check says, in the judge's words."""
    name = labeller(frame)
    out = []
    for p in pairs:
        check = p.numerics
        told = stance(check)
        label = f"{name(p)} · {p.variant_value}"
        out.append(Finding(
            told, p.page, p.machine, f"{label}: {clause(check)}", pair_evidence(p),
            str(p.model or ""), label,
            NUMERICS_RUN if told is Stance.CANNOT_TELL else "",
            UNCHECKED if check.verdict is Numerics.NOT_CHECKED else ""))
    return out


def _answer(claim: Claim, frame: pd.DataFrame, pairs: Sequence[NumericPair],
            what: str) -> ClaimAnswer:
    """The claim's verdict from ``pairs``: not measured where none was checked (the summary
    says how many were measured for speed alone), else one finding per pair."""
    if not any(p.numerics.checked for p in pairs):
        summary = (f"{len(pairs)} {what} measured for speed, none with the numerics check "
                   "(outputs against the strict reference)" if pairs else
                   f"no {what} measured")
        return decide(claim, [], summary, NUMERICS_RUN)
    findings = _findings(frame, pairs)
    summary = tally(findings, what, "outputs agree", "outputs drift", UNCHECKED)
    return decide(claim, findings, summary, NUMERICS_RUN)


def amp_accuracy(claim: Claim, a: Any) -> ClaimAnswer:
    """bf16 and fp16 autocast against the strict reference, inference and training alike."""
    frame = current(a.comparisons["precision"], a)
    pairs = claim_pairs(typed_rows(NumericPair, frame), (Math.BF16, Math.FP16))
    return _answer(claim, frame, pairs, "AMP comparisons")


def tf32_pairs(a: Any) -> pd.DataFrame:
    """The precision comparisons of fp32 against fp32-strict, read from the fp32 side: the
    fp32 cell as the variant, with its own numerics and read-back flags as ``var_*``."""
    pairs = current(a.comparisons["precision"], a)
    pairs = pairs.loc[pairs["variant_value"] == _STRICT]
    if pairs.empty:
        return pairs
    take = [c for c in numeric_take("precision") if c in a.cells.columns]
    fp32 = a.cells[["fingerprint_id", "cell_id", *take]].rename(
        columns={"cell_id": "baseline_cell_id", **{c: f"var_{c}" for c in take}})
    flipped = pairs.drop(columns=[f"var_{c}" for c in take if f"var_{c}" in pairs.columns])
    flipped = flipped.merge(fp32, on=["fingerprint_id", "baseline_cell_id"], how="left")
    swap = {"baseline_value": "variant_value", "baseline_cell_id": "variant_cell_id",
            "baseline_anchor": "variant_anchor"}
    return flipped.rename(columns={**swap, **{v: k for k, v in swap.items()}})


def tf32_training(claim: Claim, a: Any) -> ClaimAnswer:
    """fp32 cells whose flags read back TF32, in training: their loss and parameters after the
    same steps against the strict reference's."""
    frame = tf32_pairs(a)
    pairs = claim_pairs(typed_rows(NumericPair, frame), (Math.TF32,), training=True)
    return _answer(claim, frame, pairs, "TF32 training comparisons")
