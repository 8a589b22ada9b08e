"""A rough duration estimate per replicate, for ``--dry-run`` and the progress ETA.

It only needs to be right within a factor of about two: its job is to tell a user whether a
profile takes minutes or hours before they start it. The constants are round numbers fitted
to two real runs (an H200 with a 16-core Intel host, and a 2-core AMD VM, 2026-11); the real
figures for any machine are in its results.
"""

from __future__ import annotations

from bench.matrix import Cell, Settings

#: Forward GFLOPs per sample at 224x224 (torchvision's documented figures), and a factor for
#: how well the architecture uses the hardware (depthwise convolutions use it poorly).
_GFLOPS = {"resnet18": (1.82, 1.0), "resnet34": (3.66, 1.0), "resnet50": (4.09, 1.0),
           "resnet101": (7.80, 1.0), "mobilenet_v3_small": (0.06, 0.15),
           "mobilenet_v3_large": (0.22, 0.2), "mobilenet_v2": (0.30, 0.2),
           "convnext_tiny": (4.46, 0.7), "vit_b_16": (17.56, 1.0), "efficientnet_b0": (0.39, 0.2),
           "squeezenet1_1": (0.35, 0.5), "regnet_y_400mf": (0.40, 0.3)}

#: Effective TFLOP/s assumed per device and arithmetic. CPU model steps scale far worse than
#: linearly with cores: ResNet-50 ran at about 0.08 TFLOP/s on 2 cores and 0.13-0.22 on 16.
_CPU_TFLOPS_2_CORES = 0.08
_CPU_CORE_EXPONENT = 0.4
#: ResNet-50 training at batch 128 on an H200: 26 TFLOP/s in fp32 (TF32 convolutions), 28 in
#: bf16 autocast (eager mode is bound by its many small kernels), 11 in strict fp32.
_CUDA_TFLOPS = {"fp32": 25.0, "fp32-strict": 11.0, "amp-bf16": 28.0, "amp-fp16": 28.0}
#: cudnn.benchmark's search per distinct input shape (an H200: 1.3 s for ResNet-50 inference,
#: 3 s for training).
_BENCHMARK_SEARCH_S = {"infer": 1.3, "train": 3.0}
_COPY_BYTES_S = {"cpu": 5e9, "cuda": 2e12, "mps": 1e11}
#: Process start to first step: fork, flags, CUDA context, model build.
_OVERHEAD_S = {"cpu": 0.4, "cuda": 1.0, "mps": 1.5}


def iteration_s(cell: Cell, cores: int) -> float:
    if cell.kind == "ceiling":
        if cell.model == "copy":
            return 2 * cell.resolution * 2**20 / _COPY_BYTES_S.get(cell.device, 5e9)
        flops = 2.0 * cell.resolution**3
    else:
        gflops, eff = _GFLOPS.get(cell.model, (4.0, 0.7))
        per_sample = gflops * 1e9 * (cell.resolution / 224) ** 2 * (3 if cell.mode == "train"
                                                                    else 1)
        mean_batch = sum(b for b, _ in cell.schedule()) / len(cell.schedule())
        flops = per_sample * mean_batch / eff
    if cell.device == "cuda":
        rate = _CUDA_TFLOPS[cell.precision] * 1e12
        return max(flops / rate, 2e-3)  # launch-bound floor for small work
    threads = cell.cpu_threads or cores
    rate = _CPU_TFLOPS_2_CORES * 1e12 * (threads / 2) ** _CPU_CORE_EXPONENT
    return flops / rate


def replicate_s(cell: Cell, st: Settings, cores: int, skipped: bool = False) -> float:
    """Estimated wall time of one replicate, from launch to result."""
    if skipped:
        return 0.05
    t = iteration_s(cell, cores)
    period = len(cell.schedule())
    cold = cell.shape_count * t * 2
    if cell.device == "cuda" and cell.cudnn_benchmark == "on":
        cold += _BENCHMARK_SEARCH_S[cell.mode] * len(set(cell.schedule()))
    warm = max(st.warmup_iters, period) * t
    steady = min(max(st.min_time_s, st.min_iters * t), st.max_time_s + t * period)
    return _OVERHEAD_S.get(cell.device, 1.0) + cold + warm + steady
