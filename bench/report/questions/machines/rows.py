"""The rows a machine page lists, typed: its summary, its cells, failures, checks, ceilings
and sittings, and its env.json as the key–value pairs the page shows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class MachineSummary:
    """A fingerprint's row of the analysis' machine summary: what its page counts."""

    page: str
    n_cells: int
    n_rows: int
    n_ok: int
    n_failed: int
    n_replaced: int = 0


@dataclass(frozen=True, kw_only=True)
class MachineCell:
    """One cell of the table of every cell (a model's, a ceiling's or an input pipeline's),
    with its drift and throttling for the tables of those."""

    kind: str
    anchor: str
    cell_name: str
    cell_id: str = ""
    status_summary: str | None = None
    n_ok: int = 0
    n_total: int = 0
    too_few_ok: bool | None = None
    n_drift: int = 0
    drift_max: float | None = None
    n_throttled: int = 0
    throttle_reasons: str | None = None
    sm_clock_min_mhz: float | None = None
    n_short_window: int = 0
    steady_median_s: float | None = None
    iqr_s: float | None = None
    samples_per_s: float | None = None
    throughput_basis: str | None = None
    achieved_tflops: float | None = None
    achieved_gbps: float | None = None
    pct_of_peak: float | None = None
    cold_pass_s: float | None = None
    cold_pass_min_s: float | None = None
    cold_pass_max_s: float | None = None
    whole_peak_mem_allocated_bytes: float | None = None
    workspace_mem_allocated_bytes: float | None = None
    peak_rss_bytes: float | None = None
    latency_p99_s: float | None = None
    latency_steps_min: float | None = None
    joules_per_sample: float | None = None
    mean_power_w: float | None = None
    energy_method: str | None = None


@dataclass(frozen=True, kw_only=True)
class CellSpread:
    """One cell of a hardware model measured by two or more physical machines: the fastest
    and the slowest machine's median step time, their ratio, and over how many machines."""

    cell_id: str
    n_machines: int
    low_s: float
    high_s: float
    ratio: float


@dataclass(frozen=True, kw_only=True)
class FailedReplicate:
    """One replicate that did not end ok, and the row of the file it came from."""

    fingerprint_id: str
    kind: str
    cell_id: str
    cell_name: str
    replicate: int | None = None
    status: str
    reason: str | None = None
    run_id: str
    source: str
    line: int

    @property
    def target(self) -> str:
        """The anchor its row links to: its re-run check's, or its cell's."""
        what = "repro" if self.kind == "repro" else "cell"
        return f"{what}-{self.fingerprint_id[:8]}-{self.cell_id}"


@dataclass(frozen=True, kw_only=True)
class ReproCheck:
    """One re-run check (two fresh processes compared), and whether its timed cell is listed
    on the same page."""

    anchor: str
    cell_name: str
    cell_anchor: str
    n_ok_checks: int = 0
    bitwise_equal: bool | None = None
    max_abs_diff: float | None = None
    status_summary: str = ""
    timed: bool = False


@dataclass(frozen=True, kw_only=True)
class MeasuredCeiling:
    """One measured ceiling: an op's sustained rate, its interval and its best window."""

    op: str
    device: str
    unit: str
    anchor: str
    cell_id: str = ""
    achieved: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    burst: float | None = None
    status_summary: str = ""


@dataclass(frozen=True, kw_only=True)
class JudgedSitting:
    """One judged sitting of one part (host CPU or GPU): its pace against its run's others."""

    run_id: str
    sitting: int
    part: str
    pace: float | None = None
    cells: int = 0
    limit: float | None = None
    agreement: str


@dataclass(frozen=True, kw_only=True)
class LeftOutCell:
    """One sitting's replicates of a cell, left out of that cell's verdicts."""

    cell_name: str
    anchor: str
    sitting: int
    ratio: float | None = None
    reference: int
    limit: float | None = None


#: A flattened env.json: (dotted key, text) pairs, keys sorted.
Entries = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class EnvListing:
    """What a fingerprint's env.json says, as the page lists it: every key but the plan (a
    resume's list of every cell id) and the flag defaults, which it lists apart."""

    settings: Entries = ()  # empty: no env.json
    flags: Entries = ()


def flatten(value: object, prefix: str = "") -> list[tuple[str, str]]:
    """A nested env.json as (dotted key, text) pairs, keys sorted."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            out += flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if not value:
            out.append((prefix, "(none)"))
        for i, item in enumerate(value):
            out += flatten(item, f"{prefix}[{i}]")
    else:
        text = (
            "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        )
        out.append((prefix, text))
    return out


def environment(env: Mapping[str, object] | None) -> EnvListing:
    """The page's lists of one env.json (``None``: there was none)."""
    flags = env.get("flag_defaults", {}) if isinstance(env, dict) else {}
    return EnvListing(
        tuple(flatten({k: v for k, v in (env or {}).items()
                       if k not in ("flag_defaults", "plan")})),
        tuple(flatten(flags)) if isinstance(flags, dict) else ())
