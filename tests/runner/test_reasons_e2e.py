"""A command that measured nothing says why, in its last lines: ``bench run`` with a fault
injected into one cell (``TORCH_KNOBS_FAULT``, which the worker honours), and ``bench advise``
of a model whose step refuses the batch asked for. The real CLI, fork server, worker and torch.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Cli, read_csv

pytestmark = pytest.mark.e2e

PICKY = '''
import torch
from torch import nn


class Picky(nn.Module):
    """Takes a batch of 2 (the probe's), refuses any other."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] != 2:
            raise ValueError(f"this model takes batches of 2 samples, not {x.shape[0]}")
        return self.conv(x).mean(dim=(2, 3))


def build() -> nn.Module:
    return Picky()
'''


def test_a_run_ends_with_why_its_cells_were_not_measured(
        tmp_path: Path, tiny_profile: Callable[..., Path], bench_cli: Cli,
        monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    profile = tiny_profile(replicates=2, extra="batch_size = [1, 2]\n")
    monkeypatch.setenv("TORCH_KNOBS_FAULT", "oom@ b2 ")
    proc = bench_cli("run", "--profile", str(profile), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out / "results.csv")
    (failed,) = {r["cell_id"] for r in rows if r["status"] == "oom"}
    head, line = proc.stderr.splitlines()[-2:]
    assert head == "not measured: 1 of 2 cells (no replicate ended ok), for 1 reason:"
    log = out / "logs" / f"model-{failed}-r0.log"
    assert log.is_file()
    assert line.startswith("  out of memory: 1 cell, 2 replicates, e.g. tiny: "
                           "mobilenet_v3_small cpu infer b2 "), line
    assert line.endswith(f' #r0: "OutOfMemoryError: CUDA out of memory. Tried to allocate '
                         f'2.00 GiB (injected fault)" (log: {log}); to do: lower batch_size (or '
                         f'resolution) for that study in the profile, or measure it on a '
                         f'device with more memory'), line


def test_advise_that_judged_nothing_ends_with_why(tmp_path: Path, bench_cli: Cli) -> None:
    (tmp_path / "picky.py").write_text(PICKY, encoding="utf-8")
    out = tmp_path / "run"
    proc = bench_cli("advise", f"{tmp_path / 'picky.py'}:build", "--device", "cpu", "--mode",
                     "infer", "--batch-size", "4", "--input-shape", "3,32,32", "--knobs",
                     "channels_last", "--budget", "60", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.splitlines()
    assert err[-3] == (f"error: no replicate of the baseline ran ok, so no knob could be "
                       f"judged (results in {out})")
    assert err[-2] == "not measured: 2 of 2 cells (no replicate ended ok), for 1 reason:"
    n = len(read_csv(out / "results.csv"))
    assert err[-1].startswith(f"  an exception: 2 cells, {n} replicates, e.g. advise: "), err[-1]
    assert (' #r0: "ValueError: this model takes batches of 2 samples, not 4" (log: '
            f'{out / "logs"}/model-') in err[-1]
    assert err[-1].endswith("; to do: the model's step raised this (for your own model, its "
                            "code, or --input-shape, --inputs or --loss); the log holds the "
                            "child's output; run advise again once it is fixed"), err[-1]
