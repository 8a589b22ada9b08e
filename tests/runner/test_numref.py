"""The numerics check's reference computed once per run (``bench.run.child.numref``): a check
that loads it reads the same figures as one that computes it; small models, seconds."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.run.child import flags, numerics, numref, workloads
from bench.run.plan.matrix import Cell
from bench.run.protocol import Metrics

torch = pytest.importorskip("torch")

BASE = dict(model="mobilenet_v3_small", batch_size=4, resolution=32)


@pytest.fixture(autouse=True)
def _threads_restored() -> Iterator[None]:
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _check(cell: Cell, kept_in: Path | None, steps: int = 1) -> tuple[dict[str, Any], list[str]]:
    """The cell's ``num_*`` figures (its seconds apart) and notes, after ``steps`` timed steps."""
    flags.apply(torch, cell)
    torch.manual_seed(0)
    wl = workloads.build(torch, cell)
    for i in range(steps):
        wl.step(i)
    m = Metrics()
    notes = numerics.check(torch, cell, wl, m, workloads.count_flops(torch, cell, wl)[0],
                           numerics.FP32_STRICT, kept_in=kept_in)
    figures = {k: v for k, v in dataclasses.asdict(m).items()
               if k.startswith("num_") and k != "num_time_s"}
    return figures, [n.rsplit(",", 1)[0] for n in notes]


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_a_shared_reference_reads_the_same_figures_as_one_computed(mode: str,
                                                                   tmp_path: Path) -> None:
    first = Cell(**BASE, mode=mode)  # type: ignore[arg-type]
    # another precision and layout, and (training) more timed steps: batch-norm statistics
    # that moved further, which the training reference never reads
    second = Cell(**BASE, mode=mode, precision="amp-bf16",  # type: ignore[arg-type]
                  memory_format="channels_last")
    kept = tmp_path / "numref"
    assert _check(first, kept) == _check(first, None)
    assert len(list(kept.glob("*.pt"))) == 1
    loaded = _check(second, kept, steps=3)
    assert loaded == _check(second, None, steps=3)
    assert len(list(kept.glob("*.pt"))) == 1, "the same reference: loaded, not computed"
    assert loaded[0]["num_rel_err"] > 0


def test_other_weights_or_threads_compute_their_own(tmp_path: Path) -> None:
    cell = Cell(**BASE)  # type: ignore[arg-type]
    kept = tmp_path / "numref"
    _check(cell, kept)
    _check(dataclasses.replace(cell, cpu_threads=1), kept)
    assert len(list(kept.glob("*.pt"))) == 2
    _check(dataclasses.replace(cell, mode="train"), kept)  # its weights run in training mode
    assert len(list(kept.glob("*.pt"))) == 3
    (kept / "garbage.pt").write_bytes(b"not a file torch wrote")
    for torn in kept.glob("*.pt"):
        torn.write_bytes(b"torn")
    assert _check(cell, kept) == _check(cell, None), "a torn file: computed again"


def test_only_a_torchvision_model_on_the_cpu_shares_its_reference() -> None:
    assert numref.shared(Cell(**BASE))  # type: ignore[arg-type]
    assert not numref.shared(Cell(**BASE, device="cuda"))  # type: ignore[arg-type]
    assert not numref.shared(Cell(model="m.py:build"))
