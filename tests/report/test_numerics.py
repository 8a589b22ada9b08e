"""Speed beside numerics: the cells' numerics over replicates, the variant's numerics on the
comparisons of the switches that change the arithmetic, the judge's verdict against the
tolerance of the arithmetic really run, and the pages that print both.

The numerics figures here are FIXTURES, set on loaded rows in memory (``_checked``): made up to
exercise the report, never written to a results file and never a measurement.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from bench.report.analysis import Analysis, analyse
from bench.report.analysis.numerics import NUM_CELL_COLUMNS, NUM_PAIR_COLUMNS
from bench.report.input.load import load_reports
from bench.report.judge.facts import Facts
from bench.report.judge.machines import machines_of
from bench.report.judge.numerics import (
    TOLERANCES,
    Math,
    NumericPair,
    check,
    claim_pairs,
    math_of,
    stance,
    summarise,
    tradeoff,
)
from bench.report.judge.rows import typed_rows
from bench.report.questions.answers import judge
from bench.report.questions.compile.model import CompilePair
from bench.report.questions.precision.model import precision_page
from bench.report.questions.site import render
from bench.report.render.mkdocs_hooks import splice
from bench.report.render.words import numerics as words
from bench.report.vocabulary import Numerics, Stance, Tradeoff, Verdict

from .builders import axes, cell, env_for

ENV = env_for("gpu-box", "run-1")
CPU = env_for("laptop", "run-cpu", gpu=False)
#: Steady seconds per precision: bf16 and fp16 clearly faster, strict slower.
TIMES = {"fp32": [0.100, 0.101, 0.099], "amp-bf16": [0.060, 0.061, 0.059],
         "amp-fp16": [0.050, 0.051, 0.049], "fp32-strict": [0.150, 0.151, 0.149]}


def _checked(root: Path, errors: dict[str, list[float]], *, mode: str = "infer") -> Analysis:
    """The tree's analysis, its rows given FIXTURE numerics in memory: per precision, one
    relative error per replicate (its cosine follows from it); a precision not named stays
    unchecked."""
    ds = load_reports(root)
    r = ds.results.copy()
    for col, value in (("num_reference", ""), ("num_rel_err", np.nan), ("num_cosine", np.nan),
                       ("num_inputs", np.nan), ("num_loss_rel_diff", np.nan)):
        r[col] = pd.Series([value] * len(r), index=r.index, dtype=object if value == ""
                           else float)
    for precision, errs in errors.items():
        for i, e in enumerate(errs):
            rows = (r["precision"] == precision) & (r["replicate"] == i)
            r.loc[rows, ["num_reference", "num_inputs"]] = ["fp64-cpu", 256]
            r.loc[rows, "num_rel_err" if mode == "infer" else "num_loss_rel_diff"] = e
            r.loc[rows, "num_cosine"] = 1 - min(e, 1.0) ** 2 / 2 if math.isfinite(e) else np.nan
    return analyse(dataclasses.replace(ds, results=r))


def _tree(write_tree: Any, env: dict[str, Any] = ENV, mode: str = "infer",
          times: dict[str, list[float]] = TIMES) -> Path:
    rows = [row for precision, t in times.items()
            for row in cell(env, axes(precision=precision, mode=mode,
                                      **({"device": "cpu"} if env is CPU else {})), t)]
    return write_tree([(env, rows, [])])


def _facts(a: Analysis) -> Facts:
    return Facts(analysis=a, machines=machines_of(a.machines), recs=(), regimes=(), claims=())


# -- analysis ------------------------------------------------------------------------------


def test_a_cell_carries_the_median_and_the_worst_of_its_replicates(write_tree: Any) -> None:
    a = _checked(_tree(write_tree), {"amp-bf16": [0.004, 0.002, 0.009]})
    bf16 = a.cells.loc[a.cells["precision"] == "amp-bf16"].iloc[0]
    assert bf16["num_n"] == 3 and bf16["num_reference"] == "fp64-cpu"
    assert bf16["num_rel_err"] == pytest.approx(0.004)  # the median
    assert bf16["num_rel_err_worst"] == pytest.approx(0.009)  # the largest
    assert bf16["num_cosine_worst"] == pytest.approx(1 - 0.009 ** 2 / 2)  # the smallest
    fp32 = a.cells.loc[a.cells["precision"] == "fp32"].iloc[0]
    assert fp32["num_n"] == 0 and math.isnan(fp32["num_rel_err"])  # unchecked, never a zero


def test_the_numeric_axes_carry_the_variants_numerics_and_the_others_do_not(
        write_tree: Any) -> None:
    a = _checked(_tree(write_tree), {"amp-bf16": [0.004, 0.004, 0.004]})
    pairs = a.comparisons["precision"]
    assert set(NUM_PAIR_COLUMNS) <= set(pairs.columns)
    bf16 = pairs.loc[pairs["variant_value"] == "amp-bf16"].iloc[0]
    assert bf16["var_num_rel_err_worst"] == pytest.approx(0.004) and bf16["speedup"] > 1
    assert not set(NUM_PAIR_COLUMNS) & set(a.comparisons["device"].columns)
    assert set(NUM_PAIR_COLUMNS) <= set(a.compiled.columns)


def test_rows_older_than_the_check_read_unchecked(write_tree: Any) -> None:
    a = analyse(load_reports(_tree(write_tree)))
    assert set(NUM_CELL_COLUMNS) <= set(a.cells.columns)
    assert (a.cells["num_n"] == 0).all()
    rows = typed_rows(NumericPair, a.comparisons["precision"])
    assert rows and all(r.numerics.verdict is Numerics.NOT_CHECKED for r in rows)
    assert all(r.tradeoff is None for r in rows)


# -- the judge -----------------------------------------------------------------------------


def test_the_strict_reference_against_itself_agrees_and_a_small_error_does_not() -> None:
    assert check(Math.FP32, training=False, n=3, rel_err=0.0, cosine=1.0).verdict \
        is Numerics.AGREES
    off = check(Math.FP32, training=False, n=3, rel_err=TOLERANCES[Math.FP32].rel_err * 2)
    assert off.verdict is Numerics.DRIFTS and off.failed == ("relative error",)


def test_the_tolerance_follows_the_arithmetic_really_run() -> None:
    err = 0.004  # within bf16's tolerance, beyond TF32's and fp32's
    assert TOLERANCES[Math.FP32].rel_err < TOLERANCES[Math.TF32].rel_err \
        < TOLERANCES[Math.BF16].rel_err
    assert TOLERANCES[Math.TF32].rel_err < TOLERANCES[Math.FP16].rel_err
    assert all(t.source for t in TOLERANCES.values())
    verdicts = {m: check(m, training=False, n=1, rel_err=err).verdict for m in Math}
    assert verdicts[Math.BF16] is Numerics.AGREES and verdicts[Math.FP16] is Numerics.AGREES
    assert verdicts[Math.TF32] is Numerics.DRIFTS and verdicts[Math.FP32] is Numerics.DRIFTS


def test_an_fp32_cell_whose_flags_read_tf32_is_judged_as_tf32() -> None:
    assert math_of("fp32", "fp32", "false") is Math.FP32
    assert math_of("fp32", "tf32") is Math.TF32  # cuDNN's default on Ampere and newer
    assert math_of("fp32", "fp32", "true") is Math.TF32  # TF32 in matmuls
    assert math_of("fp32", "fp32", "false", "ieee", "tf32") is Math.TF32  # fp32_precision
    assert math_of("fp32-strict", "fp32", "false", "ieee", "ieee") is Math.FP32
    assert math_of("amp-bf16", "bf16") is Math.BF16 and math_of("amp-fp16") is Math.FP16


def test_an_overflow_drifts_and_never_reads_unchecked() -> None:
    inf = check(Math.FP16, training=False, n=1, rel_err=math.inf)
    assert inf.verdict is Numerics.DRIFTS and words.error(inf.rel_err) == "not finite"
    empty = check(Math.FP16, training=False, n=1, rel_err=None)  # NaN: the check ran
    assert empty.verdict is Numerics.DRIFTS
    lost = check(Math.FP16, training=True, n=2, loss_rel_diff=math.nan)
    assert lost.verdict is Numerics.DRIFTS and "loss after the same steps" in lost.failed
    assert check(Math.FP16, training=False, n=0).verdict is Numerics.NOT_CHECKED


def test_training_leads_with_the_loss_after_the_same_steps() -> None:
    tol = TOLERANCES[Math.BF16]
    ok = check(Math.BF16, training=True, n=3, loss_rel_diff=tol.loss_rel_diff / 2,
               param_drift=tol.param_drift / 2)
    assert ok.verdict is Numerics.AGREES
    far = check(Math.BF16, training=True, n=3, loss_rel_diff=tol.loss_rel_diff * 3)
    assert far.verdict is Numerics.DRIFTS
    assert "for the loss" in words.figures(far)


@pytest.mark.parametrize(("speed", "numerics", "expected"), [
    (Verdict.FASTER, Numerics.AGREES, Tradeoff.FASTER_AGREES),
    (Verdict.FASTER, Numerics.DRIFTS, Tradeoff.FASTER_DRIFTS),
    (Verdict.NO_CLEAR_DIFFERENCE, Numerics.DRIFTS, Tradeoff.SLOWER_DRIFTS),
    (Verdict.SLOWER, Numerics.DRIFTS, Tradeoff.SLOWER_DRIFTS),
    (Verdict.SLOWER, Numerics.AGREES, Tradeoff.SLOWER_AGREES),
    (Verdict.FASTER, Numerics.NOT_CHECKED, None),
    (Verdict.INSUFFICIENT, Numerics.AGREES, None),
])
def test_the_judge_weighs_speed_and_numerics(speed: Verdict, numerics: Numerics,
                                             expected: Tradeoff | None) -> None:
    assert tradeoff(speed, numerics) is expected


def test_a_claim_reads_each_check_as_a_stance(write_tree: Any) -> None:
    a = _checked(_tree(write_tree, mode="train"),
                 {"amp-bf16": [0.002, 0.002, 0.002], "amp-fp16": [0.2, 0.2, 0.2]}, mode="train")
    rows = typed_rows(NumericPair, a.comparisons["precision"])
    amp = claim_pairs(rows, (Math.BF16, Math.FP16), training=True)
    assert {str(p.variant_value) for p in amp} == {"amp-bf16", "amp-fp16"}
    stances = {str(p.variant_value): stance(p.numerics) for p in amp}
    assert stances == {"amp-bf16": Stance.SUPPORTS, "amp-fp16": Stance.CONTRADICTS}
    assert claim_pairs(rows, (Math.BF16,), training=False) == ()
    summary = summarise(amp)
    assert summary.verdict is Numerics.DRIFTS and summary.drifting == 1
    assert summary.quoted is not None and summary.quoted.variant_value == "amp-fp16"


# -- the pages -----------------------------------------------------------------------------


def test_the_precision_answer_leads_with_speed_and_numerics(write_tree: Any) -> None:
    root = _tree(write_tree)
    a = _checked(root, {"amp-bf16": [0.004] * 3, "amp-fp16": [0.03] * 3,
                        "fp32-strict": [0.0] * 3})
    (s,) = precision_page(_facts(a)).precision.sections
    assert s.winner == "amp-fp16" and s.advice is Tradeoff.FASTER_DRIFTS
    found = dict(s.numerics)
    assert found["amp-bf16"].verdict is Numerics.AGREES
    assert found["fp32-strict"].verdict is Numerics.AGREES  # the reference's own math: zero
    text = _rendered(root, a, "precision.md")
    answer = text.split("## Memory format")[0]
    assert str(Tradeoff.FASTER_DRIFTS) in answer
    assert "outputs drift (relative error 3%, cosine 0.99955, over the fp16 tolerance" in answer
    assert "amp-bf16 faster in 1 of 1 (1.67×), outputs agree (relative error 0.4%)" in answer
    assert "<th>fp32 ran</th>" in text and "<td>TF32</td>" in text  # the builders' fp32: TF32
    assert "<td>agrees, 0.4%</td>" in text and "<td>drifts, 3%</td>" in text
    # a quote carries the outputs beside the speed
    cite = next(ln for ln in answer.splitlines() if "**Cite:**" in ln)
    assert "faster; outputs drift (relative error 3%, cosine 0.99955, over the fp16 tolerance" \
        in cite, cite


def test_an_unchecked_run_says_so_once_and_claims_no_agreement(write_tree: Any) -> None:
    root = _tree(write_tree)
    text = _rendered(root, analyse(load_reports(root)), "precision.md")
    answer = text.split("## Memory format")[0]
    assert "Outputs were not checked against a strict reference here." in answer
    assert "agree" not in answer and "<td>not checked</td>" in text
    assert "outputs" not in next(ln for ln in answer.splitlines() if "**Cite:**" in ln)


def test_the_compile_answer_quotes_the_compiled_outputs(write_tree: Any) -> None:
    times = {"off": [0.100, 0.101, 0.099], "default": [0.080, 0.081, 0.079]}
    rows = [row for mode, t in times.items()
            for row in cell(ENV, axes(compile=mode, mode="infer"), t)]
    root = write_tree([(ENV, rows, [])])
    ds = load_reports(root)
    compiled = ds.results["compile"] == "default"
    r = ds.results.assign(num_reference=np.where(compiled, "fp32-strict", ""),
                          num_rel_err=np.where(compiled, 2e-3, np.nan),
                          num_cosine=np.where(compiled, 0.999998, np.nan))
    a = analyse(dataclasses.replace(ds, results=r))
    (pair,) = typed_rows(CompilePair, a.compiled)
    assert pair.math is Math.TF32 and pair.numerics.verdict is Numerics.DRIFTS
    text = _rendered(root, a, "torch-compile.md")
    assert f"compile it: {Tradeoff.FASTER_DRIFTS}" in text
    assert "Compiled, its outputs drift (relative error 0.2%, cosine 0.999998, over the TF32 " \
           "tolerance of 0.1%)" in text
    cite = next(ln for ln in text.splitlines() if "**Cite:**" in ln)
    assert "faster; outputs drift (relative error 0.2%" in cite, cite


def _rendered(root: Path, a: Analysis, name: str) -> str:
    """One generated page of ``a``, rendered (no MkDocs) beside the reports ``root``, its
    HTML fragments (the long tables) spliced in where MkDocs's hook puts them."""
    generated = root.parent / "docs" / "generated"
    render(judge(a), root, generated)
    return splice((generated / name).read_text(encoding="utf-8"), generated.parent)


def test_a_cpu_cell_never_runs_tf32_whatever_its_cuda_switches_read() -> None:
    """torch on a CPU reads cuDNN's fp32_precision back as tf32: it governs nothing that ran
    there, so a CPU fp32 cell is judged as fp32, a GPU one as TF32."""
    from bench.report.judge.numerics import Math, math_of
    assert math_of("fp32", "fp32", "false", "ieee", "tf32", device="cpu") is Math.FP32
    assert math_of("fp32", "fp32", "false", "ieee", "tf32", device="cuda") is Math.TF32
    assert math_of("amp-bf16", device="cpu") is Math.BF16
