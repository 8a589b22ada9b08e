"""Workloads and FLOP counts with real torch on the CPU (small shapes, fast)."""

from __future__ import annotations

import pytest

from bench.run.child import flags, workloads
from bench.run.plan.matrix import Cell

torch = pytest.importorskip("torch")


def test_flops_match_torchvision_figures_and_train_is_three_forwards() -> None:
    fwd = workloads.flops_per_sample(torch, Cell(model="resnet18", mode="infer"))
    train = workloads.flops_per_sample(torch, Cell(model="resnet18", mode="train"))
    assert fwd is not None and train is not None
    assert fwd / 2 == pytest.approx(1.81e9, rel=0.02)  # torchvision documents 1.81 GMACs
    assert train == pytest.approx(3 * fwd)
    # depthwise-heavy models must not be over-counted in training (see TRAIN_FLOPS_FACTOR)
    mobile = workloads.flops_per_sample(torch, Cell(model="mobilenet_v3_large", mode="train"))
    assert mobile is not None and mobile / 3 / 2 == pytest.approx(0.217e9, rel=0.05)


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_step_runs_every_shape_and_exposes_outputs(mode: str) -> None:
    cell = Cell(model="mobilenet_v3_small", mode=mode, batch_size=2, resolution=32,
                shapes="dynamic", shape_count=3, memory_format="channels_last")
    flags.apply(torch, cell)
    wl = workloads.build(torch, cell)
    assert len(set(wl.schedule)) == 3
    for i in range(len(wl.schedule)):
        wl.step(i)
    out = wl.outputs()
    assert out["output"].shape == (2, 1000)
    assert any(k.startswith("grad.") for k in out) == (mode == "train")


def test_read_back_labels_cpu_math_honestly() -> None:
    cell = Cell(model="resnet18", precision="amp-bf16", cpu_threads=1)
    threads = torch.get_num_threads()
    try:
        flags.apply(torch, cell)
        eff = flags.read_back(torch, cell)
    finally:
        torch.set_num_threads(threads)
    assert eff.eff_num_threads == "1"
    assert eff.eff_autocast_dtype == "bfloat16" and eff.eff_conv_math == "bf16"
    assert eff.eff_cudnn_benchmark == ""  # not applicable on the CPU


def test_ceiling_work_units() -> None:
    step, work, unit = workloads.ceiling(torch, Cell(kind="ceiling", model="matmul-fp32",
                                                     resolution=64))
    assert (work, unit) == (2 * 64**3, "flop") and step(0).shape == (64, 64)
    step, work, unit = workloads.ceiling(torch, Cell(kind="ceiling", model="copy", resolution=1))
    assert (work, unit) == (2 * 2**20, "byte")


def test_every_shipped_profile_names_only_installed_models() -> None:
    from bench.run.plan import matrix, profiles

    available = workloads.available_models()
    for name in profiles.shipped_profiles():
        matrix.check_models(profiles.load_profile(name), available)  # raises on unknown names


def _profile_models() -> list[str]:
    from bench.run.plan import modelspec, profiles

    names = set().union(*(profiles.load_profile(name).models()
                          for name in profiles.shipped_profiles()))
    return sorted(n for n in names if not modelspec.is_user_model(n))


@pytest.mark.parametrize("model", _profile_models())
def test_a_count_per_sample_is_the_same_at_every_batch_as_the_run_shares_it(model: str) -> None:
    """What ``runner.flops_key`` rests on: a torchvision model's count is linear in the batch,
    so batch 1, batch 8 and a ragged cycle give one figure per sample, to the last digit."""
    from bench.run.execute.runner import flops_key

    cells = [Cell(model=model, mode="infer", batch_size=1, resolution=224),
             Cell(model=model, mode="infer", batch_size=8, resolution=224),
             Cell(model=model, mode="infer", batch_size=8, resolution=224, shapes="ragged")]
    assert len({flops_key(c) for c in cells}) == 1
    try:
        counts = {workloads.flops_per_sample(torch, c) for c in cells}
    except NotImplementedError as exc:  # regnet: its constructor copies out of a meta tensor
        pytest.skip(f"{model} is not counted on the meta device ({exc}): no count to share")
    assert len(counts) == 1 and None not in counts
