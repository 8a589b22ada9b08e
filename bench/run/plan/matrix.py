"""The benchmark matrix as data: profiles (TOML) hold studies, studies expand into cells.

A *cell* is one point of the matrix: every axis value fixed. It is a frozen dataclass so it
can be hashed, deduplicated across studies and turned into a stable id that does not depend
on which study or machine produced it (the report pairs cells by these ids).

A *study* is a sub-matrix: list values are a Cartesian product, scalar values are fixed,
and ``variants`` is a list of inline tables that move together (for example
``{precision = "amp-bf16", memory_format = "channels_last"}``), which a plain product cannot
express. Nothing here imports torch: profiles are validated before any process is started.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from bench import intervals, schema
from bench.intervals import Adaptive
from bench.run.plan import cpuinfo, limits, modelspec, pipelines
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.schema import AXIS_CHOICES, CEILING_OPS, KERNEL_CACHES, LATER_AXES, USER_MODEL_AXES

#: The shipped profiles sit at the package root (``bench/profiles``), where packaging finds them.
PROFILE_DIR = Path(__file__).resolve().parents[2] / "profiles"

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


#: The keys of a profile's ``[adaptive]`` table (δ is the site's, not a profile's).
ADAPTIVE_KEYS = ("looks", "step", "max_width")


def _adaptive(raw: Any, name: str) -> Adaptive | None:
    """A profile's ``[adaptive]`` table (its keys default to ``bench.intervals``'); None where
    there is none, or it asks for one look (the planned replicates alone)."""
    where = f"{name} [adaptive]"
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: must be a table, e.g. looks = 3")
    for key, value in raw.items():
        if key not in ADAPTIVE_KEYS:
            raise ProfileError(f"{where}: unknown key {key!r}; valid keys: "
                               f"{', '.join(ADAPTIVE_KEYS)}")
        bad = limits.problem(f"adaptive.{key}", value)
        if bad:
            raise ProfileError(f"{where}: {bad}")
    rule = Adaptive(int(raw.get("looks", intervals.ADAPTIVE_LOOKS)),
                    int(raw.get("step", intervals.ADAPTIVE_STEP)),
                    float(raw.get("max_width", intervals.ADAPTIVE_MAX_WIDTH)))
    return rule if rule.looks > 1 else None


#: The iteration cap of a window stretched to a least duration (``Settings.lasting``): a
#: second of 0.1 ms steps, and no more samples than that per replicate.
LASTING_MAX_ITERS = 10_000


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    cells: tuple[Cell, ...]
    settings: Settings


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    studies: tuple[Study, ...]
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    adaptive: Adaptive | None = None  # its ``[adaptive]`` table; None: the planned only

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


#: What a profile may set: every axis but the kind and ``model_source``, which is measured (the
#: probe hashes the model's sources when the run starts), never declared.
_AXES = [f.name for f in fields(Cell) if f.name not in ("kind", "model_source")]
_SETTINGS = {f.name: f for f in fields(Settings)}
_SETTING_TYPES: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float),
                                                     "bool": bool}
_STUDY_META = {"description", "kind", "variants"}
_USER_AXES = [k for k in USER_MODEL_AXES if k in _AXES]
_INT_AXES = {"batch_size", "resolution", "shape_count", "cudnn_benchmark_limit", "cpu_threads",
             "num_workers"}


#: What a profile may ask for: "shared" describes old rows and cannot be asked for.
_PROFILE_CHOICES = {**AXIS_CHOICES, "kernel_cache": KERNEL_CACHES}


def _choices(key: str) -> str:
    return ", ".join(_PROFILE_CHOICES[key])


def _check_value(where: str, key: str, value: Any) -> Any:
    """Validate one axis value; return it normalised (booleans become on/off)."""
    if key in _PROFILE_CHOICES:
        if isinstance(value, bool) and key.startswith("cudnn_"):
            value = "on" if value else "off"
        elif isinstance(value, bool) and key == "compile_dynamic":
            value = "true" if value else "false"
        if value not in _PROFILE_CHOICES[key]:
            raise ProfileError(
                f"{where}: unknown {key} {value!r}; valid choices: {_choices(key)}")
        return value
    if key in _INT_AXES:
        if key in ("cpu_threads",) and value in ("all", None):
            return None
        if key == "cpu_threads" and value == "physical":  # the physical cores of this machine
            return cpuinfo.physical_cores()
        bad = limits.problem(key, value)
        if bad:
            raise ProfileError(f"{where}: {bad}")
        return value
    if key == "images":
        return _check_images(where, value)
    if key in _USER_AXES or (key == "model" and isinstance(value, str)
                                  and modelspec.is_user_model(value)):
        return _check_user_axis(where, key, value)
    if key == "model":
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", value):
            raise ProfileError(f"{where}: model must be a torchvision model name or a user "
                               f"model ({modelspec.FORMS}), got {value!r}")
        return value
    raise ProfileError(f"{where}: unknown axis {key!r}; valid axes: {', '.join(_AXES)}")


def _check_images(where: str, value: Any) -> str:
    """A user's image folder: it must exist and hold JPEGs, said in one line at start."""
    try:
        return pipelines.check_images(value)
    except pipelines.ImagesError as exc:
        raise ProfileError(f"{where}: {exc}") from None


def _check_user_axis(where: str, key: str, value: Any) -> str:
    """A user model's name, ``input_shape``, ``inputs`` or ``loss``, checked as a string."""
    try:
        return modelspec.check_axis(key, value)
    except modelspec.SpecError as exc:
        raise ProfileError(f"{where}: {exc}") from None


def _settings(where: str, raw: Mapping[str, Any], base: Settings) -> Settings:
    updates: dict[str, Any] = {}
    for key, value in raw.items():
        spec = _SETTINGS[key]
        want = _SETTING_TYPES[str(spec.type)]
        if isinstance(value, bool) != (spec.type == "bool") or not isinstance(value, want):
            raise ProfileError(f"{where}: setting {key} must be {spec.type}, got {value!r}")
        bad = limits.problem(key, value)
        if bad:
            raise ProfileError(f"{where}: setting {bad}")
        updates[key] = value
    out = replace(base, **updates)
    if out.replicates < 1 or out.min_iters < 1 or out.max_iters < out.min_iters:
        raise ProfileError(f"{where}: need replicates >= 1 and 1 <= min_iters <= max_iters")
    if out.timeout_s <= 0:
        raise ProfileError(f"{where}: timeout_s must be > 0")
    if out.min_time_s > out.max_time_s:  # the stopping rule would end before it could begin
        raise ProfileError(f"{where}: min_time_s {out.min_time_s:g} is above max_time_s "
                           f"{out.max_time_s:g}; valid: min_time_s <= max_time_s")
    return out


def _normalise(cell: Cell) -> Cell:
    """Collapse axes that do not apply, so CPU cells are not run twice for cuDNN switches."""
    if cell.kind in PIPELINE_KINDS:
        try:
            cell = pipelines.normalise(cell)
        except pipelines.PipelineError as exc:
            raise ProfileError(str(exc)) from None
        if cell.kind == "pipeline":
            return cell
    else:
        cell = replace(cell, num_workers=None, decoder="", images="")
    if cell.kind == "ceiling":
        return replace(cell, mode="infer", batch_size=1, memory_format="nchw", shapes="static",
                       shape_count=1, cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                       cudnn_benchmark_limit=None, cpu_threads=cell.cpu_threads
                       if cell.device == "cpu" else None,
                       precision=_CEILING_PRECISION[cell.model], kernel_cache="fresh",
                       model_source="", input_shape="", inputs="", loss="", compile="off",
                       compile_dynamic="auto")
    if cell.compile == "off":
        cell = replace(cell, compile_dynamic="auto")  # dynamic= is torch.compile's argument
    cell = _normalise_inputs(cell)
    if cell.shapes == "static":
        cell = replace(cell, shape_count=1)
    elif cell.shapes == "ragged":
        cell = replace(cell, shape_count=2 if cell.batch_size > 1 else 1)
    if cell.device != "cuda":
        cell = replace(cell, cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                       cudnn_benchmark_limit=None)
    else:
        cell = replace(cell, cpu_threads=None)
        if cell.cudnn_benchmark == "n/a" or cell.cudnn_deterministic == "n/a":
            raise ProfileError("cuda cells need cudnn_benchmark and cudnn_deterministic on/off")
        if cell.cudnn_benchmark == "off":
            cell = replace(cell, cudnn_benchmark_limit=10)  # the limit only acts when on
    return cell


def _inputs_over(base: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """``{**base, **more}``, where ``input_shape`` and ``inputs`` replace each other: a study
    (or a variant) that names one does not inherit the other."""
    out = dict(base)
    for key, other in (("inputs", "input_shape"), ("input_shape", "inputs")):
        if key in more and other not in more:
            out.pop(other, None)
    return {**out, **more}


def _normalise_inputs(cell: Cell) -> Cell:
    """A user model's input: its ``inputs`` callable (the resolution does not apply: 0), or
    ``input_shape`` C,H,W (default 3,224,224) whose H and W are the cell's resolution when
    square, so a dynamic schedule still cycles resolutions. A torchvision model has neither."""
    if not modelspec.is_user_model(cell.model):  # they do not apply: a 3xRxR image, labels
        return replace(cell, model_source="", input_shape="", inputs="", loss="")
    if cell.inputs:
        if cell.input_shape:
            raise ProfileError(f"model {cell.model}: give input_shape or inputs, not both")
        if cell.shapes == "dynamic":
            raise ProfileError(f"model {cell.model}: dynamic shapes cycle the resolution of an "
                               f"input_shape; an inputs callable makes one shape per batch size "
                               f"(valid shapes here: static, ragged)")
        return replace(cell, resolution=0)
    c, h, w = modelspec.parse_input_shape(cell.input_shape or modelspec.shape_text(
        modelspec.DEFAULT_INPUT_SHAPE))
    if h == w:
        return replace(cell, input_shape=modelspec.shape_text((c, cell.resolution,
                                                               cell.resolution)))
    if cell.shapes == "dynamic":
        raise ProfileError(f"model {cell.model}: dynamic shapes cycle square resolutions; "
                           f"input_shape {c},{h},{w} is not square (valid shapes for it: "
                           f"static, ragged)")
    return replace(cell, input_shape=f"{c},{h},{w}", resolution=h)


#: The precision column of a ceiling row says which arithmetic the op used.
_CEILING_PRECISION = {"matmul-bf16": "amp-bf16", "matmul-tf32": "fp32",
                      "matmul-fp32": "fp32-strict", "copy": "fp32"}


#: What a study may measure (``repro`` is a setting of a model study, not a kind of its own).
_STUDY_KINDS = ("model", "ceiling", *PIPELINE_KINDS)


def _expand(where: str, spec: Mapping[str, Any], defaults: Mapping[str, Any],
            defaults_where: str = "") -> list[Cell]:
    """The study's cells; a bad axis value is blamed on the table it was written in: the
    study's, or ``defaults_where`` (``[defaults]``) for one the study inherits."""
    kind = spec.get("kind", "model")
    if kind not in _STUDY_KINDS:
        raise ProfileError(f"{where}: unknown kind {kind!r}; valid choices: "
                           f"{', '.join(_STUDY_KINDS)}")
    axes: dict[str, list[Any]] = {}
    for key, value in _inputs_over(defaults, spec).items():
        if key in _STUDY_META or key in _SETTINGS:
            continue
        origin = where if key in spec or not defaults_where else defaults_where
        values = value if isinstance(value, list) else [value]
        if not values:
            raise ProfileError(f"{origin}: axis {key} has an empty list")
        if kind == "ceiling" and key == "model":
            for v in values:
                if v not in CEILING_OPS:
                    inherited = f" (from {defaults_where})" if origin != where else ""
                    raise ProfileError(f"{where}: unknown ceiling op {v!r}{inherited}; valid "
                                       f"choices: {', '.join(CEILING_OPS)}")
            axes[key] = values
        else:
            axes[key] = [_check_value(origin, key, v) for v in values]
    variants = spec.get("variants", [{}])
    if not isinstance(variants, list) or not all(isinstance(v, dict) for v in variants):
        raise ProfileError(f"{where}: variants must be a list of inline tables")
    for v in variants:
        for k, val in v.items():
            v[k] = _check_value(f"{where} variants", k, val)
    names = list(axes)
    cells: list[Cell] = []
    for combo in itertools.product(*(axes[n] for n in names)):
        for variant in variants:
            point = {**_inputs_over(dict(zip(names, combo)), variant), "kind": kind}
            if "resolution" not in point and point.get("input_shape"):  # its H, unless swept
                point["resolution"] = modelspec.parse_input_shape(point["input_shape"])[1]
            cells.append(_normalise(Cell(**point)))
    return list(dict.fromkeys(cells))  # dedupe, keep order


def parse_profile(data: Mapping[str, Any], name: str, source: str = "") -> Profile:
    """Turn parsed TOML into a validated Profile, or raise ProfileError."""
    known = {"profile", "defaults", "studies", "adaptive"}
    extra = set(data) - known
    if extra:
        raise ProfileError(f"{name}: unknown top-level key(s) {', '.join(sorted(extra))}; "
                           f"valid keys: {', '.join(sorted(known))}")
    meta = _profile_table(data.get("profile", {}), name)
    defaults = dict(data.get("defaults", {}))
    for key in defaults:
        if key not in _SETTINGS and key not in _AXES:
            raise ProfileError(f"{name} [defaults]: unknown key {key!r}; valid keys: "
                               f"{', '.join([*_AXES, *_SETTINGS])}")
    base = _settings(f"{name} [defaults]",
                     {k: v for k, v in defaults.items() if k in _SETTINGS}, Settings())
    axis_defaults = {k: v for k, v in defaults.items() if k in _AXES}
    studies_raw = data.get("studies")
    if not isinstance(studies_raw, dict) or not studies_raw:
        raise ProfileError(f"{name}: a profile needs at least one [studies.NAME] table")
    studies = []
    for sname, spec in studies_raw.items():
        where = f"{name} [studies.{sname}]"
        if not isinstance(spec, dict):
            raise ProfileError(f"{where}: must be a table")
        for key in spec:
            if key not in _STUDY_META and key not in _SETTINGS and key not in _AXES:
                raise ProfileError(f"{where}: unknown key {key!r}; valid keys: "
                                   f"{', '.join([*sorted(_STUDY_META), *_AXES, *_SETTINGS])}")
        settings = _settings(where, {k: v for k, v in spec.items() if k in _SETTINGS}, base)
        cells = _expand(where, spec, axis_defaults, f"{name} [defaults]")
        studies.append(Study(sname, _description(spec, where), tuple(cells), settings))
    return Profile(name, _description(meta, f"{name} [profile]"), tuple(studies), source, meta,
                   _adaptive(data.get("adaptive"), name))


def _profile_table(raw: Any, name: str) -> dict[str, Any]:
    """The ``[profile]`` table: a description and nothing else (a misspelt key is refused,
    not ignored)."""
    where = f"{name} [profile]"
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: must be a table, e.g. description = \"...\"")
    if unknown := sorted(set(raw) - {"description"}):
        raise ProfileError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                           "valid keys: description")
    return dict(raw)


def _description(table: Mapping[str, Any], where: str) -> str:
    value = table.get("description", "")
    if not isinstance(value, str):
        raise ProfileError(f"{where}: description must be text in quotes, got {value!r}")
    return value


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.toml"))


def _toml() -> Any:
    """The TOML reader, found when a profile is read: Python 3.9 and 3.10 need the ``tomli``
    backport for that, but not to build a report or print the help."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:  # pragma: no cover - Python 3.9/3.10
        import tomli
    except ImportError:  # pragma: no cover
        raise ProfileError("Python < 3.11 needs the 'tomli' package to read profiles "
                           "(pip install tomli)") from None
    return tomli


def load_profile(name_or_path: str) -> Profile:
    """Load a shipped profile by name, or a user's TOML by path."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise ProfileError(f"profile file {name_or_path!r} does not exist")
        name = path.stem
    else:
        path = PROFILE_DIR / f"{name_or_path}.toml"
        if not path.is_file():
            raise ProfileError(f"unknown profile {name_or_path!r}; valid choices: "
                               f"{', '.join(shipped_profiles())} or a path to a .toml file")
        name = name_or_path
    toml = _toml()
    try:
        data = toml.loads(path.read_text(encoding="utf-8"))
    except (toml.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"profile {path.name} is not valid TOML: {exc}") from None
    return parse_profile(data, name, str(path))


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
