"""From the default to the fastest measured: what the switches together buy one workload.

A reader's job runs in PyTorch's defaults (fp32, NCHW, cudnn.benchmark off, eager); each topic
page answers one switch. What they act on is the combination: on one machine and workload,
the fastest configuration measured against the default, with its interval, and how much each
switch that differs contributes. The contributions are the factors of a path of measured
configurations from the default to the fastest, one switch at a time (a switch's share is its
factor's part of the whole on a log scale, so the shares add up to 100%); where no such path
was measured, the total stands alone.

The fastest is chosen among configurations with enough ok replicates for an interval and none
that ``bench check`` flags (a drifting or throttled replicate), and its interval is widened for
that choice (at the confidence level split over every configuration it was chosen from, so it
holds for all of them at once). A faster configuration with too few replicates, or a flagged
one, is named beside it with the reason, never counted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from bench import schema
from bench.intervals import MIN_OK_REPLICATES
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.pairs import verdict as pair_verdict
from bench.report.judge.rows import Scalar, plain, records
from bench.report.vocabulary import Noise, Verdict

#: The switches a workload's configurations differ in, in the order a path takes them
#: (precision and layout first: the topic pages' order), and PyTorch's default of each.
SWITCHES: dict[str, str] = {"precision": "fp32", "memory_format": "nchw",
                            "cudnn_benchmark": "off", "compile": "off"}
#: Axes that are not a speed switch: held at the default (a warm kernel cache changes only
#: the first pass; cudnn.deterministic is a correctness switch), or not compared here.
_HELD = {"cudnn_deterministic": ("off", "n/a", ""), "kernel_cache": ("fresh", "shared", ""),
         "compile_dynamic": ("auto", "")}
#: What makes two configurations the same workload: every other axis.
WORKLOAD = ["fingerprint_id", *(c for c in schema.AXIS_COLUMNS
                                if c not in SWITCHES and c not in _HELD
                                and c != "cudnn_benchmark_limit")]


@dataclass(frozen=True, kw_only=True)
class Config:
    """One configuration of a workload: its switches' values, where its row is, and its
    figures."""

    switches: tuple[tuple[str, str], ...]  # (axis, value) for every switch, SWITCHES' order
    anchor: str
    n_ok: int
    samples_per_s: Scalar

    def differs(self, other: Config) -> tuple[str, ...]:
        """The switches set otherwise in ``other``."""
        return tuple(a for (a, v), (_, w) in zip(self.switches, other.switches) if v != w)

    def value(self, axis: str) -> str:
        return dict(self.switches)[axis]


@dataclass(frozen=True, kw_only=True)
class Step:
    """One switch along the path: its factor, interval and share of the whole."""

    axis: str
    before: str
    after: str
    speedup: float
    ci_low: float | None
    ci_high: float | None
    share: float | None  # its log factor's part of the whole (None where the whole is 1×)


@dataclass(frozen=True, kw_only=True)
class Gain:
    """One workload on one machine: the default, the fastest measured, the ratio with its
    interval, the path's steps (empty where no path was measured), and a faster
    configuration with too few replicates, if any."""

    page: str
    model: str
    mode: str
    batch_size: int
    device: str
    shapes: str
    default: Config
    best: Config
    speedup: float
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict  # the fastest against the default, at the widened interval
    candidates: int  # the configurations with enough replicates it was chosen from
    steps: tuple[Step, ...]
    unsure: Config | None = None  # faster than ``best``, too few replicates to count
    unsure_speedup: float | None = None
    unsure_why: Noise | None = None  # why it does not count: flagged, or (None) too few

    @property
    def changed(self) -> tuple[str, ...]:
        return self.default.differs(self.best)


@dataclass(frozen=True)
class _Measured:
    config: Config
    medians: tuple[float, ...]  # its replicates' median steps
    step_s: float  # the cell's median step
    noise: Noise | None  # what bench check flags in one of its replicates

    @property
    def enough(self) -> bool:
        return self.config.n_ok >= MIN_OK_REPLICATES and self.noise is None


def _flag(r: object) -> Noise | None:
    for col, noise in (("n_drift", Noise.DRIFT), ("n_throttled", Noise.THROTTLED)):
        value = getattr(r, col, 0)
        if value == value and value and float(value) > 0:  # NaN-safe
            return noise
    return None


Configs = dict[tuple[tuple[str, str], ...], _Measured]
#: The cell columns a configuration is read from, besides its workload and switches.
_READ = ("page", "anchor", "n_ok", "samples_per_s", "replicate_medians", "steady_median_s",
         "n_drift", "n_throttled")


def _configs(group: pd.DataFrame) -> Configs:
    """Each configuration of one workload (the one with more ok replicates where two share
    the switches: ``gains`` hands the rows over sorted by them)."""
    out: Configs = {}
    for r in records(group):
        key = tuple((a, _value(a, getattr(r, a))) for a in SWITCHES)
        if key not in out:
            out[key] = _Measured(Config(switches=key, anchor=str(r.anchor), n_ok=int(r.n_ok),
                                        samples_per_s=plain(r.samples_per_s)),
                                 tuple(r.replicate_medians), float(r.steady_median_s),
                                 _flag(r))
    return out


def _value(axis: str, value: object) -> str:
    """A switch's value; one that does not apply (cudnn.benchmark on a CPU) is its default."""
    text = str(value)
    return SWITCHES[axis] if text in ("n/a", "", "nan", "<NA>") else text


def _ratio(base: _Measured, var: _Measured, looks: int = 1
           ) -> tuple[float, float | None, float | None]:
    """``var``'s speedup over ``base`` (their median steps' ratio) with its interval (None
    where either side has too few replicates for one)."""
    est, lo, hi = ratio_ci([list(base.medians)], [list(var.medians)], looks=looks)
    bound = (None, None) if math.isnan(lo[0]) else (float(lo[0]), float(hi[0]))
    return (float(est[0]), *bound)


def _steps(configs: Configs, default: _Measured, best: _Measured, total: float
           ) -> tuple[Step, ...]:
    """The first path from ``default`` to ``best`` (in SWITCHES' order first) whose every
    configuration was measured with enough replicates, as steps; () where none was."""
    for order in itertools.permutations(default.config.differs(best.config)):
        here, steps = default, []
        for axis in order:
            after = best.config.value(axis)
            found = configs.get(tuple((a, after if a == axis else v)
                                      for a, v in here.config.switches))
            if found is None or not found.enough:
                break
            est, lo, hi = _ratio(here, found)
            steps.append(Step(axis=axis, before=here.config.value(axis), after=after,
                              speedup=est, ci_low=lo, ci_high=hi,
                              share=math.log(est) / math.log(total) if total != 1 else None))
            here = found
        else:
            return tuple(steps)
    return ()


def _gain(group: pd.DataFrame) -> Gain | None:
    configs = _configs(group)
    base = configs.get(tuple(SWITCHES.items()))
    if base is None or not base.enough or len(configs) < 2:
        return None
    enough = [c for c in configs.values() if c.enough]
    best = min(enough, key=lambda c: (c.step_s, c.config.anchor))
    est, lo, hi = _ratio(base, best, looks=max(len(enough) - 1, 1))
    faster = [c for c in configs.values() if not c.enough and c.step_s < best.step_s]
    unsure = min(faster, key=lambda c: c.step_s) if faster else None
    r = group.iloc[0]
    verdict = Verdict(pair_verdict(lo if lo is not None else math.nan,
                                   hi if hi is not None else math.nan,
                                   base.config.n_ok, best.config.n_ok))
    return Gain(page=str(r["page"]), model=str(r["model"]), mode=str(r["mode"]),
                batch_size=int(r["batch_size"]), device=str(r["device"]),
                shapes=str(r["shapes"]), default=base.config, best=best.config, speedup=est,
                ci_low=lo, ci_high=hi, verdict=verdict, candidates=len(enough),
                steps=_steps(configs, base, best, est) if best is not base else (),
                unsure=unsure.config if unsure else None,
                unsure_speedup=_ratio(base, unsure)[0] if unsure else None,
                unsure_why=unsure.noise if unsure else None)


def default_first(found: Sequence[Gain]) -> Gain | None:
    """The gain a machine's line quotes: its default workload's (one input shape, training
    first, the largest batch, the model measured in the most configurations)."""
    static = [g for g in found if g.shapes == "static"] or list(found)
    return min(static, key=lambda g: (g.mode != "train", -g.batch_size, -g.candidates,
                                      g.model), default=None)


def gains(cells: pd.DataFrame) -> tuple[Gain, ...]:
    """Every workload with a default configuration (enough ok replicates) and another one
    measured, per machine: its :class:`Gain`."""
    model = cells.loc[(cells["kind"] == "model") & cells["steady_median_s"].notna()]
    for axis, allowed in _HELD.items():
        if axis in model.columns:
            model = model.loc[model[axis].astype(str).isin(allowed)]
    if model.empty:
        return ()
    # only the columns a gain reads: grouping and walking the rows of a narrow frame is
    # several times faster than of every cell column
    wanted = [*WORKLOAD, *SWITCHES, *_READ]
    model = model[list(dict.fromkeys(c for c in wanted if c in model.columns))]
    # most ok replicates first, once for every group (a group keeps the rows' order)
    model = model.sort_values("n_ok", ascending=False, kind="stable")
    found = (_gain(g) for _, g in model.groupby(WORKLOAD, sort=True, dropna=False))
    return tuple(g for g in found if g is not None)
