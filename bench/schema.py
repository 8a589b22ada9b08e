"""The results schema: the one module both the measuring side and the report side import.

It is deliberately plain data (one ``Column`` spec per file, and the tuples and sets derived
from it) so it can be imported by a bare GPU box that has only the standard library and torch,
and by a laptop that has pandas but no torch. The store writes these columns, the loader and
``bench check`` validate against them, and the site's Data page lists them: one list, so a
column added here reaches all four.

Why a versioned, long, tidy format: one row per replicate keeps failures visible (a failed
replicate is a row with a status and empty numbers, never 0.0), lets statistics be recomputed
from scratch, and lets a reader append new runs without rewriting old files. A newer schema
version must come with a migration in ``MIGRATIONS`` or be refused with a clear message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

#: 2: the ``kernel_cache`` axis, the cache-size columns and ``notes`` (rows of version 1 ran
#: against the machine's own shared on-disk caches and migrate to ``kernel_cache = "shared"``).
#: 3: the user-model axes ``USER_MODEL_AXES`` (empty for a torchvision model), ``attempt_id``
#: in both files, which ties a replicate's samples to the row that commits them (earlier files
#: kept none, or kept them under version 2: they migrate with it empty, or as they are), and
#: the ``torch.compile`` axes and their figures (earlier rows ran eagerly: ``compile = "off"``).
#: 4: ``graph_breaks`` counts every break of the replicate, the cold pass's included (the
#: model's own breaks, which Dynamo meets when it first compiles); the steady state's alone are
#: ``steady_graph_breaks``, with ``graphs`` and ``graph_break_reasons`` beside them (a version 3
#: figure counted the steady state only: it migrates to ``steady_graph_breaks``, see ``_v3_to_v4``).
#: 5: ``sitting``, which sitting of its run wrote a row (a run finished by ``--resume``, on
#: this machine or another of the same fingerprint, is made in several); older rows keep it
#: empty: which of them a resume wrote was not recorded.
#: 6: the p95 and p99 steady iteration and the telemetry of the timed window
#: (``ENERGY_COLUMNS``: energy, power, clocks, utilisation, throttling), and the input
#: pipeline: the ``pipeline`` and ``e2e`` kinds, the axes ``num_workers``, ``decoder`` and
#: ``images`` and the figures ``decode_errors``, ``cpu_time_s``, ``tree_peak_rss_bytes`` and
#: ``data_wait_frac``; older rows measured none of it: they read empty in all of them and
#: ``energy_reason`` says why (``_v5_to_v6``).
#: 7: the paired numerics check (``NUMERICS_COLUMNS``: a cell's outputs against a strict
#: reference computed in the same process, outside the timed windows) and the ``fp32_precision``
#: switches of torch 2.9 and later read back (``eff_matmul_fp32_precision``,
#: ``eff_conv_fp32_precision``); older rows checked and read none of it: they read empty.
SCHEMA_VERSION: Final = 7
#: The definition of the timed step, bumped whenever what a step does changes, so numbers
#: measured by different definitions get different fingerprints and are never pooled (the
#: child records it in env.json; the report tells a reader which rows predate the current
#: one). 2: training uses lr = 0 (lr 0.01 on a fixed synthetic batch drove the loss to 0 and
#: the gradients subnormal, and some CPUs then ran steps many times slower). 3: per-replicate
#: kernel caches.
WORKLOAD_VERSION: Final = 3
#: What each step definition changed, in words a reader of an older run's figures needs.
WORKLOAD_CHANGES: Final[dict[int, str]] = {
    2: "a training step runs at learning rate 0, so a fixed synthetic batch no longer drives "
       "the gradients subnormal and the steps no longer drift",
    3: "every replicate's first pass meets an empty kernel cache of its own, not one that "
       "earlier processes filled",
}

class Status(str, Enum):
    """How a replicate ended: exactly one of these, in the ``status`` column. A ``str`` enum,
    so a row read back as text compares equal to its member."""

    OK = "ok"
    OOM = "oom"
    TIMEOUT = "timeout"
    CRASH = "crash"
    ERROR = "error"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value


#: Every replicate ends in exactly one of these.
STATUSES: Final = tuple(s.value for s in Status)

#: What a row measures: a model step, a machine ceiling, a reproducibility re-run, an input
#: pipeline alone (JPEG files decoded and augmented by a DataLoader), or that pipeline feeding
#: the model's step (end to end).
KINDS: Final = ("model", "ceiling", "repro", "pipeline", "e2e")

#: How a pipeline decodes its JPEGs: Pillow (torchvision's reference recipe), torchvision's
#: ``decode_jpeg`` on the CPU, or ``decode_jpeg(device="cuda")`` (nvJPEG) in the main process.
DECODERS: Final = ("pil", "torchvision", "torchvision-cuda")

WORK_UNITS: Final = ("flop", "byte")

#: Machine ceilings measured as ``kind=ceiling`` rows; the ``model`` column names the op.
CEILING_OPS: Final = ("matmul-bf16", "matmul-tf32", "matmul-fp32", "copy")

PHASES: Final = ("cold", "steady")

#: The on-disk kernel-cache states a profile can ask for. Every replicate gets its own cache
#: folder: ``fresh`` starts it empty (what a new machine, container or CI runner pays),
#: ``warm`` starts it as a copy of what an earlier process of the same run left after running
#: this cell's shapes (what a long-lived box pays from its second job on). ``shared`` only
#: describes rows written before per-replicate caches existed: they ran against the machine's
#: own cache, filled by whatever ran before them.
KERNEL_CACHES: Final = ("fresh", "warm")

#: Axes added after the first schema, with the default at which they leave a cell's id alone,
#: so the ids of the cells that existed before them (and the links posted to their rows) stay
#: the same. Shared: the runner hashes cell ids, and test fixtures mimic it.
LATER_AXES: Final[dict[str, object]] = {"kernel_cache": "fresh", "model_source": "",
                                         "input_shape": "", "inputs": "", "loss": "",
                                         "compile": "off", "compile_dynamic": "auto",
                                         "num_workers": None, "decoder": "", "images": ""}

#: ``torch.compile``'s modes, and ``off`` (eager, the default). ``default`` is
#: ``torch.compile(model)``; the others are its ``mode=`` argument.
COMPILE_MODES: Final = ("off", "default", "reduce-overhead", "max-autotune",
                        "max-autotune-no-cudagraphs")
#: ``torch.compile``'s ``dynamic=`` argument: ``auto`` (None: recompile once with dynamic sizes
#: when a size changes), ``true`` (dynamic from the first compile), ``false`` (one graph per
#: shape).
COMPILE_DYNAMIC: Final = ("auto", "true", "false")

#: What a user's model (``pkg.module:factory`` or ``path/to/file.py:factory``) adds to its name:
#: the hash of the source files that define it, its input shape, and the callables that make its
#: inputs and its training loss. Empty for a torchvision model. Wherever cells or workloads are
#: grouped by ``model``, these go with it, so two models of the same name are never pooled.
USER_MODEL_AXES: Final = ("model_source", "input_shape", "inputs", "loss")

#: How far the later half of a replicate's steady iterations may drift from the earlier half
#: (a ratio) before ``bench check`` and the site flag it. Shared: both sides apply it.
DRIFT: Final = 2.0

RESULTS_FILE: Final = "results.csv"
SAMPLES_FILE: Final = "samples.csv"
ENV_FILE: Final = "env.json"
#: In a cluster shard's run folder: every Slurm job that ran the shard there, one id a line,
#: oldest first (env.json, written once, names only the first); the machine page lists them.
SLURM_JOBS_FILE: Final = "slurm-jobs.txt"
#: The key of env.json that records the adaptive-replicates rule a run applied
#: (``bench.run.plan.adaptive``): ``{"looks": 3, "step": 2, "max_width": 1.1, "delta": 0.03}``; the
#: report computes each comparison's interval at ``bench.intervals.level(looks)``. A run
#: without the rule records none (one look).
ADAPTIVE_KEY: Final = "adaptive"

#: How a row's energy was measured (``energy_method``): NVML's energy counter, NVML's power
#: samples integrated over the window, the CPU's RAPL counters, or not at all (its
#: ``energy_reason`` says why). Never a nameplate figure.
ENERGY_METHODS: Final = ("nvml-energy", "nvml-power", "rapl", "none")
#: The shortest steady window an energy figure is trusted from, seconds (the counters update
#: every few tens of milliseconds); the child's stopping rule runs at least this long where it
#: measures energy, and ``bench check`` flags a shorter window. Shared: both sides apply it.
ENERGY_MIN_WINDOW_S: Final = 1.0

#: A DataLoader's ``prefetch_factor`` as the child sets it: each worker is handed this many
#: batches when the loader starts. Shared: the child's warm-up and the report's check of an
#: input pipeline's window both count the start-up batches from it.
PREFETCH_FACTOR: Final = 2
#: The fewest whole rounds of its workers (a batch from each, in the order a DataLoader
#: delivers them) an input pipeline's timed window holds.
MIN_ROUNDS: Final = 2


def startup_batches(workers: int) -> int:
    """The batches a loader of ``workers`` workers is handed at start-up (none for the main
    process alone). They are all in work at once, so they arrive in a burst after the first:
    timed, they read as a rate the workers never sustain (on the H200 host, 18 timed batches
    of 8 workers read 2,351 samples/s where one worker sustained about 160)."""
    return PREFETCH_FACTOR * max(workers, 0)


def round_size(workers: int) -> int:
    """The batches of one round of the workers: a window of whole rounds neither starts nor
    ends inside a burst."""
    return max(workers, 1)


def feeding_window(workers: int, warmup_iters: int, min_iters: int) -> tuple[int, int]:
    """(warm-up, least timed) batches of an input pipeline of ``workers`` workers whose study
    asks for ``warmup_iters`` and ``min_iters``: the first pass and the warm-up take the
    start-up batches (or the study's warm-up where it asks more), to a whole round, and the
    window at least ``MIN_ROUNDS`` whole rounds. The main process alone (no workers) keeps
    the study's figures: nothing arrives in a burst."""
    if workers <= 0:
        return warmup_iters, min_iters
    size = round_size(workers)
    before = max(warmup_iters + 1, startup_batches(workers))
    least = max(min_iters, MIN_ROUNDS * size)
    return before + -before % size - 1, least + -least % size


_SWITCH = ("off", "on", "n/a")
_TRUE_FALSE = ("true", "false")


@dataclass(frozen=True)
class Column:
    """One column of a CSV file.

    ``type`` is ``str``, ``int`` (whole numbers, empty allowed unless required) or ``float``
    (finite, non-negative, empty allowed); ``choices`` closes a string column (empty still
    allowed unless required); ``group`` says what the column is about, for the derived tuples
    below and the Data page; ``doc`` says what it holds, in a few words.
    """

    name: str
    type: str = "str"
    group: str = "identity"
    choices: tuple[str, ...] = ()
    required: bool = False
    doc: str = ""


def _c(name: str, type_: str = "str", group: str = "identity", choices: tuple[str, ...] = (),
       required: bool = False, doc: str = "") -> Column:
    return Column(name, type_, group, choices, required, doc)


#: What the numerics check compares a cell with (``num_reference``): the model in float64 on
#: the CPU, or in fp32 with every TF32 switch off, eager and NCHW, on the cell's device.
NUM_REFERENCES: Final = ("fp64-cpu", "fp32-strict")
_NUM, _TRAINING = "numerics", "numerics, training"

#: The paired numerics check (``bench.run.child.numerics``): the cell's outputs on a fixed,
#: seeded batch against the reference's, from the same weights, outside the timed windows;
#: empty where the study did not ask for it (``numerics = true``). Training: the first four
#: over the outputs before any step.
NUMERICS_SPEC: Final[tuple[Column, ...]] = tuple(
    _c(n, t, "figure", c, doc=f"{w}: {d}") for n, t, c, w, d in (
    ("num_reference", "str", NUM_REFERENCES, _NUM, "what the outputs were compared with"),
    ("num_inputs", "int", (), _NUM, "synthetic inputs in the fixed batch"),
    ("num_rel_err", "float", (), _NUM, "norm-wise relative error |y - y_ref| / |y_ref|"),
    ("num_max_abs_err", "float", (), _NUM, "largest absolute output error"),
    ("num_cosine", "float", (), _NUM, "cosine similarity of the flattened outputs"),
    ("num_top1_agree", "float", (), _NUM, "share of inputs whose top-1 class is the reference's"),
    ("num_train_steps", "int", (), _TRAINING, "optimizer steps at a real learning rate"),
    ("num_loss", "float", (), _TRAINING, "the cell's loss after them"),
    ("num_ref_loss", "float", (), _TRAINING, "the reference's loss after them"),
    ("num_loss_rel_diff", "float", (), _TRAINING, "|loss - ref_loss| / |ref_loss|"),
    ("num_param_drift", "float", (), _TRAINING, "|theta - theta_ref| / |theta_ref| after them"),
    ("num_time_s", "float", (), _NUM, "seconds the check took, outside the timed windows"),
))
NUMERICS_COLUMNS: Final = tuple(c.name for c in NUMERICS_SPEC)

#: results.csv, one row per replicate, in file order.
RESULT_SPEC: Final[tuple[Column, ...]] = (
    _c("schema_version", "int", required=True, doc="version of this schema the row follows"),
    _c("run_id", required=True, doc="the run folder's name"),
    _c("fingerprint_id", required=True, doc="hash of the hardware and software (env.json)"),
    _c("machine", doc="readable machine name"),
    _c("profile", doc="the profile the run measured"),
    _c("study", doc="the study of the profile that owns the cell"),
    _c("cell_id", required=True, doc="stable hash of the axis values; the row anchor"),
    _c("cell_name", doc="the axis values in words"),
    _c("kind", choices=KINDS, required=True, doc="model step, machine ceiling, re-run check, "
       "input pipeline, or the pipeline feeding the model (e2e)"),
    _c("replicate", "int", required=True, doc="which fresh process of the cell"),
    _c("attempt_id", doc="this attempt at the replicate (a re-run gets a new one); its samples "
       "carry it"),
    _c("sitting", "int", doc="which sitting of the run wrote the row: 1 the first, and each "
       "--resume the next"),
    _c("device", group="axis", choices=("cpu", "cuda", "mps"), doc="where the step runs"),
    _c("model", group="axis", doc="torchvision model, user model (module:factory or "
       "file.py:factory), or the ceiling op"),
    _c("model_source", group="axis",
       doc="user model: hash of the source files of its factory, inputs and loss"),
    _c("input_shape", group="axis", doc="user model: C,H,W of one sample (empty: inputs callable)"),
    _c("inputs", group="axis", doc="user model: the callable that made its inputs, if any"),
    _c("loss", group="axis", doc="user model: the callable that made its training loss, if any"),
    _c("mode", group="axis", choices=("infer", "train"), doc="inference or a training step"),
    _c("batch_size", "int", "axis", doc="samples per step"),
    _c("resolution", "int", "axis", doc="input height and width (ceilings: the op's size)"),
    _c("precision", group="axis", choices=("fp32", "fp32-strict", "amp-bf16", "amp-fp16"),
       doc="arithmetic asked for"),
    _c("memory_format", group="axis", choices=("nchw", "channels_last"), doc="tensor layout"),
    _c("shapes", group="axis", choices=("static", "dynamic", "ragged"),
       doc="one input shape, cycled resolutions, or a short last batch"),
    _c("cudnn_benchmark", group="axis", choices=_SWITCH, doc="torch.backends.cudnn.benchmark"),
    _c("cudnn_deterministic", group="axis", choices=_SWITCH,
       doc="torch.backends.cudnn.deterministic"),
    _c("cudnn_benchmark_limit", "int", "axis", doc="torch.backends.cudnn.benchmark_limit"),
    _c("cpu_threads", "int", "axis", doc="torch threads (empty: every core available)"),
    _c("kernel_cache", group="axis", choices=(*KERNEL_CACHES, "shared"),
       doc="the on-disk kernel caches the replicate started with"),
    _c("compile", group="axis", choices=COMPILE_MODES, doc="torch.compile mode (off: eager)"),
    _c("compile_dynamic", group="axis", choices=COMPILE_DYNAMIC,
       doc="torch.compile's dynamic= (auto: None)"),
    _c("num_workers", "int", "axis", doc="pipeline: DataLoader worker processes (0: the main "
       "process decodes)"),
    _c("decoder", group="axis", choices=DECODERS, doc="pipeline: what decodes the JPEGs"),
    _c("images", group="axis", doc="pipeline: the user's image folder (empty: JPEGs made at "
       "run time from a seed)"),
    _c("shape_count", "int", "shape", doc="distinct input shapes in the schedule"),
    *(_c(f"eff_{name}", group="effective", doc=f"{what}, as read back after it was set")
      for name, what in (
          ("cudnn_enabled", "cuDNN enabled"),
          ("cudnn_benchmark", "cudnn.benchmark"),
          ("cudnn_deterministic", "cudnn.deterministic"),
          ("cudnn_benchmark_limit", "cudnn.benchmark_limit"),
          ("cudnn_allow_tf32", "TF32 in cuDNN convolutions"),
          ("matmul_allow_tf32", "TF32 in CUDA matmuls"),
          ("float32_matmul_precision", "torch.get_float32_matmul_precision()"),
          ("deterministic_algorithms", "torch.are_deterministic_algorithms_enabled()"),
          ("num_threads", "torch.get_num_threads()"),
          ("autocast_dtype", "the autocast dtype"),
          ("conv_math", "the arithmetic the convolutions really used"),
          ("matmul_fp32_precision", "torch.backends.cuda.matmul.fp32_precision (torch >= 2.9)"),
          ("conv_fp32_precision", "torch.backends.cudnn.conv.fp32_precision (torch >= 2.9)"),
      )),
    _c("status", group="outcome", choices=STATUSES, required=True, doc="how the replicate ended"),
    _c("reason", group="outcome",
       doc="why it did not end ok (class and first line); on an ok row, what it could not "
           "measure (no FLOP count)"),
    _c("cold_first_iter_s", "float", "figure", doc="the first iteration, seconds"),
    _c("cold_pass_s", "float", "figure", doc="the first iteration of every shape, seconds"),
    _c("cold_peak_mem_allocated_bytes", "float", "figure", doc="GPU peak during the cold pass"),
    _c("cold_peak_mem_reserved_bytes", "float", "figure", doc="GPU reserved peak, cold pass"),
    _c("steady_median_s", "float", "figure", doc="median steady iteration, seconds"),
    _c("steady_p10_s", "float", "figure", doc="10th percentile steady iteration"),
    _c("steady_p90_s", "float", "figure", doc="90th percentile steady iteration"),
    _c("steady_p95_s", "float", "figure", doc="95th percentile steady iteration (latency tail)"),
    _c("steady_p99_s", "float", "figure", doc="99th percentile steady iteration (latency tail)"),
    _c("steady_mean_s", "float", "figure", doc="mean steady iteration"),
    _c("steady_ci_rel", "float", "figure", doc="95% CI half-width of the median, relative"),
    _c("steady_iters", "int", "figure", doc="timed steady iterations"),
    _c("samples_per_s", "float", "figure", doc="samples over time across the timed iterations"),
    _c("peak_mem_allocated_bytes", "float", "figure", doc="GPU peak in the steady state"),
    _c("peak_mem_reserved_bytes", "float", "figure", doc="GPU reserved peak, steady state"),
    _c("peak_rss_bytes", "float", "figure", doc="the process's peak resident memory"),
    _c("kernel_cache_start_bytes", "float", "process",
       doc="bytes in the replicate's kernel-cache folder when its process started"),
    _c("kernel_cache_end_bytes", "float", "process", doc="the same when it ended"),
    _c("compile_time_s", "float", "figure",
       doc="compilation time torch reports (graph capture and Inductor, forward and backward)"),
    _c("compiles", "int", "figure",
       doc="frames Dynamo compiled in the whole replicate (a graph break adds the frame it "
           "resumes in)"),
    _c("recompiles", "int", "figure", doc="frames it compiled during the steady state"),
    _c("graph_breaks", "int", "figure",
       doc="graph breaks Dynamo met in the whole replicate, the cold pass's (the model's own) "
           "included, as torch counts them"),
    _c("steady_graph_breaks", "int", "figure",
       doc="those met in the steady state (only a recompile meets one there)"),
    _c("graphs", "int", "figure",
       doc="graphs Dynamo compiled in the whole replicate (one, for a model without breaks)"),
    _c("graph_break_reasons", group="figure",
       doc="the 3 most frequent break reasons, most frequent first, each 'COUNTx reason', "
           "joined by '; ' (a reason: torch's first line, the name it quotes, its gbNNNN page)"),
    _c("flops_per_sample", "float", "figure", doc="FLOPs per sample of one step"),
    _c("work_per_iter", "float", "figure", doc="a ceiling's FLOPs or bytes per iteration"),
    _c("energy_window_s", "float", "figure",
       doc="the window the energy covers: the timed steady state, seconds"),
    _c("energy_j", "float", "figure",
       doc="energy in that window, joules (the method's figure: the GPU board or the CPU "
           "packages and DRAM, never the whole host)"),
    _c("energy_integrated_j", "float", "figure",
       doc="NVML: power samples integrated over the window, joules (the counter's cross-check)"),
    _c("joules_per_sample", "float", "figure", doc="energy_j over the samples of the window"),
    _c("mean_power_w", "float", "figure", doc="energy_j over energy_window_s, watts"),
    _c("sm_clock_median_mhz", "float", "figure", doc="median SM clock sampled in the window"),
    _c("sm_clock_min_mhz", "float", "figure", doc="lowest SM clock sampled in the window"),
    _c("gpu_util_pct", "float", "figure", doc="mean GPU utilisation sampled in the window, %"),
    _c("gpu_temp_max_c", "float", "figure", doc="highest GPU temperature sampled, °C"),
    _c("decode_errors", "int", "figure",
       doc="pipeline: files that failed to read or decode (skipped, counted, never a crash)"),
    _c("cpu_time_s", "float", "figure",
       doc="pipeline: CPU seconds of the process and its loader workers in the steady state"),
    _c("tree_peak_rss_bytes", "float", "figure",
       doc="pipeline: peak resident memory of the process and its loader workers together"),
    _c("data_wait_frac", "float", "figure",
       doc="end to end: fraction of the steady state the step waited for its next batch"),
    *NUMERICS_SPEC,
    _c("repro_max_abs_diff", "float", "figure", doc="re-run check: largest difference"),
    _c("wall_s", "float", "process", doc="the replicate's wall time, launch to result"),
    _c("work_unit", choices=WORK_UNITS, doc="a ceiling's unit of work"),
    _c("repro_bitwise_equal", choices=_TRUE_FALSE, doc="re-run check: bitwise equal"),
    _c("energy_method", group="telemetry", choices=ENERGY_METHODS,
       doc="how energy_j was measured (none: not measured; energy_reason says why)"),
    _c("energy_reason", group="telemetry",
       doc="why there is no energy figure, or what it covers"),
    _c("throttled", group="telemetry", choices=_TRUE_FALSE,
       doc="a clock-event (throttle) reason other than idle was active in the window"),
    _c("throttle_reasons", group="telemetry",
       doc="those reasons, each with the share of samples it was active in"),
    _c("notes", doc="what the replicate could not do but did not fail for (e.g. no FLOP count)"),
    _c("started_at", doc="UTC start, ISO 8601"),
    _c("ended_at", doc="UTC end, ISO 8601"),
)

#: samples.csv: every timed iteration, so every statistic can be recomputed from the source.
SAMPLE_SPEC: Final[tuple[Column, ...]] = (
    _c("schema_version", "int", required=True, doc="version of this schema"),
    _c("run_id", required=True, doc="the run folder's name"),
    _c("fingerprint_id", required=True, doc="the environment fingerprint"),
    _c("cell_id", required=True, doc="the cell (see results.csv)"),
    _c("replicate", "int", required=True, doc="the replicate (see results.csv)"),
    _c("attempt_id", doc="the attempt whose row these samples belong to (see results.csv)"),
    _c("phase", choices=PHASES, required=True, doc="cold pass or steady state"),
    _c("iter", "int", required=True, doc="iteration index in the schedule"),
    _c("batch_size", "int", required=True, doc="that iteration's batch"),
    _c("resolution", "int", required=True, doc="that iteration's resolution"),
    _c("seconds", "float", required=True, doc="its time"),
)


def _names(spec: tuple[Column, ...], **match: object) -> tuple[str, ...]:
    return tuple(c.name for c in spec if all(getattr(c, k) == v for k, v in match.items()))


RESULT_COLUMNS: Final = _names(RESULT_SPEC)
#: Axis columns, in the order a reader scans them. The values written are the declared ones
#: (for example ``on``/``off``/``n/a`` for the cuDNN switches), never Python reprs.
AXIS_COLUMNS: Final = _names(RESULT_SPEC, group="axis")
#: Flags read back inside the worker after they were set: what actually applied.
#: ``true``/``false`` for switches, the raw value otherwise, empty when not applicable.
EFFECTIVE_COLUMNS: Final = _names(RESULT_SPEC, group="effective")
#: Numbers: all may be empty (failed rows, or not applicable); never 0.0 as a stand-in.
NUMERIC_COLUMNS: Final = _names(RESULT_SPEC, type="float")
#: A replicate's measured figures: a failed replicate has none of them.
FIGURE_COLUMNS: Final = _names(RESULT_SPEC, group="figure")
#: Whole numbers (empty allowed unless required).
INTEGER_COLUMNS: Final = _names(RESULT_SPEC, type="int")
#: Numbers any row may have, failed or not: they describe the process, not a measurement.
PROCESS_COLUMNS: Final = _names(RESULT_SPEC, group="process")
REQUIRED_RESULT_COLUMNS: Final = _names(RESULT_SPEC, required=True)
#: Every closed string column of results.csv and its allowed values.
RESULT_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    c.name: c.choices for c in RESULT_SPEC if c.choices
}
#: The axes' closed sets alone (``model`` is checked against torchvision instead).
AXIS_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    c.name: c.choices for c in RESULT_SPEC if c.choices and c.group == "axis"
}

SAMPLE_COLUMNS: Final = _names(SAMPLE_SPEC)
SAMPLE_INTEGER_COLUMNS: Final = _names(SAMPLE_SPEC, type="int")
REQUIRED_SAMPLE_COLUMNS: Final = _names(SAMPLE_SPEC, required=True)


class SchemaError(ValueError):
    """A file or row that does not match the schema; the message names the problem."""


def flag(value: bool | None) -> str:
    """Write a read-back switch: ``true``/``false``, or empty when not applicable."""
    if value is None:
        return ""
    return "true" if value else "false"


#: How many reasons ``graph_break_reasons`` keeps, and how long each may be.
BREAK_REASONS_KEPT: Final = 3
BREAK_REASON_CHARS: Final = 160
_REASON_SEP = "; "


def break_reasons(counts: dict[str, int]) -> str:
    """Write ``graph_break_reasons``: ``"2x first reason; 1x second reason"``.

    The most frequent ``BREAK_REASONS_KEPT`` reasons, most frequent first (ties in the order
    given), each on one line, without ``;`` (written ``,``), at most ``BREAK_REASON_CHARS``
    long; the breaks of the reasons left out are counted in ``graph_breaks`` only. Empty when
    there were none. ``parse_break_reasons`` reads it back.
    """
    kept = sorted(((n, text) for text, n in counts.items() if n > 0), key=lambda e: -e[0])
    out = []
    for n, text in kept[:BREAK_REASONS_KEPT]:
        one = " ".join(text.replace(";", ",").split())
        if len(one) > BREAK_REASON_CHARS:
            one = one[:BREAK_REASON_CHARS - 3].rstrip() + "..."
        out.append(f"{n}x {one}")
    return _REASON_SEP.join(out)


def parse_break_reasons(text: str) -> list[tuple[int, str]]:
    """``graph_break_reasons`` as ``[(count, reason), ...]``; a malformed entry is refused."""
    out = []
    for part in filter(None, text.split(_REASON_SEP)):
        n, sep, reason = part.partition("x ")
        if not sep or not n.isdigit() or not reason:
            raise SchemaError(f"graph_break_reasons entry {part!r} is not 'COUNTx reason'")
        out.append((int(n), reason))
    return out

#: The machine's pace at each end of a sitting, in that sitting's record of env.json's
#: ``sittings`` list (``bench.run.execute.pacing.sitting_pace`` measures it; never in the
#: fingerprint):
#: ``record[SITTING_PACE][PACE_START or PACE_END][probe] = {"cell_id": ..., ...}`` for each
#: probe of ``PACE_PROBES`` the sitting planned (the CUDA ones only on a machine with CUDA).
#: A measured probe holds ``steady_p10_s``, ``steady_median_s``, ``steady_iters`` and ``at``
#: (UTC, when it ended); one that failed holds ``PACE_MISSING`` (why) and one not run
#: ``PACE_SKIPPED`` (why: the sitting was stopped by a signal), never a number.
SITTING_PACE: Final = "pace"
PACE_START: Final = "start"
PACE_END: Final = "end"
#: The probes: the host CPU's fp32 matmul, a CUDA TF32 matmul (compute-bound) and ResNet-18
#: inference at batch 1 on CUDA (launch-bound); a name begins with the part it measures.
PACE_CPU_MATMUL: Final = "cpu_matmul"
PACE_CUDA_MATMUL: Final = "cuda_matmul"
PACE_CUDA_LAUNCH: Final = "cuda_launch"
PACE_PROBES: Final = (PACE_CPU_MATMUL, PACE_CUDA_MATMUL, PACE_CUDA_LAUNCH)
PACE_MISSING: Final = "missing"
PACE_SKIPPED: Final = "skipped"
