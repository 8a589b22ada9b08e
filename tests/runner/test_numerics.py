"""The paired numerics check (``bench.run.child.numerics``) with real torch on the CPU, and the
TF32 switches read back (``bench.run.child.flags``): small models, seconds."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.run.child import flags, numerics, workloads
from bench.run.plan import checksize, estimate
from bench.run.plan.checksize import CheckSize
from bench.run.plan.matrix import Cell
from bench.run.protocol import Metrics

torch = pytest.importorskip("torch")

MODELS = Path(__file__).with_name("numerics_models.py")


@pytest.fixture(autouse=True)
def _flags_restored() -> Iterator[None]:
    """Every switch a strict plan touches, and the threads, as they were before the test."""
    plan = flags.planned(torch, flags.STRICT)
    threads = torch.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = {p: flags.read_flag(torch, p) for p in plan}
    yield
    # every switch strict first (a test may leave them mixed, which the old cuDNN flag
    # refuses), then each back
    newer = {p: v for p, v in plan.items() if p.endswith("fp32_precision")}
    flags.set_all(torch, newer)
    flags.set_all(torch, before)
    torch.set_num_threads(threads)


def _run(cell: Cell, reference: str | None = None) -> tuple[Metrics, list[str]]:
    flags.apply(torch, cell)
    torch.manual_seed(0)
    wl = workloads.build(torch, cell)
    wl.step(0)
    m = Metrics()
    flops = workloads.count_flops(torch, cell, wl)[0]
    notes = numerics.check(torch, cell, wl, m, flops, reference)
    return m, notes


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_the_strict_reference_against_itself_reads_zero(mode: str) -> None:
    cell = Cell(model="mobilenet_v3_small", mode=mode, batch_size=4, resolution=32,
                precision="fp32-strict")
    m, notes = _run(cell, reference=numerics.FP32_STRICT)
    assert m.num_reference == "fp32-strict" and m.num_inputs == 256
    assert (m.num_rel_err, m.num_max_abs_err, m.num_cosine, m.num_top1_agree) == (0, 0, 1, 1)
    if mode == "train":
        assert m.num_train_steps == numerics.TRAIN_STEPS
        assert m.num_loss_rel_diff == 0 and m.num_param_drift == 0
        assert m.num_loss is not None and m.num_loss == m.num_ref_loss
        assert m.num_loss > 0
    else:
        assert m.num_train_steps is None and m.num_loss is None
    assert m.num_time_s is not None and m.num_time_s > 0
    assert notes[0].startswith("numerics: 256 inputs at 32 px")


def test_a_small_model_is_checked_against_fp64_and_bf16_drifts_more_than_fp32() -> None:
    base = dict(model="mobilenet_v3_small", batch_size=4, resolution=32)
    fp32, _ = _run(Cell(**base))  # type: ignore[arg-type]
    bf16, _ = _run(Cell(**base, precision="amp-bf16"))  # type: ignore[arg-type]
    assert fp32.num_reference == bf16.num_reference == "fp64-cpu"
    assert fp32.num_rel_err is not None and bf16.num_rel_err is not None
    assert 0 < fp32.num_rel_err < 1e-4
    assert bf16.num_rel_err > 10 * fp32.num_rel_err
    assert bf16.num_cosine is not None and -1 <= bf16.num_cosine <= 1


def test_an_fp16_overflow_reads_a_large_error() -> None:
    cell = Cell(model=f"{MODELS}:overflow", input_shape="3,8,8", resolution=8, batch_size=8,
                precision="amp-fp16")
    m, notes = _run(cell)
    assert m.num_rel_err is not None and m.num_rel_err > 0.5
    assert m.num_cosine is not None and m.num_cosine < 0.9
    assert any("not finite" in n for n in notes)
    fine, _ = _run(Cell(model=f"{MODELS}:overflow", input_shape="3,8,8", resolution=8,
                        batch_size=8))
    assert fine.num_rel_err is not None and fine.num_rel_err < 1e-5


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_channels_last_on_a_model_exact_under_it_reads_zero(mode: str) -> None:
    cell = Cell(model=f"{MODELS}:layout_exact", input_shape="3,8,8", resolution=8,
                batch_size=8, memory_format="channels_last", mode=mode)
    m, _ = _run(cell, reference=numerics.FP32_STRICT)
    assert m.num_rel_err is not None and m.num_rel_err < 1e-6
    assert m.num_top1_agree == 1
    if mode == "train":
        assert m.num_param_drift is not None and m.num_param_drift < 1e-6


def test_the_fp64_rule_weighs_the_work() -> None:
    cell = Cell(model="resnet50", batch_size=8, resolution=224)
    own, small = CheckSize(8, 224, 32, 8), CheckSize(256, 32, 1, 32)
    assert numerics.reference_kind(cell, 8.2e9, own, 224) == "fp32-strict"
    assert numerics.reference_kind(cell, 8.2e9, small, 224) == "fp32-strict"
    assert numerics.reference_kind(cell, 1e6, own, 224) == "fp64-cpu"
    assert numerics.reference_kind(cell, None, own, 224) == "fp32-strict"


def test_an_eager_cpu_cell_is_checked_small_and_a_compiled_one_at_its_own_shape() -> None:
    """ResNet-18 at batch 8, 224 px: 1.8 GFLOPs an input. Eager on a CPU it is checked at
    32 px, its steps on 32 inputs; compiled on a CPU at its own shape on as many chunks as
    ``CPU_MAX_FLOPS`` allows; on a GPU whole, whatever it costs."""
    wl: Any = SimpleNamespace(schedule=[(8, 224)])
    flops = 1.82e9
    assert numerics.size(Cell(batch_size=8), wl, "cpu", flops) == CheckSize(256, 32, 1, 32)
    compiled = numerics.size(Cell(batch_size=8, compile="default"), wl, "cpu", flops)
    assert (compiled.chunk, compiled.resolution, compiled.step_inputs) == (8, 224, 8)
    assert compiled.inputs == 48 and compiled.inputs * flops <= checksize.CPU_MAX_FLOPS
    train = numerics.size(Cell(batch_size=8, compile="default", mode="train"), wl, "cpu",
                          3 * flops)
    assert train == compiled  # the step's FLOPs are three forwards'
    assert numerics.size(Cell(batch_size=8, compile="default"), wl, "cpu", None).inputs == 256
    gpu = numerics.size(Cell(batch_size=8, device="cuda"), wl, "cuda", flops)
    assert gpu == CheckSize(8, 224, 32, 8)


def test_a_small_batch_is_checked_in_few_large_chunks_on_a_cpu() -> None:
    """Batch 2 at 64 px holds the pixels of 8 inputs at 32 px: its check runs 4 chunks of
    ``CPU_MIN_CHUNK``, not 32 of 8, and its steps take 32 inputs each."""
    assert checksize.check_size(2, 64, cpu=True, free_shape=True) == CheckSize(64, 32, 4, 32)
    assert checksize.check_size(1, 224, cpu=True, free_shape=True) == CheckSize(64, 32, 4, 32)


def test_a_dear_check_keeps_its_fewest_inputs() -> None:
    """However dear an input, a check compares at least ``MIN_INPUTS`` of them, in whole
    chunks."""
    size = checksize.check_size(3, 512, cpu=True, free_shape=False, forward_flops=1e12)
    assert size.chunk == 3 and size.inputs == 33
    assert checksize.check_size(64, 224, cpu=True, free_shape=False,
                                forward_flops=1e12).inputs == 64


def test_the_plan_estimates_the_check_it_runs() -> None:
    """The estimate sizes the check by the same rule: a compiled CPU cell's costs what 6
    chunks (48 inputs) do, not 32; an eager training cell's steps what 32 inputs at 32 px
    do."""
    compiled = Cell(model="resnet18", batch_size=8, compile="default")
    one = estimate.iteration_s(compiled, 2)
    assert estimate.numerics_s(compiled, 2) == pytest.approx(6 * one * (1 + estimate._FP64_COST))
    train = Cell(model="resnet50", batch_size=8, mode="train")
    step = estimate.iteration_s(replace(train, resolution=32, batch_size=32), 2)
    fwd = estimate.iteration_s(replace(train, mode="infer", resolution=32, batch_size=256), 2)
    assert estimate.numerics_s(train, 2) == pytest.approx(
        (fwd + 6 * step) * (1 + estimate._FP64_COST))


# -- the TF32 switches, read back -------------------------------------------------------------


def test_strict_sets_every_switch_torch_has_and_reads_each_back() -> None:
    cell = Cell(precision="fp32-strict")
    plan = flags.planned(torch, cell)
    assert plan["cudnn.allow_tf32"] is False and plan["float32_matmul_precision"] == "highest"
    flags.apply(torch, cell)
    eff = flags.read_back(torch, cell)
    if hasattr(torch.backends.cudnn, "conv"):  # torch >= 2.9
        assert plan["cudnn.conv.fp32_precision"] == "ieee" and plan["fp32_precision"] == "ieee"
        assert eff.eff_conv_fp32_precision == eff.eff_matmul_fp32_precision == "ieee"
    assert flags.planned(torch, Cell(precision="fp32")) == {}


def test_a_switch_set_wrongly_on_purpose_fails_naming_it() -> None:
    cell = Cell(precision="fp32-strict")
    flags.apply(torch, cell)
    plan = flags.planned(torch, cell)
    path = "cudnn.conv.fp32_precision" if "cudnn.conv.fp32_precision" in plan else (
        "float32_matmul_precision")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flags.set_flag(torch, path, "tf32" if path.endswith("fp32_precision") else "high")
    with pytest.raises(flags.FlagError, match=path.replace(".", r"\.")):
        flags.verify(torch, plan)


class _Stuck:
    """A switch whose setter is ignored, as a torch that kept its own value would."""

    def __init__(self, value: Any) -> None:
        object.__setattr__(self, "fp32_precision", value)

    def __setattr__(self, name: str, value: Any) -> None:
        return None


def test_a_fake_torch_whose_conv_switch_ignores_the_setter_fails_loudly() -> None:
    ns = SimpleNamespace
    fake: Any = ns(
        backends=ns(cudnn=ns(allow_tf32=True, conv=_Stuck("tf32"), rnn=ns(fp32_precision="tf32"),
                             fp32_precision="none"),
                    cuda=ns(matmul=ns(allow_tf32=False, fp32_precision="none")),
                    fp32_precision="none"),
        set_num_threads=lambda n: None, get_float32_matmul_precision=lambda: "highest",
        set_float32_matmul_precision=lambda v: None)
    with pytest.raises(flags.FlagError, match=r"cudnn\.conv\.fp32_precision read back 'tf32'"):
        flags.apply(fake, Cell(precision="fp32-strict", cpu_threads=1))
    assert fake.backends.cuda.matmul.fp32_precision == "ieee"  # the others were set


def test_the_reference_runs_strict_and_the_cells_switches_come_back() -> None:
    cell = Cell(precision="fp32")
    flags.apply(torch, cell)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = {p: flags.read_flag(torch, p) for p in flags.planned(torch, flags.STRICT)}
        with flags.strict(torch):
            assert torch.get_float32_matmul_precision() == "highest"
        after = {p: flags.read_flag(torch, p) for p in before}
    assert after == before
