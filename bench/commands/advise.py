"""``python -m bench advise MODEL``: which knobs should I turn on, for my model, on this machine?

It plans a small study of one model (``bench.commands.advise_plan``: a baseline cell with every
default and one variant per knob that applies here, fitted to ``--budget`` with the runner's
own estimate). It runs that study as a normal run (``bench.commands.measure``: the fork server,
one fresh process per replicate, the same CSVs under ``reports/``, a run ``bench report`` shows
beside the others), then loads the run with the report's loader and prints, per knob, the
report's own verdict (``bench.report.judge.asks``). ``--images`` asks another question of the
same model, in the same kind of run (``bench.commands.feed``).

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
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from bench import schema
from bench.commands import feed, unmeasured
from bench.commands.advise_plan import (
    DYNAMIC_SHAPES,
    AdviseError,
    Plan,
    Request,
    asked_cells,
    plan,
)
from bench.commands.base import Command
from bench.commands.exits import fail as _fail
from bench.commands.measure import Measured, Planned, measure
from bench.report.vocabulary import KnobStatus, Verdict
from bench.run.execute import launch, session
from bench.run.execute import probe as probing
from bench.run.execute.launch import Launcher
from bench.run.plan import knobs, learned, matrix, modelspec
from bench.run.plan.budget import BudgetError, parse_duration
from bench.run.protocol import Probe
from bench.run.store import check

#: What the verdicts need beyond the standard library: the report extra's statistics part.
REPORT_NEEDS = ("numpy", "pandas", "scipy")
INSTALL_HINT = "pip install 'torch-knobs[report]'"
#: Seconds kept back from the budget for loading the run and computing the verdicts.
REPORT_RESERVE_S = 5.0


class AdviseCommand(Command):
    """One model's knobs, measured here and judged as the report judges them; with
    ``--images``, the loader workers it needs instead (``feed``)."""

    name = "advise"
    help = ("which knobs to turn on for one model (yours: pkg.module:factory or "
            "file.py:factory), measured here")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
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

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        return cmd_advise(args, launch.by_name)  # looked up now: a test may swap the launcher


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
    done = measure(args, launcher_of, partial(_plan, args, req, start, clock),
                   partial(_ahead, args, req), refusals=(AdviseError,))
    if isinstance(done, int):
        return done
    for line in check.ending_lines(done.out):
        print(line, file=sys.stderr)
    if done.ended.code:
        unmeasured.say(done.out, unmeasured.ADVISE)
        return done.ended.code
    return _answer(args, req, done, start, clock)


def _plan(args: argparse.Namespace, req: Request, start: float, clock: Callable[[], float],
          launcher: Launcher) -> Planned[Plan]:
    """The probe (the model checked, the sitting's pace measured), then the knobs that fit
    in what is left of the budget, less the time the verdicts take."""
    with probing.probe_folder() as tmp:
        probe = probing.probe(launcher, tmp, models=req.checks())
        probe = probing.paced(launcher, tmp, probe, Path(args.reports), asked_cells(req, probe))
    advice_plan = plan(req, probe, req.budget_s - (clock() - start) - REPORT_RESERVE_S,
                       learned.history(Path(args.reports), probe.env))
    return Planned(*session.planned(advice_plan.profile, probe), probe, advice_plan)


def _ahead(args: argparse.Namespace, req: Request, planned: Planned[Plan]) -> int | None:
    """Before measuring: a budget too short for a verdict is said first; ``--dry-run`` and
    ``--write-profile`` end here, with the plan (and the profile file) instead of a run."""
    advice_plan = planned.detail
    if advice_plan.short:
        print(f"note: {advice_plan.short}", file=sys.stderr)
    if not (args.dry_run or args.write_profile):
        return None
    print_plan(req, advice_plan, planned.profile.studies[0].cells, planned.probe, args.json)
    if args.write_profile:
        try:
            with open(args.write_profile, "x", encoding="utf-8") as f:
                f.write(profile_toml(advice_plan))
        except OSError as exc:
            return _fail(f"--write-profile {args.write_profile}: {exc.strerror or exc}")
        print(f"wrote {args.write_profile}: measure it with `python -m bench run "
              f"--profile {args.write_profile}`", file=sys.stderr)
    return 0


def _answer(args: argparse.Namespace, req: Request, done: Measured[Plan], start: float,
            clock: Callable[[], float]) -> int:
    """The run's verdicts, as a table or JSON, then why the cells not measured were not
    (``unmeasured``); exit 1 when no baseline replicate ran ok (no knob could be judged)."""
    advice_plan, out = done.planned.detail, done.out
    entries = verdicts_of(req, advice_plan, done.planned.profile.studies[0].cells, out)
    elapsed = clock() - start
    if elapsed > req.budget_s:
        print(f"note: this took {elapsed:.0f} s, over the --budget of {req.budget_s:g} s (the "
              f"plan's estimate was {advice_plan.estimate_s:.0f} s of measuring); the "
              f"estimate is rough, see bench/run/plan/estimate.py", file=sys.stderr)
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        print_verdicts(req, advice_plan, entries, out, elapsed)
    judged = any(e["n_base"] for e in entries if e["status"] in (KnobStatus.MEASURED,
                                                                 KnobStatus.INSUFFICIENT))
    if not judged:
        sys.stdout.flush()
        print(f"error: no replicate of the baseline ran ok, so no knob could be judged "
              f"(results in {out})", file=sys.stderr)
    unmeasured.say(out, unmeasured.ADVISE)
    return 0 if judged else 1


# -- after the run: the report's verdicts ----------------------------------------------------


def verdicts_of(req: Request, p: Plan, cells: Sequence[matrix.Cell], out: Path
                ) -> list[dict[str, Any]]:
    """One entry per knob: the report's verdict of its pair, read from the run's rows as
    written, or why it was not measured (measured knobs first, each group in ``knobs.KNOBS``
    order)."""
    from bench.commands import advise_numerics
    from bench.report.input import load
    from bench.report.judge import asks as judged_pairs

    baseline, variants = cells[0], cells[1:]
    pairs = [judged_pairs.Ask(k.name, k.axis, *((c.cell_id, baseline.cell_id) if k.reverse else
                                           (baseline.cell_id, c.cell_id)))
            for k, c in zip(p.measured, variants)]
    judged = {v.knob: {**asdict(dataclasses.replace(v, numerics=None)),
                       **advise_numerics.fields(v.numerics, str(v.verdict))}
              for v in judged_pairs.judge(load.load_reports(out), pairs, req.steps)}
    names = [f.name for f in dataclasses.fields(judged_pairs.KnobAnswer) if f.name != "knob"]
    names += advise_numerics.FIELDS
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
    from bench.commands import advise_numerics
    from bench.report import fmt
    from bench.report.render.words import caveats, numerics

    print(f"{req.model} on {p.device}, {req.mode}, batch {req.batch_size}, {req.shapes} shapes: "
          f"{p.replicates} replicates per cell, {elapsed_s:.0f} s", file=stream)
    head = ("knob", "recommendation", "speedup (95% CI)", "verdict", "cold cost",
            f"break-even (job: {fmt.iterations(req.steps)} steps)", "memory",
            numerics.HEADER.lower())
    rows = [head]
    for e in entries:
        if e["status"] in (KnobStatus.SKIPPED, KnobStatus.NOT_IN_BUDGET):
            rows.append((e["knob"], e["reason"], "", "", "", "", "", ""))
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
                                           e.get("memory_change_share")),
                     advise_numerics.cell(e)))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip(), file=stream)
    for e in entries:  # what the JSON carries beside the figures, so the table hides nothing
        for code in e.get("caveats") or ():
            text = caveats.caveat_text(code, e.get("memory_change_bytes"),
                                       e.get("memory_change_share"))
            print(f"note on {e['knob']}: {text}", file=stream)
        for line in [advise_numerics.note(e), *break_notes(e)]:
            if line:
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
