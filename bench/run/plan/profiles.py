"""Profiles: the TOML a run declares, read, checked and expanded into the matrix's cells.

Why a module of its own: the matrix (``bench.run.plan.matrix``) is what a run measures, and
the child, the store and the estimate share its types; reading a profile is only the start
of a run (and of advise and feed, which build theirs as data). It is all refusals: a profile
that cannot be run is refused here, before any process starts, in one line that names the
valid choices.

A study is a sub-matrix: list values are a Cartesian product, scalar values are fixed,
and ``variants`` is a list of inline tables that move together (for example
``{precision = "amp-bf16", memory_format = "channels_last"}``), which a plain product cannot
express. Each cell is normalised as it is made: axes that do not apply to it collapse, so
the same measurement is never declared twice under two ids.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from bench import intervals
from bench.intervals import Adaptive
from bench.run.plan import cpuinfo, limits, modelspec, pipelines
from bench.run.plan.matrix import PACE_WINDOW_S, Cell, Profile, ProfileError, Settings, Study
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.schema import AXIS_CHOICES, CEILING_OPS, KERNEL_CACHES, USER_MODEL_AXES

#: The shipped profiles sit at the package root (``bench/profiles``), where packaging finds them.
PROFILE_DIR = Path(__file__).resolve().parents[2] / "profiles"


#: The keys of a profile's ``[adaptive]`` table (δ is the site's, not a profile's).
ADAPTIVE_KEYS = ("looks", "step", "max_width")


def _numbers(raw: Any, name: str, table: str, keys: tuple[str, ...], example: str
             ) -> dict[str, Any] | None:
    """A profile's table of numbers (``[adaptive]``, ``[pace]``), each key known and within
    its ``limits`` (``<table>.<key>``); None where there is none."""
    where = f"{name} [{table}]"
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: must be a table, e.g. {example}")
    for key, value in raw.items():
        if key not in keys:
            raise ProfileError(f"{where}: unknown key {key!r}; valid keys: {', '.join(keys)}")
        bad = limits.problem(f"{table}.{key}", value)
        if bad:
            raise ProfileError(f"{where}: {bad}")
    return raw


def _adaptive(raw: Any, name: str) -> Adaptive | None:
    """A profile's ``[adaptive]`` table (its keys default to ``bench.intervals``'); None where
    there is none, or it asks for one look (the planned replicates alone)."""
    raw = _numbers(raw, name, "adaptive", ADAPTIVE_KEYS, "looks = 3")
    if raw is None:
        return None
    rule = Adaptive(int(raw.get("looks", intervals.ADAPTIVE_LOOKS)),
                    int(raw.get("step", intervals.ADAPTIVE_STEP)),
                    float(raw.get("max_width", intervals.ADAPTIVE_MAX_WIDTH)))
    return rule if rule.looks > 1 else None


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


#: The keys of a profile's ``[pace]`` table.
PACE_KEYS = ("window_s",)


def _pace_window(raw: Any, name: str) -> float:
    """A profile's ``[pace]`` table: the CPU pace probe's steady window (``window_s``), or the
    default where there is none."""
    raw = _numbers(raw, name, "pace", PACE_KEYS, "window_s = 0.3")
    return PACE_WINDOW_S if raw is None else float(raw.get("window_s", PACE_WINDOW_S))


def parse_profile(data: Mapping[str, Any], name: str, source: str = "") -> Profile:
    """Turn parsed TOML into a validated Profile, or raise ProfileError."""
    known = {"profile", "defaults", "studies", "adaptive", "pace"}
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
                   _adaptive(data.get("adaptive"), name), _pace_window(data.get("pace"), name))


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
