"""Cluster runs: the Slurm executor's pieces with fakes, then the real thing against a real
single-node Slurm cluster (started by ``.ci/slurm-up.sh``; skipped with the reason when none
runs here, and a failure under CI, which starts one)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from bench.run.cluster import node, slurm, squeue
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import select
from bench.run.plan.profiles import load_profile

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
    mods = imported_by(["bench.run.cluster.executor", "bench.run.cluster.slurm", "submitit"],
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
    # (the last argument: the shard's --budget, none here)
    assert [c[1:] for c in ex.calls] == [
        ("smoke", str(tmp_path), "r1-smoke", k, 2, ["modes"], None) for k in (1, 2)]
    assert all(c[0] is node.run_shard for c in ex.calls), "a module function: pickled by name"
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
        node.run_shard(str(tmp_path / "no-such-profile.toml"), str(tmp_path), "r1", 1, 2)
    assert [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR2)] == handlers


def test_a_shard_resumes_its_own_folder_when_an_earlier_job_left_one(tmp_path: Path) -> None:
    fresh = node.shard_argv("smoke", tmp_path, "r1", 2, 3, ["modes"])
    assert fresh == ["run", "--profile", "smoke", "--shard", "2/3", "--only", "modes",
                     "--reports", str(tmp_path), "--run-id", "r1-shard2"]
    folder = tmp_path / "some-machine" / "r1-shard2"
    folder.mkdir(parents=True)
    (folder / "results.csv").write_text("status\n")
    (folder / "env.json").write_text(json.dumps({"fingerprint_id": "aaaa1111bbbb"}))

    def a_node(machine: str, fp: str) -> Any:
        return lambda: {"machine": machine, "fingerprint_id": fp}

    same = node.shard_argv("smoke", tmp_path, "r1", 2, 3,
                            env_of_node=a_node("some-machine", "aaaa1111bbbb"))
    assert same[-3:] == ["--out", str(folder), "--resume"]
    assert node.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: None)[-3:] == [
        "--out", str(folder), "--resume"]  # no probe answer: bench run says what it finds


def test_a_shard_resubmitted_to_another_kind_of_node_gets_a_folder_of_its_own(
        tmp_path: Path) -> None:
    """A resume on a node whose fingerprint differs would be refused every time: it starts
    its own folder (suffixed when the machine's name is the same), found as shard 2's."""
    folder = tmp_path / "box" / "r1-shard2"
    folder.mkdir(parents=True)
    (folder / "results.csv").write_text("status\n")
    (folder / "env.json").write_text(json.dumps({"fingerprint_id": "aaaa1111bbbb"}))
    other_machine = node.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: {
        "machine": "other-box", "fingerprint_id": "cccc2222dddd"})
    assert other_machine[-4:] == ["--reports", str(tmp_path), "--run-id", "r1-shard2"]
    same_name = node.shard_argv("smoke", tmp_path, "r1", 2, 3, env_of_node=lambda: {
        "machine": "box", "fingerprint_id": "cccc2222dddd"})
    assert same_name[-2:] == ["--run-id", "r1-shard2-cccc2222"]
    second = tmp_path / "box" / "r1-shard2-cccc2222"
    second.mkdir()
    (second / "results.csv").write_text("status\n")
    (tmp_path / "box" / "r1-shard20").mkdir()
    (tmp_path / "box" / "r1-shard20" / "results.csv").write_text("status\n")
    assert node.shard_dirs(tmp_path, "r1", 2) == [folder, second]  # not shard 20's


class FakeCommands:
    """Slurm's commands by name: an answer, or a ``QueryError`` (the command failed)."""

    def __init__(self, answers: dict[str, str | Exception]) -> None:
        self.answers = answers
        self.seen: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> str:
        self.seen.append(list(command))
        answer = self.answers.get(command[0], "")
        if isinstance(answer, Exception):
            raise answer
        return answer


INVALID = squeue.QueryError("squeue exited 1: slurm_load_jobs error: Invalid job id specified")
TIMED_OUT = "slurm_load_jobs error: Socket timed out on send/recv operation"


def test_the_queue_asks_squeue_then_scontrol() -> None:
    assert squeue.Queue(FakeCommands({"squeue": "RUNNING\n"})).state("7") == "RUNNING"
    ended = FakeCommands({"scontrol": "JobId=7 JobName=x JobState=CANCELLED Reason=None"})
    assert squeue.Queue(ended).state("7") == "CANCELLED"
    assert ended.seen[0][:3] == ["squeue", "-h", "-j"]
    purged = FakeCommands({"squeue": INVALID, "scontrol": squeue.QueryError(
        "scontrol exited 1: slurm_load_jobs error: Invalid job id specified")})
    assert squeue.Queue(purged).state("7") == "GONE", "Slurm's own answer: no such job"


def test_a_slurm_query_that_fails_is_unknown_not_gone() -> None:
    """A controller that timed out says nothing of the job: not that it has ended."""
    failing = FakeCommands({"squeue": squeue.QueryError(f"squeue exited 1: {TIMED_OUT}")})
    queue = squeue.Queue(failing)
    assert queue.state("7") == "UNKNOWN"
    assert queue.errors == {"7": f"squeue exited 1: {TIMED_OUT}"}
    assert [c[0] for c in failing.seen] == ["squeue"], "no scontrol guess after a failure"
    late = squeue.Queue(FakeCommands({"squeue": INVALID, "scontrol": squeue.QueryError(
        f"scontrol exited 1: {TIMED_OUT}")}))
    assert late.state("7") == "UNKNOWN" and "scontrol exited 1" in late.errors["7"]
    assert squeue.Queue(FakeCommands({})).state("7") == "UNKNOWN", "an empty answer is none"


def test_a_slurm_command_exiting_non_zero_raises_with_its_words(tmp_path: Path) -> None:
    """The real ``_run``: a command's exit status is read, not only its output."""
    shim = _shims(tmp_path, squeue=_FAIL)
    env_path = f"{shim}{os.pathsep}{os.environ['PATH']}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", env_path)
        with pytest.raises(squeue.QueryError) as err:
            squeue.run_command(["squeue", "-h", "-j", "7"])
    assert str(err.value) == f"squeue exited 1: {TIMED_OUT}"
    with pytest.raises(squeue.QueryError, match="could not run"):
        squeue.run_command([str(tmp_path / "no-such-command")])


def test_a_replicate_done_after_an_interruption_counts_once() -> None:
    rows = [{"kind": "model", "cell_id": "a", "replicate": "0", "status": "ok"},
            {"kind": "model", "cell_id": "b", "replicate": "0", "status": "interrupted"},
            {"kind": "model", "cell_id": "b", "replicate": "0", "status": "ok"},
            {"kind": "model", "cell_id": "c", "replicate": "0", "status": "oom"},
            {"kind": "model", "cell_id": "d", "replicate": "0", "status": "interrupted"}]
    assert slurm.outcomes(rows) == (2, 1, 1), "(done, failed, interrupted)"


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

    class Q(squeue.Queue):
        def __init__(self) -> None:
            super().__init__()
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


def test_watch_keeps_following_a_job_slurm_did_not_answer_about(tmp_path: Path) -> None:
    """A query that timed out is no job that ended: the watch asks again."""
    sub = slurm.Submission("r1", "smoke", str(tmp_path), [1], [["1"]], {})
    answers = iter([squeue.QueryError(f"squeue exited 1: {TIMED_OUT}"), "RUNNING",
                    squeue.QueryError(f"squeue exited 1: {TIMED_OUT}"), "", "JobState=COMPLETED"])

    def run(command: Sequence[str]) -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    polls: list[float] = []
    code = slurm.watch(sub, squeue.Queue(run), stream=io.StringIO(), poll_s=0,
                       sleep=polls.append)
    assert len(polls) == 3, "asked again after each unknown answer, until it ended"
    assert code == 1


def test_a_resume_refuses_while_a_shards_state_is_unknown() -> None:
    sub = slurm.Submission("r1", "smoke", "/nowhere", [2, 1], [["1"], ["2", "5"]], {})
    queue = squeue.Queue(FakeCommands({"squeue": squeue.QueryError(
        f"squeue exited 1: {TIMED_OUT}")}))
    with pytest.raises(slurm.SlurmError) as err:
        slurm.unfinished(sub, queue)
    assert str(err.value) == (
        f"cannot resume run r1: Slurm did not say whether its jobs still run (shard 1's Slurm "
        f"job 1: squeue exited 1: {TIMED_OUT}; shard 2's Slurm job 5: squeue exited 1: "
        f"{TIMED_OUT}); nothing was submitted; try again once it answers")


def test_ctrl_c_while_watching_leaves_the_jobs_running_and_says_how_to_follow(
        tmp_path: Path) -> None:
    sub = slurm.Submission("r1", "smoke", str(tmp_path), [2], [["1"]], {})

    def ctrl_c(_: float) -> None:
        raise KeyboardInterrupt

    out = io.StringIO()
    try:
        code = slurm.watch(sub, squeue.Queue(FakeCommands({"squeue": "RUNNING"})), stream=out,
                           poll_s=0, sleep=ctrl_c)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped: a traceback")
    assert code == 130
    assert out.getvalue().strip().splitlines()[-1] == (
        f"stopped watching: the shard jobs keep running; python -m bench status r1 --reports "
        f"{tmp_path} reports them")


def test_a_resume_takes_each_slurm_option_left_out_from_the_record() -> None:
    record = slurm.Options("debug", 0, 15, "proj", None, {"qos": "high"})
    none = dict.fromkeys(slurm.FLAGS)
    assert slurm.merged(none, record) == (record, []), "nothing given: all from the record"
    opts, notes = slurm.merged({**none, "time_min": 30, "extra": {}}, record)
    assert opts == slurm.Options("debug", 0, 30, "proj", None, {})
    assert notes == ["--slurm-time 30 (recorded: 15)", "--slurm-extra none (recorded: qos=high)"]
    assert slurm.merged({**none, "time_min": 15}, record) == (record, []), "the same: no note"
    assert slurm.merged(none, None) == (slurm.Options(), []), "a new run: the defaults"
    assert slurm.Options.recorded(asdict(record)) == record


def test_the_resume_hint_is_the_whole_command() -> None:
    from bench.run.cluster import executor as cluster

    sub = slurm.Submission("r1", "smoke", "/r", [4, 4], [["1"], ["2"]],
                           asdict(slurm.Options("debug", None, 15, None, "a&b",
                                                {"qos": "high"})), only=["modes"])
    assert cluster.resume_command(sub) == (
        "python -m bench run --executor slurm --profile smoke --shards 2 --only modes "
        "--slurm-partition debug --slurm-time 15 --slurm-constraint 'a&b' --slurm-extra "
        "qos=high --run-id r1 --reports /r --resume")


_FAIL = f"echo '{TIMED_OUT}' >&2; exit 1"


def _shims(tmp_path: Path, **scripts: str) -> Path:
    """A folder of stand-ins for Slurm's commands (``name=shell body``), to put first on
    PATH: a controller that times out, a queue in a given state."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    for name, body in scripts.items():
        (shim / name).write_text(f"#!/bin/sh\n{body}\n")
        (shim / name).chmod(0o755)
    return shim


def _path_env(shim: Path) -> dict[str, str]:
    return {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}


def _record(reports: Path, run_id: str = "r1-smoke", shard_count: int = 2) -> slurm.Submission:
    """A submission of the smoke profile as ``bench run --executor slurm`` records it."""
    from bench.run.cluster import shards

    planned = [len(p) for p in shards.split(plan(load_profile("smoke")), shard_count)]
    return slurm.submit("smoke", planned, reports, run_id, slurm.Options(time_min=15),
                        executor=FakeExecutor())


def test_status_counts_a_job_slurm_did_not_answer_about_as_active(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _record(reports)
    shim = _shims(tmp_path, squeue=_FAIL, scontrol=_FAIL)
    proc = run_cli("status", "r1-smoke", "--reports", str(reports), env=_path_env(shim))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"shard 1/2: Slurm job 101 UNKNOWN (squeue exited 1: "
                               f"{TIMED_OUT}); 0 of ")
    assert lines[-1] == ("run r1-smoke: 0 of 2 shards complete, 2 queued or running (2 of them "
                         "not known: Slurm did not answer)")


def test_a_resume_while_slurm_does_not_answer_is_refused_in_one_line(tmp_path: Path) -> None:
    """Evidence of the gap: the running shard was submitted a second time."""
    pytest.importorskip("submitit")
    reports = tmp_path / "reports"
    sub = _record(reports)
    shim = _shims(tmp_path, squeue=_FAIL, scontrol=_FAIL,
                  sbatch=f"touch {tmp_path / 'sbatch-called'}; exit 1")
    proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", "--shards", "2",
                   "--run-id", "r1-smoke", "--reports", str(reports), "--resume", "--no-wait",
                   env=_path_env(shim))
    assert proc.returncode == 2
    assert one_error_line(proc) == (
        f"error: cannot resume run r1-smoke: Slurm did not say whether its jobs still run "
        f"(shard 1's Slurm job 101: squeue exited 1: {TIMED_OUT}; shard 2's Slurm job 102: "
        f"squeue exited 1: {TIMED_OUT}); nothing was submitted; try again once it answers")
    assert not (tmp_path / "sbatch-called").exists()
    assert slurm.Submission.load(slurm.slurm_folder(reports, "r1-smoke")) == sub


def test_a_second_resume_while_one_is_submitting_is_refused(tmp_path: Path) -> None:
    import fcntl

    pytest.importorskip("submitit")
    reports = tmp_path / "reports"
    _record(reports)
    lock = slurm.slurm_folder(reports, "r1-smoke") / "resume.lock"  # slurm.LOCK
    shim = _shims(tmp_path, squeue="exit 0", scontrol="echo JobState=CANCELLED",
                  sbatch=f"touch {tmp_path / 'sbatch-called'}; exit 1")
    with open(lock, "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # the other resume, between look and submit
        proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", "--shards", "2",
                       "--run-id", "r1-smoke", "--reports", str(reports), "--resume",
                       "--no-wait", env=_path_env(shim))
    assert proc.returncode == 2
    assert one_error_line(proc) == (f"error: cannot resume run r1-smoke: another --resume of it "
                                    f"is submitting now (it holds {lock}); nothing was "
                                    "submitted")
    assert not (tmp_path / "sbatch-called").exists()


def _status_shims(tmp_path: Path, states: dict[str, str]) -> Path:
    """Ended jobs, as Slurm reports them: squeue lists nothing, scontrol gives each state."""
    cases = " ".join(f'{job}) echo "JobId={job} JobState={st}";;' for job, st in states.items())
    return _shims(tmp_path, squeue="exit 0", scontrol=f'case "$4" in {cases} esac')


def _fill(reports: Path, run_id: str, k: int, planned: int, statuses: Sequence[str]) -> None:
    _write_rows(reports / "box" / f"{run_id}-shard{k}",
                [*statuses, *["ok"] * (planned - len(statuses))])


def test_status_exits_non_zero_until_every_shard_is_complete(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    sub = _record(reports)
    one, two = sub.planned
    _fill(reports, "r1-smoke", 1, one, [])
    _fill(reports, "r1-smoke", 2, two, ["interrupted", "oom"])
    ended = _status_shims(tmp_path, {"101": "COMPLETED", "102": "FAILED"})
    stopped = run_cli("status", "r1-smoke", "--reports", str(reports), env=_path_env(ended))
    assert stopped.returncode == 1, "a shard stopped short: --resume submits it"
    assert f"shard 2/2: Slurm job 102 FAILED; {two - 2} of {two} planned replicates done, " \
           "1 failed, 1 interrupted;" in stopped.stdout, "interrupted is not failed"
    assert "shard(s) 2 stopped short; resume with: python -m bench run --executor slurm " \
           "--profile smoke --shards 2 --slurm-time 15 --run-id r1-smoke" in stopped.stdout
    running = _shims(tmp_path, squeue='[ "$3" = 102 ] && echo RUNNING; exit 0',
                     scontrol='echo "JobId=$4 JobState=COMPLETED"')
    active = run_cli("status", "r1-smoke", "--reports", str(reports), env=_path_env(running))
    assert active.returncode == 3, "still running: not done, and nothing to resume yet"
    _fill(reports, "r1-smoke", 2, two, [])
    done = run_cli("status", "r1-smoke", "--reports", str(reports), env=_path_env(ended))
    assert done.returncode == 0, done.stdout
    assert "run r1-smoke: 2 of 2 shards complete" in done.stdout


def test_a_resumes_dry_run_says_which_shards_it_would_submit_and_submits_none(
        tmp_path: Path) -> None:
    """It used to print the shards' planned sizes, as if none had run."""
    pytest.importorskip("submitit")
    reports = tmp_path / "reports"
    sub = _record(reports)
    one, two = sub.planned
    _fill(reports, "r1-smoke", 1, one, [])
    _fill(reports, "r1-smoke", 2, two, ["interrupted", "oom"])
    shim = _shims(tmp_path, squeue="exit 0",
                  scontrol='case "$4" in 101) echo "JobId=101 JobState=COMPLETED";; '
                           '102) echo "JobId=102 JobState=FAILED";; esac',
                  sbatch=f"touch {tmp_path / 'sbatch-called'}; exit 1")
    base = ("run", "--executor", "slurm", "--profile", "smoke", "--shards", "2", "--run-id",
            "r1-smoke", "--reports", str(reports), "--resume", "--dry-run")
    proc = run_cli(*base, env=_path_env(shim))
    assert proc.returncode == 0, proc.stderr
    assert f"shard 2/2: Slurm job 102 FAILED; {two - 2} of {two} planned replicates done, " \
           "1 failed, 1 interrupted;" in proc.stdout
    assert proc.stdout.splitlines()[-1] == ("a resume of run r1-smoke would submit again: "
                                            "shard(s) 2")
    assert not (tmp_path / "sbatch-called").exists()
    assert slurm.Submission.load(slurm.slurm_folder(reports, "r1-smoke")) == sub
    # another split is refused as the resume would refuse it
    other = run_cli(*base[:6], "3", *base[7:], env=_path_env(shim))
    assert other.returncode == 2
    assert "run r1-smoke was split into 2 shards of" in one_error_line(other)


def test_a_new_runs_dry_run_says_each_shards_studies_and_time_limit_and_submits_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """It used to print only each shard's count of processes: nothing on what a node would
    run, for how long it may, or how to estimate it there."""
    pytest.importorskip("submitit")
    from bench import cli
    from bench.run.cluster import shards

    monkeypatch.setenv("PATH", _path_env(_shims(tmp_path, sbatch=(
        f"touch {tmp_path / 'sbatch-called'}; exit 1")))["PATH"])
    reports = tmp_path / "reports"
    code = cli.main(["run", "--executor", "slurm", "--profile", "smoke", "--only", "modes",
                     "--only", "shapes", "--shards", "2", "--budget", "5m", "--dry-run",
                     "--reports", str(reports)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    jobs = plan(select(load_profile("smoke"), ["modes", "shapes"]))
    one, two = shards.split(jobs, 2)
    modes = len({j.cell.cell_id for j in jobs if j.study.name == "modes"})
    held = len({j.cell.cell_id for j in one})
    assert held < modes, "the smoke split cuts the modes study: the line must say so"
    assert out[:2] == [f"shard 1/2: {len(one)} processes, modes ({held} of {modes} cells)",
                       f"shard 2/2: {len(two)} processes, modes ({modes - held} of {modes} "
                       "cells), shapes"]
    assert out[2] == ("each shard is one Slurm job on one node, with a time limit of 6 min "
                      "(--budget 5 min and the planner's margin; each shard stops cleanly at "
                      "its budget, and --resume submits what is left)")
    node_cmd = out[3].split("on a node, ")[1].split(" estimates shard K")[0]
    argv = shlex.split(node_cmd.replace("K/2", "2/2"))[3:]
    node_args = cli.build_parser().parse_args(argv)  # a command the node's bench takes
    assert (node_args.profile, node_args.only, node_args.shard, node_args.dry_run) == \
        ("smoke", ["modes", "shapes"], "2/2", True)
    assert not (tmp_path / "sbatch-called").exists() and not reports.exists()


@pytest.mark.parametrize("option", [
    ("--shards", "2"), ("--slurm-partition", "debug"), ("--slurm-gpus-per-node", "1"),
    ("--slurm-time", "15"), ("--slurm-account", "proj"), ("--slurm-constraint", "a100"),
    ("--slurm-extra", "qos=high"), ("--no-wait",)])
def test_a_local_run_refuses_the_options_of_a_slurm_run(tmp_path: Path,
                                                         option: tuple[str, ...]) -> None:
    """Ignored, they would run the whole plan here: ``--shards 4`` as one machine's run.
    (``--dry-run``: were it not refused, it plans only, and the test fails in seconds.)"""
    proc = run_cli("run", "--profile", "smoke", *option, "--dry-run", "--reports",
                   str(tmp_path / "r"))
    assert proc.returncode == 2
    assert one_error_line(proc) == (f"error: {option[0]} needs --executor slurm; this is a "
                                    "local run (--executor local, the default), which runs "
                                    "here")
    assert not (tmp_path / "r").exists(), "nothing written"


def test_a_resumed_shard_folder_lists_every_job_it_ran_under(tmp_path: Path) -> None:
    folder = tmp_path / "box" / "r1-shard1"
    folder.mkdir(parents=True)
    (folder / "env.json").write_text(json.dumps({"shard": {"spec": "1/2",
                                                           "slurm_job_id": "191"}}))
    node.note_job(folder, "193")
    node.note_job(folder, "193")  # once each
    node.note_job(folder, "")  # not a Slurm job: nothing to note
    node.note_job(folder, "197")
    assert node.job_ids(folder) == ["191", "193", "197"]
    assert (folder / node.JOBS_FILE).read_text() == "191\n193\n197\n"
    node.note_job(tmp_path / "nowhere", "5")  # no folder: the runner says so, not this
    assert not (tmp_path / "nowhere").exists()


# ---------------------------------------------------------------------------------------------
# The real thing.


def _slurm_ready() -> str | None:
    """Why no Slurm cluster can be used here, or None when one answers with an idle node."""
    if shutil.which("sinfo") is None:
        return "Slurm is not installed (start one with: sudo .ci/slurm-up.sh)"
    # comp: up, and completing a job (one that the test before cancelled, say). A controller
    # busy on a 2-core machine can time out (sinfo exits 1), and a node's state can carry a
    # passing mark (idle*: not responding for a moment): ask again for a while before saying no.
    deadline = time.monotonic() + 60.0
    while True:
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                             check=False)
        states = {word.rstrip("*~#!%$@^-") for word in out.stdout.split()}
        if out.returncode == 0 and states & {"idle", "mix", "alloc", "comp"}:
            break
        if time.monotonic() > deadline:
            said = (out.stderr.strip() or out.stdout.strip() or "no answer").splitlines()[0]
            return f"no Slurm node is up ({said}; start one with: sudo .ci/slurm-up.sh)"
        time.sleep(2.0)
    try:
        import submitit  # noqa: F401
    except ImportError:
        return f"submitit is not installed (pip install '{slurm.EXTRA}')"
    return None


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The real cluster, for one test at a time: its one node takes one job at a time
    (``exclusive``), so tests on two xdist workers at once would wait on each other's jobs
    past their deadlines. The lock lives beside the workers' temporary folders."""
    import fcntl

    # this session's folder, shared by its xdist workers (without xdist, the session's own)
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / "slurm.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        # One wait for a cluster that is not there is enough: the tests after it (on either
        # worker) read why from the file the first one left, instead of waiting a minute each.
        said = shared / "slurm.none"
        why = said.read_text() if said.exists() else _slurm_ready()
        if why:
            said.write_text(why)
            if os.environ.get("CI"):
                pytest.fail(f"the Slurm tests must run under CI: {why}")
            pytest.skip(why)
        yield


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
    """One study of the smoke profile (four replicates, two a shard) is all pooling needs; the
    tests below run it whole."""
    reports = tmp_path / "reports"
    proc = run_cli("run", *SHARDS, "--only", "shapes", "--reports", str(reports), "--run-id",
                   "t-smoke", timeout=600)
    assert proc.returncode == 0, proc.stderr
    planned = len(plan(select(load_profile("smoke"), ["shapes"])))
    assert planned == 4
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
    from bench.report.input.load import load_reports

    machines = analysis.analyse(load_reports(reports)).machines
    assert len(machines) == 1 and machines["n_runs"].iloc[0] == 2  # one fingerprint, 2 shards
    status = run_cli("status", "t-smoke", "--reports", str(reports))
    assert "2 of 2 shards complete" in status.stdout
    assert status.returncode == 0, "every shard done: status says so in its exit code too"


#: The studies the interrupted runs measure: twelve replicates, six a shard, so shard 1 is
#: caught with rows written and replicates still to run, twice, and a resume has work left.
CAUGHT = ("--only", "modes", "--only", "shapes")


def _caught_planned() -> int:
    return len(plan(select(load_profile("smoke"), ["modes", "shapes"])))


def _submit_and_catch_shard_one(reports: Path, run_id: str) -> tuple[Any, str, float]:
    """Submit two studies of the smoke profile in two shards and wait until shard 1 has
    written a row: the submission, shard 1's job id, and the deadline the caller keeps
    waiting against."""
    proc = run_cli("run", *SHARDS, *CAUGHT, "--reports", str(reports), "--run-id", run_id,
                   "--no-wait")
    assert proc.returncode == 0, proc.stderr
    sub = slurm.Submission.load(slurm.slurm_folder(reports, run_id))
    first = sub.jobs[0][-1]
    deadline = time.monotonic() + 300
    while not slurm.shard_rows(reports, run_id, 1):  # mid-run: a row written, three to go
        assert time.monotonic() < deadline, "shard 1 never started"
        time.sleep(0.5)
    return sub, first, deadline


def _time_limit(job_id: str) -> str:
    out = subprocess.run(["scontrol", "-o", "show", "job", job_id], capture_output=True,
                         text=True, check=True).stdout
    return next(w.split("=", 1)[1] for w in out.split() if w.startswith("TimeLimit="))


def _wait_gone(jobs: Sequence[str], deadline: float) -> None:
    queue = squeue.Queue()
    while any(queue.state(j) in squeue.ACTIVE for j in jobs):
        assert time.monotonic() < deadline, "the cancelled jobs never left the queue"
        time.sleep(0.5)


@pytest.mark.e2e
def test_a_resume_submits_with_the_recorded_studies_and_slurm_options(
        cluster: None, tmp_path: Path) -> None:
    """Evidence of the gap: a shard submitted with --slurm-time 15 came back with Slurm's
    1:00:00, and the printed resume command, missing --only, was refused."""
    reports = tmp_path / "reports"
    folder = slurm.slurm_folder(reports, "o-smoke")
    base = ("run", "--executor", "slurm", "--profile", "smoke", "--reports", str(reports),
            "--run-id", "o-smoke")
    try:
        watching = subprocess.Popen(
            [sys.executable, "-m", "bench", *base, "--shards", "2", "--only", "modes",
             "--slurm-time", "15"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
        deadline = time.monotonic() + 300
        while not (folder / slurm.RECORD).exists() or not slurm.Submission.load(folder).jobs[1]:
            assert time.monotonic() < deadline, "never submitted"
            time.sleep(0.2)
        first = [j[-1] for j in slurm.Submission.load(folder).jobs]
        subprocess.run(["scancel", *first], check=True)
        _, err = watching.communicate(timeout=120)
        assert watching.returncode == 1, err
        [hint] = [line.removeprefix("resume with: ") for line in err.splitlines()
                  if line.startswith("resume with: ")]
        assert hint == (f"python -m bench run --executor slurm --profile smoke --shards 2 "
                        f"--only modes --slurm-time 15 --run-id o-smoke --reports {reports} "
                        "--resume")
        _wait_gone(first, deadline)
        bare = run_cli(*base, "--resume", "--no-wait")  # no --shards, --only or --slurm-*
        assert bare.returncode == 0, bare.stderr
        assert "resumed run o-smoke: shard(s) 1, 2 submitted again, with the recorded Slurm " \
               "options: --slurm-time 15" in bare.stderr
        second = [j[-1] for j in slurm.Submission.load(folder).jobs]
        assert [_time_limit(j) for j in second] == ["00:15:00", "00:15:00"]
        assert slurm.Submission.load(folder).only == ["modes"]
        followed = run_cli(*shlex.split(hint)[3:], "--no-wait")  # the hint as printed
        assert followed.returncode == 0, followed.stderr
        assert "shard(s) none submitted again" in followed.stderr  # they are queued: left be
        subprocess.run(["scancel", *second], check=True)
        _wait_gone(second, deadline)
        longer = run_cli(*base, "--slurm-time", "20", "--resume", "--no-wait")
        assert longer.returncode == 0, longer.stderr
        assert ("with --slurm-time 20 (recorded: 15) given here; Slurm options now: "
                "--slurm-time 20") in longer.stderr
        after = slurm.Submission.load(folder)
        assert [_time_limit(j[-1]) for j in after.jobs] == ["00:20:00", "00:20:00"]
        assert after.options["time_min"] == 20, "the next resume takes the latest"
    finally:  # a failed check must not leave its jobs on the cluster
        with contextlib.suppress(slurm.SlurmError):
            for jobs in slurm.Submission.load(folder).jobs:
                subprocess.run(["scancel", *jobs], check=False, capture_output=True)


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
def test_a_warned_and_a_cancelled_shard_keep_their_rows_and_resume_to_a_whole_matrix(
        cluster: None, tmp_path: Path) -> None:
    """Shard 1 is stopped twice, each time mid-run, and resumed each time:

    1. ``scancel --signal=USR2`` sends what Slurm sends before a time limit (submitit's
       ``--signal=USR2@90``): SIGUSR2 to every process of the job's step. The job FAILS,
       shard 2 runs whole, and a resume submits shard 1 alone.
    2. ``scancel`` (SIGTERM) cancels that resubmitted job; a second resume submits it again
       into the same folder, and the matrix completes with no replicate ok twice.
    """
    reports = tmp_path / "reports"
    try:
        sub, first, deadline = _submit_and_catch_shard_one(reports, "w-smoke")
        subprocess.run(["scancel", "--signal=USR2", first], check=True)
        queue = squeue.Queue()
        _wait_gone([first], deadline)
        assert queue.state(first) == "FAILED", "a shard that stopped short is no COMPLETED job"
        kept = slurm.shard_rows(reports, "w-smoke", 1)
        assert [r["reason"] for r in kept if r["status"] == "interrupted"] == [
            "SIGUSR2 during the replicate"], "the replicate in flight, and only it, interrupted"
        [folder] = reports.glob("*/w-smoke-shard1")
        log = (slurm.slurm_folder(reports, "w-smoke") / first / f"{first}_0_log.err").read_text()
        assert "\ninterrupted: " in log
        assert ("resume with: python -m bench run --profile smoke --only modes --only shapes "
                f"--shard 1/2 --out {folder} --resume") in log
        assert "exit code 140" in log, "the job's failure names the shard's exit code"
        _wait_gone(sub.jobs[1][-1:], deadline)  # shard 2 ran whole meanwhile
        resumed = run_cli("run", *SHARDS, *CAUGHT, "--reports", str(reports), "--run-id",
                          "w-smoke", "--resume", "--no-wait")
        assert resumed.returncode == 0, resumed.stderr
        assert "shard(s) 1 submitted again" in resumed.stderr  # shard 2 was left alone
        second = slurm.Submission.load(slurm.slurm_folder(reports, "w-smoke")).jobs[0][-1]
        while len(slurm.shard_rows(reports, "w-smoke", 1)) <= len(kept):  # a new row
            assert time.monotonic() < deadline, "the resubmitted shard never started"
            time.sleep(0.5)
        subprocess.run(["scancel", second], check=True)
        _wait_gone([second], deadline)
        kept = slurm.shard_rows(reports, "w-smoke", 1)
        assert sum(r["status"] == "interrupted" for r in kept) == 2, "its rows stay"
        status = run_cli("status", "w-smoke", "--reports", str(reports))
        assert status.returncode in (1, 3), "not done: shard 1 stopped short again"
        assert " interrupted; " in status.stdout.splitlines()[0]
        again = run_cli("run", *SHARDS, *CAUGHT, "--reports", str(reports), "--run-id",
                        "w-smoke", "--resume", timeout=600)
        assert again.returncode == 0, again.stderr
        assert "shard(s) 1 submitted again" in again.stderr
        after = slurm.Submission.load(slurm.slurm_folder(reports, "w-smoke"))
        assert len(after.jobs[0]) == 3 and after.jobs[1] == sub.jobs[1]
        keys = _ok_keys(reports, "w-smoke")
        assert len(keys) == len(set(keys)) == _caught_planned(), "complete, none ok twice"
        assert sorted(p.name for p in reports.glob("*/w-smoke-shard*")) == [
            "w-smoke-shard1", "w-smoke-shard2"], "the resumed shard kept its own folder"
        assert node.job_ids(folder) == after.jobs[0], "every job that ran it, for the machine page"
    finally:  # a failed check must not leave its jobs on the cluster
        with contextlib.suppress(slurm.SlurmError):
            for jobs in slurm.Submission.load(slurm.slurm_folder(reports, "w-smoke")).jobs:
                subprocess.run(["scancel", *jobs], check=False, capture_output=True)
