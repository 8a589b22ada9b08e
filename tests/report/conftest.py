"""Shared fixtures for the report data-layer tests (builders live in ``builders.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from .builders import synth


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
