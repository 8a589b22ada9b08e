"""The CPU at its best: native bf16 read from the CPU's flags, threads = physical cores, and a
best-settings cell on a CPU without native bf16 skipped with its reason."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import tomllib

from bench.run.child import worker
from bench.run.plan import cpuinfo
from bench.run.plan.matrix import Cell, Settings
from bench.run.plan.profiles import parse_profile

SAPPHIRE = "processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 amx_tile amx_bf16\n"
SKYLAKE = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512bw\n"
GRAVITON3 = "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm sve\n"


@pytest.mark.parametrize(("text", "native"), [(SAPPHIRE, True), (SKYLAKE, False),
                                              (GRAVITON3, True), ("", False)])
def test_native_bf16_is_read_from_the_flags(tmp_path: Path, text: str, native: bool) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    assert cpuinfo.native_bf16(path) is native
    assert cpuinfo.native_bf16(tmp_path / "absent") is False  # nothing says it has it


def test_physical_cores_count_each_core_once_among_the_allowed_processors(
        tmp_path: Path) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    # two hardware threads per core: processors 2k and 2k+1 share core k
    text = "".join(f"processor\t: {p}\nphysical id\t: 0\ncore id\t\t: {p // 2}\n\n"
                   for p in allowed)
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    assert cpuinfo.physical_cores(path) == len({p // 2 for p in allowed})
    assert cpuinfo.physical_cores(tmp_path / "absent") is None


def _best_cell(settings: Settings, native: bool, monkeypatch: pytest.MonkeyPatch) -> str | None:
    monkeypatch.setattr(cpuinfo, "native_bf16", lambda path=cpuinfo.CPUINFO: native)
    torch = SimpleNamespace(cuda=SimpleNamespace(is_available=lambda: False))
    cell = Cell(model="resnet50", precision="amp-bf16", memory_format="channels_last")
    return worker._skip_reason(torch, cell, settings)


def test_a_best_settings_cell_without_native_bf16_is_skipped_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    best = Settings(native_bf16_only=True)
    assert _best_cell(best, False, monkeypatch) == "no native bf16"
    assert _best_cell(best, True, monkeypatch) is None
    # the precision study measures bf16 wherever torch runs it, emulated or not
    assert _best_cell(Settings(), False, monkeypatch) is None


def test_a_profile_asks_for_physical_cores_and_native_bf16(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpuinfo, "physical_cores", lambda path=cpuinfo.CPUINFO: 3)
    profile = parse_profile(tomllib.loads(
        '[profile]\ndescription = "t"\n[studies.best]\ndescription = "b"\ndevice = "cpu"\n'
        'precision = "amp-bf16"\ncpu_threads = "physical"\nnative_bf16_only = true\n'), "t")
    (study,) = profile.studies
    assert study.settings.native_bf16_only and [c.cpu_threads for c in study.cells] == [3]


@pytest.mark.parametrize("name", ["cpu", "gpu"])
def test_the_cpu_and_gpu_profiles_measure_the_cpu_at_its_best(name: str) -> None:
    from bench.run.plan.profiles import load_profile

    studies = {s.name: s for s in load_profile(name).studies}
    best = studies["best" if name == "cpu" else "cpu_best"]
    # a couple of cells; in the gpu profile one per batch its CPU-vs-GPU study compares
    assert best.settings.native_bf16_only and len(best.cells) == {"cpu": 2, "gpu": 4}[name]
    assert {(c.device, c.precision, c.memory_format) for c in best.cells} == {
        ("cpu", "amp-bf16", "channels_last")}
