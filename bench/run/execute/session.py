"""One run of a planned profile into its run folder: what ``bench run`` and ``bench advise``
share, so that an advise run is a normal run (the same folder layout, env.json, rows and
resume rules) that ``bench report`` shows beside the others.

``open_run`` decides the folder and refuses what must not happen (overwriting a run, resuming
nothing, resuming on another machine or with changed model code) with one line and nothing
written; ``execute`` runs what is left and says how it went.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from bench.run.execute import hooks, pacing, runner
from bench.run.execute.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.execute.launch import Launcher
from bench.run.execute.progress import Progress
from bench.run.plan import estimate, learned, matrix, pace, usermodels
from bench.run.plan.adaptive import (
    Looks,
    env_record,
    fresh,
    pending,
    priced,
    resumed,
    summary_lines,
)
from bench.run.plan.budget import Budget, Ending, budget_order, ending, fit_line, fit_studies, shown
from bench.run.plan.jobs import Job, plan
from bench.run.plan.learned import CellCost
from bench.run.plan.matrix import Profile, ProfileError
from bench.run.protocol import ModelCheck, Probe
from bench.run.store import identity, runid, source
from bench.run.store.breakdown import JobTiming, breakdown
from bench.run.store.resume import (
    completed_keys,
    earlier_seconds,
    latest_run,
    left_out_keys,
    retries,
)
from bench.run.store.store import RunStore, StoreError
from bench.schema import PACE_END, PACE_MISSING, PACE_START, SITTING_PACE, SchemaError


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
    #: (kind, cell id) → what its replicates took in the run's earlier sittings (a resume)
    earlier: dict[tuple[str, str], float] = field(default_factory=dict)
    #: replicates that failed in an earlier sitting: run again after the others
    again: set[tuple[str, str, int]] = field(default_factory=set)
    recorded: bool = False  # env.json holds this sitting's record (``record_sitting``)
    looks: Looks | None = None  # the adaptive replicates' looks (``bench.run.plan.adaptive``)
    pace_window_s: float = pace.WINDOW_S  # the CPU pace probe's window (the profile's ``[pace]``)

    @property
    def todo(self) -> list[Job]:
        """The jobs left, those an earlier sitting saw fail last."""
        return retried_last([j for j in self.jobs if j.key not in self.done], self.again)

    def seconds(self, probe: Probe) -> dict[tuple[str, str, int], float]:
        """Each job left → its expected seconds: what its cell took in this run's earlier
        sittings where it ran, else the estimate (``bench.run.plan.estimate``)."""
        todo = self.todo
        guessed = estimate.jobs_s(todo, probe, self.costs)
        return {j.key: self.earlier.get((j.kind, j.cell.cell_id), s)
                for j, s in zip(todo, guessed)}


def retried_last(jobs: Sequence[Job], again: AbstractSet[tuple[str, str, int]]) -> list[Job]:
    """``jobs`` in their order, those in ``again`` moved to the end."""
    return [j for j in jobs if j.key not in again] + [j for j in jobs if j.key in again]


def next_sitting(rows: Sequence[Mapping[str, str]],
                 records: Sequence[Mapping[str, Any]] = ()) -> int:
    """The sitting a resume is: one after the latest its rows or env.json's sitting records
    name (rows of a schema that did not record it count as one sitting)."""
    if not rows and not records:
        return 1
    found = [int(r["sitting"]) for r in rows if str(r.get("sitting") or "").isdigit()]
    found += [r["sitting"] for r in records if type(r.get("sitting")) is int]
    return max(found, default=1) + 1


def sitting_records(env: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """env.json's records of the run's sittings (``bench.run.store.source``); those that are not
    objects are left out, and a file written before sittings were recorded has none."""
    records = (env or {}).get("sittings")
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def record_sitting(store: RunStore, env: Mapping[str, Any], number: int,
                   budget_s: float | None, stream: TextIO) -> None:
    """Add this sitting's record to env.json (rewritten whole and atomically; every other key
    is kept as the first sitting wrote it) and say when its code differs from the last
    recorded sitting's."""
    kept = env.get("sittings") or []  # a list: ``identity.check_sittings`` refused others
    earlier = sitting_records(env)
    this = source.record(number, runner.now_iso(), budget_s)
    if earlier and earlier[-1].get("code") != this["code"]:
        print(f"sitting {number} runs other measuring code ({this['code']}) than sitting "
              f"{earlier[-1].get('sitting')} ({earlier[-1].get('code')}); the machine page "
              "and bench check will say which rows each measured", file=stream)
    store.write_env({**env, "sittings": [*kept, this]}, replace=True)  # the rest stays as is


def finish_sitting(store: RunStore, number: int, wall_s: float,
                   timings: Sequence[JobTiming], stream: TextIO,
                   paces: Mapping[str, Any] | None = None) -> None:
    """Add to this sitting's record in env.json when it ended, its wall time (the probe
    included) and its timed work (``bench.run.store.breakdown``: cold passes and steady
    iterations), so any run, on any machine, says how much of its time was measurement, and
    the machine's pace at its start and end (``paces``, ``bench.run.plan.pace``: the record's
    ``schema.SITTING_PACE``). Only this sitting's record changes: the first sitting's facts
    are kept as they are. A record that cannot be written is said in one line; the rows are
    already safe."""
    timed = breakdown(timings, wall_s).timed_s
    try:
        env = store.read_env() or {}
        records = env.get("sittings")
        mine = [r for r in records if isinstance(r, dict) and r.get("sitting") == number] \
            if isinstance(records, list) else []
        if not mine:
            return
        mine[-1].update(ended_at=runner.now_iso(), wall_s=round(wall_s, 3), timed_s=round(timed, 3))
        if paces:
            mine[-1][SITTING_PACE] = dict(paces)
        store.write_env(env, replace=True)
    except (StoreError, SchemaError) as exc:
        print(f"note: sitting {number}'s time was not added to env.json: {exc}", file=stream)


def _stopped_why(signum: int) -> str:
    return f"the sitting was stopped by {signal.Signals(signum).name}"


def _missing_line(found: Mapping[str, Any], end: str, stream: TextIO) -> None:
    """One line for the probes of one end of a sitting that gave no figure (the run goes on)."""
    missing = [f"{name} ({fig[PACE_MISSING]})" for name, fig in found.items()
               if isinstance(fig, dict) and PACE_MISSING in fig]
    if missing:
        print(f"note: the machine's pace at the sitting's {end} is missing for "
              f"{'; '.join(missing)}; the run goes on", file=stream)


def _end_pace(paces: dict[str, Any], code: int, launcher: Launcher, cuda: bool,
              stream: TextIO, window_s: float) -> int:
    """The pace at the sitting's end, into ``paces``: measured where the sitting ended of
    itself (all done, or a budget spent), skipped (saying why) where a signal or the store
    stopped it. Returns the sitting's exit code: a signal during these probes stops it."""
    if code:
        stopped_by = [s for s, c in EXIT_CODES.items() if c == code]
        paces[PACE_END] = pacing.skipped(cuda, _stopped_why(stopped_by[0]) if stopped_by else
                                       "the sitting stopped: its run folder could not be "
                                       "written")
        return code
    paces[PACE_END], stopped = pacing.sitting_pace(launcher, cuda, PACE_END, window_s=window_s)
    _missing_line(paces[PACE_END], "end", stream)
    return EXIT_CODES.get(signal.Signals(stopped), 130) if stopped is not None else code


def _folder(profile: Profile, env: Mapping[str, Any], reports: Path, out: str | None,
            resume: bool, run_id: str | None) -> Path:
    """The run folder: ``out``, or the newest run of this profile (``resume``), or a new
    ``REPORTS/<machine>/<run-id>``."""
    if out:
        return Path(out)
    if resume:
        found = latest_run(reports, env["machine"], profile.name)
        if found is None:
            raise SessionError(f"nothing to resume: no run of profile {profile.name} under "
                               f"{reports / env['machine']}")
        return found
    return reports / env["machine"] / (run_id or runid.new_run_id(profile.name))


def _resumable(profile: Profile, probe: Probe, jobs: list[Job], store: RunStore,
               shard: dict[str, str] | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """This sitting's env.json (``probe``'s, with the run's id and plan) and the folder's
    own, once the folder is known to be one this machine may resume: the same checks for a
    resume and for its ``--dry-run``, before anything is touched."""
    env = dict(probe.env)
    if not store.exists():
        raise SessionError(f"nothing to resume in {store.run_dir}: it has no results.csv")
    old = store.read_env()
    _describe(env, profile, probe, jobs, store.run_dir, old, shard)
    identity.check_resume(old, probe.env, env["plan"], store.env_path,
                          rows=store.existing_rows())
    identity.check_shard(old, (shard or {}).get("spec"), store.env_path)
    identity.check_sittings(old, store.env_path)
    usermodels.check_resume(old, env, str(store.run_dir))
    return env, old


def _describe(env: dict[str, Any], profile: Profile, probe: Probe, jobs: list[Job],
              folder: Path, old: Mapping[str, Any] | None,
              shard: dict[str, str] | None) -> None:
    """What env.json says of the run besides the machine: its id, profile, plan and part."""
    env["run_id"] = (old or {}).get("run_id") or folder.name
    env["profile"] = profile.name
    env["planned_rows"] = len(jobs)  # one row per job: the report can tell a partial run
    env["plan"] = identity.plan_of(profile)  # what a resume must match
    if shard:
        env["shard"] = shard
    if probe.user_models:
        env["user_models"] = usermodels.identities(probe)


def _left(folder: Path, store: RunStore, env: dict[str, Any], jobs: list[Job], reports: Path,
          rows: Sequence[dict[str, str]], old: Mapping[str, Any] | None) -> Session:
    """A resumed run's session: what its rows already hold, what its earlier sittings took."""
    fp = env["fingerprint_id"]
    again = left_out_keys(rows, fp, (old or {}).get("sittings"))
    return Session(folder, store, env, jobs, completed_keys(rows, fp) - again,
                   learned.history(reports, env), next_sitting(rows, sitting_records(old)),
                   earlier_seconds(rows, fp, learned.newest_ok(reports, env)),
                   retries(rows, fp) | again)


def preview_resume(profile: Profile, probe: Probe, jobs: list[Job], *, reports: Path,
                   out: str | None = None, shard: dict[str, str] | None = None) -> Session:
    """What ``--resume`` would have left to run, refused as it would be (another machine's
    run, a changed plan), with nothing written: ``--dry-run --resume``. Its ``store`` is
    only read."""
    try:
        folder = _folder(profile, probe.env, reports, out, True, None)
        store = RunStore(folder)
        env, old = _resumable(profile, probe, jobs, store, shard)
        rows = store.existing_rows()
        left = _left(folder, store, env, jobs, reports, rows, old)
        left.looks = resumed(profile.adaptive, old, jobs, rows, env["fingerprint_id"], left.again)
        return left
    except (SchemaError, ProfileError, StoreError) as exc:
        raise SessionError(str(exc)) from None


def open_run(profile: Profile, probe: Probe, jobs: list[Job], *, reports: Path,
             out: str | None = None, resume: bool = False, run_id: str | None = None,
             shard: dict[str, str] | None = None, budget_s: float | None = None,
             stream: TextIO | None = None) -> Session:
    """The run folder for ``jobs``: ``out``, or the newest run of this profile (``resume``), or a
    new ``REPORTS/<machine>/<run-id>`` (``run_id``, or a new one); its env.json written by the
    first sitting (with ``shard``, which part of a cluster run it is), then its CSVs opened.
    Each sitting that has jobs to run adds its record to env.json (``record_sitting``: when,
    with what ``budget_s``, which code). A start that fails (a full disk) removes what it
    created, so the same command can simply be rerun."""
    stream = stream or sys.stderr
    folder = _folder(profile, probe.env, reports, out, resume, run_id)
    store = RunStore(folder)
    if store.exists() and not resume:
        raise SessionError(f"{folder} already holds results; pass --resume to finish that run, "
                           f"or choose another --out")
    try:
        if resume:  # before anything in the folder is touched
            env, old = _resumable(profile, probe, jobs, store, shard)
        else:
            env, old = dict(probe.env), store.read_env()
            _describe(env, profile, probe, jobs, folder, old, shard)
            env["sittings"] = [source.record(1, runner.now_iso(), budget_s)]
            env.update(env_record(profile.adaptive))  # the rule it applies, for the report
        rows = store.start(env, new_run=not resume)  # a start that fails leaves nothing
    except (SchemaError, ProfileError, StoreError) as exc:
        raise SessionError(str(exc)) from None
    for moved in store.aside:
        print(f"set aside {moved}: the end of a file that a killed run left without its "
              "whole record", file=stream)
    if not resume:
        return Session(folder, store, env, jobs, set(), learned.history(reports, env),
                       recorded=True, looks=fresh(profile.adaptive, jobs),
                       pace_window_s=profile.pace_window_s)
    opened = _left(folder, store, env, jobs, reports, rows, old)
    opened.pace_window_s = profile.pace_window_s
    opened.looks = resumed(profile.adaptive, old, jobs, rows, env["fingerprint_id"], opened.again)
    if opened.todo or pending(opened.looks):  # a resume with nothing left is no sitting
        try:
            record_sitting(store, old if old is not None else env, opened.sitting, budget_s,
                           stream)
        except StoreError as exc:
            raise SessionError(str(exc)) from None
        opened.recorded = True
    return opened


@dataclass(frozen=True)
class Ended:
    """How a run ended: its exit code, the count of each status, and the store's failure if
    that is what stopped it."""

    code: int
    counts: dict[str, int]
    store_error: StoreError | None = None
    budget: Ending | None = None  # what a budgeted run leaves
    adaptive: tuple[str, ...] = ()  # what it says of its adaptive replicates


def _start_pace(paces: dict[str, Any], launcher: Launcher, probe: Probe,
                stream: TextIO, window_s: float) -> tuple[float, int | None]:
    """Measure the sitting's pace at its start into ``paces`` (or reuse the plan's, when it is
    fresh): the seconds to keep for the end's probes, which take about as long, and the signal
    that stopped the probes, if one did (then the end's pace is recorded as skipped)."""
    began = time.monotonic()
    planned_pace = probe.env.get(pace.ENV_KEY)  # measured for the plan: may stand for one
    reused = pacing.reusable(planned_pace)
    paces[PACE_START], stopped = pacing.sitting_pace(launcher, probe.cuda, PACE_START,
                                                     planned_pace, window_s)
    _missing_line(paces[PACE_START], "start", stream)
    if stopped is not None:
        paces[PACE_END] = pacing.skipped(probe.cuda, _stopped_why(stopped))
    reuse_s = pace.cpu_probe(window_s).expected_s if reused else 0.0
    return time.monotonic() - began + reuse_s, stopped


def execute(session: Session, launcher: Launcher, probe: Probe, *, fault: str = "",
            stream: TextIO | None = None, progress: bool = True,
            hook: hooks.Hook = hooks.none, timings: list[JobTiming] | None = None,
            budget: Budget | None = None, since: float | None = None) -> Ended:
    """Run the jobs left, writing one row each; the launcher belongs to the caller; ``hook``
    (see ``bench.run.execute.hooks``) is called at the instants a test may act; ``timings`` collects
    each job's moments (``bench.run.store.breakdown``); a ``budget`` runs the studies that fit it
    first and stops before a job that would end past it (``bench.run.plan.budget``); the lines
    go to ``stream``, standard error by default. ``since`` (``time.monotonic()``; default
    now) is when the sitting began, its probe included: its wall time, which the sitting's
    record in env.json keeps with its timed work (``finish_sitting``)."""
    since = time.monotonic() if since is None else since
    stream = stream or sys.stderr
    env, todo = session.env, session.todo
    ctx = runner.RunContext(env["run_id"], str(env["profile"]), probe, fault=fault,
                            sitting=session.sitting)
    seconds = session.seconds(probe)
    eta = sum(seconds.values())
    print(f"run {env['run_id']} on {env['machine']} (fingerprint {env['fingerprint_id']}): "
          f"{len(todo)} processes to run, {len(session.jobs) - len(todo)} already done, "
          f"~{eta / 60:.1f} min estimated; writing to {session.out}", file=stream)
    if again := [j for j in todo if j.key in session.again]:
        many = len(again) > 1
        print(f"{len(again)} replicate{'s' if many else ''} that failed in an earlier sitting "
              f"{'run' if many else 'runs'} again last: "
              + ", ".join(f"{j.cell.name} #r{j.replicate} (~{shown(seconds[j.key])}, "
                          + ("what its cell took in earlier sittings)"
                             if (j.kind, j.cell.cell_id) in session.earlier
                             else "estimated: it has ended ok since it failed)")
                          for j in again[:3]) + (" ..." if len(again) > 3 else ""),
              file=stream)
    paces: dict[str, Any] = {}  # this sitting's pace at its start and end (``bench.run.plan.pace``)
    probing = session.recorded and bool(todo)  # a sitting that runs something
    end_s = 0.0
    if probing:
        end_s, stopped = _start_pace(paces, launcher, probe, stream, session.pace_window_s)
        if stopped is not None:  # a signal during the start's probes: the sitting ends
            finish_sitting(session.store, session.sitting, time.monotonic() - since, [],
                           stream, paces)
            return Ended(EXIT_CODES.get(signal.Signals(stopped), 130), {})
    jobs_budget = Budget(max(0.0, budget.total_s - end_s), budget.start) \
        if budget is not None and probing else budget
    order = todo
    if budget is not None and jobs_budget is not None:
        room = jobs_budget.deadline - time.monotonic()
        fit = fit_studies(todo, seconds, room)
        order = retried_last(budget_order(todo, fit), session.again) if fit.later else todo
        print(fit_line(fit, budget.total_s, room), file=stream)
    try:
        run = runner.Runner(launcher, session.store, ctx,
                            progress=Progress(len(todo)) if progress else None, hook=hook)
    except StoreError as exc:  # no scratch folder: the run stops as it would on its first job
        return Ended(runner.EXIT_STORE, {}, exc)
    code = 0
    try:
        code = run.run(order, session.done, jobs_budget, seconds,
                       priced(session.looks, session.jobs, probe, session.costs, session.earlier))
        if probing:  # a budget that stopped the sitting early leaves time for these
            code = _end_pace(paces, code, launcher, probe.cuda, stream, session.pace_window_s)
    finally:
        run.close()
        if probing and PACE_END not in paces:  # a signal between two jobs
            first = INTERRUPTS.first if INTERRUPTS.installs else None
            paces[PACE_END] = pacing.skipped(probe.cuda, _stopped_why(first) if first else
                                           "the sitting was stopped before its end")
        if timings is not None:
            timings.extend(run.timings)
        if session.recorded:
            finish_sitting(session.store, session.sitting, time.monotonic() - since,
                           run.timings, stream, paces)
    left = ending(session.jobs, session.done | run.finished, budget.total_s, run.budget_stop,
                  seconds) if budget is not None and not code else None
    said = summary_lines(session.looks, run.outcomes, run.extra_short) \
        if session.looks is not None and not code else []
    return Ended(code, dict(run.counts), run.store_error, left, tuple(said))


#: The CPU pace probe's window in a run that is always one sitting (``run_new``): the pace of a
#: sitting is held only against the other sittings of its run (``bench.sittings``), so such a
#: run's is recorded, never compared, and 1.8 s of matmuls at each end would buy nothing.
ONE_SITTING_WINDOW_S = 0.3


def run_new(profile: Profile, probe: Probe, jobs: list[Job], launcher: Launcher, *,
            reports: Path, out: str | None, command: str) -> tuple[Path, Ended]:
    """A run that is always new (``bench advise``: its verdicts are this run's alone): refuse
    an ``out`` that holds results (``SessionError``, naming ``command``), then open and run it
    all, its pace read over ``ONE_SITTING_WINDOW_S`` at most; its folder and how it ended."""
    if out and RunStore(Path(out)).exists():
        raise SessionError(f"{out} already holds results; {command} always starts a new run: "
                           f"choose another --out, or leave --out out for a new folder under "
                           f"{reports}")
    window = min(profile.pace_window_s, ONE_SITTING_WINDOW_S)
    opened = open_run(replace(profile, pace_window_s=window), probe, jobs, reports=reports,
                      out=out)
    return opened.out, execute(opened, launcher, probe)


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
