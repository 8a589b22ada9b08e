"""Ctrl-C and SIGTERM at chosen instants: the run always ends with the first signal's exit
code, every row written, and the line that says how to resume, never a traceback.

The hook (``TORCH_KNOBS_SIGNAL``, see ``bench.run.hooks``) has the runner signal itself at the
instant under test, so nothing depends on timing. Through ``fake_cli.py``; the real server's
cases are in ``test_e2e.py``. After each case, ``ps`` shows nothing left running that names
the run's folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import read_csv, run_fake_cli
from .procs import assert_none_survive

HOOK = "TORCH_KNOBS_SIGNAL"


@pytest.mark.parametrize(("signals", "code", "statuses"), [
    # the first Ctrl-C stops replicate 1; a second one comes while its child is being stopped
    ("launched@#r1=INT,stopping@#r1=INT", 130, ["ok", "interrupted"]),
    # ... or while the interrupted row is being written
    ("launched@#r1=INT,row-written@#r1=INT", 130, ["ok", "interrupted"]),
    # a SIGTERM first, then the user's Ctrl-C: the first one says how the run ended
    ("launched@#r1=TERM,stopping@#r1=INT", 143, ["ok", "interrupted"]),
    # a Ctrl-C as the run closes down, after its last row
    ("closing=INT", 130, ["ok", "ok", "ok"]),
    # one while the run stops, and one more as it closes down
    ("launched@#r2=INT,closing=INT", 130, ["ok", "ok", "interrupted"]),
])
def test_every_signal_ends_with_its_exit_code_and_the_resume_line(
        tmp_path: Path, tiny_profile: Callable[..., Path], signals: str, code: int,
        statuses: list[str]) -> None:
    out, profile = tmp_path / "run", tiny_profile(replicates=3)
    proc = run_fake_cli("--", "--profile", str(profile), "--out", str(out), "--only", "tiny",
                        env={HOOK: signals})
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"resume with: python -m bench run --profile {profile} --only tiny " \
                   f"--out {out} --resume"
    assert [r["status"] for r in read_csv(out / "results.csv")] == statuses
    assert_none_survive(marker=str(out))  # nothing that names the run folder lives on
    assert run_fake_cli("--", *last.split()[6:]).returncode == 0, "and the line works"
