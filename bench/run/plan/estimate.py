"""A rough duration estimate per replicate and per job, for ``--dry-run`` and the progress ETA.

It only needs to be right within a factor of about two: its job is to tell a user whether a
profile takes minutes or hours before they start it. The constants are round numbers fitted
to two real runs (an H200 with a 16-core Intel host, and a 2-core AMD VM, 2026-11); the real
figures for any machine are in its results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from bench.run.plan import usermodels
from bench.run.plan.checksize import TRAIN_STEPS, check_size
from bench.run.plan.jobs import Job, skip_reason, twins
from bench.run.plan.learned import CellCost, calibration, repro_key
from bench.run.plan.matrix import Cell, Settings
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.run.protocol import Probe
from bench.schema import ENERGY_MIN_WINDOW_S, round_size

#: Forward GFLOPs per sample at 224x224 (torchvision's documented figures), and a factor for
#: how well the architecture uses the hardware (depthwise convolutions use it poorly).
_GFLOPS = {"resnet18": (1.82, 1.0), "resnet34": (3.66, 1.0), "resnet50": (4.09, 1.0),
           "resnet101": (7.80, 1.0), "mobilenet_v3_small": (0.06, 0.15),
           "mobilenet_v3_large": (0.22, 0.2), "mobilenet_v2": (0.30, 0.2),
           "convnext_tiny": (4.46, 0.7), "vit_b_16": (17.56, 1.0), "efficientnet_b0": (0.39, 0.2),
           "squeezenet1_1": (0.35, 0.5), "regnet_y_400mf": (0.40, 0.3)}

#: Effective TFLOP/s assumed per device and arithmetic. CPU model steps scale far worse than
#: linearly with cores: ResNet-50 ran at about 0.08 TFLOP/s on 2 cores and 0.12-0.16 on the
#: H200's 16-core host (inference and training at batch 128).
_CPU_TFLOPS_2_CORES = 0.08
_CPU_CORE_EXPONENT = 0.3
#: Fixed cost per step, whatever the batch: operator dispatch and kernel launches. On the H200
#: a ResNet-50 step at batch 1 took 3.4 ms (inference) and 19 ms (training), MobileNetV3 6 ms
#: and 16 ms; on its host CPU 15-27 ms and 60-160 ms.
_FLOOR_S = {("cuda", "infer"): 4e-3, ("cuda", "train"): 17e-3, ("cpu", "infer"): 0.012,
            ("cpu", "train"): 0.05}
#: ResNet-50 training at batch 128 on an H200: 26 TFLOP/s in fp32 (TF32 convolutions), 28 in
#: bf16 autocast (eager mode is bound by its many small kernels), 11 in strict fp32.
_CUDA_TFLOPS = {"fp32": 25.0, "fp32-strict": 11.0, "amp-bf16": 28.0, "amp-fp16": 28.0}
#: cudnn.benchmark's search per distinct input shape once the kernels it tries are compiled
#: (an H200 against a shared cache: 1.3 s for ResNet-50 inference, 3 s for training).
_BENCHMARK_SEARCH_S = {"infer": 1.3, "train": 3.0}
#: What an empty kernel cache adds to a benchmark-on cold pass: compiling the kernels it tries
#: (first shape, each further shape). From the H200's first run, where the first replicate of
#: a cell met a cache that had not seen its kernels: ResNet-50 training 16.0 s against 3.0 and
#: 4.7 s in later rounds, bf16 training 12.8 s against 3.4 and 3.9 s, inference 3.2 s against
#: 1.1 and 1.2 s, eight training shapes 50.4 s against 23.1 and 19.6 s.
_FRESH_COMPILE_S = {"infer": (2.0, 0.3), "train": (12.0, 2.5)}
#: Share of ResNet-50's convolution search a model has (few distinct convolutions search
#: less). Guesses, not measurements: ViT has one convolution (its patch embedding), ConvNeXt
#: a handful of depthwise and strided ones.
_SEARCH_SHARE = {"vit_b_16": 0.15, "convnext_tiny": 0.6}
_COPY_BYTES_S = {"cpu": 5e9, "cuda": 2e12, "mps": 1e11}
#: Process start to first step: fork, flags, CUDA context, model build (on the H200, a CUDA
#: replicate's wall time beyond its cold pass and timed iterations: median 0.58 s).
_OVERHEAD_S = {"cpu": 0.4, "cuda": 0.6, "mps": 1.5}


#: How well a model of unknown architecture (a user's) is assumed to use the hardware.
_UNKNOWN_EFFICIENCY = 0.7


#: A pipeline's CPU seconds per sample (decode, augment, collate) on one core: a guess (Pillow
#: and the reference recipe took 8-30 ms an image on a shared 2-core AMD VM, a few ms on an
#: idle server core), to be refitted from the rows of a run like every other guess here.
_PIPELINE_S_PER_SAMPLE = 0.006


def pipeline_s(cell: Cell, cores: int) -> float:
    """One batch of a pipeline: its samples' decoding spread over its workers (the main
    process where there are none), at most one worker per core."""
    workers = max(1, min(cell.num_workers or 0, cores))
    return _PIPELINE_S_PER_SAMPLE * cell.batch_size / workers


def _forward(cell: Cell, flops_per_sample: float | None) -> tuple[float, float]:
    """One sample's forward FLOPs at the cell's resolution, and the architecture's efficiency:
    counted where given, else the table's."""
    if flops_per_sample is not None:
        return flops_per_sample, _UNKNOWN_EFFICIENCY
    gflops, eff = _GFLOPS.get(cell.model, (4.0, _UNKNOWN_EFFICIENCY))
    return gflops * 1e9 * (cell.resolution / 224) ** 2, eff


def iteration_s(cell: Cell, cores: int, flops_per_sample: float | None = None) -> float:
    """One steady iteration. ``flops_per_sample``: the forward FLOPs of one sample at the
    cell's input, where they were counted (a user model's, by the probe); otherwise the table
    above, scaled by resolution, or a ResNet-50-sized guess. A pipeline's is a batch; an
    end-to-end one the slower of the batch and the step."""
    if cell.kind == "pipeline":
        return pipeline_s(cell, cores)
    if cell.kind == "e2e":
        return max(pipeline_s(cell, cores),
                   iteration_s(replace(cell, kind="model"), cores, flops_per_sample))
    if cell.kind == "ceiling":
        if cell.model == "copy":
            return 2 * cell.resolution * 2**20 / _COPY_BYTES_S.get(cell.device, 5e9)
        flops = 2.0 * cell.resolution**3
    else:
        forward, eff = _forward(cell, flops_per_sample)
        per_sample = forward * (3 if cell.mode == "train" else 1)
        mean_batch = sum(b for b, _ in cell.schedule()) / len(cell.schedule())
        flops = per_sample * mean_batch / eff
    floor = _FLOOR_S.get((cell.device, cell.mode), 0.0) if cell.kind == "model" else 0.0
    if cell.device == "cuda":
        rate = _CUDA_TFLOPS[cell.precision] * 1e12
        return max(flops / rate, floor, 2e-4)
    threads = cell.cpu_threads or cores
    rate = _CPU_TFLOPS_2_CORES * 1e12 * (threads / 2) ** _CPU_CORE_EXPONENT
    return max(flops / rate, floor)


#: The first iteration of a shape against a steady one, and the first CUDA iteration's fixed
#: cost (library handles, workspaces). On the H200's host a CPU cold pass took 1.0-1.5 steady
#: steps at batch 16 and 128; on the GPU a benchmark-off ResNet-50 cold pass took 0.3-0.6 s.
_COLD_FACTOR = {"cpu": 1.2, "cuda": 2.0}
_CUDA_FIRST_S = 0.3


#: torch.compile's first call with an empty cache, for a ResNet-18-sized graph (a training
#: step adds the backward's compilation). CPU: a 2-core AMD VM with torch 2.14 took 18.2-20.0 s
#: for ResNet-18 inference at batch 8 (the committed cpu run of 2026-12-01), and 12.9 s
#: (inference) against 30.7 s (training) for a two-convolution model. CUDA: not measured here
#: yet; a guess from public reports of Inductor on ResNet-50 (tens of seconds, minutes with
#: max-autotune), to be refitted from a GPU run.
_COMPILE_S = {("cpu", "infer"): 20.0, ("cpu", "train"): 48.0, ("cuda", "infer"): 30.0,
              ("cuda", "train"): 60.0}
#: A model's graph against ResNet-18's (more layers, more kernels to generate).
_COMPILE_GRAPH = {"resnet18": 1.0, "resnet34": 1.5, "resnet50": 2.0, "resnet101": 3.5,
                  "mobilenet_v3_small": 1.5, "mobilenet_v3_large": 1.8, "mobilenet_v2": 1.6,
                  "convnext_tiny": 1.8, "vit_b_16": 1.5, "efficientnet_b0": 2.0}
#: Modes against ``default``: max-autotune times candidate kernels for each GEMM and
#: convolution (on a CPU there are fewer candidates).
_COMPILE_MODE = {"default": 1.0, "reduce-overhead": 1.1, "max-autotune": 4.0,
                 "max-autotune-no-cudagraphs": 3.8}
_CPU_COMPILE_MODE = {"max-autotune": 2.0, "max-autotune-no-cudagraphs": 2.0}
#: With a warm cache (the FX graph, Inductor and Triton caches filled by an earlier process)
#: the same 2-core VM took 2.0-2.2 s for ResNet-18 where a fresh cache took 18.2-20.0 s, and
#: 1.3-1.5 s for the small model where it took 12.9-30.7 s: about a tenth.
_COMPILE_WARM = 0.1


def compile_s(cell: Cell, cores: int, kernel_cache: str | None = None) -> float:
    """What compiling adds to the cold pass: every graph the schedule's shapes compile."""
    if cell.kind != "model" or cell.compile == "off":
        return 0.0
    first = (_COMPILE_S.get((cell.device, cell.mode), 60.0)
             * _COMPILE_GRAPH.get(cell.model, 1.0)
             * (_CPU_COMPILE_MODE if cell.device == "cpu" else {}).get(
                 cell.compile, _COMPILE_MODE[cell.compile])
             * (max(cores, 1) / 2) ** -_CPU_CORE_EXPONENT)
    shapes = len(set(cell.schedule()))
    # one graph per shape with dynamic=false; auto recompiles once, symbolically, at the
    # first new shape; true compiles symbolically from the start (a little dearer)
    graphs = {"false": shapes, "auto": min(shapes, 2), "true": 1.2}[cell.compile_dynamic]
    total = first * graphs
    return total * (_COMPILE_WARM if (kernel_cache or cell.kernel_cache) == "warm" else 1.0)


def cold_pass_s(cell: Cell, cores: int, kernel_cache: str | None = None,
                flops_per_sample: float | None = None) -> float:
    """The first iteration of every shape, with the search and (fresh cache) compilation."""
    cold = cell.shape_count * iteration_s(cell, cores, flops_per_sample) * _COLD_FACTOR.get(
        cell.device, 2.0)
    if cell.device == "cuda":
        cold += _CUDA_FIRST_S
    cold += compile_s(cell, cores, kernel_cache)
    if cell.device == "cuda" and cell.cudnn_benchmark == "on" and cell.kind == "model":
        share = _SEARCH_SHARE.get(cell.model, 1.0)
        shapes = len(set(cell.schedule()))
        cold += _BENCHMARK_SEARCH_S[cell.mode] * shapes * share
        if (kernel_cache or cell.kernel_cache) == "fresh":
            first, each = _FRESH_COMPILE_S[cell.mode]
            cold += (first + each * (shapes - 1)) * share
    return cold


def prime_s(cell: Cell, cores: int) -> float:
    """The untimed process that fills a ``warm`` cell's cache: a start and a fresh cold pass."""
    return _OVERHEAD_S.get(cell.device, 1.0) + cold_pass_s(cell, cores, "fresh")


def _steady_s(t: float, st: Settings, period: int) -> float:
    """The stopping rule's window for iterations of ``t`` seconds: past min_time_s once the
    interval is tight, by max_time_s (plus the cycle under way) otherwise, but never below
    min_iters nor beyond max_iters iterations."""
    steady = min(max(st.min_time_s, st.min_iters * t), st.max_time_s + t * period)
    return min(max(steady, st.min_iters * t), max(st.max_iters, st.min_iters) * t)


def energy_window(cell: Cell, st: Settings) -> Settings:
    """The stopping rule as the child runs it on a CUDA device, whose energy NVML measures:
    a steady window of at least ``ENERGY_MIN_WINDOW_S`` (``child.worker.energy_settings``; a
    CPU's RAPL counters are rarely readable, so its cells are planned without it)."""
    if cell.device != "cuda" or cell.kind == "repro":
        return st
    return st.lasting(ENERGY_MIN_WINDOW_S)


def _window(cell: Cell, st: Settings) -> tuple[int, Settings]:
    """The period and stopping rule the child runs the cell's window under: an input
    pipeline's whole rounds past its start-up (``Settings.feeding``, with no energy window),
    a model's cycle of shapes (``energy_window``)."""
    if cell.kind in PIPELINE_KINDS:
        workers = cell.num_workers or 0
        return round_size(workers), st.feeding(workers)
    return len(cell.schedule()), energy_window(cell, st)


def replicate_s(cell: Cell, st: Settings, cores: int, skipped: bool = False,
                flops_per_sample: float | None = None, cost: CellCost | None = None) -> float:
    """Estimated wall time of one replicate, from launch to result (``flops_per_sample``: see
    ``iteration_s``); from ``cost``, the cell's measured parts, where there are some."""
    if skipped:
        return 0.05
    period, st = _window(cell, st)
    if cost is not None:  # measured: its steady window kept inside this run's stopping rule
        t = cost.iteration_s
        hi = _steady_s(t, replace(st, min_time_s=st.max_time_s), period)
        least = st.min_time_s if cell.device == "cuda" else 0.0  # rows older than the window
        steady = min(max(cost.steady_s, st.min_iters * t, least), hi)
        return cost.overhead_s + cost.cold_s + st.warmup(period) * t + steady
    t = iteration_s(cell, cores, flops_per_sample)
    warm = st.warmup(period) * t
    return _OVERHEAD_S.get(cell.device, 1.0) + cold_pass_s(
        cell, cores, flops_per_sample=flops_per_sample) + warm + _steady_s(t, st, period)


#: What a float64 reference costs against fp32 (a 2-core AMD VM: 2.3x for ResNet-50 at 32 px).
_FP64_COST = 2.5


def numerics_s(cell: Cell, cores: int, flops_per_sample: float | None = None) -> float:
    """The numerics check of one replicate, sized as the child sizes it
    (``checksize.check_size``): the cell and its reference over the fixed batch (the reference
    at float64's cost: the dearer of the two it may be), and for a training cell the steps of
    both sides."""
    if cell.kind != "model":
        return 0.0
    batch, res = cell.schedule()[0]
    free = cell.compile == "off" and not (cell.model_source or cell.input_shape or cell.inputs)
    size = check_size(batch, res, cpu=cell.device == "cpu", free_shape=free,
                      forward_flops=_forward(cell, flops_per_sample)[0])
    one = iteration_s(replace(cell, mode="infer", shapes="static", resolution=size.resolution,
                              batch_size=size.chunk), cores, flops_per_sample)
    forward = size.chunks * one * (1 + _FP64_COST)
    steps = 0.0
    if cell.mode == "train":
        steps = (TRAIN_STEPS + 1) * iteration_s(
            replace(cell, shapes="static", resolution=size.resolution,
                    batch_size=size.step_inputs), cores, flops_per_sample) * (1 + _FP64_COST)
    return forward + steps


#: Where a job's estimate comes from: the cell's own rows, or the scaled guess.
MEASURED, GUESSED = "measured", "guessed"


def jobs_s(jobs: Sequence[Job], probe: Probe,
           costs: Mapping[str, CellCost] | None = None) -> list[float]:
    """Seconds per job; a warm cell's first job also carries the process that primes it.
    ``costs`` (``learned.history``): the cells measured on this kind of machine; the others'
    guesses are scaled by ``learned.calibration`` over the measured ones."""
    return [s for s, _ in jobs_basis(jobs, probe, costs)]


def jobs_basis(jobs: Sequence[Job], probe: Probe,
               costs: Mapping[str, CellCost] | None = None) -> list[tuple[float, str]]:
    """``jobs_s`` with each job's basis (``MEASURED`` or ``GUESSED``)."""
    costs = costs or {}
    cores = probe.cores
    guesses, learned, skips = [], [], []
    for j in jobs:
        skipped = bool(skip_reason(j.cell, probe))
        skips.append(skipped)
        flops = usermodels.flops_for(probe, j.cell)
        guess = replicate_s(j.cell, j.study.settings, cores, skipped, flops)
        cost = costs.get(j.cell.cell_id) if not skipped else None
        guesses.append(guess)
        learned.append(replicate_s(j.cell, j.study.settings, cores, skipped, flops, cost)
                       if cost is not None else None)
    scale = calibration((m, g) for m, g in zip(learned, guesses) if m is not None)
    out = []
    primed = set(twins(jobs).values())  # a warm cell whose fresh twin runs keeps its cache
    for j, guess, measured, skipped in zip(jobs, guesses, learned, skips):
        t = measured if measured is not None else guess * scale
        prime = 0.0
        if j.cell.kernel_cache == "warm" and not skipped and j.cell.cell_id not in primed:
            primed.add(j.cell.cell_id)
            prime = prime_s(j.cell, cores) * scale
        basis = MEASURED if measured is not None else GUESSED
        checked = costs.get(repro_key(j.cell.cell_id)) if j.op == "repro" else None
        if checked is not None and not skipped:  # its own rows: the whole two-process job
            out.append((checked.overhead_s + prime, MEASURED))
        else:  # a re-run check not measured here: twice a replicate of its cell
            out.append((2 * (t + prime) if j.op == "repro" else t + prime, basis))
        if j.op == "measure" and not skipped and j.study.settings.checks_numerics(
                j.cell, j.replicate):
            check = numerics_s(j.cell, cores, usermodels.flops_for(probe, j.cell)) * scale
            out[-1] = (out[-1][0] + check, out[-1][1])
    return out
