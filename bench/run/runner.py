"""The parent process: plan the replicates, launch one child per replicate, record each row.

It never imports torch. What it knows about the machine comes from a *probe* child (the
fingerprint, the installed torchvision models, whether CUDA exists), so bad input is refused
with the real list of valid models before anything is written.

Scheduling: replicates run round-robin over every cell of the profile (replicate 0 of every
cell, then replicate 1, ...), so the arms of every comparison alternate A B A B and slow drift
(thermals, clocks, a neighbour's job) spreads over both arms instead of biasing one.

Faults: each child has a wall-clock timeout, after which its owner (the fork server, or the
spawn launcher's torch-free one) kills its whole process group, and on Linux what left it
(status timeout); a child that dies without a record is a crash, with its signal or exit
code; Ctrl-C or SIGTERM has the running child stopped, records it as interrupted, keeps
every row already written and exits non-zero (``bench.run.interrupts``: only the first
signal interrupts). The runner itself never signals a process: it only asks the launcher.
A write to the run store that fails (a full disk, an I/O error, a read-only folder) stops
the matrix at once: every later replicate would fail the same way, and its row could not be
written either. So does such a fault in the runner's scratch space under TMPDIR (the task
files, the kernel-cache folders, and the children's own files: a child that cannot write
them exits ``SCRATCH_EXIT``), which is no more the cell's fault than a full store is: it
is never recorded as the cell's crash. ``--resume`` skips replicates already ok under the
same fingerprint.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from bench.run import caches, durable, estimate, hooks, usermodels
from bench.run.durable import ScratchError
from bench.run.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.launch import Launcher, LaunchError
from bench.run.matrix import Cell, Profile, Settings, Study
from bench.run.progress import NOT_WRITTEN, Progress
from bench.run.protocol import ModelCheck, Probe, ProtocolError, Record, Task, new_task
from bench.run.store import RunStore, StoreError, new_attempt_id
from bench.schema import SCHEMA_VERSION

LOG_KEEP_BYTES = 64 * 1024
#: The exit code of a run stopped because its store could not be written (sysexits' EX_IOERR).
EXIT_STORE = 74


@dataclass(frozen=True)
class Job:
    """One child process to run: a replicate (op=measure) or half of a repro check."""

    study: Study
    cell: Cell
    replicate: int
    op: str = "measure"

    @property
    def kind(self) -> str:
        return "repro" if self.op == "repro" else self.cell.kind

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.kind, self.cell.cell_id, self.replicate)

    @property
    def target(self) -> str:
        """What a fault spec or a hook matches: ``"<cell_id> <cell name> #r<replicate>"``."""
        return f"{self.cell.cell_id} {self.cell.name} #r{self.replicate}"


def plan(profile: Profile) -> list[Job]:
    """All jobs in run order: replicate rounds over every cell, then the repro checks.

    Round r runs replicate r of every cell of every study (cells shared by several studies
    are measured once). Rotating over the whole profile, not study by study, keeps the two
    arms of every comparison interleaved even when one arm is shared with an earlier study.
    """
    planned = profile.planned()
    rounds = max((s.settings.replicates for s, _ in planned), default=0)
    jobs = [Job(study, cell, r) for r in range(rounds) for study, cell in planned
            if r < study.settings.replicates]
    repro_seen: set[str] = set()
    for study in profile.studies:
        if study.settings.repro:  # a check belongs to the study asking for it, even for a
            for c in study.cells:  # cell an earlier study already measures
                if c.kind == "model" and c.cell_id not in repro_seen:
                    repro_seen.add(c.cell_id)
                    jobs.append(Job(study, c, 0, "repro"))
    return jobs


@dataclass
class RunContext:
    run_id: str
    profile: str
    probe: Probe
    fault: str = ""
    flops: dict[tuple[Any, ...], float] = field(default_factory=dict)

    @property
    def fingerprint_id(self) -> str:
        return self.probe.fingerprint_id

    @property
    def machine(self) -> str:
        return self.probe.machine


@dataclass(frozen=True)
class Outcome:
    """How one child ended: its status and reason, and its record if it left one."""

    status: str
    reason: str = ""
    record: Record | None = None


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
    }
    row.update({k: v for k, v in asdict(cell).items() if k != "kind"})
    return row


def _signal_name(code: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(-code).name
    return f"signal {-code}"


def _log_tail(path: Path, limit: int = 200) -> str:
    with contextlib.suppress(OSError):
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            lines = [ln.strip() for ln in f.read(4096).decode(errors="replace").splitlines()]
        lines = [ln for ln in lines if ln]
        if lines:
            return lines[-1][:limit]
    return ""


def _flops_key(cell: Cell) -> tuple[Any, ...]:
    return (cell.model, cell.model_source, cell.input_shape, cell.inputs, cell.mode,
            tuple(cell.schedule()))


class Runner:
    """Runs jobs through a launcher and writes one row per job. Clock and launcher are
    injectable so tests can drive every status path without torch, and ``hook`` (see
    ``bench.run.hooks``) is called at the instants a test may want to act. The launcher belongs
    to the caller, who opens and closes it."""

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
        self.overheads: list[dict[str, float]] = []  # per replicate, for the speed script
        self.counts: dict[str, int] = {}
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
        """Launch one task and wait for it."""
        task.path.write_text(task.to_json(), encoding="utf-8")
        try:
            child = self.launcher.launch(task.path, timeout_s)
        except LaunchError as exc:
            return Outcome("crash", f"launcher failed: {exc}")
        try:
            self.hook("launched", target)
            end = child.wait(self.poll_s)
            while end is None:
                end = child.wait(self.poll_s)
        except LaunchError as exc:
            child.stop()
            return Outcome("crash", f"launcher failed: {exc}")
        except BaseException:  # Ctrl-C or SIGTERM: the child's owner ends it, then we stop
            self.hook("stopping", target)
            child.stop()
            raise
        if end.timed_out:
            return Outcome("timeout", f"no result after {timeout_s:g} s; process group killed")
        result = Path(task.result_path)
        if result.exists():
            try:
                record = Record.from_json(result.read_text(encoding="utf-8"))
            except (ProtocolError, UnicodeDecodeError) as exc:  # garbage: its row says so
                return Outcome("crash", f"unreadable result: {exc}")
            return Outcome(record.status, record.reason, record)
        if end.code == durable.SCRATCH_EXIT:
            raise self._child_scratch_error(task)
        tail = _log_tail(Path(task.log_path))
        how = _signal_name(end.code) if end.code < 0 else f"exit code {end.code}"
        return Outcome("crash", f"{how} without a result" + (
            f"; last output: {tail}" if tail else ""))

    def _child_scratch_error(self, task: Task) -> ScratchError:
        """Why a child could not write its files: the line it left in its log if it could,
        else its exit code (a full disk may refuse that line too)."""
        tail = _log_tail(Path(task.log_path), limit=400)
        why = tail.partition(durable.SCRATCH_MARK)[2].strip()
        return ScratchError(Path(task.result_path).parent, OSError(
            why or f"a child could not write its files there (exit code {durable.SCRATCH_EXIT})"))

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
        """The cell's warm cache, primed once per run by a process of its own (untimed)."""
        cid = job.cell.cell_id
        if cid not in self._warm:
            folder = self.workdir / "warm" / cid
            caches.make_fresh(folder)
            prime = Job(job.study, job.cell, 0, "prime")
            task = replace(self._task(prime, "prime"), cache_dir=str(folder))
            out = self._run_child(task, job.study.settings.timeout_s, prime.target)
            if out.status != "ok":
                self._keep_log(task, prime)
            self._warm[cid] = folder if out.status == "ok" else Outcome(
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
        try:
            out = self._run_child(replace(task, cache_dir=str(folder)), timeout_s, job.target)
            cache.end_bytes = caches.size_bytes(folder)
        finally:
            caches.remove(folder)
        if out.record is not None:
            cache.start_bytes = out.record.cache_start_bytes
        return out

    # -- one job ---------------------------------------------------------------------------
    def run_job(self, job: Job) -> str:
        t_start = time.time()  # "start cell", for the harness-overhead figure
        row = base_row(self.ctx, job)
        samples: list[dict[str, Any]] = []
        cache = CacheSizes()
        skip = job.cell.device == "cuda" and not self.ctx.probe.cuda
        if not skip and job.cell.kernel_cache == "warm":
            self._warm_cache(job)  # priming is not part of the replicate's time
        row["started_at"] = now_iso()
        t0 = self.clock()
        if skip:
            out = Outcome("skipped", "no-cuda")
        elif job.op == "repro":
            out = self._repro(job, cache)
        else:
            task = self._task(job, "measure")
            if job.cell.kind == "model":
                task = replace(task, flops_per_sample=self.ctx.flops.get(_flops_key(job.cell)))
            out = self._cached_child(job, task, job.study.settings.timeout_s, cache)
            if out.status not in ("ok", "skipped"):
                self._keep_log(task, job)
        record = out.record
        build_start = record.timeline.build_start if record is not None else None
        if build_start is not None:
            self.overheads.append({"launch_to_build_s": build_start - t_start})
        row.update(status=out.status, reason=out.reason,
                   kernel_cache_start_bytes=cache.start_bytes,
                   kernel_cache_end_bytes=cache.end_bytes)
        if record is not None:
            if record.flags is not None:
                row.update(asdict(record.flags))
            row["notes"] = "; ".join(record.notes)[:500]
            if out.status == "ok":
                samples = self._ok_figures(job, record, row)
        row["ended_at"] = now_iso()
        row["wall_s"] = self.clock() - t0
        t_write = time.time()
        with INTERRUPTS.critical():  # samples and row land together, or neither does
            self.store.add(row, samples, between=lambda: self.hook("samples-written", job.target))
            self.written = True
            self.hook("row-written", job.target)
        if build_start is not None:
            self.overheads[-1]["write_s"] = time.time() - t_write
        self.counts[out.status] = self.counts.get(out.status, 0) + 1
        return out.status

    def _ok_figures(self, job: Job, record: Record, row: dict[str, Any]
                    ) -> list[dict[str, Any]]:
        """Fill an ok row's figures from its record; return its samples.csv rows."""
        row.update(asdict(record.metrics))
        row["work_unit"] = record.work_unit
        if record.repro is not None:
            row["repro_bitwise_equal"] = record.repro.bitwise_equal
            row["repro_max_abs_diff"] = record.repro.max_abs_diff
        if record.metrics.flops_per_sample:
            self.ctx.flops[_flops_key(job.cell)] = record.metrics.flops_per_sample
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

    def _repro(self, job: Job, cache: CacheSizes) -> Outcome:
        """Two fresh processes, same seeded steps: the second compares with the first.
        Each starts from its own kernel cache, in the state the cell asks for."""
        timeout_s = job.study.settings.timeout_s
        ref = str(self.workdir / f"repro-{job.cell.cell_id}.pt")
        first = replace(self._task(job, "repro", suffix="a"), repro_out=ref)
        out = self._cached_child(job, first, timeout_s, CacheSizes())
        if out.status != "ok":
            self._keep_log(first, job)
            return Outcome(out.status, f"first run: {out.reason}", out.record)
        second = replace(self._task(job, "repro", suffix="b"), repro_ref=ref)
        out = self._cached_child(job, second, timeout_s, cache)
        if out.status != "ok":
            self._keep_log(second, job)
        return out

    # -- the whole matrix ------------------------------------------------------------------
    def run(self, jobs: Sequence[Job], done: AbstractSet[tuple[str, str, int]] = frozenset()
            ) -> int:
        """Run every job not in ``done``. Returns the process exit code: 0, that of the
        signal that stopped it, or ``EXIT_STORE`` (``store_error`` says why)."""
        todo = [j for j in jobs if j.key not in done]
        with INTERRUPTS.installed():
            try:
                for job in todo:
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
                                self._failure_row(job, "interrupted",
                                                  f"{signal.Signals(signum).name} during the "
                                                  "replicate")
                        if self.progress:
                            self.progress.end(label, "interrupted")
                        return EXIT_CODES.get(signal.Signals(signum), 130)
                    except StoreError as exc:
                        self.store_error = exc
                        if self.progress:
                            self.progress.end(label, NOT_WRITTEN)
                        return EXIT_STORE
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
            self._failure_row(job, "crash", f"runner error: {type(exc).__name__}: {exc}"[:500])
            return "crash"


@contextlib.contextmanager
def probe_folder() -> Iterator[Path]:
    """A scratch folder for the probe under TMPDIR, removed after. A TMPDIR that cannot hold
    one (full, read-only) is one line (``RuntimeError``, as the probe's own failures are), and
    a removal that fails there is left to the system's cleaning."""
    try:
        tmp = tempfile.TemporaryDirectory(prefix="torch-knobs-probe-")
    except OSError as exc:
        raise RuntimeError(f"cannot make a scratch folder under {tempfile.gettempdir()} (the "
                           f"runner's scratch space, TMPDIR): {exc.strerror or exc}") from None
    try:
        yield Path(tmp.name)
    finally:
        with contextlib.suppress(OSError):
            tmp.cleanup()


def probe(launcher: Launcher, workdir: Path, timeout_s: float = 600.0,
          models: Sequence[ModelCheck] = ()) -> Probe:
    """Ask a child what this machine is, and whether the user ``models`` run (its answers are
    in ``Probe.user_models``); raises RuntimeError with a one-line reason."""
    task = replace(new_task("probe", Cell(), Settings(), 0, workdir), models=list(models))
    runner = Runner(launcher, RunStore(workdir), RunContext("", "", Probe({}, [], False)),
                    workdir=workdir)
    try:
        out = runner._run_child(task, timeout_s)
    except (StoreError, OSError) as exc:  # its own files under TMPDIR: one line, not a trace
        raise RuntimeError(f"could not inspect the environment: {exc}") from None
    if out.status != "ok" or out.record is None or out.record.probe is None:
        # the user's code may have taken it down: then say whose, not "is torch installed?"
        died = usermodels.probe_death(Path(task.log_path), out.status, out.reason) if models \
            else ""
        raise RuntimeError(died or f"could not inspect the environment (is torch installed?): "
                                   f"{out.status}: {out.reason}")
    return out.record.probe


def completed_keys(rows: Iterable[dict[str, str]], fingerprint_id: str
                   ) -> set[tuple[str, str, int]]:
    """Replicates already ok (or skipped, e.g. no-cuda) under this fingerprint, among the
    complete ``rows`` (``RunStore.open``): a resume does not run them again. Failed and
    interrupted ones run again."""
    done = set()
    for row in rows:
        if row.get("status") in ("ok", "skipped") and row.get("fingerprint_id") == \
                fingerprint_id:
            with contextlib.suppress(ValueError):
                done.add((row["kind"], row["cell_id"], int(row["replicate"])))
    return done


def new_run_id(profile: str, when: dt.datetime | None = None) -> str:
    when = when or dt.datetime.now(dt.timezone.utc)
    return f"{when:%Y%m%dT%H%M%SZ}-{profile}"


def latest_run(root: Path, machine: str, profile: str) -> Path | None:
    """The newest run directory of this machine and profile, for ``--resume`` without --out."""
    runs = sorted(p for p in (root / machine).glob(f"*-{profile}") if p.is_dir())
    return runs[-1] if runs else None


def estimate_jobs(jobs: Sequence[Job], probe_: Probe) -> list[float]:
    """Seconds per job; a warm cell's first job also carries the process that primes it."""
    cores = probe_.cores
    out = []
    primed: set[str] = set()
    for j in jobs:
        skipped = j.cell.device == "cuda" and not probe_.cuda
        t = estimate.replicate_s(j.cell, j.study.settings, cores, skipped,
                                 usermodels.flops_for(probe_, j.cell))
        if j.cell.kernel_cache == "warm" and not skipped and j.cell.cell_id not in primed:
            primed.add(j.cell.cell_id)
            t += estimate.prime_s(j.cell, cores)
        out.append(2 * t if j.op == "repro" else t)
    return out


def print_dry_run(jobs: Sequence[Job], probe_: Probe, stream: TextIO = sys.stdout) -> float:
    est = estimate_jobs(jobs, probe_)
    per_cell: dict[tuple[str, str, str], list[float]] = {}
    for j, t in zip(jobs, est):
        per_cell.setdefault((j.study.name, j.cell.cell_id, j.cell.name + (
            " (repro check)" if j.op == "repro" else "")), []).append(t)
    width = max((len(k[0]) for k in per_cell), default=5)
    print(f"{'study':<{width}}  {'cell id':<10}  reps  {'est':>7}  cell", file=stream)
    for (study, cid, name), ts in per_cell.items():
        note = "  [skipped: no-cuda]" if " cuda " in f" {name} " and not probe_.cuda else ""
        print(f"{study:<{width}}  {cid:<10}  {len(ts):>4}  {sum(ts):>6.1f}s  {name}{note}",
              file=stream)
    total = sum(est)
    print(f"{len(per_cell)} cells, {len(jobs)} processes, estimated {total / 60:.1f} min "
          f"here (a rough estimate: see bench/run/estimate.py)", file=stream)
    if not probe_.cuda and any(j.cell.device == "cuda" for j in jobs):
        with_cuda = sum(estimate_jobs(jobs, Probe(probe_.env, probe_.models, True)))
        cores = probe_.cores
        print(f"on a CUDA machine with this one's {cores} CPU core{'s' if cores != 1 else ''}: "
              f"estimated {with_cuda / 60:.1f} min (the CPU cells and compiling scale with the "
              f"cores)", file=stream)
    return total


def logs_hint(run_dir: Path) -> str:
    logs = run_dir / "logs"
    return f" (logs of failed replicates in {logs})" if logs.exists() else ""

