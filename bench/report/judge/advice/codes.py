"""The advice's codes, each spelled once: which rule decided a recommendation, which caveats it
carries, and which setting it is about.

String-valued enums, as the vocabulary's words are, so the decision table, ``bench advise
--json`` and a page read the same codes (``Rule.BM_SLOWER == "bm-slower"``), and a mistyped code
is an error a type checker sees rather than a branch that never runs. No other module spells
these codes as string literals (``tests/house/test_rooms.py`` holds this). What each means is in
``rules``' docstring; the caveats' words are in ``render.words.caveats``.
"""

from __future__ import annotations

from bench.report.vocabulary import Word


class Code(Word):
    """An enum whose members are their codes wherever they are printed or compared (a
    ``Word``'s printing, but codes, not the words a page judges in)."""


class Setting(Code):
    """What a recommendation is about: a switch of PyTorch, or where to run."""

    CUDNN_BENCHMARK = "cudnn.benchmark"
    CUDNN_DETERMINISTIC = "cudnn.deterministic"
    PRECISION = "precision"
    MEMORY_FORMAT = "memory_format"
    DEVICE = "device"
    CPU_THREADS = "cpu_threads"
    COMPILE = "torch.compile"


class Rule(Code):
    """Which rule decided a recommendation (see ``rules``' docstring for each)."""

    BM_INSUFFICIENT = "bm-insufficient"
    BM_FASTER_PAYS_BACK = "bm-faster-pays-back"
    BM_COLD_COST_NOT_REPAID = "bm-cold-cost-not-repaid"
    BM_SLOWER = "bm-slower"
    BM_NO_CLEAR_DIFFERENCE = "bm-no-clear-difference"
    BM_MIXED = "bm-mixed"
    COMPILE_INSUFFICIENT = "compile-insufficient"
    COMPILE_FASTER_PAYS_BACK = "compile-faster-pays-back"
    COMPILE_COLD_COST_NOT_REPAID = "compile-cold-cost-not-repaid"
    COMPILE_SLOWER = "compile-slower"
    COMPILE_NO_CLEAR_DIFFERENCE = "compile-no-clear-difference"
    COMPILE_MIXED = "compile-mixed"
    DET_INSUFFICIENT = "det-insufficient"
    DET_DOES_NOT_REPRODUCE = "det-does-not-reproduce"
    DET_DEFAULT_REPRODUCES = "det-default-reproduces"
    DET_REPRODUCES_IN_SOME = "det-reproduces-in-some"
    DET_UNCHECKED = "det-unchecked"
    DET_COSTS = "det-costs"
    DET_NO_MEASURABLE_COST = "det-no-measurable-cost"
    DET_COST_UNCLEAR = "det-cost-unclear"
    DET_MIXED = "det-mixed"
    PRECISION_INSUFFICIENT = "precision-insufficient"
    PRECISION_FASTER = "precision-faster"
    PRECISION_SLOWER = "precision-slower"
    PRECISION_NO_CLEAR_DIFFERENCE = "precision-no-clear-difference"
    PRECISION_MIXED = "precision-mixed"
    MEMORY_FORMAT_INSUFFICIENT = "memory_format-insufficient"
    MEMORY_FORMAT_FASTER = "memory_format-faster"
    MEMORY_FORMAT_SLOWER = "memory_format-slower"
    MEMORY_FORMAT_NO_CLEAR_DIFFERENCE = "memory_format-no-clear-difference"
    MEMORY_FORMAT_MIXED = "memory_format-mixed"
    CPU_THREADS_INSUFFICIENT = "cpu_threads-insufficient"  # ``bench advise`` only
    CPU_THREADS_FASTER = "cpu_threads-faster"
    CPU_THREADS_SLOWER = "cpu_threads-slower"
    CPU_THREADS_NO_CLEAR_DIFFERENCE = "cpu_threads-no-clear-difference"
    CPU_THREADS_MIXED = "cpu_threads-mixed"
    DEVICE_INSUFFICIENT = "device-insufficient"
    DEVICE_GPU_FROM_BATCH = "device-gpu-from-batch"
    DEVICE_CPU_WINS = "device-cpu-wins"
    DEVICE_MIXED = "device-mixed"


class Caveat(Code):
    """What a recommendation's reader should also know (see ``rules``' docstring)."""

    CHANGES_NUMERICS = "changes-numerics"
    TF32_DEFAULT = "tf32-default"
    VARIANT_FAILED = "variant-failed"
    EXTRA_MEMORY = "extra-memory"
    SMALLER_BATCHES_INSUFFICIENT = "smaller-batches-insufficient"
    LARGEST_BATCH_ONLY = "largest-batch-only"
    ONE_BATCH_ONLY = "one-batch-only"
    STEADY_DRIFT = "steady-drift"
    # the two first ones as ``bench advise`` reads the report's pair the other way round
    TF32_IS_THE_DEFAULT = "tf32-is-the-default"
    BASELINE_FAILED = "baseline-failed"
