"""What the CPU is, from ``/proc/cpuinfo``: its physical cores and whether it has native bf16.

The CPU at its best runs one thread per physical core (a second hardware thread of a core
shares its vector units, which a convolution keeps busy) and bf16 autocast only where the CPU
computes bf16 natively: Intel's AMX (``amx_bf16``) or AVX512-BF16 (``avx512_bf16``), or an Arm
core's ``bf16`` feature. Elsewhere torch emulates bf16 in fp32, which measures an emulation, not
the CPU at its best, so such a cell is skipped with ``NO_NATIVE_BF16``.

Standard library only: the profile loader (parent) and the child both read it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
NO_NATIVE_BF16 = "no native bf16"
#: The flags that mean native bf16 arithmetic (x86's ``flags``, Arm's ``Features``).
BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16", "bf16"})


def _text(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace")
    return ""


def bf16_flags(text: str) -> set[str]:
    """The native-bf16 flags any processor of a ``/proc/cpuinfo`` text lists."""
    found: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            found |= BF16_FLAGS.intersection(value.split())
    return found


def native_bf16(path: Path = CPUINFO) -> bool:
    """Whether this CPU computes bf16 natively (False where ``/proc/cpuinfo`` is unreadable:
    then nothing says it does)."""
    return bool(bf16_flags(_text(path)))


def physical_cores(path: Path = CPUINFO) -> int | None:
    """Physical cores this process may run on: distinct (physical id, core id) pairs among
    the processors of its affinity; None where ``/proc/cpuinfo`` does not say."""
    try:
        allowed = os.sched_getaffinity(0)
    except AttributeError:  # pragma: no cover - macOS/Windows
        return None
    cores: set[tuple[str, str]] = set()
    proc = phys = ""
    for line in _text(path).splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            proc, phys = value, ""
        elif key == "physical id":
            phys = value
        elif key == "core id" and proc.isdigit() and int(proc) in allowed:
            cores.add((phys, value))
    return len(cores) or None
