"""Builders for small results trees written in code, so each test states its own data.

``tests/fixtures`` (the committed fixture tree and its generators) is put on ``sys.path`` so the
tests can import ``synth`` and ``make_fixtures`` the same way the generator script does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import synth  # noqa: E402

from bench import schema  # noqa: E402

FIXTURE_REPORTS = FIXTURES / "reports"


def env_for(
    machine: str, run_id: str, *, torch_version: str = "2.14.1", gpu: bool = True
) -> dict[str, Any]:
    return synth.make_env(
        machine,
        run_id,
        gpu="Test GPU" if gpu else None,
        cpu_model="Test CPU",
        cores=4,
        torch_version=torch_version,
        collected_at="2026-11-29T00:00:00Z",
        profile="test",
    )


def axes(**overrides: Any) -> dict[str, Any]:
    """A CUDA resnet50 training cell; override any axis."""
    base: dict[str, Any] = {
        "device": "cuda",
        "model": "resnet50",
        "mode": "train",
        "batch_size": 64,
        "resolution": 224,
        "precision": "fp32",
        "memory_format": "nchw",
        "shapes": "static",
        "cudnn_benchmark": "off",
        "cudnn_deterministic": "off",
        "cudnn_benchmark_limit": 10,
        "cpu_threads": "",
        "kernel_cache": "fresh",
        "compile": "off",
        "compile_dynamic": "auto",
    }
    base.update(overrides)
    if base["device"] == "cpu":
        base.update(cudnn_benchmark="n/a", cudnn_deterministic="n/a", cudnn_benchmark_limit="")
    return base


def result_row(
    env: dict[str, Any],
    cell_axes: dict[str, Any],
    replicate: int = 0,
    *,
    kind: str = "model",
    status: str = "ok",
    seconds: float | None = 0.1,
    **extra: Any,
) -> dict[str, object]:
    """One results row; ok rows get plausible figures from ``seconds`` (the steady median)."""
    row: dict[str, object] = {
        "schema_version": schema.SCHEMA_VERSION,
        "run_id": env["run_id"],
        "fingerprint_id": env["fingerprint_id"],
        "machine": env["machine"],
        "profile": "test",
        "study": "test",
        "cell_id": synth.cell_id_for(cell_axes),
        "cell_name": synth.cell_name_for(cell_axes),
        "kind": kind,
        "replicate": replicate,
        **cell_axes,
        "shape_count": 1 if kind == "model" else "",
        "eff_cudnn_allow_tf32": "true" if cell_axes["device"] == "cuda" else "",
        "status": status,
        "reason": "" if status == "ok" else f"test {status}",
        "started_at": "2026-11-29T00:00:00Z",
        "ended_at": "2026-11-29T00:00:01Z",
    }
    if status == "ok" and kind in ("model", "ceiling") and seconds is not None:
        row.update(
            steady_median_s=seconds,
            steady_p10_s=seconds * 0.98,
            steady_p90_s=seconds * 1.02,
            steady_mean_s=seconds,
            steady_iters=3,
            wall_s=2.0,
        )
        if kind == "model":
            batch = int(cell_axes["batch_size"])
            row.update(
                samples_per_s=batch / seconds,
                cold_first_iter_s=seconds * 5,
                cold_pass_s=seconds * 5,
                flops_per_sample=4e9,
                peak_mem_allocated_bytes=1e9,
                cold_peak_mem_allocated_bytes=1.1e9,
            )
    row.update(extra)
    return row


def cell(
    env: dict[str, Any], cell_axes: dict[str, Any], times: Sequence[float | None], **extra: Any
) -> list[dict[str, object]]:
    """One row per replicate; ``None`` in ``times`` = a crashed replicate (empty numbers)."""
    return [
        result_row(env, cell_axes, i, seconds=t, **extra)
        if t is not None
        else result_row(env, cell_axes, i, status="crash", seconds=None)
        for i, t in enumerate(times)
    ]


def render_tree(root: Path, generated: Path, prices: Path | None = None) -> Any:
    """The four steps of a build without MkDocs: load, analyse, judge, render."""
    from bench.report.analysis import analyse
    from bench.report.input.load import load_reports
    from bench.report.questions.answers import judge
    from bench.report.questions.site import render

    return render(judge(analyse(load_reports(root)), prices=prices), root, generated)
