"""What crosses the process boundary, typed: the task a child runs and the record it leaves.

The runner writes a ``Task`` file, the child (fork-server child or spawned worker) reads it,
runs one replicate and writes a ``Record`` file atomically; the runner reads the record and
turns it into a row. Both sides import this module and nothing else of each other's, so a
field renamed here is renamed on both sides at once, and a record from a different version
of the code fails to decode with a message instead of filling a row with the wrong column.

Standard library only (the child imports it next to torch, the parent without torch).
Field names of ``Flags`` and ``Metrics`` are the result columns they fill.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, TypeVar

from bench.run.matrix import Cell, Settings
from bench.schema import STATUSES

T = TypeVar("T")

#: What a child can be asked to do: describe the machine, measure a replicate, run half of a
#: reproducibility check, or fill a warm kernel cache.
OPS = ("probe", "measure", "repro", "prime")


class ProtocolError(ValueError):
    """A task, record or message that does not decode into its type."""


def _build(cls: type[T], data: object, **nested: Callable[[Any], Any]) -> T:
    """``cls(**data)``, decoding the ``nested`` fields first; any mismatch is a ProtocolError."""
    if not isinstance(data, dict):
        raise ProtocolError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    try:
        return cls(**{k: nested[k](v) if k in nested and v is not None else v
                      for k, v in data.items()})
    except TypeError as exc:  # an unknown or a missing field
        raise ProtocolError(f"{cls.__name__}: {exc}") from None


def _loads(text: str, what: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ProtocolError(f"{what} is not JSON: {exc}") from None


@dataclass(frozen=True)
class Task:
    """One child process's work. Paths are strings: the file is JSON, read on the same host."""

    op: str
    cell: Cell
    settings: Settings
    replicate: int
    result_path: str
    log_path: str
    fault: str = ""  # the fault-injection spec (see bench.run.child.worker)
    flops_per_sample: float | None = None  # counted by an earlier replicate of the same shape
    cache_dir: str = ""  # this process's kernel-cache folder (empty: leave the caches alone)
    repro_out: str = ""  # repro, first process: where to save the tensors
    repro_ref: str = ""  # repro, second process: the first one's tensors to compare with

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ProtocolError(f"Task: unknown op {self.op!r}; valid: {', '.join(OPS)}")

    @property
    def path(self) -> Path:
        """Where the runner writes this task for the child to read."""
        return Path(self.result_path).with_suffix(".task.json")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Task:
        return _build(cls, _loads(text, "task"), cell=lambda d: _build(Cell, d),
                      settings=lambda d: _build(Settings, d))


def new_task(op: str, cell: Cell, settings: Settings, replicate: int, workdir: Path,
             suffix: str = "", fault: str = "") -> Task:
    """A task whose files are named after what it runs, in ``workdir`` (``suffix`` tells the
    two processes of a reproducibility check apart)."""
    token = f"{op}-{cell.cell_id}-r{replicate}-{suffix}".rstrip("-")
    return Task(op, cell, settings, replicate, result_path=str(workdir / f"{token}.result.json"),
                log_path=str(workdir / f"{token}.log"), fault=fault)


@dataclass(frozen=True)
class Sample:
    """One timed iteration: a row of samples.csv without the run's identity columns."""

    phase: str  # cold | steady
    iter: int
    batch_size: int
    resolution: int
    seconds: float


@dataclass(frozen=True)
class Flags:
    """Every backend flag as read back after it was set (``true``/``false``, the raw value,
    or empty where it does not apply): what actually ran, not what was asked for."""

    eff_cudnn_enabled: str = ""
    eff_cudnn_benchmark: str = ""
    eff_cudnn_deterministic: str = ""
    eff_cudnn_benchmark_limit: str = ""
    eff_cudnn_allow_tf32: str = ""
    eff_matmul_allow_tf32: str = ""
    eff_float32_matmul_precision: str = ""
    eff_deterministic_algorithms: str = ""
    eff_num_threads: str = ""
    eff_autocast_dtype: str = ""
    eff_conv_math: str = ""


@dataclass
class Metrics:
    """A replicate's measured figures; None is an empty cell (never 0.0 as a stand-in)."""

    cold_first_iter_s: float | None = None
    cold_pass_s: float | None = None
    cold_peak_mem_allocated_bytes: float | None = None
    cold_peak_mem_reserved_bytes: float | None = None
    steady_median_s: float | None = None
    steady_p10_s: float | None = None
    steady_p90_s: float | None = None
    steady_mean_s: float | None = None
    steady_ci_rel: float | None = None
    steady_iters: int | None = None
    samples_per_s: float | None = None
    peak_mem_allocated_bytes: float | None = None
    peak_mem_reserved_bytes: float | None = None
    peak_rss_bytes: float | None = None
    flops_per_sample: float | None = None
    work_per_iter: float | None = None


@dataclass(frozen=True)
class Repro:
    """The second process of a reproducibility check, compared with the first."""

    bitwise_equal: bool
    max_abs_diff: float | None  # None: not comparable, or NaN
    tensors: int


@dataclass(frozen=True)
class Probe:
    """What a probe child found: the fingerprint (``env.json`` as written), the torchvision
    models it can build, and whether CUDA is there."""

    env: dict[str, Any]
    models: list[str]
    cuda: bool


@dataclass
class Timeline:
    """Wall-clock moments (``time.time()``) in the child, for the harness-overhead figure."""

    entered: float = 0.0  # the task began
    build_start: float | None = None  # the model build began (measure only)
    ended: float | None = None


@dataclass
class Record:
    """What one child leaves behind. Only ok, oom, error and skipped are decided here; a child
    that dies leaves no record and the runner classifies its exit."""

    status: str = "ok"
    reason: str = ""
    flags: Flags | None = None
    metrics: Metrics = field(default_factory=Metrics)
    work_unit: str = ""  # a ceiling's unit of work
    samples: list[Sample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what it could not do but did not fail for
    repro: Repro | None = None
    probe: Probe | None = None
    cache_start_bytes: int | None = None  # the kernel-cache folder when the child started
    timeline: Timeline = field(default_factory=Timeline)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ProtocolError(f"Record: unknown status {self.status!r}")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Record:
        return _build(cls, _loads(text, "record"),
                      flags=lambda d: _build(Flags, d), metrics=lambda d: _build(Metrics, d),
                      samples=lambda xs: [_build(Sample, x) for x in xs],
                      repro=lambda d: _build(Repro, d), probe=lambda d: _build(Probe, d),
                      timeline=lambda d: _build(Timeline, d))


#: The result columns a record fills (the repro difference comes from ``Repro``).
FLAG_COLUMNS = tuple(f.name for f in fields(Flags))
METRIC_COLUMNS = tuple(f.name for f in fields(Metrics))
