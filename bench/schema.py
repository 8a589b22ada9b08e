"""The results schema: the one module both the measuring side and the report side import.

It is deliberately plain data (tuples of column names, sets of allowed values) so it can be
imported by a bare GPU box that has only the standard library and torch, and by a laptop that
has pandas but no torch.

Why a versioned, long, tidy format: one row per replicate keeps failures visible (a failed
replicate is a row with a status and empty numbers, never 0.0), lets statistics be recomputed
from scratch, and lets a reader append new runs without rewriting old files. A newer schema
version must come with a migration in ``MIGRATIONS`` or be refused with a clear message.
"""

from __future__ import annotations

from typing import Callable, Final

#: 2: the ``kernel_cache`` axis and the cache-size columns (rows of version 1 ran against the
#: machine's own shared on-disk caches and migrate to ``kernel_cache = "shared"``).
SCHEMA_VERSION: Final = 2

#: Every replicate ends in exactly one of these.
STATUSES: Final = ("ok", "oom", "timeout", "crash", "error", "skipped", "interrupted")

#: What a row measures: a model step, a machine ceiling, or a reproducibility re-run.
KINDS: Final = ("model", "ceiling", "repro")

#: Axis columns, in the order a reader scans them. The values written are the declared ones
#: (for example ``on``/``off``/``n/a`` for the cuDNN switches), never Python reprs.
AXIS_COLUMNS: Final = (
    "device",
    "model",
    "mode",
    "batch_size",
    "resolution",
    "precision",
    "memory_format",
    "shapes",
    "cudnn_benchmark",
    "cudnn_deterministic",
    "cudnn_benchmark_limit",
    "cpu_threads",
    "kernel_cache",
)

#: Flags read back inside the worker after they were set: what actually applied.
#: ``true``/``false`` for switches, the raw value otherwise, empty when not applicable.
EFFECTIVE_COLUMNS: Final = (
    "eff_cudnn_enabled",
    "eff_cudnn_benchmark",
    "eff_cudnn_deterministic",
    "eff_cudnn_benchmark_limit",
    "eff_cudnn_allow_tf32",
    "eff_matmul_allow_tf32",
    "eff_float32_matmul_precision",
    "eff_deterministic_algorithms",
    "eff_num_threads",
    "eff_autocast_dtype",
    "eff_conv_math",
)

#: Measured figures. All may be empty (failed rows, or not applicable); never 0.0 as a stand-in.
NUMERIC_COLUMNS: Final = (
    "cold_first_iter_s",
    "cold_pass_s",
    "cold_peak_mem_allocated_bytes",
    "cold_peak_mem_reserved_bytes",
    "steady_median_s",
    "steady_p10_s",
    "steady_p90_s",
    "steady_mean_s",
    "steady_ci_rel",
    "steady_iters",
    "samples_per_s",
    "peak_mem_allocated_bytes",
    "peak_mem_reserved_bytes",
    "peak_rss_bytes",
    "kernel_cache_start_bytes",
    "kernel_cache_end_bytes",
    "flops_per_sample",
    "work_per_iter",
    "repro_max_abs_diff",
    "wall_s",
)

RESULT_COLUMNS: Final = (
    "schema_version",
    "run_id",
    "fingerprint_id",
    "machine",
    "profile",
    "study",
    "cell_id",
    "cell_name",
    "kind",
    "replicate",
    *AXIS_COLUMNS,
    "shape_count",
    *EFFECTIVE_COLUMNS,
    "status",
    "reason",
    *NUMERIC_COLUMNS,
    "work_unit",
    "repro_bitwise_equal",
    "started_at",
    "ended_at",
)

#: Raw per-iteration times, so every statistic can be recomputed from the source.
SAMPLE_COLUMNS: Final = (
    "schema_version",
    "run_id",
    "fingerprint_id",
    "cell_id",
    "replicate",
    "phase",
    "iter",
    "batch_size",
    "resolution",
    "seconds",
)

PHASES: Final = ("cold", "steady")

#: Integer-valued columns (empty allowed) in results.csv.
INTEGER_COLUMNS: Final = (
    "schema_version",
    "replicate",
    "batch_size",
    "resolution",
    "cudnn_benchmark_limit",
    "cpu_threads",
    "shape_count",
    "steady_iters",
)

RESULTS_FILE: Final = "results.csv"
SAMPLES_FILE: Final = "samples.csv"
ENV_FILE: Final = "env.json"

#: Allowed values of the categorical axes (``model`` is checked against torchvision instead).
AXIS_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "device": ("cpu", "cuda", "mps"),
    "mode": ("infer", "train"),
    "precision": ("fp32", "fp32-strict", "amp-bf16", "amp-fp16"),
    "memory_format": ("nchw", "channels_last"),
    "shapes": ("static", "dynamic", "ragged"),
    "cudnn_benchmark": ("off", "on", "n/a"),
    "cudnn_deterministic": ("off", "on", "n/a"),
    "kernel_cache": ("fresh", "warm", "shared"),
}

#: The on-disk kernel-cache states a profile can ask for. Every replicate gets its own cache
#: folder: ``fresh`` starts it empty (what a new machine, container or CI runner pays),
#: ``warm`` starts it as a copy of what an earlier process of the same run left after running
#: this cell's shapes (what a long-lived box pays from its second job on). ``shared`` only
#: describes rows written before per-replicate caches existed: they ran against the machine's
#: own cache, filled by whatever ran before them.
KERNEL_CACHES: Final = ("fresh", "warm")

WORK_UNITS: Final = ("flop", "byte")

#: Machine ceilings measured as ``kind=ceiling`` rows; the ``model`` column names the op.
CEILING_OPS: Final = ("matmul-bf16", "matmul-tf32", "matmul-fp32", "copy")

Row = dict[str, str]



def _v1_to_v2(row: Row) -> Row:
    """Version 1 had no kernel-cache columns; its processes shared the machine's cache."""
    return {**row, "kernel_cache": "shared", "kernel_cache_start_bytes": "",
            "kernel_cache_end_bytes": ""}


#: ``{from_version: function(row) -> row}``; applied in order until SCHEMA_VERSION is reached.
MIGRATIONS: Final[dict[int, Callable[[Row], Row]]] = {1: _v1_to_v2}


class SchemaError(ValueError):
    """A file or row that does not match the schema; the message names the problem."""


def migrate(row: Row) -> Row:
    """Bring one parsed row up to ``SCHEMA_VERSION`` or refuse it with a clear message."""
    raw = row.get("schema_version", "")
    try:
        version = int(raw)
    except ValueError:
        raise SchemaError(f"schema_version {raw!r} is not an integer") from None
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"schema_version {version} is newer than this code understands "
            f"(<= {SCHEMA_VERSION}); upgrade torch-knobs to read it"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise SchemaError(f"schema_version {version} has no migration to {SCHEMA_VERSION}")
        row = step(row)
        version += 1
        row["schema_version"] = str(version)
    return row


def flag(value: bool | None) -> str:
    """Write a read-back switch: ``true``/``false``, or empty when not applicable."""
    if value is None:
        return ""
    return "true" if value else "false"
