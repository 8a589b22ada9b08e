"""User-supplied machine prices, for "images/s per dollar" on the Compare-machines page.

Prices are not measurements, so they never live in ``reports/``: the reader brings a small TOML
file and hands it to the report build. The format::

    # prices.toml
    electricity_usd_per_kwh = 0.12    # optional, before the tables: what a kWh costs (a
                                      # machine's own electricity_usd_per_kwh wins over it)
    [machines."nvidia-h200"]          # a machine slug: the folder name under reports/
    price_usd = 35000                 # purchase price in US dollars
    note = "list price, Nov 2026"     # optional, shown next to the figure

    [machines."cpu-amd-epyc-2c"]
    usd_per_hour = 0.10               # or a rental price in US dollars per hour

    [machines."nvidia-h200-19963df1"] # a machine, a hyphen and a fingerprint's first 8
    price_usd = 30000                 # characters (a section of its machine page) prices that
                                      # fingerprint only; it wins over the plain machine slug

Each machine needs ``price_usd`` or ``usd_per_hour`` (or both): positive numbers. Unknown keys are
refused, so a typo cannot silently drop a price. Figures:

- ``images_per_s_per_usd`` = steady images/s ÷ ``price_usd`` (throughput bought per dollar);
- ``images_per_usd`` = steady images/s × 3600 ÷ ``usd_per_hour`` (images processed per dollar
  of rental);
- cost per million samples, in two parts shown apart: ``usd_per_million_hardware`` = 10⁶ ÷
  (images/s × 3600) × ``usd_per_hour``, and ``usd_per_million_energy`` = 10⁶ × measured joules
  per sample ÷ 3.6·10⁶ J/kWh × ``electricity_usd_per_kwh`` (NaN where energy was not measured:
  never estimated); ``usd_per_million`` is their sum where both are known.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

_ENTRY_KEYS = ("price_usd", "usd_per_hour", "electricity_usd_per_kwh", "note")
_TOP_KEYS = ("machines", "electricity_usd_per_kwh")
#: Joules in a kilowatt-hour.
J_PER_KWH = 3.6e6


class PriceError(ValueError):
    """A prices file that cannot be used; the message is one line naming file and key."""


@dataclass(frozen=True)
class Price:
    """What one machine (or one fingerprint of it, by page slug) costs."""

    key: str  # the machine slug or page slug it was given under
    price_usd: float | None
    usd_per_hour: float | None
    note: str = ""
    usd_per_kwh: float | None = None  # electricity, for the energy part of a sample's cost


def load_prices(path: Path) -> dict[str, Price]:
    """Read and validate a prices TOML file (see the module docstring)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceError(f"{path}: cannot read prices file: {exc}") from None
    return parse_prices(text, str(path))


def parse_prices(text: str, source: str = "prices.toml") -> dict[str, Price]:
    """Parse prices from TOML text; ``source`` names the file in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = " ".join(str(exc).split())
        line = re.search(r"line (\d+)", message)
        where = f"{source}:{line.group(1)}" if line else source
        raise PriceError(f"{where}: invalid TOML: {message}") from None
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise PriceError(
            f"{source}: unknown top-level key(s) {', '.join(unknown)}; "
            'expected [machines."<slug>"] tables and electricity_usd_per_kwh'
        )
    kwh = _positive(source, "electricity_usd_per_kwh", data.get("electricity_usd_per_kwh"))
    machines = data.get("machines", {})
    if not isinstance(machines, dict):
        raise PriceError(f'{source}: machines must be a table of [machines."<slug>"] entries')
    return {str(key): _entry(source, str(key), value, kwh) for key, value in machines.items()}


def _entry(source: str, key: str, value: Any, kwh: float | None = None) -> Price:
    where = f"{source}: machines.{key!r}"
    if not isinstance(value, dict):
        raise PriceError(f"{where}: must be a table with price_usd or usd_per_hour")
    unknown = sorted(set(value) - set(_ENTRY_KEYS))
    if unknown:
        raise PriceError(
            f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(_ENTRY_KEYS)}"
        )
    if "price_usd" not in value and "usd_per_hour" not in value:
        raise PriceError(f"{where}: needs price_usd or usd_per_hour")
    note = value.get("note", "")
    if not isinstance(note, str):
        raise PriceError(f"{where}.note: must be a string")
    return Price(
        key=key,
        price_usd=_positive(where, "price_usd", value.get("price_usd")),
        usd_per_hour=_positive(where, "usd_per_hour", value.get("usd_per_hour")),
        note=note,
        usd_per_kwh=_positive(where, "electricity_usd_per_kwh",
                              value.get("electricity_usd_per_kwh")) or kwh,
    )


def _positive(where: str, name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PriceError(f"{where}.{name}: must be a positive number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise PriceError(f"{where}.{name}: must be a positive number, got {value!r}")
    return number


def match(prices: Mapping[str, Price], machine: str, page: str) -> Price | None:
    """The price of one fingerprint: by page slug first, then by machine slug."""
    return prices.get(page) or prices.get(machine)


def unknown_keys(
    prices: Mapping[str, Price], machines: Iterable[str], pages: Iterable[str]
) -> list[str]:
    """Price keys that name no loaded machine or page (likely typos, worth a warning)."""
    known = set(machines) | set(pages)
    return sorted(k for k in prices if k not in known)


def per_dollar(throughput: pd.DataFrame, prices: Mapping[str, Price]) -> pd.DataFrame:
    """Priced rows of ``throughput`` (e.g. ``best_throughput``'s) with per-dollar figures.

    Needs columns machine, page, samples_per_s (and joules_per_sample for the energy part).
    Adds price_key, price_usd, usd_per_hour, price_note, images_per_s_per_usd,
    images_per_usd, usd_per_kwh and the cost per million samples in its parts (NaN where that
    price, or the measured energy, is not given).
    Rows of unpriced machines are left out.
    """
    found = [
        match(prices, str(m), str(p)) for m, p in zip(throughput["machine"], throughput["page"])
    ]
    keep = [f is not None for f in found]
    out = throughput.loc[keep].copy()
    priced = [f for f in found if f is not None]
    out["price_key"] = [p.key for p in priced]
    out["price_usd"] = pd.Series([p.price_usd for p in priced], index=out.index, dtype="float64")
    out["usd_per_hour"] = pd.Series(
        [p.usd_per_hour for p in priced], index=out.index, dtype="float64"
    )
    out["price_note"] = [p.note for p in priced]
    rate = out["samples_per_s"].astype(float)
    out["images_per_s_per_usd"] = rate / out["price_usd"]
    out["images_per_usd"] = rate * 3600.0 / out["usd_per_hour"]
    out["usd_per_kwh"] = pd.Series([p.usd_per_kwh for p in priced], index=out.index,
                                   dtype="float64")
    out["usd_per_million_hardware"] = 1e6 / (rate * 3600.0) * out["usd_per_hour"]
    joules = (out["joules_per_sample"].astype(float) if "joules_per_sample" in out
              else pd.Series(float("nan"), index=out.index))
    out["usd_per_million_energy"] = 1e6 * joules / J_PER_KWH * out["usd_per_kwh"]
    out["usd_per_million"] = out["usd_per_million_hardware"] + out["usd_per_million_energy"]
    return out.reset_index(drop=True)
