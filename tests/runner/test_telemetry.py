"""The window's telemetry without a GPU or RAPL: fake NVML handles and a fake powercap tree.

The arithmetic (counter difference, integrated power, clocks, throttle reasons), a counter
that goes backwards, unsupported calls, and RAPL's wrap-around are each checked against
figures worked out by hand.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.run.child import nvml, rapl, telemetry
from bench.run.child.worker import energy_settings
from bench.run.plan.matrix import LASTING_MAX_ITERS, Settings
from bench.run.protocol import Metrics


class Unsupported(Exception):
    """What pynvml raises for a call the device does not support (NVMLError_NotSupported)."""


class FakeNvml:
    """An NVML whose readings follow a script; ``unsupported`` names calls that raise."""

    NVML_CLOCK_SM = 1
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, energy_mj: list[float], power_mw: float = 300_000.0,
                 sm_mhz: list[int] | None = None, masks: list[int] | None = None,
                 unsupported: tuple[str, ...] = ()) -> None:
        self.energy = list(energy_mj)
        self.power, self.unsupported = power_mw, unsupported
        self.sm = list(sm_mhz or [1980])
        self.masks = list(masks or [0])
        self.calls = 0

    def _check(self, name: str) -> None:
        if name in self.unsupported:
            raise Unsupported(name)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> float:
        self._check("energy")
        return self.energy.pop(0)

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> float:
        self._check("power")
        return self.power

    def nvmlDeviceGetClockInfo(self, handle: Any, kind: int) -> int:
        self._check("clock")
        return self.sm.pop(0) if len(self.sm) > 1 else self.sm[0]

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        self._check("util")
        return SimpleNamespace(gpu=90)

    def nvmlDeviceGetTemperature(self, handle: Any, kind: int) -> int:
        self._check("temp")
        return 60

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        self._check("reasons")
        return self.masks.pop(0) if len(self.masks) > 1 else self.masks[0]


class Clock:
    """A fake clock that advances ``step`` seconds on every reading."""

    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def _window(fake: FakeNvml, clock_step: float = 0.5, samples: int = 2) -> telemetry.Reading:
    meter = nvml.NvmlMeter(fake, handle="h", clock=Clock(clock_step), threaded=False)
    meter.start()
    for _ in range(samples):
        meter.sample()
    return meter.stop()


def test_the_energy_counter_is_the_figure_and_integrated_power_its_cross_check() -> None:
    fake = FakeNvml([1_000_000.0, 1_450_000.0], power_mw=300_000.0, sm_mhz=[1980, 1755, 1980],
                    masks=[0x1, 0x4, 0x1])
    reading = _window(fake)
    assert reading.method == telemetry.NVML_ENERGY and reading.reason == ""
    assert reading.energy_j == pytest.approx(450.0)  # (1 450 000 - 1 000 000) mJ
    # four power samples at 300 W (start, 2 taken, stop) spanning 2 s of the fake clock
    assert reading.integrated_j == pytest.approx(300.0 * 2.0)
    m = Metrics()
    energy = telemetry.apply(reading, samples_in_window=900, metrics=m)
    assert m.joules_per_sample == pytest.approx(0.5)
    assert m.mean_power_w == pytest.approx(450.0 / reading.window_s)  # type: ignore[operator]
    assert m.sm_clock_min_mhz == 1755 and m.sm_clock_median_mhz == 1980
    assert m.gpu_util_pct == 90 and m.gpu_temp_max_c == 60
    # the idle reason is not throttling; the power cap in one of four samples is
    assert energy.throttled == "true" and energy.throttle_reasons == "sw_power_cap 25%"
    assert energy.energy_method == "nvml-energy"


def test_idle_alone_is_not_throttled() -> None:
    energy = telemetry.apply(_window(FakeNvml([0.0, 10.0], masks=[0x1])), 10, Metrics())
    assert (energy.throttled, energy.throttle_reasons) == ("false", "")


def test_a_counter_that_goes_backwards_falls_back_to_integrated_power() -> None:
    reading = _window(FakeNvml([5_000_000.0, 20.0], power_mw=200_000.0))
    assert reading.method == telemetry.NVML_POWER
    assert "went backwards" in reading.reason
    assert reading.energy_j == reading.integrated_j == pytest.approx(200.0 * 2.0)


def test_an_unsupported_counter_falls_back_and_unsupported_samples_stay_empty() -> None:
    reading = _window(FakeNvml([], unsupported=("energy", "clock", "util", "temp", "reasons")))
    assert reading.method == telemetry.NVML_POWER and "not supported" in reading.reason
    m = Metrics()
    energy = telemetry.apply(reading, 4, m)
    assert m.sm_clock_median_mhz is None and m.gpu_util_pct is None and m.gpu_temp_max_c is None
    assert energy.throttled == "false"  # sampled, and no reason was read as active


def test_nothing_readable_is_method_none_with_the_reason() -> None:
    reading = _window(FakeNvml([], unsupported=("energy", "power")))
    assert reading.method == telemetry.NONE and reading.energy_j is None
    assert "not supported, nor the power reading" in reading.reason
    m = Metrics()
    telemetry.apply(reading, 4, m)
    assert m.joules_per_sample is None and m.mean_power_w is None


def test_the_sampling_thread_samples_at_ten_hertz_or_more() -> None:
    assert nvml.INTERVAL_S <= 0.1
    fake = FakeNvml([0.0, 1.0])
    meter = nvml.NvmlMeter(fake, handle="h", interval_s=0.01)
    meter.start()
    import time

    time.sleep(0.2)
    reading = meter.stop()
    assert reading.samples >= 5 and reading.method == telemetry.NVML_ENERGY


def test_no_pynvml_or_no_driver_is_a_reason() -> None:
    class Broken:
        def nvmlInit(self) -> None:
            raise Unsupported("NVML Shared Library Not Found")

        def nvmlShutdown(self) -> None:
            return None

    meter = nvml.open_meter(torch=None, nvml=Broken())
    assert isinstance(meter, telemetry.NoMeter) and not meter.measures_energy
    assert "NVML could not be read: Unsupported" in meter.stop().reason


def _zone(folder: Path, name: str, energy_uj: int, wrap_uj: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "name").write_text(f"{name}\n")
    (folder / "energy_uj").write_text(f"{energy_uj}\n")
    (folder / "max_energy_range_uj").write_text(f"{wrap_uj}\n")
    return folder


def test_rapl_sums_package_and_dram_and_undoes_a_wrap(tmp_path: Path) -> None:
    pkg = _zone(tmp_path / "intel-rapl:0", "package-0", 999_000_000, 1_000_000_000)
    dram = _zone(pkg / "intel-rapl:0:2", "dram", 5_000_000, 60_000_000)
    _zone(pkg / "intel-rapl:0:0", "core", 1, 10)  # a part of the package: not added again
    _zone(tmp_path / "intel-rapl:1", "psys", 1, 10)  # the platform: not the CPU's
    found = rapl.domains(tmp_path)
    assert [d.name for d in found] == ["package-0", "dram"]
    meter = rapl.RaplMeter(found, clock=Clock(2.0))
    meter.start()
    (pkg / "energy_uj").write_text("3000000\n")  # wrapped: 1 000 000 to the wrap, then 3 J
    (dram / "energy_uj").write_text("7000000\n")
    reading = meter.stop()
    assert reading.method == telemetry.RAPL and reading.window_s == pytest.approx(2.0)
    assert reading.energy_j == pytest.approx(1.0 + 3.0 + 2.0)
    assert "package-0, dram" in reading.reason
    m = Metrics()
    telemetry.apply(reading, 12, m)
    assert m.mean_power_w == pytest.approx(3.0) and m.joules_per_sample == pytest.approx(0.5)


def test_unreadable_or_missing_rapl_is_none_with_its_reason(tmp_path: Path) -> None:
    assert rapl.open_meter(tmp_path / "absent").stop().reason == rapl.NO_COUNTERS
    pkg = _zone(tmp_path / "intel-rapl:0", "package-0", 1, 10)
    (pkg / "energy_uj").write_text("not a number\n")  # as unreadable as a root-only file
    meter = rapl.open_meter(tmp_path)
    assert isinstance(meter, telemetry.NoMeter)
    assert meter.stop().method == telemetry.NONE


def test_the_window_is_extended_only_where_energy_is_measured() -> None:
    short = Settings(min_time_s=0.5, max_time_s=0.8)
    same, note = energy_settings(short, telemetry.NoMeter("x"))
    assert same == short and note == ""
    longer, note = energy_settings(short, rapl.RaplMeter([]))
    assert longer.min_time_s == longer.max_time_s == telemetry.MIN_WINDOW_S
    assert "extended from 0.5 s to at least 1 s" in note
    # the time bounds the window, not the count: 300 iterations of an H200's 1.6 ms matmul
    # ended it at 0.5 s
    assert longer.max_iters == LASTING_MAX_ITERS > short.max_iters
    assert energy_settings(Settings(min_time_s=2.0), rapl.RaplMeter([]))[0] == \
        Settings(min_time_s=2.0)


def test_a_real_cpu_replicate_reads_rapl_over_its_timed_window_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real (tiny) CPU replicate with a fake powercap tree whose counter a background
    writer advances: the meter starts after the cold pass and stops with the steady state, the
    window is extended to 1 s and the row's notes say so, and the figures follow from it.

    The writer is a process of its own, not a thread: a thread waits for the GIL behind the
    replicate's loop, and on a busy machine its counter fell half a second behind."""
    import subprocess
    import sys
    import time

    from bench.run.child import worker
    from bench.run.plan.matrix import Cell
    from bench.run.protocol import new_task

    pkg = _zone(tmp_path / "powercap" / "intel-rapl:0", "package-0", 0, 10**12)
    # 10 W: 1 J every 0.1 s, written whole as sysfs shows a counter
    tick = ("import os, sys, time\n"
            "pkg, start = sys.argv[1], time.perf_counter()\n"
            "while True:\n"
            "    with open(pkg + '/energy_uj.tmp', 'w') as f:\n"
            "        f.write(f'{int((time.perf_counter() - start) * 1e7)}\\n')\n"
            "    os.replace(pkg + '/energy_uj.tmp', pkg + '/energy_uj')\n"
            "    time.sleep(0.01)\n")
    monkeypatch.setattr(worker, "meter_for", lambda torch, device: rapl.open_meter(
        tmp_path / "powercap"))
    cell = Cell(kind="ceiling", model="copy", resolution=32)  # MiB: a few ms an iteration
    writer = subprocess.Popen([sys.executable, "-c", tick, str(pkg)])
    try:
        while (pkg / "energy_uj").read_text().strip() == "0":  # the writer has begun
            assert writer.poll() is None, "the counter's writer ended"
            time.sleep(0.01)
        record = worker.run_task(new_task("measure", cell, Settings(  # 20 iterations: 0.1 s
            min_iters=3, min_time_s=0.2, max_time_s=0.3, max_iters=20, warmup_iters=0), 0,
            tmp_path))
    finally:
        writer.kill()
        writer.wait()
    m = record.metrics
    assert record.status == "ok", record.reason
    assert record.energy is not None and record.energy.energy_method == "rapl"
    assert any("extended from 0.2 s to at least 1 s" in n for n in record.notes)
    assert m.energy_window_s is not None and m.energy_window_s >= 1.0
    assert m.mean_power_w == pytest.approx(10.0, rel=0.3)  # the writer's 10 W, give or take
    assert m.joules_per_sample is None  # a ceiling processes no samples
    assert m.steady_p99_s is not None and m.steady_p99_s >= m.steady_median_s  # type: ignore[operator]
