"""The child process: one replicate of one cell in, one JSON record out.

Every replicate runs in a fresh process because cuDNN's algorithm cache and the backend
flags are process-global, and the cache key ignores ``cudnn.benchmark``: whichever setting
touches a convolution shape first wins for the rest of the process. A fresh process is also
the only place a cold first iteration can be measured, and it keeps an OOM, a sticky CUDA
error or a segfault from taking the rest of the matrix down.

Contract with the parent (the same for the fork server and a plain subprocess): read the
``Task`` file (``bench.run.protocol``), send stdout and stderr to the task's log file, write
the ``Record`` atomically to the task's result path, exit 0. A child that dies leaves no
record; the parent classifies it from the exit status. Statuses decided here: ok, oom, error,
skipped. A child that cannot write its own files (a full disk) exits ``SCRATCH_EXIT``, which
stops the run.

Test hook: ``Task.fault`` (copied by the runner from ``TORCH_KNOBS_FAULT``) injects a fault
so the real launch, timeout and status paths are exercised. Format: comma-separated
``KIND[@MATCH]``; KIND is crash, exit, hang, spam, oom, error or fill-cache (writes a file
into the CUDA JIT cache folder, as a kernel compile would, so the cache states can be tested
without a GPU); MATCH is a substring of ``"<cell_id> <cell name> #r<replicate>"`` (empty
matches every replicate).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from bench.run import caches
from bench.run.child import (
    compiling,
    factory,
    feeding,
    flags,
    measure,
    numerics,
    nvml,
    rapl,
    telemetry,
    workloads,
)
from bench.run.plan import cpuinfo
from bench.run.plan.matrix import Cell, Settings
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.run.protocol import Metrics, Probe, Record, Repro, Sample, Task, Timeline
from bench.run.store import durable
from bench.schema import NUMERICS_COLUMNS, Status

FAULT_KINDS = ("crash", "exit", "hang", "spam", "oom", "error", "fill-cache", "compile-error")


#: What an allocator that ran out says (see ``factory.OOM_TEXT``, shared with the probe).
OOM_TEXT = factory.OOM_TEXT


class InjectedError(RuntimeError):
    """Raised by the ``error`` fault; a stand-in for any exception in a model step."""


def wanted_fault(task: Task) -> str | None:
    cell = task.cell
    target = f"{cell.cell_id} {cell.name} #r{task.replicate}"
    for part in filter(None, (p.strip() for p in task.fault.split(","))):
        kind, _, match = part.partition("@")
        if kind in FAULT_KINDS and match in target:
            return kind
    return None


def inject_process_fault(kind: str | None) -> None:
    """Faults that end or stall the process, triggered before the model is built."""
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(5)
    elif kind == "exit":
        os._exit(3)
    elif kind == "hang":
        time.sleep(10**6)
    elif kind == "spam":
        while True:  # a child that never stops printing must still be killable on time
            print("spam " * 40, flush=True)
            time.sleep(0.001)
    elif kind == "fill-cache" and os.environ.get("CUDA_CACHE_PATH"):
        path = Path(os.environ["CUDA_CACHE_PATH"]) / f"injected-{os.getpid()}.bin"
        path.write_bytes(b"\0" * 4096)


def classify(torch: Any, exc: BaseException) -> tuple[str, str]:
    """Map an exception to (status, reason). The reason keeps the class and first line (a
    user model's error is its own sentence, which names the class it wraps)."""
    text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    first = text[0] if text else ""
    if first.endswith(":") and len(text) > 1:  # "backend='inductor' raised:" names no cause
        first = f"{first} {text[1]}"
    reason = f"{type(exc).__name__}: {first}"[:500]
    if isinstance(exc, factory.UserModelError):
        reason = (text[0] if text else "")[:500]
    if factory.is_oom(torch, exc):
        return Status.OOM, reason
    return Status.ERROR, reason


def _skip_reason(torch: Any, cell: Cell, settings: Settings | None = None) -> str | None:
    if cell.device == "cuda" and not torch.cuda.is_available():
        return "no-cuda"
    if cell.device == "mps" and not (hasattr(torch.backends, "mps")
                                     and torch.backends.mps.is_available()):
        return "no-mps"
    if cell.kind == "ceiling" and cell.model == "matmul-tf32" and cell.device != "cuda":
        return "tf32-is-cuda-only"
    if (settings is not None and settings.native_bf16_only and cell.device == "cpu"
            and cell.precision == "amp-bf16" and not cpuinfo.native_bf16()):
        return cpuinfo.NO_NATIVE_BF16
    if cell.kind in PIPELINE_KINDS:
        return feeding.skip_reason(cell)
    if cell.kind == "model":
        return compiling.skip_reason(torch, cell)
    return None


def _timer(torch: Any, cell: Cell) -> measure.Timer:
    if cell.device == "cuda":
        return measure.CudaEventTimer(torch)
    if cell.device == "mps":
        return measure.SyncedTimer(torch.mps.synchronize)
    return measure.CpuTimer()


def _memory(torch: Any, cell: Cell) -> tuple[float | None, float | None]:
    """The GPU's peak allocated and reserved bytes since the last reset (None off CUDA)."""
    if cell.device != "cuda":
        return None, None
    return (float(torch.cuda.max_memory_allocated()),
            float(torch.cuda.max_memory_reserved()))


def _peak_rss() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(rss if sys.platform == "darwin" else rss * 1024)


def init_folder(task: Task) -> Path:
    """Where the run keeps its models' initial weights (``initcache``): its scratch folder,
    beside the task's result file."""
    return Path(task.result_path).parent / "init"


def _stamp(record: Record) -> None:
    """The moment the warm-up ended and the timed steady state began."""
    record.timeline.steady_start = time.time()


def meter_for(torch: Any, device: str) -> telemetry.Meter:
    """The best meter this process can read for ``device``; ``NoMeter`` with the reason
    otherwise (``mps``: none is read)."""
    if device == "cuda":
        return nvml.open_meter(torch)
    if device == "cpu":
        return rapl.open_meter()
    return telemetry.NoMeter(f"no energy counters read on {device}")


def energy_settings(settings: Settings, meter: telemetry.Meter) -> tuple[Settings, str]:
    """The stopping rule with a steady window long enough for the energy counter where the
    meter measures energy (``telemetry.MIN_WINDOW_S``), and the note that says so."""
    least = telemetry.MIN_WINDOW_S
    if not meter.measures_energy or settings.min_time_s >= least:
        return settings, ""
    note = (f"steady window extended from {settings.min_time_s:g} s to at least {least:g} s "
            "for the energy counter")
    return settings.lasting(least), note


def _timed_window(torch: Any, task: Task, record: Record, step: Callable[[int], Any],
                  start: int, period: int, timer: measure.Timer
                  ) -> tuple[list[float], list[int], telemetry.Reading]:
    """The steady state with the device's meter running over exactly its timed part."""
    meter = meter_for(torch, task.cell.device)
    settings, note = energy_settings(task.settings, meter)
    if note:
        record.notes.append(note)
    if isinstance(meter, nvml.NvmlMeter) and nvml.sampler_off():
        record.notes.append(nvml.SAMPLER_OFF_NOTE)

    def begin() -> None:
        _stamp(record)
        meter.start()

    times, iters = measure.steady_state(step, start, settings, timer, period=period,
                                        on_start=begin)
    reading = meter.stop()
    record.timeline.steady_end = time.time()
    return times, iters, reading


def measure_cell(torch: Any, task: Task, record: Record) -> None:
    """The measurement protocol for one replicate; fills ``record`` as it goes."""
    cell = task.cell
    fault = wanted_fault(task)
    inject_process_fault(fault)
    if cell.kind in PIPELINE_KINDS:
        feeding.measure_feed(torch, task, record, init_folder(task))
        return
    record.timeline.build_start = time.time()
    m = record.metrics
    if cell.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    if cell.kind == "ceiling":
        step, work, unit = workloads.ceiling(torch, cell)
        schedule: list[tuple[int, int]] = [(1, cell.resolution)]
        m.work_per_iter = work
        record.work_unit = unit
    else:
        wl = workloads.build(torch, cell, fail_compile=fault == "compile-error",
                             init_dir=init_folder(task))
        step, schedule = wl.step, wl.schedule
    compiled = cell.kind == "model" and cell.compile != "off"
    at_start = compiling.snapshot(torch) if compiled else None
    record.timeline.built = time.time()
    if fault in ("oom", "error"):

        def step(i: int) -> Any:  # the first model step raises, as a real one would
            if fault == "oom":
                raise torch.cuda.OutOfMemoryError(
                    "CUDA out of memory. Tried to allocate 2.00 GiB (injected fault)")
            raise InjectedError("injected fault in the model step")

    timer = _timer(torch, cell)
    # The cold pass is the delay a user waits (autotuning does host work and synchronises),
    # so it is wall-clock time with a device sync on both sides, not device (event) time.
    cold_timer = measure.SyncedTimer(torch.cuda.synchronize) if cell.device == "cuda" else timer
    cold, start = measure.cold_pass(step, schedule, cold_timer)
    record.timeline.cold_end = time.time()
    m.cold_first_iter_s, m.cold_pass_s = cold[0], sum(cold)
    m.cold_peak_mem_allocated_bytes, m.cold_peak_mem_reserved_bytes = _memory(torch, cell)
    seen: list[tuple[int, int]] = list(dict.fromkeys(schedule))
    record.samples += [Sample("cold", i, b, r, t) for i, ((b, r), t) in enumerate(zip(seen, cold))]
    after_cold = compiling.snapshot(torch) if compiled else None
    if compiled:
        compiling.settle(torch)
    if cell.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times, iters, reading = _timed_window(torch, task, record, step, start, len(schedule), timer)
    if at_start is not None and after_cold is not None:
        got = compiling.figures(at_start, after_cold, compiling.snapshot(torch))
        m.compile_time_s, m.compiles = got.compile_time_s, got.compiles
        m.recompiles, m.graph_breaks = got.recompiles, got.graph_breaks
        m.steady_graph_breaks, m.graphs = got.steady_graph_breaks, got.graphs
        m.graph_break_reasons = got.graph_break_reasons
        record.notes += got.notes
    s = measure.summarize(times)
    m.steady_median_s, m.steady_p10_s, m.steady_p90_s = s.median, s.p10, s.p90
    m.steady_p95_s, m.steady_p99_s = s.p95, s.p99
    m.steady_mean_s, m.steady_ci_rel, m.steady_iters = s.mean, s.ci_rel, s.iters
    shapes = [schedule[i % len(schedule)] for i in iters]
    m.samples_per_s = sum(b for b, _ in shapes) / sum(times) if cell.kind == "model" else None
    record.energy = telemetry.apply(
        reading, sum(b for b, _ in shapes) if cell.kind == "model" else 0, m)
    record.samples += [Sample("steady", i, b, r, t) for i, (b, r), t in zip(iters, shapes, times)]
    m.peak_mem_allocated_bytes, m.peak_mem_reserved_bytes = _memory(torch, cell)
    m.peak_rss_bytes = _peak_rss()
    if cell.kind == "model":
        flops = task.flops_per_sample
        if flops is None:  # a count we cannot make is left empty, not invented
            flops, note = workloads.count_flops(torch, cell, wl)
            if note:  # the row's reason says why its FLOP column is empty, and so do its notes
                record.notes.append(note)
                record.reason = record.reason or note
        m.flops_per_sample = flops
        if task.settings.checks_numerics(task.cell, task.replicate):
            check_numerics(torch, task, record, wl)


def check_numerics(torch: Any, task: Task, record: Record, wl: workloads.Workload) -> None:
    """The numerics check, after every timed window and the FLOP count, so it touches no
    measured figure. One that fails leaves its columns empty and says why in the notes: the
    timing stands. A TF32 switch that does not read back fails the replicate."""
    try:
        record.notes += numerics.check(torch, task.cell, wl, record.metrics,
                                       record.metrics.flops_per_sample,
                                       kept_in=Path(task.result_path).parent / "numref")
    except flags.FlagError:
        raise
    except Exception as exc:
        for name in NUMERICS_COLUMNS:
            setattr(record.metrics, name, None)
        record.notes.append(f"numerics failed: {classify(torch, exc)[1]}")


def repro_cell(torch: Any, task: Task, record: Record) -> None:
    """Seeded steps; the first process saves its tensors, the second compares bitwise."""
    inject_process_fault(wanted_fault(task))
    torch.manual_seed(0)
    random.seed(0)
    wl = workloads.build(torch, task.cell)
    for i in range(task.settings.repro_steps):
        wl.step(i)
    tensors = {k: v.detach().to("cpu") for k, v in wl.outputs().items()}
    if not task.repro_ref:
        torch.save(tensors, task.repro_out)
        return
    ref = torch.load(task.repro_ref, weights_only=True)
    comparable = set(ref) == set(tensors) and all(
        ref[k].shape == tensors[k].shape for k in tensors)
    equal = comparable and all(torch.equal(ref[k], tensors[k]) for k in tensors)
    diff: float | None = None  # empty in the CSV when the runs are not comparable or NaN
    if comparable:
        diffs = [float((ref[k].double() - tensors[k].double()).abs().max().item())
                 for k in tensors]
        diff = None if any(math.isnan(d) for d in diffs) else max(diffs, default=0.0)
    record.repro = Repro(equal, diff, len(tensors))


def prime_cell(torch: Any, task: Task, record: Record) -> None:
    """Fill a warm cache: build the cell and run its first iteration of every shape, untimed.

    What this leaves in the cache folder is what a second job of the same model on the same
    box finds there; the ``warm`` replicates each start from a copy of it.
    """
    inject_process_fault(wanted_fault(task))
    wl = workloads.build(torch, task.cell, init_dir=init_folder(task))
    seen: set[tuple[int, int]] = set()
    for i, shape in enumerate(wl.schedule):
        if shape not in seen:
            seen.add(shape)
            wl.step(i)
    if task.cell.device == "cuda":
        torch.cuda.synchronize()


def probe(torch: Any, task: Task, record: Record) -> None:
    """The fingerprint first (its flag defaults must be a fresh process's), then what autocast
    really does on each device, then the user models asked about (importing them may run any
    code)."""
    from bench.run.child import env

    fingerprint = env.collect(torch)
    cuda = bool(torch.cuda.is_available())
    autocast = {d: flags.autocast_dtypes(torch, d) for d in ("cpu", "cuda") if d == "cpu" or cuda}
    record.probe = Probe(fingerprint, workloads.available_models(), cuda, autocast,
                         [factory.check(torch, c) for c in task.models])


_OPS: dict[str, Callable[[Any, Task, Record], None]] = {
    "measure": measure_cell, "repro": repro_cell, "prime": prime_cell}


def run_task(task: Task) -> Record:
    """Execute one task and return its record; exceptions become statuses, not crashes."""
    record = Record(timeline=Timeline(entered=time.time()))
    import torch

    try:
        if task.op == "probe":
            probe(torch, task, record)
        else:
            skip = _skip_reason(torch, task.cell, task.settings)
            if skip:
                record.status, record.reason = Status.SKIPPED, skip
            else:
                flags.apply(torch, task.cell)
                record.flags = flags.read_back(torch, task.cell)
                _OPS[task.op](torch, task, record)
    except factory.NotApplicable as exc:  # e.g. channels_last for a model whose input is 2-D
        record.status, record.reason = Status.SKIPPED, str(exc)
        record.metrics = Metrics()
        record.samples = []
    except Exception as exc:
        record.status, record.reason = classify(torch, exc)
        record.metrics = Metrics()  # a failed replicate keeps no partial numbers
        record.samples = []
    record.timeline.ended = time.time()
    return record


def write_atomic(path: str | Path, text: str) -> None:
    """The whole file or none of it: the runner never reads half a record (and a full disk
    keeps no half of one taking its space)."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def redirect_output(log_path: str) -> None:
    """Send this process's fds 0/1/2 away from the parent's pipes (the fork server's
    protocol channel among them) so a chatty child can neither corrupt nor block them."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(devnull)


def child_main(task_path: str) -> int:
    """Entry point of the fork server's children and of ``python -m bench.run.child.worker``.

    Its own files (the task, the log, the kernel-cache folders, the record) are the runner's
    scratch space: a disk fault there (``durable.is_disk_fault``) exits ``SCRATCH_EXIT``, after
    a line in the log if it can still be written, and the runner stops the run on it instead
    of taking it for the cell's crash. What the replicate itself raises is a status already.
    """
    try:
        return _child(task_path)
    except OSError as exc:
        if not durable.is_disk_fault(exc):
            raise
        with contextlib.suppress(Exception):
            print(f"{durable.SCRATCH_MARK} {exc}", file=sys.stderr, flush=True)
        return durable.SCRATCH_EXIT


def _child(task_path: str) -> int:
    task = Task.from_json(Path(task_path).read_text(encoding="utf-8"))
    redirect_output(task.log_path)
    # A safety net if the parent is gone (SIGKILLed runner): the child ends itself a minute
    # after its own timeout instead of hanging on forever.
    signal.alarm(int(task.settings.timeout_s) + 60)
    start_bytes = None
    if task.cache_dir:  # before anything initialises CUDA: the driver reads its path at cuInit
        start_bytes = caches.size_bytes(task.cache_dir)
        caches.point_at(task.cache_dir)
    record = run_task(task)
    record.cache_start_bytes = start_bytes
    write_atomic(task.result_path, record.to_json())
    # the log's last line says how the replicate ended (kept for failed ones, next to the row)
    print(f"replicate ended: {record.status}" + (f": {record.reason}" if record.reason else ""))
    return 0


def main(argv: Sequence[str]) -> NoReturn:
    """``python -m bench.run.child.worker TASK``: ``child_main``'s exit code, as the fork
    server's children give it (``os._exit`` after a flush that may fail): a log on a full disk
    must not turn ``SCRATCH_EXIT`` into the interpreter's 120 for an unflushable stdout."""
    code = child_main(argv[0])
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
