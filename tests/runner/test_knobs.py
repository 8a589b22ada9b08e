"""Which knobs apply, and how many fit a budget: pure functions, no torch, no clock."""

from __future__ import annotations

import pytest

from bench.run.plan import knobs
from bench.run.protocol import Probe


def _probe(cuda: bool = False, cpu: tuple[str, ...] = ("bfloat16", "float16")) -> Probe:
    autocast = {"cpu": list(cpu), **({"cuda": ["bfloat16", "float16"]} if cuda else {})}
    return Probe({}, [], cuda, autocast)


def _why(device: str, probe: Probe, ndim: int | None = 4, cores: int = 2) -> dict[str, str]:
    return {k.name: knobs.skip_reason(k, device, probe, ndim, cores) for k in knobs.KNOBS}


def test_every_issue_knob_is_considered_once() -> None:
    assert [k.name for k in knobs.KNOBS] == [
        "cudnn.benchmark", "amp-bf16", "channels_last", "tf32", "amp-fp16",
        "cudnn.deterministic", "cpu_threads", "torch.compile"]


def test_on_a_cpu_the_cuda_knobs_say_why() -> None:
    why = _why("cpu", _probe())
    assert {n for n, w in why.items() if not w} == {"amp-bf16", "channels_last", "amp-fp16",
                                                    "cpu_threads", "torch.compile"}
    assert why["cudnn.benchmark"] == why["tf32"] == "skipped: no CUDA"
    with_gpu = _why("cpu", _probe(cuda=True))
    assert with_gpu["cudnn.benchmark"] == "skipped: CUDA only (--device cpu)"


def test_on_a_gpu_threads_do_not_apply_and_the_rest_do() -> None:
    why = _why("cuda", _probe(cuda=True))
    assert why["cpu_threads"] == "skipped: CPU only (--device cuda)"
    assert [n for n, w in why.items() if not w] == [
        "cudnn.benchmark", "amp-bf16", "channels_last", "tf32", "amp-fp16",
        "cudnn.deterministic", "torch.compile"]


def test_the_input_and_the_machine_decide_the_rest() -> None:
    why = _why("cpu", _probe(cpu=("bfloat16",)), ndim=2, cores=1)
    assert why["channels_last"] == "skipped: input is not 4-D (2-D)"
    assert why["amp-fp16"] == "skipped: this torch has no float16 autocast on cpu"
    assert why["cpu_threads"] == "skipped: one core, so one thread is all of them"
    assert why["amp-bf16"] == ""


def test_everything_fits_a_generous_budget() -> None:
    fit = knobs.fit(1.0, [("a", 1.0), ("b", 2.0)], budget_s=100)
    assert fit == knobs.Fit(("a", "b"), (), 3, 12.0)


def test_a_short_budget_drops_knobs_in_priority_order_before_replicates() -> None:
    fit = knobs.fit(1.0, [("a", 1.0), ("b", 5.0), ("c", 1.0)], budget_s=10)
    assert fit is not None
    assert (fit.knobs, fit.left_out, fit.replicates) == (("a", "c"), ("b",), 3)
    assert fit.estimate_s == 9.0 <= 10


def test_fewer_replicates_only_when_no_knob_fits_at_three() -> None:
    fit = knobs.fit(2.0, [("a", 2.0), ("b", 2.0)], budget_s=9)
    assert fit is not None and (fit.knobs, fit.replicates) == (("a",), 2)
    assert knobs.fit(2.0, [("a", 2.0)], budget_s=3) is None
    assert knobs.cheapest_s(2.0, [("a", 3.0), ("b", 1.0)]) == 3.0


def test_the_replicates_are_the_reports_minimum_for_a_verdict() -> None:
    pytest.importorskip("scipy")
    from bench.report.analysis import MIN_OK_REPLICATES

    assert knobs.REPLICATES == MIN_OK_REPLICATES
