"""Adaptive replicates (``bench.run.plan.adaptive``): extra rounds for the comparisons still
undecided once the plan is done, up to the looks cap (every look without a budget, only what a
budget leaves with one), and a resume that continues the looks without adding or losing a
replicate (no torch)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from bench import intervals, schema
from bench.run.execute import runner, session
from bench.run.execute.launch import Exit
from bench.run.plan import adaptive
from bench.run.plan.budget import Budget
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import Adaptive, Cell, ProfileError
from bench.run.plan.profiles import load_profile
from bench.run.protocol import Probe, Record, Task
from bench.run.store.store import RunStore

from .conftest import one_error_line, read_csv, run_fake_cli
from .fakes import ENV, LIVE_ENV, FakeChild, FakeLauncher

#: Two comparisons of layout (nchw against channels_last), at 3 replicates: inference and
#: training. Each fake replicate takes 0.2 s of the fake clock.
PROFILE = """
[adaptive]
{adaptive}

[defaults]
device = "cpu"
model = "mobilenet_v3_small"
resolution = 64
batch_size = 2
replicates = 3
timeout_s = 60

[studies.layout]
mode = ["infer", "train"]
memory_format = ["nchw", "channels_last"]
"""
RULE = "looks = 3\nstep = 2\nmax_width = 1.10"


def _profile(tmp_path: Path, table: str = RULE) -> Path:
    path = tmp_path / "layout.toml"
    path.write_text(PROFILE.format(adaptive=table))
    return path


def noisy_infer(cell: Cell, replicate: int) -> float:
    """Inference in either layout jumps ±20 % from replicate to replicate, out of step: its
    interval straddles the band at every look. Training is steady, channels_last half the
    time: decided at the first look."""
    if cell.mode == "infer":
        flip = replicate % 2 == (0 if cell.memory_format == "nchw" else 1)
        return 1.2 if flip else 0.85
    return 1.0 if cell.memory_format == "nchw" else 0.5


class Timed(FakeLauncher):
    """A fake launcher whose ok children report the steady median ``median(cell, replicate)``
    says (the fake's own 0.5 s otherwise)."""

    def __init__(self, median: Callable[[Cell, int], float] = noisy_infer,
                 behaviour: dict[int, str] | None = None) -> None:
        super().__init__(behaviour)
        self.median = median

    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> FakeChild:
        child = super().launch(task_path, timeout_s, warm)
        task, wait = Task.from_json(task_path.read_text()), child.wait

        def timed(poll_s: float) -> Exit | None:
            code = wait(poll_s)
            result = Path(task.result_path)
            if code is not None and result.exists() and task.cell.kind == "model":
                record = Record.from_json(result.read_text())
                metrics = replace(record.metrics,
                                  steady_median_s=self.median(task.cell, task.replicate))
                result.write_text(replace(record, metrics=metrics).to_json())
            return code

        child.wait = timed  # type: ignore[method-assign]
        return child

    def measured(self) -> list[tuple[str, int]]:
        return [(s.task.cell.cell_id, s.task.replicate) for s in self.launched
                if s.task.op == "measure"]


def _extras(rows: list[dict[str, str]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in rows:
        if int(r["replicate"]) >= 3:
            out.setdefault(r["cell_name"].split()[2], []).append(int(r["replicate"]))
    return out


def test_the_rule_defaults_are_the_intervals_constants() -> None:
    assert Adaptive() == Adaptive(intervals.ADAPTIVE_LOOKS, intervals.ADAPTIVE_STEP,
                                  intervals.ADAPTIVE_MAX_WIDTH, intervals.DELTA)
    for name in ("cpu", "gpu", "full"):
        assert load_profile(name).adaptive == Adaptive(), name
    assert load_profile("smoke").adaptive is None, "the tests' own runs stay as planned"


def test_pairs_are_one_setting_apart_from_the_baseline() -> None:
    a = Cell(model="resnet50")
    assert adaptive.pair_axis(a, replace(a, memory_format="channels_last")) == "memory_format"
    assert adaptive.pair_axis(a, replace(a, cpu_threads=1)) == "cpu_threads"
    assert adaptive.pair_axis(a, replace(a, cpu_threads=4)) is None  # all against one only
    assert adaptive.pair_axis(a, replace(a, precision="amp-bf16",
                                         memory_format="channels_last")) is None
    assert adaptive.pair_axis(a, replace(a, mode="train")) is None  # not a setting
    assert adaptive.pair_axis(replace(a, memory_format="channels_last"), a) is None
    gpu = Cell(model="resnet50", device="cuda", cudnn_benchmark="off")
    assert adaptive.pair_axis(gpu, replace(gpu, cudnn_benchmark="on",
                                           cudnn_benchmark_limit=0)) == "cudnn_benchmark"
    assert adaptive.pair_axis(a, replace(gpu, cpu_threads=None)) == "device"
    assert adaptive.pair_axis(Cell(kind="ceiling"), Cell(kind="ceiling", device="cuda")) is None


def _new_run(tmp_path: Path, launcher: FakeLauncher, profile: Path | None = None
             ) -> tuple[session.Ended, Path]:
    prof = load_profile(str(profile or _profile(tmp_path)))
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    out = tmp_path / "run"
    opened = session.open_run(prof, probe, plan(prof), reports=tmp_path, out=str(out))
    return session.execute(opened, launcher, probe, progress=False), out


def test_an_undecided_comparison_gets_rounds_up_to_the_looks_and_a_decided_one_none(
        tmp_path: Path) -> None:
    launcher = Timed()
    ended, out = _new_run(tmp_path, launcher)
    assert ended.code == 0
    rows = read_csv(out / "results.csv")
    assert len(rows) == 12 + 8 and {r["status"] for r in rows} == {"ok"}
    # inference: two extra looks of 2 replicates, on both cells, numbered after the plan
    assert {k: sorted(v) for k, v in _extras(rows).items()} == {"infer": [3, 3, 4, 4, 5, 5,
                                                                          6, 6]}
    # in rounds over the two cells, A B A B, as the plan runs its own
    extra = launcher.measured()[12:]
    assert [r for _, r in extra] == [3, 3, 4, 4, 5, 5, 6, 6]
    assert len({c for c, _ in extra[:2]}) == 2
    assert len(set(launcher.measured())) == 20, "no replicate number twice"
    env = json.loads((out / "env.json").read_text())
    assert env[schema.ADAPTIVE_KEY] == {"looks": 3, "step": 2, "max_width": 1.1, "delta": 0.03}
    said = "\n".join(ended.adaptive)
    assert "adaptive replicates: 8 added this sitting to 2 cells; 1 of 2 comparisons still " \
           "undecided after 3 of 3 looks" in said
    assert "more replicates for layout: mobilenet_v3_small cpu infer" in said
    assert "train" not in said


def test_a_run_whose_comparisons_are_decided_adds_none(tmp_path: Path) -> None:
    launcher = Timed(lambda cell, r: 1.0 if cell.memory_format == "nchw" else 0.5)
    ended, out = _new_run(tmp_path, launcher)
    assert ended.code == 0 and len(read_csv(out / "results.csv")) == 12
    assert ended.adaptive[0].startswith("adaptive replicates: none added this sitting; 0 of 2")


def test_without_the_rule_a_run_adds_none_and_records_none(tmp_path: Path) -> None:
    bare = tmp_path / "bare.toml"
    bare.write_text(PROFILE.replace("[adaptive]\n{adaptive}\n", ""))
    ended, out = _new_run(tmp_path, Timed(), bare)
    assert len(read_csv(out / "results.csv")) == 12 and ended.adaptive == ()
    assert schema.ADAPTIVE_KEY not in json.loads((out / "env.json").read_text())


def _runner(tmp_path: Path, launcher: FakeLauncher, limit: float
            ) -> tuple[runner.Runner, int, list[dict[str, str]]]:
    prof = load_profile(str(_profile(tmp_path)))
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", prof.name, runner.Probe(ENV, [], False))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path)
    jobs = plan(prof)
    looks = adaptive.Looks(prof.adaptive or Adaptive(), jobs)
    looks.seconds = {j.cell.cell_id: 0.2 for j in jobs}
    code = r.run(jobs, set(), Budget(limit, 0.0), {j.key: 0.2 for j in jobs}, looks)
    return r, code, read_csv(store.results_path)


def test_a_budget_too_short_for_a_round_adds_none_and_the_run_ends_cleanly(
        tmp_path: Path) -> None:
    """12 planned replicates of 0.2 s take 2.4 s: a round of 4 more would end at 3.2 s."""
    r, code, rows = _runner(tmp_path, Timed(), limit=3.1)
    assert code == 0 and r.budget_stop is None, "the plan ran whole: nothing to resume"
    assert len(rows) == 12 and not r.extra and r.extra_short
    looks = adaptive.Looks(Adaptive(), plan(load_profile(str(_profile(tmp_path)))))
    said = adaptive.summary_lines(looks, r.outcomes, r.extra_short)
    assert said[0] == ("adaptive replicates: none added this sitting; 1 of 2 comparisons "
                       "still undecided after 1 of 3 looks, the budget left no room for "
                       "another round")


def test_a_budget_takes_the_rounds_that_fit_and_no_more(tmp_path: Path) -> None:
    r, code, rows = _runner(tmp_path, Timed(), limit=3.3)
    assert code == 0 and r.budget_stop is None
    assert len(rows) == 16 and len(r.extra) == 4 and r.extra_short


def test_a_resume_after_the_planned_rounds_continues_the_looks(tmp_path: Path) -> None:
    """Stopped by a Ctrl-C in the middle of the extra rounds, the run resumes with them only:
    the replicates of the round under way that have no ok row, then the last look's round;
    no number twice, none lost, and the next resume has nothing left."""
    ended, out = _new_run(tmp_path, Timed(behaviour={14: "interrupt"}))
    assert ended.code == 130
    first = read_csv(out / "results.csv")
    assert [r["status"] for r in first[12:]] == ["ok", "ok", "interrupted"]

    prof = load_profile(str(_profile(tmp_path)))
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    again = session.open_run(prof, probe, plan(prof), reports=tmp_path, out=str(out),
                             resume=True)
    assert not again.todo and adaptive.pending(again.looks), "the looks are left"
    assert again.recorded, "a sitting of its own, with its record in env.json"
    launcher = Timed()
    assert session.execute(again, launcher, probe, progress=False).code == 0
    assert [r for _, r in launcher.measured()] == [4, 4, 5, 5, 6, 6]
    rows = [r for r in read_csv(out / "results.csv") if r["status"] == "ok"]
    keys = [(r["cell_id"], int(r["replicate"])) for r in rows]
    assert len(keys) == len(set(keys)) == 20
    assert {k: sorted(v) for k, v in _extras(rows).items()} == {"infer": [3, 3, 4, 4, 5, 5,
                                                                          6, 6]}
    done = session.open_run(prof, probe, plan(prof), reports=tmp_path, out=str(out),
                            resume=True)
    assert not done.todo and not adaptive.pending(done.looks)


def test_a_resume_without_the_rule_adds_none(tmp_path: Path) -> None:
    _, out = _new_run(tmp_path, Timed(behaviour={14: "interrupt"}))
    prof = replace(load_profile(str(_profile(tmp_path))), adaptive=None)  # --no-adaptive
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    again = session.open_run(prof, probe, plan(prof), reports=tmp_path, out=str(out),
                             resume=True)
    assert not again.todo and again.looks is None


def test_the_dry_run_says_the_most_the_rule_may_add(tmp_path: Path) -> None:
    profile = str(_profile(tmp_path))
    proc = run_fake_cli("--", "--profile", profile, "--reports", str(tmp_path), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("adaptive replicates")]
    assert line.startswith("adaptive replicates: up to 2 more per cell of an undecided "
                           "comparison, at most 2 extra looks: up to 16 more processes, about ")
    assert "12 processes" in proc.stdout, "the plan's estimate counts the planned only"
    off = run_fake_cli("--", "--profile", profile, "--reports", str(tmp_path), "--dry-run",
                       "--no-adaptive")
    assert off.returncode == 0 and "adaptive replicates" not in off.stdout


@pytest.mark.parametrize(("table", "needle"), [
    ("rounds = 2", "[adaptive]: unknown key 'rounds'; valid keys: looks, step, max_width"),
    ("looks = 0", "[adaptive]: adaptive.looks must be an integer from 1 to 10, got 0"),
    ("step = 2.5", "[adaptive]: adaptive.step must be an integer from 1 to 100, got 2.5"),
    ("max_width = 0.9", "adaptive.max_width must be a finite number from 1 to 100, got 0.9"),
    ('max_width = "wide"', "adaptive.max_width must be a finite number from 1 to 100"),
])
def test_a_bad_adaptive_key_is_refused_in_one_line(tmp_path: Path, table: str,
                                                   needle: str) -> None:
    path = _profile(tmp_path, table)
    with pytest.raises(ProfileError) as err:
        load_profile(str(path))
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_bad_adaptive_key_is_one_error_line_of_the_command(tmp_path: Path) -> None:
    proc = run_fake_cli("--", "--profile", str(_profile(tmp_path, "looks = 99")), "--dry-run")
    assert proc.returncode == 2
    assert one_error_line(proc).endswith("adaptive.looks must be an integer from 1 to 10, "
                                         "got 99")


def test_one_look_is_the_planned_replicates_alone(tmp_path: Path) -> None:
    assert load_profile(str(_profile(tmp_path, "looks = 1"))).adaptive is None
    assert Adaptive.recorded({"looks": 1, "step": 2, "max_width": 1.1}) is None
    assert Adaptive.recorded("x") is None
    assert Adaptive.recorded(Adaptive().record()) == Adaptive()


def test_the_end_of_a_run_says_what_was_added(tmp_path: Path) -> None:
    from bench.commands import run as run_command

    ending = run_command._Ending(out=tmp_path, adaptive=("adaptive replicates: 8 added",))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        run_command._finish(ending, 0)
    assert "adaptive replicates: 8 added" in err.getvalue()
