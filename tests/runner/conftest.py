"""Shared helpers for the runner tests: a fake launcher (no torch), a tiny profile, the CLI."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: One tiny cell, fast enough for fault tests: the real launcher, worker and torch run it.
TINY_PROFILE = """
[defaults]
device = "cpu"
model = "mobilenet_v3_small"
resolution = 32
batch_size = 1
replicates = {replicates}
warmup_iters = 1
min_iters = 2
min_time_s = 0.01
max_time_s = 0.2
timeout_s = {timeout_s}

[studies.tiny]
mode = "infer"
"""


@pytest.fixture
def tiny_profile(tmp_path: Path) -> Callable[..., Path]:
    def make(replicates: int = 2, timeout_s: float = 60.0, extra: str = "") -> Path:
        path = tmp_path / "tiny.toml"
        path.write_text(TINY_PROFILE.format(replicates=replicates, timeout_s=timeout_s) + extra)
        return path

    return make


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
            cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("TORCH_KNOBS_FAULT", None) if env is None or "TORCH_KNOBS_FAULT" not in env \
        else None
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=cwd)


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
