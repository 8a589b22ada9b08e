"""The end of ``bench run``: after the run is written, ``bench check``'s findings for it, in
brief, and the command that shows them all; the run's exit code is the run's own.

In process, with the fake launcher and probe of ``fakes.py`` (as ``fake_cli.py`` has them);
the second replicate's child reports a steady state that drifts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench import cli
from bench.run.execute import launch
from bench.run.execute import probe as probing
from bench.run.protocol import Flags, Metrics, Probe, Record, Sample, Timeline

from .fake_cli import MODELS
from .fakes import LIVE_ENV, FakeChild, FakeLauncher

DRIFTING = [0.1, 0.1, 0.1, 0.5, 0.5, 0.5]


class DriftingChild(FakeChild):
    """Ends ok, with six steady steps whose later half takes five times the earlier's."""

    def _end(self) -> int:
        xs = sorted(DRIFTING)
        record = Record(
            flags=Flags(eff_num_threads="2"), cache_start_bytes=0,
            metrics=Metrics(steady_median_s=0.3, steady_p10_s=0.1, steady_p90_s=0.5,
                            steady_mean_s=sum(xs) / 6, steady_iters=6,
                            samples_per_s=6 / sum(xs)),
            samples=[Sample("cold", 0, 1, 32, 0.9),
                     *(Sample("steady", i + 1, 1, 32, x) for i, x in enumerate(DRIFTING))],
            timeline=Timeline(build_start=0.0))
        Path(self.task.task.result_path).write_text(record.to_json())
        return 0


class Launcher(FakeLauncher):
    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> FakeChild:
        child = super().launch(task_path, timeout_s, warm)
        return DriftingChild(self, child.task, "ok") if len(self.launched) == 2 else child


def _run(monkeypatch: pytest.MonkeyPatch, profile: Path, out: Path) -> int:
    monkeypatch.setattr(launch, "by_name", lambda name: Launcher())
    monkeypatch.setattr(probing, "probe", lambda launcher, workdir, timeout_s=600.0, models=():
                        Probe(dict(LIVE_ENV), MODELS, False))
    return cli.main(["run", "--profile", str(profile), "--out", str(out)])


def test_a_run_ends_with_bench_checks_findings(tmp_path: Path, tiny_profile: Callable[..., Path],
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _run(monkeypatch, tiny_profile(replicates=2), out) == 0, "findings leave it 0"
    err = capsys.readouterr().err.splitlines()
    done = next(i for i, line in enumerate(err) if line.startswith("done: ok=2"))
    ending = err[done + 1:]
    assert ending[0].startswith("bench check: ") and "1 steady drift" in ending[0], ending
    drift = ending.index("  steady drift (1):")
    assert ending[drift + 1].startswith(f"    {out / 'results.csv'}:3 ")
    assert "#r1: later steady iterations take 5x the earlier ones" in ending[drift + 1]
    assert ending[-1] in (f"  see them all: python -m bench check {out}",
                          *(f"  and {n} more: python -m bench check {out}" for n in range(9)))


def test_a_run_without_findings_says_so_in_one_line(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from bench.commands.run import _Ending, _finish

    from .test_check import _row, _write

    out = tmp_path / "run"
    _write(out, [_row(attempt_id="a0", wall_s=5.0)],
           [{"cell_id": "c1", "replicate": 0, "attempt_id": "a0", "phase": "steady", "iter": i,
             "batch_size": 8, "resolution": 224, "seconds": x}
            for i, x in enumerate([0.1, 0.09, 0.11])])
    _finish(_Ending(out=out, counts={"ok": 1}), 0)
    assert capsys.readouterr().err.splitlines()[1:] == [
        f"bench check: no findings (python -m bench check {out})"]
