"""Numbers as a reader sees them: units, significant digits, and a dash for "no value".

Every number on a page goes through one of these, so a NaN can never leak out as ``nan`` and
the same quantity is written the same way everywhere. They return plain text; the page layer
escapes it like any other string.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    """A plain number with ``digits`` significant digits and thousands separators.

    The decimals follow the value as rounded, not the raw one: rounding can carry into the
    next power of ten (9.996 → ``10.00``), and then one decimal fewer keeps ``digits`` digits
    (``10.0``). The same holds for every unit and every ratio below: a choice made on the raw
    value can disagree with the digits printed (0.0009996 s is 1.00 ms, not "1,000 µs").
    """
    if not present(value):
        return MISSING
    x = float(value)
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    places = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    text = f"{x:,.{places}f}"
    figures = text.lstrip("-0.")  # the significant part (no thousands here: |x| < 100)
    if figures[0] == "1" and len(figures) - ("." in figures) > digits:  # 9.996 → "10.00"
        text = f"{x:,.{places - 1}f}"
    return text


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


def count(n: int, one: str, many: str = "") -> str:
    """``1 run``, ``3 runs``: a count with its noun agreeing (``many`` where adding "s" to
    ``one`` is wrong), never the hedged ``run(s)``."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def and_list(values: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: items in a sentence."""
    items = list(values)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ratio_digits(x: float) -> int:
    """Decimals for a ratio: two near 1, where δ = 3% must be readable; three significant
    figures above 10, so a 238× GPU speedup is not printed as 237.73×. Chosen on the value as
    rounded (see ``num``): 9.999 has two decimals only if it stays below 10 when printed."""
    ax = abs(x)
    if 0 < ax < 0.0995:  # two significant figures, so 0.0053× does not print as 0.01×
        return 1 - math.floor(math.log10(ax))
    # only a value within one unit of the last decimal below a limit can round up to it
    for digits, limit, near in ((2, 10, 9.99), (1, 100, 99.9)):
        if ax < near or (ax < limit and round(ax, digits) < limit):
            return digits
    return 0


def ratio(value: Any, low: Any = None, high: Any = None) -> str:
    """A speedup: ``1.23×``, ``42.8×``, ``238×``. Given the interval printed beside it
    (``low``, ``high``), at least as many decimals as ``ci`` gives that interval, so that
    ``1.1405× (95% CI 1.1398–1.1412×)`` never reads as a point outside its own interval."""
    if not present(value):
        return MISSING
    x = float(value)
    d = _ratio_digits(x)
    if present(low) and present(high) and float(low) != float(high):
        d = max(d, _ci_decimals(float(low), float(high))[1])
    return f"{x:.{d}f}×"


#: The most decimals an interval of ratios gets to show its two ends apart (two more than its
#: own, for a ratio under 0.1 that has three or more to begin with).
CI_MAX_DECIMALS = 4
#: What ``ci`` prints where the two ends are equal: no spread between replicates to speak of.
IDENTICAL = "replicates identical"


def _ci_decimals(lo: float, hi: float) -> tuple[int, int]:
    """Decimals of an interval's low and high ends (see ``ci``): more, up to
    CI_MAX_DECIMALS, while the two ends would read the same."""
    d = _ratio_digits(max(abs(lo), abs(hi)))
    d_lo = d if abs(lo) >= 10 ** (1 - d) else _ratio_digits(lo)
    most = max(CI_MAX_DECIMALS, d + 2)
    while f"{lo:.{d_lo}f}" == f"{hi:.{d}f}" and d < most:
        d += 1
        d_lo = max(d_lo, d)
    return d_lo, d


def ci(low: Any, high: Any) -> str:
    """A ratio's confidence interval: ``1.18–1.29×``, ``8.6–12.3×``, ``0.51–243×``.

    Both ends take the larger end's decimals, unless that leaves the smaller end fewer than two
    significant figures: then it takes its own, as ``ratio`` prints it. Otherwise 0.508 next to
    243 would print as "1", and the interval could exclude its own estimate.

    Two ends that would read the same get more decimals, up to CI_MAX_DECIMALS (or two more
    than their own below 0.1×; ``1.1398–1.1412×``), never a fake ``1.14–1.14×``. Equal ends
    (identical replicates) print IDENTICAL; ends apart by less than the last decimal print as
    a bound on the width (``within 0.0001× of 1.1400×``).
    """
    if not (present(low) and present(high)):
        return MISSING
    lo, hi = float(low), float(high)
    if lo == hi:
        return IDENTICAL
    d_lo, d = _ci_decimals(lo, hi)
    if f"{lo:.{d_lo}f}" == f"{hi:.{d}f}":
        return f"within {10.0 ** -d:.{d}f}× of {(lo + hi) / 2:.{d}f}×"
    return f"{lo:.{d_lo}f}–{hi:.{d}f}×"


def estimate(value: Any, low: Any, high: Any) -> str:
    """A speedup with its interval in brackets, the point at the interval's decimals:
    ``1.23× (1.18–1.29×)``, ``1.1402× (1.1401–1.1403×)``, ``1.04× (replicates identical)``."""
    return f"{ratio(value, low, high)} ({ci(low, high)})"


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


_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))


def seconds(value: Any) -> str:
    """A duration with a unit that keeps 3 significant digits: ``41.2 ms``, ``2.13 s``."""
    if not present(value):
        return MISSING
    x = float(value)
    ax = abs(x)
    i = 0 if ax >= 1.0 else 1 if ax >= 1e-3 else 2
    text = num(x / _TIME_UNITS[i][1])
    if i and (text == "1,000" or text == "-1,000"):  # it rounded up into the next unit: 1.00 ms
        i -= 1
        text = num(x / _TIME_UNITS[i][1])
    return f"{text} {_TIME_UNITS[i][0]}"


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


def cudnn_version(value: Any) -> str:
    """cuDNN's version as torch reports it, in dots: ``91900`` → ``9.19.0``, ``8902`` →
    ``8.9.2`` (empty stays empty; anything else is shown as it is)."""
    text = str(value or "")
    if not text.isdigit():
        return text
    n = int(text)
    if n >= 10000:  # cuDNN 9 and later: major·10000 + minor·100 + patch
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def iterations(value: Any) -> str:
    """A break-even count: whole iterations, rounded up."""
    if not present(value):
        return MISSING
    x = float(value)
    if x <= 1:
        return "1"
    return f"{math.ceil(x):,}"


def safe_title(text: object, limit: int = 60) -> str:
    """Plain text with no markup characters at all, for headings and navigation titles."""
    kept = "".join(
        ch if ch.isascii() and (ch.isalnum() or ch in " ._-()") else " " for ch in str(text)
    )
    words = " ".join(kept.split())
    return words[:limit].strip() or "untitled"
