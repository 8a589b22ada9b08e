"""The runner's status paths, driven through a fake launcher and a fake clock (no torch).

The fakes stand in for the process launcher only: the runner's own scheduling, timeout,
classification and writing code is what runs.
"""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.run.execute import runner
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import Cell
from bench.run.plan.profiles import load_profile
from bench.run.protocol import Task
from bench.run.store.resume import completed_keys
from bench.run.store.store import RunStore
from bench.schema import RESULT_COLUMNS, SAMPLE_COLUMNS

from .conftest import read_csv
from .fakes import ENV, FakeChild, FakeLauncher, Seen


def _run(tmp_path: Path, launcher: FakeLauncher, profile: str = "smoke", cuda: bool = False,
         done: set[tuple[str, str, int]] | None = None, only: str = "modes") -> tuple[int, Path]:
    from bench.run.plan.matrix import select

    prof = select(load_profile(profile), [only])
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", prof.name, runner.Probe(ENV, [], cuda))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path)
    code = r.run(plan(prof), done or set())
    assert not launcher.closed, "the launcher belongs to whoever opened it, not the runner"
    return code, store.results_path


def test_ok_rows_carry_numbers_and_samples(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    code, results = _run(tmp_path, launcher)
    assert code == 0
    rows = read_csv(results)
    assert list(rows[0]) == list(RESULT_COLUMNS)
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}
    assert rows[0]["steady_median_s"] == "0.5" and rows[0]["eff_num_threads"] == "2"
    assert rows[0]["fingerprint_id"] == "f" * 12 and rows[0]["run_id"] == "run1"
    # what a replicate could not do without failing is kept: an empty FLOP count has a reason
    assert rows[0]["notes"] == "flop count failed: TypeError: not a module"
    samples = read_csv(results.parent / "samples.csv")
    assert list(samples[0]) == list(SAMPLE_COLUMNS) and len(samples) == 16
    # the FLOP count is made once per model and shape, then handed to later replicates
    assert launcher.launched[0].task.flops_per_sample is None
    assert [s.task.flops_per_sample for s in launcher.launched[4:]] == [1e9] * 4
    assert {s.timeout_s for s in launcher.launched} == {120.0}, "the owner gets the timeout"


def test_replicates_are_interleaved_across_cells(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    _run(tmp_path, launcher)
    order = [(s.task.cell.mode, s.task.cell.memory_format, s.task.replicate)
             for s in launcher.launched]
    assert [r for *_, r in order] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert order[:4] == [(m, f, 0) for m in ("infer", "train") for f in ("nchw", "channels_last")]


@pytest.mark.parametrize(("behaviour", "status", "reason"), [
    ("segv", "crash", "SIGSEGV without a result; last output: Fatal Python error"),
    ("exit3", "crash", "exit code 3 without a result"),
    ("bad-record", "crash", "unreadable result: Record: unknown field 'bogus'"),
    ("oom", "oom", "OutOfMemoryError: CUDA out of memory"),
    ("hang", "timeout", "no result after 120 s; process group killed"),
    ("garbage", "crash", "launcher failed: fork server sent garbage: b'x'"),
])
def test_failures_keep_their_row_with_empty_numbers(tmp_path: Path, behaviour: str, status: str,
                                                    reason: str) -> None:
    launcher = FakeLauncher({1: behaviour})
    code, results = _run(tmp_path, launcher)
    assert code == 0, "a failed cell is data, not a failed run"
    rows = read_csv(results)
    assert len(rows) == 8
    bad = rows[1]
    assert (bad["status"], bad["reason"]) == (status, reason)
    assert all(bad[c] == "" for c in ("steady_median_s", "samples_per_s", "cold_pass_s"))
    assert {r["status"] for i, r in enumerate(rows) if i != 1} == {"ok"}
    # the runner signals nothing: a timed-out child was ended by its owner, and one whose
    # launcher failed is handed back to it to be stopped
    assert launcher.stopped == (["mobilenet_v3_small"] if behaviour == "garbage" else [])
    if behaviour in ("segv", "hang", "exit3"):
        assert (results.parent / "logs").is_dir() or behaviour != "segv"


def test_interrupt_kills_the_child_keeps_rows_and_exits_non_zero(tmp_path: Path) -> None:
    launcher = FakeLauncher({2: "interrupt"})
    code, results = _run(tmp_path, launcher)
    assert code == 130
    rows = read_csv(results)
    assert [r["status"] for r in rows] == ["ok", "ok", "interrupted"]
    assert launcher.stopped == ["mobilenet_v3_small"]
    assert len(launcher.launched) == 3


def test_resume_skips_what_is_ok_under_the_same_fingerprint(tmp_path: Path) -> None:
    _run(tmp_path, FakeLauncher({2: "interrupt"}))
    store = RunStore(tmp_path / "run")
    done = completed_keys(store.existing_rows(), "f" * 12)
    assert len(done) == 2
    assert completed_keys(store.existing_rows(), "0" * 12) == set()
    launcher = FakeLauncher()
    code, results = _run(tmp_path, launcher, done=done)
    assert code == 0 and len(launcher.launched) == 6
    rows = read_csv(results)
    assert len(rows) == 3 + 6 and sum(r["status"] == "ok" for r in rows) == 8


def test_cuda_cells_without_cuda_are_skipped_without_a_process(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    code, results = _run(tmp_path, launcher, only="cuda")
    assert code == 0 and launcher.launched == []
    rows = read_csv(results)
    assert {(r["status"], r["reason"]) for r in rows} == {("skipped", "no-cuda")}


def test_cuda_cells_with_cuda_are_launched(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    _run(tmp_path, launcher, only="cuda", cuda=True)
    assert [s.task.cell.cudnn_benchmark for s in launcher.launched] == ["off", "on"] * 2


def test_repro_runs_two_processes_and_the_second_compares(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    _run(tmp_path, launcher, only="repro")
    repro = [s.task for s in launcher.launched if s.task.op == "repro"]
    assert len(repro) == 2
    assert repro[0].repro_out and repro[1].repro_ref == repro[0].repro_out


def test_fault_spec_is_handed_to_the_worker(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    prof = load_profile("smoke")
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("r", "smoke", runner.Probe(ENV, [], False), fault="crash@#r1")
    runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path).run(
        plan(prof)[:1])
    assert launcher.launched[0].task.fault == "crash@#r1"


def test_shared_cells_stay_interleaved_with_both_arms(tmp_path: Path) -> None:
    import tomllib

    from bench.run.plan.profiles import parse_profile

    prof = parse_profile(tomllib.loads("""
[defaults]
replicates = 2
[studies.a]
mode = ["infer", "train"]
[studies.b]
mode = "train"
batch_size = [1, 4]
"""), "t")
    order = [(j.cell.mode, j.cell.batch_size, j.replicate) for j in plan(prof)]
    # round 0 covers every cell (including b's arm that a does not have), then round 1
    assert order == [("infer", 1, 0), ("train", 1, 0), ("train", 4, 0),
                     ("infer", 1, 1), ("train", 1, 1), ("train", 4, 1)]


class ExplodingLauncher(FakeLauncher):
    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> FakeChild:
        if len(self.launched) == 1:
            self.launched.append(Seen(Task.from_json(task_path.read_text()), timeout_s))
            raise KeyError("surprise")
        return super().launch(task_path, timeout_s, warm)


def test_an_unexpected_runner_error_becomes_a_crash_row(tmp_path: Path) -> None:
    code, results = _run(tmp_path, ExplodingLauncher())
    assert code == 0
    rows = read_csv(results)
    assert len(rows) == 8
    assert rows[1]["status"] == "crash" and rows[1]["reason"] == "runner error: KeyError: " \
                                                                 "'surprise'"


def test_an_interrupt_after_the_row_is_written_adds_no_interrupted_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = RunStore.add
    calls = {"n": 0}
    # The signal lands on another thread (as a process-directed signal may, e.g. on tqdm's
    # monitor thread): a signal mask on the main thread alone would not hold it back.
    idle = threading.Event()
    other = threading.Thread(target=idle.wait, daemon=True)
    other.start()

    def add_then_interrupt(self: RunStore, row: dict[str, Any], samples: Any = (),
                           between: Any = None) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            assert other.ident is not None
            signal.pthread_kill(other.ident, signal.SIGINT)  # Ctrl-C while the row is written
            time.sleep(0.05)  # let the interpreter run the handler here, mid-write
        original(self, row, samples, between)

    monkeypatch.setattr(RunStore, "add", add_then_interrupt)
    try:
        code, results = _run(tmp_path, FakeLauncher())
    finally:
        idle.set()
    assert code == 130
    assert [r["status"] for r in read_csv(results)] == ["ok", "ok"]


CACHE_PROFILE = """
[defaults]
replicates = 2
[studies.caches]
kernel_cache = ["fresh", "warm"]
"""
#: a warm cell without its fresh twin in the run: its cache is primed by a process of its own
WARM_ONLY_PROFILE = """
[defaults]
replicates = 2
[studies.caches]
kernel_cache = ["warm"]
"""


def _cache_run(tmp_path: Path, text: str, launcher: FakeLauncher) -> RunStore:
    import tomllib

    from bench.run.plan.profiles import parse_profile

    prof = parse_profile(tomllib.loads(text), "t")
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", "t", runner.Probe(ENV, [], False))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path / "work")
    assert r.run(plan(prof)) == 0
    return store


def _ops(launcher: FakeLauncher) -> list[tuple[str, str, int]]:
    return [(s.task.op, s.task.cell.kernel_cache, s.task.replicate) for s in launcher.launched]


def test_every_replicate_gets_its_own_kernel_cache_and_the_row_says_which(
        tmp_path: Path) -> None:
    launcher = FakeLauncher()
    store = _cache_run(tmp_path, CACHE_PROFILE, launcher)
    # the warm cell's cache is what its fresh twin's first replicate left: no priming process
    assert _ops(launcher) == [("measure", "fresh", 0), ("measure", "warm", 0),
                              ("measure", "fresh", 1), ("measure", "warm", 1)]
    folders = [s.task.cache_dir for s in launcher.launched]
    assert len(set(folders)) == len(folders), "no two processes share a cache folder"
    fresh = [s for s in launcher.launched if s.task.cell.kernel_cache == "fresh"]
    assert all(s.cache_files == [] for s in fresh), "fresh means empty"
    warm = [s for s in launcher.launched if s.task.cell.kernel_cache == "warm"]
    # each warm replicate starts from a copy of the twin's cache, not from another warm one's
    assert [s.cache_files for s in warm] == [["kernel-1.bin"]] * 2
    rows = read_csv(store.results_path)
    assert [(row["kernel_cache"], row["kernel_cache_start_bytes"],
             row["kernel_cache_end_bytes"]) for row in rows] == [
        ("fresh", "0", "4096"), ("warm", "4096", "8192"),
        ("fresh", "0", "4096"), ("warm", "4096", "8192")]
    assert all(not Path(f).exists() for f in folders), "replicate folders are removed"


def test_a_warm_cell_without_its_fresh_twin_is_primed_once_by_a_process_of_its_own(
        tmp_path: Path) -> None:
    launcher = FakeLauncher()
    store = _cache_run(tmp_path, WARM_ONLY_PROFILE, launcher)
    assert _ops(launcher) == [("prime", "warm", 0), ("measure", "warm", 0),
                              ("measure", "warm", 1)]
    assert launcher.launched[0].cache_files == [], "the priming process starts empty"
    assert [s.cache_files for s in launcher.launched[1:]] == [["kernel-1.bin"]] * 2
    rows = read_csv(store.results_path)
    assert [row["kernel_cache_start_bytes"] for row in rows] == ["4096", "4096"]


def test_a_failed_twin_leaves_the_warm_cell_to_prime_its_own_cache(tmp_path: Path) -> None:
    launcher = FakeLauncher({0: "oom"})  # the fresh twin's first replicate runs out of memory
    store = _cache_run(tmp_path, CACHE_PROFILE, launcher)
    assert _ops(launcher) == [("measure", "fresh", 0), ("prime", "warm", 0),
                              ("measure", "warm", 0), ("measure", "fresh", 1),
                              ("measure", "warm", 1)]
    rows = read_csv(store.results_path)
    assert [r["status"] for r in rows] == ["oom", "ok", "ok", "ok"]


def test_a_failed_priming_is_the_warm_replicates_status(tmp_path: Path) -> None:
    launcher = FakeLauncher({0: "oom"})  # the prime process runs out of memory
    store = _cache_run(tmp_path, WARM_ONLY_PROFILE, launcher)
    rows = read_csv(store.results_path)
    assert [r["status"] for r in rows] == ["oom", "oom"]
    assert rows[0]["reason"] == ("priming the warm kernel cache failed: OutOfMemoryError: "
                                 "CUDA out of memory")
    assert [s.task.op for s in launcher.launched].count("prime") == 1, "primed once, not retried"


def test_a_run_counts_flops_once_per_model_mode_and_mix_of_resolutions() -> None:
    """``flops_key``: a torchvision model's count is shared across batches, layouts and
    precisions, not across modes or resolutions; a user's model only with its schedule."""
    key = runner.flops_key
    base = Cell(model="resnet50", mode="infer", batch_size=8, resolution=224)
    same = [replace(base, batch_size=1), replace(base, shapes="ragged"),
            replace(base, memory_format="channels_last"), replace(base, precision="amp-bf16")]
    assert {key(c) for c in same} == {key(base)}
    differ = [replace(base, mode="train"), replace(base, resolution=128),
              replace(base, shapes="dynamic", shape_count=4), replace(base, model="resnet18")]
    assert len({key(c) for c in [base, *differ]}) == 5
    user = replace(base, model="models.py:net", input_shape="3,8,8")
    assert key(user) != key(replace(user, batch_size=1))
