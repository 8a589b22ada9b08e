"""Where a run's wall time goes: the timed work (each replicate's cold pass and steady
iterations) against everything else, phase by phase.

Why: a GPU hour is paid by the wall clock, and only the timed windows are measurement. The
runner notes, per job, when it began and ended and the moments its child reports
(``protocol.Timeline``); this module turns those notes into the breakdown ``nox -s speed``
prints. Pure: the notes are data, so the arithmetic is tested without a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

#: The phases of one job, in the order they happen, each with what it is.
PHASES: dict[str, str] = {
    "launch": "task file, fork and the child's own start",
    "set-up": "flags applied, faults checked",
    "build": "the model (or ceiling) built, inputs made",
    "cold pass": "the first iteration of every shape (timed)",
    "warm-up": "iterations between the cold pass and the timed steady state",
    "steady state": "the timed steady iterations (timed)",
    "steady bookkeeping": "reading timers and the stopping rule, inside the steady window",
    "after": "FLOP count, summary and the record written",
    "row": "the parent reads the record and writes the row",
    "prime": "untimed processes that fill a warm kernel cache",
}
TIMED = ("cold pass", "steady state")


@dataclass(frozen=True)
class JobTiming:
    """One job, as the runner saw it (``time.time()`` moments; None where the child left no
    record or did not reach that moment)."""

    begin: float
    end: float
    entered: float | None = None
    build_start: float | None = None
    built: float | None = None
    cold_end: float | None = None
    steady_start: float | None = None
    steady_end: float | None = None
    ended: float | None = None
    cold_s: float = 0.0  # the row's cold_pass_s
    steady_s: float = 0.0  # the sum of its timed steady iterations
    prime_s: float = 0.0  # a warm cache primed for this job first
    study: str = ""  # the study that owns the job's cell: where its untimed time is spent


def _span(a: float | None, b: float | None) -> float:
    return max(b - a, 0.0) if a is not None and b is not None else 0.0


def phases(t: JobTiming) -> dict[str, float]:
    """One job's seconds per phase; what the child's moments cannot place is ``row`` (a
    child that left no record: the whole job)."""
    out = dict.fromkeys(PHASES, 0.0)
    out["prime"] = t.prime_s
    if t.entered is None or t.ended is None:
        out["row"] = max(t.end - t.begin - t.prime_s, 0.0)
        return out
    out["launch"] = max(t.entered - t.begin - t.prime_s, 0.0)
    marks = [t.entered, t.build_start, t.built, t.cold_end, t.steady_start, t.steady_end, t.ended]
    names = ["set-up", "build", "cold pass", "warm-up", "steady window", "after"]
    spans = {n: _span(a, b) for n, a, b in zip(names, marks, marks[1:])}
    out["set-up"], out["build"] = spans["set-up"], spans["build"]
    out["cold pass"] = t.cold_s
    out["warm-up"] = spans["warm-up"] + max(spans["cold pass"] - t.cold_s, 0.0)
    out["steady state"] = t.steady_s
    out["steady bookkeeping"] = max(spans["steady window"] - t.steady_s, 0.0)
    out["after"] = spans["after"]
    out["row"] = max(t.end - t.ended, 0.0)
    return out


@dataclass(frozen=True)
class Breakdown:
    wall_s: float  # the whole run, probe included
    by_phase: Mapping[str, float] = field(default_factory=dict)
    outside_s: float = 0.0  # the run's wall time outside every job (the probe, start, end)

    @property
    def timed_s(self) -> float:
        return sum(self.by_phase.get(p, 0.0) for p in TIMED)

    @property
    def share(self) -> float:
        """Timed work over wall time."""
        return self.timed_s / self.wall_s if self.wall_s > 0 else 0.0


def breakdown(jobs: Iterable[JobTiming], wall_s: float) -> Breakdown:
    """The run's seconds per phase, summed over its jobs, and what lies outside them."""
    total = dict.fromkeys(PHASES, 0.0)
    inside = 0.0
    for t in jobs:
        for name, s in phases(t).items():
            total[name] += s
        inside += t.end - t.begin
    return Breakdown(wall_s, total, max(wall_s - inside, 0.0))


def lines(b: Breakdown) -> Sequence[str]:
    """The breakdown as a table: seconds and share of the wall per phase, largest first."""
    rows = sorted(((s, n) for n, s in b.by_phase.items()), reverse=True)
    rows.append((b.outside_s, "outside jobs"))
    out = [f"timed work {b.timed_s:.1f} s of {b.wall_s:.1f} s wall: {b.share:.1%}"]
    for s, name in rows:
        what = PHASES.get(name, "the probe, the run's start and end")
        share = s / b.wall_s if b.wall_s else 0.0
        out.append(f"  {name:<19} {s:8.1f} s  {share:6.1%}  {what}")
    return out


def untimed_by_study(jobs: Iterable[JobTiming]) -> dict[str, dict[str, float]]:
    """Per study, its jobs' untimed seconds per phase: which studies the overhead is in."""
    out: dict[str, dict[str, float]] = {}
    for t in jobs:
        mine = out.setdefault(t.study or "(none)", dict.fromkeys(PHASES, 0.0))
        for name, s in phases(t).items():
            if name not in TIMED:
                mine[name] += s
    return out


def study_lines(by_study: Mapping[str, Mapping[str, float]], top: int = 3) -> Sequence[str]:
    """The studies by untimed seconds, largest first, each with its ``top`` phases."""
    ranked = sorted(by_study.items(), key=lambda kv: -sum(kv[1].values()))
    out = ["untimed seconds by study (largest phases):"]
    for study, spent in ranked:
        parts = sorted(((s, n) for n, s in spent.items() if s > 0), reverse=True)[:top]
        shown = ", ".join(f"{n} {s:.1f}" for s, n in parts)
        out.append(f"  {study:<16} {sum(spent.values()):7.1f} s  {shown}")
    return out
