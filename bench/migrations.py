"""Older rows brought up to the current schema, one version at a time: each step says what
the older version did not record, and leaves it empty (never 0) or names why in a note.
Standard library only, like ``bench.schema``, whose columns it fills."""

from __future__ import annotations

from typing import Callable, Final

from bench.schema import NUMERICS_COLUMNS, SCHEMA_VERSION, USER_MODEL_AXES, SchemaError

Row = dict[str, str]


def _v1_to_v2(row: Row) -> Row:
    """Version 1 had no kernel-cache columns (its processes shared the machine's own cache)
    and kept no notes."""
    return {**row, "kernel_cache": "shared", "kernel_cache_start_bytes": "",
            "kernel_cache_end_bytes": "", "notes": ""}


#: The figures version 3 added, which an earlier (eager) row has none of.
_COMPILE_FIGURES = ("compile_time_s", "compiles", "recompiles", "graph_breaks")


def _v2_to_v3(row: Row) -> Row:
    """Version 2 ran every model eagerly; its files may or may not have the user-model axes
    and attempt ids (added under version 2): they are kept where they are, empty otherwise."""
    return {**dict.fromkeys(USER_MODEL_AXES, ""), "attempt_id": "", **row, "compile": "off",
            "compile_dynamic": "auto", **dict.fromkeys(_COMPILE_FIGURES, "")}


#: What a version 3 row that counted breaks says of them once migrated.
V3_BREAKS_NOTE: Final = ("graph breaks: written before schema 4, which counted the steady "
                         "state's only (steady_graph_breaks); the model's own breaks, met in "
                         "the cold pass, were not counted, so graph_breaks and graphs are empty")


def _v3_to_v4(row: Row) -> Row:
    """Version 3's ``graph_breaks`` counted the steady state's breaks only: it becomes
    ``steady_graph_breaks``, and the whole replicate's count, the graphs and the reasons, which
    it never kept, are empty, so no reader is told "0 breaks" of a model that broke in its cold
    pass. A row that had a figure says so in its notes; an eager or failed row had none."""
    old = row.get("graph_breaks", "")
    out = {**row, "graph_breaks": "", "steady_graph_breaks": old, "graphs": "",
           "graph_break_reasons": ""}
    if old != "":
        out["notes"] = "; ".join(filter(None, (row.get("notes", ""), V3_BREAKS_NOTE)))
    return out


def _v4_to_v5(row: Row) -> Row:
    """Version 4 did not record which sitting wrote a row: it stays empty (unknown)."""
    return {**row, "sitting": ""}


#: The energy and tail columns version 6 added, which older rows measured none of.
ENERGY_COLUMNS: Final = ("steady_p95_s", "steady_p99_s", "energy_window_s", "energy_j",
                         "energy_integrated_j", "joules_per_sample", "mean_power_w",
                         "sm_clock_median_mhz", "sm_clock_min_mhz", "gpu_util_pct",
                         "gpu_temp_max_c", "energy_method", "energy_reason", "throttled",
                         "throttle_reasons")
#: What a row written before version 6 says of its energy.
V5_ENERGY_REASON: Final = "not measured: written before schema 6, which added energy"

#: The input-pipeline columns version 6 added.
V6_PIPELINE_COLUMNS: Final = ("num_workers", "decoder", "images", "decode_errors",
                              "cpu_time_s", "tree_peak_rss_bytes", "data_wait_frac")



def _v5_to_v6(row: Row) -> Row:
    """Version 5 measured no energy, clocks or throttling, kept no latency tails and
    measured no input pipeline: those columns are empty (the tails can be recomputed from
    samples.csv) and ``energy_reason`` says why."""
    return {**dict.fromkeys(V6_PIPELINE_COLUMNS, ""), **row,
            **dict.fromkeys(ENERGY_COLUMNS, ""), "energy_reason": V5_ENERGY_REASON}


#: The read-back switches version 7 added (torch 2.9's ``fp32_precision``).
V7_FLAG_COLUMNS: Final = ("eff_matmul_fp32_precision", "eff_conv_fp32_precision")


def _v6_to_v7(row: Row) -> Row:
    """Version 6 ran no numerics check and read no ``fp32_precision`` switch back: those
    columns are empty (not checked, not read), never a zero error."""
    return {**row, **dict.fromkeys((*NUMERICS_COLUMNS, *V7_FLAG_COLUMNS), "")}


#: ``{from_version: function(row) -> row}``; applied in order until SCHEMA_VERSION is reached.
MIGRATIONS: Final[dict[int, Callable[[Row], Row]]] = {1: _v1_to_v2, 2: _v2_to_v3,
                                                      3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6,
                                                      6: _v6_to_v7}


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
