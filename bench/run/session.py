"""One run of a planned profile into its run folder: what ``bench run`` and ``bench advise``
share, so that an advise run is a normal run (the same folder layout, env.json, rows and
resume rules) that ``bench report`` shows beside the others.

``open_run`` decides the folder and refuses what must not happen (overwriting a run, resuming
nothing, resuming on another machine or with changed model code) with one line and nothing
written; ``execute`` runs what is left and says how it went.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bench.run import estimate, hooks, identity, learned, matrix, runid, runner, usermodels
from bench.run.breakdown import JobTiming
from bench.run.budget import Budget, Ending, StudyFit, budget_order, ending, fit_studies, shown
from bench.run.launch import Launcher
from bench.run.learned import CellCost
from bench.run.matrix import Profile, ProfileError
from bench.run.plan import Job, plan
from bench.run.progress import Progress
from bench.run.protocol import ModelCheck, Probe
from bench.run.resume import completed_keys, latest_run
from bench.run.store import RunStore, StoreError
from bench.schema import SchemaError


class SessionError(Exception):
    """A run that cannot start; the message is one line, and nothing was written."""


@dataclass
class Session:
    """A run folder opened for writing, and the jobs it has left."""

    out: Path
    store: RunStore
    env: dict[str, Any]
    jobs: list[Job]
    done: set[tuple[str, str, int]] = field(default_factory=set)
    #: what each cell cost on this kind of machine before (``learned.history``)
    costs: dict[str, CellCost] = field(default_factory=dict)
    sitting: int = 1  # which sitting of the run this one is

    @property
    def todo(self) -> list[Job]:
        return [j for j in self.jobs if j.key not in self.done]


def next_sitting(rows: Sequence[Mapping[str, str]]) -> int:
    """The sitting a resume is: one after the latest its rows name (rows of a schema that did
    not record it count as one sitting)."""
    if not rows:
        return 1
    found = [int(r["sitting"]) for r in rows if str(r.get("sitting") or "").isdigit()]
    return max(found, default=1) + 1


def open_run(profile: Profile, probe: Probe, jobs: list[Job], *, reports: Path,
             out: str | None = None, resume: bool = False, run_id: str | None = None,
             shard: dict[str, str] | None = None) -> Session:
    """The run folder for ``jobs``: ``out``, or the newest run of this profile (``resume``), or a
    new ``REPORTS/<machine>/<run-id>`` (``run_id``, or a new one); its env.json written once
    (with ``shard``, which part of a cluster run it is), then its CSVs opened. A start that
    fails (a full disk) removes what it created, so the same command can simply be rerun."""
    env = dict(probe.env)
    if out:
        folder = Path(out)
    elif resume:
        found = latest_run(reports, env["machine"], profile.name)
        if found is None:
            raise SessionError(f"nothing to resume: no run of profile {profile.name} under "
                               f"{reports / env['machine']}")
        folder = found
    else:
        folder = reports / env["machine"] / (run_id or runid.new_run_id(profile.name))
    store = RunStore(folder)
    if store.exists() and not resume:
        raise SessionError(f"{folder} already holds results; pass --resume to finish that run, "
                           f"or choose another --out")
    if resume and not store.exists():
        raise SessionError(f"nothing to resume in {folder}: it has no results.csv")
    try:
        old = store.read_env()
        env["run_id"] = (old or {}).get("run_id") or folder.name
        env["profile"] = profile.name
        env["planned_rows"] = len(jobs)  # one row per job: the report can tell a partial run
        env["plan"] = identity.plan_of(profile)  # what a resume must match
        if shard:
            env["shard"] = shard
        if probe.user_models:
            env["user_models"] = usermodels.identities(probe)
        if resume:  # before anything in the folder is touched
            identity.check_resume(old, probe.env, env["plan"], store.env_path,
                                  rows=store.existing_rows())
            identity.check_shard(old, (shard or {}).get("spec"), store.env_path)
            usermodels.check_resume(old, env, str(folder))
        rows = store.start(env, new_run=not resume)  # a start that fails leaves nothing
    except (SchemaError, ProfileError, StoreError) as exc:
        raise SessionError(str(exc)) from None
    for moved in store.aside:
        print(f"set aside {moved}: the end of a file that a killed run left without its "
              "whole record", file=sys.stderr)
    done = completed_keys(rows, env["fingerprint_id"]) if resume else set()
    return Session(folder, store, env, jobs, done, learned.history(reports, env),
                   next_sitting(rows) if resume else 1)


@dataclass(frozen=True)
class Ended:
    """How a run ended: its exit code, the count of each status, and the store's failure if
    that is what stopped it."""

    code: int
    counts: dict[str, int]
    store_error: StoreError | None = None
    budget: Ending | None = None  # what a budgeted run leaves


def execute(session: Session, launcher: Launcher, probe: Probe, *, fault: str = "",
            stream: TextIO | None = None, progress: bool = True,
            hook: hooks.Hook = hooks.none, timings: list[JobTiming] | None = None,
            budget: Budget | None = None) -> Ended:
    """Run the jobs left, writing one row each; the launcher belongs to the caller; ``hook``
    (see ``bench.run.hooks``) is called at the instants a test may act; ``timings`` collects
    each job's moments (``bench.run.breakdown``); a ``budget`` runs the studies that fit it
    first and stops before a job that would end past it (``bench.run.budget``); the lines
    go to ``stream``, standard error by default."""
    stream = stream or sys.stderr
    env, todo = session.env, session.todo
    ctx = runner.RunContext(env["run_id"], str(env["profile"]), probe, fault=fault,
                            sitting=session.sitting)
    seconds = dict(zip((j.key for j in todo), estimate.jobs_s(todo, probe, session.costs)))
    eta = sum(seconds.values())
    print(f"run {env['run_id']} on {env['machine']} (fingerprint {env['fingerprint_id']}): "
          f"{len(todo)} processes to run, {len(session.jobs) - len(todo)} already done, "
          f"~{eta / 60:.1f} min estimated; writing to {session.out}", file=stream)
    order = todo
    if budget is not None:
        fit = fit_studies(todo, seconds, budget.deadline - time.monotonic())
        order = budget_order(todo, fit) if fit.later else todo
        print(_budget_line(budget, fit), file=stream)
    try:
        run = runner.Runner(launcher, session.store, ctx,
                            progress=Progress(len(todo)) if progress else None, hook=hook)
    except StoreError as exc:  # no scratch folder: the run stops as it would on its first job
        return Ended(runner.EXIT_STORE, {}, exc)
    try:
        code = run.run(order, session.done, budget, seconds)
    finally:
        run.close()
        if timings is not None:
            timings.extend(run.timings)
    left = ending(session.jobs, session.done | run.finished, budget.total_s, run.budget_stop,
                  seconds) if budget is not None and not code else None
    return Ended(code, dict(run.counts), run.store_error, left)


def _budget_line(budget: Budget, fit: StudyFit) -> str:
    """What a budget lets the run do, said before it starts."""
    if not fit.later:
        return (f"budget {shown(budget.total_s)}: the whole plan fits "
                f"(~{shown(fit.total_s)} estimated)")
    whole = ", ".join(fit.whole) or "no study"
    return (f"budget {shown(budget.total_s)} for a plan of ~{shown(fit.total_s)}: "
            f"{whole} first, whole (~{shown(fit.estimate_s)}); then "
            f"{', '.join(fit.later)} while the time lasts")


def summary(code: int, counts: dict[str, int], out: Path) -> str:
    """The end of a run in one sentence, ``done: ok=12 skipped=2; results in DIR`` (or
    ``interrupted: …`` for a non-zero ``code``), with where the failed replicates' logs are."""
    done = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    verb = "interrupted" if code else "done"
    logs = out / "logs"
    hint = f" (logs of failed replicates in {logs})" if logs.exists() else ""
    return f"{verb}: {done or 'nothing to run'}; results in {out}{hint}"


def planned(profile: Profile, probe: Probe) -> tuple[Profile, list[Job]]:
    """The profile with its user models bound to their sources, and its jobs in run order;
    ProfileError when a model is unknown or cannot run."""
    matrix.check_models(profile, probe.models)
    profile = usermodels.bind(profile, probe)
    return profile, plan(profile)


def user_checks(profile: Profile | None) -> list[ModelCheck]:
    """What the probe must check for this profile's user models."""
    if profile is None:
        return []
    return usermodels.checks(c for s in profile.studies for c in s.cells)
