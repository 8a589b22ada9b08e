"""Speed and numerics weighed together: whether a switch's outputs agree with the strict
reference within the tolerance of the arithmetic it ran, and what that makes of its speedup.

The numerics check (``analysis.numerics``) runs a cell's configuration and a strict reference
(fp32 with TF32 off, eager, NCHW; fp64 on the CPU where affordable) from the same weights and
the same seeded inputs. The judge reads the **worst** replicate (a tolerance is a bound every
replicate keeps) and leads with the **norm-wise** measures: the relative error of the outputs
(‖y − y_ref‖ / ‖y_ref‖) and, in training, the loss and the parameters after the same optimizer
steps. A randomly initialised model's logits lie close together, so a rounding error can swap
its top-1 class while the outputs barely differ: top-1 agreement is shown, never judged.

The tolerances (``TOLERANCES``) are per arithmetic, looser where the format keeps fewer mantissa
bits, and each names its source (``Tolerance.source``), which the Methodology page prints.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.report import fmt
from bench.report.judge.rows import Pair
from bench.report.vocabulary import Numerics, Stance, Tradeoff, Verdict


class Math(enum.Enum):
    """The arithmetic a cell's convolutions and matmuls really ran (read back, not asked)."""

    FP32 = "fp32"
    TF32 = "TF32"
    FP16 = "fp16"
    BF16 = "bf16"


@dataclass(frozen=True)
class Tolerance:
    """How far one arithmetic's outputs may be from the strict reference and still agree."""

    math: Math
    rel_err: float  # outputs: the norm-wise relative error, at most
    cosine: float  # outputs: the cosine similarity, at least
    loss_rel_diff: float  # training: |loss − ref| / |ref| after the same steps, at most
    param_drift: float  # training: ‖θ − θ_ref‖ / ‖θ_ref‖ after them, at most
    source: str  # where these figures come from, in words


#: PyTorch's compiler benchmarks (``torch._dynamo.utils.same``): a cosine similarity of at
#: least 0.99 where they compare by cosine, for every arithmetic.
COSINE_FLOOR = 0.99
_SAME = ("PyTorch's compiler benchmarks compare each model with an eager reference "
         "(torch/_dynamo/utils.py, same(): cosine similarity at least 0.99 where cosine is used)")
_MLPERF = "MLPerf's quality target of 99% of the reference (a loss within 1%)"

TOLERANCES: dict[Math, Tolerance] = {
    Math.FP32: Tolerance(
        Math.FP32, 1e-4, COSINE_FLOOR, 1e-3, 1e-4,
        "benchmarks/dynamo/torchbench.py: 1e-4 for fp32 inference (also same()'s default "
        "tol) and 1e-3 for training on CUDA; " + _SAME),
    Math.TF32: Tolerance(
        Math.TF32, 1e-3, COSINE_FLOOR, 1e-2, 1e-3,
        "benchmarks/dynamo/torchbench.py: 1e-3, its tolerance for reduced precision (TF32 "
        "rounds the inputs of convolutions and matmuls to fp16's 10-bit mantissa and "
        "accumulates in fp32); " + _MLPERF + " for training"),
    Math.FP16: Tolerance(
        Math.FP16, 1e-2, COSINE_FLOOR, 1e-2, 1e-2,
        "benchmarks/dynamo/torchbench.py: 1e-2 for models that need a higher fp16 tolerance "
        "(autocast also stores activations in fp16); " + _MLPERF + " for training"),
    Math.BF16: Tolerance(
        Math.BF16, 1e-2, COSINE_FLOOR, 1e-2, 1e-2,
        "benchmarks/dynamo/torchbench.py: 1e-2 for models that need a higher bf16 tolerance "
        "(bf16 keeps 8 bits of mantissa); " + _MLPERF + " for training"),
}


def math_of(precision: str | None, conv_math: str | None = None,
            matmul_tf32: str | None = None, *fp32_precisions: str | None,
            device: str | None = None) -> Math:
    """The arithmetic a cell ran: autocast's dtype, else TF32 where any read-back flag says the
    convolutions or matmuls used it (``eff_conv_math``, ``allow_tf32``, an ``fp32_precision``
    of ``tf32``), else fp32. A flag read back, not the precision asked for: a convolution
    labelled fp32 runs in TF32 unless every flag is off. TF32 is a CUDA GPU's: on another
    ``device`` the CUDA and cuDNN switches read back whatever they hold (a CPU's cuDNN
    ``fp32_precision`` reads ``tf32``) and govern nothing that ran."""
    if precision == "amp-bf16" or conv_math == "bf16":
        return Math.BF16
    if precision == "amp-fp16" or conv_math == "fp16":
        return Math.FP16
    if device not in (None, "", "cuda"):
        return Math.FP32
    if conv_math == "tf32" or matmul_tf32 == "true" or "tf32" in {
            str(p).lower() for p in fp32_precisions if p}:
        return Math.TF32
    return Math.FP32


@dataclass(frozen=True)
class NumericCheck:
    """What one cell's numerics check says, with the worst figures it rests on."""

    verdict: Numerics
    math: Math
    tolerance: Tolerance
    training: bool
    n: int = 0  # replicates checked
    reference: str = ""  # fp64-cpu or fp32-strict
    rel_err: float | None = None  # the worst over replicates, as every figure here
    cosine: float | None = None
    top1: float | None = None  # shown, never judged (see the module docstring)
    loss_rel_diff: float | None = None
    param_drift: float | None = None
    failed: tuple[str, ...] = ()  # the measures outside the tolerance, named

    @property
    def checked(self) -> bool:
        return self.verdict is not Numerics.NOT_CHECKED


def _num(value: object) -> float | None:
    """A figure as a float; None where missing. NaN stays NaN: a check that ran and produced
    no finite figure (an overflow) must not read as unchecked."""
    if value is None:
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _outside(value: float | None, bound: float, upper: bool = True) -> bool:
    if value is None:
        return False
    if not math.isfinite(value):
        return True
    return value > bound if upper else value < bound


def check(math_: Math, *, training: bool, n: int, reference: str = "",
          rel_err: float | None = None, cosine: float | None = None,
          top1: float | None = None, loss_rel_diff: float | None = None,
          param_drift: float | None = None) -> NumericCheck:
    """Judge one cell's worst figures against ``TOLERANCES[math_]``. Unchecked where no
    replicate ran the check; drifts where a measure is outside its bound or not finite, or
    where the measure the mode leads with (the loss in training, the outputs otherwise) is
    missing although the check ran."""
    tol = TOLERANCES[math_]
    if n <= 0:
        return NumericCheck(Numerics.NOT_CHECKED, math_, tol, training)
    bounds = (("relative error", rel_err, tol.rel_err, True),
              ("cosine similarity", cosine, tol.cosine, False),
              ("loss after the same steps", loss_rel_diff, tol.loss_rel_diff, True),
              ("parameter drift", param_drift, tol.param_drift, True))
    failed = [name for name, v, bound, upper in bounds if _outside(v, bound, upper)]
    lead = loss_rel_diff if training else rel_err
    if lead is None and not (training and rel_err is not None):
        failed.append("loss after the same steps" if training else "relative error")
    verdict = Numerics.DRIFTS if failed else Numerics.AGREES
    return NumericCheck(verdict, math_, tol, training, n, reference, rel_err, cosine, top1,
                        loss_rel_diff, param_drift, tuple(dict.fromkeys(failed)))


@dataclass(frozen=True, kw_only=True)
class NumericPair(Pair):
    """A comparison of a switch that changes the arithmetic or its order, with the variant's
    numerics (``analysis.numerics``, as ``var_*``) and its verdict beside its speed."""

    var_num_reference: str | None = None
    var_num_n: int | None = None
    var_num_inputs: float | None = None
    var_num_train_steps: float | None = None
    var_num_rel_err: float | None = None
    var_num_rel_err_worst: float | None = None
    var_num_cosine: float | None = None
    var_num_cosine_worst: float | None = None
    var_num_top1_agree_worst: float | None = None
    var_num_loss_rel_diff_worst: float | None = None
    var_num_param_drift_worst: float | None = None
    var_num_max_abs_err_worst: float | None = None
    var_eff_conv_math: str | None = None
    var_eff_cudnn_allow_tf32: str | None = None
    var_eff_matmul_allow_tf32: str | None = None
    var_eff_matmul_fp32_precision: str | None = None
    var_eff_conv_fp32_precision: str | None = None

    @property
    def variant_precision(self) -> str | None:
        return self.variant_value if self.axis == "precision" else self.precision

    @property
    def math(self) -> Math:
        """The arithmetic the variant really ran (cuDNN's TF32 switch stands for the
        convolutions' math where the rows are older than ``eff_conv_math``)."""
        conv = self.var_eff_conv_math or (
            "tf32" if self.var_eff_cudnn_allow_tf32 == "true" else None)
        return math_of(self.variant_precision, conv,
                       self.var_eff_matmul_allow_tf32, self.var_eff_matmul_fp32_precision,
                       self.var_eff_conv_fp32_precision, device=self.device)

    @property
    def numerics(self) -> NumericCheck:
        """The variant's outputs against the strict reference, judged (see ``check``)."""
        return check(self.math, training=self.mode == "train", n=int(self.var_num_n or 0),
                     reference=str(self.var_num_reference or ""),
                     rel_err=_num(self.var_num_rel_err_worst),
                     cosine=_num(self.var_num_cosine_worst),
                     top1=_num(self.var_num_top1_agree_worst),
                     loss_rel_diff=_num(self.var_num_loss_rel_diff_worst),
                     param_drift=_num(self.var_num_param_drift_worst))

    @property
    def tradeoff(self) -> Tradeoff | None:
        """Speed and numerics together (``tradeoff``)."""
        return tradeoff(self.verdict, self.numerics.verdict)


def tradeoff(speed: str, numerics: Numerics) -> Tradeoff | None:
    """What a switch comes to: faster or not (the speed verdict) and agrees or drifts. None
    where either is unknown: too few replicates, or the numerics not checked."""
    if numerics is Numerics.NOT_CHECKED or speed in (Verdict.INSUFFICIENT, Verdict.NOT_MEASURED,
                                                     ""):
        return None
    faster = speed == Verdict.FASTER
    if numerics is Numerics.AGREES:
        return Tradeoff.FASTER_AGREES if faster else Tradeoff.SLOWER_AGREES
    return Tradeoff.FASTER_DRIFTS if faster else Tradeoff.SLOWER_DRIFTS


@dataclass(frozen=True)
class NumericSummary:
    """What a group of pairs' numerics add up to (one variant on one machine): the verdict
    (drifts if any checked pair drifts), how many were checked, and the pair to quote (the
    worst drifting one, else the checked one with the largest relative error)."""

    verdict: Numerics
    checked: int
    total: int
    quoted: NumericPair | None
    drifting: int = 0


def _badness(p: NumericPair) -> float:
    c = p.numerics
    figures = [v for v in (c.rel_err, c.loss_rel_diff) if v is not None]
    worst = max(figures, default=0.0)
    return math.inf if not math.isfinite(worst) else worst


def summarise(pairs: Iterable[NumericPair]) -> NumericSummary:
    """The numerics of several pairs, judged together (see ``NumericSummary``)."""
    rows = list(pairs)
    checked = [p for p in rows if p.numerics.checked]
    if not checked:
        return NumericSummary(Numerics.NOT_CHECKED, 0, len(rows), None)
    drifting = [p for p in checked if p.numerics.verdict is Numerics.DRIFTS]
    pool = drifting or checked
    quoted = max(pool, key=_badness)
    verdict = Numerics.DRIFTS if drifting else Numerics.AGREES
    return NumericSummary(verdict, len(checked), len(rows), quoted, len(drifting))


def stance(c: NumericCheck) -> Stance:
    """What one check says of a claim that a switch keeps the numbers ("AMP does not hurt
    accuracy", "TF32 is as good as fp32 for training"): agrees supports it, drifts goes
    against it, and an unchecked cell cannot tell."""
    if c.verdict is Numerics.AGREES:
        return Stance.SUPPORTS
    if c.verdict is Numerics.DRIFTS:
        return Stance.CONTRADICTS
    return Stance.CANNOT_TELL


def claim_pairs(pairs: Sequence[NumericPair], maths: Sequence[Math], *,
                training: bool | None = None) -> tuple[NumericPair, ...]:
    """The pairs a numerics claim rests on: those whose variant ran one of ``maths`` (AMP:
    ``(Math.BF16, Math.FP16)``; TF32: ``(Math.TF32,)``), in training only, inference only or
    both (``training``), checked or not (an unchecked one is a finding that cannot tell)."""
    return tuple(p for p in pairs if p.math in maths
                 and (training is None or (p.mode == "train") == training))


# -- a check in words: the claims' and every page's -------------------------------------------


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
    return ", ".join([*parts, *bound(c)])


def bound(c: NumericCheck) -> list[str]:
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
