"""From the default to the fastest measured (``judge.gains``), on cells built by hand: the
fastest with enough clean replicates, its widened interval, the switches' shares along a
measured path, and the faster configurations that do not count, with why."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from bench import schema
from bench.report.judge.gains import default_first, gains
from bench.report.vocabulary import Noise, Verdict


def _cell(step: float, *, precision: str = "fp32", layout: str = "nchw", bench: str = "off",
          n: int = 3, spread: float = 0.002, mode: str = "train", batch: int = 128,
          shapes: str = "static", **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {c: "" for c in schema.AXIS_COLUMNS}
    row.update(device="cuda", model="resnet50", mode=mode, batch_size=batch, resolution=224,
               precision=precision, memory_format=layout, shapes=shapes,
               cudnn_benchmark=bench, cudnn_deterministic="off", kernel_cache="fresh",
               compile="off", compile_dynamic="auto", cudnn_benchmark_limit="10")
    medians = tuple(step * (1 + spread * (i - (n - 1) / 2)) for i in range(n))
    row.update(kind="model", page="box-1", fingerprint_id="1", machine="box",
               anchor=f"cell-{precision}-{layout}-{bench}-{mode}-{batch}-{shapes}",
               n_ok=n, steady_median_s=step, samples_per_s=batch / step,
               replicate_medians=medians, n_drift=0, n_throttled=0)
    row.update(extra)
    return row


def _gains(*cells: dict[str, Any]) -> list[Any]:
    return list(gains(pd.DataFrame(cells)))


def test_two_switches_give_the_whole_and_each_share_along_a_measured_path() -> None:
    [g] = _gains(_cell(0.060), _cell(0.055, precision="amp-bf16"),
                 _cell(0.030, precision="amp-bf16", layout="channels_last"))
    assert g.speedup == pytest.approx(2.0)
    assert g.verdict is Verdict.FASTER and g.candidates == 3
    assert g.ci_low is not None and g.ci_low < 2.0 < g.ci_high
    assert g.changed == ("precision", "memory_format")
    first, second = g.steps
    assert (first.axis, first.after, second.axis, second.after) == (
        "precision", "amp-bf16", "memory_format", "channels_last")
    assert first.speedup * second.speedup == pytest.approx(g.speedup)
    assert first.share + second.share == pytest.approx(1.0)
    assert first.share == pytest.approx(math.log(0.060 / 0.055) / math.log(2.0))


def test_a_path_goes_through_whichever_middle_was_measured() -> None:
    # amp-bf16 in NCHW was not measured; channels_last in fp32 was
    [g] = _gains(_cell(0.060), _cell(0.040, layout="channels_last"),
                 _cell(0.030, precision="amp-bf16", layout="channels_last"))
    assert [s.axis for s in g.steps] == ["memory_format", "precision"]


def test_no_measured_middle_leaves_the_total_without_shares() -> None:
    [g] = _gains(_cell(0.060), _cell(0.030, precision="amp-bf16", layout="channels_last"))
    assert g.speedup == pytest.approx(2.0) and g.steps == ()


def test_the_choice_of_the_best_widens_its_interval() -> None:
    one = _gains(_cell(0.060, spread=0.05), _cell(0.050, precision="amp-bf16", spread=0.05))
    many = _gains(_cell(0.060, spread=0.05), _cell(0.050, precision="amp-bf16", spread=0.05),
                  _cell(0.058, layout="channels_last"), _cell(0.059, bench="on"),
                  _cell(0.0595, precision="amp-fp16"))
    (a,), (b,) = one, many
    assert b.speedup == pytest.approx(a.speedup) and b.candidates == 5
    assert b.ci_high - b.ci_low > a.ci_high - a.ci_low


def test_too_few_or_flagged_replicates_never_count_and_say_why() -> None:
    [g] = _gains(_cell(0.060), _cell(0.055, precision="amp-bf16"),
                 _cell(0.040, layout="channels_last", n_throttled=1),
                 _cell(0.029, precision="amp-bf16", layout="channels_last", n=1))
    assert dict(g.best.switches)["precision"] == "amp-bf16"
    assert g.speedup == pytest.approx(0.060 / 0.055)
    assert dict(g.unsure.switches)["memory_format"] == "channels_last"
    assert g.unsure_why is None and g.unsure_speedup == pytest.approx(0.060 / 0.029)
    [h] = _gains(_cell(0.060), _cell(0.055, precision="amp-bf16"),
                 _cell(0.040, layout="channels_last", n_drift=1))
    assert h.unsure_why is Noise.DRIFT


def test_nothing_clearly_faster_is_said_so_and_a_cpu_has_no_cudnn_switch() -> None:
    [g] = _gains(_cell(0.060, device="cpu", cudnn_benchmark="n/a"),
                 _cell(0.0601, precision="amp-bf16", device="cpu", cudnn_benchmark="n/a"))
    assert g.verdict is not Verdict.FASTER


def test_no_default_or_nothing_else_measured_gives_no_gain() -> None:
    assert _gains(_cell(0.055, precision="amp-bf16"), _cell(0.030, layout="channels_last")) == []
    assert _gains(_cell(0.060)) == []
    assert _gains(_cell(0.060, n=1), _cell(0.030, precision="amp-bf16")) == []


def test_a_machine_line_quotes_its_default_workload() -> None:
    found = gains(pd.DataFrame([
        _cell(0.060), _cell(0.050, precision="amp-bf16"),
        _cell(0.020, mode="infer"), _cell(0.010, mode="infer", precision="amp-bf16"),
        _cell(0.030, batch=64), _cell(0.020, batch=64, precision="amp-bf16"),
        _cell(0.070, shapes="dynamic", batch=256), _cell(0.060, shapes="dynamic", batch=256,
                                                          precision="amp-bf16")]))
    g = default_first(found)
    assert g is not None and (g.mode, g.batch_size, g.shapes) == ("train", 128, "static")
