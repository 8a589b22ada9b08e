"""A CUDA device's energy, power, clocks and throttling over the timed window, from NVML.

The figure is the board's own energy counter (``nvmlDeviceGetTotalEnergyConsumption``,
millijoules since the driver loaded; Volta and newer) read when the window starts and when it
ends. A thread samples power, SM clock, utilisation, temperature and the clock-event
(throttle) reasons at ``INTERVAL_S`` meanwhile; the power samples integrated over the window
are the fallback where the counter is unsupported or went backwards (a driver reload resets
it), and a cross-check where it worked (both are kept). What it covers is the GPU board, not
the host CPU, memory or fans; NVML updates the counter and the power reading every few tens
of milliseconds, hence ``telemetry.MIN_WINDOW_S``.

Every NVML call is guarded: an unsupported one leaves its figure empty, never the row failed.

``TORCH_KNOBS_NO_SAMPLER=1`` in the environment of the runner (the children inherit it) runs
the meter without its sampling thread: the energy counter is still read at both ends of the
window, and power, clocks, utilisation, temperature and throttle reasons are sampled once at
each end only, so nothing but the workload runs during the timed window. Where the thread
costs a launch-bound cell time (it takes the GIL 20 times a second, and each NVML call goes to
the driver), ``tests/speed/sampler_cost.py`` measures how much; the row's notes say when it
was off.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from bench.run.child.telemetry import NONE, NVML_ENERGY, NVML_POWER, NoMeter, Reading, trapezoid

#: Ten samples a second or more: several per counter update of a one-second window.
INTERVAL_S = 0.05
#: Set (to anything but ``0``) for no sampling thread during the timed window (see the module).
NO_SAMPLER_ENV = "TORCH_KNOBS_NO_SAMPLER"
SAMPLER_OFF_NOTE = (f"telemetry sampler off ({NO_SAMPLER_ENV}): power, clocks, utilisation and "
                    "throttle reasons sampled at the window's ends only")


def sampler_off(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``NO_SAMPLER_ENV`` asks for no sampling thread."""
    return environ.get(NO_SAMPLER_ENV, "").strip() not in ("", "0")
#: NVML's clock-event reason bits (``nvmlClocksEventReason*``), named as the site names them.
#: The idle reason is left out: an idle GPU lowering its clocks is not a throttled workload.
IDLE_BIT = 0x1
REASON_BITS: dict[int, str] = {
    0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}


def _call(fn: Callable[[], Any]) -> Any:
    """An NVML call's value, or None where the call is unsupported or fails."""
    try:
        return fn()
    except Exception:  # pynvml.NVMLError and its kin: the figure stays empty
        return None


def reasons(mask: int) -> list[str]:
    """The names of the bits set in a clock-event mask, idle and unknown bits excepted."""
    return [name for bit, name in REASON_BITS.items() if mask & bit]


class NvmlMeter:
    """The counter at both ends of the window, and samples in between (see the module).

    ``clock`` and ``threaded`` are for the tests: a fake clock, and samples taken by calling
    ``sample`` instead of by the thread."""

    measures_energy = True

    def __init__(self, nvml: Any, handle: Any, interval_s: float = INTERVAL_S,
                 clock: Callable[[], float] = time.perf_counter, threaded: bool = True) -> None:
        self._nvml, self._handle, self._interval = nvml, handle, interval_s
        self._clock, self._threaded = clock, threaded
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._e0: float | None = None
        self.power: list[tuple[float, float]] = []
        self.reading = Reading(NVML_ENERGY)

    def _energy_mj(self) -> float | None:
        value = _call(lambda: self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))
        return float(value) if value is not None else None

    def _mask(self) -> int | None:
        nv = self._nvml
        fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None)
        return _call(lambda: fn(self._handle)) if fn is not None else None

    def sample(self) -> None:
        """One telemetry sample: power, SM clock, utilisation, temperature, reasons."""
        nv, h, r = self._nvml, self._handle, self.reading
        milliwatts = _call(lambda: nv.nvmlDeviceGetPowerUsage(h))
        if milliwatts is not None:
            self.power.append((self._clock(), milliwatts / 1000.0))
        sm = _call(lambda: nv.nvmlDeviceGetClockInfo(h, getattr(nv, "NVML_CLOCK_SM", 1)))
        if sm is not None:
            r.sm_clocks_mhz.append(float(sm))
        util = _call(lambda: nv.nvmlDeviceGetUtilizationRates(h).gpu)
        if util is not None:
            r.utilisation_pct.append(float(util))
        temp = _call(lambda: nv.nvmlDeviceGetTemperature(
            h, getattr(nv, "NVML_TEMPERATURE_GPU", 0)))
        if temp is not None:
            r.temperatures_c.append(float(temp))
        mask = self._mask()
        if mask is not None:
            for name in reasons(int(mask)):
                r.throttle[name] = r.throttle.get(name, 0) + 1
        r.samples += 1

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample()

    def start(self) -> None:
        self._e0 = self._energy_mj()
        self._t0 = self._clock()
        self.sample()
        if self._threaded:
            self._thread = threading.Thread(target=self._loop, name="nvml-telemetry",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> Reading:
        e1 = self._energy_mj()
        window = self._clock() - self._t0
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5 * self._interval + 1)
        self.sample()
        r = self.reading
        r.window_s = window
        r.integrated_j = trapezoid(self.power)
        if self._e0 is not None and e1 is not None and e1 >= self._e0:
            r.energy_j = (e1 - self._e0) / 1000.0
            return r
        why = ("the energy counter went backwards (reset)" if self._e0 is not None
               and e1 is not None else "the energy counter is not supported")
        if r.integrated_j is not None:
            r.method, r.energy_j = NVML_POWER, r.integrated_j
            r.reason = f"{why}; power samples integrated"
        else:
            r.method, r.reason = NONE, f"{why}, nor the power reading"
        return r


def _handle(nvml: Any, torch: Any) -> Any:
    """NVML's handle of the device torch runs on: by its UUID where torch gives one (NVML's
    indices ignore CUDA_VISIBLE_DEVICES), else by torch's index."""
    index = int(torch.cuda.current_device())
    uuid = _call(lambda: str(torch.cuda.get_device_properties(index).uuid))
    if uuid:
        found = _call(lambda: nvml.nvmlDeviceGetHandleByUUID(
            uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"))
        if found is not None:
            return found
    return nvml.nvmlDeviceGetHandleByIndex(index)


def open_meter(torch: Any, nvml: Any = None) -> NvmlMeter | NoMeter:
    """An ``NvmlMeter`` on torch's current device, or ``NoMeter`` saying why not."""
    if nvml is None:
        try:
            import pynvml  # nvidia-ml-py, optional
        except ImportError:
            return NoMeter("nvidia-ml-py (pynvml) is not installed")
        nvml = pynvml
    try:
        nvml.nvmlInit()
        handle = _handle(nvml, torch)
    except Exception as exc:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
        return NoMeter(f"NVML could not be read: {type(exc).__name__}: {exc}"[:200])
    return NvmlMeter(nvml, handle, threaded=not sampler_off())
