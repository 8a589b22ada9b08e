"""Numbers as a reader sees them: units, significant digits, and a dash for "no value".

Every number on a page goes through one of these, so a NaN can never leak out as ``nan`` and
the same quantity is written the same way everywhere. They return plain text; the page layer
escapes it like any other string.
"""

from __future__ import annotations

import math
from typing import Any

MISSING = "—"


def present(value: Any) -> bool:
    """True for a finite number (NaN, None and pandas' NA are missing)."""
    if value is None:
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def num(value: Any, digits: int = 3) -> str:
    """A plain number with ``digits`` significant digits and thousands separators."""
    if not present(value):
        return MISSING
    x = float(value)
    if x == 0:
        return "0"
    if abs(x) < 10 ** (digits - 1):
        x = rounded(x, digits)  # 99.96 → 100, printed "100", not "100.0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    places = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{x:,.{places}f}"


def rounded(x: float, digits: int = 3) -> float:
    """``x`` at ``digits`` significant digits: the value as it will be printed.

    A unit or a number of decimals chosen from the raw value can disagree with the digits
    printed: 0.0009996 s is 1.00 ms, not "1,000 µs", and 9.999× is "10.0×", not "10.00×". So
    every such choice is made on the rounded value.
    """
    return float(f"{x:.{digits}g}")


def _trim(text: str) -> str:
    """``3.00`` → ``3``, ``12.50`` → ``12.5``."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def saved(speedup: Any) -> float:
    """The share of time a speedup saves: 1.25× → 0.2 (negative when slower)."""
    if not present(speedup) or float(speedup) <= 0:
        return math.nan
    return 1 - 1 / float(speedup)


def integer(value: Any) -> str:
    return f"{int(value):,}" if present(value) else MISSING


def _ratio_digits(x: float) -> int:
    """Decimals for a ratio: two near 1, where δ = 3% must be readable; three significant
    figures above 10, so a 238× GPU speedup is not printed as 237.73×. Chosen on the value as
    rounded (see ``rounded``): 9.999 has two decimals only if it stays below 10 when printed."""
    for digits, limit in ((2, 10), (1, 100)):
        if abs(round(x, digits)) < limit:
            return digits
    return 0


def ratio(value: Any) -> str:
    """A speedup: ``1.23×``, ``42.8×``, ``238×``."""
    if not present(value):
        return MISSING
    x = float(value)
    return f"{x:.{_ratio_digits(x)}f}×"


def ci(low: Any, high: Any) -> str:
    """A ratio's confidence interval: ``1.18–1.29×``."""
    if not (present(low) and present(high)):
        return MISSING
    lo, hi = float(low), float(high)
    d = _ratio_digits(max(abs(lo), abs(hi)))
    return f"{lo:.{d}f}–{hi:.{d}f}×"


def pct(value: Any, *, signed: bool = False) -> str:
    """A fraction as a percentage: ``0.125`` → ``12.5%`` (``+12.5%`` when signed)."""
    if not present(value):
        return MISSING
    x = float(value) * 100
    text = _trim(num(abs(x), 3)) + "%"
    if signed:
        return ("+" if x > 0 else "−" if x < 0 else "±") + text
    return ("−" if x < 0 else "") + text


def change(speedup: Any) -> str:
    """A speedup as a time change a reader can picture: 1.25× → "20% less time"."""
    if not present(speedup) or float(speedup) <= 0:
        return MISSING
    saved = 1 - 1 / float(speedup)
    if abs(saved) < 0.0005:
        return "the same time"
    return f"{num(abs(saved) * 100, 2)}% {'less' if saved > 0 else 'more'} time"


def seconds(value: Any) -> str:
    """A duration with a unit that keeps 3 significant digits: ``41.2 ms``, ``2.13 s``."""
    if not present(value):
        return MISSING
    x = float(value)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(rounded(x)) >= scale or unit == "µs":
            return f"{num(x / scale)} {unit}"
    return MISSING  # pragma: no cover


def signed_seconds(value: Any) -> str:
    if not present(value):
        return MISSING
    x = float(value)
    return ("+" if x > 0 else "−" if x < 0 else "±") + seconds(abs(x))


def bytes_(value: Any, *, signed: bool = False) -> str:
    """Bytes in binary units: ``1.23 GiB``."""
    if not present(value):
        return MISSING
    x = float(value)
    sign = ("+" if x > 0 else "−" if x < 0 else "±") if signed else ("−" if x < 0 else "")
    x = abs(x)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if round(x) < 1024 or unit == "TiB":  # 1023.7 B prints "1.00 KiB", not "1,024 B"
            return f"{sign}{num(x)} {unit}"
        x /= 1024
    return MISSING  # pragma: no cover


def rate(value: Any, unit: str = "samples/s") -> str:
    return f"{num(value)} {unit}" if present(value) else MISSING


def tflops(value: Any) -> str:
    return f"{num(value)} TFLOP/s" if present(value) else MISSING


def iterations(value: Any) -> str:
    """A break-even count: whole iterations, rounded up."""
    if not present(value):
        return MISSING
    x = float(value)
    if x <= 1:
        return "1"
    return f"{math.ceil(x):,}"
