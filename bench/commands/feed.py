"""``python -m bench advise MODEL --images DIR``: how many DataLoader workers does my model need
on this machine to be fed?

It measures two things in one run, like any other: the model's step on synthetic inputs (the
rate it would take batches at were they free) and the input pipeline over the user's JPEGs
(torchvision's ImageNet reference recipe for ``--mode``) with 0, 1, 2, 4, ... workers up to the
cores this process may use; then it applies the report's rule (``judge.feeding``): the smallest
worker count whose delivered samples/s covers the step's.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from bench.commands import unmeasured
from bench.commands.exits import fail as _fail
from bench.commands.measure import Planned, measure
from bench.report import fmt
from bench.report.vocabulary import Feeding
from bench.run.execute import probe as probing
from bench.run.execute import session
from bench.run.execute.launch import Launcher
from bench.run.plan import modelspec, pipelines, profiles
from bench.run.store import reasons

#: How each replicate is measured (advise's short steady state).
SETTINGS: dict[str, Any] = {"replicates": 3, "warmup_iters": 1, "min_iters": 5,
                            "min_time_s": 0.3, "max_iters": 500, "max_time_s": 1.0,
                            "ci_target": 0.03, "timeout_s": 300.0}


def worker_counts(cores: int) -> list[int]:
    """0, 1, 2, 4, ... up to ``cores``, and ``cores`` itself."""
    out, w = [0], 1
    while w < cores:
        out.append(w)
        w *= 2
    return [*out, max(cores, 1)] if cores not in out else out


def profile_data(model: str, mode: str, batch: int, device: str, images: str, cores: int
                 ) -> dict[str, Any]:
    """The two studies as a profile's tables: the step, and the pipeline over workers."""
    return {"profile": {"description": f"bench advise {model} --images"},
            "defaults": {**SETTINGS, "device": device, "mode": mode, "batch_size": batch},
            "studies": {
                "step": {"description": "The step on synthetic inputs.", "model": model},
                "feeding": {"description": "The user's images through the reference recipe.",
                            "kind": "pipeline", "images": images, "decoder": "pil",
                            "num_workers": worker_counts(cores)}}}


def cmd_feed(args: argparse.Namespace, launcher_of: Callable[[str], Launcher],
             clock: Callable[[], float] = time.monotonic) -> int:
    """``advise --images``: plan, run, then the answer in a few lines."""
    start = clock()
    if modelspec.is_user_model(args.model):
        return _fail(f"--images feeds 3x{pipelines.CROP}x{pipelines.CROP} crops of JPEGs: it "
                     f"needs a torchvision image model (e.g. resnet50), got {args.model}")
    try:
        images = pipelines.check_images(args.images)
    except pipelines.ImagesError as exc:
        return _fail(f"--images: {exc}")
    done = measure(args, launcher_of, partial(_plan, args, images), partial(_dry_run, args))
    if isinstance(done, int):
        return done
    hints = unmeasured.feed_hints(float(SETTINGS["timeout_s"]))
    if done.ended.code:
        unmeasured.say(done.out, hints)
        return done.ended.code
    cores, device = done.planned.probe.cores, done.planned.detail
    answer = judge_run(done.out, cores)
    why = reasons.ending_lines(done.out, hints)
    print(answer_text(args.model, args.mode, args.batch_size, device, answer, cores,
                      clock() - start, why))
    if answer.verdict != Feeding.NOT_MEASURED:
        unmeasured.say(done.out, hints)  # measured, though some cells were not
    return 0 if answer.verdict != Feeding.NOT_MEASURED else 1


def _plan(args: argparse.Namespace, images: str, launcher: Launcher) -> Planned[str]:
    """The probe, then the two studies on the device asked for (or found) with worker counts
    up to its cores; the device is the plan's detail, for the answer."""
    with probing.probe_folder() as tmp:
        probe = probing.probe(launcher, tmp)
    device = args.device or ("cuda" if probe.cuda else "cpu")
    profile = profiles.parse_profile(profile_data(
        args.model, args.mode, args.batch_size, device, images, probe.cores), "advise")
    return Planned(*session.planned(profile, probe), probe, device)


def _dry_run(args: argparse.Namespace, planned: Planned[str]) -> int | None:
    """``--dry-run``: the cells, one line each, and nothing measured (exit 0)."""
    if not args.dry_run:
        return None
    for study in planned.profile.studies:
        for cell in study.cells:
            print(f"{study.name}: {cell.name}")
    return 0


def judge_run(out: Path, cores: int) -> Any:
    """The run's rows, judged the report's way: ``judge.feeding.CoresToFeed``."""
    from bench.report.analysis import analyse
    from bench.report.input.load import load_reports
    from bench.report.judge.feeding import Delivered, Rate, cores_to_feed

    a = analyse(load_reports(out))
    step = a.consumption
    demand = Rate(float(step["rate"].iloc[0]), float(step["rate_low"].iloc[0]),
                  float(step["rate_high"].iloc[0]), int(step["n_ok"].iloc[0])) \
        if len(step) else None
    pipes = a.pipelines.loc[a.pipelines["kind"] == "pipeline"]
    sweep = [Delivered(int(r.num_workers), Rate(float(r.rate), float(r.rate_low),
                                                float(r.rate_high), int(r.n_rated)),
                       startup=int(r.n_startup))
             for r in pipes.itertuples(index=False)]
    return cores_to_feed(demand, sweep, cores)


def answer_text(model: str, mode: str, batch: int, device: str, a: Any, cores: int,
                elapsed: float, why: Sequence[str] = ()) -> str:
    """The answer in a few lines, with its figures; where it was not measured, ``why``
    (``reasons.ending_lines``: the cells not measured, and why)."""
    recipe = pipelines.RECIPES.get(mode, mode)
    head = f"{model} {mode} at batch {batch} on {device}"
    if a.demand is None or a.delivered is None:
        if not why:
            return (f"{head}: {Feeding.NOT_MEASURED} (every cell has a replicate that ran "
                    f"ok, yet no rate came of them)")
        return "\n".join([f"{head}: {Feeding.NOT_MEASURED}; why:", *why])
    got = a.delivered.rate
    ci = f" (95% CI {got.low:,.0f}-{got.high:,.0f})" if math.isfinite(got.low) else ""
    lines = [f"{head} consumes {a.demand.median:,.0f} samples/s on synthetic inputs.",
             f"Your images through the {mode} recipe ({recipe}), decoded with Pillow: "
             f"{got.median:,.0f} samples/s{ci} with {fmt.count(a.delivered.workers, 'worker')}."]
    if a.verdict == Feeding.FED:
        verb = "feeds" if a.workers == 1 else "feed"
        lines.append(f"Answer: {fmt.count(a.workers, 'loader worker')} (DataLoader(num_workers="
                     f"{a.workers})) {verb} it; this machine has {cores} cores.")
    elif a.shortfall is not None:
        lines.append(f"Answer: {a.verdict}: the best measured is {a.shortfall:,.0f} samples/s "
                     f"short of what the step consumes on these {cores} cores; the step will "
                     f"wait for data.")
    else:
        lines.append(f"Answer: {a.verdict} (fewer than 3 ok replicates on a side).")
    if a.inline is not None and a.inline_wait is not None:
        lines.append(f"With 0 workers the process running the step decodes each batch itself, "
                     f"between steps, at {a.inline.rate.median:,.0f} samples/s: by the two "
                     f"rates the step would wait for its data {a.inline_wait:.0%} of the time.")
    lines.append(f"({elapsed:.0f} s; storage read from the page cache, not a network file "
                 f"system)")
    return "\n".join(lines)
