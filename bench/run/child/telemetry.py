"""What the device drew and how fast it ran during the timed steady window.

A purchase is weighed in joules per sample as much as in samples per second, and a steady
state run at reduced clocks must say so. A meter is started when the warm-up ends and stopped
when the last steady iteration is synchronised, so the figure covers the timed window only.

Three meters, one interface: ``nvml.NvmlMeter`` (a CUDA device: the board's energy counter,
and a sampling thread for power, clocks, utilisation, temperature and throttle reasons),
``rapl.RaplMeter`` (the CPU: the package and DRAM energy counters of ``/sys/class/powercap``)
and ``NoMeter``, which measures nothing and says why. Never an estimate from a nameplate:
where nothing is readable the row's energy is empty with its reason.

Standard library only; nvidia-ml-py (``pynvml``) is imported where a CUDA cell asks for it,
and its absence is a reason, not a failure.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bench.run.protocol import Energy
from bench.schema import ENERGY_MIN_WINDOW_S

#: The energy methods, best first (``bench.schema.ENERGY_METHODS``): NVML's energy counter,
#: NVML's power samples integrated over the window, RAPL's counters, or nothing.
NVML_ENERGY, NVML_POWER, RAPL, NONE = "nvml-energy", "nvml-power", "rapl", "none"
#: The shortest steady window an energy figure is taken from: NVML's counter and power
#: reading are updated every few tens of milliseconds (RAPL's every millisecond or so), so a
#: window of a few iterations would be a few updates. The stopping rule runs at least this long
#: where a meter measures energy.
MIN_WINDOW_S = ENERGY_MIN_WINDOW_S


@dataclass
class Reading:
    """A meter's account of one window; the ``Metrics`` and ``Energy`` of a row come from it."""

    method: str = NONE
    reason: str = ""  # why there is no figure, or what is doubtful about it
    window_s: float | None = None
    energy_j: float | None = None  # the figure: the counter where it worked
    integrated_j: float | None = None  # power samples integrated (NVML): fallback, cross-check
    sm_clocks_mhz: list[float] = field(default_factory=list)
    utilisation_pct: list[float] = field(default_factory=list)
    temperatures_c: list[float] = field(default_factory=list)
    throttle: dict[str, int] = field(default_factory=dict)  # reason -> samples it was active in
    samples: int = 0  # telemetry samples taken (NVML)


class Meter(Protocol):
    """Started when the timed window begins, stopped when it ends."""

    measures_energy: bool

    def start(self) -> None: ...

    def stop(self) -> Reading: ...


class NoMeter:
    """No readable source: the window is timed, and the reading says why it has no energy."""

    measures_energy = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def start(self) -> None:
        return None

    def stop(self) -> Reading:
        return Reading(NONE, self.reason)


def trapezoid(points: Sequence[tuple[float, float]]) -> float | None:
    """The integral of ``(t, value)`` points over their span; None with fewer than two."""
    if len(points) < 2:
        return None
    return sum((t1 - t0) * (v0 + v1) / 2 for (t0, v0), (t1, v1) in zip(points, points[1:]))


def _median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None


def throttle_text(throttle: dict[str, int], samples: int) -> str:
    """``"sw_power_cap 40%; hw_slowdown 3%"``: each active reason and the share of the
    samples it was active in, most frequent first."""
    kept = sorted(((n, name) for name, n in throttle.items() if n > 0), key=lambda e: -e[0])
    return "; ".join(f"{name} {100 * n / max(samples, 1):.0f}%" for n, name in kept)


def apply(reading: Reading, samples_in_window: float, metrics: Any) -> Energy:
    """Fill the row's energy figures in ``metrics`` and return its ``Energy`` columns."""
    m = metrics
    m.energy_window_s = reading.window_s
    m.energy_j = reading.energy_j
    m.energy_integrated_j = reading.integrated_j
    if reading.energy_j is not None and reading.window_s:
        m.mean_power_w = reading.energy_j / reading.window_s
        m.joules_per_sample = reading.energy_j / samples_in_window if samples_in_window else None
    m.sm_clock_median_mhz = _median(reading.sm_clocks_mhz)
    m.sm_clock_min_mhz = min(reading.sm_clocks_mhz) if reading.sm_clocks_mhz else None
    m.gpu_util_pct = (statistics.fmean(reading.utilisation_pct)
                      if reading.utilisation_pct else None)
    m.gpu_temp_max_c = max(reading.temperatures_c) if reading.temperatures_c else None
    sampled = reading.samples > 0
    throttled = any(n > 0 for n in reading.throttle.values())
    return Energy(energy_method=reading.method, energy_reason=reading.reason,
                  throttled=("true" if throttled else "false") if sampled else "",
                  throttle_reasons=throttle_text(reading.throttle, reading.samples))
