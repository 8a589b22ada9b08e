"""Cluster runs: the Slurm executor's pieces with fakes, then the real thing against a real
single-node Slurm cluster (started by ``.ci/slurm-up.sh``; skipped with the reason when none
runs here, and a failure under CI, which starts one)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.run import runner, slurm
from bench.run.matrix import load_profile

from .conftest import ROOT, one_error_line, run_cli
from .test_walls import imported_by

# ---------------------------------------------------------------------------------------------
# Pieces, with fakes.


def test_options_map_onto_submitits_slurm_parameters() -> None:
    opts = slurm.Options("gpu-a100", 1, 90, "proj", "a100&80gb", {"qos": "high"})
    assert opts.parameters("name") == {
        "job_name": "name", "nodes": 1, "ntasks_per_node": 1, "time": 90, "exclusive": True,
        "signal_delay_s": 90, "partition": "gpu-a100", "gpus_per_node": 1, "account": "proj",
        "constraint": "a100&80gb", "additional_parameters": {"qos": "high"}}
    assert "partition" not in slurm.Options().parameters("n")
    assert slurm.parse_extra(["qos=high", "mem = 0"]) == {"qos": "high", "mem": "0"}
    with pytest.raises(slurm.SlurmError, match="expected KEY=VALUE"):
        slurm.parse_extra(["qos"])


def test_a_short_time_limit_is_warned_within_its_last_quarter() -> None:
    """submitit's 90 s warning would come as a 1-minute job starts: it is scaled down."""
    assert [slurm.Options(time_min=t).parameters("n")["signal_delay_s"]
            for t in (1, 2, 5, 6, 60)] == [15, 30, 75, 90, 90]


@pytest.mark.parametrize(("option", "line"), [
    (("--slurm-gpus-per-node", "-2"), "--slurm-gpus-per-node -2: expected 0 or more GPUs"),
    (("--slurm-time", "0"), "--slurm-time 0: expected at least 1 minute"),
    (("--out", "somewhere"), "--out is not used with --executor slurm: each shard writes "
                             "REPORTS/<machine>/<run-id>-shard<k>"),
    (("--launcher", "spawn"), "--launcher is not used with --executor slurm"),
])
def test_options_slurm_would_refuse_are_one_line_before_anything_is_written(
        tmp_path: Path, option: tuple[str, str], line: str) -> None:
    pytest.importorskip("submitit")
    proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", *option, "--reports",
                   str(tmp_path / "r"))
    assert proc.returncode == 2
    assert one_error_line(proc).startswith(f"error: {line}")
    assert not (tmp_path / "r").exists(), "nothing written"


def test_without_submitit_a_slurm_run_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    (shim / "submitit").mkdir(parents=True)  # an import of submitit that fails
    (shim / "submitit" / "__init__.py").write_text("raise ImportError('not installed')\n")
    proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", "--reports",
                   str(tmp_path / "r"), env={"PYTHONPATH": f"{shim}{os.pathsep}{ROOT}"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: --executor slurm needs submitit: "
                                   "pip install 'torch-knobs[slurm]'")
    assert not (tmp_path / "r").exists(), "nothing written"
    bare = run_cli("run", "--executor", "slurm", env={"PYTHONPATH": f"{shim}{os.pathsep}{ROOT}"})
    assert bare.stderr.strip() == proc.stderr.strip(), "the extra first, then --profile"


def test_the_submitting_side_never_imports_torch() -> None:
    pytest.importorskip("submitit")
    mods = imported_by(["bench.run.cluster", "bench.run.slurm", "submitit"],
                       first="import bench.cli; bench.cli.build_parser()")
    assert "torch" not in {m.split(".")[0] for m in mods}


class FakeJob:
    def __init__(self, job_id: str) -> None:
        self.job_id = job_id


class FakeExecutor:
    def __init__(self) -> None:
        self.params: list[dict[str, Any]] = []
        self.calls: list[tuple[Any, ...]] = []

    def update_parameters(self, **params: Any) -> None:
        self.params.append(params)

    def submit(self, fn: Any, *args: Any) -> FakeJob:
        self.calls.append((fn, *args))
        return FakeJob(str(100 + len(self.calls)))


def test_submit_records_one_job_per_shard_and_names_the_shard_function(tmp_path: Path) -> None:
    ex = FakeExecutor()
    sub = slurm.submit("smoke", [21, 2], tmp_path, "r1-smoke", slurm.Options(), executor=ex,
                       only=["modes"])
    assert sub.jobs == [["101"], ["102"]]
    assert [c[1:] for c in ex.calls] == [("smoke", str(tmp_path), "r1-smoke", k, 2, ["modes"])
                                         for k in (1, 2)]
    assert all(c[0] is slurm.run_shard for c in ex.calls), "a module function: pickled by name"
    assert [p["job_name"] for p in ex.params] == ["torch-knobs-r1-smoke-shard1",
                                                  "torch-knobs-r1-smoke-shard2"]
    again = slurm.Submission.load(slurm.slurm_folder(tmp_path, "r1-smoke"))
    assert again == sub
    slurm.submit("smoke", [21, 2], tmp_path, "r1-smoke", slurm.Options(), executor=ex,
                 record=again, which=[2])
    assert slurm.Submission.load(slurm.slurm_folder(tmp_path, "r1-smoke")).jobs == [
        ["101"], ["102", "103"]]


REFUSAL = ("sbatch: error: invalid partition specified: nosuch\n"
           "sbatch: error: Batch job submission failed: Invalid partition name specified")


class RefusingExecutor(FakeExecutor):
    """sbatch refusing the ``refuse``-th submission as submitit reports it: sbatch's stderr
    printed, then ``FailedJobError(stderr)`` (a RuntimeError), a pickle left behind."""

    def __init__(self, folder: Path, refuse: int) -> None:
        super().__init__()
        self.folder, self.refuse = folder, refuse

    def submit(self, fn: Any, *args: Any) -> FakeJob:
        if len(self.calls) + 1 == self.refuse:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / "0123abcd.pkl").write_bytes(b"pickle")
            print(REFUSAL, file=sys.stderr)
            raise RuntimeError(REFUSAL)
        return super().submit(fn, *args)


def test_a_refused_first_shard_is_one_line_and_leaves_the_run_id_free(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    folder = slurm.slurm_folder(reports, "r1")
    sinfo = FakeCommands({"sinfo": "debug*\ngpu-a100\n"})
    with pytest.raises(slurm.SlurmError) as err:
        slurm.submit("smoke", [21, 2], reports, "r1", slurm.Options(partition="nosuch"),
                     executor=RefusingExecutor(folder, 1), run=sinfo)
    assert str(err.value) == ("sbatch refused shard 1/2: invalid partition specified: nosuch; "
                              "partitions here: debug (the default), gpu-a100; nothing was "
                              "submitted")
    assert capsys.readouterr().err == "", "sbatch's words once, in the error line"
    assert not reports.exists(), "nothing of the run is left: the same run id can be used"


def test_a_refusal_after_some_shards_went_keeps_their_record_for_resume(tmp_path: Path) -> None:
    folder = slurm.slurm_folder(tmp_path, "r1")
    with pytest.raises(slurm.SlurmError) as err:
        slurm.submit("smoke", [21, 2, 3], tmp_path, "r1", slurm.Options(),
                     executor=RefusingExecutor(folder, 2), run=FakeCommands({}))
    assert str(err.value) == (f"sbatch refused shard 2/3: invalid partition specified: nosuch; "
                              f"shard(s) 1 (Slurm job 101) were submitted and are recorded in "
                              f"{folder}; fix the option and pass --resume to submit the rest")
    sub = slurm.Submission.load(folder)
    assert sub.jobs == [["101"], [], []]
    assert sorted(p.name for p in folder.iterdir()) == ["submission.json"], "no stray pickle"
    with pytest.raises(slurm.SlurmError, match="nothing more was submitted"):  # a resume too
        slurm.submit("smoke", sub.planned, tmp_path, "r1", slurm.Options(), record=sub,
                     which=[2, 3], executor=RefusingExecutor(folder, 1), run=FakeCommands({}))
    assert slurm.Submission.load(folder).jobs == [["101"], [], []]
    slurm.submit("smoke", sub.planned, tmp_path, "r1", slurm.Options(), record=sub,
                 which=[2, 3], executor=FakeExecutor())
    assert slurm.Submission.load(folder).jobs == [["101"], ["101"], ["102"]]


def test_a_shard_that_ends_non_zero_fails_its_job(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A returned code is a COMPLETED job to Slurm and submitit: the shard's must raise."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    handlers = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR2)]
    with pytest.raises(RuntimeError, match=r"shard 1/2 of run r1: bench run ended with exit "
                                           r"code 2; its rows are kept"):
        slurm.run_shard(str(tmp_path / "no-such-profile.toml"), str(tmp_path), "r1", 1, 2)
    assert [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR2)] == handlers


def test_a_shard_resumes_its_own_folder_when_an_earlier_job_left_one(tmp_path: Path) -> None:
    fresh = slurm.shard_argv("smoke", tmp_path, "r1", 2, 3, ["modes"])
    assert fresh == ["run", "--profile", "smoke", "--shard", "2/3", "--only", "modes",
                     "--reports", str(tmp_path), "--run-id", "r1-shard2"]
    folder = tmp_path / "some-machine" / "r1-shard2"
    folder.mkdir(parents=True)
    (folder / "results.csv").write_text("status\n")
    (folder / "env.json").write_text(json.dumps({"fingerprint_id": "aaaa1111bbbb"}))

    def node(machine: str, fp: str) -> Any:
        return lambda: {"machine": machine, "fingerprint_id": fp}

    same = slurm.shard_argv("smoke", tmp_path, "r1", 2, 3,
                            env_of_node=node("some-machine", "aaaa1111bbbb"))
    assert same[-3:] == ["--out", str(folder), "--resume"]
    assert slurm.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: None)[-3:] == [
        "--out", str(folder), "--resume"]  # no probe answer: bench run says what it finds


def test_a_shard_resubmitted_to_another_kind_of_node_gets_a_folder_of_its_own(
        tmp_path: Path) -> None:
    """A resume on a node whose fingerprint differs would be refused every time: it starts
    its own folder (suffixed when the machine's name is the same), found as shard 2's."""
    folder = tmp_path / "box" / "r1-shard2"
    folder.mkdir(parents=True)
    (folder / "results.csv").write_text("status\n")
    (folder / "env.json").write_text(json.dumps({"fingerprint_id": "aaaa1111bbbb"}))
    other_machine = slurm.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: {
        "machine": "other-box", "fingerprint_id": "cccc2222dddd"})
    assert other_machine[-4:] == ["--reports", str(tmp_path), "--run-id", "r1-shard2"]
    same_name = slurm.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: {
        "machine": "box", "fingerprint_id": "cccc2222dddd"})
    assert same_name[-2:] == ["--run-id", "r1-shard2-cccc2222"]
    second = tmp_path / "box" / "r1-shard2-cccc2222"
    second.mkdir()
    (second / "results.csv").write_text("status\n")
    (tmp_path / "box" / "r1-shard20").mkdir()
    (tmp_path / "box" / "r1-shard20" / "results.csv").write_text("status\n")
    assert slurm.shard_dirs(tmp_path, "r1", 2) == [folder, second]  # not shard 20's


class FakeCommands:
    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.seen: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> str:
        self.seen.append(list(command))
        return self.answers.get(command[0], "")


def test_the_queue_asks_squeue_then_scontrol() -> None:
    assert slurm.Queue(FakeCommands({"squeue": "RUNNING\n"})).state("7") == "RUNNING"
    ended = FakeCommands({"scontrol": "JobId=7 JobName=x JobState=CANCELLED Reason=None"})
    assert slurm.Queue(ended).state("7") == "CANCELLED"
    assert ended.seen[0][:3] == ["squeue", "-h", "-j"]
    assert slurm.Queue(FakeCommands({})).state("7") == "GONE"


def test_a_replicate_done_after_an_interruption_counts_once() -> None:
    rows = [{"kind": "model", "cell_id": "a", "replicate": "0", "status": "ok"},
            {"kind": "model", "cell_id": "b", "replicate": "0", "status": "interrupted"},
            {"kind": "model", "cell_id": "b", "replicate": "0", "status": "ok"},
            {"kind": "model", "cell_id": "c", "replicate": "0", "status": "oom"}]
    assert slurm.outcomes(rows) == (2, 1)


def _write_rows(folder: Path, statuses: Sequence[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["kind", "cell_id", "replicate", "status", "cell_name"])
        w.writeheader()
        for i, st in enumerate(statuses):
            w.writerow({"kind": "model", "cell_id": f"c{i}", "replicate": 0, "status": st,
                        "cell_name": f"cell {i}"})


def test_watch_follows_the_shard_folders_until_no_job_is_active(tmp_path: Path) -> None:
    sub = slurm.Submission("r1", "smoke", str(tmp_path), [2, 1], [["1"], ["2"]], {})
    states = iter([["RUNNING", "PENDING"], ["RUNNING", "RUNNING"], ["COMPLETED", "CANCELLED"]])

    class Q(slurm.Queue):
        def __init__(self) -> None:
            self.now: list[str] = []

        def state(self, job_id: str) -> str:
            return self.now[int(job_id) - 1]

    q = Q()
    out = io.StringIO()

    def sleep(_: float) -> None:  # each poll, the shards have written more
        q.now = next(states)
        _write_rows(tmp_path / "m" / "r1-shard1", ["ok", "ok"][: len(q.now)])

    q.now = next(states)
    code = slurm.watch(sub, q, stream=out, poll_s=0, sleep=sleep)
    text = out.getvalue()
    assert code == 1, "shard 2 was cancelled before it wrote its row"
    assert "shard 1/2: Slurm job 1 COMPLETED; 2 of 2 planned replicates done" in text
    assert "shard 2/2: Slurm job 2 CANCELLED; 0 of 1 planned" in text
    assert slurm.unfinished(sub, q) == [2]


def test_ctrl_c_while_watching_leaves_the_jobs_running_and_says_how_to_follow(
        tmp_path: Path) -> None:
    sub = slurm.Submission("r1", "smoke", str(tmp_path), [2], [["1"]], {})

    def ctrl_c(_: float) -> None:
        raise KeyboardInterrupt

    out = io.StringIO()
    try:
        code = slurm.watch(sub, slurm.Queue(FakeCommands({"squeue": "RUNNING"})), stream=out,
                           poll_s=0, sleep=ctrl_c)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped: a traceback")
    assert code == 130
    assert out.getvalue().strip().splitlines()[-1] == (
        f"stopped watching: the shard jobs keep running; python -m bench status r1 --reports "
        f"{tmp_path} reports them")


# ---------------------------------------------------------------------------------------------
# The real thing.


def _slurm_ready() -> str | None:
    """Why no Slurm cluster can be used here, or None when one answers with an idle node."""
    if shutil.which("sinfo") is None:
        return "Slurm is not installed (start one with: sudo .ci/slurm-up.sh)"
    out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0 or not set(out.stdout.split()) & {"idle", "mix", "alloc"}:
        return "no Slurm node is up (start one with: sudo .ci/slurm-up.sh)"
    try:
        import submitit  # noqa: F401
    except ImportError:
        return f"submitit is not installed (pip install '{slurm.EXTRA}')"
    return None


@pytest.fixture
def cluster() -> None:
    why = _slurm_ready()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"the Slurm tests must run under CI: {why}")
        pytest.skip(why)


def _ok_keys(reports: Path, run_id: str) -> list[tuple[str, str, str]]:
    keys = []
    for path in reports.glob(f"*/{run_id}-shard*/results.csv"):
        with open(path, newline="") as f:
            keys += [(r["kind"], r["cell_id"], r["replicate"]) for r in csv.DictReader(f)
                     if r["status"] in ("ok", "skipped")]
    return keys


SHARDS = ("--executor", "slurm", "--profile", "smoke", "--shards", "2", "--slurm-time", "15")


@pytest.mark.e2e
def test_a_smoke_run_over_two_slurm_shards_pools_into_one_fingerprint(
        cluster: None, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    proc = run_cli("run", *SHARDS, "--reports", str(reports), "--run-id", "t-smoke",
                   timeout=600)
    assert proc.returncode == 0, proc.stderr
    planned = len(runner.plan(load_profile("smoke")))
    keys = _ok_keys(reports, "t-smoke")
    assert len(keys) == len(set(keys)) == planned, "every replicate ok once"
    assert "shard 2/2: Slurm job" in proc.stderr and "COMPLETED" in proc.stderr
    folders = sorted(reports.glob("*/t-smoke-shard*"))
    assert [f.name for f in folders] == ["t-smoke-shard1", "t-smoke-shard2"]
    envs = [json.loads((f / "env.json").read_text()) for f in folders]
    assert [e["shard"]["spec"] for e in envs] == ["1/2", "2/2"]
    assert all(e["shard"]["slurm_job_id"] for e in envs)
    pytest.importorskip("pandas")
    from bench.report import analysis
    from bench.report.load import load_reports

    machines = analysis.analyse(load_reports(reports)).machines
    assert len(machines) == 1 and machines["n_runs"].iloc[0] == 2  # one fingerprint, 2 shards
    status = run_cli("status", "t-smoke", "--reports", str(reports))
    assert "2 of 2 shards complete" in status.stdout


def _submit_and_catch_shard_one(reports: Path, run_id: str) -> tuple[Any, str, float]:
    """Submit the smoke profile in two shards and wait until shard 1 has written a few rows:
    the submission, shard 1's job id, and the deadline the caller keeps waiting against."""
    proc = run_cli("run", *SHARDS, "--reports", str(reports), "--run-id", run_id, "--no-wait")
    assert proc.returncode == 0, proc.stderr
    sub = slurm.Submission.load(slurm.slurm_folder(reports, run_id))
    first = sub.jobs[0][-1]
    deadline = time.monotonic() + 300
    while len(slurm.shard_rows(reports, run_id, 1)) < 3:  # mid-run: a few rows written
        assert time.monotonic() < deadline, "shard 1 never started"
        time.sleep(0.5)
    return sub, first, deadline


@pytest.mark.e2e
def test_a_cancelled_shard_is_resubmitted_and_the_matrix_completes_without_duplicates(
        cluster: None, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    sub, first, deadline = _submit_and_catch_shard_one(reports, "c-smoke")
    subprocess.run(["scancel", first], check=True)
    queue = slurm.Queue()
    while queue.state(first) in slurm.ACTIVE:
        assert time.monotonic() < deadline, "the cancelled job never left the queue"
        time.sleep(0.5)
    kept = slurm.shard_rows(reports, "c-smoke", 1)
    assert kept and any(r["status"] == "interrupted" for r in kept), "its rows stay"
    resumed = run_cli("run", *SHARDS, "--reports", str(reports), "--run-id", "c-smoke",
                      "--resume", timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert "shard(s) 1 submitted again" in resumed.stderr  # shard 2 was left alone
    after = slurm.Submission.load(slurm.slurm_folder(reports, "c-smoke"))
    assert len(after.jobs[0]) == 2 and after.jobs[1] == sub.jobs[1]
    keys = _ok_keys(reports, "c-smoke")
    planned = len(runner.plan(load_profile("smoke")))
    assert len(keys) == len(set(keys)) == planned, "complete, and no replicate ok twice"
    assert sorted(p.name for p in reports.glob("*/c-smoke-shard*")) == [
        "c-smoke-shard1", "c-smoke-shard2"], "the resumed shard kept its own folder"


@pytest.mark.parametrize(("option", "said"), [
    (("--slurm-partition", "nosuch"), "invalid partition specified: nosuch; partitions here: "
                                      "debug (the default)"),
    (("--slurm-extra", "bogus=1"), "unrecognized option '--bogus=1'"),
    (("--slurm-constraint", "nofeat"), "Invalid feature specification"),
])
def test_what_sbatch_refuses_is_one_line_in_its_words_and_the_run_id_stays_free(
        cluster: None, tmp_path: Path, option: tuple[str, str], said: str) -> None:
    reports = tmp_path / "reports"
    args = ("run", *SHARDS, *option, "--reports", str(reports), "--run-id", "x-smoke",
            "--no-wait")
    for _ in range(2):  # the same command again: refused the same way, not "already submitted"
        proc = run_cli(*args)
        assert proc.returncode == 2
        assert one_error_line(proc) == (f"error: sbatch refused shard 1/2: {said}; nothing "
                                        "was submitted")
        assert not reports.exists(), "nothing of the run is left"


@pytest.mark.e2e
def test_slurms_time_limit_warning_interrupts_a_shard_which_fails_and_resumes(
        cluster: None, tmp_path: Path) -> None:
    """``scancel --signal=USR2`` sends what Slurm sends before a time limit (submitit's
    ``--signal=USR2@90``): SIGUSR2 to every process of the job's step."""
    reports = tmp_path / "reports"
    try:
        _, first, deadline = _submit_and_catch_shard_one(reports, "w-smoke")
        subprocess.run(["scancel", "--signal=USR2", first], check=True)
        queue = slurm.Queue()
        while queue.state(first) in slurm.ACTIVE:
            assert time.monotonic() < deadline, "the warned job never ended"
            time.sleep(0.5)
        assert queue.state(first) == "FAILED", "a shard that stopped short is no COMPLETED job"
        kept = slurm.shard_rows(reports, "w-smoke", 1)
        assert [r["reason"] for r in kept if r["status"] == "interrupted"] == [
            "SIGUSR2 during the replicate"], "the replicate in flight, and only it, interrupted"
        [folder] = reports.glob("*/w-smoke-shard1")
        log = (slurm.slurm_folder(reports, "w-smoke") / first / f"{first}_0_log.err").read_text()
        assert "\ninterrupted: " in log
        assert f"resume with: python -m bench run --profile smoke --shard 1/2 --out {folder} " \
               "--resume" in log
        assert "exit code 140" in log, "the job's failure names the shard's exit code"
        resumed = run_cli("run", *SHARDS, "--reports", str(reports), "--run-id", "w-smoke",
                          "--resume", timeout=600)
        assert resumed.returncode == 0, resumed.stderr
        assert "shard(s) 1 submitted again" in resumed.stderr
        keys = _ok_keys(reports, "w-smoke")
        planned = len(runner.plan(load_profile("smoke")))
        assert len(keys) == len(set(keys)) == planned, "complete, and no replicate ok twice"
    finally:  # a failed check must not leave its jobs on the cluster
        with contextlib.suppress(slurm.SlurmError):
            for jobs in slurm.Submission.load(slurm.slurm_folder(reports, "w-smoke")).jobs:
                subprocess.run(["scancel", *jobs], check=False, capture_output=True)
