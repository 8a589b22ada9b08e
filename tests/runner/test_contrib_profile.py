"""The ``contrib`` profile, the one a contributor runs: it asks every question of the home page
on one machine, measures each side of CPU vs GPU at its fastest at every batch the two are
compared, and fits its time limits (10 minutes on a GPU node, 15 on a 2-core machine without
CUDA) by the estimate its dry run prints, learned from the committed runs.

The topics are the home page's own (``Topic``): a topic added there without a study here fails
the first test. Pure planning and arithmetic on committed files: no torch, nothing measured."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from bench.report.questions.home.model import Topic
from bench.run.plan import learned
from bench.run.plan.dryrun import print_dry_run
from bench.run.plan.jobs import Job, plan
from bench.run.plan.matrix import Cell
from bench.run.plan.profiles import load_profile
from bench.run.protocol import Probe

REPORTS = Path(__file__).resolve().parents[2] / "reports"

#: What answers each home topic: (axis, device, its baseline value, the value compared with
#: it). A topic is covered where the plan holds a pair of model cells that differ in that axis
#: alone (as the report pairs them), on that device.
COVERS: dict[Topic, tuple[tuple[str, str, str, str], ...]] = {
    Topic.BENCHMARK: (("cudnn_benchmark", "cuda", "off", "on"),),
    Topic.DEVICE: (("device", "cuda", "cpu", "cuda"),),
    Topic.PRECISION: (("precision", "cuda", "fp32", "amp-bf16"),
                      ("precision", "cuda", "fp32", "fp32-strict"),  # TF32 against strict
                      ("precision", "cpu", "fp32", "amp-bf16")),
    Topic.LAYOUT: (("memory_format", "cuda", "nchw", "channels_last"),
                   ("memory_format", "cpu", "nchw", "channels_last")),
    Topic.DETERMINISM: (("cudnn_deterministic", "cuda", "off", "on"),),
    Topic.COMPILE: (("compile", "cuda", "off", "default"), ("compile", "cpu", "off", "default")),
}
#: Axes a pair may differ in beside its own (the report's pairing leaves them out too): a CPU
#: cell has no cuDNN switches and a GPU cell no thread count.
_ALSO = {"device": {"cpu_threads", "cudnn_benchmark", "cudnn_deterministic",
                    "cudnn_benchmark_limit"},
         "compile": {"compile_dynamic"}}
#: The fastest settings a side may choose: where CPU and GPU are compared, both are measured.
FASTEST = ("amp-bf16", "channels_last")
DEFAULTS = ("fp32", "nchw")
GPU_MINUTES, CPU_MINUTES = 10.0, 15.0


def _jobs(name: str) -> list[Job]:
    return plan(load_profile(name))


def _model_cells(jobs: Iterable[Job]) -> list[Cell]:
    seen = {j.cell.cell_id: j.cell for j in jobs if j.cell.kind == "model"}
    return list(seen.values())


def _key(cell: Cell, axis: str) -> tuple[Any, ...]:
    leave = {axis, "model_source", *_ALSO.get(axis, ())}
    return tuple(sorted((k, str(v)) for k, v in asdict(cell).items() if k not in leave))


def _pairs(cells: list[Cell], axis: str, device: str, base: str, variant: str) -> int:
    """How many (baseline, variant) pairs of ``cells`` differ in ``axis`` alone, on
    ``device`` (a CPU-vs-GPU pair: its GPU cell)."""
    on = [c for c in cells if c.device == device or axis == "device"]
    bases = {_key(c, axis) for c in on if getattr(c, axis) == base}
    return sum(1 for c in on if getattr(c, axis) == variant and c.device == device
               and _key(c, axis) in bases)


def test_every_home_topic_has_a_rule_here() -> None:
    assert set(COVERS) == set(Topic), "a home topic this test does not know: add its pairs"


@pytest.mark.parametrize("topic", list(Topic), ids=lambda t: t.name.lower())
def test_contrib_answers_every_home_topic(topic: Topic) -> None:
    cells = _model_cells(_jobs("contrib"))
    for axis, device, base, variant in COVERS[topic]:
        assert _pairs(cells, axis, device, base, variant), \
            f"no {device} pair of {axis} {base} against {variant}"


def test_contrib_checks_reruns_bitwise_with_deterministic_off_and_on() -> None:
    checked = {j.cell.cudnn_deterministic for j in _jobs("contrib")
               if j.op == "repro" and j.cell.device == "cuda"}
    assert checked == {"off", "on"}


def _compared(cells: list[Cell]) -> set[tuple[Any, ...]]:
    """The workloads CPU vs GPU compares: a CPU and a GPU cell in PyTorch's defaults."""
    def workload(c: Cell) -> tuple[Any, ...]:
        return (c.model, c.mode, c.batch_size, c.resolution, c.shapes)

    sides = {d: {workload(c) for c in cells if c.device == d and c.compile == "off"
                 and (c.precision, c.memory_format) == DEFAULTS} for d in ("cpu", "cuda")}
    return sides["cpu"] & sides["cuda"]


@pytest.mark.parametrize("name", ["contrib", "gpu"])
def test_each_side_is_measured_at_its_fastest_wherever_cpu_and_gpu_are_compared(
        name: str) -> None:
    """Best against best needs each side's fastest setting measured on the other side too
    (``judge.best``): bf16 autocast with channels_last on both devices at every compared
    batch (on the CPU only where it computes bf16 natively, else the cell says why not)."""
    jobs = _jobs(name)
    cells = _model_cells(jobs)
    compared = _compared(cells)
    assert compared, "nothing compared"
    for model, mode, batch, resolution, shapes in sorted(compared, key=str):
        for device in ("cpu", "cuda"):
            fastest = [j for j in jobs if j.cell.device == device and j.cell.compile == "off"
                       and (j.cell.model, j.cell.mode, j.cell.batch_size, j.cell.resolution,
                            j.cell.shapes) == (model, mode, batch, resolution, shapes)
                       and (j.cell.precision, j.cell.memory_format) == FASTEST]
            assert fastest, f"{name}: no {device} {FASTEST} cell for {mode} at batch {batch}"
            if device == "cpu":
                assert all(j.study.settings.native_bf16_only for j in fastest)


def _newest_env(profile: str) -> dict[str, Any]:
    """The env.json of the newest committed run of ``profile``: the kind of machine whose
    rows the estimate learns from."""
    found = []
    for path in REPORTS.glob("*/*/env.json"):
        env = json.loads(path.read_text(encoding="utf-8"))
        if env.get("profile") == profile:
            found.append((path.parent.name, env))
    assert found, f"no committed run of the {profile} profile under {REPORTS}"
    return max(found, key=lambda f: f[0])[1]


def _dry_run_minutes(env: dict[str, Any], cuda: bool) -> tuple[float, str]:
    """What ``bench run --profile contrib --dry-run`` prints on the machine of ``env``: its
    total in minutes, and its text."""
    costs = learned.history(REPORTS, env)
    assert costs, "no committed rows to learn from"
    out = io.StringIO()
    total = print_dry_run(_jobs("contrib"), Probe(env, [], cuda), out, costs=costs)
    return total / 60, out.getvalue()


def test_contrib_fits_ten_minutes_on_a_gpu_node_by_the_committed_gpu_rows() -> None:
    """On the GPU node whose rows are committed (an H200 with a 16-core host): most cells are
    measured there; the rest (the GPU's compile, bf16 at small batches) are guesses scaled by
    how far the guesses were off on that machine."""
    env = _newest_env("gpu")
    minutes, text = _dry_run_minutes(env, cuda=True)
    assert "estimates measured" in text, "the estimate learned nothing from the committed rows"
    assert minutes <= GPU_MINUTES, text


def test_contrib_fits_fifteen_minutes_on_a_two_core_cpu() -> None:
    env = _newest_env("cpu")
    assert env["cpu"]["affinity"] == 2, "the committed CPU runs are a 2-core machine's"
    minutes, text = _dry_run_minutes(env, cuda=False)
    assert "estimates measured" in text
    assert "[skipped: no-cuda]" in text, "the GPU cells are skipped there"
    assert minutes <= CPU_MINUTES, text


#: The switches whose comparisons carry the numerics check, and their baselines.
NUMERIC_BASE = {"precision": "fp32", "memory_format": "nchw", "compile": "off"}
#: fp32 against fp32-strict asks what TF32 does: its fp32 side is the one checked.
STRICT = "fp32-strict"


def _numeric_pairs(cells: list[Cell]) -> list[tuple[Cell, Cell]]:
    """Every (baseline, variant) pair of ``cells`` that differs in one numeric axis alone."""
    out = []
    for axis, base in NUMERIC_BASE.items():
        bases: dict[tuple[Any, ...], list[Cell]] = {}
        for c in cells:
            if getattr(c, axis) == base:
                bases.setdefault(_key(c, axis), []).append(c)
        out += [(b, c) for c in cells if getattr(c, axis) != base
                for b in bases.get(_key(c, axis), ())]
    return out


def _checked(jobs: list[Job]) -> set[str]:
    return {j.cell.cell_id for j in jobs
            if j.op == "measure" and j.cell.kind == "model" and j.study.settings.numerics}


@pytest.mark.parametrize("name", ["contrib", "gpu"])
def test_numerics_are_planned_on_exactly_the_cells_whose_arithmetic_a_switch_changes(
        name: str) -> None:
    """Each precision, layout and compile pair's switched side (fp32's TF32 side against
    strict) runs the numerics check; nothing else does but those pairs' other sides and their
    cudnn.benchmark twins, which share a checked study."""
    jobs = _jobs(name)
    cells = _model_cells(jobs)
    pairs = _numeric_pairs(cells)
    checked = _checked(jobs)
    switched = {(b if v.precision == STRICT else v).cell_id for b, v in pairs}
    assert switched and switched <= checked, sorted(switched - checked)
    members = {c.cell_id for pair in pairs for c in pair}
    by_id = {c.cell_id: c for c in cells}
    for cid in checked - members:
        twin = _key(by_id[cid], "cudnn_benchmark")
        assert by_id[cid].cudnn_benchmark == "on" and any(
            _key(by_id[m], "cudnn_benchmark") == twin for m in members & checked), \
            f"{name}: {by_id[cid].name} is checked but pairs with nothing numeric"
    devices = {by_id[cid].device for cid in switched}
    assert devices == ({"cuda", "cpu"} if name == "contrib" else {"cuda"})
    if name == "contrib":  # the CPU side too: bf16, channels_last and compile
        cpu = [by_id[cid] for cid in switched if by_id[cid].device == "cpu"]
        assert {"amp-bf16"} <= {c.precision for c in cpu}
        assert {"channels_last"} <= {c.memory_format for c in cpu}
        assert {"default"} <= {c.compile for c in cpu}
    assert any(by_id[cid].precision == "fp32" and by_id[cid].device == "cuda"
               for cid in switched), "the TF32 side of TF32 against strict"
