"""The child process: one replicate of one cell in, one JSON record out.

Every replicate runs in a fresh process because cuDNN's algorithm cache and the backend
flags are process-global, and the cache key ignores ``cudnn.benchmark``: whichever setting
touches a convolution shape first wins for the rest of the process. A fresh process is also
the only place a cold first iteration can be measured, and it keeps an OOM, a sticky CUDA
error or a segfault from taking the rest of the matrix down.

Contract with the parent (the same for the fork server and a plain subprocess): read the task
JSON, send stdout and stderr to the task's log file, write the record JSON atomically to the
task's result path, exit 0. A child that dies leaves no record; the parent classifies it from
the exit status. Statuses decided here: ok, oom, error, skipped.

Test hook: ``task["fault"]`` (copied by the runner from ``TORCH_KNOBS_FAULT``) injects a fault
so the real launch, timeout and status paths are exercised. Format: comma-separated
``KIND[@MATCH]``; KIND is crash, exit, hang, spam, oom, error or fill-cache (writes a file
into the CUDA JIT cache folder, as a kernel compile would, so the cache states can be tested
without a GPU); MATCH is a substring of ``"<cell_id> <cell name> #r<replicate>"`` (empty
matches every replicate).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import random
import resource
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.run import caches
from bench.run.child import flags, measure, workloads
from bench.run.matrix import Cell, Settings

FAULT_KINDS = ("crash", "exit", "hang", "spam", "oom", "error", "fill-cache")


class InjectedError(RuntimeError):
    """Raised by the ``error`` fault; a stand-in for any exception in a model step."""


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def wanted_fault(task: dict[str, Any], cell: Cell) -> str | None:
    spec = task.get("fault") or ""
    target = f"{cell.cell_id} {cell.name} #r{task.get('replicate', 0)}"
    for part in filter(None, (p.strip() for p in spec.split(","))):
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
    """Map an exception to (status, reason). The reason keeps the class and first line."""
    text = str(exc).strip().splitlines()
    reason = f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
    oom_types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                                  getattr(torch.cuda, "OutOfMemoryError", None)) if t)
    text_oom = ("out of memory", "cudnn_status_alloc_failed", "cublas_status_alloc_failed")
    if (oom_types and isinstance(exc, oom_types)) or any(t in reason.lower() for t in text_oom):
        return "oom", reason
    return "error", reason


def _skip_reason(torch: Any, cell: Cell) -> str | None:
    if cell.device == "cuda" and not torch.cuda.is_available():
        return "no-cuda"
    if cell.device == "mps" and not (hasattr(torch.backends, "mps")
                                     and torch.backends.mps.is_available()):
        return "no-mps"
    if cell.kind == "ceiling" and cell.model == "matmul-tf32" and cell.device != "cuda":
        return "tf32-is-cuda-only"
    return None


def _timer(torch: Any, cell: Cell) -> measure.Timer:
    if cell.device == "cuda":
        return measure.CudaEventTimer(torch)
    if cell.device == "mps":
        return measure.SyncedTimer(torch.mps.synchronize)
    return measure.CpuTimer()


def _memory(torch: Any, cell: Cell, prefix: str) -> dict[str, float]:
    if cell.device != "cuda":
        return {}
    return {f"{prefix}_allocated_bytes": float(torch.cuda.max_memory_allocated()),
            f"{prefix}_reserved_bytes": float(torch.cuda.max_memory_reserved())}


def _peak_rss() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(rss if sys.platform == "darwin" else rss * 1024)


def measure_cell(torch: Any, task: dict[str, Any], cell: Cell, st: Settings,
                 record: dict[str, Any]) -> None:
    """The measurement protocol for one replicate; fills ``record`` as it goes."""
    fault = wanted_fault(task, cell)
    inject_process_fault(fault)
    record["timeline"]["build_start"] = time.time()
    if cell.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    if cell.kind == "ceiling":
        step, work, unit = workloads.ceiling(torch, cell)
        schedule: list[tuple[int, int]] = [(1, cell.resolution)]
        record["metrics"].update(work_per_iter=work)
        record["work_unit"] = unit
    else:
        wl = workloads.build(torch, cell)
        step, schedule = wl.step, wl.schedule
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
    m = record["metrics"]
    m.update(cold_first_iter_s=cold[0], cold_pass_s=sum(cold))
    m.update(_memory(torch, cell, "cold_peak_mem"))
    seen: list[tuple[int, int]] = list(dict.fromkeys(schedule))
    record["samples"] += [("cold", i, *shape, t) for i, (shape, t) in enumerate(zip(seen, cold))]
    if cell.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times, iters = measure.steady_state(step, start, st, timer, period=len(schedule))
    m.update(measure.summarize(times))
    shapes = [schedule[i % len(schedule)] for i in iters]
    m["samples_per_s"] = sum(b for b, _ in shapes) / sum(times) if cell.kind == "model" else None
    record["samples"] += [("steady", i, b, r, t) for i, (b, r), t in zip(iters, shapes, times)]
    m.update(_memory(torch, cell, "peak_mem"))
    m["peak_rss_bytes"] = _peak_rss()
    if cell.kind == "model":
        flops = task.get("flops_per_sample")
        if flops is None:
            try:
                flops = workloads.flops_per_sample(torch, cell)
            except Exception as exc:  # a count we cannot make is left empty, not invented
                record["notes"].append(f"flop count failed: {type(exc).__name__}: {exc}")
        m["flops_per_sample"] = flops


def repro_cell(torch: Any, task: dict[str, Any], cell: Cell, st: Settings,
               record: dict[str, Any]) -> None:
    """Seeded steps; the first process saves its tensors, the second compares bitwise."""
    inject_process_fault(wanted_fault(task, cell))
    torch.manual_seed(0)
    random.seed(0)
    wl = workloads.build(torch, cell)
    for i in range(st.repro_steps):
        wl.step(i)
    tensors = {k: v.detach().to("cpu") for k, v in wl.outputs().items()}
    ref_path = task.get("repro_ref")
    if not ref_path:
        torch.save(tensors, task["repro_out"])
        return
    ref = torch.load(ref_path, weights_only=True)
    comparable = set(ref) == set(tensors) and all(
        ref[k].shape == tensors[k].shape for k in tensors)
    equal = comparable and all(torch.equal(ref[k], tensors[k]) for k in tensors)
    diff: float | None = None  # empty in the CSV when the runs are not comparable or NaN
    if comparable:
        diffs = [float((ref[k].double() - tensors[k].double()).abs().max().item())
                 for k in tensors]
        diff = None if any(math.isnan(d) for d in diffs) else max(diffs, default=0.0)
    record["repro"] = {"bitwise_equal": equal, "max_abs_diff": diff, "tensors": len(tensors)}


def prime_cell(torch: Any, task: dict[str, Any], cell: Cell, st: Settings,
               record: dict[str, Any]) -> None:
    """Fill a warm cache: build the cell and run its first iteration of every shape, untimed.

    What this leaves in the cache folder is what a second job of the same model on the same
    box finds there; the ``warm`` replicates each start from a copy of it.
    """
    inject_process_fault(wanted_fault(task, cell))
    wl = workloads.build(torch, cell)
    seen: set[tuple[int, int]] = set()
    for i, shape in enumerate(wl.schedule):
        if shape not in seen:
            seen.add(shape)
            wl.step(i)
    if cell.device == "cuda":
        torch.cuda.synchronize()


def probe(torch: Any, record: dict[str, Any]) -> None:
    from bench.run.child import env

    record["env"] = env.collect(torch)
    record["models"] = workloads.available_models()
    record["cuda"] = bool(torch.cuda.is_available())


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Execute one task and return its record; exceptions become statuses, not crashes."""
    record: dict[str, Any] = {"status": "ok", "reason": "", "eff": {}, "metrics": {},
                              "samples": [], "notes": [], "started_at": now_iso(),
                              "timeline": {"entered": time.time()}}
    import torch

    op = task["op"]
    try:
        if op == "probe":
            probe(torch, record)
        else:
            cell = Cell(**task["cell"])
            st = Settings(**task["settings"])
            skip = _skip_reason(torch, cell)
            if skip:
                record.update(status="skipped", reason=skip)
            else:
                flags.apply(torch, cell)
                record["eff"] = flags.read_back(torch, cell)
                run = {"repro": repro_cell, "prime": prime_cell}.get(op, measure_cell)
                run(torch, task, cell, st, record)
    except Exception as exc:
        record["status"], record["reason"] = classify(torch, exc)
        record["metrics"] = {}  # a failed replicate keeps no partial numbers
        record["samples"] = []
    record["ended_at"] = now_iso()
    return record


def write_json_atomic(path: str | Path, obj: Any) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
    """Entry point shared by the fork server's children and ``python -m bench.run.child.worker``."""
    task = json.loads(Path(task_path).read_text(encoding="utf-8"))
    redirect_output(task["log_path"])
    # A safety net if the parent is gone (SIGKILLed runner): the child ends itself a minute
    # after its own timeout instead of hanging on forever.
    signal.alarm(int(task["settings"]["timeout_s"]) + 60)
    cache_dir = task.get("cache_dir")
    start_bytes = None
    if cache_dir:  # before anything can initialise CUDA: the driver reads its path at cuInit
        start_bytes = caches.size_bytes(cache_dir)
        caches.point_at(cache_dir)
    record = run_task(task)
    record["cache"] = {"start_bytes": start_bytes}
    write_json_atomic(task["result_path"], record)
    return 0


def task_for(op: str, cell: Cell, st: Settings, replicate: int, workdir: Path,
             **extra: Any) -> dict[str, Any]:
    """Build a task dict; the runner writes it to ``<workdir>/<token>.task.json``."""
    token = f"{op}-{cell.cell_id}-r{replicate}-{extra.pop('suffix', '')}".rstrip("-")
    return {"op": op, "cell": asdict(cell), "settings": asdict(st), "replicate": replicate,
            "result_path": str(workdir / f"{token}.result.json"),
            "log_path": str(workdir / f"{token}.log"), **extra}


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1]))
