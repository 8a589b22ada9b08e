"""What one iteration does: build the model and synthetic inputs, and the step function.

Inputs are synthetic and made on the device, so data loading (decoding, augmentation,
host-to-device copies) is deliberately out of scope: the question is what the backend
settings do to the model step itself. torchvision models are built with ``weights=None`` so
nothing is downloaded; a user's model comes from its factory (``bench.run.child.factory``),
with its own inputs and loss where it names them. Both take the same step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.child import compiling, factory, initcache
from bench.run.child.flags import autocast_dtype
from bench.run.plan import modelspec
from bench.run.plan.matrix import Cell

Step = Callable[[int], Any]  # iteration index -> output (the step's last tensor)
Shape = tuple[int, int]  # (batch, resolution): one entry of a cell's schedule
#: (raw model output, the batch it was given, its shape) -> the training loss
StepLoss = Callable[[Any, factory.Batch, Shape], Any]

#: What a step does, versioned (``bench.schema.WORKLOAD_VERSION``, where the report reads it too).
WORKLOAD_VERSION = schema.WORKLOAD_VERSION

#: The training step's learning rate. Zero on purpose: the optimizer still does all of its
#: work (momentum buffers, the parameter update kernel), but the weights stay where they
#: started. With one fixed synthetic batch, any real learning rate lets the model memorise it
#: within a few steps; the loss falls to 0, the gradients underflow to subnormal floats, and
#: some CPUs handle those many times slower. On the H200's Intel host, ResNet-50 batch-1
#: training steps grew from 0.1 s to 1.7 s by the fourth step that way: an artefact of the
#: synthetic data, not of any setting under test.
TRAIN_LR = 0.0


def available_models() -> list[str]:
    """Classification models the installed torchvision can build."""
    import torchvision

    return sorted(torchvision.models.list_models(module=torchvision.models))


@dataclass
class Workload:
    """A built model with its inputs: ``step(i)`` runs iteration i of the shape schedule."""

    step: Step
    schedule: list[tuple[int, int]]
    model: Any
    outputs: Callable[[], dict[str, Any]]  # tensors compared by the reproducibility check
    inputs: dict[Shape, factory.Batch] | None = None  # the batch of each distinct shape
    #: What the numerics check (``numerics``) calls the way the step does: the model as the
    #: step calls it (compiled where the cell compiles), the cell's autocast, and a user
    #: model's own loss and input maker (None for a torchvision model).
    call: Callable[..., Any] | None = None
    autocast: Callable[[], Any] | None = None
    user_loss: Callable[[Any, factory.Batch], Any] | None = None
    user_batch: Callable[[int, int], factory.Batch] | None = None


def build_model(torch: Any, cell: Cell, init_dir: Path | None = None) -> Any:
    """A torchvision model with fresh weights on the cell's device; on a CPU, from the run's
    copy of them in ``init_dir`` where an earlier replicate left one (``initcache``)."""
    import torchvision

    device = torch.device(cell.device)

    def fresh() -> Any:
        with device:  # initialise parameters on the device: faster than a CPU build + copy
            return torchvision.models.get_model(cell.model, weights=None)

    model = initcache.cached_build(torch, cell.model, init_dir, fresh) \
        if cell.device == "cpu" else fresh()
    model = model.to(device)
    if cell.memory_format == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    return model


def make_inputs(torch: Any, cell: Cell, schedule: list[tuple[int, int]]) -> dict[tuple[int, int],
                                                                                    Any]:
    """One synthetic batch per distinct shape, made on the device."""
    fmt = torch.channels_last if cell.memory_format == "channels_last" else (
        torch.contiguous_format)
    out = {}
    for b, r in dict.fromkeys(schedule):
        x = torch.randn(b, 3, r, r, device=cell.device).contiguous(memory_format=fmt)
        y = torch.randint(0, 1000, (b,), device=cell.device)
        out[(b, r)] = (x, y)
    return out


def _torchvision_parts(torch: Any, cell: Cell, schedule: list[Shape], model: Any | None,
                       init_dir: Path | None = None
                       ) -> tuple[Any, dict[Shape, factory.Batch], StepLoss]:
    """A torchvision model, one image batch per shape, cross-entropy against random labels."""
    model = model if model is not None else build_model(torch, cell, init_dir)
    made = make_inputs(torch, cell, schedule)
    loss_fn = torch.nn.CrossEntropyLoss()

    def loss(raw: Any, batch: factory.Batch, shape: Shape) -> Any:
        return loss_fn(factory.logits(raw).float(), made[shape][1])

    return model, {shape: (x,) for shape, (x, _) in made.items()}, loss


#: A user model's own loss (None: it names none) and its input maker (batch, resolution).
UserExtras = tuple[Callable[[Any, factory.Batch], Any] | None,
                   Callable[[int, int], factory.Batch]]


def _user_parts(torch: Any, cell: Cell, schedule: list[Shape]
                ) -> tuple[Any, dict[Shape, factory.Batch], StepLoss, UserExtras]:
    """A user's model from its factory, its inputs and its loss (or the default loss). The
    sources must still be the ones the run started with (``cell.model_source``)."""
    make, inputs, loss_fn = factory.callables(cell.model, cell.inputs, cell.loss)
    now = factory.identity(factory.source_files((cell.model, cell.inputs, cell.loss)))
    if cell.model_source and now != cell.model_source:
        raise factory.UserModelError(f"the source of {cell.model} changed since the run started "
                                     f"(model_source {cell.model_source}, now {now})")

    def batch_of(b: int, r: int) -> factory.Batch:
        return factory.make_batch(torch, cell.input_shape, inputs, cell.inputs, b, r,
                                  cell.device)

    batches = {}
    for b, r in dict.fromkeys(schedule):
        batch = batch_of(b, r)
        if cell.memory_format == "channels_last":
            batch = factory.channels_last(torch, batch)
        batches[(b, r)] = batch
    model = factory.build_model(torch, cell.model, make, cell.device)
    if cell.memory_format == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    own = factory.user_loss(torch, loss_fn, cell.loss) if loss_fn else None
    loss = own or factory.default_loss(torch)
    return model, batches, lambda raw, batch, shape: loss(raw, batch), (own, batch_of)


def build(torch: Any, cell: Cell, model: Any | None = None, fail_compile: bool = False,
          init_dir: Path | None = None) -> Workload:
    """Model, inputs and the step for a ``kind=model`` cell.

    Where the cell compiles, the step calls ``torch.compile(model)`` and the workload's
    ``model`` stays the module itself (its parameters, its FLOP count); compilation happens at
    the first call of each shape, in the cold pass. ``fail_compile``: see ``compiling.wrap``;
    a compile that finds no C++ compiler skips the cell (``compiling.guard``).
    """
    schedule = cell.schedule()
    extras: UserExtras | tuple[None, None] = (None, None)
    if modelspec.is_user_model(cell.model):
        model, inputs, loss_of, extras = _user_parts(torch, cell, schedule)
    else:
        model, inputs, loss_of = _torchvision_parts(torch, cell, schedule, model, init_dir)
    dtype = autocast_dtype(torch, cell)
    device_type = torch.device(cell.device).type

    def autocast() -> Any:
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device_type, dtype=dtype)

    last: dict[str, Any] = {}
    if cell.mode == "infer":
        model.eval()
    else:
        model.train()
    call = compiling.wrap(torch, model, cell, fail=fail_compile)
    begin = compiling.step_begin(torch, cell)
    if cell.mode == "infer":

        def step(i: int) -> Any:
            batch = inputs[schedule[i % len(schedule)]]
            begin()
            with torch.no_grad(), autocast():
                out = factory.logits(call(*batch))
            last["output"] = out
            return out

    else:
        opt = torch.optim.SGD(model.parameters(), lr=TRAIN_LR, momentum=0.9)
        scaler = None
        if cell.precision == "amp-fp16":
            scaler = torch.amp.GradScaler(device_type)

        def step(i: int) -> Any:
            shape = schedule[i % len(schedule)]
            batch = inputs[shape]
            begin()
            opt.zero_grad()  # PyTorch's default (set_to_none=True); grads refill in backward
            with autocast():
                raw = call(*batch)
                loss = loss_of(raw, batch, shape)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            last["output"] = factory.logits(raw)
            return loss

    def outputs() -> dict[str, Any]:
        tensors = {"output": last["output"].detach()}
        if cell.mode == "train":
            for name, p in model.named_parameters():
                if p.grad is not None:
                    tensors[f"grad.{name}"] = p.grad.detach()
        return tensors

    return Workload(compiling.guard(cell, step), schedule, model, outputs, inputs, call=call,
                    autocast=autocast, user_loss=extras[0], user_batch=extras[1])


#: A training step is counted as 3x the forward FLOPs (backward ~ 2x forward), the usual
#: convention. torch's FlopCounterMode is not used for the backward pass because it
#: over-counts the backward of grouped convolutions: on torch 2.14 it reports 27x the forward
#: for mobilenet_v3_large (depthwise convs) against 2.97x for resnet50.
TRAIN_FLOPS_FACTOR = 3.0


def count_flops(torch: Any, cell: Cell, wl: Workload) -> tuple[float | None, str]:
    """FLOPs per sample of one step, and a note saying why where there is no count.

    A torchvision model is counted on the meta device (``flops_per_sample``); a user's model
    with its own built model and inputs after the timed iterations (a factory need not work
    on meta), forward only, times ``TRAIN_FLOPS_FACTOR`` for a training step.
    """
    if not modelspec.is_user_model(cell.model):
        try:
            return flops_per_sample(torch, cell), ""
        except Exception as exc:  # a count we cannot make is left empty, not invented
            return None, f"flop count failed: {type(exc).__name__}: {exc}"
    batches = [wl.inputs[shape] for shape in dict.fromkeys(wl.schedule)] if wl.inputs else []
    forward, note = factory.count_forward(torch, wl.model, batches)
    factor = TRAIN_FLOPS_FACTOR if cell.mode == "train" else 1.0
    return (None if forward is None else factor * forward), note


def flops_per_sample(torch: Any, cell: Cell) -> float | None:
    """FLOPs per sample of one step, counted on the meta device (no real kernels, no cuDNN).

    Counting on ``meta`` keeps the count from touching the measured process's algorithm
    cache or memory. The forward pass is counted with ``FlopCounterMode``; a training step
    is ``TRAIN_FLOPS_FACTOR`` times that (the optimizer's elementwise work is not counted, as
    usual). For a schedule with several shapes, the count is per sample averaged over one
    cycle, weighted by batch.
    """
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        model = torchvision.models.get_model(cell.model, weights=None)
    model.eval()
    total = 0.0
    samples = 0
    for b, r in cell.schedule():
        x = torch.randn(b, 3, r, r, device="meta")
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            model(x)
        total += counter.get_total_flops()
        samples += b
    if not samples:
        return None
    factor = TRAIN_FLOPS_FACTOR if cell.mode == "train" else 1.0
    return factor * total / samples


def ceiling(torch: Any, cell: Cell) -> tuple[Step, float, str]:
    """A machine-ceiling op: a large matmul (flop) or a large device copy (byte)."""
    device = cell.device
    if cell.model == "copy":
        nbytes = cell.resolution * 2**20
        src = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(1)
        dst = torch.empty_like(src)

        def copy_step(i: int) -> Any:
            return dst.copy_(src)

        return copy_step, 2.0 * nbytes, "byte"  # each byte is read once and written once
    n = cell.resolution
    dtype = torch.bfloat16 if cell.model == "matmul-bf16" else torch.float32
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)

    def matmul_step(i: int) -> Any:
        return a @ b

    return matmul_step, 2.0 * n**3, "flop"
