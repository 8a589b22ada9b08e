"""Run a profile on a Slurm cluster through submitit: one job per shard, one node per job.

Each job runs the normal runner on its node (its own probe, fingerprint, fork server and one
process per replicate) and writes its own run folder, ``<reports>/<machine>/<run>-shard<k>/``,
on the shared file system, so no two nodes ever append to one file and ``bench report`` pools
the shards as it pools any runs: by fingerprint. The submitting process stays thin: it plans
and splits the profile (no torch), submits, then follows the shards by reading their folders
and asking Slurm for their jobs' states. It can also leave (``--no-wait``): ``bench status``
reads the same record later, and ``--resume`` resubmits only the shards that are unfinished.

submitit pickles the function a job runs, :func:`bench.run.cluster.node.run_shard`, a
module-level function of a stdlib-only module, so the pickle names it and carries no torch into
the submitting process. The record of a submission, submitit's files and the jobs' logs live
under ``<reports>/.slurm/<run>/``.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bench.run.cluster.node import run_shard, shard_dirs
from bench.run.cluster.squeue import ACTIVE, UNKNOWN, QueryError, Queue, Runner, run_command
from bench.run.execute.progress import Progress
from bench.run.plan.budget import BudgetError, parse_duration, slurm_minutes
from bench.run.store import runid
from bench.schema import Status

EXTRA = "torch-knobs[slurm]"
RECORD = "submission.json"
#: Beside the record: held while a ``--resume`` checks the queue and submits, so that two
#: resumes of one run cannot both find a shard unfinished and submit it twice.
LOCK = "resume.lock"
#: How long before a job's time limit Slurm warns it (SIGUSR2; submitit's default), and the
#: most of a short limit the warning may take: a 1-minute job warned 90 s early would be
#: interrupted as it starts.
WARN_S = 90
WARN_SHARE = 0.25


class SlurmError(RuntimeError):
    """A submission that cannot go ahead; one line naming the problem and the way out."""


@dataclass(frozen=True)
class Options:
    """What ``bench run --executor slurm`` passes on to Slurm (through submitit's names)."""

    partition: str | None = None
    gpus_per_node: int | None = None
    time_min: int = 60
    account: str | None = None
    constraint: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    #: ``--budget``: each shard runs ``bench run --budget`` (it stops cleanly, and a resume
    #: finishes it), and its job's time limit is the budget and the planner's margin
    budget: str | None = None

    def check(self) -> None:
        """Refuse, in one line, what sbatch would refuse later with a traceback's worth."""
        if self.budget is not None:
            try:
                parse_duration(self.budget)
            except BudgetError as exc:
                raise SlurmError(str(exc)) from None
        if self.time_min < 1:
            raise SlurmError(f"--slurm-time {self.time_min}: expected at least 1 minute")
        if self.gpus_per_node is not None and self.gpus_per_node < 0:
            raise SlurmError(f"--slurm-gpus-per-node {self.gpus_per_node}: expected 0 or more "
                             "GPUs per node")

    def flags(self) -> list[str]:
        """These options as ``bench run`` takes them (the ones set), for a command to print."""
        out: list[str] = []
        for name, flag in FLAGS.items():
            value = getattr(self, name)
            if name == "time_min" and self.budget:
                continue  # the budget sets the time limit (both are refused)
            if name == "extra":
                out += [a for k, v in value.items() for a in (flag, f"{k}={v}")]
            elif value is not None:
                out += [flag, str(value)]
        return out

    @classmethod
    def recorded(cls, data: dict[str, Any]) -> Options:
        """The options a submission record holds (``asdict`` of them)."""
        extra = data.get("extra") or {}
        return cls(data.get("partition"), data.get("gpus_per_node"),
                   int(data.get("time_min") or 60), data.get("account"),
                   data.get("constraint"),
                   {str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else {},
                   data.get("budget"))

    @property
    def limit_min(self) -> int:
        """The job's time limit: the budget and the planner's margin (``budget.slurm_minutes``)
        with a ``--budget``, else ``--slurm-time``."""
        return slurm_minutes(parse_duration(self.budget)) if self.budget else self.time_min

    @property
    def warn_s(self) -> int:
        """Seconds before the time limit that Slurm warns the job: ``WARN_S``, or a quarter
        of a limit under 6 minutes, so a short job is not warned as it starts."""
        return max(1, min(WARN_S, int(self.limit_min * 60 * WARN_SHARE)))

    def parameters(self, job_name: str) -> dict[str, Any]:
        """submitit's ``SlurmExecutor.update_parameters`` keywords. Exclusive nodes: a shard
        times its steps, and another job on its node would be timed with it."""
        params: dict[str, Any] = {"job_name": job_name, "nodes": 1, "ntasks_per_node": 1,
                                  "time": self.limit_min, "exclusive": True,
                                  "signal_delay_s": self.warn_s}
        for key, value in (("partition", self.partition), ("gpus_per_node", self.gpus_per_node),
                           ("account", self.account), ("constraint", self.constraint)):
            if value is not None:
                params[key] = value
        if self.extra:
            params["additional_parameters"] = dict(self.extra)
        return params


#: Each option's ``bench run`` flag.
FLAGS = {"partition": "--slurm-partition", "gpus_per_node": "--slurm-gpus-per-node",
         "time_min": "--slurm-time", "account": "--slurm-account",
         "constraint": "--slurm-constraint", "extra": "--slurm-extra", "budget": "--budget"}


def merged(given: dict[str, Any], record: Options | None) -> tuple[Options, list[str]]:
    """The options of a submission: those ``given`` on the command line (None: not given),
    the others from ``record`` (a resume's earlier submission) or the defaults; and, for each
    given one that differs from the record, a note ``--slurm-time 30 (recorded: 15)``."""
    base = record or Options()
    chosen = {name: getattr(base, name) if given.get(name) is None else given[name]
              for name in FLAGS}
    notes = [f"{flag} {_shown(chosen[name])} (recorded: {_shown(getattr(record, name))})"
             for name, flag in FLAGS.items()
             if record is not None and chosen[name] != getattr(record, name)]
    return Options(**chosen), notes


def _shown(value: Any) -> str:
    """An option's value as a note shows it: ``15``, ``qos=high mem=0``, ``none``."""
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items()) or "none"
    return "none" if value is None else str(value)


def parse_extra(items: Sequence[str]) -> dict[str, str]:
    """``["mem=0", "qos=high"]`` → ``{"mem": "0", "qos": "high"}``."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SlurmError(f"--slurm-extra {item!r}: expected KEY=VALUE, e.g. qos=high")
        out[key.strip()] = value.strip()
    return out


def submitit_module() -> Any:
    """submitit, or one line saying how to install it."""
    try:
        import submitit
    except ImportError:
        raise SlurmError(f"--executor slurm needs submitit: pip install '{EXTRA}'") from None
    return submitit


# ---------------------------------------------------------------------------------------------
# The record of a submission.


@dataclass
class Submission:
    """What was submitted, kept as JSON beside submitit's files; every job of each shard."""

    run_id: str
    profile: str  # as the nodes read it: a shipped name or an absolute path
    reports: str  # absolute: the nodes write under it
    planned: list[int]  # jobs (rows) per shard
    jobs: list[list[str]]  # Slurm job ids per shard, oldest first
    options: dict[str, Any]
    submitted_at: str = ""
    only: list[str] = field(default_factory=list)  # the studies asked for (--only)

    @property
    def count(self) -> int:
        return len(self.planned)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{RECORD}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, folder / RECORD)

    @classmethod
    def load(cls, folder: Path) -> Submission:
        path = folder / RECORD
        if not path.exists():
            raise SlurmError(f"{folder} holds no {RECORD}: nothing of that run was submitted")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise SlurmError(f"{path}: not a submission record ({exc})") from None


def slurm_folder(reports: Path, run_id: str) -> Path:
    return reports / ".slurm" / run_id


def latest_submission(reports: Path, profile: str) -> str | None:
    """The newest submitted run of ``profile`` under ``reports``, for ``--resume``."""
    root = reports / ".slurm"
    found = sorted(p.name for p in root.glob(runid.pattern(Path(profile).stem))
                   if (p / RECORD).is_file())
    return found[-1] if found else None


def shard_rows(reports: Path, run_id: str, k: int) -> list[dict[str, str]]:
    """The complete rows shard ``k`` has written so far (a torn last line is not one)."""
    rows: list[dict[str, str]] = []
    for folder in shard_dirs(reports, run_id, k):
        try:
            text = (folder / "results.csv").read_text(encoding="utf-8")
        except OSError:
            continue
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines = lines[:-1]
        rows += [r for r in csv.DictReader(lines) if None not in r]
    return rows


# ---------------------------------------------------------------------------------------------
# Slurm itself: the queue, asked through its own commands.


# ---------------------------------------------------------------------------------------------
# Submitting, following and resuming.


#: What a refused submission raises: submitit's FailedJobError (sbatch's stderr) and
#: FailedSubmissionError are RuntimeErrors; sbatch missing or unrunnable is an OSError.
REFUSALS = (RuntimeError, OSError, subprocess.SubprocessError)


def submit(profile: str, planned: list[int], reports: Path, run_id: str, options: Options, *,
           only: Sequence[str] = (), which: Sequence[int] | None = None,
           record: Submission | None = None, executor: Any = None,
           run: Runner | None = None) -> Submission:
    """Submit shards ``which`` (counted from 1; all by default) and record their job ids.

    ``executor`` is a submitit executor or a stand-in with the same ``update_parameters`` and
    ``submit``; by default a ``submitit.SlurmExecutor`` writing under the run's ``.slurm``
    folder. A shard that Slurm refuses is one ``SlurmError`` line with sbatch's own words:
    the shards submitted before it stay recorded (``--resume`` submits the rest); a new run
    that got nothing submitted leaves no folder, so the same run id can be used again.
    """
    folder = slurm_folder(reports, run_id)
    made = [p for p in (folder, *folder.parents) if not p.exists()]  # innermost first
    if executor is None:
        executor = submitit_module().SlurmExecutor(folder=str(folder / "%j"))
    sub = record or Submission(run_id, profile, str(reports), list(planned),
                               [[] for _ in planned], asdict(options),
                               dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                               list(only))
    sent: list[int] = []
    for k in which or range(1, len(planned) + 1):
        before = set(folder.iterdir()) if folder.is_dir() else set()
        said = io.StringIO()  # submitit prints sbatch's stderr; the error line says it once
        try:
            with contextlib.redirect_stderr(said):
                executor.update_parameters(**options.parameters(
                    f"torch-knobs-{run_id}-shard{k}"))
                job = executor.submit(run_shard, sub.profile, sub.reports, run_id, k,
                                      sub.count, list(sub.only), options.budget)
        except REFUSALS as exc:
            _take_back(folder, before, made if record is None and not sent else [])
            raise SlurmError(_refused(exc, k, sub, sent, record is not None, run or run_command)
                             ) from None
        sys.stderr.write(said.getvalue())
        sub.jobs[k - 1].append(str(job.job_id))
        sub.save(folder)
        sent.append(k)
    return sub


def _take_back(folder: Path, before: set[Path], made: Sequence[Path]) -> None:
    """Remove what a refused submission left (submitit's pickle and sbatch script), and the
    folders ``made`` for it (the run's, ``.slurm``, ``reports``) when nothing was submitted."""
    if made and made[0] == folder:
        shutil.rmtree(folder, ignore_errors=True)
        for parent in made[1:]:
            with contextlib.suppress(OSError):  # one that holds something else stays
                parent.rmdir()
        return
    for path in set(folder.iterdir()) - before if folder.is_dir() else ():
        with contextlib.suppress(OSError):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _refused(exc: BaseException, k: int, sub: Submission, sent: Sequence[int], resuming: bool,
             run: Runner) -> str:
    """One line: sbatch's own first line, the partitions where it is about one, and what was
    submitted all the same."""
    said = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if isinstance(exc, OSError):
        why = f"could not run sbatch ({said or type(exc).__name__}); is Slurm installed here?"
    else:
        for prefix in ("sbatch: error: ", "sbatch: ", "Batch job submission failed: "):
            said = said.removeprefix(prefix)  # "refused" says as much
        why = f"sbatch refused shard {k}/{sub.count}: {said or type(exc).__name__}"
    if "partition" in why.lower():
        try:
            names = [p.strip() for p in run(["sinfo", "-h", "-o", "%P"]).split() if p.strip()]
        except QueryError:
            names = []
        if names:
            shown = [f"{p[:-1]} (the default)" if p.endswith("*") else p for p in names]
            why += f"; partitions here: {', '.join(shown)}"
    if sent:
        jobs = ", ".join(f"{j} (Slurm job {sub.jobs[j - 1][-1]})" for j in sent)
        where = slurm_folder(Path(sub.reports), sub.run_id)
        return (f"{why}; shard(s) {jobs} were submitted and are recorded in {where}; "
                "fix the option and pass --resume to submit the rest")
    if resuming:
        return f"{why}; nothing more was submitted"
    return f"{why}; nothing was submitted"


@dataclass(frozen=True)
class ShardState:
    k: int
    job_id: str
    state: str
    planned: int
    ok: int
    failed: int
    folder: str
    interrupted: int = 0  # replicates whose latest row is interrupted (a signal, a limit)
    error: str = ""  # why the state is UNKNOWN

    @property
    def active(self) -> bool:
        """Queued or running, or not known not to be: a job Slurm did not answer about may be
        running, and is neither given up on nor submitted again (unless its shard has every
        row: nothing is left that it could do)."""
        return self.state in ACTIVE or (self.state == UNKNOWN and not self.complete)

    @property
    def complete(self) -> bool:
        """Every planned replicate ok (or skipped), as a local ``--resume`` counts done: a
        failed or interrupted one is run again."""
        return self.ok >= self.planned


def outcomes(rows: Sequence[dict[str, str]]) -> tuple[int, int, int]:
    """(replicates done, failed, interrupted), by each replicate's latest row, each replicate
    once: a resumed shard holds an interrupted row and, later, the same replicate's ok one."""
    last: dict[tuple[str, str, str], str] = {}
    for r in rows:
        key = (r.get("kind", ""), r.get("cell_id", ""), r.get("replicate", ""))
        if last.get(key) not in (Status.OK, Status.SKIPPED):  # once done, a replicate stays done
            last[key] = r.get("status", "")
    done = sum(v in (Status.OK, Status.SKIPPED) for v in last.values())
    interrupted = sum(v == Status.INTERRUPTED for v in last.values())
    return done, len(last) - done - interrupted, interrupted


def states(sub: Submission, queue: Queue) -> list[ShardState]:
    out = []
    reports = Path(sub.reports)
    for k in range(1, sub.count + 1):
        ok, failed, interrupted = outcomes(shard_rows(reports, sub.run_id, k))
        job = sub.jobs[k - 1][-1] if sub.jobs[k - 1] else ""
        found = shard_dirs(reports, sub.run_id, k)
        state = queue.state(job) if job else "NOT SUBMITTED"
        out.append(ShardState(k, job, state, sub.planned[k - 1], ok, failed,
                              str(found[0]) if found else "(not started)", interrupted,
                              queue.errors.get(job, "") if state == UNKNOWN else ""))
    return out


def summary(shard_states: Sequence[ShardState], stream: TextIO) -> None:
    for s in shard_states:
        why = f" ({s.error})" if s.error else ""
        print(f"shard {s.k}/{len(shard_states)}: Slurm job {s.job_id or '-'} {s.state}{why}; "
              f"{s.ok} of {s.planned} planned replicates done, {s.failed} failed, "
              f"{s.interrupted} interrupted; {s.folder}", file=stream)


#: The exit code of a watch left with Ctrl-C (the jobs run on).
EXIT_LEFT = 130


def watch(sub: Submission, queue: Queue, stream: TextIO | None = None,
          clock: Callable[[], float] = time.monotonic, poll_s: float = 5.0,
          sleep: Callable[[float], None] = time.sleep) -> int:
    """Follow every shard until none is queued or running (a job Slurm did not answer about
    counts as running: a query that timed out is asked again): a progress bar over all of
    their rows, then one line per shard. 0 when every shard wrote all its rows, 1 otherwise; a
    Ctrl-C leaves the jobs running (they are Slurm's now) and says how to follow them. The
    lines go to ``stream``, standard error by default."""
    stream = stream or sys.stderr
    reports = Path(sub.reports)
    # what is already on disk (a resumed run's earlier rows) is not this run's progress
    seen = [len(shard_rows(reports, sub.run_id, k)) for k in range(1, sub.count + 1)]
    done = sum(outcomes(shard_rows(reports, sub.run_id, k))[0] for k in range(1, sub.count + 1))
    progress = Progress(max(sum(sub.planned) - done, 0), stream=stream, clock=clock)
    left = False
    try:
        while True:
            for k in range(1, sub.count + 1):
                rows = shard_rows(reports, sub.run_id, k)
                for row in rows[seen[k - 1]:]:
                    label = f"shard {k}: {row.get('cell_name', '')} #r{row.get('replicate')}"
                    progress.end(label, row.get("status", ""))
                seen[k - 1] = len(rows)
            now = states(sub, queue)
            if not any(s.active for s in now):
                break
            sleep(poll_s)
    except KeyboardInterrupt:
        left = True
    finally:
        progress.close()
    if left:
        print(f"stopped watching: the shard jobs keep running; python -m bench status "
              f"{sub.run_id} --reports {sub.reports} reports them", file=stream)
        return EXIT_LEFT
    summary(now, stream)
    return 0 if all(s.complete for s in now) else 1


def unfinished(sub: Submission, queue: Queue, now: Sequence[ShardState] | None = None
               ) -> list[int]:
    """The shards to submit again: not queued or running, and short of their planned rows
    (from ``now``, the shards' states, where the caller has them). A shard short of its rows
    whose job Slurm did not answer about is refused (``SlurmError``): it may be running, and
    submitting it again would run its cells twice."""
    now = states(sub, queue) if now is None else now
    unknown = [s for s in now if s.state == UNKNOWN and not s.complete]
    if unknown:
        said = "; ".join(f"shard {s.k}'s Slurm job {s.job_id}: {s.error}" for s in unknown)
        raise SlurmError(f"cannot resume run {sub.run_id}: Slurm did not say whether its jobs "
                         f"still run ({said}); nothing was submitted; try again once it answers")
    return [s.k for s in now if not s.active and not s.complete]


@contextlib.contextmanager
def resume_lock(sub: Submission) -> Iterator[None]:
    """Held while a resume finds the unfinished shards and submits them: a second resume of
    the same run meanwhile is refused in one line, instead of submitting them twice."""
    path = slurm_folder(Path(sub.reports), sub.run_id) / LOCK
    try:
        f = open(path, "a+b")  # noqa: SIM115 (closed below, after the lock)
    except OSError as exc:
        raise SlurmError(f"cannot resume run {sub.run_id}: {path}: {exc.strerror or exc}"
                         ) from None
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SlurmError(f"cannot resume run {sub.run_id}: another --resume of it is "
                             f"submitting now (it holds {path}); nothing was submitted") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
