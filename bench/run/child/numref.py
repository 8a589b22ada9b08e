"""The numerics check's reference side, computed once per run for the cells that share it.

Why: a reference is a function of the weights it starts from, the fixed batch and how it runs
(its kind, the check's size, the mode, the thread count), and several cells share all of them:
the cpu profile's 10 checks need 6 references on a 2-core machine (ResNet-50 inference at batch
8 is checked against the same fp32-strict reference by the layout, precision and best studies),
and each costs about as much as its cell's own side. So the first child to compute one keeps it
in the run's scratch folder (beside ``initcache``'s weights) and a later child with the same
key loads it: the same numbers, without the work. The weights are keyed by a SHA-1 of their
values, so a cell whose weights differ computes its own. In training mode a batch-norm layer
normalises with the batch's statistics, so its running statistics (which a training cell's
timed steps move) change nothing the reference computes and are left out of the key. Only
torchvision models on the CPU (``shared``): a user's model may keep state of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.run.plan import modelspec

#: The version of what one reference leaves for a later check (``save``).
VERSION = 1


@dataclass
class Kept:
    """A reference side's results: its outputs over the fixed batch (float64, on the CPU), the
    notes they left, and for a training check its loss and parameters after the steps."""

    outputs: Any
    notes: list[str] = field(default_factory=list)
    loss: float | None = None
    params: list[Any] | None = None


def shared(cell: Any) -> bool:
    """Whether a cell's reference may be shared: a torchvision model on the CPU. On a GPU the
    check is a fraction of a second, and a cell's own cuDNN switches (``benchmark``, which
    picks the algorithms) reach its reference too, so it computes its own."""
    return cell.device == "cpu" and not modelspec.is_user_model(cell.model)


def _digest(torch: Any, model: Any, train: bool) -> str:
    """SHA-1 of the values the reference starts from: every parameter and buffer, in order,
    less the running statistics of a batch-norm layer in training mode (unread there)."""
    sha = hashlib.sha1()
    skipped: set[int] = set()
    if train:
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._NormBase) and m.training:
                skipped.update(id(b) for b in m.buffers(recurse=False))
    tensors = [*model.named_parameters(), *model.named_buffers()]
    for name, t in tensors:
        if id(t) in skipped:
            continue
        t = t.detach().to("cpu").contiguous().reshape(-1)
        sha.update(f"{name}:{t.dtype}:{tuple(t.shape)};".encode())
        sha.update(t.view(torch.uint8).numpy() if t.numel() else b"")
    return sha.hexdigest()


def key(torch: Any, cell: Any, reference: str, size: Any, model: Any) -> str:
    """The file name of one reference: everything it is a function of."""
    what = (VERSION, cell.model, cell.mode, reference, size.chunk, size.resolution, size.chunks,
            size.step_inputs, torch.get_num_threads(), _digest(torch, model, cell.mode == "train"))
    return hashlib.sha1(repr(what).encode()).hexdigest()[:20]


def load(torch: Any, folder: Path, name: str) -> Kept | None:
    """The reference kept under ``name``, or None (none yet, or a torn or foreign file)."""
    path = folder / f"{name}.pt"
    if not path.exists():
        return None
    try:
        saved = torch.load(path, weights_only=True)
        if saved.get("version") != VERSION or saved.get("key") != name:
            return None
        return Kept(saved["outputs"], list(saved["notes"]), saved["loss"], saved["params"])
    except Exception:
        return None


def save(torch: Any, folder: Path, name: str, kept: Kept) -> None:
    """Best effort, atomically: a folder that cannot take it only costs a later check its
    reference."""
    path = folder / f"{name}.pt"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(Exception):
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({"version": VERSION, "key": name, "outputs": kept.outputs,
                    "notes": kept.notes, "loss": kept.loss, "params": kept.params}, tmp)
        os.replace(tmp, path)
    with contextlib.suppress(OSError):
        tmp.unlink()
