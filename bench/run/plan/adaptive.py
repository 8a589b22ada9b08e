"""Adaptive replicates: more rounds for the comparisons a run has not decided yet.

Why: at three replicates a side, many comparisons end "no clear difference" only because their
interval is wide. Once a study's planned rounds are done, the runner looks at its comparisons
(pairs of model cells that differ in one setting, as the report pairs them) and gives each
cell of an undecided one (``bench.intervals.undecided``) ``step`` more replicates, in rounds
over those cells, then looks again: ``looks`` looks in all, the first at the planned
replicates. The error is split over the looks (``bench.intervals.level``), so whichever look
a comparison stops at, its interval still covers as promised; env.json records the rule
(``schema.ADAPTIVE_KEY``) for the report to compute the intervals at that level.

Extra replicates are real replicates: numbered after the planned ones, with rows like any
other. The planner never counts them: with a ``--budget`` they are taken only from what it
leaves once the plan has run, and a round starts only if the budget's per-replicate check
allows all of it; without one, every look the rule allows is made (``--dry-run`` says how many
processes that may add, at most).

Why the looks are replayed from the rows: what was decided is what the rows say. At each
look, a cell's replicates so far are its planned ones and the rounds already given to it; a
round is given to a cell whose comparison is undecided on those, or whose rows already hold
one (a round an earlier sitting began is a round taken, never lost or added twice). So a
resumed sitting continues the looks where the last one stopped, with the same numbers.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from bench import intervals, schema
from bench.intervals import Adaptive
from bench.run.plan import estimate
from bench.run.plan.jobs import Job, skip_reason
from bench.run.plan.learned import CellCost
from bench.run.plan.matrix import Cell
from bench.run.protocol import Probe
from bench.schema import Status

#: The setting axes a comparison differs in (the report's pairing), each with its baseline:
#: a pair is a baseline cell and a cell with another value of one axis, the rest equal.
AXES: dict[str, object] = {
    "cudnn_benchmark": "off", "cudnn_deterministic": "off", "precision": "fp32",
    "memory_format": "nchw", "device": "cpu", "shapes": "static", "cpu_threads": None,
    "compile": "off",
}
#: Fields that may differ too, per axis: what the axis decides or does not apply to (a
#: benchmark-off cell's limit, an eager cell's dynamic=, a CPU cell's cuDNN switches).
_LOOSE: dict[str, tuple[str, ...]] = {
    "cudnn_benchmark": ("cudnn_benchmark_limit",),
    "compile": ("compile_dynamic",),
    "device": ("cpu_threads", "cudnn_benchmark", "cudnn_deterministic", "cudnn_benchmark_limit"),
}
_FIELDS = [f.name for f in fields(Cell)]


def pair_axis(a: Cell, b: Cell) -> str | None:
    """The axis of a comparison of ``a`` (the baseline) and ``b``, or None: model cells that
    differ in exactly one setting axis, ``a`` holding its baseline value."""
    if a.kind != "model" or b.kind != "model":
        return None
    for axis, base in AXES.items():
        va, vb = getattr(a, axis), getattr(b, axis)
        if va != base or vb == va or vb == "n/a":
            continue
        if axis == "cpu_threads" and vb != 1:
            continue  # every core against one thread, as the report compares them
        if axis == "device" and (b.cudnn_benchmark, b.cudnn_deterministic) != ("off", "off"):
            continue
        loose = {axis, *_LOOSE.get(axis, ())}
        if all(getattr(a, f) == getattr(b, f) for f in _FIELDS if f not in loose):
            return axis
    return None


@dataclass(frozen=True)
class CellPair:
    study: str
    axis: str
    base: Cell
    variant: Cell

    @property
    def label(self) -> str:
        return f"{self.study}: {self.base.name} vs {getattr(self.variant, self.axis)}"


def study_pairs(jobs: Sequence[Job]) -> list[CellPair]:
    """Each study's comparisons among the cells ``jobs`` measure (a shard's own cells)."""
    measured = {j.cell.cell_id for j in jobs if j.op == "measure"}
    out: list[CellPair] = []
    for study in dict.fromkeys(j.study for j in jobs):
        cells = [c for c in study.cells if c.cell_id in measured]
        for a in cells:
            for b in cells:
                axis = pair_axis(a, b)
                if axis:
                    out.append(CellPair(study.name, axis, a, b))
    return out


@dataclass
class Looks:
    """The looks of one run: which cells get which extra replicates, replayed from the rows
    of its earlier sittings (``earlier``: (kind, cell id, replicate) → the status and
    steady median of its newest row) and this sitting's (``next_round``'s ``now``)."""

    rule: Adaptive
    jobs: Sequence[Job]
    earlier: Mapping[tuple[str, str, int], tuple[str, float | None]] = field(
        default_factory=dict)
    #: cell id → a replicate's expected seconds (what the budget checks an extra one with)
    seconds: dict[str, float] = field(default_factory=dict)
    #: what the last replay found: looks given, the pairs each look found undecided
    undecided: list[list[CellPair]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pairs = study_pairs(self.jobs)
        self.planned: dict[str, int] = {}
        self.owner: dict[str, Job] = {}
        for j in self.jobs:
            if j.op == "measure":
                self.planned[j.cell.cell_id] = max(self.planned.get(j.cell.cell_id, 0),
                                                   j.replicate + 1)
                self.owner.setdefault(j.cell.cell_id, j)
        self.cells = list(dict.fromkeys(c.cell_id for p in self.pairs
                                        for c in (p.base, p.variant)))

    def _outcome(self, key: tuple[str, str, int],
                 now: Mapping[tuple[str, str, int], tuple[str, float | None]]
                 ) -> tuple[str, float | None] | None:
        """A replicate's outcome: this sitting's, else an earlier sitting's that a resume
        does not run again (ok or skipped); None: still to run."""
        if key in now:
            return now[key]
        old = self.earlier.get(key)
        return old if old is not None and old[0] in (Status.OK, Status.SKIPPED) else None

    def _values(self, cid: str, slots: int,
                now: Mapping[tuple[str, str, int], tuple[str, float | None]]) -> list[float]:
        out = []
        for r in range(slots):
            got = self._outcome(("model", cid, r), now)
            if got is not None and got[0] == Status.OK and got[1] is not None:
                out.append(got[1])
        return out

    def _begun(self, cid: str, start: int,
               now: Mapping[tuple[str, str, int], tuple[str, float | None]]) -> bool:
        return any(("model", cid, r) in now or ("model", cid, r) in self.earlier
                   for r in range(start, start + self.rule.step))

    def next_round(self, now: Mapping[tuple[str, str, int], tuple[str, float | None]]
                   ) -> list[Job]:
        """The extra replicates to run next, in rounds over their cells: those of the round
        under way, else of the next look's; none once every comparison is decided, the looks
        are spent, or the plan is not done (a planned replicate still to run)."""
        slots = {cid: self.planned[cid] for cid in self.cells}
        self.undecided = []
        order = {cid: i for i, cid in enumerate(self.cells)}
        start = dict(slots)
        for look in range(1, self.rule.looks + 1):
            missing = [(cid, r) for cid in self.cells for r in range(slots[cid])
                       if self._outcome(("model", cid, r), now) is None]
            if any(r < self.planned[cid] for cid, r in missing):
                return []  # the plan first: its replicates are the budget's, not these
            if missing:
                missing.sort(key=lambda m: (m[1] - start[m[0]], order[m[0]]))
                return [Job(self.owner[cid].study, self.owner[cid].cell, r)
                        for cid, r in missing]
            values = {cid: self._values(cid, slots[cid], now) for cid in self.cells}
            found = [p for p in self.pairs if values[p.base.cell_id]
                     and values[p.variant.cell_id] and intervals.undecided(
                         values[p.base.cell_id], values[p.variant.cell_id],
                         looks=self.rule.looks, max_width=self.rule.max_width,
                         delta=self.rule.delta)]
            self.undecided.append(found)
            if look == self.rule.looks:
                break
            grow = {c.cell_id for p in found for c in (p.base, p.variant)}
            grow |= {cid for cid in self.cells if self._begun(cid, slots[cid], now)}
            if not grow:
                break
            start = dict(slots)
            for cid in grow:
                slots[cid] += self.rule.step
        return []

    def added(self, now: Mapping[tuple[str, str, int], tuple[str, float | None]],
              earlier_too: bool = True) -> dict[str, int]:
        """Cell id → its extra replicates with a row (this sitting's, and earlier ones')."""
        keys = set(now) | (set(self.earlier) if earlier_too else set())
        out: dict[str, int] = {}
        for kind, cid, r in keys:
            if kind == "model" and cid in self.planned and r >= self.planned[cid]:
                out[cid] = out.get(cid, 0) + 1
        return out


def outcomes(rows: Iterable[Mapping[str, str]], fingerprint_id: str
             ) -> dict[tuple[str, str, int], tuple[str, float | None]]:
    """(kind, cell id, replicate) → (status, steady median) of its newest row under this
    fingerprint, an ok one first: what ``Looks`` replays an earlier sitting from."""
    out: dict[tuple[str, str, int], tuple[str, float | None]] = {}
    for row in rows:
        if row.get("fingerprint_id") != fingerprint_id:
            continue
        try:
            key = (row["kind"], row["cell_id"], int(row["replicate"]))
        except (KeyError, ValueError):
            continue
        value: float | None = None
        with contextlib.suppress(TypeError, ValueError):
            value = float(row.get("steady_median_s") or "")
        if out.get(key, ("",))[0] != Status.OK:
            out[key] = (str(row.get("status", "")), value)
    return out


def bound(jobs: Sequence[Job], rule: Adaptive, seconds: Mapping[str, float],
          taken: Mapping[str, int] | None = None) -> tuple[int, float]:
    """The most extra replicates the rule may add to ``jobs`` (every cell of a comparison, at
    every look but the first, less what ``taken`` says a cell already has) and their seconds
    (``seconds``: cell id → one replicate's)."""
    looks = Looks(rule, jobs)
    most = rule.step * (rule.looks - 1)
    n, total = 0, 0.0
    for cid in looks.cells:
        more = max(0, most - (taken or {}).get(cid, 0))
        n += more
        total += more * seconds.get(cid, 0.0)
    return n, total


def bound_line(rule: Adaptive, n: int, seconds: float) -> str:
    """What ``--dry-run`` says of the rule: the most it may add, apart from the estimate."""
    more = rule.looks - 1
    return (f"adaptive replicates: up to {rule.step} more per cell of an undecided comparison, "
            f"at most {more} extra look{'s' if more != 1 else ''}: up to {n} more processes, "
            f"about {math.ceil(seconds)} s (not in the estimate; with --budget, only what it "
            f"leaves after the plan; --no-adaptive: none)")


def summary_lines(looks: Looks, now: Mapping[tuple[str, str, int], tuple[str, float | None]],
            stopped_by_budget: bool) -> list[str]:
    """What the end of a run says of its extra replicates: how many, for which comparisons."""
    if not looks.pairs:
        return []
    added = looks.added(now, earlier_too=False)
    total = sum(added.values())
    looks.next_round(now)  # the replay's last word on which comparisons stayed undecided
    if not looks.undecided:  # the plan is not done (a budget stopped it): no look yet
        return []
    grown = [p for p in looks.pairs if p.base.cell_id in added or p.variant.cell_id in added]
    head = (f"adaptive replicates: {total} added this sitting to {len(added)} "
            f"cell{'s' if len(added) != 1 else ''}" if total
            else "adaptive replicates: none added this sitting")
    left = looks.undecided[-1] if looks.undecided else []
    why = (", the budget left no room for another round" if stopped_by_budget and left
           else "")
    out = [f"{head}; {len(left)} of {len(looks.pairs)} comparisons still undecided after "
           f"{len(looks.undecided)} of {looks.rule.looks} looks{why}"]
    for p in grown[:10]:
        out.append(f"  more replicates for {p.label} ({p.axis})")
    if len(grown) > 10:
        out.append(f"  ... and {len(grown) - 10} more comparisons")
    return out


# -- what a sitting of a run does with the rule (``bench.run.execute.session``) ------------
def env_record(rule: Adaptive | None) -> dict[str, Any]:
    """What a new run's env.json says of the rule it applies: nothing where it applies none
    (the report then computes its intervals at one look)."""
    return {schema.ADAPTIVE_KEY: rule.record()} if rule is not None else {}


def fresh(rule: Adaptive | None, jobs: Sequence[Job]) -> Looks | None:
    """A new run's looks: the profile's rule (None: off, or ``--no-adaptive``)."""
    return Looks(rule, jobs) if rule is not None else None


def resumed(rule: Adaptive | None, env: Mapping[str, Any] | None, jobs: Sequence[Job],
            rows: Iterable[Mapping[str, str]], fingerprint_id: str,
            again: Iterable[tuple[str, str, int]] = ()) -> Looks | None:
    """A resumed run's looks, replayed from its rows: the rule its env.json records (the one
    its first sitting applied, so the report's level stays true), and none where it records
    none, or this sitting turns the rule off (``rule`` None: ``--no-adaptive``, or a profile
    without it). ``again``: replicates the resume measures again (their rows do not count)."""
    recorded = Adaptive.recorded((env or {}).get(schema.ADAPTIVE_KEY))
    if rule is None or recorded is None:
        return None
    earlier = outcomes(rows, fingerprint_id)
    for key in again:
        earlier[key] = ("again", None)
    return Looks(recorded, jobs, earlier)


def pending(looks: Looks | None) -> bool:
    """Whether a resume has adaptive replicates to run once its plan is done."""
    return looks is not None and bool(looks.next_round({}))


def priced(looks: Looks | None, jobs: Sequence[Job], probe: Probe,
           costs: Mapping[str, CellCost] | None = None,
           earlier: Mapping[tuple[str, str], float] | None = None) -> Looks | None:
    """``looks`` with each cell's expected seconds a replicate (what its replicates took in
    the run's earlier sittings, else the estimate): what the budget checks a round with."""
    if looks is None:
        return None
    one = list({j.cell.cell_id: j for j in jobs if j.op == "measure"}.values())
    looks.seconds = {j.cell.cell_id: (earlier or {}).get((j.kind, j.cell.cell_id), s)
                     for j, s in zip(one, estimate.jobs_s(one, probe, costs))}
    return looks


def dry_run_line(jobs: Sequence[Job], rule: Adaptive | None, probe: Probe,
                 costs: Mapping[str, CellCost] | None = None,
                 looks: Looks | None = None) -> str | None:
    """``--dry-run``'s line on the rule: the most it may add (cells that would be skipped
    here have no comparison to decide), less what a resumed run's rows already hold."""
    if rule is None:
        return None
    runs = [j for j in jobs if not skip_reason(j.cell, probe)]
    one = list({j.cell.cell_id: j for j in runs if j.op == "measure"}.values())
    seconds = dict(zip((j.cell.cell_id for j in one), estimate.jobs_s(one, probe, costs)))
    n, total = bound(runs, rule, seconds, looks.added({}) if looks is not None else None)
    return bound_line(rule, n, total) if n else None
