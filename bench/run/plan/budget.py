"""Runs that fit the time they are given: ``--budget DURATION``, and the one planner that
``bench run``, ``bench advise`` and a Slurm run share.

Why whole studies first: a study's verdicts need all its replicates (a comparison with one
replicate a side is "too few replicates"), so with less time than the profile needs, the
studies that fit, in the profile's order, run whole before anything else; the rest follow
while the time lasts, and a later sitting (``--resume``) finishes them. Within what runs,
replicates still go in rounds over the cells (``bench.run.plan.jobs``), so wherever the run stops
every cell has the same number of replicates, give or take the round under way.

Why the runner checks again before each job: the estimate is rough. A replicate expected to
end past the budget is not started; the run then ends cleanly, exit 0, and says what is
complete, what is missing and how to resume.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.run.plan.jobs import Job

#: What a Slurm job's time limit adds to a ``--budget``: the node's start and the replicate
#: under way when the budget ends (its estimate can be short), at least a minute.
MARGIN_S = 60.0
MARGIN_SHARE = 0.1

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?")
FORMS = "90s, 9m, 1h, 1h30m, or a number of seconds"
#: The longest budget taken: a year. Longer is a typo, and past it a duration's minutes no
#: longer survive the arithmetic of a float.
MAX_S = 365 * 24 * 3600.0


class BudgetError(ValueError):
    """A ``--budget`` that is not a duration; the message is one line with the valid forms."""


def parse_duration(text: str, flag: str = "--budget") -> float:
    """``"90s"`` → 90.0, ``"9m"`` → 540.0, ``"1h30m"`` → 5400.0, ``"120"`` → 120.0."""
    raw = str(text).strip().lower().replace(" ", "")
    seconds: float | None = None
    try:
        seconds = float(raw)
    except ValueError:
        found = _DURATION.fullmatch(raw)
        if found and any(found.groups()):
            seconds = sum(float(v) * _UNITS[u] for v, u in zip(found.groups(), "hms") if v)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise BudgetError(f"{flag} {text!r}: not a positive duration; valid forms: {FORMS}")
    if seconds > MAX_S:
        raise BudgetError(f"{flag} {text!r}: more than a year; valid forms: {FORMS}")
    return seconds


def shown(seconds: float) -> str:
    """``90 s``, ``9.5 min``, ``1 h 30 min``: a duration as the output says it (a tenth of a
    minute under the hour, so that ``--budget 9m30s`` is not said as 10 min)."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 3570:
        return f"{seconds / 60:.1f}".removesuffix(".0") + " min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


def slurm_minutes(budget_s: float) -> int:
    """A Slurm job's time limit for a ``--budget``: the budget and the planner's margin."""
    return max(1, math.ceil((budget_s + max(MARGIN_S, MARGIN_SHARE * budget_s)) / 60))


def greedy(items: Sequence[tuple[str, float]], room_s: float
           ) -> tuple[list[str], list[str], float]:
    """The items (name, seconds) that fit ``room_s`` taken in order, one too dear for what is
    left skipped for cheaper later ones: (kept, left out, seconds kept). The one rule of every
    budget here: advise's knobs, a run's studies."""
    kept, left, total = [], [], 0.0
    for name, seconds in items:
        if total + seconds <= room_s:
            kept.append(name)
            total += seconds
        else:
            left.append(name)
    return kept, left, total


@dataclass(frozen=True)
class StudyFit:
    """Which studies of a plan fit a budget whole (in the profile's order), the seconds they
    are estimated at, and the studies that do not."""

    whole: tuple[str, ...]
    later: tuple[str, ...]
    estimate_s: float
    total_s: float  # the whole plan's estimate


def needs(jobs: Sequence[Job], study: str) -> set[tuple[str, str, int]]:
    """The jobs a study's verdicts need: every replicate of its cells (a cell it shares with
    an earlier study is that study's job) and its own re-run checks."""
    cells = {c.cell_id for j in jobs if j.study.name == study for c in j.study.cells}
    return {j.key for j in jobs if (j.op == "measure" and j.cell.cell_id in cells)
            or (j.op == "repro" and j.study.name == study)}


def fit_studies(jobs: Sequence[Job], seconds: Mapping[tuple[str, str, int], float],
                room_s: float) -> StudyFit:
    """The studies whose jobs (those not already taken by an earlier fitting study) fit
    ``room_s``, in the order the plan meets them (``greedy``)."""
    order = list(dict.fromkeys(j.study.name for j in jobs))
    taken: set[tuple[str, str, int]] = set()
    kept, later, total = [], [], 0.0
    for name in order:
        new = needs(jobs, name) - taken
        cost = sum(seconds.get(k, 0.0) for k in new)
        (ok, _, _) = greedy([(name, cost)], room_s - total)
        if ok:
            kept.append(name)
            taken |= new
            total += cost
        else:
            later.append(name)
    return StudyFit(tuple(kept), tuple(later), total,
                    sum(seconds.get(j.key, 0.0) for j in jobs))


def fit_line(fit: StudyFit, budget_s: float, room_s: float) -> str:
    """Which studies a budget holds whole and which follow while the time lasts, said once
    for ``bench run`` and ``--dry-run`` alike."""
    head = f"budget {shown(budget_s)} ({shown(max(room_s, 0.0))} left after the probe)"
    if not fit.later:
        return f"{head}: the whole plan fits (~{shown(fit.total_s)} estimated)"
    first = (f"{', '.join(fit.whole)} first, whole (~{shown(fit.estimate_s)})"
             if fit.whole else "no study fits whole")
    return (f"{head} for a plan of ~{shown(fit.total_s)}: {first}; then, while the time "
            f"lasts: {', '.join(fit.later)}")


def budget_order(jobs: Sequence[Job], fit: StudyFit) -> list[Job]:
    """The jobs the fitting studies need first, then the rest, each part in the plan's order
    (rounds over its cells)."""
    first: set[tuple[str, str, int]] = set()
    for name in fit.whole:
        first |= needs(jobs, name)
    return [j for j in jobs if j.key in first] + [j for j in jobs if j.key not in first]


@dataclass
class Budget:
    """A run's time limit: ``total_s`` from ``start`` (a monotonic time: the command's own
    start, so the probe counts too)."""

    total_s: float
    start: float

    @property
    def deadline(self) -> float:
        return self.start + self.total_s

    def allows(self, now: float, seconds: float) -> bool:
        """Whether a job estimated at ``seconds`` ends inside the budget if started ``now``."""
        return now + seconds <= self.deadline


def too_short(budget: Budget, now: float, seconds: Sequence[float]) -> str | None:
    """The refusal of a budget that not even the shortest job fits once the probe has spent
    its part (``now``), in one line naming the budget that would run one; None where one
    fits. Why refuse: such a run would leave a folder of no rows and a resume line with the
    same budget, which runs nothing again (``bench advise`` refuses alike)."""
    shortest = min(seconds, default=0.0)
    if budget.allows(now, shortest):
        return None
    spent = now - budget.start
    brief = f"{shortest:.1f} s" if shortest < 10 else shown(shortest)
    return (f"--budget {shown(budget.total_s)}: the probe took {shown(spent)} of it, and the "
            f"shortest replicate needs ~{brief}: nothing would run, so nothing was written; "
            f"allow at least {math.ceil(spent + shortest)} s (the whole plan: "
            f"~{shown(spent + sum(seconds))})")


@dataclass(frozen=True)
class Ending:
    """What a budgeted run leaves: the studies complete (every job they need has its row),
    those begun, those not started, and the jobs left with their estimate."""

    budget_s: float
    before: Job | None  # the job the budget stopped the run before; None: nothing was left
    complete: tuple[str, ...]
    partly: tuple[tuple[str, int, int], ...]  # (study, jobs with a row, jobs it needs)
    untouched: tuple[str, ...]
    left: int
    left_s: float


def ending(jobs: Sequence[Job], ran: set[tuple[str, str, int]], budget_s: float,
           before: Job | None, seconds: Mapping[tuple[str, str, int], float]) -> Ending:
    """The state of every study of ``jobs`` once the jobs in ``ran`` have their rows."""
    complete, partly, untouched = [], [], []
    for name in dict.fromkeys(j.study.name for j in jobs):
        need = needs(jobs, name)
        have = len(need & ran)
        if have == len(need):
            complete.append(name)
        elif have:
            partly.append((name, have, len(need)))
        else:
            untouched.append(name)
    left = [j for j in jobs if j.key not in ran]
    return Ending(budget_s, before, tuple(complete), tuple(partly), tuple(untouched),
                  len(left), sum(seconds.get(j.key, 0.0) for j in left))


def ending_lines(e: Ending) -> list[str]:
    """What a budgeted run says when it ends: what is complete, what is missing."""
    if e.before is None:
        return [f"budget {shown(e.budget_s)}: every planned process ran"]
    out = [f"budget {shown(e.budget_s)} reached: stopped before {e.before.study.name}: "
           f"{e.before.cell.name} #r{e.before.replicate}, which would not end in time; "
           f"{e.left} processes left (~{shown(e.left_s)} estimated)"]
    if e.complete:
        out.append(f"complete, every replicate (their verdicts stand): {', '.join(e.complete)}")
    if e.partly:
        out.append("begun: " + ", ".join(f"{n} ({have} of {need} processes)"
                                         for n, have, need in e.partly)
                   + "; replicates run in rounds, so each of their cells has as many as the "
                     "others, or one fewer")
    if e.untouched:
        out.append(f"not started: {', '.join(e.untouched)}")
    return out
