"""The knobs ``bench advise`` weighs, which of them apply here, and how many fit the budget.

A knob is one setting turned away from PyTorch's default: one variant cell beside a baseline
cell that has every default (fp32, NCHW, cudnn.benchmark and deterministic off, every core).
Each pair differs in exactly one axis, so each is one comparison of the report's own
(``bench.report.analysis.pairs.AXES``): the verdict comes from there, not from here. TF32 is
the one knob that is on by default (in convolutions): its variant cell turns it off, and its
verdict reads that pair the other way round (``Knob.reverse``), so its line says what turning
TF32 on buys.

Why a fixed priority: when the budget is short the knobs most likely to matter for a user go
first (autotuning and bf16 on a GPU, then the layout; torch.compile, whose first pass compiles
for tens of seconds, last); fewer knobs with a verdict each beat
every knob without one, so the plan drops knobs before it drops replicates below the report's
minimum. All of it is pure: the estimate is an argument, so the fitting is tested without a
clock or a machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.run.plan.budget import greedy
from bench.run.protocol import Probe

#: The report's minimum of ok replicates per side for a verdict (its MIN_OK_REPLICATES; the
#: report is not imported here, and a test keeps the two equal).
REPLICATES = 3


@dataclass(frozen=True)
class Knob:
    """One setting against its default: ``change`` is the variant cell's axis values, ``axis``
    the report's comparison that judges it."""

    name: str
    axis: str
    change: Mapping[str, Any]
    what: str
    devices: tuple[str, ...] = ("cpu", "cuda")
    autocast: str = ""  # the autocast dtype it needs ("bfloat16", "float16")
    needs_4d: bool = False
    #: the setting is PyTorch's default and the variant cell turns it off (TF32 convolutions):
    #: its verdict reads the pair from the variant's side, so that it says what turning the
    #: setting on buys, as every other knob's does
    reverse: bool = False


#: Every knob, in priority order (the first ones stay when the budget is short).
KNOBS: tuple[Knob, ...] = (
    Knob("cudnn.benchmark", "cudnn_benchmark", {"cudnn_benchmark": "on"},
         "cuDNN autotuning: it times the convolution algorithms for each new input shape",
         devices=("cuda",)),
    Knob("amp-bf16", "precision", {"precision": "amp-bf16"}, "bf16 autocast",
         autocast="bfloat16"),
    Knob("channels_last", "memory_format", {"memory_format": "channels_last"},
         "channels_last memory layout", needs_4d=True),
    Knob("tf32", "precision", {"precision": "fp32-strict"},
         "TF32 convolutions (fp32, PyTorch's default) against fp32-strict (TF32 off)",
         devices=("cuda",), reverse=True),
    Knob("amp-fp16", "precision", {"precision": "amp-fp16"}, "fp16 autocast",
         autocast="float16"),
    Knob("cudnn.deterministic", "cudnn_deterministic", {"cudnn_deterministic": "on"},
         "deterministic cuDNN algorithms", devices=("cuda",)),
    Knob("cpu_threads", "cpu_threads", {"cpu_threads": 1}, "one thread against every core",
         devices=("cpu",)),
    Knob("torch.compile", "compile", {"compile": "default"},
         "torch.compile's default mode against eager (its graph breaks named)"),
)


def skip_reason(knob: Knob, device: str, probe: Probe, input_ndim: int | None,
                cores: int) -> str:
    """Why ``knob`` cannot be measured here ("skipped: …"), or empty when it can."""
    if device not in knob.devices:
        if "cuda" in knob.devices and not probe.cuda:
            return "skipped: no CUDA"
        return f"skipped: {knob.devices[0].upper()} only (--device {device})"
    if knob.needs_4d and input_ndim is not None and input_ndim != 4:
        return f"skipped: input is not 4-D ({input_ndim}-D)"
    if knob.autocast and knob.autocast not in probe.autocast.get(device, []):
        return f"skipped: this torch has no {knob.autocast} autocast on {device}"
    if knob.name == "cpu_threads" and cores < 2:
        return "skipped: one core, so one thread is all of them"
    return ""


@dataclass(frozen=True)
class Fit:
    """What fits the budget: the knobs measured, the knobs left out, the replicates per cell
    and the estimated seconds of it all."""

    knobs: tuple[str, ...]
    left_out: tuple[str, ...]
    replicates: int
    estimate_s: float


def fit(baseline_s: float, knob_s: Sequence[tuple[str, float]], budget_s: float,
        replicates: int = REPLICATES) -> Fit | None:
    """The most knobs (in priority order, a dearer one skipped for cheaper later ones) whose
    cells, with the baseline, fit ``budget_s`` at ``replicates`` each; fewer replicates only
    when no knob fits at all; None when not even one replicate of the baseline and one knob
    does. ``baseline_s`` and ``knob_s`` are the estimated seconds of one replicate."""
    for reps in range(replicates, 0, -1):
        kept, left, total = greedy([(n, reps * s) for n, s in knob_s],
                                   budget_s - reps * baseline_s)
        if kept:
            return Fit(tuple(kept), tuple(left), reps, reps * baseline_s + total)
    return None


def cheapest_s(baseline_s: float, knob_s: Sequence[tuple[str, float]]) -> float:
    """The smallest plan (one replicate of the baseline and of the cheapest knob), for the
    message that asks for a larger budget."""
    return baseline_s + min((s for _, s in knob_s), default=0.0)

