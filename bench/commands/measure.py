"""The one run session of ``bench advise`` and of its ``--images`` question (``feed``): a
launcher, a probe and a plan, then a new run of the planned profile and its summary line.

Both measure the same way (the fork server, one fresh process per replicate, a run folder
under ``--reports`` that is always new, since their answers are that run's alone) and differ
only in what they plan and in what they say before measuring (a dry run ends there), which
they pass in. Every refusal is one ``error:`` line and exit code 2 (``exits.fail``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from bench.commands.exits import fail
from bench.run.execute import session
from bench.run.execute.launch import Launcher
from bench.run.execute.session import Ended
from bench.run.plan import matrix
from bench.run.plan.jobs import Job
from bench.run.protocol import Probe

#: What a command plans beside the profile (advise: its knobs and estimate; feed: the device).
T = TypeVar("T")


@dataclass(frozen=True)
class Planned(Generic[T]):
    """What a command planned from the probe: the profile bound to this machine and its jobs
    (``session.planned``), the probe itself, and the command's own plan (``detail``)."""

    profile: matrix.Profile
    jobs: list[Job]
    probe: Probe
    detail: T


@dataclass(frozen=True)
class Measured(Generic[T]):
    """A new run, measured: what was planned, the run's folder, and how it ended."""

    planned: Planned[T]
    out: Path
    ended: Ended


def measure(args: argparse.Namespace, launcher_of: Callable[[str], Launcher],
            plan: Callable[[Launcher], Planned[T]], ahead: Callable[[Planned[T]], int | None],
            refusals: tuple[type[Exception], ...] = ()) -> Measured[T] | int:
    """Open ``args.launcher``, ``plan`` with it (probe included), say ``ahead`` what was
    planned (an exit code there ends the command: a dry run), then run it all as a new run in
    ``args.out`` or under ``args.reports`` and print the summary line once the launcher is
    closed. An exit code instead where it stopped: a probe that failed (``RuntimeError``), a
    profile or a request refused (``ProfileError``, ``refusals``), an ``--out`` that holds
    results already."""
    refused: tuple[type[Exception], ...] = (RuntimeError, matrix.ProfileError, *refusals)
    with launcher_of(args.launcher) as launcher:
        try:
            planned = plan(launcher)
        except refused as exc:
            return fail(str(exc))
        code = ahead(planned)
        if code is not None:
            return code
        try:
            out, ended = session.run_new(planned.profile, planned.probe, planned.jobs, launcher,
                                         reports=Path(args.reports), out=args.out,
                                         command="advise")
        except session.SessionError as exc:
            return fail(str(exc))
    print(session.summary(ended.code, ended.counts, out), file=sys.stderr)
    return Measured(planned, out, ended)
