"""``--resume``: it continues exactly the run in its folder, from what is whole on disk.

- A row cut by a kill is not a finished replicate, however much of it reads ``ok``; it is moved
  aside, never deleted, and the replicate runs again.
- Samples written just before a kill, without their row, are moved aside too: the replicate's
  re-run writes the only block the report sees.
- Another profile, other stopping settings, another cell set, an env.json edited by hand or
  another environment is refused with one line naming what differs, before anything in the
  folder is touched.

Through ``fake_cli.py`` (the command with a fake launcher), in processes of their own.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.fingerprint import fingerprint_id
from bench.report.input.load import load_reports

from .conftest import one_error_line, read_csv, run_fake_cli
from .fakes import LIVE_ENV
from .procs import assert_none_survive

HOOK = "TORCH_KNOBS_SIGNAL"


def _run(profile: Path, out: Path, *more: str, env: dict[str, str] | None = None,
         fake: tuple[str, ...] = ()) -> tuple[int, str]:
    proc = run_fake_cli(*fake, "--", "--profile", str(profile), "--out", str(out), *more, env=env)
    return proc.returncode, proc.stderr


def test_a_torn_final_row_is_not_a_finished_replicate(tmp_path: Path,
                                                       tiny_profile: Callable[..., Path]) -> None:
    out, profile = tmp_path / "run", tiny_profile(replicates=3)
    assert _run(profile, out)[0] == 0
    results = out / "results.csv"
    data = results.read_bytes()
    last = data.rindex(b"\n", 0, len(data) - 1) + 1
    header = data[: data.index(b"\n")].decode().split(",")
    cut = last + len(b",".join(data[last:].split(b",")[: header.index("status") + 1]))
    results.write_bytes(data[:cut])  # the last row, killed just after it wrote "ok"
    assert data[last:cut].endswith(b",ok")
    code, err = _run(profile, out, "--resume")
    assert code == 0, err
    assert "1 processes to run, 2 already done" in err
    assert (out / "results.csv.torn-1").read_bytes() == data[last:cut], "set aside, not lost"
    rows = read_csv(results)
    assert [(r["replicate"], r["status"]) for r in rows] == [("0", "ok"), ("1", "ok"),
                                                              ("2", "ok")]
    assert len(load_reports(tmp_path).results) == 3


def test_samples_a_kill_left_without_their_row_are_set_aside(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    """The runner is SIGKILLed between replicate 1's samples and its row (the hook fires
    there): the re-run's samples are the only block of replicate 1 the report reads."""
    out, profile = tmp_path / "run", tiny_profile(replicates=3)
    code, _ = _run(profile, out, env={HOOK: "samples-written@#r1=KILL"})
    assert code == -9
    assert_none_survive(marker=str(out))
    orphans = (out / "samples.csv").read_text().splitlines()[-2:]
    assert len(read_csv(out / "results.csv")) == 1
    code, err = _run(profile, out, "--resume")
    assert code == 0, err
    assert "set aside" in err
    assert (out / "samples.csv.torn-1").read_text().splitlines() == orphans
    ds = load_reports(tmp_path)  # strict: every sample has its row, every ok row its samples
    mine = ds.samples.loc[ds.samples["replicate"] == 1]
    assert len(mine) == 2 and mine["attempt_id"].nunique() == 1
    assert len(ds.results) == 3


def _refused(profile: Path, out: Path, words: str, **options: object) -> None:
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = run_fake_cli(*options.get("fake", ()),  # type: ignore[misc]
                        "--", "--profile", str(profile), "--out", str(out), "--resume",
                        *options.get("more", ()))  # type: ignore[misc]
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc)
    assert words in line, line
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before, "a refused resume touches nothing"


@pytest.fixture
def interrupted(tmp_path: Path, tiny_profile: Callable[..., Path]) -> tuple[Path, Path]:
    """A run of the tiny profile stopped by a Ctrl-C in its second replicate."""
    out, profile = tmp_path / "run", tiny_profile(replicates=3)
    code, err = _run(profile, out, env={HOOK: "launched@#r1=INT"})
    assert code == 130, err
    return out, profile


def test_resume_refuses_another_profile(interrupted: tuple[Path, Path], tmp_path: Path) -> None:
    out, profile = interrupted
    other = tmp_path / "other.toml"
    other.write_text(profile.read_text())
    _refused(other, out, "it measured profile 'tiny', not 'other'")


def test_resume_refuses_sitting_records_that_are_not_a_list(
        interrupted: tuple[Path, Path]) -> None:
    """A resume adds its record to env.json's and keeps the rest: a hand edit that made them
    something else is refused, not overwritten."""
    import json

    out, profile = interrupted
    env = json.loads((out / "env.json").read_text())
    assert [r["sitting"] for r in env["sittings"]] == [1]
    (out / "env.json").write_text(json.dumps({**env, "sittings": {"1": "by hand"}}))
    _refused(profile, out, "env.json's sittings is dict, not a list (was it edited?)")


def test_a_resume_of_fewer_studies_says_to_pass_the_first_sittings_only(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    """A resume finishes the run's whole plan: one that selects only some of its studies is
    told which the plan has and what to pass, not that a study is missing from the profile."""
    out = tmp_path / "run"
    profile = tiny_profile(extra='\n[studies.train]\nmode = "train"\n')
    code, err = _run(profile, out, env={HOOK: "launched@#r1=INT"})
    assert code == 130, err
    _refused(profile, out, "its plan has studies tiny, train, this one only train; a resume "
                           "finishes the whole plan, so pass the same --only as its first "
                           "sitting did", more=("--only", "train"))
    # a study of another name is another plan: the differences are named as they are
    profile.write_text(profile.read_text().replace("[studies.train]", "[studies.other]"))
    _refused(profile, out, "study 'train' is not in this profile; study 'other' is new")


def test_resume_refuses_other_stopping_settings(interrupted: tuple[Path, Path]) -> None:
    out, profile = interrupted
    profile.write_text(profile.read_text().replace("max_time_s = 0.2", "max_time_s = 0.5"))
    _refused(profile, out, "study 'tiny': max_time_s was 0.2, now 0.5")


def test_resume_refuses_another_cell_set(interrupted: tuple[Path, Path]) -> None:
    out, profile = interrupted
    profile.write_text(profile.read_text() + "batch_size = [1, 2]\n")
    _refused(profile, out, "study 'tiny': other cells (1 new: ")


def test_resume_refuses_an_env_json_edited_by_hand(interrupted: tuple[Path, Path]) -> None:
    out, profile = interrupted
    env_path = out / "env.json"
    env = json.loads(env_path.read_text())
    env["torch"]["version"] = "2.99.0"
    env_path.write_text(json.dumps(env))
    _refused(profile, out, f"env.json's own facts give fingerprint {fingerprint_id(env)}, "
                           f"not the {env['fingerprint_id']} it records")


def test_resume_refuses_another_environment(interrupted: tuple[Path, Path],
                                            tmp_path: Path) -> None:
    out, profile = interrupted
    live = json.loads(json.dumps(LIVE_ENV))
    live["torch"]["version"] = "2.15.0"
    live["fingerprint_id"] = fingerprint_id(live)
    (tmp_path / "live.json").write_text(json.dumps(live))
    _refused(profile, out, 'torch.version "2.15.0" here, "2.14.1" there',
             fake=("--env", str(tmp_path / "live.json")))


def test_the_same_run_resumes(interrupted: tuple[Path, Path]) -> None:
    out, profile = interrupted
    code, err = _run(profile, out, "--resume")
    assert code == 0, err
    assert [r["status"] for r in read_csv(out / "results.csv")] == [
        "ok", "interrupted", "ok", "ok"]


def test_resume_refuses_rows_whose_env_json_was_deleted(interrupted: tuple[Path, Path]) -> None:
    """env.json is written before results.csv: rows without it mean it was deleted, and then
    nothing says what they measured (it used to be written afresh, and the resume went on)."""
    out, profile = interrupted
    (out / "env.json").unlink()
    _refused(profile, out, "its results.csv holds 2 rows but there is no env.json")


def test_a_folder_without_rows_or_env_json_resumes(tmp_path: Path,
                                                   tiny_profile: Callable[..., Path]) -> None:
    """A header and nothing else (a run killed as it began): nothing to contradict."""
    out, profile = tmp_path / "run", tiny_profile(replicates=2)
    assert _run(profile, out)[0] == 0
    for name in ("results.csv", "samples.csv"):
        data = (out / name).read_bytes()
        (out / name).write_bytes(data[: data.index(b"\n") + 1])
    (out / "env.json").unlink()
    code, err = _run(profile, out, "--resume")
    assert code == 0, err
    assert len(read_csv(out / "results.csv")) == 2 and (out / "env.json").exists()


def test_resume_refuses_an_env_json_whose_machine_was_edited(
        interrupted: tuple[Path, Path]) -> None:
    """The machine is not part of the fingerprint, so the fingerprint checks miss this edit."""
    out, profile = interrupted
    env_path = out / "env.json"
    env = json.loads(env_path.read_text())
    env["machine"] = "another-box"
    env_path.write_text(json.dumps(env))
    _refused(profile, out, "env.json names machine 'another-box', this machine is 'test-box'")


@pytest.mark.parametrize("column", ["profile", "fingerprint_id", "machine"])
def test_resume_refuses_rows_of_another_run(interrupted: tuple[Path, Path],
                                            column: str) -> None:
    """The rows are what the report pools: one measured as another run (another profile,
    fingerprint or machine) is refused even when env.json agrees with this one."""
    out, profile = interrupted
    results = out / "results.csv"
    rows = read_csv(results)
    rows[0][column] = "elsewhere"
    with open(results, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    _refused(profile, out, f"1 of its 2 rows were measured with {column} 'elsewhere', not ")


def test_a_replicate_that_failed_in_an_earlier_sitting_runs_again_last(tmp_path: Path) -> None:
    """A cell that timed out is likely to sit out its whole timeout again: the resume runs it
    after every replicate not yet tried, expects it to take what it took, and says so."""
    import io

    from bench.run.execute import session
    from bench.run.plan.jobs import plan
    from bench.run.plan.matrix import select
    from bench.run.plan.profiles import load_profile
    from bench.run.protocol import Probe

    from .fakes import FakeLauncher

    profile = select(load_profile("smoke"), ["modes"])
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    jobs = plan(profile)
    out = tmp_path / "run"
    first = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    stuck = jobs[1]  # it hangs until the runner's timeout ends it; a Ctrl-C in the 4th job
    ended = session.execute(first, FakeLauncher({1: "hang", 3: "interrupt"}), probe,
                            progress=False)
    assert ended.code == 130
    [wall] = [float(r["wall_s"]) for r in read_csv(out / "results.csv")
              if r["status"] == "timeout"]

    again = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    left = again.todo
    assert [j.key for j in left][-1] == stuck.key, "the failed replicate runs last"
    assert again.seconds(probe)[stuck.key] == pytest.approx(wall)
    err = io.StringIO()
    launcher = FakeLauncher()
    assert session.execute(again, launcher, probe, progress=False, stream=err).code == 0
    assert "1 replicate that failed in an earlier sitting runs again last" in err.getvalue()
    assert launcher.launched[-1].task.cell.cell_id == stuck.cell.cell_id
    assert launcher.launched[-1].task.replicate == stuck.replicate


def test_a_failure_that_a_later_ok_row_outdates_no_longer_sets_its_cells_cost(
        tmp_path: Path) -> None:
    """A cell that timed out under code since fixed and has since ended ok on this fingerprint
    (another run measured it) is expected to take its estimate, not its old timeout: else a
    budget keeps refusing what would now take seconds."""
    import io

    from bench.run.execute import session
    from bench.run.plan.jobs import plan
    from bench.run.plan.matrix import select
    from bench.run.plan.profiles import load_profile
    from bench.run.protocol import Probe

    from .fakes import FakeLauncher

    profile = select(load_profile("smoke"), ["modes"])
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    jobs = plan(profile)
    out = tmp_path / "run"
    first = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    stuck = jobs[1]
    assert session.execute(first, FakeLauncher({1: "hang", 3: "interrupt"}), probe,
                           progress=False).code == 130
    [wall] = [float(r["wall_s"]) for r in read_csv(out / "results.csv")
              if r["status"] == "timeout"]
    # a later run of the same fingerprint, under the reports folder, where the cell ends ok
    later = session.open_run(profile, probe, jobs, reports=tmp_path)
    assert session.execute(later, FakeLauncher(), probe, progress=False).code == 0

    again = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    assert (stuck.kind, stuck.cell.cell_id) not in again.earlier
    estimated = dataclasses.replace(again, earlier={}).seconds(probe)[stuck.key]
    assert again.seconds(probe)[stuck.key] == estimated != pytest.approx(wall)
    assert [j.key for j in again.todo][-1] == stuck.key, "a failed replicate still runs last"
    err = io.StringIO()
    assert session.execute(again, FakeLauncher(), probe, progress=False, stream=err).code == 0
    assert "estimated: it has ended ok since it failed" in err.getvalue()


def test_earlier_seconds_drop_only_failures_an_ok_row_of_the_cell_follows() -> None:
    from bench.run.store.resume import earlier_seconds

    def row(cell: str, status: str, wall: float, at: str, fp: str = "f") -> dict[str, str]:
        return {"fingerprint_id": fp, "kind": "model", "cell_id": cell, "status": status,
                "wall_s": str(wall), "started_at": at}

    rows = [row("a", "timeout", 120, "2026-12-04T10:00"), row("a", "ok", 3, "2026-12-04T11:00"),
            row("b", "ok", 3, "2026-12-04T10:00"), row("b", "timeout", 120, "2026-12-04T11:00"),
            row("c", "crash", 50, "2026-12-04T10:00"), row("c", "timeout", 9, "x", fp="g")]
    got = earlier_seconds(rows, "f")
    assert got[("model", "a")] == 3  # its timeout came before it ended ok
    assert got[("model", "b")] == pytest.approx(61.5)  # it failed after its ok row: both count
    assert got[("model", "c")] == 50  # another fingerprint's rows are not this run's
    elsewhere = earlier_seconds(rows, "f", {("model", "c"): "2026-12-04T12:00",
                                            ("model", "b"): "2026-12-04T09:00",
                                            ("repro", "a"): "2026-12-04T12:00"})
    assert ("model", "c") not in elsewhere  # it ended ok in another run, later
    assert elsewhere[("model", "b")] == pytest.approx(61.5)  # that run's ok row is older
    late = earlier_seconds([row("d", "timeout", 120, "2026-12-04T10:00")], "f",
                           {("repro", "d"): "2026-12-04T12:00"})
    assert late[("model", "d")] == 120  # an ok row of another kind says nothing of this one


def test_each_sitting_is_recorded_in_env_json_and_a_finished_run_adds_none(
        tmp_path: Path) -> None:
    """env.json keeps the first sitting's facts and one record per sitting that had work:
    when it began, its budget, the code it ran (``bench.run.store.source``)."""
    import io
    import json

    from bench.run.execute import session
    from bench.run.plan.jobs import plan
    from bench.run.plan.matrix import select
    from bench.run.plan.profiles import load_profile
    from bench.run.protocol import Probe
    from bench.run.store import source

    from .fakes import FakeLauncher

    profile = select(load_profile("smoke"), ["modes"])
    probe = Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    jobs = plan(profile)
    out = tmp_path / "run"
    first = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out),
                             budget_s=90.0)
    assert session.execute(first, FakeLauncher({2: "interrupt"}), probe,
                           progress=False).code == 130
    written = json.loads((out / "env.json").read_text())
    [one] = written["sittings"]
    assert (one["sitting"], one["budget_s"], one["code"]) == (1, 90.0, source.digest())
    written["sittings"].append("a note by hand")  # what is there stays, even this
    (out / "env.json").write_text(json.dumps(written))

    err = io.StringIO()
    again = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out),
                             resume=True, stream=err)
    assert again.sitting == 2
    now = json.loads((out / "env.json").read_text())
    assert now["sittings"][:2] == [one, "a note by hand"] and "wall_s" in one
    assert (now["sittings"][2]["sitting"], now["sittings"][2]["budget_s"]) == (2, None)
    assert {k: v for k, v in now.items() if k != "sittings"} == \
        {k: v for k, v in written.items() if k != "sittings"}, "the first sitting's facts"
    assert "other measuring code" not in err.getvalue()
    assert session.execute(again, FakeLauncher(), probe, progress=False).code == 0
    assert {r["sitting"] for r in read_csv(out / "results.csv")} == {"1", "2"}
    # each sitting's end adds its wall time and the timed work in it, an interrupted one too
    ended = json.loads((out / "env.json").read_text())["sittings"]
    for record in (ended[0], ended[2]):
        assert record["ended_at"] >= record["started_at"]
        assert 0 <= record["timed_s"] <= record["wall_s"] and record["wall_s"] > 0

    done = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    assert not done.todo
    assert len(json.loads((out / "env.json").read_text())["sittings"]) == 3, \
        "a resume with nothing left is no sitting"
