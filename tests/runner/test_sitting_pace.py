"""Every sitting measures the machine's pace at its start and at its end (``bench.run.plan.pace``)
and keeps it in its own record of env.json: a first sitting, a resumed one, a budgeted one
that stops early, one stopped by a signal, a probe that fails, a machine with CUDA (fake
children, no torch); and one quick real sitting on this CPU (``e2e``)."""

from __future__ import annotations

import datetime as dt
import io
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench import schema
from bench.fingerprint import fingerprint_id
from bench.run.execute import pacing, session
from bench.run.plan import limits, pace
from bench.run.plan.budget import Budget
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import select
from bench.run.plan.profiles import load_profile
from bench.run.protocol import Probe
from bench.run.store import identity

from .conftest import ROOT, read_csv, run_cli
from .fakes import LIVE_ENV, FakeLauncher


def _setup(tmp_path: Path, cuda: bool = False) -> tuple[Any, Probe, list[Any], Path]:
    profile = select(load_profile("smoke"), ["modes"])
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], cuda)
    return profile, probe, plan(profile), tmp_path / "run"


def _records(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "env.json").read_text())["sittings"]


def test_a_sitting_records_its_pace_at_its_start_and_end(tmp_path: Path) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    launcher = FakeLauncher()
    assert session.execute(opened, launcher, probe, progress=False).code == 0
    [record] = _records(out)
    paces = record[schema.SITTING_PACE]
    assert set(paces) == {schema.PACE_START, schema.PACE_END}
    for end in paces.values():
        assert set(end) == {schema.PACE_CPU_MATMUL}, "no CUDA: the CPU's probe alone"
        figures = end[schema.PACE_CPU_MATMUL]
        assert figures["cell_id"] == pace.REFERENCE_ID
        assert (figures["steady_p10_s"], figures["steady_median_s"]) == (0.4, 0.5)
        assert figures["at"]
    assert [s.task.cell.cell_id for s in launcher.paced] == [pace.REFERENCE_ID] * 2
    assert len(launcher.launched) == len(jobs), "one child per job besides"
    # the smoke profile's [pace] window: at most 0.3 s of steady matmuls, never under five
    assert profile.pace_window_s == 0.3
    assert [(s.task.settings.max_time_s, s.task.settings.min_time_s, s.task.settings.min_iters)
            for s in launcher.paced] == [(0.3, 0.25, pace.SETTINGS.min_iters)] * 2
    env = json.loads((out / "env.json").read_text())
    assert fingerprint_id(env) == env["fingerprint_id"], "the fingerprint does not see it"
    identity.check_resume(env, LIVE_ENV, env["plan"], out / "env.json")  # still resumable


def test_a_resumed_sitting_records_its_own_and_the_first_is_kept(tmp_path: Path) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    first = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    ended = session.execute(first, FakeLauncher({2: "interrupt"}), probe, progress=False)
    assert ended.code == 130
    [one] = _records(out)
    assert one[schema.SITTING_PACE][schema.PACE_START][schema.PACE_CPU_MATMUL]["steady_p10_s"]
    assert one[schema.SITTING_PACE][schema.PACE_END] == {schema.PACE_CPU_MATMUL: {
        "cell_id": pace.REFERENCE_ID,
        schema.PACE_SKIPPED: "the sitting was stopped by SIGINT"}}, "no end probe after a signal"
    again = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    launcher = FakeLauncher()
    assert session.execute(again, launcher, probe, progress=False).code == 0
    first_again, two = _records(out)
    assert first_again == one, "the first sitting's record is never rewritten"
    assert two["sitting"] == 2
    for end in (schema.PACE_START, schema.PACE_END):
        assert two[schema.SITTING_PACE][end][schema.PACE_CPU_MATMUL]["steady_p10_s"] == 0.4
    assert len(launcher.paced) == 2


def _planned_pace(ago_s: float) -> dict[str, Any]:
    """The plan's pace (``pacing.measure``'s figures) as measured ``ago_s`` seconds ago."""
    at = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=ago_s)
    return {"cell_id": pace.REFERENCE_ID, "steady_p10_s": 0.3, "steady_median_s": 0.35,
            "steady_iters": 27, "at": at.isoformat(timespec="milliseconds")}


def test_the_plans_fresh_pace_stands_for_the_start_probe(tmp_path: Path) -> None:
    """The same matmul, measured for the plan moments before, is not measured again."""
    profile, probe, jobs, out = _setup(tmp_path)
    probe = replace(probe, env={**probe.env, pace.ENV_KEY: _planned_pace(1.0)})
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    launcher = FakeLauncher()
    assert session.execute(opened, launcher, probe, progress=False).code == 0
    paces = _records(out)[0][schema.SITTING_PACE]
    assert paces[schema.PACE_START][schema.PACE_CPU_MATMUL] == probe.env[pace.ENV_KEY]
    assert paces[schema.PACE_END][schema.PACE_CPU_MATMUL]["steady_p10_s"] == 0.4, "measured"
    assert len(launcher.paced) == 1, "the end's probe alone"


@pytest.mark.parametrize("figures", [
    _planned_pace(pacing.FRESH_S + 5), {**_planned_pace(1.0), "steady_p10_s": None},
    {**_planned_pace(1.0), "cell_id": "0" * 10}, {**_planned_pace(1.0), "at": "then"}, None])
def test_a_stale_or_other_pace_is_measured_again(figures: Any) -> None:
    assert not pacing.reusable(figures)
    found, _ = pacing.sitting_pace(FakeLauncher(), cuda=False, tag="start", measured=figures)
    assert found[schema.PACE_CPU_MATMUL]["steady_p10_s"] == 0.4


def test_a_failing_probe_is_missing_with_its_reason_and_the_run_goes_on(tmp_path: Path
                                                                        ) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    err = io.StringIO()
    launcher = FakeLauncher(pace={"start:cpu_matmul": "segv", "end:cpu_matmul": "hang"})
    assert session.execute(opened, launcher, probe, progress=False, stream=err).code == 0
    assert [r["status"] for r in read_csv(out / "results.csv")] == ["ok"] * len(jobs)
    paces = _records(out)[0][schema.SITTING_PACE]
    start = paces[schema.PACE_START][schema.PACE_CPU_MATMUL]
    end = paces[schema.PACE_END][schema.PACE_CPU_MATMUL]
    assert "steady_p10_s" not in start and "steady_p10_s" not in end, "never a number"
    assert start[schema.PACE_MISSING].startswith("crash: SIGSEGV without a result")
    assert end[schema.PACE_MISSING].startswith("timeout: no result after 60 s")
    assert "the machine's pace at the sitting's start is missing for cpu_matmul (crash" \
        in err.getvalue()


def test_a_probe_that_cannot_write_its_task_is_missing(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pacing, "run_child", refuse)
    found, stopped = pacing.sitting_pace(FakeLauncher(), cuda=False, tag="start")
    assert stopped is None
    assert found[schema.PACE_CPU_MATMUL][schema.PACE_MISSING].startswith("could not run:")


def test_on_a_cuda_machine_the_two_cuda_probes_are_planned(tmp_path: Path) -> None:
    profile, probe, jobs, out = _setup(tmp_path, cuda=True)
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    launcher = FakeLauncher(pace={"cuda_launch": "oom"})
    assert session.execute(opened, launcher, probe, progress=False).code == 0
    cells = [s.task.cell for s in launcher.paced]
    assert [c.cell_id for c in cells] == [pace.REFERENCE_ID, pace.CUDA_MATMUL.cell_id,
                                          pace.CUDA_LAUNCH.cell_id] * 2
    assert [c.device for c in cells[:3]] == ["cpu", "cuda", "cuda"]
    assert (pace.CUDA_LAUNCH.model, pace.CUDA_LAUNCH.batch_size) == ("resnet18", 1)
    start = _records(out)[0][schema.SITTING_PACE][schema.PACE_START]
    assert set(start) == set(schema.PACE_PROBES)
    assert start[schema.PACE_CUDA_MATMUL]["steady_p10_s"] == 0.4
    assert start[schema.PACE_CUDA_LAUNCH][schema.PACE_MISSING].startswith("oom:")


def test_a_signal_during_the_start_probe_ends_the_sitting_before_its_jobs(tmp_path: Path
                                                                         ) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    launcher = FakeLauncher(pace={"start:cpu_matmul": "interrupt"})
    assert session.execute(opened, launcher, probe, progress=False).code == 130
    assert launcher.launched == []
    paces = _records(out)[0][schema.SITTING_PACE]
    assert "stopped by SIGINT" in paces[schema.PACE_START][schema.PACE_CPU_MATMUL][
        schema.PACE_MISSING]
    assert schema.PACE_SKIPPED in paces[schema.PACE_END][schema.PACE_CPU_MATMUL]


def test_a_budgeted_sitting_that_stops_early_still_measures_its_end(tmp_path: Path) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    err = io.StringIO()
    launcher = FakeLauncher()
    ended = session.execute(opened, launcher, probe, progress=False, stream=err,
                            budget=Budget(0.05, time.monotonic()))  # no job fits it
    assert ended.code == 0 and ended.budget is not None and ended.budget.before is not None
    assert launcher.launched == [] and len(launcher.paced) == 2
    paces = _records(out)[0][schema.SITTING_PACE]
    assert paces[schema.PACE_END][schema.PACE_CPU_MATMUL]["steady_p10_s"] == 0.4


def test_a_profile_without_a_pace_table_probes_for_the_whole_window(tmp_path: Path) -> None:
    """Every profile but those that ask for less (``[pace] window_s``) reads the pace over
    ``pace.SETTINGS``' window, and its dry run counts those seconds at each end."""
    _, probe, _, out = _setup(tmp_path)
    text = (ROOT / "bench" / "profiles" / "smoke.toml").read_text(encoding="utf-8")
    assert "[pace]\nwindow_s = 0.3\n" in text
    whole = tmp_path / "whole.toml"
    whole.write_text(text.replace("[pace]\nwindow_s = 0.3\n", ""), encoding="utf-8")
    profile = select(load_profile(str(whole)), ["modes"])
    assert profile.pace_window_s == pace.WINDOW_S == pace.SETTINGS.max_time_s
    assert limits.PACE["pace.window_s"][1] == pace.WINDOW_S, "a profile may only shorten it"
    assert pace.cpu_probe(profile.pace_window_s) is pace.CPU_PROBE
    opened = session.open_run(profile, probe, plan(profile), reports=tmp_path, out=str(out))
    launcher = FakeLauncher()
    assert session.execute(opened, launcher, probe, progress=False).code == 0
    assert [s.task.settings for s in launcher.paced] == [pace.SETTINGS] * 2
    short = pace.cpu_probe(0.3)
    assert short.expected_s == pytest.approx(pace.CPU_PROBE.expected_s - pace.WINDOW_S + 0.3)
    assert pace.expected_s(False, 0.3) == short.expected_s
    assert pace.expected_s(True, 0.3) - pace.expected_s(False, 0.3) == pytest.approx(
        pace.expected_s(True) - pace.expected_s(False)), "the CUDA probes keep their windows"


def test_a_run_that_is_always_one_sitting_reads_its_pace_over_the_short_window(
        tmp_path: Path) -> None:
    """``bench advise`` and ``bench feed`` (``session.run_new``): nothing holds their one
    sitting's pace against another's, so it is read over ``ONE_SITTING_WINDOW_S``."""
    _, probe, _, out = _setup(tmp_path)
    profile = replace(select(load_profile("smoke"), ["modes"]), pace_window_s=pace.WINDOW_S)
    launcher = FakeLauncher()
    folder, ended = session.run_new(profile, probe, plan(profile), launcher, reports=tmp_path,
                                    out=str(out), command="bench advise")
    assert ended.code == 0 and folder == out
    assert [s.task.settings.max_time_s for s in launcher.paced] == [
        session.ONE_SITTING_WINDOW_S] * 2
    assert session.ONE_SITTING_WINDOW_S < pace.WINDOW_S


def test_a_resume_with_nothing_left_probes_nothing(tmp_path: Path) -> None:
    profile, probe, jobs, out = _setup(tmp_path)
    first = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    assert session.execute(first, FakeLauncher(), probe, progress=False).code == 0
    done = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    launcher = FakeLauncher()
    assert session.execute(done, launcher, probe, progress=False).code == 0
    assert launcher.paced == [] and len(_records(out)) == 1


def test_the_report_side_reads_the_key_names_without_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, bench.schema as s; assert s.SITTING_PACE == 'pace'; "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


@pytest.mark.e2e
def test_a_real_cpu_sitting_measures_its_pace_in_a_few_seconds(
        tmp_path: Path, tiny_profile: Any) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(tiny_profile(replicates=1)), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    [record] = _records(out)
    paces = record[schema.SITTING_PACE]
    for end in (schema.PACE_START, schema.PACE_END):
        figures = paces[end][schema.PACE_CPU_MATMUL]
        assert figures["steady_p10_s"] > 0, figures
        assert figures["steady_median_s"] >= figures["steady_p10_s"]
    assert record["wall_s"] < 30


@pytest.mark.parametrize(("value", "threaded"), [(None, True), ("0", True), ("1", False),
                                                 ("yes", False)])
def test_the_sampler_can_be_turned_off_for_a_child(monkeypatch: pytest.MonkeyPatch,
                                                   value: str | None, threaded: bool) -> None:
    """``TORCH_KNOBS_NO_SAMPLER``: no sampling thread in the window; the counter is still read
    at both ends, and one sample is taken at each."""
    from bench.run.child import nvml

    from .test_telemetry import FakeNvml

    if value is None:
        monkeypatch.delenv(nvml.NO_SAMPLER_ENV, raising=False)
    else:
        monkeypatch.setenv(nvml.NO_SAMPLER_ENV, value)
    fake = FakeNvml([1000.0, 3000.0])
    fake.nvmlInit = lambda: None  # type: ignore[attr-defined]
    fake.nvmlDeviceGetHandleByIndex = lambda index: "h"  # type: ignore[attr-defined]

    class Torch:
        class cuda:  # torch's own name
            @staticmethod
            def current_device() -> int:
                return 0

            @staticmethod
            def get_device_properties(index: int) -> Any:
                raise RuntimeError("no uuid")

    meter = nvml.open_meter(Torch, fake)
    assert isinstance(meter, nvml.NvmlMeter)
    meter.start()
    assert (meter._thread is not None) == threaded
    reading = meter.stop()
    assert reading.energy_j == 2.0
    if not threaded:
        assert reading.samples == 2
