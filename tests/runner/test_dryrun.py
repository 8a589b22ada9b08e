"""``bench run --dry-run`` and the probe, as the plan and the machine define them: a cell is
skipped for what its device is, never for a word in its name, and the probe is no runner."""

from __future__ import annotations

import io

from bench.run.plan.dryrun import print_dry_run
from bench.run.plan.jobs import NO_CUDA, plan, skip_reason
from bench.run.plan.matrix import Cell, Profile, Settings, Study
from bench.run.protocol import Probe

from .fakes import ENV
from .test_walls import imported_by


def _profile(*cells: Cell) -> Profile:
    return Profile("t", "", [Study("s", "", list(cells), Settings(replicates=1))])


def test_a_cell_is_skipped_for_its_device_not_for_a_word_in_its_name() -> None:
    named = Cell(model="cuda")  # a CPU cell whose name holds the word "cuda"
    gpu = Cell(device="cuda")
    no_cuda = Probe(dict(ENV), ["resnet18", "cuda"], False)
    assert " cuda " in f" {named.name} "
    assert skip_reason(named, no_cuda) == "" and skip_reason(gpu, no_cuda) == NO_CUDA
    assert skip_reason(gpu, Probe(dict(ENV), ["resnet18"], True)) == ""
    out = io.StringIO()
    print_dry_run(plan(_profile(named, gpu)), no_cuda, out)
    listed = [line for line in out.getvalue().splitlines() if line.startswith("s ")]
    assert len(listed) == 2
    assert not listed[0].endswith("[skipped: no-cuda]"), listed[0]
    assert listed[1].endswith("[skipped: no-cuda]"), listed[1]


def test_the_probe_needs_no_runner() -> None:
    """It launches its child as the runner does (``bench.run.execute.outcome``), without building a
    Runner with a store it never writes."""
    assert "bench.run.execute.runner" not in imported_by(["bench.run.execute.probe"])
