"""Whether the sittings of a run agree, decided once for ``bench check``, ``--resume`` and the
report, in the standard library.

Why: a run finished by ``--resume`` is made in several sittings, perhaps on several machines
of one fingerprint, and its replicates are pooled as if they were exchangeable. They are not
when one sitting ran slow: on one H200 box every host-CPU cell of the last of five sittings ran
1.5-3.2 times slower than in the others, and its replicates made a 205-481x interval. So
before pooling, each sitting is held against the others, separately for the host CPU's cells
and the GPU's (a busy host says nothing of its GPU).

Two tests, in this order, each against the spread *within* sittings (``Spread``: the median,
over every cell and sitting with two or more replicates, of the replicates' standard
deviation of log step time; never under ``MIN_SPREAD``):

1. **A sitting's pace** (``pace``): over the cells it shares with the other sittings still
   kept, the median of its log step time minus theirs. It disagrees where that moves by more
   than ``max(DELTA, Z * spread)`` over at least ``MIN_SHARED`` cells: the slowest such
   sitting is left out first, and the rest are judged again without it. The pace probes a
   sitting measures at its start and end (env.json) count as cells here.
2. **A cell's replicates** (``cell``): of the sittings still kept that measured a cell, the
   fastest is the reference and another sitting's replicates of that cell disagree where their
   median is slower by more than ``max(DELTA, Z * spread * sqrt(1/n + 1/n_ref))``. The faster
   sitting is taken as the right one because interference only ever slows a step: contention,
   throttling and a busy host add time, never take it away.

A sitting, or a sitting's replicates of a cell, that disagrees is left out of every verdict
(``left_out``); its rows stay in the files and on the machine page, which shows this decision.
Rows that do not say which sitting wrote them (written before sittings were recorded) are
never judged.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from bench.schema import Status

#: Relative band within which two paces count as one (the verdicts' δ, 3%).
DELTA: Final = 0.03
#: How many within-sitting standard deviations a sitting may move before it disagrees.
Z: Final = 3.0
#: The smallest within-sitting spread assumed (log units): a GPU cell's replicates within one
#: sitting can agree to 0.2%, and a pace judged against that would flag any shift at all.
MIN_SPREAD: Final = 0.005
#: Fewer shared cells than this say nothing of a whole sitting's pace: its cells are then
#: judged one by one (test 2) and the sitting stays.
MIN_SHARED: Final = 3
#: The kinds of rows whose step time says a sitting's pace.
PACED_KINDS: Final = ("model", "ceiling")
#: A pace probe's name begins with the part of the machine it measures (``cpu_matmul``).
PROBE_PREFIX: Final = "pace:"


class Part(str, Enum):
    """The part of a machine a cell's step time measures: the host CPU or its GPU."""

    CPU = "cpu"
    GPU = "cuda"


class Agreement(str, Enum):
    """What became of one sitting of one part, or of one cell's replicates in it."""

    AGREES = "agrees"
    DISAGREES = "disagrees"
    ALONE = "nothing to compare"  # it shares no cell with another sitting
    FEW = "too few cells shared"  # under MIN_SHARED: judged cell by cell only


@dataclass(frozen=True)
class Observation:
    """One ok replicate's step time: which run and sitting measured which cell."""

    run_id: str
    sitting: int
    cell_id: str
    part: Part
    seconds: float


@dataclass(frozen=True)
class SittingPace:
    """One sitting of one part against the others of its run: its pace (its step times over
    theirs, as a ratio: 1.58 is 58% slower), over how many cells, and the verdict."""

    run_id: str
    sitting: int
    part: Part
    pace: float | None
    cells: int
    limit: float  # the ratio beyond which it disagrees (either way)
    agreement: Agreement


@dataclass(frozen=True)
class CellSitting:
    """One sitting's replicates of one cell, left out: slower than the reference sitting's."""

    run_id: str
    sitting: int
    cell_id: str
    part: Part
    ratio: float  # its median step time over the reference sitting's
    reference: int  # the sitting it was held against
    limit: float


@dataclass(frozen=True)
class Judgement:
    """Every sitting's pace, and which replicates are left out of the verdicts."""

    paces: tuple[SittingPace, ...] = ()
    cells: tuple[CellSitting, ...] = ()
    spread: Mapping[tuple[str, Part], float] = field(default_factory=dict)

    def disagreeing(self) -> tuple[SittingPace, ...]:
        return tuple(p for p in self.paces if p.agreement is Agreement.DISAGREES)

    def left_out(self) -> frozenset[tuple[str, int, str]]:
        """(run_id, sitting, cell_id) of every replicate left out of the verdicts; a whole
        sitting's are named with cell_id ``*`` for each part, see ``is_left_out``."""
        whole = {(p.run_id, p.sitting, f"*{p.part.value}") for p in self.disagreeing()}
        return frozenset(whole | {(c.run_id, c.sitting, c.cell_id) for c in self.cells})

    def is_left_out(self, run_id: str, sitting: int, cell_id: str, part: Part) -> bool:
        out = self.left_out()
        return (run_id, sitting, cell_id) in out or (run_id, sitting, f"*{part.value}") in out


def part_of(device: str) -> Part:
    """A row's part: its device's (a GPU machine's host-CPU cells are the CPU's)."""
    return Part.GPU if device == "cuda" else Part.CPU


def probe_part(name: str) -> Part:
    """A pace probe's part, from its name (``cpu_matmul``, ``cuda_launch``)."""
    return Part.GPU if name.startswith("cuda") else Part.CPU


def judge(observations: Iterable[Observation]) -> Judgement:
    """Hold every sitting of every run against the others (see the module docstring)."""
    groups: dict[tuple[str, Part], list[Observation]] = defaultdict(list)
    for o in observations:
        if o.seconds > 0 and math.isfinite(o.seconds):
            groups[(o.run_id, o.part)].append(o)
    paces: list[SittingPace] = []
    cells: list[CellSitting] = []
    spreads: dict[tuple[str, Part], float] = {}
    for (run_id, part), obs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1].value)):
        logs = _logs(obs)
        if len({s for per in logs.values() for s in per}) < 2:
            continue
        spread = _spread(logs)
        spreads[(run_id, part)] = spread
        group_paces = _paces(run_id, part, logs, spread)
        paces.extend(group_paces)
        out = {p.sitting for p in group_paces if p.agreement is Agreement.DISAGREES}
        cells.extend(_cells(run_id, part, logs, spread, out))
    return Judgement(tuple(paces), tuple(cells), spreads)


#: cell → sitting → the log step times of its replicates there.
_Logs = dict[str, dict[int, list[float]]]


def _logs(obs: list[Observation]) -> _Logs:
    logs: _Logs = defaultdict(lambda: defaultdict(list))
    for o in obs:
        logs[o.cell_id][o.sitting].append(math.log(o.seconds))
    return logs


def _spread(logs: _Logs) -> float:
    """The typical standard deviation of log step time within one sitting."""
    sds = [statistics.stdev(v) for per in logs.values() for v in per.values() if len(v) >= 2]
    return max(MIN_SPREAD, statistics.median(sds)) if sds else MIN_SPREAD


def _shift(logs: _Logs, sitting: int, kept: set[int]) -> tuple[float | None, int]:
    """The median over shared cells of a sitting's median log time minus the others'."""
    diffs = []
    for per in logs.values():
        others = [x for s, v in per.items() if s in kept and s != sitting for x in v]
        if sitting in per and others:
            diffs.append(statistics.median(per[sitting]) - statistics.median(others))
    return (statistics.median(diffs), len(diffs)) if diffs else (None, 0)


def _paces(run_id: str, part: Part, logs: _Logs, spread: float) -> list[SittingPace]:
    """Leave out, one at a time, the slowest sitting against the rest while it is slower
    beyond the limit; then say each sitting's pace against the sittings kept (the one sitting
    kept against those left out is their reference: pace 1)."""
    sittings = sorted({s for per in logs.values() for s in per})
    limit = max(math.log1p(DELTA), Z * spread)
    kept = set(sittings)
    while len(kept) > 1:
        shifts = {s: shift for s in kept
                  for shift, n in [_shift(logs, s, kept)] if shift is not None and n >= MIN_SHARED}
        if not shifts:
            break
        slowest = max(shifts, key=lambda s: shifts[s])
        if shifts[slowest] <= limit:
            break
        kept.discard(slowest)
    out = []
    for s in sittings:
        shift, n = _shift(logs, s, kept | {s})
        if shift is None and s in kept:  # the one kept: the others' reference, at its own pace
            shift, n = _shift(logs, s, set(sittings))
            shift = None if shift is None else 0.0
        agreement = (Agreement.ALONE if shift is None else
                     Agreement.DISAGREES if s not in kept else
                     Agreement.FEW if n < MIN_SHARED else Agreement.AGREES)
        pace = None if shift is None else math.exp(shift)
        out.append(SittingPace(run_id, s, part, pace, n, math.exp(limit), agreement))
    return out


def _cells(run_id: str, part: Part, logs: _Logs, spread: float,
           out: set[int]) -> list[CellSitting]:
    left: list[CellSitting] = []
    for cell_id, per in sorted(logs.items()):
        if cell_id.startswith(PROBE_PREFIX):
            continue
        kept = {s: v for s, v in per.items() if s not in out}
        if len(kept) < 2:
            continue
        ref = min(kept, key=lambda s: statistics.median(kept[s]))
        for s, v in sorted(kept.items()):
            if s == ref:
                continue
            limit = max(math.log1p(DELTA),
                        Z * spread * math.sqrt(1 / len(v) + 1 / len(kept[ref])))
            shift = statistics.median(v) - statistics.median(kept[ref])
            if shift > limit:
                left.append(CellSitting(run_id, s, cell_id, part, math.exp(shift), ref,
                                        math.exp(limit)))
    return left


def probe_observations(run_id: str, records: Iterable[Mapping[str, object]]) -> list[Observation]:
    """The pace probes env.json's sitting records hold, as observations of pseudo-cells
    (``pace:<probe>``), one per end of the sitting (start and end)."""
    obs = []
    for record in records:
        sitting = record.get("sitting")
        pace = record.get("pace")
        if not isinstance(sitting, int) or not isinstance(pace, Mapping):
            continue
        for phase in ("start", "end"):
            probes = pace.get(phase)
            if not isinstance(probes, Mapping):
                continue
            for name, figures in probes.items():
                value = figures.get("steady_p10_s") if isinstance(figures, Mapping) else None
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    obs.append(Observation(run_id, sitting, f"{PROBE_PREFIX}{name}",
                                           probe_part(str(name)), float(value)))
    return obs


def observation(row: Mapping[str, object]) -> Observation | None:
    """A results row's observation, where it is an ok, timed replicate whose sitting is known
    (values as read from the CSV, strings, or as the report types them)."""
    if row.get("status") != Status.OK or row.get("kind") not in PACED_KINDS:
        return None
    try:
        sitting = int(str(row.get("sitting")))
        seconds = float(str(row.get("steady_median_s")))
    except ValueError:
        return None
    if not seconds > 0:
        return None
    return Observation(str(row.get("run_id")), sitting, str(row.get("cell_id")),
                       part_of(str(row.get("device"))), seconds)


def judge_rows(rows: Iterable[Mapping[str, object]],
               records: Mapping[str, Iterable[Mapping[str, object]]] | None = None) -> Judgement:
    """``judge`` over results rows and, per run id, env.json's sitting records (their probes)."""
    obs = [o for o in map(observation, rows) if o is not None]
    for run_id, recs in (records or {}).items():
        obs.extend(probe_observations(run_id, recs))
    return judge(obs)
