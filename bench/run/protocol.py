"""What crosses the process boundary, typed: the task a child runs and the record it leaves.

The runner writes a ``Task`` file, the child (fork-server child or spawned worker) reads it,
runs one replicate and writes a ``Record`` file atomically; the runner reads the record and
turns it into a row. Both sides import this module and nothing else of each other's, so a
field renamed here is renamed on both sides at once, and a record from a different version
of the code fails to decode with a message instead of filling a row with the wrong column.

The fork server's pipe is typed the same way: each line is one tagged message (``Run`` and
``Stop`` to the server; ``Ready``, ``Started``, ``Exited`` and ``Refused`` back).

Standard library only (the child imports it next to torch, the parent without torch).
Field names of ``Flags`` and ``Metrics`` are the result columns they fill.
"""

from __future__ import annotations

import json
import os
import select
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, TypeVar, Union

from bench.run.plan.matrix import Cell, Settings
from bench.schema import STATUSES, Status

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
    unknown = sorted(set(data) - {f.name for f in fields(cls)})  # type: ignore[arg-type]
    if unknown:
        raise ProtocolError(f"{cls.__name__}: unknown field {', '.join(map(repr, unknown))}")
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
class ModelCheck:
    """A user model the probe imports, builds and runs once (batch 2) before anything is
    measured, so that a broken one is refused with one line and nothing written."""

    model: str
    input_shape: str = ""  # C,H,W of one sample; empty when ``inputs`` makes the batch
    inputs: str = ""
    loss: str = ""
    mode: str = "infer"  # train: the loss and a backward pass are checked too
    device: str = "cpu"


@dataclass(frozen=True)
class ModelInfo:
    """The probe's answer to one ``ModelCheck``: the model's identity, or why it cannot run."""

    check: ModelCheck
    error: str = ""  # one line; empty when the model built and ran
    source: str = ""  # ``model_source``: the hash of the files below
    files: dict[str, str] = field(default_factory=dict)  # source file → its own hash
    input_ndim: int | None = None  # dimensions of the model's first input tensor
    flops_per_sample: float | None = None  # forward, at the checked shape
    note: str = ""  # why flops_per_sample is empty, where it is


def _model_info(data: object) -> ModelInfo:
    return _build(ModelInfo, data, check=lambda d: _build(ModelCheck, d))


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
    models: list[ModelCheck] = field(default_factory=list)  # probe: the user models to check

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
                      settings=lambda d: _build(Settings, d),
                      models=lambda xs: [_build(ModelCheck, x) for x in xs])


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
    eff_matmul_fp32_precision: str = ""  # torch >= 2.9's switches; empty where torch lacks them
    eff_conv_fp32_precision: str = ""


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
    steady_p95_s: float | None = None
    steady_p99_s: float | None = None
    steady_mean_s: float | None = None
    steady_ci_rel: float | None = None
    steady_iters: int | None = None
    samples_per_s: float | None = None
    peak_mem_allocated_bytes: float | None = None
    peak_mem_reserved_bytes: float | None = None
    peak_rss_bytes: float | None = None
    compile_time_s: float | None = None
    compiles: int | None = None
    recompiles: int | None = None
    graph_breaks: int | None = None
    steady_graph_breaks: int | None = None
    graphs: int | None = None
    graph_break_reasons: str | None = None  # ``schema.break_reasons``'s text
    flops_per_sample: float | None = None
    work_per_iter: float | None = None
    energy_window_s: float | None = None  # the telemetry of the window (child.telemetry)
    energy_j: float | None = None
    energy_integrated_j: float | None = None
    joules_per_sample: float | None = None
    mean_power_w: float | None = None
    sm_clock_median_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    gpu_util_pct: float | None = None
    gpu_temp_max_c: float | None = None

    decode_errors: int | None = None  # pipeline and e2e cells (``bench.run.child.feeding``)
    cpu_time_s: float | None = None
    tree_peak_rss_bytes: float | None = None
    data_wait_frac: float | None = None

    num_reference: str | None = None  # the numerics check (``bench.run.child.numerics``)
    num_inputs: int | None = None
    num_rel_err: float | None = None
    num_max_abs_err: float | None = None
    num_cosine: float | None = None
    num_top1_agree: float | None = None
    num_train_steps: int | None = None
    num_loss: float | None = None
    num_ref_loss: float | None = None
    num_loss_rel_diff: float | None = None
    num_param_drift: float | None = None
    num_time_s: float | None = None


@dataclass(frozen=True)
class Energy:
    """How the window's energy was measured, or why it was not, and whether the device
    throttled (``true``/``false``; empty where nothing sampled the clocks)."""

    energy_method: str = ""
    energy_reason: str = ""
    throttled: str = ""
    throttle_reasons: str = ""


@dataclass(frozen=True)
class Repro:
    """The second process of a reproducibility check, compared with the first."""

    bitwise_equal: bool
    max_abs_diff: float | None  # None: not comparable, or NaN
    tensors: int


@dataclass(frozen=True)
class Probe:
    """What a probe child found: the fingerprint (``env.json`` as written), the torchvision
    models it can build, whether CUDA is there, the autocast dtypes each device really runs
    (``{"cpu": ["bfloat16", "float16"]}``) and its answers about the user models it was asked
    to check."""

    env: dict[str, Any]  # the payload env.json stores; the runner reads it through the below
    models: list[str]
    cuda: bool
    autocast: dict[str, list[str]] = field(default_factory=dict)
    user_models: list[ModelInfo] = field(default_factory=list)

    @property
    def fingerprint_id(self) -> str:
        return str(self.env.get("fingerprint_id", ""))

    @property
    def machine(self) -> str:
        return str(self.env.get("machine", ""))

    @property
    def cores(self) -> int:
        """The CPU cores this process may run on (its affinity), at least 1."""
        cpu = self.env.get("cpu")
        return int((cpu.get("affinity") if isinstance(cpu, dict) else None) or 1)


def _probe(data: object) -> Probe:
    return _build(Probe, data, user_models=lambda xs: [_model_info(x) for x in xs])


@dataclass
class Timeline:
    """Wall-clock moments (``time.time()``) in the child, for the harness-overhead figure."""

    entered: float = 0.0  # the task began
    build_start: float | None = None  # the model build began (measure only)
    built: float | None = None  # the model (or ceiling) was built, the cold pass begins
    cold_end: float | None = None  # the cold pass ended, the warm-up begins
    steady_start: float | None = None  # the warm-up ended, the timed steady state begins
    steady_end: float | None = None  # the steady state ended
    ended: float | None = None


@dataclass
class Record:
    """What one child leaves behind. Only ok, oom, error and skipped are decided here; a child
    that dies leaves no record and the runner classifies its exit."""

    status: str = Status.OK
    reason: str = ""
    flags: Flags | None = None
    metrics: Metrics = field(default_factory=Metrics)
    work_unit: str = ""  # a ceiling's unit of work
    samples: list[Sample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what it could not do but did not fail for
    repro: Repro | None = None
    energy: Energy | None = None
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
                      repro=lambda d: _build(Repro, d), probe=_probe,
                      energy=lambda d: _build(Energy, d),
                      timeline=lambda d: _build(Timeline, d))


#: The result columns a record fills (the repro difference comes from ``Repro``).
FLAG_COLUMNS = tuple(f.name for f in fields(Flags))
METRIC_COLUMNS = tuple(f.name for f in fields(Metrics))
ENERGY_FIELDS = tuple(f.name for f in fields(Energy))


# -- the fork server's pipe: one JSON object a line, tagged with its type -----------------

#: How long a child has between SIGTERM and SIGKILL (it may be flushing, or its group may hold
#: a compile worker that cleans up after itself).
TERM_GRACE_S = 2.0
#: A protocol line longer than this is garbage, not a message still arriving.
MAX_LINE = 1 << 20


@dataclass(frozen=True)
class Run:
    """Runner → server: fork a child for this task file, and end it after ``timeout_s``;
    first, once per server, import what ``warm`` names (``warm_for``)."""

    task: str
    timeout_s: float
    warm: str = ""


#: ``Run.warm``: what ``torch.compile(model)`` imports (Dynamo's front end, Inductor's
#: ``compile_fx``), without compiling anything.
WARM_COMPILE = "compile"


def warm_for(task: Task) -> str:
    """What the fork server should import before it forks ``task``'s child: for a compiled
    CPU cell, what ``torch.compile`` imports (1.1 to 1.4 s a process on a 2-core CPU, spent
    in every compiled replicate's untimed build otherwise; once in the server, it is shared).
    Nothing is compiled there, so every compile is still the child's, in its timed cold pass.
    Never for a CUDA cell: Inductor's import may ask the driver about devices, and a process
    forked after that cannot use CUDA; the fork server must not touch it."""
    return WARM_COMPILE if task.cell.compile != "off" and task.cell.device == "cpu" else ""


@dataclass(frozen=True)
class Stop:
    """Runner → server: end this child now (its group: SIGTERM, then SIGKILL)."""

    pid: int


@dataclass(frozen=True)
class Ready:
    """Server → runner: the server has imported what it preloads and takes tasks."""

    pid: int


@dataclass(frozen=True)
class Started:
    """Server → runner: a child was forked for the last task."""

    pid: int


@dataclass(frozen=True)
class Exited:
    """Server → runner: a child ended and was reaped. ``code`` follows subprocess (negative:
    killed by that signal); ``timed_out`` says the server ended it at its timeout."""

    pid: int
    code: int
    timed_out: bool = False


@dataclass(frozen=True)
class Refused:
    """Server → runner: the last message could not be acted on, and why."""

    error: str


Message = Union[Run, Stop, Ready, Started, Exited, Refused]
_TAGS: dict[str, type[Message]] = {"run": Run, "stop": Stop, "ready": Ready, "started": Started,
                                   "exited": Exited, "refused": Refused}
_TAG_OF = {cls: tag for tag, cls in _TAGS.items()}
#: The field types a message may carry (bool is not an int here: JSON tells them apart).
_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "str": (str,),
                                       "bool": (bool,)}


def encode(msg: Message) -> bytes:
    return (json.dumps({"tag": _TAG_OF[type(msg)], **asdict(msg)}) + "\n").encode()


def decode(line: bytes) -> Message:
    """One line off the pipe as its message, or ProtocolError saying what is wrong with it."""
    data = _loads(line.decode(errors="replace"), f"message {line[:200]!r}")
    if not isinstance(data, dict) or data.get("tag") not in _TAGS:
        raise ProtocolError(f"not a message: {line[:200]!r}")
    cls = _TAGS[data.pop("tag")]
    msg = _build(cls, data)
    for f in fields(msg):
        value = getattr(msg, f.name)
        if not isinstance(value, _TYPES[str(f.type)]) or (
                isinstance(value, bool) and f.type != "bool"):
            raise ProtocolError(f"{cls.__name__}.{f.name} is not {f.type}: {value!r}")
    return msg


class Channel:
    """Messages read off a pipe one line at a time, with a timeout: no partial lines, and no
    reading past what select said was there."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buf = b""

    def fileno(self) -> int:
        return self._fd

    def pending(self) -> Message | None:
        """The next message already read in whole, if there is one."""
        line, sep, rest = self._buf.partition(b"\n")
        if not sep:
            if len(self._buf) > MAX_LINE:
                head, self._buf = self._buf[:200], b""
                raise ProtocolError(f"a line of over {MAX_LINE} bytes: {head!r}")
            return None
        self._buf = rest
        return decode(line)

    def fill(self) -> None:
        """Read what the pipe holds (call when select says it is readable); EOFError at its end."""
        chunk = os.read(self._fd, 65536)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        self._buf += chunk

    def read(self, timeout: float) -> Message | None:
        """The next message, or None if none came whole within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        msg = self.pending()
        while msg is None:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([self._fd], [], [], left)[0]:
                return None
            self.fill()
            msg = self.pending()
        return msg
