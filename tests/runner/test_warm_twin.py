"""A warm cell's cache is what its fresh twin's first ok replicate left, so no untimed process
primes it (it used to cost a whole compile per warm cell); without a twin, one still does."""

from __future__ import annotations

from pathlib import Path

from bench.run.execute import runner
from bench.run.plan import estimate
from bench.run.plan.jobs import plan, twins
from bench.run.plan.profiles import load_profile
from bench.run.store.store import RunStore

from .conftest import read_csv
from .fakes import ENV, FakeLauncher

PROFILE = """
[defaults]
device = "cpu"
model = "resnet18"
resolution = 32
replicates = 2
[studies.caches]
kernel_cache = {caches}
"""


def _run(tmp_path: Path, caches: str, launcher: FakeLauncher) -> list[dict[str, str]]:
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(caches=caches))
    prof = load_profile(str(path))
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", prof.name, runner.Probe(ENV, [], False))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path / "work")
    assert r.run(plan(prof)) == 0
    return read_csv(store.results_path)


def test_the_warm_replicates_start_from_the_fresh_replicates_cache(tmp_path: Path) -> None:
    launcher = FakeLauncher()
    rows = _run(tmp_path, '["fresh", "warm"]', launcher)
    ops = [s.task.op for s in launcher.launched]
    assert ops == ["measure"] * 4, "no priming process"
    warm = [s for s in launcher.launched if s.task.cell.kernel_cache == "warm"]
    # the n-th launched fake child leaves kernel-<n>.bin in its cache: the first one's is the
    # fresh replicate's, and both warm replicates start from a copy of it
    assert [s.cache_files for s in warm] == [["kernel-1.bin"]] * 2
    assert [r["status"] for r in rows] == ["ok"] * 4


def test_a_warm_cell_without_a_fresh_twin_is_primed_by_a_process_of_its_own(
        tmp_path: Path) -> None:
    launcher = FakeLauncher()
    _run(tmp_path, '["warm"]', launcher)
    assert [s.task.op for s in launcher.launched] == ["prime", "measure", "measure"]


def test_a_failed_fresh_replicate_leaves_the_priming_to_a_process(tmp_path: Path) -> None:
    launcher = FakeLauncher(behaviour={0: "exit3"})
    _run(tmp_path, '["fresh", "warm"]', launcher)
    assert [s.task.op for s in launcher.launched][:3] == ["measure", "prime", "measure"]


def test_the_estimate_counts_no_priming_where_a_twin_keeps_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.format(caches='["fresh", "warm"]'))
    jobs = plan(load_profile(str(path)))
    assert len(twins(jobs)) == 1
    probe = runner.Probe(ENV, [], False)
    with_twin = estimate.jobs_s(jobs, probe)
    path.write_text(PROFILE.format(caches='["warm"]'))
    alone = estimate.jobs_s(plan(load_profile(str(path))), probe)
    assert alone[0] > with_twin[1], "alone, the first warm job carries the priming process"
