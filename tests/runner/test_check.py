"""Each plausibility check catches the violation it is for (test fixtures, not results)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.run.store import check as checks
from bench.run.store.store import CsvAppender
from bench.schema import RESULT_COLUMNS, SAMPLE_COLUMNS


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS, "")
    row.update(schema_version=1, run_id="fixture", fingerprint_id="fx", cell_id="c1",
               cell_name="fixture cell", kind="model", replicate=0, device="cuda",
               model="resnet18", batch_size=8, precision="fp32", status="ok",
               cudnn_benchmark="on", cudnn_deterministic="off", eff_cudnn_benchmark="true",
               eff_cudnn_deterministic="false", eff_cudnn_allow_tf32="true",
               steady_p10_s=0.09, steady_median_s=0.1, steady_p90_s=0.11, steady_mean_s=0.1,
               steady_iters=3, samples_per_s=80.0, cold_first_iter_s=1.0, cold_pass_s=1.0,
               flops_per_sample=1e9, shapes="static")
    row.update(over)
    return row


def _run(tmp_path: Path, rows: list[dict[str, Any]], samples: list[float] | None = None
         ) -> set[str]:
    CsvAppender(tmp_path / "results.csv", RESULT_COLUMNS).append(rows)
    xs = [0.1, 0.09, 0.11] if samples is None else samples
    CsvAppender(tmp_path / "samples.csv", SAMPLE_COLUMNS).append(
        [{"cell_id": "c1", "replicate": 0, "phase": "steady", "iter": i, "batch_size": 8,
          "resolution": 224, "seconds": x} for i, x in enumerate(xs)])
    _, findings = checks.check_run(tmp_path)
    return {f.check for f in findings}


def test_a_plausible_row_passes(tmp_path: Path) -> None:
    assert _run(tmp_path, [_row()]) == set()


@pytest.mark.parametrize(("over", "check"), [
    ({"steady_p10_s": 0.2}, "p10<=median<=p90<=p95<=p99"),
    ({"steady_p95_s": 0.12, "steady_p99_s": 0.115}, "p10<=median<=p90<=p95<=p99"),
    ({"steady_median_s": "", "steady_p10_s": 0.12}, "p10<=median<=p90<=p95<=p99"),
    ({"energy_j": -1.0}, "energy and power >= 0"),
    ({"mean_power_w": -250.0}, "energy and power >= 0"),
    ({"energy_window_s": 0.19}, "window >= its steady steps"),  # 2 of 3 steps took >= 0.1 s
    ({"wall_s": 0.15}, "window >= its steady steps"),
    ({"cold_pass_s": 0.5}, "cold pass"),
    ({"samples_per_s": 200.0}, "samples/s"),
    ({"eff_cudnn_benchmark": "false"}, "effective flags"),
    ({"precision": "fp32-strict"}, "effective flags"),
    ({"status": "oom"}, "failed rows"),
    ({"kernel_cache": "fresh", "kernel_cache_start_bytes": 4096}, "kernel cache"),
    ({"steady_median_s": "", "steady_p10_s": "", "steady_p90_s": ""}, "ok rows"),
    ({"throttled": "true", "throttle_reasons": "sw_power_cap 40%"}, "throttled"),
    ({"energy_method": "nvml-energy", "energy_j": 30.0, "energy_window_s": 0.3},
     "energy window"),
])
def test_each_violation_is_found(tmp_path: Path, over: dict[str, Any], check: str) -> None:
    assert check in _run(tmp_path, [_row(**over)])


def test_an_unthrottled_replicate_with_a_long_enough_energy_window_passes(
        tmp_path: Path) -> None:
    row = _row(energy_method="nvml-energy", energy_j=250.0, energy_window_s=1.2,
               throttled="false", throttle_reasons="")
    assert _run(tmp_path, [row]) == set()


def test_cache_sizes_are_not_measurements_and_warm_caches_start_full(tmp_path: Path) -> None:
    failed = _row(status="crash", steady_p10_s="", steady_median_s="", steady_p90_s="",
                  steady_mean_s="", steady_iters="", samples_per_s="", cold_first_iter_s="",
                  cold_pass_s="", flops_per_sample="", kernel_cache="fresh",
                  kernel_cache_start_bytes=0, kernel_cache_end_bytes=4096, wall_s=3.0)
    warm = _row(kernel_cache="warm", kernel_cache_start_bytes=4096)
    assert _run(tmp_path, [failed, warm]) == set()


def test_samples_must_agree_with_the_row(tmp_path: Path) -> None:
    assert "samples" in _run(tmp_path, [_row()], samples=[0.1, 0.2, 0.3])
    (tmp_path / "short").mkdir()
    assert "samples" in _run(tmp_path / "short", [_row()], samples=[0.1, 0.1])


def test_achieved_flops_above_the_measured_ceiling(tmp_path: Path) -> None:
    ceiling = _row(cell_id="m1", kind="ceiling", model="matmul-bf16", work_per_iter=2e12,
                   steady_median_s=1.0, steady_p10_s=1.0, steady_p90_s=1.0, samples_per_s="",
                   flops_per_sample="", cudnn_benchmark="n/a", cudnn_deterministic="n/a")
    too_fast = _row(flops_per_sample=1e11)  # 1e11 * 80/s = 8 TFLOP/s > 2 TFLOP/s
    assert "TFLOP/s < ceiling" in _run(tmp_path, [ceiling, too_fast])


def test_a_drifting_steady_state_is_found(tmp_path: Path) -> None:
    """The ResNet-50 batch-1 training pattern seen on an Intel host with a fixed batch and a
    real learning rate: each step slower than the last as the gradients went subnormal."""
    xs = [0.097, 0.105, 0.221, 1.69]
    row = _row(steady_iters=4, steady_median_s=0.163, steady_p10_s=0.0994, steady_p90_s=1.2,
               steady_mean_s=sum(xs) / 4, samples_per_s=8 * 4 / sum(xs))
    assert _run(tmp_path, [row], samples=xs) == {"steady drift"}
    (tmp_path / "cycled").mkdir()  # cycled shapes differ per iteration on purpose
    assert _run(tmp_path / "cycled", [{**row, "shapes": "dynamic"}], samples=xs) == set()


def _write(run: Path, rows: list[dict[str, Any]], samples: list[dict[str, Any]]) -> set[str]:
    run.mkdir(exist_ok=True)
    CsvAppender(run / "results.csv", RESULT_COLUMNS).append(rows)
    CsvAppender(run / "samples.csv", SAMPLE_COLUMNS).append(samples)
    _, findings = checks.check_run(run)
    return {f.check for f in findings}


def _samples(attempt: str = "", n: int = 3) -> list[dict[str, Any]]:
    return [{"cell_id": "c1", "replicate": 0, "attempt_id": attempt, "phase": "steady",
             "iter": i, "batch_size": 8, "resolution": 224, "seconds": 0.1} for i in range(n)]


@pytest.mark.parametrize("name", ["results.csv", "samples.csv"])
def test_a_zero_byte_file_fails_as_the_report_refuses_it(tmp_path: Path, name: str) -> None:
    _write(tmp_path, [_row()], _samples())
    (tmp_path / name).write_bytes(b"")
    n, findings = checks.check_run(tmp_path)
    files = [f for f in findings if f.check == "files"]
    assert [f.where for f in files] == [f"{tmp_path / name}:1"], findings
    assert "empty file" in files[0].problem
    if name == "results.csv":
        assert n == 0


def test_a_stale_samples_block_without_its_row_fails(tmp_path: Path) -> None:
    """A kill between a replicate's samples and its row: a folder holding only the block."""
    assert _write(tmp_path, [], _samples("a0")) == {"samples without a row"}
    (tmp_path / "resumed").mkdir()  # the resume re-ran it as another attempt: still stale
    found = _write(tmp_path / "resumed", [_row(attempt_id="b0")], _samples("a0") + _samples("b0"))
    assert found == {"samples without a row"}


def test_samples_of_a_row_that_is_not_ok_fail(tmp_path: Path) -> None:
    crash = _row(status="crash", attempt_id="a0", **dict.fromkeys(
        ("steady_p10_s", "steady_median_s", "steady_p90_s", "steady_mean_s", "steady_iters",
         "samples_per_s", "cold_first_iter_s", "cold_pass_s", "flops_per_sample"), ""))
    assert _write(tmp_path, [crash], _samples("a0")) == {"samples without a row"}


def test_an_ok_row_without_samples_fails(tmp_path: Path) -> None:
    assert _write(tmp_path, [_row(attempt_id="a0")], []) == {"rows without samples"}
    (tmp_path / "none").mkdir()
    CsvAppender(tmp_path / "none" / "results.csv", RESULT_COLUMNS).append([_row()])
    _, findings = checks.check_run(tmp_path / "none")  # and no samples.csv at all
    assert {f.check for f in findings} == {"rows without samples"}


def test_the_folder_checks_print_and_fail_on_the_command_line(tmp_path: Path) -> None:
    from .conftest import run_cli

    _write(tmp_path, [], _samples("a0"))
    proc = run_cli("check", str(tmp_path))
    assert proc.returncode == 1, proc.stdout
    assert "FAIL samples without a row (1 findings)" in proc.stdout
    assert "3 sample(s) of attempt a0 have no row in results.csv" in proc.stdout


def test_the_gpu_fixture_has_one_throttled_replicate_and_no_short_energy_window() -> None:
    run = (Path(__file__).parents[1] / "fixtures" / "reports" / "fixture-gpu-box"
           / "fixture-20261129T120000Z-gpu")
    _, findings = checks.check_run(run)
    throttled = [f for f in findings if f.check == "throttled"]
    assert len(throttled) == 1 and "sw_power_cap 38%" in throttled[0].problem
    assert "resnet50 cuda train b128" in throttled[0].where and "#r2" in throttled[0].where
    assert not [f for f in findings if f.check == "energy window"]


@pytest.mark.parametrize(("codes", "sittings", "found"), [
    ({1: "aaaa", 2: "bbbb"}, (1, 2), True),   # two sittings with rows, two codes
    ({1: "aaaa", 2: "aaaa"}, (1, 2), False),  # the same code
    ({1: "aaaa", 2: "bbbb"}, (1, 1), False),  # sitting 2 ran and wrote nothing
    ({2: "bbbb"}, (1, 2), False),             # sitting 1 predates the record: nothing to tell
])
def test_sittings_that_ran_other_measuring_code(tmp_path: Path, codes: dict[int, str],
                                                sittings: tuple[int, int], found: bool) -> None:
    """env.json's sitting records (``bench.run.store.source``) against the sittings that wrote
    rows."""
    records = [{"sitting": n, "code": c, "commit": None} for n, c in codes.items()]
    (tmp_path / "env.json").write_text(json.dumps({"sittings": [*records, "junk"]}))
    rows = [_row(sitting=sittings[0]), _row(replicate=1, sitting=sittings[1])]
    CsvAppender(tmp_path / "results.csv", RESULT_COLUMNS).append(rows)
    CsvAppender(tmp_path / "samples.csv", SAMPLE_COLUMNS).append(
        [{"cell_id": "c1", "replicate": r, "phase": "steady", "iter": i, "batch_size": 8,
          "resolution": 224, "seconds": x} for r in (0, 1) for i, x in enumerate([0.1] * 3)])
    _, findings = checks.check_run(tmp_path)
    said = [f.problem for f in findings if f.check == "measuring code"]
    assert bool(said) == found, said
    if found:
        assert said == ["its sittings ran different measuring code, pooled as one run: "
                        "sitting 1 aaaa (1 row); sitting 2 bbbb (1 row)"]


def test_a_pipeline_window_inside_the_workers_start_up_is_found(tmp_path: Path) -> None:
    """Two workers are handed four batches at start-up: a window that began after the first
    (iter 1) timed three of them; one that began after four timed none."""
    pipe = _row(kind="pipeline", model="pipeline", device="cpu", num_workers=2, decoder="pil",
                cudnn_benchmark="n/a", cudnn_deterministic="n/a", eff_cudnn_benchmark="",
                eff_cudnn_deterministic="", eff_cudnn_allow_tf32="", flops_per_sample="",
                steady_iters=4, steady_p10_s=0.09, steady_median_s=0.1, steady_p90_s=0.11,
                samples_per_s=80.0)

    def window(run: Path, first: int) -> set[str]:
        samples = [{"cell_id": "c1", "replicate": 0, "phase": "steady", "iter": first + i,
                    "batch_size": 8, "resolution": 224, "seconds": x}
                   for i, x in enumerate([0.1, 0.09, 0.11, 0.1])]
        return _write(run, [pipe], samples)

    assert window(tmp_path / "burst", 1) == {"pipeline start-up"}
    assert window(tmp_path / "past", 4) == set()


def test_a_folder_that_is_not_a_run_is_one_line_naming_what_is(tmp_path: Path) -> None:
    from .conftest import run_cli

    missing = run_cli("check", str(tmp_path / "gone"))
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1
    assert "not found; bench check takes run folders" in missing.stderr
    (tmp_path / "box").mkdir()
    _write(tmp_path / "box" / "run-a", [_row()], _samples("a0"))
    above = run_cli("check", str(tmp_path / "box"))  # the machine folder, not its run
    assert above.returncode != 0 and above.stderr.count("\n") == 1
    assert above.stderr.strip().endswith("the run folders in it: run-a"), above.stderr


def test_the_orders_a_row_keeps_pass_an_honest_row_at_their_bounds(tmp_path: Path) -> None:
    """Quantiles equal to round-off, a zero energy, a window just the two slower steps of
    three (each at least the median) long: none is a finding."""
    row = _row(steady_p10_s=0.1, steady_p90_s=0.1 * (1 - 1e-7), steady_p95_s=0.11,
               steady_p99_s="", joules_per_sample=0.0, mean_power_w=0.0, energy_window_s=0.2,
               wall_s=0.2)
    assert _run(tmp_path, [row]) == set()


def test_the_end_of_a_run_prints_the_findings_grouped_with_the_command(tmp_path: Path) -> None:
    """What ``bench run`` and ``bench advise`` print after the run is written."""
    from bench.run.store.check import ending_lines

    rows = [_row(replicate=r, attempt_id=f"a{r}") for r in range(3)]
    rows[1]["energy_j"] = -1.0
    rows[2]["wall_s"] = 0.01
    _write(tmp_path, rows, [s | {"replicate": r, "attempt_id": f"a{r}"}
                            for r in range(3) for s in _samples()])
    lines = ending_lines(tmp_path, shown=1)
    assert lines[0] == ("bench check: 2 findings (1 energy and power >= 0, "
                        "1 window >= its steady steps)")
    assert lines[1:3] == ["  energy and power >= 0 (1):",
                          f"    {tmp_path / 'results.csv'}:3 fixture cell #r1: energy_j is "
                          "negative: -1.0"]
    assert lines[-1] == f"  and 1 more: python -m bench check {tmp_path}"
    assert ending_lines(tmp_path)[-1] == f"  see them all: python -m bench check {tmp_path}"
    (tmp_path / "ok").mkdir()
    _write(tmp_path / "ok", [_row()], _samples())
    assert ending_lines(tmp_path / "ok") == [
        f"bench check: no findings (python -m bench check {tmp_path / 'ok'})"]
