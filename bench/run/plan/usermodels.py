"""A profile's user models and the probe: what to ask it, and what its answers change.

The parent never imports a user's code (it may import torch, and the parent never does). It
asks the probe child to import, build and run each user model once (``ModelCheck``) and gets
back its identity or one line saying why it cannot run (``ModelInfo``). From the answers:

- a model that cannot run stops the run before anything is written (``bind`` raises);
- every cell of a user model gets its ``model_source``, so its cell id says which version of
  the code it measured;
- env.json lists each model's source files and their hashes (``identities``), outside the
  fingerprint: the cell ids already keep models apart, and a machine's page should not split
  by model;
- a resumed run refuses a model whose source changed (``check_resume``), as it refuses a
  changed machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.run.plan import modelspec
from bench.run.plan.matrix import Cell, Profile, ProfileError
from bench.run.protocol import ModelCheck, ModelInfo, Probe
from bench.schema import Status

#: The axes of a check, besides its mode and device: which model, fed what, trained how.
Key = tuple[str, str, str, str]  # (model, input_shape, inputs, loss)


def _key(cell: Cell) -> Key:
    return (cell.model, cell.input_shape, cell.inputs, cell.loss)


def _user_cells(cells: Iterable[Cell]) -> list[Cell]:
    return [c for c in cells if c.kind == "model" and modelspec.is_user_model(c.model)]


def _shapes(cell: Cell) -> list[str]:
    """Every input shape the cell's schedule feeds (a square one cycles its resolution)."""
    if not cell.input_shape:
        return [""]
    c, h, w = modelspec.parse_input_shape(cell.input_shape)
    if h != w:
        return [cell.input_shape]
    return list(dict.fromkeys(modelspec.shape_text((c, r, r)) for _, r in cell.schedule()))


def checks(cells: Iterable[Cell]) -> list[ModelCheck]:
    """One check per user model and input shape: a training step where any of its cells
    trains, on CUDA where all of them run there (the probe falls back to the CPU without
    CUDA)."""
    modes: dict[Key, set[str]] = {}
    devices: dict[Key, set[str]] = {}
    for cell in _user_cells(cells):
        for shape in _shapes(cell):
            key = (cell.model, shape, cell.inputs, cell.loss)
            modes.setdefault(key, set()).add(cell.mode)
            devices.setdefault(key, set()).add(cell.device)
    return [ModelCheck(*key, mode="train" if "train" in modes[key] else "infer",
                       device="cuda" if devices[key] == {"cuda"} else "cpu") for key in modes]


def _infos(probe: Probe) -> dict[Key, ModelInfo]:
    return {(i.check.model, i.check.input_shape, i.check.inputs, i.check.loss): i
            for i in probe.user_models}


def bind(profile: Profile, probe: Probe) -> Profile:
    """The profile with each user model's ``model_source`` from the probe; ProfileError with
    one line (``model M: what went wrong``) for the first model that cannot run."""
    infos = _infos(probe)
    for info in infos.values():
        if info.error:
            raise ProfileError(blame(info))
    sources = {(k[0], k[2], k[3]): i.source for k, i in infos.items()}
    studies = []
    for study in profile.studies:
        cells = tuple(replace(c, model_source=sources.get((c.model, c.inputs, c.loss), ""))
                      if modelspec.is_user_model(c.model) and c.kind == "model" else c
                      for c in study.cells)
        studies.append(replace(study, cells=cells))
    return replace(profile, studies=tuple(studies))


def blame(info: ModelInfo) -> str:
    """A failed check as one line that names what failed: ``model M: …``, or the ``inputs``
    or ``loss`` callable where the error is its own (``factory.load`` starts it with it)."""
    c = info.check
    own = tuple(f"{what} {text}: " for what, text in (("inputs", c.inputs), ("loss", c.loss))
                if text)
    return info.error if info.error.startswith(own) else f"model {c.model}: {info.error}"


def being_checked(log: Path, limit: int = 1 << 20) -> str:
    """The user model a probe was checking when it ended, from the lines its child leaves in
    the log around each check (``modelspec.CHECKING`` and ``CHECKED``); empty when it was
    checking none (it ended before the first, or between two)."""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    for line in reversed(text.splitlines()):
        if line.startswith(modelspec.CHECKED):
            return ""
        if line.startswith(modelspec.CHECKING):
            return line[len(modelspec.CHECKING):].strip()
    return ""


def probe_death(log: Path, status: str, reason: str) -> str:
    """Why a probe that ended without its answer did, in one line naming the user model it
    was checking (``the probe died while checking model M: exit code 1 without a result``);
    empty when it was checking none, so that the runner's own line stands."""
    model = being_checked(log)
    if not model:
        return ""
    how = {Status.CRASH.value: "died", Status.TIMEOUT.value: "ran out of time"}.get(
        status, f"failed ({status})")
    reason = reason.removesuffix(f"; last output: {modelspec.CHECKING}{model}")
    return f"the probe {how} while checking model {model}: {reason}"


def identities(probe: Probe) -> list[dict[str, Any]]:
    """For env.json: each user model (with its inputs and loss) once, its ``model_source``
    and the source files it was hashed from."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for i in probe.user_models:
        c = i.check
        out.setdefault((c.model, c.inputs, c.loss), {
            "model": c.model, "inputs": c.inputs, "loss": c.loss, "model_source": i.source,
            "files": dict(i.files)})
    return list(out.values())


def check_resume(old_env: Mapping[str, Any] | None, env: Mapping[str, Any], where: str) -> None:
    """A resumed run measures the same code: ProfileError when a user model's source changed
    since the run folder was started."""
    def sources(e: Mapping[str, Any] | None) -> dict[tuple[str, str, str], str]:
        return {(m["model"], m.get("inputs", ""), m.get("loss", "")): m.get("model_source", "")
                for m in (e or {}).get("user_models", [])}

    before, now = sources(old_env), sources(env)
    for key, source in now.items():
        if key in before and before[key] != source:
            raise ProfileError(f"the source of {key[0]} changed since {where} was started "
                               f"(model_source {before[key]}, now {source}); results are never "
                               f"mixed: use a new --out")


def flops_for(probe: Probe, cell: Cell) -> float | None:
    """The probe's forward FLOPs per sample for a user model's cell (None: not a user model,
    or not counted), so that estimates rest on the model rather than on a guess."""
    info = _infos(probe).get(_key(cell))
    return info.flops_per_sample if info is not None else None
