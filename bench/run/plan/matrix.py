"""The benchmark matrix as data: studies hold cells, a profile holds studies.

A *cell* is one point of the matrix: every axis value fixed. It is a frozen dataclass so it
can be hashed, deduplicated across studies and turned into a stable id that does not depend
on which study or machine produced it (the report pairs cells by these ids).

A *study* is a sub-matrix with its stopping rule (``Settings``); a *profile* is the studies
of one run. Profiles are read from TOML, checked and expanded into cells in
``bench.run.plan.profiles``. Nothing here imports torch: the child and the store share these
types with the plan.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bench import schema
from bench.intervals import Adaptive
from bench.run.plan import modelspec, pipelines
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.schema import LATER_AXES

#: Resolution step between the K sizes of a ``dynamic`` schedule (kept a multiple of 16 so
#: patch-based and strided models see "natural" sizes).
DYNAMIC_STEP = 16
#: A ``ragged`` schedule is an epoch of this many batches whose last batch is smaller.
RAGGED_CYCLE = 8


class ProfileError(ValueError):
    """A profile that cannot be run; the message is one line naming the valid choices."""


@dataclass(frozen=True)
class Cell:
    """One point of the matrix. Field order is the identity order; see ``cell_id``."""

    kind: str = "model"
    device: str = "cpu"
    model: str = "resnet18"
    mode: str = "infer"
    batch_size: int = 1
    resolution: int = 224
    precision: str = "fp32"
    memory_format: str = "nchw"
    shapes: str = "static"
    shape_count: int = 1
    cudnn_benchmark: str = "off"
    cudnn_deterministic: str = "off"
    cudnn_benchmark_limit: int | None = 10
    cpu_threads: int | None = None  # None means "all cores available to the process"
    kernel_cache: str = "fresh"  # the on-disk kernel caches a replicate starts with
    compile: str = "off"  # torch.compile's mode, or eager
    compile_dynamic: str = "auto"  # torch.compile's dynamic= (only where compile is not off)
    #: A user model's identity and inputs (``bench.schema.USER_MODEL_AXES``), empty for a
    #: torchvision model: the hash of its sources (filled in from the probe), C,H,W of one
    #: sample (H and W are the resolution), and its ``inputs`` and ``loss`` callables.
    model_source: str = ""
    input_shape: str = ""
    inputs: str = ""
    loss: str = ""
    #: An input pipeline's axes (``kind`` pipeline or e2e, see ``bench.run.plan.pipelines``): its
    #: DataLoader workers, its JPEG decoder and the user's image folder (empty: JPEGs made at
    #: run time from a seed). None and empty for every other kind.
    num_workers: int | None = None
    decoder: str = ""
    images: str = ""

    @property
    def cell_id(self) -> str:
        """A short, stable hash of the axis values: same axes, same id, on any machine.

        Axes added later (``LATER_AXES``) leave the hash alone at their default, so the ids of
        the cells that existed before them, and the links people posted to their rows, stay
        the same. Rows measured before such an axis are still never pooled with newer ones:
        the axis came with a new step definition, hence a new fingerprint.
        """
        axes = {k: v for k, v in asdict(self).items()
                if k not in LATER_AXES or v != LATER_AXES[k]}
        blob = json.dumps(axes, sort_keys=True, separators=(",", ":"))
        return hashlib.sha1(blob.encode()).hexdigest()[:10]

    @property
    def name(self) -> str:
        """A readable label; the id is the key, this is for people."""
        if self.kind == "ceiling":
            size = f"n={self.resolution}" if self.model.startswith("matmul") else (
                f"{self.resolution}MiB")
            return f"{self.model} {self.device} {size}"
        if self.kind in PIPELINE_KINDS:
            return pipelines.name(self)
        shapes = self.shapes + (f"x{self.shape_count}" if self.shapes == "dynamic" else "")
        parts = [self.model, self.device, self.mode, f"b{self.batch_size}",
                 *self._input_words(), self.precision, self.memory_format, shapes]
        if self.device == "cuda":
            parts += [f"bm={self.cudnn_benchmark}", f"det={self.cudnn_deterministic}"]
            if self.cudnn_benchmark_limit != 10:
                parts.append(f"limit={self.cudnn_benchmark_limit}")
        if self.cpu_threads is not None and self.device == "cpu":
            parts.append(f"threads={self.cpu_threads}")
        if self.kernel_cache != "fresh":
            parts.append(f"cache={self.kernel_cache}")
        if self.compile != "off":
            parts.append(f"compile={self.compile}")
            if self.compile_dynamic != "auto":
                parts.append(f"dynamic={self.compile_dynamic}")
        if self.loss:
            parts.append(f"loss={self.loss}")
        if self.model_source:
            parts.append(f"src={self.model_source[:6]}")
        return " ".join(parts)

    def _input_words(self) -> list[str]:
        """``r224`` for a torchvision model; a user model's shape or inputs callable."""
        if self.inputs:
            return [f"inputs={self.inputs}"]
        if self.input_shape:
            return [f"in={self.input_shape}"]
        return [f"r{self.resolution}"]

    def schedule(self) -> list[tuple[int, int]]:
        """The (batch, resolution) sequence one cycle of iterations walks through."""
        b, r = self.batch_size, self.resolution
        if self.shapes == "dynamic":
            k = self.shape_count
            start = r - DYNAMIC_STEP * (k // 2)
            return [(b, max(DYNAMIC_STEP, start + DYNAMIC_STEP * i)) for i in range(k)]
        if self.shapes == "ragged":
            last = max(1, -(-b // 3))  # ceil(b / 3): the leftover of an epoch
            return [(b, r)] * (RAGGED_CYCLE - 1) + [(last, r)]
        return [(b, r)]


@dataclass(frozen=True)
class Settings:
    """How a study measures: the stopping rule and the replication, not what it measures."""

    replicates: int = 3
    warmup_iters: int = 3
    min_iters: int = 10
    min_time_s: float = 1.0
    max_iters: int = 1000
    max_time_s: float = 10.0
    ci_target: float = 0.02
    timeout_s: float = 300.0
    repro: bool = False
    repro_steps: int = 2
    #: Skip a CPU cell in bf16 autocast where the CPU has no native bf16 (``cpuinfo``): the
    #: best-settings studies, which measure the CPU at its best, not an emulation.
    native_bf16_only: bool = False
    #: Run the paired numerics check (``bench.run.child.numerics``) in the study's model
    #: cells, after their timed windows: their outputs against a strict reference's, from the
    #: same weights on a fixed seeded batch (``checks_numerics`` says which replicates).
    numerics: bool = False

    def checks_numerics(self, cell: Cell, replicate: int) -> bool:
        """Whether this replicate of ``cell`` runs the numerics check: the first replicate of
        each cell, since the same weights, inputs and kernels give the same numbers in every
        replicate (checking each would cost a third of a CPU profile's wall time), and not a
        compiled cell's warm twin, whose program is its fresh twin's (the kernel cache changes
        how long the compile takes, not what it computes)."""
        return (self.numerics and replicate == 0 and cell.kind == "model"
                and not (cell.compile != "off" and cell.kernel_cache == "warm"))

    def warmup(self, period: int) -> int:
        """Untimed iterations between the cold pass and the timed window, for a schedule of
        ``period`` shapes. A warm-up that is asked for runs at least one whole cycle, so every
        shape is warmed once more; none (``warmup_iters = 0``, for a device whose cold pass
        leaves nothing to warm: the first iteration of every shape) is none, for every
        schedule."""
        return max(self.warmup_iters, period) if self.warmup_iters > 0 else 0

    def lasting(self, least_s: float) -> Settings:
        """The stopping rule with a steady window of at least ``least_s``: what an energy
        counter needs (``schema.ENERGY_MIN_WINDOW_S``). The time now bounds the window, not
        the iteration count, which rises to ``LASTING_MAX_ITERS``: at the gpu profile's 300, an
        H200's 8192 bf16 matmul (1.6 ms) stopped at 0.5 s and its 2 GiB copy at 0.3 s."""
        if self.min_time_s >= least_s:
            return self
        return replace(self, min_time_s=least_s, max_time_s=max(self.max_time_s, least_s),
                       max_iters=max(self.max_iters, LASTING_MAX_ITERS))

    def feeding(self, workers: int) -> Settings:
        """The stopping rule for an input pipeline of ``workers`` loader workers: its window
        starts past the batches they were handed at start-up and holds whole rounds of them
        (``schema.feeding_window``), so its first batch is one a worker began after
        start-up."""
        warmup, least = schema.feeding_window(workers, self.warmup_iters, self.min_iters)
        return replace(self, warmup_iters=warmup, min_iters=least,
                       max_iters=max(self.max_iters, least))


#: The iteration cap of a window stretched to a least duration (``Settings.lasting``): a
#: second of 0.1 ms steps, and no more samples than that per replicate.
LASTING_MAX_ITERS = 10_000


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    cells: tuple[Cell, ...]
    settings: Settings


#: The longest steady window of the CPU pace probe at each end of a sitting, in seconds
#: (``bench.run.plan.pace``), unless a profile's ``[pace] window_s`` says otherwise.
PACE_WINDOW_S = 1.8


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    studies: tuple[Study, ...]
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    adaptive: Adaptive | None = None  # its ``[adaptive]`` table; None: the planned only
    pace_window_s: float = PACE_WINDOW_S  # its ``[pace]`` table's ``window_s``

    def planned(self) -> list[tuple[Study, Cell]]:
        """Every distinct cell once, owned by the first study that declares it."""
        seen: set[str] = set()
        out: list[tuple[Study, Cell]] = []
        for study in self.studies:
            for cell in study.cells:
                if cell.cell_id not in seen:
                    seen.add(cell.cell_id)
                    out.append((study, cell))
        return out

    def models(self) -> set[str]:
        return {c.model for s in self.studies for c in s.cells if c.kind in ("model", "e2e")}


def select(profile: Profile, only: Iterable[str] | None) -> Profile:
    """Keep only the named studies (``--only``), refusing unknown names."""
    wanted = list(only or [])
    if not wanted:
        return profile
    names = [s.name for s in profile.studies]
    for w in wanted:
        if w not in names:
            raise ProfileError(f"unknown study {w!r} in profile {profile.name}; "
                               f"valid choices: {', '.join(names)}")
    return replace(profile, studies=tuple(s for s in profile.studies if s.name in wanted))


def check_models(profile: Profile, available: Iterable[str]) -> None:
    """Refuse models the installed torchvision does not have, naming the valid ones."""
    valid = sorted(set(available))
    named = {m for m in profile.models() if not modelspec.is_user_model(m)}  # the probe's job
    unknown = sorted(named - set(valid))
    if unknown:
        raise ProfileError(f"unknown model(s) {', '.join(unknown)} in profile {profile.name}; "
                           f"valid choices: {', '.join(valid)}")
