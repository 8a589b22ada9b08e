"""What ``bench advise MODEL`` measures: a small study of one model, fitted to its budget.

A baseline cell with every default and one variant per knob that applies here
(``bench.run.plan.knobs``), as a profile the matrix checks like any other, and as many of those
knobs as ``--budget`` holds by the runner's own estimate (fed the probe's FLOP count of the
model, so it is not a guess) and what such cells cost on this kind of machine before. Apart
from the command (``bench.commands.advise``) so that each reads in one sitting: this half
decides what to run, that one asks, runs it and says what it found.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.report.vocabulary import KnobStatus
from bench.run.plan import estimate, knobs, matrix, modelspec, profiles, usermodels
from bench.run.plan.knobs import Knob
from bench.run.plan.learned import CellCost
from bench.run.plan.matrix import Cell
from bench.run.protocol import ModelCheck, Probe

#: How advise measures each replicate: a short steady state of a bounded length. The verdict is
#: over replicates (each one's median is one value of the bootstrap), so a replicate gains
#: little from running on until its own interval is tight, and a budget needs a bound.
SETTINGS: dict[str, Any] = {"warmup_iters": 2, "min_iters": 10, "min_time_s": 0.5,
                            "max_iters": 1000, "max_time_s": 1.0, "ci_target": 0.03}
#: A replicate may run this many times its estimate (but at least ``MIN_TIMEOUT_S``) before
#: it is ended as a timeout.
TIMEOUT_FACTOR = 5.0
MIN_TIMEOUT_S = 30.0
#: Distinct resolutions a ``--shapes dynamic`` schedule cycles through.
DYNAMIC_SHAPES = 3
#: The comparisons whose switch changes the arithmetic or its order, which the report judges
#: beside the speed by the numerics check (its ``analysis.numerics.NUMERIC_AXES``; the report
#: is not imported here, and a test keeps the two equal). A plan that measures a knob of one
#: runs the check in every replicate of its study (``numerics = true``): the baseline's own is
#: what the TF32 knob, read from the other side, reports.
NUMERIC_AXES = ("precision", "memory_format", "compile", "cudnn_deterministic")


def checks_numerics(measured: Sequence[Knob]) -> bool:
    """Whether the study runs the numerics check: where some knob it measures is judged by
    it."""
    return any(k.axis in NUMERIC_AXES for k in measured)


class AdviseError(Exception):
    """A request advise cannot carry out; the message is one line, and nothing was written."""


@dataclass(frozen=True)
class Request:
    """What the user asked: one model, one workload, one job length, one budget."""

    model: str
    device: str | None
    mode: str
    batch_size: int
    input_shape: str
    inputs: str
    loss: str
    shapes: str
    steps: int
    budget_s: float
    knobs: tuple[str, ...] = ()  # the knobs asked about (``--knobs``); empty: every one

    def asked(self) -> tuple[Knob, ...]:
        """The knobs to weigh, in priority order."""
        return tuple(k for k in knobs.KNOBS if not self.knobs or k.name in self.knobs)

    def checks(self) -> list[ModelCheck]:
        """What the probe must check before anything is planned: the user's model at every
        input shape its schedule feeds (``--shapes dynamic`` cycles three), as ``bench run``
        checks a profile's; none for a torchvision model."""
        if not modelspec.is_user_model(self.model):
            return []
        base = _profile(self, self.device or "cpu", [], 1, MIN_TIMEOUT_S)
        return usermodels.checks(base.studies[0].cells)


@dataclass(frozen=True)
class Plan:
    """The study that fits: the profile to run, the knobs it measures (in the order of its
    variant cells), and why every other knob is not measured."""

    device: str
    profile: matrix.Profile
    measured: tuple[Knob, ...]
    not_measured: dict[str, str]  # knob → "skipped: …" or "not in budget"
    replicates: int
    estimate_s: float
    per_replicate_s: dict[str, float] = field(default_factory=dict)  # "baseline" and knobs
    #: Set when the budget holds fewer replicates than a verdict needs: what it would take.
    short: str = ""
    #: ``profile`` as TOML tables, for ``--write-profile``
    tables: dict[str, Any] = field(default_factory=dict)


def _profile(req: Request, device: str, changes: Sequence[dict[str, Any]], replicates: int,
             timeout_s: float, numerics: bool = False) -> matrix.Profile:
    """The advise study as a profile, so the matrix checks and normalises it like any other:
    one baseline cell with every default, then one variant cell per change."""
    try:
        return profiles.parse_profile(profile_data(req, device, changes, replicates, timeout_s,
                                                   numerics), "advise")
    except matrix.ProfileError as exc:
        raise AdviseError(str(exc).removeprefix("advise [defaults]: ")) from None


def profile_data(req: Request, device: str, changes: Sequence[dict[str, Any]],
                 replicates: int, timeout_s: float, numerics: bool = False) -> dict[str, Any]:
    """The study as a profile's TOML tables (``_profile`` parses them; ``--write-profile``
    writes them for ``bench run``), with the numerics check where ``numerics``."""
    inputs: dict[str, Any] = {"inputs": req.inputs} if req.inputs else {
        "input_shape": req.input_shape}
    if req.loss:
        inputs["loss"] = req.loss
    defaults = {**SETTINGS, "replicates": replicates, "timeout_s": timeout_s, "device": device,
                "model": req.model, "mode": req.mode, "batch_size": req.batch_size,
                "shapes": req.shapes, "shape_count": DYNAMIC_SHAPES, **inputs}
    study: dict[str, Any] = {"description": "A baseline with every default, and one knob "
                             "turned per variant.", "variants": [{}, *(dict(c) for c in changes)]}
    if numerics:
        study["numerics"] = True
    return {"profile": {"description": f"bench advise {req.model}"}, "defaults": defaults,
            "studies": {"advise": study}}


def _info(probe: Probe, req: Request) -> tuple[int | None, float | None]:
    """The model's input dimensions and forward FLOPs per sample, as the probe found them."""
    for info in probe.user_models:
        if info.check.model == req.model:
            return info.input_ndim, info.flops_per_sample
    return 4, None  # a torchvision model: an image batch, FLOPs from the estimate's table


def _candidates(req: Request, probe: Probe
                ) -> tuple[str, dict[str, str], list[Knob], matrix.Profile]:
    """The device, why each knob asked for does not apply (empty where it does), the knobs
    that do, and the profile measuring all of them; AdviseError where none applies."""
    device = req.device or ("cuda" if probe.cuda else "cpu")
    if device == "cuda" and not probe.cuda:
        raise AdviseError("--device cuda: torch finds no CUDA device here; valid choices: cpu")
    ndim, _ = _info(probe, req)
    asked = req.asked()
    reasons = {k.name: knobs.skip_reason(k, device, probe, ndim, probe.cores) for k in asked}
    candidates = [k for k in asked if not reasons[k.name]]
    if not candidates:
        raise AdviseError(f"no knob asked for applies here: "
                          f"{'; '.join(f'{n} {why}' for n, why in reasons.items())}")
    full = _profile(req, device, [dict(k.change) for k in candidates], knobs.REPLICATES,
                    MIN_TIMEOUT_S)
    try:
        matrix.check_models(full, probe.models)  # before any estimate: a name it lacks
    except matrix.ProfileError as exc:
        raise AdviseError(str(exc)) from None
    return device, reasons, candidates, full


def asked_cells(req: Request, probe: Probe) -> tuple[Cell, ...]:
    """Every cell the advice may measure here: the baseline and each knob that applies."""
    return tuple(_candidates(req, probe)[3].studies[0].cells)


def plan(req: Request, probe: Probe, budget_left_s: float,
         costs: Mapping[str, CellCost] | None = None) -> Plan:
    """The knobs that apply here, and as many of them as the budget holds (``knobs.fit``,
    the planner ``bench run --budget`` uses); ``costs``: what the cells cost on this kind of
    machine before (``learned.history``), which replace the guesses where there are some."""
    device, reasons, candidates, full = _candidates(req, probe)
    cores = probe.cores
    study = full.studies[0]
    cells = dict(zip(["baseline", *(k.name for k in candidates)], study.cells))
    # the longest a replicate may run: a noisy one goes on to max_time_s
    longest = dataclasses.replace(study.settings, min_time_s=study.settings.max_time_s)
    cost = {name: estimate.replicate_s(cell, longest, cores, False,
                                       usermodels.flops_for(probe, cell),
                                       (costs or {}).get(cell.cell_id))
            for name, cell in cells.items()}
    if checks_numerics(candidates):  # once per cell, in its first replicate
        for name, cell in cells.items():  # (Settings.checks_numerics): spread over a verdict's
            cost[name] += estimate.numerics_s(cell, cores, usermodels.flops_for(
                probe, cell)) / knobs.REPLICATES
    fitted = knobs.fit(cost["baseline"], [(k.name, cost[k.name]) for k in candidates],
                       budget_left_s)
    if fitted is None:
        need = knobs.cheapest_s(cost["baseline"], [(k.name, cost[k.name]) for k in candidates])
        raise AdviseError(f"--budget {req.budget_s:g} s leaves {max(budget_left_s, 0):.0f} s to "
                          f"measure, and one replicate of the baseline and one knob needs "
                          f"~{need:.0f} s here; allow at least "
                          f"{math.ceil(req.budget_s - budget_left_s + need)} s")
    measured = tuple(k for k in candidates if k.name in fitted.knobs)
    timeout = max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * max(cost.values()))
    changes = [dict(k.change) for k in measured]
    numerics = checks_numerics(measured)
    profile = _profile(req, device, changes, fitted.replicates, timeout, numerics)
    not_measured = {name: why for name, why in reasons.items() if why}
    not_measured.update(dict.fromkeys(fitted.left_out, KnobStatus.NOT_IN_BUDGET))
    short = ""
    if fitted.replicates < knobs.REPLICATES:
        need = knobs.REPLICATES * knobs.cheapest_s(
            cost["baseline"], [(k.name, cost[k.name]) for k in candidates])
        short = (f"--budget {req.budget_s:g} s holds {fitted.replicates} replicate(s) per cell, "
                 f"and a verdict needs {knobs.REPLICATES}: every knob will read "
                 f"'insufficient'; allow at least "
                 f"{math.ceil(req.budget_s - budget_left_s + need)} s for one knob's verdict")
    return Plan(device, profile, measured, not_measured, fitted.replicates, fitted.estimate_s,
                {n: s for n, s in cost.items() if n == "baseline" or n in fitted.knobs}, short,
                profile_data(req, device, changes, fitted.replicates, timeout, numerics))
