"""Real runs on the CPU: the CLI, the fork server, the worker and torch, nothing faked.

Faults are injected through TORCH_KNOBS_FAULT, which the worker honours; the launch, timeout
and status code paths are the real ones.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.run.child import rapl
from bench.run.store.check import check_run
from bench.run.store.numbounds import NUMERICS
from bench.schema import RESULT_COLUMNS, SAMPLE_COLUMNS, STATUSES

from .conftest import ROOT, TINY_PROFILE, Cli, read_csv, read_json, run_cli
from .procs import assert_none_survive, descendants

pytestmark = pytest.mark.e2e


def _num(row: dict[str, str], col: str) -> float:
    return float(row[col])


def test_smoke_profile_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "smoke"
    proc = run_cli("run", "--profile", "smoke", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert {"results.csv", "samples.csv", "env.json"} <= {p.name for p in out.iterdir()}
    rows = read_csv(out / "results.csv")
    assert list(rows[0]) == list(RESULT_COLUMNS)
    assert all(r["status"] in STATUSES for r in rows)
    cuda = [r for r in rows if r["device"] == "cuda"]
    assert cuda and {(r["status"], r["reason"]) for r in cuda} == {("skipped", "no-cuda")}
    assert all(r["steady_median_s"] == "" for r in cuda)
    ok = [r for r in rows if r["status"] == "ok" and r["kind"] == "model"]
    assert len(ok) == 12
    for r in ok:
        assert _num(r, "steady_p10_s") <= _num(r, "steady_median_s") <= _num(r, "steady_p90_s")
        # the latency tails are real order statistics of this replicate's iterations
        assert _num(r, "steady_p90_s") <= _num(r, "steady_p95_s") <= _num(r, "steady_p99_s")
        assert _num(r, "steady_p99_s") > 0
        # a machine without readable RAPL counters measures no energy and says why; one
        # with them says what the figure covers (never a nameplate estimate)
        if rapl.domains():
            assert r["energy_method"] == "rapl" and _num(r, "joules_per_sample") > 0
        else:
            assert (r["energy_method"], r["energy_reason"]) == ("none", rapl.NO_COUNTERS)
            assert r["energy_j"] == r["joules_per_sample"] == r["mean_power_w"] == ""
        assert r["throttled"] == ""  # nothing samples a CPU's clocks
        assert _num(r, "cold_first_iter_s") > 0 and _num(r, "cold_pass_s") >= _num(
            r, "cold_first_iter_s")
        assert int(r["steady_iters"]) >= 3
        assert _num(r, "flops_per_sample") > 0 and _num(r, "peak_rss_bytes") > 0
        # throughput is the batch over the mean step (a whole-cycle rate). Not a band around
        # p10/p90: one slow iteration on a busy machine pulls the mean past p90.
        if r["shapes"] == "static":
            expected = float(r["batch_size"]) / _num(r, "steady_mean_s")
            assert _num(r, "samples_per_s") == pytest.approx(expected, rel=1e-3)
        assert r["eff_num_threads"] == str(len(os.sched_getaffinity(0)))
        assert r["eff_conv_math"] == "fp32" and r["eff_cudnn_benchmark"] == ""
    _numerics_checked(rows, out)
    dyn = next(r for r in ok if r["shapes"] == "dynamic")
    assert dyn["shape_count"] == "3" and _num(dyn, "cold_pass_s") > _num(dyn, "cold_first_iter_s")
    repro = [r for r in rows if r["kind"] == "repro" and r["device"] == "cpu"]
    assert len(repro) == 1 and repro[0]["status"] == "ok"
    # the CUDA re-run checks (benchmark off and on) are rows too, skipped without CUDA
    assert {(r["cudnn_benchmark"], r["status"]) for r in rows if r["kind"] == "repro"
            and r["device"] == "cuda"} == {("off", "skipped"), ("on", "skipped")}
    assert repro[0]["repro_bitwise_equal"] in ("true", "false")
    assert repro[0]["repro_max_abs_diff"] != ""
    ceilings = {r["model"]: r for r in rows if r["kind"] == "ceiling"}
    assert ceilings["matmul-fp32"]["work_unit"] == "flop"
    assert ceilings["copy"]["work_unit"] == "byte"
    samples = read_csv(out / "samples.csv")
    assert list(samples[0]) == list(SAMPLE_COLUMNS)
    steady = [s for s in samples if s["phase"] == "steady"]
    per_replicate = {(r["cell_id"], r["replicate"]) for r in ok}
    assert per_replicate <= {(s["cell_id"], s["replicate"]) for s in steady}
    env = read_json(out / "env.json")
    for key in ("fingerprint_id", "machine", "python", "os", "torch", "cpu", "gpus",
                "flag_defaults"):
        assert key in env
    assert env["torch"]["version"] and env["torch"]["torchvision"]
    assert env["flag_defaults"]["cudnn.benchmark"] is False
    assert {r["fingerprint_id"] for r in rows} == {env["fingerprint_id"]}
    assert env["planned_rows"] == len(rows)  # a whole run writes every planned row
    assert env["bench"]["workload_version"] >= 3
    # every replicate started from an empty kernel cache of its own, and the row says so
    timed = [r for r in rows if r["status"] == "ok" and r["kind"] != "repro"]
    assert {(r["kernel_cache"], r["kernel_cache_start_bytes"]) for r in timed} == {("fresh", "0")}
    assert env["memory"]["total_bytes"] > 2**20  # for the Compare page's hardware rows


def _numerics_checked(rows: list[dict[str, str]], out: Path) -> None:
    """The smoke profile's modes study checks its numerics in the first replicate of each cell
    (inference and training, NCHW and channels_last); its other replicates and the other
    studies do not; bench check finds them in bounds."""
    ok = [r for r in rows if r["status"] == "ok" and r["kind"] == "model"]
    checked = [r for r in ok if r["study"] == "modes" and r["replicate"] == "0"]
    assert {(r["mode"], r["memory_format"]) for r in checked} == {
        (m, f) for m in ("infer", "train") for f in ("nchw", "channels_last")}
    for r in checked:
        assert r["num_reference"] in ("fp64-cpu", "fp32-strict"), r["notes"]
        assert int(r["num_inputs"]) >= 256 and _num(r, "num_time_s") > 0
        assert 0 <= _num(r, "num_rel_err") < 1e-3 and _num(r, "num_cosine") > 0.999
        assert 0 <= _num(r, "num_top1_agree") <= 1
        if r["mode"] == "train":
            assert r["num_train_steps"] == "5" and 0 <= _num(r, "num_param_drift") < 1e-3
            assert _num(r, "num_loss_rel_diff") < 1e-3
        else:
            assert r["num_train_steps"] == r["num_loss"] == ""
    assert all(r["num_reference"] == r["num_time_s"] == "" for r in ok if r not in checked)
    assert not [f for f in check_run(out)[1] if f.check == NUMERICS]


#: Where each injected fault goes: one real run of nine replicates takes all four, each between
#: two replicates that run as usual, and each test reads its own three rows.
FAULTED_AT = {"crash": 1, "exit": 3, "oom": 5, "error": 7}


def _module_profile(factory: pytest.TempPathFactory, name: str, replicates: int,
                    timeout_s: float) -> tuple[Path, Path]:
    """A tiny profile in a folder shared by one module's tests, and the run folder beside it."""
    base = factory.mktemp(name)
    profile = base / "tiny.toml"
    profile.write_text(TINY_PROFILE.format(replicates=replicates, timeout_s=timeout_s))
    return profile, base / "run"


@pytest.fixture(scope="module")
def faulted_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    profile, out = _module_profile(tmp_path_factory, "faults", 9, 60.0)
    faults = ",".join(f"{fault}@#r{r}" for fault, r in FAULTED_AT.items())
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCH_KNOBS_FAULT": faults})
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out / "results.csv")
    assert [r["replicate"] for r in rows] == [str(i) for i in range(9)]
    return rows


@pytest.mark.parametrize(("fault", "status", "reason"), [
    ("crash", "crash", "SIGSEGV without a result"),
    ("exit", "crash", "exit code 3 without a result"),
    ("oom", "oom", "OutOfMemoryError: CUDA out of memory"),
    ("error", "error", "InjectedError: injected fault in the model step"),
])
def test_faults_are_classified_and_the_matrix_goes_on(
        faulted_rows: list[dict[str, str]], fault: str, status: str, reason: str) -> None:
    at = FAULTED_AT[fault]
    rows = faulted_rows[at - 1:at + 2]
    assert [r["status"] for r in rows] == ["ok", status, "ok"]
    assert reason in rows[1]["reason"]
    assert rows[1]["steady_median_s"] == "" and rows[1]["cold_pass_s"] == ""


def test_kernel_caches_are_per_replicate_and_warm_ones_are_primed(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    """The real child aims the CUDA JIT cache at its own folder: the fill-cache fault writes
    where CUDA_CACHE_PATH points, as a kernel compile would, and the row measures that folder."""
    out = tmp_path / "run"
    profile = tiny_profile(replicates=2, extra='kernel_cache = ["fresh", "warm"]\n')
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCH_KNOBS_FAULT": "fill-cache"})
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(out / "results.csv")
    assert [(r["status"], r["kernel_cache"], r["kernel_cache_start_bytes"],
             r["kernel_cache_end_bytes"]) for r in rows] == [
        ("ok", "fresh", "0", "4096"), ("ok", "warm", "4096", "8192"),
        ("ok", "fresh", "0", "4096"), ("ok", "warm", "4096", "8192")]
    assert "cache=warm" in rows[1]["cell_name"] and "cache" not in rows[0]["cell_name"]


#: The replicate each never-ending fault is injected into, in one run of three replicates whose
#: last runs as usual: a hang, and a hang that prints without end.
TIMED_OUT_AT = {"hang": 0, "spam": 1}


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, str]],
                                                                  float]:
    """The run folder, its rows and the run's wall time."""
    profile, out = _module_profile(tmp_path_factory, "timeouts", 3, 3)
    faults = ",".join(f"{fault}@#r{r}" for fault, r in TIMED_OUT_AT.items())
    t0 = time.monotonic()
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCH_KNOBS_FAULT": faults}, timeout=120)
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    return out, read_csv(out / "results.csv"), took


@pytest.mark.parametrize("fault", ["hang", "spam"])
def test_timeout_kills_the_process_group_even_while_it_prints(
        timed_out: tuple[Path, list[dict[str, str]], float], fault: str) -> None:
    out, rows, took = timed_out
    at = TIMED_OUT_AT[fault]
    assert [rows[at]["status"], rows[-1]["status"]] == ["timeout", "ok"]
    assert "no result after 3 s" in rows[at]["reason"]
    assert took < 90
    if fault == "spam":
        (log,) = (out / "logs").glob(f"*-r{at}.log")
        assert "spam" in log.read_text() and log.stat().st_size <= 64 * 1024


def _wait_for_rows(path: Path, n: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= n + 1:
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never reached {n} rows")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_interrupt_then_resume(tmp_path: Path, tiny_profile: Callable[..., Path],
                               signum: int) -> None:
    out = tmp_path / "run"
    profile = str(tiny_profile(replicates=3))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCH_KNOBS_FAULT": "hang@#r1"}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", "--profile", profile,
                             "--out", str(out)], env=env, cwd=ROOT, stderr=subprocess.PIPE,
                            text=True)
    results = out / "results.csv"
    _wait_for_rows(results, 1)
    time.sleep(1.0)  # replicate 1 is now hanging in its child
    started = [p.pid for p in descendants(proc.pid)]
    assert len(started) == 2, "the fork server and its hanging child"
    before = results.read_bytes()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (143 if signum == signal.SIGTERM else 130), err
    after = results.read_bytes()
    assert after.startswith(before), "rows already written must stay intact"
    rows = read_csv(results)
    assert [r["status"] for r in rows] == ["ok", "interrupted"]
    assert "--resume" in err
    assert_none_survive(pids=started)  # the hanging child was ended, and its server
    resumed = run_cli("run", "--profile", profile, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    rows = read_csv(results)
    assert [(r["replicate"], r["status"]) for r in rows] == [
        ("0", "ok"), ("1", "interrupted"), ("1", "ok"), ("2", "ok")]
    assert "2 processes to run, 1 already done" in resumed.stderr


@pytest.fixture(scope="module")
def spawned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One replicate run through the spawn launcher: its profile and its run folder (which
    the test of a second run into the same folder reuses)."""
    profile, out = _module_profile(tmp_path_factory, "spawned", 1, 60.0)
    proc = run_cli("run", "--profile", str(profile), "--out", str(out), "--launcher", "spawn")
    assert proc.returncode == 0, proc.stderr
    return profile, out


def test_existing_results_are_never_overwritten(spawned: tuple[Path, Path]) -> None:
    profile, out = spawned
    assert (out / "results.csv").exists()
    before = (out / "results.csv").read_bytes()
    again = run_cli("run", "--profile", str(profile), "--out", str(out))
    assert again.returncode == 2
    assert "already holds results; pass --resume" in again.stderr
    assert (out / "results.csv").read_bytes() == before


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def test_bad_input_fails_with_one_line_and_writes_nothing(
        tmp_path: Path, tiny_profile: Callable[..., Path], bench_cli: Cli) -> None:
    out = tmp_path / "never"
    line = _one_error_line(bench_cli("run", "--profile", "nosuch", "--out", str(out)))
    assert ("unknown profile 'nosuch'; valid choices: compile, contrib, cpu, full, gpu, "
            "smoke") in line
    bad_model = tiny_profile(extra='model = "resnet9000"\n')
    line = _one_error_line(bench_cli("run", "--profile", str(bad_model), "--out", str(out)))
    assert "unknown model(s) resnet9000" in line and "resnet50" in line and "vit_b_16" in line
    bad_value = tiny_profile(extra='precision = "fp8"\n')
    line = _one_error_line(bench_cli("run", "--profile", str(bad_value), "--out", str(out)))
    assert "unknown precision 'fp8'; valid choices: fp32, fp32-strict, amp-bf16, amp-fp16" in line
    broken = tmp_path / "broken.toml"
    broken.write_text("[studies.x\n")
    _one_error_line(bench_cli("run", "--profile", str(broken), "--out", str(out)))
    assert not out.exists()
    line = _one_error_line(bench_cli("run", "--profile", str(bad_value), "--out", str(out),
                                     "--budget", ""))
    assert "--budget '': not a positive duration; valid forms: 90s, 9m" in line
    # a negative one is the duration's error too, not argparse's "expected one argument"
    line = _one_error_line(bench_cli("run", "--profile", str(bad_value), "--out", str(out),
                                     "--budget", "-5m"))
    assert "--budget '-5m': not a positive duration; valid forms: 90s, 9m" in line
    # a budget the probe has spent before any replicate could end: refused, no empty folder
    line = _one_error_line(bench_cli("run", "--profile", str(tiny_profile()), "--out", str(out),
                                     "--budget", "0.001"))
    assert "nothing would run, so nothing was written; allow at least" in line
    assert not out.exists()
    reports = tmp_path / "reports"
    for run_id in ("../../elsewhere", "a/b", "..", "-x", "x" * 97):
        line = _one_error_line(bench_cli("run", "--profile", str(tiny_profile()), "--reports",
                                         str(reports), f"--run-id={run_id}"))
        assert line == (f"error: --run-id {run_id!r}: a run id is one folder name of letters, "
                        "digits, '.', '_' and '-', starting with a letter or digit, at most 96 "
                        "characters, without '..'")
    assert not reports.exists() and not (tmp_path / "elsewhere").exists()
    line = _one_error_line(bench_cli("status", "../elsewhere", "--reports", str(reports)))
    assert line.startswith("error: RUN_ID '../elsewhere': a run id is one folder name")


def test_cpu_dry_run_lists_cells_within_ten_minutes(tmp_path: Path, bench_cli: Cli) -> None:
    """By the estimate's own figures (no committed run to learn from, so nothing is scaled
    by the pace of a machine the other tests keep busy)."""
    proc = bench_cli("run", "--profile", "cpu", "--dry-run", "--reports", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["study", "cell", "id"]
    assert any("resnet50 cpu train b8 r224" in ln for ln in lines)
    total = next(ln for ln in lines if ln.endswith("see bench/run/plan/estimate.py)"))
    minutes = float(total.split("estimated ")[1].split(" min")[0])
    assert 0 < minutes <= 10


def test_a_gpu_dry_run_without_cuda_says_which_host_its_cuda_estimate_assumes(
        bench_cli: Cli) -> None:
    proc = bench_cli("run", "--profile", "gpu", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    if "[skipped: no-cuda]" not in proc.stdout:
        pytest.skip("CUDA is here: the plan is this machine's own")
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    last = proc.stdout.strip().splitlines()[-1]
    n = len(cores) if cores else os.cpu_count()
    assert last.startswith(f"on a CUDA machine with this one's {n} CPU core"), last


def test_spawn_launcher_gives_the_same_rows(spawned: tuple[Path, Path]) -> None:
    _, out = spawned
    rows = read_csv(out / "results.csv")
    assert [r["status"] for r in rows] == ["ok"] and float(rows[0]["steady_median_s"]) > 0


def test_env_prints_the_fingerprint() -> None:
    proc = run_cli("env")
    assert proc.returncode == 0, proc.stderr
    assert '"fingerprint_id"' in proc.stdout and '"flag_defaults"' in proc.stdout


def test_a_sigkilled_runner_leaves_no_process_behind(tmp_path: Path,
                                                     tiny_profile: Callable[..., Path]) -> None:
    """Nothing can run in the runner after a SIGKILL: its fork server sees it go and ends the
    hanging child itself, rather than both living on until the child's own alarm."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCH_KNOBS_FAULT": "hang@#r1"}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", "--profile",
                             str(tiny_profile(replicates=2)), "--out", str(out)], env=env,
                            cwd=ROOT, stderr=subprocess.DEVNULL)
    _wait_for_rows(out / "results.csv", 1)
    time.sleep(1.0)  # replicate 1 now hangs in its child
    started = [p.pid for p in descendants(proc.pid)]
    assert len(started) == 2, "the fork server and its hanging child"
    proc.kill()
    proc.wait()
    assert_none_survive(pids=started, within_s=10.0)


@pytest.mark.parametrize("signals", ["launched@#r1=INT,stopping@#r1=INT", "closing=INT"])
def test_a_second_ctrl_c_or_one_at_the_close_ends_with_130_and_the_resume_line(
        tmp_path: Path, tiny_profile: Callable[..., Path], signals: str) -> None:
    out = tmp_path / "run"
    env = {"TORCH_KNOBS_FAULT": "hang@#r1", "TORCH_KNOBS_SIGNAL": signals}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", "--profile",
                             str(tiny_profile(replicates=2, timeout_s=5)), "--out", str(out)],
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    children: set[int] = set()
    while proc.poll() is None:  # whatever it starts, however briefly, is checked at the end
        children.update(p.pid for p in descendants(proc.pid))
        time.sleep(0.2)
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("resume with: ")
    assert_none_survive(pids=children)
