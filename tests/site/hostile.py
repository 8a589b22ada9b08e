"""A small results tree whose every free-text field is hostile, for the escaping tests.

Written with the fixtures' own writer (``tests/fixtures/synth.py``), so the files follow
``bench.schema`` exactly; only the strings are adversarial: markup, a table pipe, backticks,
mathtext, newlines, an entity, and a 500-character name.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

import synth

#: Any of these reaching a page unescaped would run script or break the Markdown.
SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
HOSTILE = (
    f"{SCRIPT} {IMG} | pipe `tick` $x$ **bold** [link](http://example.invalid) &amp; "
    '--8<-- "/etc/passwd"\nsecond line {: #id } '
)
LONG = "L" * 500
MACHINE = f"box {SCRIPT}|`$x$`\n{LONG}"
GPU = f"GPU {IMG} $x$ | `g`\nnext"
MODEL = f"resnet$x${'M' * 40}<b>|`"


def _row(
    cell: dict[str, Any],
    env: dict[str, Any],
    rep: int,
    *,
    status: str = "ok",
    reason: str = "",
    median: float = 0.01,
) -> dict[str, Any]:
    row = {
        "schema_version": synth.schema.SCHEMA_VERSION,
        "run_id": env["run_id"],
        "fingerprint_id": env["fingerprint_id"],
        "machine": env["machine"],
        "profile": f"prof {HOSTILE}",
        "study": f"study {HOSTILE}",
        "cell_id": synth.cell_id_for(cell),
        "cell_name": f"{HOSTILE} {LONG} {cell['cudnn_benchmark']}",
        "kind": "model",
        "replicate": rep,
        **cell,
        "shape_count": 1,
        "status": status,
        "reason": reason,
        "started_at": f"2026-11-29T12:00:{rep:02d}Z",
        "ended_at": f"2026-11-29T12:00:{rep + 1:02d}Z",
    }
    if status == "ok":
        row.update(
            steady_median_s=median,
            steady_p10_s=median * 0.98,
            steady_p90_s=median * 1.02,
            steady_mean_s=median,
            steady_iters=10,
            samples_per_s=cell["batch_size"] / median,
            cold_first_iter_s=median * 50,
            cold_pass_s=median * 50,
            peak_mem_allocated_bytes=1e9,
            peak_mem_reserved_bytes=1.2e9,
            cold_peak_mem_allocated_bytes=1.5e9,
            cold_peak_mem_reserved_bytes=1.8e9,
            flops_per_sample=4e9,
        )
    return row


def write_hostile_reports(root: Path) -> Path:
    """Write one hostile run under ``root``; returns ``root``."""
    env = synth.make_env(
        MACHINE,
        f"run {HOSTILE}",
        gpu=GPU,
        cpu_model=f"CPU {HOSTILE}",
        cores=4,
        torch_version="2.14.1",
        collected_at="2026-11-29T12:00:00Z",
        profile="gpu",
    )
    env["notes"] = {"free text": HOSTILE, LONG: [HOSTILE, None, True]}
    rows = []
    base = {
        "device": "cuda",
        "model": MODEL,
        "mode": "train",
        "batch_size": 32,
        "resolution": 224,
        "precision": "fp32",
        "memory_format": "nchw",
        "shapes": "static",
        "cudnn_deterministic": "off",
        "cudnn_benchmark_limit": 10,
        "cpu_threads": "",
    }
    for rep in range(3):
        for bm, median in (("off", 0.012 + rep * 1e-4), ("on", 0.010 + rep * 1e-4)):
            rows.append(_row({**base, "cudnn_benchmark": bm}, env, rep, median=median))
    failing = {**base, "cudnn_benchmark": "on", "batch_size": 4096}
    for rep, status in enumerate(("oom", "error", "crash")):
        rows.append(_row(failing, env, rep, status=status, reason=f"{status}: {HOSTILE} {LONG}"))
    synth.write_run(root / "hostile-machine" / "hostile-run", rows, synth.samples_for(rows), env)
    return root
