"""How large a cell's numerics check is: one rule, read by the child that runs the check
(``bench.run.child.numerics``) and by the plan that estimates it (``estimate.numerics_s``).

The check compares a fixed, seeded batch of ``NUM_INPUTS`` inputs with a strict reference's.
On a CPU it must stay a small share of the run (``nox -s speed``: timed work >= 90% of the
wall time of the cpu profile with the numerics on), so there it is sized by its work:

- an eager torchvision cell is checked at ``CPU_RESOLUTION`` (the convolutions' reduction
  lengths, where rounding accumulates, do not depend on it), in chunks of as many pixels as
  its own batch but at least ``CPU_MIN_CHUNK`` inputs, and its training steps take the first
  ``CPU_STEP_INPUTS`` inputs of a chunk (both sides the same ones: the comparison needs the
  same steps, not a large batch);
- a cell that must keep its own shape (a compiled one would recompile at another; a user's
  model has its own inputs) is checked on as many of its chunks as ``CPU_MAX_FLOPS`` of
  forward work allows, never fewer than ``MIN_INPUTS`` inputs. The row records how many
  (``num_inputs``).

On a GPU the check is a fraction of a second at full size and is left whole. Standard
library only: the plan imports nothing of the child.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The fixed batch: at most this many inputs, a whole number of chunks (a compiled cell
#: meets no new shape).
NUM_INPUTS = 256
#: On a CPU an eager torchvision cell is checked at this resolution (or its own, where
#: lower): a 2-core CPU runs 256 ResNet-50 images at 224 px in about 17 s, over ten times a
#: replicate's timed work.
CPU_RESOLUTION = 32
#: The fewest inputs of a chunk checked at ``CPU_RESOLUTION``: a small batch's chunks are
#: small and many, and each costs a Python call on each side (a smoke cell at batch 2 spent
#: 2-3 s on 32 chunks of 8); 64 inputs at 32 px hold as many pixels as one at 256 px.
CPU_MIN_CHUNK = 64
#: Inputs per training step of an eager CPU cell checked at ``CPU_RESOLUTION``: 5 steps of
#: ResNet-50 on 256 inputs took 17 s of a 415 s cpu-profile run, on 32 about a tenth of it.
CPU_STEP_INPUTS = 32
#: On a CPU, the forward work of the fixed batch at a cell's own shape: at most this many
#: FLOPs (about a second of a 2-core CPU, each side). 256 ResNet-18 images at 224 px under
#: torch.compile took 11 s of the same run; within this, 48 of them.
CPU_MAX_FLOPS = 1e11
#: The fewest inputs a check compares: top-1 agreement in steps of about 3%.
MIN_INPUTS = 32
#: Optimizer steps of the training comparison.
TRAIN_STEPS = 5


@dataclass(frozen=True)
class CheckSize:
    """The fixed batch of one cell: ``chunks`` chunks of ``chunk`` inputs at ``resolution``,
    and the inputs of each training step (a chunk's first ``step_inputs``)."""

    chunk: int
    resolution: int
    chunks: int
    step_inputs: int

    @property
    def inputs(self) -> int:
        return self.chunk * self.chunks


def check_size(batch: int, resolution: int, *, cpu: bool, free_shape: bool,
               forward_flops: float | None = None) -> CheckSize:
    """The check of a cell whose first shape is (``batch``, ``resolution``). ``free_shape``:
    an eager torchvision cell, whose check may run at another shape; ``forward_flops``: one
    input's forward FLOPs at its own resolution, where counted."""
    if cpu and free_shape:
        low = min(resolution, CPU_RESOLUTION)
        chunk = min(NUM_INPUTS, max(batch * max(resolution // low, 1) ** 2, CPU_MIN_CHUNK))
        return CheckSize(chunk, low, _ceil(NUM_INPUTS, chunk), min(chunk, CPU_STEP_INPUTS))
    chunk = max(batch, 1)
    chunks = _ceil(NUM_INPUTS, chunk)
    if cpu and forward_flops:
        affordable = int(CPU_MAX_FLOPS // (forward_flops * chunk))
        chunks = min(chunks, max(affordable, _ceil(MIN_INPUTS, chunk), 1))
    return CheckSize(chunk, resolution, chunks, chunk)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)
