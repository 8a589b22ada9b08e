"""The report's second core (bench.report.parallel): the same results as a plain loop, in list
order, whichever process ran a job; the first error in list order; nothing lost or left behind
when the worker dies, cannot send a result, or the caller is interrupted."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
from pathlib import Path

import pytest

from bench.report import parallel
from bench.report.input.errors import LoadError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the worker is forked (Linux)")

PARENT = os.getpid()


def children() -> list[int]:
    """Processes whose parent is this one (from /proc: no psutil needed)."""
    mine = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            mine.append(int(stat.parent.name))
    return mine


def slow_square(x: int) -> tuple[int, int]:
    time.sleep(0.05)
    return x * x, os.getpid()


def test_results_are_a_plain_loops_in_list_order_and_both_processes_ran_jobs() -> None:
    found = parallel.fork_map(slow_square, range(12), fork=True)
    assert [value for value, _ in found] == [x * x for x in range(12)]
    pids = {pid for _, pid in found}
    assert os.getpid() in pids and len(pids) == 2  # the worker took jobs from the queue
    assert children() == []


def test_without_a_fork_every_job_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {pid for _, pid in parallel.fork_map(slow_square, range(4), fork=False)} == {PARENT}
    monkeypatch.setenv(parallel.ENV_SWITCH, "0")
    assert not parallel.can_fork()
    assert {pid for _, pid in parallel.fork_map(slow_square, range(4))} == {os.getpid()}


def test_the_first_error_in_list_order_is_raised_whichever_process_hit_it() -> None:
    def job(x: int) -> int:
        time.sleep(0.05)
        if x in (3, 6):
            raise ValueError(f"job {x} failed")
        return x

    for _ in range(3):  # which process takes job 3 varies; the error does not
        with pytest.raises(ValueError, match="job 3 failed"):
            parallel.fork_map(job, range(8), fork=True)
    assert children() == []


def test_a_load_error_survives_the_trip_back() -> None:
    error = pickle.loads(pickle.dumps(LoadError("runs/results.csv", 7, "bad row")))
    assert isinstance(error, LoadError)
    assert (error.path, error.line, str(error)) == (
        "runs/results.csv", 7, "runs/results.csv:7: bad row",
    )


def test_a_result_that_will_not_pickle_is_redone_here(capfd: pytest.CaptureFixture[str]) -> None:
    parent = os.getpid()

    def job(x: int) -> object:
        time.sleep(0.05)
        return (lambda: x) if os.getpid() != parent else x  # a lambda does not pickle

    found = parallel.fork_map(job, range(6), fork=True)
    assert found == list(range(6))
    err = capfd.readouterr().err
    assert "report worker: a result would not pickle" in err and "redone here" in err


def test_a_worker_that_dies_costs_time_not_results(capfd: pytest.CaptureFixture[str]) -> None:
    parent = os.getpid()

    def job(x: int) -> int:
        time.sleep(0.05)
        if os.getpid() != parent and x >= 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return x * 10

    assert parallel.fork_map(job, range(8), fork=True) == [x * 10 for x in range(8)]
    assert "report worker: signal 9" in capfd.readouterr().err
    assert children() == []


def test_an_interrupt_here_kills_the_worker_and_leaves_no_process() -> None:
    parent = os.getpid()

    def job(x: int) -> int:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        time.sleep(30)  # the worker would outlive the caller if nobody killed it
        return x

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        parallel.fork_map(job, range(4), fork=True)
    assert time.monotonic() - started < 10
    assert children() == []


def test_many_jobs_share_the_queue_in_groups() -> None:
    n = parallel._MAX_TOKENS * 2 + 3
    assert parallel.fork_map(lambda x: x + 1, range(n), fork=True) == [x + 1 for x in range(n)]
    groups, tokens = parallel._tokens(n)
    assert len(tokens) == 4 * len(groups) <= 4 * parallel._MAX_TOKENS
    assert [i for g in groups for i in g] == list(range(n))


def test_a_process_with_other_threads_is_not_forked() -> None:
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.can_fork()
        assert {pid for _, pid in parallel.fork_map(slow_square, range(4))} == {os.getpid()}
    finally:
        stop.set()
        thread.join()


def test_a_job_for_this_process_alone_runs_here_while_the_worker_takes_the_queue() -> None:
    """``here`` keeps what it makes (a closure: it need not pickle) and runs in this process,
    with or without a fork; meanwhile the worker works through the queue."""
    kept: list[object] = []

    def here() -> None:
        time.sleep(0.3)  # long enough for the worker to take jobs from the queue
        kept.append((lambda: "not picklable", os.getpid()))

    for fork in (True, False):
        kept.clear()
        results = parallel.fork_map(slow_square, list(range(12)), fork=fork, here=here)
        assert [r for r, _ in results] == [x * x for x in range(12)]
        [(closure, pid)] = kept
        assert callable(closure) and pid == PARENT
        assert ({p for _, p in results} != {PARENT}) == fork  # the worker took some
    assert children() == []


def test_a_failing_job_here_is_raised_and_leaves_no_worker_behind() -> None:
    def here() -> None:
        raise LoadError(Path("x.csv"), 3, "bad row")

    with pytest.raises(LoadError, match="bad row"):
        parallel.fork_map(slow_square, list(range(40)), fork=True, here=here)
    assert children() == []


def test_the_claims_cannot_be_read_by_a_model_made_while_they_are_judged() -> None:
    """The page models made beside the claims get facts whose claims fail when read, so a
    model that needs them cannot silently say there are none."""
    from bench.report.questions.answers import _NotJudgedYet

    pending = _NotJudgedYet()
    for read in (list, len, lambda c: c[0]):
        with pytest.raises(RuntimeError, match="the claims are judged beside this page model"):
            read(pending)
