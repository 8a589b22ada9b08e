"""The home page, judged: a grid of switches × machines (each cell the decision for that
machine's default workload), at most one headline per setting, the decision table, and what
these results cannot answer yet. Everything answers from the current fingerprints only (a
superseded one keeps its machine page).

A headline leads with the decision for the default workload, never with the largest number:
on the reader's own machine where it measured the setting, else on the machine that measured
the setting most (a GPU first, where the setting was measured on one), the configuration in
PyTorch's defaults (fp32, NCHW, one input shape, an empty kernel cache, cudnn.deterministic
off) of the model measured in the most configurations, training before inference and the
largest batch first. Where the switch pays elsewhere on that machine,
those regimes follow, each with its own decision."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from bench.report.judge.advice.codes import Setting
from bench.report.judge.claims import count_verdicts
from bench.report.judge.compiling import faster_pairs, same_workload
from bench.report.judge.defaults import decision_for, default_workload
from bench.report.judge.facts import Facts
from bench.report.judge.gains import Gain, default_first, gains
from bench.report.judge.machines import EVERY_ONE_UP_TO, Machine, representatives
from bench.report.judge.numerics import NumericCheck, NumericPair
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Pair, typed_row
from bench.report.judge.selection import counted_benchmark, judged
from bench.report.judge.trust import count_trust
from bench.report.vocabulary import Action, Call, ClaimVerdict, Noise, Numerics, Trust, Verdict

#: The settings of the decision table, in its order.
DECISION_SETTINGS = ("cudnn.benchmark", "cudnn.deterministic", "precision", "memory_format",
                     "device")


class Topic(enum.Enum):
    """What a home headline is about, in the home page's order."""

    BENCHMARK = enum.auto()
    DEVICE = enum.auto()
    PRECISION = enum.auto()
    LAYOUT = enum.auto()
    DETERMINISM = enum.auto()
    COMPILE = enum.auto()


#: The setting each topic's decisions are recorded under (torch.compile's are on its page).
SETTING_OF: dict[Topic, Setting] = {
    Topic.BENCHMARK: Setting.CUDNN_BENCHMARK, Topic.DEVICE: Setting.DEVICE,
    Topic.PRECISION: Setting.PRECISION, Topic.LAYOUT: Setting.MEMORY_FORMAT,
    Topic.DETERMINISM: Setting.CUDNN_DETERMINISTIC,
}
@dataclass(frozen=True)
class Headline:
    """One headline: the default workload's comparison on the machine that measured the setting
    most, the decision for its regime (None where the setting has no regime decisions here),
    the regimes where the switch pays on that machine, and how many configurations agree."""

    topic: Topic
    machine: Machine
    pair: Pair  # the comparison quoted: the default workload's (a NumericPair where checked)
    judged: int  # that machine's judged configurations of this setting
    same: int  # how many of them share the quoted pair's verdict
    devices: tuple[str, ...]  # where the setting was measured (cpu, cuda)
    decision: Regime | None = None  # the decision for the quoted pair's regime
    pays: tuple[Regime, ...] = ()  # other regimes here where the advice is to switch it on


    @property
    def numerics(self) -> NumericCheck | None:
        """The quoted variant's outputs against the strict reference, where they were
        checked (a precision, layout or compile switch's)."""
        if isinstance(self.pair, NumericPair) and self.pair.numerics.checked:
            return self.pair.numerics
        return None

    @property
    def drifts(self) -> bool:
        return self.numerics is not None and self.numerics.verdict is Numerics.DRIFTS


#: The switches that change the arithmetic: their pairs carry the variant's numerics.
NUMERIC_TOPICS = frozenset({Topic.PRECISION, Topic.LAYOUT, Topic.COMPILE})


def _machine(ok: pd.DataFrame, machines: Mapping[str, Machine]) -> str:
    """The page of the reader's own machine where it measured a setting, else of the machine
    that measured it most, a GPU first where one did."""
    own = ok.loc[ok["page"].astype(str).isin([k for k, m in machines.items() if m.yours])]
    ok = own if len(own) else ok
    gpu = ok.loc[ok["device"].astype(str) == "cuda"] if "device" in ok.columns else ok.iloc[:0]
    counts = (gpu if len(gpu) else ok)["page"].value_counts().sort_index()
    return str(counts.idxmax())


def _regimes(facts: Facts, topic: Topic, pair: Pair) -> tuple[Regime | None, tuple[Regime, ...]]:
    setting = SETTING_OF.get(topic)
    return (decision_for(facts.regimes_on(setting, str(pair.page)), setting, pair)
            if setting else (None, ()))


def _headline(topic: Topic, frame: pd.DataFrame, facts: Facts, page: str | None = None,
              devices: tuple[str, ...] | None = None) -> Headline | None:
    """The default workload's pair of ``frame`` (current rows only) on ``page``, or on the
    machine :func:`_machine` picks, with its decision and where the switch pays."""
    ok = judged(facts.current(frame))
    if "noise" in ok.columns:  # never a headline that rests on a replicate bench check flags
        ok = ok.loc[~ok["noise"].isin([Noise.DRIFT, Noise.THROTTLED])]
    if page is not None and len(ok):
        ok = ok.loc[ok["page"].astype(str) == page]
    if ok.empty:
        return None
    mine = ok.loc[ok["page"] == _machine(ok, facts.machines)]
    pair = default_workload(mine, NumericPair if topic in NUMERIC_TOPICS else Pair)
    if pair is None:
        return None
    if devices is None:
        devices = _devices(frame)
    decision, pays = _regimes(facts, topic, pair)
    return Headline(topic, facts.machines[str(pair.page)], pair, len(mine),
                    int((mine["verdict"] == pair.verdict).sum()), devices, decision, pays)


def _devices(frame: pd.DataFrame) -> tuple[str, ...]:
    """The devices a topic's rows were measured on (a headline names them)."""
    return tuple(sorted(set(frame["device"].astype(str)))) if "device" in frame else ()


def headlines(facts: Facts) -> tuple[Headline, ...]:
    """At most one headline per topic, in ``Topic``'s order."""
    found = [_headline(topic, frame, facts) for topic, frame in _frames(facts).items()]
    return tuple(h for h in found if h is not None)


def _frames(facts: Facts) -> dict[Topic, pd.DataFrame]:
    """Each topic's comparisons, as its page counts them."""
    a = facts.analysis
    bm = counted_benchmark(a.benchmark)
    frames = {
        Topic.BENCHMARK: bm.loc[bm["shapes"] == "static"] if len(bm) else bm,
        Topic.DEVICE: a.cpu_gpu,
        Topic.PRECISION: a.comparisons["precision"].loc[
            a.comparisons["precision"]["variant_value"] != "fp32-strict"]
        if len(a.comparisons["precision"]) else a.comparisons["precision"],
        Topic.LAYOUT: a.comparisons["memory_format"],
        Topic.DETERMINISM: a.determinism,
        Topic.COMPILE: a.compiled,
    }
    return frames


#: The regime decisions, as a grid cell's call.
_CALLS = {Action.ENABLE: Call.ON, Action.KEEP_OFF: Call.OFF, Action.LEAVE_DEFAULT: Call.OFF,
          Action.DEPENDS: Call.DEPENDS, Action.ENABLE_IF_NEEDED: Call.DEPENDS,
          Action.INSUFFICIENT: Call.TOO_FEW}
#: A verdict as the call, where the setting has no regime decision (torch.compile).
_BY_VERDICT = {Verdict.FASTER: Call.ON, Verdict.SLOWER: Call.OFF,
               Verdict.NO_CLEAR_DIFFERENCE: Call.OFF, Verdict.INSUFFICIENT: Call.TOO_FEW}
#: The topics whose switch needs a GPU.
_GPU_ONLY = frozenset({Topic.BENCHMARK, Topic.DETERMINISM, Topic.DEVICE})


@dataclass(frozen=True)
class GridCell:
    """One switch on one machine: the call for its default workload, and the headline (the
    pair and decision) it rests on where it was measured."""

    call: Call
    machine: Machine
    headline: Headline | None = None


@dataclass(frozen=True)
class GridRow:
    topic: Topic
    cells: tuple[GridCell, ...]  # one per grid column, in the columns' order


@dataclass(frozen=True)
class Grid:
    """Switches × machines: the page's picture at a glance (the reader's own machine first,
    then the GPUs, then the rest). Past ``GRID_COLUMNS`` fingerprints, one column per hardware
    model (``grid_columns``), and ``left_out`` counts the fingerprints not shown."""

    columns: tuple[Machine, ...]
    rows: tuple[GridRow, ...]
    left_out: int = 0


def call_of(h: Headline) -> Call:
    """The decision for the default workload; a faster switch whose outputs drift past
    their tolerance is on only if the reader's outputs hold."""
    call = _speed_call(h)
    return Call.ON_IF_OUTPUTS_HOLD if call is Call.ON and h.drifts else call


def _speed_call(h: Headline) -> Call:
    if h.decision is not None:
        if h.decision.main.action == Action.ENABLE and h.decision.main.break_even_iters:
            return Call.DEPENDS  # it pays only past its break-even point
        return _CALLS[Action(h.decision.main.action)]
    return _BY_VERDICT.get(Verdict(h.pair.verdict), Call.TOO_FEW)


def _compiled(h: Headline, frame: pd.DataFrame, facts: Facts) -> GridCell:
    """torch.compile's cell as its page decides: the fastest mode clearly faster than eager
    for the default workload, with either kernel cache, quoted; else stay eager."""
    faster = faster_pairs(same_workload(facts.current(frame), h.pair))
    if faster.empty:
        return GridCell(call_of(h), h.machine, h)
    quoted = replace(h, pair=typed_row(NumericPair, faster.iloc[0]))
    return GridCell(call_of(quoted), h.machine, quoted)


def _cell(topic: Topic, frame: pd.DataFrame, facts: Facts, m: Machine,
          devices: tuple[str, ...]) -> GridCell:
    """``m``'s cell of ``topic``, from the topic's rows on ``m`` (``frame``)."""
    if topic in _GPU_ONLY and not m.gpu:
        return GridCell(Call.NOT_APPLICABLE, m)
    h = _headline(topic, frame, facts, m.page, devices)
    if h is not None:
        return _compiled(h, frame, facts) if topic is Topic.COMPILE \
            else GridCell(call_of(h), m, h)
    rows = facts.current(frame)
    mine = rows.loc[rows["page"].astype(str) == m.page] if len(rows) else rows
    if len(judged(mine)):  # decided, but only on replicates bench check flags
        return GridCell(Call.FLAGGED, m)
    return GridCell(Call.TOO_FEW if len(mine) else Call.NOT_MEASURED, m)


@dataclass(frozen=True)
class MachineGain:
    """A machine's default workload taken from PyTorch's defaults to its fastest measured
    configuration (``judge.gains``)."""

    machine: Machine
    gain: Gain


def machine_gains(facts: Facts, columns: tuple[Machine, ...]
                  ) -> tuple[tuple[MachineGain, ...], tuple[MachineGain, ...]]:
    """The default workload's gain of each machine of ``columns`` that measured it another
    way, and every workload's, in the columns' order (then training, the largest batch)."""
    cells = facts.current(facts.analysis.cells)
    pages = {m.page for m in columns}  # the others' gains are not shown: not worked out
    found = gains(cells.loc[cells["page"].astype(str).isin(pages)] if len(cells) else cells)
    picked = ((m, default_first([g for g in found if g.page == m.page])) for m in columns)
    every = (MachineGain(m, g) for m in columns for g in sorted(
        (g for g in found if g.page == m.page),
        key=lambda g: (g.mode != "train", -g.batch_size, g.model, g.shapes != "static")))
    return tuple(MachineGain(m, g) for m, g in picked if g is not None), tuple(every)


#: The grid's most columns: past ``EVERY_ONE_UP_TO`` current fingerprints it gives one per
#: hardware model (``representatives``), and never more than this many.
GRID_COLUMNS = EVERY_ONE_UP_TO


def grid_columns(machines: Sequence[Machine], cells: pd.DataFrame) -> tuple[Machine, ...]:
    """The grid's columns among the current fingerprints ``machines`` (``representatives``),
    at most ``GRID_COLUMNS``, in the grid's order: the reader's own, the GPUs, the rest."""
    shown = representatives(machines, cells)
    ordered = sorted((m for m in machines if m.page in shown),
                     key=lambda m: (not m.yours, not m.gpu, m.page))
    return tuple(ordered[:GRID_COLUMNS])


def grid(facts: Facts) -> Grid:
    """Every topic on the current machines ``grid_columns`` picks (see :class:`Grid`)."""
    current = [m for k, m in facts.machines.items() if k not in facts.superseded]
    columns = grid_columns(current, facts.analysis.cells)
    rows = tuple(_grid_row(topic, frame, facts, columns)
                 for topic, frame in _frames(facts).items())
    return Grid(columns, rows, len(current) - len(columns))


def _grid_row(topic: Topic, frame: pd.DataFrame, facts: Facts, columns: tuple[Machine, ...]
              ) -> GridRow:
    """One topic on every machine, its rows split by machine once: a mask over every row per
    machine was most of the home page's time on a tree of many machines."""
    empty = frame.iloc[:0]
    on = ({str(k): g for k, g in frame.groupby(frame["page"].astype(str), sort=False)}
          if len(frame) and "page" in frame.columns else {})
    devices = _devices(frame)
    return GridRow(topic, tuple(_cell(topic, on.get(m.page, empty), facts, m, devices)
                                for m in columns))


@dataclass(frozen=True)
class DecisionSection:
    """One setting's rows of the decision table: the regimes decided, and the rest."""

    setting: str
    decided: tuple[Regime, ...]
    undecided: tuple[Regime, ...]  # too few ok replicates to decide


@dataclass(frozen=True)
class CompileCounts:
    """How many eager-against-compiled pairs the current fingerprints hold, by verdict."""

    pairs: int
    machines: int
    verdicts: Mapping[Verdict, int]  # only the verdicts that occur


def compile_counts(facts: Facts) -> CompileCounts:
    """The compile pairs of the current fingerprints, counted by verdict."""
    costs = facts.current(facts.analysis.compiled)
    if costs.empty:
        return CompileCounts(0, 0, {})
    counts = costs["verdict"].value_counts()
    order = (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT)
    return CompileCounts(len(costs), int(costs["page"].nunique()),
                         {v: int(counts[v]) for v in order if v in counts})


@dataclass(frozen=True)
class HomePage:
    grid: Grid
    gains: tuple[MachineGain, ...]  # from the default to the fastest, per machine
    every_gain: tuple[MachineGain, ...]  # the same for every workload measured two ways
    headlines: tuple[Headline, ...]
    decisions: tuple[DecisionSection, ...]  # only the settings measured
    unmeasured: tuple[str, ...]  # the decision table's settings with no comparison at all
    n_machines: int  # current fingerprints
    n_rows: int  # their result rows
    superseded: tuple[Machine, ...]
    outdated: tuple[Machine, ...]  # current fingerprints measured under an older step only
    claims: Mapping[ClaimVerdict, int]  # claims per verdict, every verdict present
    compiled: CompileCounts = field(repr=False)
    sources: tuple[Machine, ...] = ()  # every current fingerprint
    trust: Mapping[Trust, int] = field(default_factory=dict)  # current fingerprints by trust


def _decisions(facts: Facts) -> list[DecisionSection]:
    out = []
    for setting in DECISION_SETTINGS:
        mine = [g for g in facts.current_regimes if g.main.setting == setting]
        if mine:
            out.append(DecisionSection(
                setting,
                tuple(g for g in mine if g.main.action != Action.INSUFFICIENT),
                tuple(g for g in mine if g.main.action == Action.INSUFFICIENT)))
    return out


def home_page(facts: Facts) -> HomePage:
    decisions = _decisions(facts)
    measured = {d.setting for d in decisions}
    results = facts.analysis.source.results
    old = [facts.machines[p].fingerprint_id for p in facts.superseded]
    table = grid(facts)
    first, every = machine_gains(facts, table.columns)
    return HomePage(
        grid=table,
        gains=first,
        every_gain=every,
        headlines=headlines(facts),
        decisions=tuple(decisions),
        unmeasured=tuple(s for s in DECISION_SETTINGS if s not in measured),
        n_machines=len(facts.machines) - len(facts.superseded),
        n_rows=int((~results["fingerprint_id"].isin(old)).sum()),
        superseded=tuple(facts.machines[k] for k in sorted(facts.superseded)),
        outdated=tuple(m for m in facts.machines.values() if m.outdated),
        claims=count_verdicts(facts.claims),
        compiled=compile_counts(facts),
        sources=tuple(m for k, m in facts.machines.items() if k not in facts.superseded),
        trust=count_trust(m.trust for k, m in facts.machines.items() if k not in facts.superseded),
    )
