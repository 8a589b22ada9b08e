"""The parent process: launch one child per planned job, record each row.

It never imports torch. What it knows about the machine comes from the probe
(``bench.run.execute.probe``); the jobs and their order from the plan (``bench.run.plan.jobs``).

Faults: each child has a wall-clock timeout, after which its owner (the fork server, or the
spawn launcher's torch-free one) kills its whole process group, and on Linux what left it
(status timeout); a child that dies without a record is a crash, with its signal or exit
code; Ctrl-C or SIGTERM has the running child stopped, records it as interrupted, keeps
every row already written and exits non-zero (``bench.run.execute.interrupts``: only the first
signal interrupts). The runner itself never signals a process: it only asks the launcher.
A write to the run store that fails (a full disk, an I/O error, a read-only folder) stops
the matrix at once: every later replicate would fail the same way, and its row could not be
written either. So does such a fault in the runner's scratch space under TMPDIR (the task
files, the kernel-cache folders, and the children's own files: a child that cannot write
them exits ``SCRATCH_EXIT``), which is no more the cell's fault than a full store is: it
is never recorded as the cell's crash. ``--resume`` skips replicates already ok under the
same fingerprint (``bench.run.store.resume``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import signal
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from bench.run import caches
from bench.run.execute import hooks
from bench.run.execute.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.execute.launch import Launcher
from bench.run.execute.outcome import Outcome, run_child
from bench.run.execute.progress import NOT_WRITTEN, Progress
from bench.run.plan import modelspec
from bench.run.plan.adaptive import Looks
from bench.run.plan.budget import Budget
from bench.run.plan.jobs import Job, skip_reason, twins
from bench.run.plan.matrix import Cell
from bench.run.protocol import Probe, Record, Task, new_task
from bench.run.store import durable
from bench.run.store.breakdown import JobTiming
from bench.run.store.durable import ScratchError
from bench.run.store.store import RunStore, StoreError, new_attempt_id
from bench.schema import SCHEMA_VERSION, Status

LOG_KEEP_BYTES = 64 * 1024
#: The exit code of a run stopped because its store could not be written (sysexits' EX_IOERR).
EXIT_STORE = 74


@dataclass
class RunContext:
    run_id: str
    profile: str
    probe: Probe
    fault: str = ""
    sitting: int = 1  # which sitting of the run this is (``session.next_sitting``)
    flops: dict[tuple[Any, ...], float] = field(default_factory=dict)

    @property
    def fingerprint_id(self) -> str:
        return self.probe.fingerprint_id

    @property
    def machine(self) -> str:
        return self.probe.machine


@dataclass
class CacheSizes:
    """A replicate's kernel-cache folder in bytes: when its child started, and at the end."""

    start_bytes: int | None = None
    end_bytes: int | None = None


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def base_row(ctx: RunContext, job: Job) -> dict[str, Any]:
    cell = job.cell
    row: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "run_id": ctx.run_id,
        "fingerprint_id": ctx.fingerprint_id, "machine": ctx.machine, "profile": ctx.profile,
        "study": job.study.name, "cell_id": cell.cell_id, "cell_name": cell.name,
        "kind": job.kind, "replicate": job.replicate, "attempt_id": new_attempt_id(),
        "sitting": ctx.sitting,
    }
    row.update({k: v for k, v in asdict(cell).items() if k != "kind"})
    return row


def _timing(begin: float, record: Record | None, row: dict[str, Any], prime_s: float,
            samples: Sequence[dict[str, Any]]) -> JobTiming:
    """One job's moments and timed seconds, for the run's time breakdown."""
    tl = record.timeline if record is not None else None
    steady = sum(float(s["seconds"]) for s in samples if s.get("phase") == "steady")
    return JobTiming(
        begin=begin, end=time.time(), entered=tl.entered if tl else None,
        build_start=tl.build_start if tl else None, built=tl.built if tl else None,
        cold_end=tl.cold_end if tl else None, steady_start=tl.steady_start if tl else None,
        steady_end=tl.steady_end if tl else None, ended=tl.ended if tl else None,
        cold_s=float(row.get("cold_pass_s") or 0.0), steady_s=steady, prime_s=prime_s,
        study=str(row.get("study", "")))


def flops_key(cell: Cell) -> tuple[Any, ...]:
    """The cells that share one FLOP count, so that a run counts each once.

    Why not per cell: a count of a torchvision model (on the meta device, ``FlopCounterMode``)
    costs its first replicate 0.04-0.3 s on a 2-core VM. Every op it counts (a convolution, a
    matmul) is linear in the batch, so FLOPs per sample depend only on the model, the mode and
    how one cycle's samples split between resolutions: batch 1 and batch 8, static or ragged,
    give the same count to the last digit. A user's model is counted with its own inputs, so
    its cells share a count only with the same schedule.
    """
    schedule = cell.schedule()
    if modelspec.is_user_model(cell.model):
        return (cell.model, cell.model_source, cell.input_shape, cell.inputs, cell.mode,
                tuple(schedule))
    samples: dict[int, int] = {}
    for b, r in schedule:
        samples[r] = samples.get(r, 0) + b
    total = sum(samples.values())
    return (cell.model, cell.mode,
            tuple(sorted((r, Fraction(n, total)) for r, n in samples.items())))


class Runner:
    """Runs jobs through a launcher and writes one row per job. Clock and launcher are
    injectable so tests can drive every status path without torch, and ``hook`` (see
    ``bench.run.execute.hooks``) is called at the instants a test may want to act. The
    launcher belongs to the caller, who opens and closes it."""

    def __init__(self, launcher: Launcher, store: RunStore, ctx: RunContext,
                 progress: Progress | None = None, clock: Callable[[], float] = time.monotonic,
                 poll_s: float = 0.2, workdir: Path | None = None,
                 hook: hooks.Hook = hooks.none) -> None:
        self.launcher = launcher
        self.hook = hook
        self.store = store
        self.ctx = ctx
        self.progress = progress
        self.clock = clock
        self.poll_s = poll_s
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            try:
                self._tmp = tempfile.TemporaryDirectory(prefix="torch-knobs-")
            except OSError as exc:
                raise ScratchError(Path(tempfile.gettempdir()), exc) from None
            workdir = Path(self._tmp.name)
        self.workdir: Path = workdir
        self.timings: list[JobTiming] = []  # per job, for the run's time breakdown
        self.finished: set[tuple[str, str, int]] = set()  # jobs that left a row, any status
        self.budget_stop: Job | None = None  # the job a budget stopped the run before
        #: a fresh cell's id → its warm twin's (the same cell with a warm cache), to run
        self._twins: dict[str, str] = {}
        #: (op, cell id) → the wall seconds of its jobs in this run, priming apart
        self._walls: dict[tuple[str, str], list[float]] = {}
        self.counts: dict[str, int] = {}
        #: each job's (status, steady median) in this sitting: what the adaptive looks read
        self.outcomes: dict[tuple[str, str, int], tuple[str, float | None]] = {}
        self.extra: list[Job] = []  # the adaptive replicates this sitting ran
        self.extra_short = False  # whether the budget left no room for an adaptive round
        self.written = False  # whether the current job's row is on disk
        self.store_error: StoreError | None = None  # why the run stopped, if its store failed
        #: cell id → its primed warm cache folder, or how priming failed
        self._warm: dict[str, Path | Outcome] = {}

    def close(self) -> None:
        if self._tmp is not None:
            with contextlib.suppress(OSError):  # a failing disk keeps its scratch: harmless
                self._tmp.cleanup()

    # -- one child -------------------------------------------------------------------------
    def _run_child(self, task: Task, timeout_s: float, target: str = "") -> Outcome:
        return run_child(self.launcher, task, timeout_s, poll_s=self.poll_s, hook=self.hook,
                         target=target)

    def _keep_log(self, task: Task, job: Job) -> None:
        """Failed replicates keep the tail of their output next to the results (part of the
        run store: a log that cannot be written stops the run like a row that cannot)."""
        src = Path(task.log_path)
        if not src.exists() or src.stat().st_size == 0:
            return
        what = "prime" if job.op == "prime" else job.kind
        dst = self.store.run_dir / "logs" / f"{what}-{job.cell.cell_id}-r{job.replicate}.log"
        with open(src, "rb") as f:
            f.seek(max(0, src.stat().st_size - LOG_KEEP_BYTES))
            tail = f.read()
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(tail)
        except OSError as exc:
            with contextlib.suppress(OSError):
                dst.unlink()
            raise StoreError(dst, exc) from None

    def _task(self, job: Job, op: str, suffix: str = "") -> Task:
        return new_task(op, job.cell, job.study.settings, job.replicate, self.workdir, suffix,
                        fault=self.ctx.fault)

    # -- kernel caches ---------------------------------------------------------------------
    def _warm_cache(self, job: Job) -> Path | Outcome:
        """The cell's warm cache: its fresh twin's first ok replicate's (``_keep_for_twin``),
        or, where there is none yet, primed once per run by a process of its own (untimed)."""
        cid = job.cell.cell_id
        if cid not in self._warm:
            folder = self.workdir / "warm" / cid
            caches.make_fresh(folder)
            prime = Job(job.study, job.cell, 0, "prime")
            task = replace(self._task(prime, "prime"), cache_dir=str(folder))
            out = self._run_child(task, job.study.settings.timeout_s, prime.target)
            if out.status != Status.OK:
                self._keep_log(task, prime)
            self._warm[cid] = folder if out.status == Status.OK else Outcome(
                out.status, f"priming the warm kernel cache failed: {out.reason}")
        return self._warm[cid]

    def _cached_child(self, job: Job, task: Task, timeout_s: float, cache: CacheSizes
                      ) -> Outcome:
        """Run one child in a kernel-cache folder of its own: empty (``fresh``), or a copy of
        the cell's primed cache (``warm``). Fills ``cache`` with the folder's size when the
        child started (as the child saw it) and when it ended; the folder is then removed."""
        folder = Path(task.result_path.replace(".result.json", ".cache"))
        warm = self._warm_cache(job) if job.cell.kernel_cache == "warm" else None
        if isinstance(warm, Outcome):
            return warm
        if warm is None:
            caches.make_fresh(folder)
        else:
            caches.make_copy(warm, folder)
        kept = False
        try:
            out = self._run_child(replace(task, cache_dir=str(folder)), timeout_s, job.target)
            cache.end_bytes = caches.size_bytes(folder)
            kept = self._keep_for_twin(job, out, folder)
        finally:
            if not kept:
                caches.remove(folder)
        if out.record is not None:
            cache.start_bytes = out.record.cache_start_bytes
        return out

    def _keep_for_twin(self, job: Job, out: Outcome, folder: Path) -> bool:
        """Keep a fresh replicate's cache as its warm twin's, instead of priming one.

        A warm cell's cache is what an earlier job of the same model on the same box left;
        a replicate of the same cell with a fresh cache, just measured, is such a job. Its
        folder becomes the twin's primed cache (the warm replicates start from copies of it),
        and the untimed process that would prime it is not run. Only the first ok one."""
        twin = self._twins.get(job.cell.cell_id)
        if job.op != "measure" or out.status != Status.OK or twin is None or twin in self._warm:
            return False
        target = self.workdir / "warm" / twin
        caches.remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(target)
        self._warm[twin] = target
        return True

    # -- one job ---------------------------------------------------------------------------
    def run_job(self, job: Job) -> str:
        t_start = time.time()  # "start cell": the time breakdown's begin
        row = base_row(self.ctx, job)
        samples: list[dict[str, Any]] = []
        cache = CacheSizes()
        skip = skip_reason(job.cell, self.ctx.probe)
        prime_s = 0.0
        if not skip and job.cell.kernel_cache == "warm":
            t_prime = time.time()
            self._warm_cache(job)  # priming is not part of the replicate's time
            prime_s = time.time() - t_prime
        row["started_at"] = now_iso()
        t0 = self.clock()
        if skip:
            out = Outcome(Status.SKIPPED, skip)
        elif job.op == "repro":
            out = self._repro(job, cache)
        else:
            task = self._task(job, "measure")
            if job.cell.kind == "model":
                task = replace(task, flops_per_sample=self.ctx.flops.get(flops_key(job.cell)))
            out = self._cached_child(job, task, job.study.settings.timeout_s, cache)
            if out.status not in (Status.OK, Status.SKIPPED):
                self._keep_log(task, job)
        record = out.record
        row.update(status=out.status, reason=out.reason,
                   kernel_cache_start_bytes=cache.start_bytes,
                   kernel_cache_end_bytes=cache.end_bytes)
        if record is not None:
            if record.flags is not None:
                row.update(asdict(record.flags))
            row["notes"] = "; ".join(record.notes)[:500]
            if out.status == Status.OK:
                samples = self._ok_figures(job, record, row)
        row["ended_at"] = now_iso()
        row["wall_s"] = self.clock() - t0
        with INTERRUPTS.critical():  # samples and row land together, or neither does
            self.store.add(row, samples, between=lambda: self.hook("samples-written", job.target))
            self.written = True
            self.hook("row-written", job.target)
        self.timings.append(_timing(t_start, record, row, prime_s, samples))
        self._walls.setdefault((job.op, job.cell.cell_id), []).append(row["wall_s"])
        self.counts[out.status] = self.counts.get(out.status, 0) + 1
        self.outcomes[job.key] = (out.status, row.get("steady_median_s"))
        return out.status

    def _ok_figures(self, job: Job, record: Record, row: dict[str, Any]
                    ) -> list[dict[str, Any]]:
        """Fill an ok row's figures from its record; return its samples.csv rows."""
        row.update(asdict(record.metrics))
        row["work_unit"] = record.work_unit
        if record.energy is not None:
            row.update(asdict(record.energy))
        if record.repro is not None:
            row["repro_bitwise_equal"] = record.repro.bitwise_equal
            row["repro_max_abs_diff"] = record.repro.max_abs_diff
        if record.metrics.flops_per_sample:
            self.ctx.flops[flops_key(job.cell)] = record.metrics.flops_per_sample
        ids = {"schema_version": SCHEMA_VERSION, "run_id": self.ctx.run_id,
               "fingerprint_id": self.ctx.fingerprint_id, "cell_id": job.cell.cell_id,
               "replicate": job.replicate, "attempt_id": row["attempt_id"]}
        return [{**asdict(s), **ids} for s in record.samples]

    def _failure_row(self, job: Job, status: str, reason: str) -> None:
        row = base_row(self.ctx, job)
        row.update(status=status, reason=reason, ended_at=now_iso())
        with INTERRUPTS.critical():
            self.store.add(row)
            self.written = True
            self.hook("row-written", job.target)
        self.counts[status] = self.counts.get(status, 0) + 1
        self.outcomes[job.key] = (status, None)

    def _repro(self, job: Job, cache: CacheSizes) -> Outcome:
        """Two fresh processes, same seeded steps: the second compares with the first.
        Each starts from its own kernel cache, in the state the cell asks for."""
        timeout_s = job.study.settings.timeout_s
        ref = str(self.workdir / f"repro-{job.cell.cell_id}.pt")
        first = replace(self._task(job, "repro", suffix="a"), repro_out=ref)
        out = self._cached_child(job, first, timeout_s, CacheSizes())
        if out.status != Status.OK:
            self._keep_log(first, job)
            return Outcome(out.status, f"first run: {out.reason}", out.record)
        second = replace(self._task(job, "repro", suffix="b"), repro_ref=ref)
        out = self._cached_child(job, second, timeout_s, cache)
        if out.status != Status.OK:
            self._keep_log(second, job)
        return out

    # -- the whole matrix ------------------------------------------------------------------
    def _expected(self, job: Job, seconds: Mapping[tuple[str, str, int], float]) -> float:
        """A job's expected seconds: what its cell's replicates took in this run so far (the
        median), else the plan's estimate."""
        seen = self._walls.get((job.op, job.cell.cell_id))
        return statistics.median(seen) if seen else seconds.get(job.key, 0.0)

    def _extras(self, looks: Looks | None, budget: Budget | None) -> Iterator[Job]:
        """The adaptive replicates (``bench.run.plan.adaptive``), round by round, once every job of
        the plan has run: a round starts only where the budget allows all of it, and each of
        its replicates only where the budget still allows that one (the check a planned
        replicate gets); else the rounds end, and the run with them, cleanly."""
        while looks is not None:
            batch = [j for j in looks.next_round(self.outcomes) if j.key not in self.outcomes]
            if not batch:
                return
            guess = [looks.seconds.get(j.cell.cell_id, 0.0) for j in batch]
            if budget is not None and not budget.allows(
                    self.clock(), sum(self._walls_or(j, s) for j, s in zip(batch, guess))):
                self.extra_short = True
                return
            if self.progress:
                self.progress.more(len(batch))
            for job, seconds in zip(batch, guess):
                if budget is not None and not budget.allows(self.clock(),
                                                            self._walls_or(job, seconds)):
                    self.extra_short = True
                    return
                self.extra.append(job)
                yield job

    def _walls_or(self, job: Job, guess: float) -> float:
        seen = self._walls.get((job.op, job.cell.cell_id))
        return statistics.median(seen) if seen else guess

    def run(self, jobs: Sequence[Job], done: AbstractSet[tuple[str, str, int]] = frozenset(),
            budget: Budget | None = None,
            seconds: Mapping[tuple[str, str, int], float] | None = None,
            looks: Looks | None = None) -> int:
        """Run every job not in ``done``, in order; with a ``budget``, stop (exit 0) before
        the first job expected to end past it (``seconds``: the plan's estimates), which
        ``budget_stop`` then names. Then, with ``looks``, the adaptive replicates while the
        budget allows them (``_extras``). Returns the process exit code: 0, that of the signal
        that stopped it, or ``EXIT_STORE`` (``store_error`` says why)."""
        todo = [j for j in jobs if j.key not in done]
        self._twins = twins(todo)
        with INTERRUPTS.installed():
            try:
                for job in itertools.chain(todo, self._extras(looks, budget)):
                    extra = bool(self.extra) and self.extra[-1] is job  # checked there
                    if budget is not None and not extra and not budget.allows(
                            self.clock(), self._expected(job, seconds or {})):
                        self.budget_stop = job
                        break
                    label = f"{job.study.name}: {job.cell.name} #r{job.replicate}" + (
                        " (repro)" if job.op == "repro" else "")
                    if self.progress:
                        self.progress.begin(label)
                    self.written = False
                    try:
                        status = self._run_or_crash(job)
                    except KeyboardInterrupt as exc:
                        signum = getattr(exc, "signum", signal.SIGINT)
                        if not self.written:  # a finished replicate keeps its own row
                            # stopping anyway: a store that fails now, or a signal that was
                            # not ours to defer, must not lose the "resume with" line
                            with contextlib.suppress(StoreError, KeyboardInterrupt):
                                self._failure_row(job, Status.INTERRUPTED,
                                                  f"{signal.Signals(signum).name} during the "
                                                  "replicate")
                        if self.progress:
                            self.progress.end(label, Status.INTERRUPTED)
                        return EXIT_CODES.get(signal.Signals(signum), 130)
                    except StoreError as exc:
                        self.store_error = exc
                        if self.progress:
                            self.progress.end(label, NOT_WRITTEN)
                        return EXIT_STORE
                    self.finished.add(job.key)
                    if self.progress:
                        self.progress.end(label, status)
            finally:
                if self.progress:
                    self.progress.close()
        return 0

    def _run_or_crash(self, job: Job) -> str:
        """``run_job``; a runner bug is the replicate's crash row, not the end of the run. A
        disk fault is not a bug of the cell's: outside the run store (which raises
        ``StoreError`` itself) it can only be the scratch space's, and it stops the run."""
        try:
            return self.run_job(job)
        except Exception as exc:
            if not self.written and durable.is_disk_fault(exc):
                assert isinstance(exc, OSError)
                name = exc.filename if isinstance(exc.filename, str) else str(self.workdir)
                raise ScratchError(Path(name), exc) from None
            if self.written or isinstance(exc, StoreError):
                raise
            self._failure_row(job, Status.CRASH, f"runner error: {type(exc).__name__}: {exc}"[:500])
            return Status.CRASH
