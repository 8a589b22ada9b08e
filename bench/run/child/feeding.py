"""Measuring a pipeline cell, alone or feeding its model (``kind`` pipeline or e2e).

The protocol is the model cells': the first batch is timed apart (for a pipeline, that is the
workers' start-up and their first batch; end to end, the model's first step too), then every
batch is timed under the study's stopping rule. Two things differ (``Settings.feeding``): the
other batches the workers were handed at start-up arrive in a burst after the first, so they
are the warm-up, untimed; and the window holds whole rounds of the workers, a batch from each,
as the DataLoader delivers them in order. A pipeline's step is "the next batch, on the
device"; an end-to-end step is that plus the model's step on it, synchronised, as a training
loop that reads its loss each step is, so the time the step waited for its batch is time the
device sat idle (``data_wait_frac``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.child import loader, measure, usage, workloads
from bench.run.plan import pipelines
from bench.run.protocol import Record, Sample, Task


class NoImages(RuntimeError):
    """The cell's folder holds no JPEG files any more (it did when the run started)."""


class NothingDecoded(RuntimeError):
    """Not one file of the timed window decoded: the replicate measured no pipeline, and a
    rate of 0 samples/s would read as one."""


def skip_reason(cell: Any) -> str | None:
    """Why this machine cannot run the cell: the ``pil`` decoder without Pillow, a
    torchvision decoder without ``torchvision.io``'s JPEG functions (deprecated since
    torchvision 0.29): without them every file would read as a bad one."""
    if cell.decoder == "pil" and loader.pillow() is None:
        return "no-pillow: the pil decoder needs Pillow (pip install pillow)"
    if cell.decoder != "pil":
        missing = loader.torchvision_jpeg_missing()
        if missing:
            return f"no-decode-jpeg: {missing}; the pil decoder does not need it"
    return None


def image_files(torch: Any, task: Task) -> tuple[list[Path], str]:
    """The cell's JPEG files and a note saying where they came from."""
    cell = task.cell
    if cell.images:
        files = pipelines.list_images(Path(cell.images).expanduser())
        if not files:
            raise NoImages(f"images folder {cell.images!r} holds no JPEG files")
        return files, f"images: {len(files)} JPEG files from the user's folder"
    folder = Path(task.result_path).parent / f"images-s{loader.SEED}"
    what = loader.make_images(torch, folder)
    return pipelines.list_images(folder), f"images: {what}"


def _sync(torch: Any, cell: Any) -> Any:
    return torch.cuda.synchronize if cell.device == "cuda" else None


def measure_feed(torch: Any, task: Task, record: Record, init_dir: Path | None = None) -> None:
    """One replicate of a pipeline or e2e cell; fills ``record``. ``init_dir``: where an e2e
    cell's model finds the run's copy of its initial weights (``initcache``)."""
    cell = task.cell
    workers = cell.num_workers or 0
    st = task.settings.feeding(workers)
    record.timeline.build_start = time.time()
    files, note = image_files(torch, task)
    record.notes.append(note)
    feed = loader.Feed(torch, cell, files)
    model_step = _model_step(torch, task, init_dir) if cell.kind == "e2e" else None
    tree = usage.Tree(workers)
    delivered: dict[int, int] = {}
    waits: dict[int, float] = {}
    errors = [0]

    def step(i: int) -> Any:
        t0 = time.perf_counter()
        batch, n, bad = feed.next()
        waits[i] = time.perf_counter() - t0
        delivered[i], errors[0] = n, errors[0] + bad
        if model_step is not None and n:
            model_step(i, batch)
        tree.poll()
        return batch

    sync = _sync(torch, cell)
    timer: measure.Timer = measure.SyncedTimer(sync) if sync else measure.CpuTimer()
    record.timeline.built = time.time()
    try:
        cold, start = measure.cold_pass(step, [(cell.batch_size, cell.resolution)], timer)
        record.timeline.cold_end = time.time()

        def on_start() -> None:
            record.timeline.steady_start = time.time()
            tree.start()

        times, iters = measure.steady_state(step, start, st, timer,
                                            period=schema.round_size(workers),
                                            on_start=on_start)
        tree.stop()
        record.timeline.steady_end = time.time()
    finally:
        feed.close()
    if not any(delivered[i] for i in iters):
        raise NothingDecoded(f"no file decoded in the timed window ({errors[0]} dropped, "
                             f"{cell.decoder} decoder): the images are not JPEGs it can read")
    _fill(record, cold, times, iters, delivered, waits, errors[0], tree, cell)


def _fill(record: Record, cold: list[float], times: list[float], iters: list[int],
          delivered: dict[int, int], waits: dict[int, float], errors: int, tree: usage.Tree,
          cell: Any) -> None:
    """The record's figures from what the loop kept."""
    m = record.metrics
    m.cold_first_iter_s = m.cold_pass_s = cold[0]
    s = measure.summarize(times)
    m.steady_median_s, m.steady_p10_s, m.steady_p90_s = s.median, s.p10, s.p90
    m.steady_mean_s, m.steady_ci_rel, m.steady_iters = s.mean, s.ci_rel, s.iters
    m.samples_per_s = sum(delivered[i] for i in iters) / sum(times)
    m.decode_errors = errors
    m.cpu_time_s, m.tree_peak_rss_bytes = tree.cpu_s, tree.peak_rss
    m.peak_rss_bytes = usage._self_peak_rss()
    if tree.note:
        record.notes.append(tree.note)
    if errors:
        record.notes.append(f"{errors} image(s) did not decode and were dropped from their "
                            f"batches")
    if cell.kind == "e2e":
        m.data_wait_frac = min(1.0, sum(waits[i] for i in iters) / sum(times))
    record.samples += [Sample("cold", 0, delivered.get(0, 0), cell.resolution, cold[0])]
    record.samples += [Sample("steady", i, delivered[i], cell.resolution, t)
                       for i, t in zip(iters, times)]


def _model_step(torch: Any, task: Task, init_dir: Path | None) -> Any:
    """The model cell's step, fed the loader's batches: each batch is copied into the step's
    input tensor on the device (the host-to-device copy a training loop makes)."""
    cell = replace(task.cell, kind="model")
    wl = workloads.build(torch, cell, init_dir=init_dir)
    shape = wl.schedule[0]
    assert wl.inputs is not None
    x = wl.inputs[shape][0]

    def step(i: int, batch: Any) -> Any:
        n = int(batch.shape[0])
        x[:n].copy_(batch, non_blocking=True)
        return wl.step(i)

    return step
