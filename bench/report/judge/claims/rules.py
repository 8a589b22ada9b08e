"""One rule per claim: read the analysis, file findings, and let :func:`model.decide` judge.

Each rule answers from the fingerprints the home page answers from (a fingerprint that a newer
step definition superseded is left out), with the analysis' own verdicts: a comparison is
*faster* only when its whole 95% interval clears 1 + δ, and one with too few ok replicates is
*insufficient* and tells nothing. The figures in a finding's text are the ones its rows carry;
a summary never claims more than its findings show.

Rules live by subject: :mod:`~bench.report.judge.claims.cudnn` (cudnn.benchmark and algorithms),
:mod:`~bench.report.judge.claims.hardware` (GPU against CPU, memory, threads, upgrades) and
:mod:`~bench.report.judge.claims.numerics` (what AMP and TF32 do to the numbers), on the shared
pieces of :mod:`~bench.report.judge.claims.findings`. This module names them for ``claims.toml``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.report.judge.claims import cudnn, energy, hardware, memory, numerics
from bench.report.judge.claims.model import Claim, ClaimAnswer

Rule = Callable[[Claim, Any], ClaimAnswer]

RULES: dict[str, Rule] = {
    "benchmark_static": cudnn.benchmark_static,
    "benchmark_dynamic": cudnn.benchmark_dynamic,
    "benchmark_reproducibility": cudnn.benchmark_reproducibility,
    "conv_algo_argument": cudnn.conv_algo_argument,
    "gpu_speedup_magnitude": hardware.gpu_speedup_magnitude,
    "cpu_for_small_batches": hardware.cpu_for_small_batches,
    "memory_limit": memory.memory_limit,
    "cpu_threads": hardware.cpu_threads,
    "memory_bandwidth": hardware.memory_bandwidth,
    "upgrade_vs_settings": hardware.upgrade_vs_settings,
    "gpu_energy_per_sample": energy.gpu_energy_per_sample,
    "amp_accuracy": numerics.amp_accuracy,
    "tf32_training": numerics.tf32_training,
}
