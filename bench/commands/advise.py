"""``python -m bench advise MODEL``: which knobs should I turn on, for my model, on this machine?

It plans a small study of one model: a baseline cell with every default and one variant per
knob that applies here (``bench.run.plan.knobs``), fitted to ``--budget`` with the runner's own
estimate (fed the probe's FLOP count of the model, so it is not a guess). It runs that study as
a normal run (the fork server, one fresh process per replicate, the same CSVs under
``reports/``, a run ``bench report`` shows beside the others), then loads the run with the
report's loader and prints, per knob, the report's own verdict (``bench.report.judge.asks``).

Why this module sits beside the CLI: it is the one command that uses both sides, and neither
side may import the other (``bench.run`` never imports the report, ``bench.report`` never torch
or ``bench.run``). The measuring box may lack the report's dependencies, so they are checked
first, before any of the budget is spent, and the command refuses with one line that names them
and the way around (``bench run`` here, ``bench report`` elsewhere).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bench import schema
from bench.commands import feed
from bench.commands.exits import fail as _fail
from bench.report.vocabulary import KnobStatus, Verdict
from bench.run.execute import probe as probing
from bench.run.execute import session
from bench.run.execute.launch import Launcher
from bench.run.plan import estimate, knobs, learned, matrix, modelspec, usermodels
from bench.run.plan.budget import BudgetError, parse_duration
from bench.run.plan.knobs import Knob
from bench.run.plan.learned import CellCost
from bench.run.plan.matrix import Cell
from bench.run.protocol import ModelCheck, Probe
from bench.run.store import check

#: What the verdicts need beyond the standard library: the report extra's statistics part.
REPORT_NEEDS = ("numpy", "pandas", "scipy")
INSTALL_HINT = "pip install 'torch-knobs[report]'"
#: Seconds kept back from the budget for loading the run and computing the verdicts.
REPORT_RESERVE_S = 5.0
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``advise`` sub-command's options."""
    parser.add_argument("model", help=f"a torchvision model name or your own model "
                        f"({modelspec.FORMS})")
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        help="where to measure (default: cuda when present, else cpu)")
    parser.add_argument("--mode", choices=schema.AXIS_CHOICES["mode"], default="train",
                        help="inference or a training step (default: train)")
    parser.add_argument("--batch-size", type=int, default=16,
                        help="samples per step (default: 16)")
    parser.add_argument("--input-shape", default=None, metavar="C,H,W",
        help=f"one sample's shape (default: "
             f"{modelspec.shape_text(modelspec.DEFAULT_INPUT_SHAPE)})")
    parser.add_argument("--inputs", default="", metavar="SPEC",
                        help="a callable (batch_size, device) -> tensor or tuple of tensors, "
                             "for inputs that are not one C,H,W image (replaces --input-shape)")
    parser.add_argument("--loss", default="", metavar="SPEC",
                        help="a callable (output, batch) -> scalar tensor for --mode train "
                             "(default: cross-entropy on 2-D logits, else the output's mean)")
    parser.add_argument("--shapes", choices=("static", "dynamic"), default="static",
                        help=f"one input shape, or {DYNAMIC_SHAPES} cycled resolutions")
    parser.add_argument("--steps", type=int, default=10_000,
                        help="your job's length in steps, for the break-even (default 10000)")
    parser.add_argument("--knobs", default="", metavar="NAME,...",
                        help="weigh only these knobs (default: every one): "
                             + ", ".join(k.name for k in knobs.KNOBS))
    parser.add_argument("--budget", default="5m", metavar="DURATION",
                        help="wall-clock budget for the whole command: 90s, 5m, 1h, or a "
                             "number of seconds (default 5m)")
    parser.add_argument("--json", action="store_true",
                        help="print the verdicts as a JSON list on stdout (and nothing else)")
    parser.add_argument("--out", help="run directory (default: REPORTS/<machine>/<run-id>)")
    parser.add_argument("--reports", default="reports", help="root of the results tree")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan and its estimate, measure nothing")
    parser.add_argument("--write-profile", metavar="PATH",
                        help="write the planned study to PATH as a profile for "
                             "`python -m bench run --profile PATH` (implies --dry-run; for a "
                             "box without the report extra)")
    parser.add_argument("--images", metavar="DIR", default=None,
                        help="instead of the knobs: how many DataLoader workers the model "
                             "needs here to be fed your JPEGs in DIR (torchvision's ImageNet "
                             "reference recipe for --mode)")
    parser.add_argument("--launcher", choices=("forkserver", "spawn"), default="forkserver",
                        help=argparse.SUPPRESS)


def request_of(args: argparse.Namespace) -> Request:
    """The arguments checked one by one; AdviseError names the first bad one."""
    for name, value in (("--batch-size", args.batch_size), ("--steps", args.steps)):
        if value < 1:
            raise AdviseError(f"{name} must be a positive integer, got {value}")
    try:
        budget_s = parse_duration(args.budget)
    except BudgetError as exc:
        raise AdviseError(str(exc)) from None
    try:
        if modelspec.is_user_model(args.model):
            modelspec.check_axis("model", args.model)
        for name in ("inputs", "loss"):
            if getattr(args, name):
                modelspec.check_axis(name, getattr(args, name))
        shape = modelspec.check_axis("input_shape", args.input_shape or modelspec.shape_text(
            modelspec.DEFAULT_INPUT_SHAPE))
    except modelspec.SpecError as exc:
        raise AdviseError(str(exc).replace("input_shape ", "--input-shape ", 1)) from None
    if args.inputs and args.input_shape is not None:
        raise AdviseError("--inputs replaces --input-shape (its callable makes the whole "
                          "batch); give one of them")
    if args.inputs and args.shapes == "dynamic":
        raise AdviseError("--shapes dynamic cycles image resolutions, so it needs "
                          "--input-shape, not --inputs; valid choices with --inputs: static")
    c, h, w = modelspec.parse_input_shape(shape)
    if not modelspec.is_user_model(args.model) and (c != 3 or h != w or args.inputs or
                                                    args.loss):
        raise AdviseError(f"{args.model} is a torchvision model: it takes 3,R,R images, "
                          f"without --inputs or --loss; name your own model as "
                          f"{modelspec.FORMS} for anything else")
    return Request(args.model, args.device, args.mode, args.batch_size, shape, args.inputs,
                   args.loss, args.shapes, args.steps, budget_s,
                   knobs_of(getattr(args, "knobs", "")))


def knobs_of(text: str) -> tuple[str, ...]:
    """``--knobs a,b``: the names, each a knob's (AdviseError names the first that is not)."""
    names = tuple(dict.fromkeys(n.strip() for n in (text or "").split(",") if n.strip()))
    valid = [k.name for k in knobs.KNOBS]
    for name in names:
        if name not in valid:
            raise AdviseError(f"--knobs: unknown knob {name!r}; valid choices: "
                              f"{', '.join(valid)}")
    if text and not names:
        raise AdviseError(f"--knobs names no knob; valid choices: {', '.join(valid)}")
    return names


def _profile(req: Request, device: str, changes: Sequence[dict[str, Any]], replicates: int,
             timeout_s: float) -> matrix.Profile:
    """The advise study as a profile, so the matrix checks and normalises it like any other:
    one baseline cell with every default, then one variant cell per change."""
    try:
        return matrix.parse_profile(profile_data(req, device, changes, replicates, timeout_s),
                                    "advise")
    except matrix.ProfileError as exc:
        raise AdviseError(str(exc).removeprefix("advise [defaults]: ")) from None


def profile_data(req: Request, device: str, changes: Sequence[dict[str, Any]],
                 replicates: int, timeout_s: float) -> dict[str, Any]:
    """The study as a profile's TOML tables (``_profile`` parses them; ``--write-profile``
    writes them for ``bench run``)."""
    inputs: dict[str, Any] = {"inputs": req.inputs} if req.inputs else {
        "input_shape": req.input_shape}
    if req.loss:
        inputs["loss"] = req.loss
    defaults = {**SETTINGS, "replicates": replicates, "timeout_s": timeout_s, "device": device,
                "model": req.model, "mode": req.mode, "batch_size": req.batch_size,
                "shapes": req.shapes, "shape_count": DYNAMIC_SHAPES, **inputs}
    return {"profile": {"description": f"bench advise {req.model}"}, "defaults": defaults,
            "studies": {"advise": {"description": "A baseline with every default, and one "
                                   "knob turned per variant.",
                                   "variants": [{}, *(dict(c) for c in changes)]}}}


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
    profile = _profile(req, device, changes, fitted.replicates, timeout)
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
                profile_data(req, device, changes, fitted.replicates, timeout))


def missing_report_extra() -> list[str]:
    """The report extra's statistics modules that do not import here."""
    missing = []
    for name in REPORT_NEEDS:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def cmd_advise(args: argparse.Namespace, launcher_of: Callable[[str], Launcher],
               clock: Callable[[], float] = time.monotonic) -> int:
    """The whole command; ``launcher_of`` is the CLI's (a test may pass its own)."""
    start = clock()
    dry_run = bool(args.dry_run or args.write_profile)
    missing = [] if dry_run else missing_report_extra()  # a plan needs no statistics
    if missing:
        return _fail(f"advise computes its verdicts with the report's statistics, which need "
                     f"{', '.join(missing)} (not installed here): {INSTALL_HINT}; or add "
                     f"`--write-profile advise.toml` to this command, measure here with "
                     f"`python -m bench run --profile advise.toml` and build the report where "
                     f"the report extra is installed with `python -m bench report`")
    if getattr(args, "images", None) is not None:
        return feed.cmd_feed(args, launcher_of, clock)
    try:
        req = request_of(args)
        if args.write_profile and Path(args.write_profile).exists():
            raise AdviseError(f"--write-profile {args.write_profile} already exists; choose "
                              f"another path")
    except AdviseError as exc:
        return _fail(str(exc))
    with launcher_of(args.launcher) as launcher:
        try:
            with probing.probe_folder() as tmp:
                probe = probing.probe(launcher, tmp, models=req.checks())
                probe = probing.paced(launcher, tmp, probe, Path(args.reports),
                                      asked_cells(req, probe))
            advice_plan = plan(req, probe, req.budget_s - (clock() - start) - REPORT_RESERVE_S,
                               learned.history(Path(args.reports), probe.env))
            bound, jobs = session.planned(advice_plan.profile, probe)
        except (RuntimeError, AdviseError, matrix.ProfileError) as exc:
            return _fail(str(exc))
        cells = bound.studies[0].cells
        if advice_plan.short:
            print(f"note: {advice_plan.short}", file=sys.stderr)
        if dry_run:
            print_plan(req, advice_plan, cells, probe, args.json)
            if args.write_profile:
                try:
                    with open(args.write_profile, "x", encoding="utf-8") as f:
                        f.write(profile_toml(advice_plan))
                except OSError as exc:
                    return _fail(f"--write-profile {args.write_profile}: "
                                 f"{exc.strerror or exc}")
                print(f"wrote {args.write_profile}: measure it with `python -m bench run "
                      f"--profile {args.write_profile}`", file=sys.stderr)
            return 0
        try:
            out, ended = session.run_new(bound, probe, jobs, launcher,
                                         reports=Path(args.reports), out=args.out,
                                         command="advise")
        except session.SessionError as exc:
            return _fail(str(exc))
    print(session.summary(ended.code, ended.counts, out), file=sys.stderr)
    for line in check.ending_lines(out):
        print(line, file=sys.stderr)
    if ended.code:
        return ended.code
    entries = verdicts_of(req, advice_plan, cells, out)
    elapsed = clock() - start
    if elapsed > req.budget_s:
        print(f"note: this took {elapsed:.0f} s, over the --budget of {req.budget_s:g} s (the "
              f"plan's estimate was {advice_plan.estimate_s:.0f} s of measuring); the "
              f"estimate is rough, see bench/run/plan/estimate.py", file=sys.stderr)
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        print_verdicts(req, advice_plan, entries, out, elapsed)
    if not any(e["n_base"] for e in entries if e["status"] in (KnobStatus.MEASURED,
                                                             KnobStatus.INSUFFICIENT)):
        print(f"error: no replicate of the baseline ran ok, so no knob could be judged; the "
              f"rows in {out} say why", file=sys.stderr)
        return 1
    return 0


# -- after the run: the report's verdicts ----------------------------------------------------


def verdicts_of(req: Request, p: Plan, cells: Sequence[matrix.Cell], out: Path
                ) -> list[dict[str, Any]]:
    """One entry per knob: the report's verdict of its pair, read from the run's rows as
    written, or why it was not measured (measured knobs first, each group in ``knobs.KNOBS``
    order)."""
    from bench.report.input import load
    from bench.report.judge import asks as judged_pairs

    baseline, variants = cells[0], cells[1:]
    pairs = [judged_pairs.Ask(k.name, k.axis, *((c.cell_id, baseline.cell_id) if k.reverse else
                                           (baseline.cell_id, c.cell_id)))
            for k, c in zip(p.measured, variants)]
    judged = {v.knob: asdict(v) for v in judged_pairs.judge(load.load_reports(out), pairs,
                                                                req.steps)}
    names = [f.name for f in dataclasses.fields(judged_pairs.KnobAnswer) if f.name != "knob"]
    entries = []
    for k in req.asked():
        entry = judged.get(k.name) or {**dict.fromkeys(names), "status": (
            KnobStatus.NOT_IN_BUDGET if p.not_measured[k.name] == KnobStatus.NOT_IN_BUDGET
            else KnobStatus.SKIPPED),
            "reason": p.not_measured[k.name], "steps": req.steps, "caveats": []}
        entries.append({"knob": k.name, "what": k.what, "model": req.model,
                        "device": p.device, **_plain(entry), "run": str(out)})
    order = list(KnobStatus)
    return sorted(entries, key=lambda e: order.index(e["status"]))


def _plain(entry: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe: no NaN or infinity (a break-even of "never" is ``never_pays_back``)."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        out[key] = list(value) if isinstance(value, tuple) else value
    never = entry.get("break_even_steps")
    out["never_pays_back"] = isinstance(never, float) and math.isinf(never)
    return out


def print_plan(req: Request, p: Plan, cells: Sequence[matrix.Cell], probe: Probe,
               as_json: bool, stream: TextIO | None = None) -> None:
    """``--dry-run``: the cells, the replicates, the estimate, and the knobs left out (on
    ``stream``, standard output by default)."""
    stream = stream or sys.stdout
    names = ["baseline", *(k.name for k in p.measured)]
    if as_json:
        rows = [{"knob": n, "status": KnobStatus.PLANNED, "cell_id": c.cell_id, "cell": c.name,
                 "replicates": p.replicates, "estimate_s": p.per_replicate_s[n] * p.replicates}
                for n, c in zip(names, cells)]
        rows += [{"knob": n, "status": KnobStatus.NOT_IN_BUDGET if why == KnobStatus.NOT_IN_BUDGET
                  else KnobStatus.SKIPPED,
                  "reason": why} for n, why in p.not_measured.items()]
        print(json.dumps(rows, indent=2), file=stream)
        return
    print(f"advise {req.model} on {probe.machine or '?'} ({p.device}, {req.mode}, "
          f"batch {req.batch_size}, {req.shapes} shapes): {p.replicates} replicates per cell, "
          f"estimated {p.estimate_s:.0f} s of measuring in a budget of {req.budget_s:g} s",
          file=stream)
    for name, cell in zip(names, cells):
        print(f"  {name:<20} {cell.cell_id}  ~{p.per_replicate_s[name]:.1f} s a replicate  "
              f"{cell.name}", file=stream)
    for name, why in p.not_measured.items():
        print(f"  {name:<20} {why}", file=stream)


def profile_toml(p: Plan) -> str:
    """The planned study as a profile file: the same cells (and so the same cell ids) and
    stopping settings, for ``bench run`` on a box that cannot compute the verdicts."""
    lines = ["# the study `python -m bench advise` planned (--write-profile); measure it with "
             "`python -m bench run --profile PATH`"]

    def table(header: str, values: dict[str, Any]) -> None:
        lines.extend(["", header])
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in values.items()
                     if not isinstance(v, (dict, list)))

    for name, values in p.tables.items():
        if name != "studies":
            table(f"[{name}]", values)
    for study, spec in p.tables["studies"].items():
        table(f"[studies.{study}]", spec)
        for variant in spec.get("variants", []):
            table(f"[[studies.{study}.variants]]", variant)
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    """A scalar as TOML: a basic string with its quotes, backslashes and control characters
    escaped, or a number (a profile holds nothing else)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    out = []
    for ch in str(value):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def print_verdicts(req: Request, p: Plan, entries: Sequence[dict[str, Any]], out: Path,
                   elapsed_s: float, stream: TextIO | None = None) -> None:
    """The verdicts for a reader: one line per knob, measured or not, and where the rows are
    (on ``stream``, standard output by default)."""
    stream = stream or sys.stdout
    from bench.report import fmt
    from bench.report.render.words import caveats

    print(f"{req.model} on {p.device}, {req.mode}, batch {req.batch_size}, {req.shapes} shapes: "
          f"{p.replicates} replicates per cell, {elapsed_s:.0f} s", file=stream)
    head = ("knob", "recommendation", "speedup (95% CI)", "verdict", "cold cost",
            f"break-even (job: {fmt.iterations(req.steps)} steps)", "memory")
    rows = [head]
    for e in entries:
        if e["status"] in (KnobStatus.SKIPPED, KnobStatus.NOT_IN_BUDGET):
            rows.append((e["knob"], e["reason"], "", "", "", "", ""))
            continue
        speed = fmt.ratio(e["speedup"]) + (
            f" ({fmt.ci(e['ci_low'], e['ci_high'])})" if e["ci_low"] is not None else "")
        speed += breaks_text(e)
        if e["never_pays_back"]:  # in the worst case the interval allows; say why
            pays = {Verdict.SLOWER: "never (slower)", Verdict.FASTER: "never"}.get(
                e["verdict"], "no clear saving to repay it")
        elif e["break_even_steps"] is None:
            pays = fmt.MISSING
        elif e["break_even_steps"] <= 0:
            pays = "at once (no dearer first pass)"
        else:
            pays = (f"after {fmt.iterations(e['break_even_steps'])} steps"
                    + ("" if e["pays_back"] else ": longer than the job"))
        verdict = e["reason"] if e["status"] == KnobStatus.INSUFFICIENT else e["verdict"]
        rows.append((e["knob"], e["recommendation"], speed, verdict,
                     fmt.signed_seconds(e["cold_cost_s"]), pays,
                     caveats.memory_change(e["memory_change_bytes"],
                                           e.get("memory_change_share"))))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip(), file=stream)
    for e in entries:  # what the JSON carries beside the figures, so the table hides nothing
        for code in e.get("caveats") or ():
            text = caveats.caveat_text(code, e.get("memory_change_bytes"),
                                       e.get("memory_change_share"))
            print(f"note on {e['knob']}: {text}", file=stream)
        for line in break_notes(e):
            print(f"note on {e['knob']}: {line}", file=stream)
    print(f"results: {out} (python -m bench report puts them on the site beside the others)",
          file=stream)


def breaks_text(e: dict[str, Any]) -> str:
    """``, 2 graph breaks``: a compiled knob's breaks beside its speedup (empty for the
    others, and where this torch did not count them)."""
    n = e.get("graph_breaks")
    if n is None:
        return ""
    return f", {n} graph break{'s' if n != 1 else ''}" if n else ", no graph break"


def break_notes(e: dict[str, Any]) -> list[str]:
    """What a compiled knob's breaks were, in torch's words, and torch's hint for each kind;
    and, where they likely explain a small gain, that they do."""
    if not e.get("graph_breaks"):
        return []
    graphs = e.get("graphs")
    where = f" into {graphs} graphs" if graphs else ""
    lines = [f"the model broke{where}: " + "; ".join(e.get("graph_break_reasons") or ())]
    if e.get("breaks_explain"):
        lines.append("the graph breaks are the likely reason compiling gained little: each "
                     "splits the model into separately compiled graphs")
    lines += [f"to remove one: {hint}" for hint in e.get("break_hints") or ()]
    return lines
