"""The accuracy claims ("AMP does not hurt accuracy", "TF32 is as good as fp32 for training")
answered from the numerics check, through their typed answers.

The numerics figures here are FIXTURES, set on loaded rows in memory (``_checked``): made up to
exercise the claims, never written to a results file and never a measurement.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.report.analysis import Analysis, analyse
from bench.report.input.load import load_reports
from bench.report.judge import claims
from bench.report.judge.claims.numerics import NUMERICS_RUN, tf32_pairs
from bench.report.vocabulary import ClaimVerdict, Stance

from .builders import axes, cell, env_for

ENV = env_for("gpu-box", "run-1")
BY_ID = {c.id: c for c in claims.load_claims()}
TIMES = {"fp32": [0.100, 0.101, 0.099], "amp-bf16": [0.060, 0.061, 0.059],
         "amp-fp16": [0.050, 0.051, 0.049], "fp32-strict": [0.150, 0.151, 0.149]}


def _tree(write_tree: Any, mode: str = "train") -> Path:
    rows = [row for precision, t in TIMES.items()
            for row in cell(ENV, axes(precision=precision, mode=mode), t)]
    return write_tree([(ENV, rows, [])])


def _checked(root: Path, figures: dict[str, float], *, mode: str = "train",
             tf32: bool = True) -> Analysis:
    """The tree's analysis, its rows given FIXTURE numerics in memory: per precision one
    relative error (inference) or loss difference (training) on every replicate; a precision
    not named stays unchecked. ``tf32=False``: every fp32 cell read its TF32 switches back off."""
    ds = load_reports(root)
    r = ds.results.copy()
    for col, value in (("num_reference", ""), ("num_rel_err", np.nan), ("num_cosine", np.nan),
                       ("num_loss_rel_diff", np.nan)):
        r[col] = pd.Series([value] * len(r), index=r.index,
                           dtype=object if value == "" else float)
    if not tf32:
        r.loc[r["precision"] == "fp32", "eff_cudnn_allow_tf32"] = "false"
    for precision, value in figures.items():
        rows = r["precision"] == precision
        r.loc[rows, "num_reference"] = "fp32-strict"
        r.loc[rows, "num_rel_err" if mode == "infer" else "num_loss_rel_diff"] = value
    return analyse(dataclasses.replace(ds, results=r))


def _answer(a: Analysis, claim: str) -> claims.ClaimAnswer:
    (found,) = claims.evaluate(a, [BY_ID[claim]])
    return found


def test_the_accuracy_claims_are_declared_with_their_rules() -> None:
    assert BY_ID["amp-accuracy"].analysis == "amp_accuracy"
    assert BY_ID["tf32-training"].analysis == "tf32_training"
    assert all(BY_ID[c].pages == ("precision",) for c in ("amp-accuracy", "tf32-training"))


def test_without_the_check_both_claims_are_not_measured_and_say_why(write_tree: Any) -> None:
    a = analyse(load_reports(_tree(write_tree)))
    amp, tf32 = _answer(a, "amp-accuracy"), _answer(a, "tf32-training")
    for found in (amp, tf32):
        assert found.verdict is ClaimVerdict.NOT_MEASURED and not found.findings
        assert found.missing == NUMERICS_RUN
        assert "measured for speed, none with the numerics check" in found.summary
    assert amp.summary.startswith("2 AMP comparisons")
    assert tf32.summary.startswith("1 TF32 training comparisons")


def test_amp_that_agrees_supports_and_one_that_drifts_makes_it_depend(write_tree: Any) -> None:
    root = _tree(write_tree, mode="infer")
    agree = _answer(_checked(root, {"amp-bf16": 0.004, "amp-fp16": 0.006}, mode="infer"),
                    "amp-accuracy")
    assert agree.verdict is ClaimVerdict.SUPPORTED
    assert {f.stance for f in agree.findings} == {Stance.SUPPORTS}
    (bf16,) = [f for f in agree.findings if f.label.endswith("amp-bf16")]
    assert bf16.text == "resnet50 · infer · amp-bf16: outputs agree (relative error 0.4%)"
    mixed = _answer(_checked(root, {"amp-bf16": 0.004, "amp-fp16": 0.05}, mode="infer"),
                    "amp-accuracy")
    assert mixed.verdict is ClaimVerdict.DEPENDS
    (fp16,) = [f for f in mixed.findings if f.stance is Stance.CONTRADICTS]
    assert fp16.text.endswith("outputs drift (relative error 5%, over the fp16 tolerance "
                              "of 1%)"), fp16.text
    assert "outputs drift in 1 (resnet50 · infer · amp-fp16)" in mixed.summary


def test_an_unchecked_pair_cannot_tell_beside_a_checked_one(write_tree: Any) -> None:
    found = _answer(_checked(_tree(write_tree), {"amp-bf16": 0.001}), "amp-accuracy")
    assert found.verdict is ClaimVerdict.SUPPORTED  # the unchecked fp16 tells nothing
    stances = sorted(f.stance for f in found.findings)
    assert stances == sorted([Stance.SUPPORTS, Stance.CANNOT_TELL])
    (unchecked,) = [f for f in found.findings if f.stance is Stance.CANNOT_TELL]
    assert unchecked.text.endswith("amp-fp16: outputs not checked")
    assert unchecked.remedy == NUMERICS_RUN and "outputs not checked in 1" in found.summary
    assert found.scope == "1 of 2 findings (resnet50) on gpu-box"


def test_tf32_training_is_read_from_the_fp32_side(write_tree: Any) -> None:
    root = _tree(write_tree)
    a = _checked(root, {"fp32": 0.002, "fp32-strict": 0.0})
    (row,) = tf32_pairs(a).itertuples(index=False)
    assert (row.variant_value, row.baseline_value) == ("fp32", "fp32-strict")
    assert row.var_num_loss_rel_diff_worst == 0.002  # the fp32 cell's, not the strict one's
    good = _answer(a, "tf32-training")
    assert good.verdict is ClaimVerdict.SUPPORTED, good.summary
    (f,) = good.findings
    assert f.text == ("resnet50 · train · fp32: outputs agree (loss 0.2% off after the "
                      "same steps)")
    bad = _answer(_checked(root, {"fp32": 0.05}), "tf32-training")
    assert bad.verdict is ClaimVerdict.CONTRADICTED
    assert bad.findings[0].text.endswith("over the TF32 tolerance of 1% for the loss)")


def test_an_fp32_cell_whose_switches_read_back_off_is_no_tf32_finding(write_tree: Any) -> None:
    found = _answer(_checked(_tree(write_tree), {"fp32": 0.05}, tf32=False), "tf32-training")
    assert found.verdict is ClaimVerdict.NOT_MEASURED and not found.findings
    assert found.summary == "no TF32 training comparisons measured"
    infer = _answer(_checked(_tree(write_tree, mode="infer"), {"fp32": 0.0}, mode="infer"),
                    "tf32-training")
    assert infer.verdict is ClaimVerdict.NOT_MEASURED  # the claim is about training


def test_a_finding_words_its_check_as_the_pages_do() -> None:
    """One wording of a check, the judge's (``judge.numerics.clause``): the claims speak it
    and the pages' words are that same function, with the figures and the bound it names."""
    from bench.report.judge.numerics import Math, check
    from bench.report.judge.numerics import clause as judged
    from bench.report.render.words import numerics as words

    assert words.clause is judged
    said = [judged(c) for c in (
        check(Math.BF16, training=False, n=3, rel_err=0.004, cosine=0.99998),
        check(Math.FP16, training=False, n=1, rel_err=1.0, cosine=0.0),
        check(Math.TF32, training=True, n=1, rel_err=0.002, loss_rel_diff=0.05,
              param_drift=1e-5),
        check(Math.BF16, training=False, n=0))]
    assert said == [
        "outputs agree (relative error 0.4%, cosine 0.99998)",
        "outputs drift (relative error 100%, cosine 0, over the fp16 tolerance of 1%)",
        "outputs drift (relative error 0.2%, loss 5% off after the same steps, parameters "
        "1.0e-05, over the TF32 tolerance of 1% for the loss)",
        "outputs not checked"]
