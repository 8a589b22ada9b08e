"""The CPU's energy over the timed window, from RAPL's counters in ``/sys/class/powercap``.

Each package domain (``intel-rapl:N``, named ``package-N``) and its DRAM subdomain (named
``dram``) keeps ``energy_uj``, microjoules that wrap at ``max_energy_range_uj``; one wrap per
window is undone (a package counter wraps every few minutes at worst, far longer than a
window). The figure covers the CPU packages and their memory, not the rest of the host; the
core and uncore subdomains are parts of the package and are not added again, nor is ``psys``.
Many kernels let only root read ``energy_uj``, and a VM usually has no powercap at all: then
there is no figure, and the reason says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.run.child.telemetry import RAPL, NoMeter, Reading

POWERCAP = Path("/sys/class/powercap")
NO_COUNTERS = "no RAPL counters readable"


@dataclass(frozen=True)
class Domain:
    """One counter: its name (``package-0``, ``dram``), its file, and where it wraps."""

    name: str
    energy: Path
    wrap_uj: int

    def read_uj(self) -> int:
        return int(self.energy.read_text(encoding="ascii").strip())


def _domain(folder: Path) -> Domain | None:
    """The folder's counter if it is a package or DRAM domain and readable, else None."""
    try:
        name = (folder / "name").read_text(encoding="ascii").strip()
        if not (name.startswith("package") or name == "dram"):
            return None
        wrap = int((folder / "max_energy_range_uj").read_text(encoding="ascii").strip())
        found = Domain(name, folder / "energy_uj", wrap)
        found.read_uj()
    except (OSError, ValueError):
        return None
    return found


def domains(root: Path = POWERCAP) -> list[Domain]:
    """The readable package and DRAM counters under ``root`` (zone folders and, one level
    down, their subzones), in name order."""
    if not root.is_dir():
        return []
    zones = sorted(p for p in root.glob("intel-rapl:*") if p.is_dir())
    zones += sorted(p for z in zones for p in z.glob("intel-rapl:*") if p.is_dir())
    seen: set[Path] = set()
    out = []
    for zone in zones:
        real = zone.resolve()
        if real in seen:
            continue
        seen.add(real)
        d = _domain(zone)
        if d is not None:
            out.append(d)
    return out


def delta_uj(start: int, end: int, wrap: int) -> int:
    """``end - start`` on a counter that wraps at ``wrap`` (one wrap at most)."""
    return end - start if end >= start else end + wrap - start


class RaplMeter:
    """Every readable domain read at both ends of the window; the figure is their sum."""

    measures_energy = True

    def __init__(self, found: list[Domain], clock: Callable[[], float] = time.perf_counter
                 ) -> None:
        self._domains, self._clock = found, clock
        self._start: list[int] = []
        self._t0 = 0.0

    def start(self) -> None:
        self._start = [d.read_uj() for d in self._domains]
        self._t0 = self._clock()

    def stop(self) -> Reading:
        try:
            end = [d.read_uj() for d in self._domains]
        except (OSError, ValueError) as exc:
            return Reading(reason=f"{NO_COUNTERS}: {type(exc).__name__} at the window's end")
        window = self._clock() - self._t0
        uj = sum(delta_uj(a, b, d.wrap_uj) for a, b, d in zip(self._start, end, self._domains))
        names = ", ".join(d.name for d in self._domains)
        return Reading(RAPL, f"RAPL domains {names}", window_s=window, energy_j=uj / 1e6)


def open_meter(root: Path = POWERCAP) -> RaplMeter | NoMeter:
    """A ``RaplMeter`` over the readable domains, or ``NoMeter`` with ``NO_COUNTERS``."""
    found = domains(root)
    if not found:
        return NoMeter(NO_COUNTERS)
    return RaplMeter(found)
