"""The paired numerics check: what a cell's precision, layout or compile does to its outputs.

Speed alone does not judge bf16 autocast, TF32, channels_last or torch.compile: each may
change the numbers. So a study that asks for it (``numerics = true``) compares, in the same
child and after its timed windows, the cell's outputs with a strict reference's, from the same
weights on the same inputs: a fixed, seeded batch of synthetic inputs (made here, never
downloaded), fed in chunks of about the cell's own batch in pixels (an eager CPU cell's: 64
or more inputs at 32 px, a few MiB), so the memory stays near the cell's; how many, and at what
resolution, is ``bench.run.plan.checksize``'s rule.
The reference is the same model in float64 on the CPU where that is affordable
(``FP64_MAX_FLOPS``), otherwise fp32 with every TF32 switch off, eager and NCHW on the cell's
device. A training cell also takes ``TRAIN_STEPS`` optimizer steps at a real learning rate
from the same state as the reference (the timed steps run at learning rate 0), and its loss
and parameters are compared after them. A reference an earlier check of the run computed
from the same weights, inputs and settings is loaded instead (``numref``).

An output that is not finite (an fp16 overflow) is counted as the largest finite value of its
dtype (NaN as 0) and said in the notes: its error is then a lower bound, never an invented
agreement. Torch and the standard library only.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.run.child import factory, flags, numref
from bench.run.child.workloads import Workload
from bench.run.plan import modelspec
from bench.run.plan.checksize import TRAIN_STEPS, CheckSize, check_size
from bench.run.plan.matrix import Cell
from bench.run.protocol import Metrics
from bench.schema import NUM_REFERENCES

SEED = 1234
#: The training comparison's learning rate (SGD, momentum 0.9).
TRAIN_LR = 0.01
#: The reference runs in float64 on the CPU where its forward work (the batch, and the
#: training steps) is at most this many FLOPs, about a second on a 2-core CPU; fp32-strict
#: on the cell's device otherwise, or where the FLOPs are not counted.
FP64_MAX_FLOPS = 2e9
FP64_CPU, FP32_STRICT = NUM_REFERENCES


@dataclass
class CheckPlan:
    """How one cell is checked: its chunks (CPU copies), their size, the training steps'
    inputs (each a chunk's first ``size.step_inputs``), and the reference."""

    chunks: list[factory.Batch]
    size: CheckSize
    reference: str
    notes: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> int:
        return sum(int(c[0].shape[0]) for c in self.chunks)

    @property
    def steps(self) -> list[factory.Batch]:
        n = self.size.step_inputs
        return [tuple(t[:n] for t in c) for c in self.chunks]


def size(cell: Cell, wl: Workload, device_type: str, flops_per_sample: float | None
         ) -> CheckSize:
    """The fixed batch of this cell (``checksize.check_size``): an eager torchvision cell on
    a CPU small, a compiled one or a user's model at its own shape, on a CPU as many of its
    chunks as the work allows."""
    b, r = wl.schedule[0]
    free = cell.compile == "off" and not modelspec.is_user_model(cell.model)
    forward = flops_per_sample / (3.0 if cell.mode == "train" else 1.0) \
        if flops_per_sample else None
    return check_size(b, r, cpu=device_type == "cpu", free_shape=free, forward_flops=forward)


def make_chunks(torch: Any, wl: Workload, size: CheckSize) -> list[factory.Batch]:
    """``size.chunks`` chunks of ``size.chunk`` seeded inputs, on the CPU."""
    out = []
    for i in range(size.chunks):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED + i)
            if wl.user_batch is not None:
                made = wl.user_batch(size.chunk, size.resolution)
            else:
                made = (torch.randn(size.chunk, 3, size.resolution, size.resolution),)
        out.append(tuple(t.detach().to("cpu") for t in made))
    return out


def reference_kind(cell: Cell, flops_per_sample: float | None, size: CheckSize, r: int) -> str:
    """``fp64-cpu`` where the reference's work is within ``FP64_MAX_FLOPS``, else strict
    (``r``: the cell's own resolution, at which ``flops_per_sample`` was counted)."""
    if not flops_per_sample:
        return FP32_STRICT
    train = cell.mode == "train"
    forward = flops_per_sample / (3.0 if train else 1.0)
    if r and size.resolution and not modelspec.is_user_model(cell.model):
        forward *= (size.resolution / r) ** 2
    samples = size.inputs + (3 * (TRAIN_STEPS + 1) * size.step_inputs if train else 0)
    return FP64_CPU if forward * samples <= FP64_MAX_FLOPS else FP32_STRICT


def _to(torch: Any, batch: factory.Batch, device: Any, dtype: Any = None,
        channels_last: bool = False) -> factory.Batch:
    """A chunk on ``device``, its floating tensors in ``dtype`` where given, in the layout."""
    out = []
    for t in batch:
        t = t.to(device)
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        out.append(t)
    return tuple(out)


@dataclass
class Side:
    """One side of the comparison: how it calls the model, where its inputs go."""

    model: Any
    call: Callable[..., Any]
    autocast: Callable[[], Any]
    device: Any
    dtype: Any = None
    channels_last: bool = False
    scaler: Any = None

    def batch(self, torch: Any, chunk: factory.Batch) -> factory.Batch:
        return _to(torch, chunk, self.device, self.dtype, self.channels_last)

    def forward(self, torch: Any, chunk: factory.Batch) -> Any:
        with self.autocast():
            return factory.logits(self.call(*self.batch(torch, chunk)))


def cell_side(torch: Any, cell: Cell, wl: Workload) -> Side:
    """The cell as its step runs it."""
    assert wl.call is not None and wl.autocast is not None
    device = next(iter(wl.model.parameters())).device
    side = Side(wl.model, wl.call, wl.autocast, device,
                channels_last=cell.memory_format == "channels_last")
    if cell.precision == "amp-fp16" and cell.mode == "train":
        side.scaler = torch.amp.GradScaler(device.type)
    return side


def sides(torch: Any, cell: Cell, wl: Workload, reference: str) -> tuple[Side, Side]:
    """The cell as its step runs it, and the reference: a copy of the same weights, eager,
    NCHW, fp32 on the cell's device or float64 on the CPU."""
    mine = cell_side(torch, cell, wl)
    ref = copy.deepcopy(wl.model).to(memory_format=torch.contiguous_format)
    if reference == FP64_CPU:
        ref, ref_device, ref_dtype = ref.to("cpu", torch.float64), torch.device("cpu"), \
            torch.float64
    else:
        ref, ref_device, ref_dtype = ref.float(), mine.device, torch.float32
    return mine, Side(ref, ref, contextlib.nullcontext, ref_device, ref_dtype)


def finite(torch: Any, t: Any, what: str, notes: list[str]) -> Any:
    """``t`` as float64 on the CPU; a value that is not finite counts as its dtype's largest
    finite one (NaN as 0), said in ``notes``."""
    bad = int((~torch.isfinite(t)).sum()) if t.is_floating_point() else 0
    out = t.detach().to("cpu", torch.float64)
    if bad:
        big = float(torch.finfo(t.dtype).max)
        notes.append(f"numerics: {bad} of {t.numel()} {what} not finite, counted as "
                     f"±{big:.4g} (NaN as 0): the errors are lower bounds")
        out = torch.nan_to_num(out, nan=0.0, posinf=big, neginf=-big)
    return out


def compare(torch: Any, y: Any, ref: Any) -> dict[str, float | None]:
    """Norm-wise relative error, max absolute error, cosine and top-1 agreement of two
    float64 output stacks (``[N, classes]``; top-1 only where there are classes)."""
    diff = y - ref
    ref_norm, y_norm = float(ref.norm()), float(y.norm())
    max_abs = float(diff.abs().max()) if diff.numel() else 0.0
    err = float(diff.norm())
    if max_abs == 0.0:  # the same numbers: exactly, not 1 - round-off
        rel, cosine = 0.0, 1.0
    else:
        rel = err / ref_norm if ref_norm > 0 else math.inf
        dot = float((y.flatten() * ref.flatten()).sum())
        cosine = max(-1.0, min(1.0, dot / (y_norm * ref_norm))) if y_norm * ref_norm > 0 \
            else 0.0
    top1 = None
    if ref.dim() == 2 and ref.shape[1] > 1:
        top1 = float((y.argmax(dim=1) == ref.argmax(dim=1)).double().mean())
    return {"num_rel_err": rel if math.isfinite(rel) else None, "num_max_abs_err": max_abs,
            "num_cosine": cosine, "num_top1_agree": top1}


@contextlib.contextmanager
def _no_dropout(model: Any) -> Iterator[None]:
    """Dropout off while a training model is compared: its random masks would differ between
    the two sides and read as drift."""
    drops: list[Any] = [m for m in model.modules() if isinstance(m, _dropout_types())]
    was = [m.training for m in drops]
    for m in drops:
        m.train(False)
    try:
        yield
    finally:
        for m, on in zip(drops, was):
            m.train(on)


def _dropout_types() -> tuple[type, ...]:
    import torch

    nn = torch.nn
    return (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout)


def outputs(torch: Any, side: Side, chunks: list[factory.Batch], train: bool) -> Any:
    """The side's outputs over every chunk, stacked (no gradients kept; a training cell's
    forward as its step runs it, with grad mode on, so a compiled one meets no new graph)."""
    got = []
    with contextlib.nullcontext() if train else torch.no_grad():
        for chunk in chunks:
            got.append(side.forward(torch, chunk).detach())
    return torch.cat([g.reshape(g.shape[0], -1) if g.dim() != 1 else g for g in got])


def loss_of(torch: Any, wl: Workload, raw: Any, batch: factory.Batch, labels: Any) -> Any:
    """The user's loss where the model names one; else cross-entropy against seeded labels
    for 2-D logits, or the output's mean."""
    if wl.user_loss is not None:
        return wl.user_loss(raw, batch)
    out = factory.logits(raw)
    if out.dim() != 2 or labels is None:
        return out.float().mean() if out.dtype != torch.float64 else out.mean()
    out = out if out.dtype == torch.float64 else out.float()
    return torch.nn.functional.cross_entropy(out, labels.to(out.device))


def train_steps(torch: Any, wl: Workload, side: Side, chunks: list[factory.Batch],
                labels: list[Any]) -> float:
    """``TRAIN_STEPS`` SGD steps at ``TRAIN_LR`` over the steps' chunks (cycled), then the
    loss on the first; the loss as a float (possibly not finite)."""
    opt = torch.optim.SGD(side.model.parameters(), lr=TRAIN_LR, momentum=0.9)
    for i in range(TRAIN_STEPS):
        chunk, y = chunks[i % len(chunks)], labels[i % len(chunks)]
        batch = side.batch(torch, chunk)
        opt.zero_grad()
        with side.autocast():
            loss = loss_of(torch, wl, side.call(*batch), batch, y)
        if side.scaler is not None:
            side.scaler.scale(loss).backward()
            side.scaler.step(opt)
            side.scaler.update()
        else:
            loss.backward()
            opt.step()
    batch = side.batch(torch, chunks[0])
    with side.autocast():
        return float(loss_of(torch, wl, side.call(*batch), batch, labels[0]).detach())


def drift(torch: Any, cell_params: Iterable[Any], ref_params: Iterable[Any]) -> float | None:
    """|theta - theta_ref| / |theta_ref| over every parameter, in float64."""
    num = den = 0.0
    for p, q in zip(cell_params, ref_params):
        a = torch.nan_to_num(p.detach().to("cpu", torch.float64))
        b = q.detach().to("cpu", torch.float64)
        num += float(((a - b) ** 2).sum())
        den += float((b ** 2).sum())
    return math.sqrt(num / den) if den > 0 else None


def _labels(torch: Any, ref_out: Any, chunks: list[factory.Batch]) -> list[Any]:
    """Seeded class labels per chunk where the outputs are 2-D logits (None otherwise)."""
    if ref_out.dim() != 2 or ref_out.shape[1] < 2:
        return [None] * len(chunks)
    gen = torch.Generator().manual_seed(SEED)
    return [torch.randint(0, ref_out.shape[1], (int(c[0].shape[0]),), generator=gen)
            for c in chunks]


def _training(torch: Any, wl: Workload, mine: Side, ref_side: Side | None, plan: CheckPlan,
              ref_out: Any, m: Metrics, kept: numref.Kept) -> None:
    """The training comparison: the same steps from the same state on both sides; the
    reference's (its loss and parameters after them) from ``kept`` where it holds them, else
    computed into it."""
    steps = plan.steps
    labels = [y if y is None else y[:plan.size.step_inputs]
              for y in _labels(torch, ref_out, plan.chunks)]
    loss = train_steps(torch, wl, mine, steps, labels)
    if kept.loss is None or kept.params is None:
        assert ref_side is not None
        with flags.strict(torch):
            kept.loss = train_steps(torch, wl, ref_side, steps, labels)
        kept.params = [p.detach() for p in ref_side.model.parameters()]
    ref_loss = kept.loss
    m.num_train_steps = TRAIN_STEPS
    m.num_param_drift = drift(torch, mine.model.parameters(), kept.params)
    for name, value in (("num_loss", loss), ("num_ref_loss", ref_loss)):
        if math.isfinite(value) and value >= 0:
            setattr(m, name, value)
        else:
            plan.notes.append(f"numerics: {name} {value:g} left empty (not a finite loss >= 0)")
    if math.isfinite(loss) and math.isfinite(ref_loss) and ref_loss != 0:
        m.num_loss_rel_diff = abs(loss - ref_loss) / abs(ref_loss)
    elif not math.isfinite(loss) and math.isfinite(ref_loss):
        plan.notes.append("numerics: the cell's loss is not finite after the steps")


def prepare(torch: Any, cell: Cell, wl: Workload, flops_per_sample: float | None,
            reference: str | None = None) -> CheckPlan:
    """The fixed batch and the reference for one cell (``reference`` forces one)."""
    device_type = next(iter(wl.model.parameters())).device.type
    fixed = size(cell, wl, device_type, flops_per_sample)
    kind = reference or reference_kind(cell, flops_per_sample, fixed, wl.schedule[0][1])
    return CheckPlan(make_chunks(torch, wl, fixed), fixed, kind)


def check(torch: Any, cell: Cell, wl: Workload, m: Metrics, flops_per_sample: float | None,
          reference: str | None = None, kept_in: Path | None = None) -> list[str]:
    """Run the check, fill ``m``'s ``num_*`` figures, and return the notes it leaves.
    ``kept_in``: the run's folder of references (``numref``), where one computed by an earlier
    check with the same key is loaded instead of computed again, and a new one is left."""
    t0 = time.perf_counter()
    plan = prepare(torch, cell, wl, flops_per_sample, reference)
    train = cell.mode == "train"
    state = copy.deepcopy(wl.model.state_dict()) if train else None
    name = numref.key(torch, cell, plan.reference, plan.size, wl.model) \
        if kept_in is not None and numref.shared(cell) else ""
    kept = numref.load(torch, kept_in, name) if kept_in is not None and name else None
    mine, ref_side = (cell_side(torch, cell, wl), None) if kept is not None else \
        sides(torch, cell, wl, plan.reference)
    with _no_dropout(wl.model), \
            _no_dropout(ref_side.model) if ref_side else contextlib.nullcontext():
        out = finite(torch, outputs(torch, mine, plan.chunks, train), "outputs", plan.notes)
        if kept is None:
            assert ref_side is not None
            kept = numref.Kept(None)
            with flags.strict(torch):
                kept.outputs = finite(torch, outputs(torch, ref_side, plan.chunks, train),
                                      "reference outputs", kept.notes)
        plan.notes += kept.notes
        for figure, value in compare(torch, out, kept.outputs).items():
            setattr(m, figure, value)
        if train:
            wl.model.load_state_dict(state)
            if ref_side is not None:
                ref_side.model.load_state_dict(state)
            _training(torch, wl, mine, ref_side, plan, kept.outputs, m, kept)
    if kept_in is not None and name and ref_side is not None:  # computed here: left for later
        numref.save(torch, kept_in, name, kept)
    m.num_reference, m.num_inputs = plan.reference, plan.inputs
    m.num_time_s = time.perf_counter() - t0
    shown = f"{plan.size.resolution} px" if not modelspec.is_user_model(cell.model) \
        else "its shape"
    steps = f", {TRAIN_STEPS} steps of {plan.size.step_inputs}" if train else ""
    return [f"numerics: {plan.inputs} inputs at {shown} in chunks of {plan.size.chunk}{steps} "
            f"against {plan.reference}, {m.num_time_s:.2f} s", *plan.notes]
