"""A CPU model's initial weights, built once per run and loaded by every later replicate.

Why: on a CPU, initialising a torchvision model's parameters is most of its build (ResNet-50:
0.29 s of random fills against 0.03 s to build it on the meta device, on a 2-core VM), paid
again by every replicate, outside any timed window. It changes nothing measured: every child
is forked from the fork server with the same random-number state (torch's default seed, never
advanced there), so every replicate of a model already starts from the same weights. The
first child to build a model saves them, with the random-number state the build left (the
synthetic inputs are drawn next), and later children load both: the same weights, the same
inputs, bit for bit, without the fills.

The whole module is saved, not only its state dict: a state dict needs the model built again
(on the meta device) to load into, and that constructor's Python was half the load (ResNet-50:
0.12-0.14 s against 0.08 s for the whole module, on a 2-core VM). Unpickling a module runs
code its file names, so only the files this run's children wrote, in the run's private
scratch folder, are read so. A model that does not pickle is built by every replicate, as
before.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any


def cached_build(torch: Any, name: str, folder: Path | None, build: Any) -> Any:
    """``build()`` (a model on the CPU), or the same model from ``folder``'s copy of it."""
    if folder is None:
        return build()
    path = folder / f"{name}.pt"
    if path.exists():
        loaded = _load(torch, name, path)
        if loaded is not None:
            return loaded
    model = build()
    _save(torch, name, model, path)
    return model


def _load(torch: Any, name: str, path: Path) -> Any | None:
    try:  # a file this run wrote (the module's docstring): not a foreign checkpoint
        saved = torch.load(path, weights_only=False)
        model = saved["model"]
        if saved.get("name") != name or not isinstance(model, torch.nn.Module):
            return None
    except Exception:  # a torn or foreign file: build as before
        return None
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        return None
    torch.set_rng_state(saved["rng"])
    return model


def _save(torch: Any, name: str, model: Any, path: Path) -> None:
    """Best effort: a folder that cannot take the file, or a model that does not pickle, only
    costs later replicates a build."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(Exception):
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"name": name, "model": model, "rng": torch.get_rng_state()}, tmp)
        os.replace(tmp, path)
    with contextlib.suppress(OSError):
        tmp.unlink()
