"""torch.compile as an axis: the profile's values, the child's compile figures, and real CPU
compiles through the runner (a tiny user model, compiled by Inductor with the C++ compiler)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import schema
from bench.run.child import compiling
from bench.run.matrix import Cell, ProfileError, parse_profile

from .conftest import read_csv, run_cli


def _cells(**study: object) -> list[Cell]:
    data = {"defaults": {"device": "cpu", "model": "resnet18"}, "studies": {"s": study}}
    return list(parse_profile(data, "t").studies[0].cells)


def test_eager_cells_keep_their_ids_and_dynamic_only_applies_when_compiled() -> None:
    eager = Cell(device="cpu", model="resnet18", cudnn_benchmark="n/a",
                 cudnn_deterministic="n/a", cudnn_benchmark_limit=None)
    cells = _cells(compile=["off", "default"], compile_dynamic=["auto", True, False])
    assert [(c.compile, c.compile_dynamic) for c in cells] == [
        ("off", "auto"), ("default", "auto"), ("default", "true"), ("default", "false")]
    assert cells[0].cell_id == eager.cell_id  # compile=off leaves an eager cell's id alone
    assert len({c.cell_id for c in cells}) == 4
    assert "compile=default dynamic=true" in cells[2].name and "compile" not in cells[0].name


def test_an_unknown_mode_names_the_valid_ones() -> None:
    with pytest.raises(ProfileError, match="unknown compile 'fast'; valid choices: off, "
                                           "default, reduce-overhead, max-autotune"):
        _cells(compile="fast")


def test_ceilings_are_never_compiled() -> None:
    data = {"studies": {"c": {"kind": "ceiling", "model": "copy", "compile": "default"}}}
    (cell,) = parse_profile(data, "t").studies[0].cells
    assert cell.compile == "off"


def test_a_version_2_row_migrates_to_an_eager_one() -> None:
    row = schema.migrate({"schema_version": "2", "model": "resnet50"})
    assert row["compile"] == "off" and row["compile_dynamic"] == "auto"
    assert row["compile_time_s"] == "" and row["model_source"] == ""
    assert row["schema_version"] == str(schema.SCHEMA_VERSION)


def test_figures_are_differences_of_torch_counters() -> None:
    start = compiling.Snapshot(1.0, 2, 0)
    cold = compiling.Snapshot(9.5, 4, 1)
    end = compiling.Snapshot(10.0, 5, 1)
    got = compiling.figures(start, cold, end)
    assert (got.compile_time_s, got.compiles, got.recompiles, got.graph_breaks) == (
        9.0, 3, 1, 1)
    assert got.notes == ()
    unknown = compiling.figures(*(compiling.Snapshot(None, None, None),) * 3)
    assert unknown.compile_time_s is None and unknown.recompiles is None
    assert len(unknown.notes) == 2  # the row says what this torch did not report


def test_a_cpu_without_a_cxx_compiler_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = SimpleNamespace(compile=lambda m, **kw: m)
    cell = Cell(device="cpu", compile="default")
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    reason = compiling.skip_reason(torch, cell)
    assert reason is not None and reason.startswith("no-cxx-compiler:")
    assert compiling.skip_reason(torch, Cell(device="cpu")) is None  # eager needs none
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    assert compiling.skip_reason(torch, cell) is None


_PROFILE = """
[defaults]
device = "cpu"
model = "tests/advise/model.py:build"
input_shape = "3,32,32"
resolution = 32
batch_size = 2
replicates = 1
warmup_iters = 1
min_iters = 3
min_time_s = 0.01
max_time_s = 0.2
timeout_s = 240

[studies.c]
mode = "infer"
compile = {compile}
"""

#: Skipped without a C++ compiler, except under CI (``CI`` set), which installs one: there a
#: missing compiler fails the test instead of hiding it.
needs_cxx = pytest.mark.skipif(
    not os.environ.get("CI") and not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
    reason="torch.compile on the CPU needs a C++ compiler (install g++)")


@pytest.mark.e2e
@needs_cxx
def test_a_tiny_model_compiles_on_the_cpu_with_its_caches_in_the_replicate_folder(
        tmp_path: Path) -> None:
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["off", "default"]'))
    outside = tmp_path / "user-cache"  # where Inductor would write without the per-replicate one
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCHINDUCTOR_CACHE_DIR": str(outside / "inductor"),
                        "TRITON_CACHE_DIR": str(outside / "triton")})
    assert proc.returncode == 0, proc.stderr
    eager, compiled = read_csv(out / "results.csv")
    assert (eager["compile"], compiled["compile"]) == ("off", "default")
    assert eager["status"] == compiled["status"] == "ok", compiled["reason"]
    assert eager["compile_time_s"] == eager["compiles"] == ""
    assert float(compiled["compile_time_s"]) > 0
    assert int(compiled["compiles"]) >= 1
    assert compiled["recompiles"] == "0" and compiled["graph_breaks"] == "0"
    # the cold pass is where it compiled, and the compiled code went to the replicate's folder
    assert float(compiled["cold_pass_s"]) >= 0.9 * float(compiled["compile_time_s"])
    assert float(compiled["kernel_cache_end_bytes"]) > 0
    assert eager["kernel_cache_end_bytes"] == "0"
    assert not any(p.is_file() for p in outside.rglob("*"))
    assert not list(out.glob("**/*.cache"))  # the replicate's folder is gone with it


@pytest.mark.e2e
@needs_cxx
def test_an_injected_compile_failure_is_an_error_row_and_the_next_cell_runs(
        tmp_path: Path) -> None:
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["default", "off"]'))
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCH_KNOBS_FAULT": "compile-error"})
    assert proc.returncode == 0, proc.stderr
    failed, eager = read_csv(out / "results.csv")
    assert failed["status"] == "error"
    assert "injected compile failure" in failed["reason"], failed["reason"]
    assert "\n" not in failed["reason"] and failed["cold_pass_s"] == ""
    assert eager["status"] == "ok" and eager["compile"] == "off"


@pytest.mark.e2e
@needs_cxx
def test_a_compile_past_the_timeout_is_a_timeout_row_and_the_next_cell_runs(
        tmp_path: Path) -> None:
    """Compiling the small model takes seconds on a CPU; a 3 s timeout stops it mid-compile."""
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["default", "off"]').replace(
        "timeout_s = 240", "timeout_s = 3"))
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    slow, eager = read_csv(out / "results.csv")
    assert (slow["compile"], slow["status"]) == ("default", "timeout"), slow["reason"]
    assert slow["cold_pass_s"] == "" and slow["compile_time_s"] == ""
    assert eager["status"] == "ok" and eager["compile"] == "off"
