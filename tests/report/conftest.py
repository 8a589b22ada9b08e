"""Shared fixtures for the report data-layer tests (builders live in ``builders.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from bench.report import parallel

from .builders import synth


@pytest.fixture(autouse=True)
def _analysis_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's forked worker (``bench.report.parallel``) stays out of these tests of what
    it computes: under xdist every core already has a test to run, so a fork per analysis
    only adds its page copies (7 of 92 CPU-seconds here). ``test_parallel`` forks on purpose
    (``fork=True``), and the site tests build with the worker as a user's build does."""
    monkeypatch.setenv(parallel.ENV_SWITCH, "0")


@pytest.fixture
def write_tree(tmp_path: Path) -> Any:
    """``write_tree(runs)`` with runs = [(env, rows, samples)] → the reports root; a run given
    no samples gets three at the median of each ok row (an ok row without any is refused)."""

    def write(
        runs: Iterable[tuple[dict[str, Any], list[dict[str, object]], list[dict[str, object]]]],
    ) -> Path:
        root = tmp_path / "reports"
        for env, rows, samples in runs:
            synth.write_run(root / env["machine"] / env["run_id"], rows,
                            samples or synth.samples_for(rows), env)
        return root

    return write
