"""How the input-pipeline answers are named, shared by the "Feeding the GPU" page and the
Compare page's "cores per GPU to feed" row."""

from __future__ import annotations

from bench.report.judge.feeding_sections import FeedingSection, Need
from bench.report.vocabulary import Feeding


def step_name(n: Need) -> str:
    """``resnet50 train b128 amp-bf16 channels_last``: the step a need is for."""
    layout = "" if n.memory_format == "nchw" else f" {n.memory_format}"
    return f"{n.model} {n.mode} b{n.batch_size} {n.precision}{layout}"


def cores_per_gpu(s: FeedingSection | None) -> str:
    """A machine's cores per GPU to feed: its answer's worker count and step, the verdict
    where no count suffices, or "not measured" (no GPU step held against a pipeline)."""
    n = s.headline if s is not None and s.gpu else None
    if n is None or n.device != "cuda" or n.answer.verdict == Feeding.NOT_MEASURED:
        return str(Feeding.NOT_MEASURED)
    a = n.answer
    if a.workers is not None:
        return f"{a.workers} ({step_name(n)}, {a.verdict})"
    if a.beyond_host and a.at_least is not None:
        return (f"at least {a.at_least.workers}, a bound: more than the host's "
                f"{a.host_cores} cores ({step_name(n)})")
    if a.verdict == Feeding.STARTUP:  # a verdict on the rows, not on the cores: say so first
        return f"not known: the pipelines were {a.verdict} ({step_name(n)})"
    return f"{a.verdict} ({step_name(n)})"
